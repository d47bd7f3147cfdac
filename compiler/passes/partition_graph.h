// Graph partitioning for external codegens (BYOC, after TVM's
// AnnotateTarget, MergeCompilerRegions and PartitionGraph): operator calls
// a codegen can run become calls of new global functions that the codegen
// compiles (kernels/external/external_codegen.h).
//
// Input: a type-checked module in A-normal form, simplified (constants
// folded, common subexpressions and dead code eliminated) but not yet
// fused. Each let chain of each non-primitive global (and, separately,
// each chain nested in it: if and match arms, bodies of function literals)
// goes through three steps:
//
// 1. Annotate. Each operator call of the chain (let-bound, or the chain's
//    result) with tensors in and out is offered, in evaluation order, to
//    the codegens in priority order; the first whose rules accept it takes
//    it. A codegen tries its composite rules first, in table order, with
//    the call as the pattern's first step (required, even if marked
//    optional): each further step is a call of the same chain taking the
//    previous step's value, which has no other use in the whole function;
//    optional steps are taken when they match. Then its operator rules. A
//    call belongs to at most one match (a composite's calls are one unit).
// 2. Merge, for codegens whose merges_regions() is true: visited by the
//    position of their results, a unit's region joins, in operand order,
//    each region of the same codegen that produces one of its operands
//    (MergeCompilerRegions), when the merged region still has one output:
//    only its last call's value may be used outside it (in the chain, in a
//    nested scope or as the chain's result). That also rules out cycles: a
//    path from a region out to another node and back into the region would
//    need a value other than the last one to leave it. The region's calls
//    move down to its last call, so a region never spans a binding that is
//    not pure (pass_util's IsPure: a call of a function, a reference
//    write, an if or a match); nor does a composite.
// 3. Partition. Each region becomes a global `@NAME_K` (NAME the codegen's
//    name(), K counting from 0 per name, skipping names the module has)
//    with attributes Primitive=1, Compiler="NAME", global_symbol="NAME_K".
//    Its parameters are the region's operands not computed inside it
//    (variables and constants alike, in order of first use); its body is a
//    let chain of the region's calls in evaluation order, ending in its
//    output. A composite's calls are a function literal marked
//    Composite="RULE", bound by a let and called once. In the chain the
//    region's last binding becomes `let %v = @NAME_K(operands...)` and its
//    other bindings go. The new globals follow the function they were made
//    for in the module.
//
// Every node built carries its checked type (functions a FuncType), so the
// result needs no type inference; printed, it parses and type-checks.
// Let chains are walked with loops, so 100,000 bindings cost no stack;
// recursion is over the nesting of scopes only, which the parser bounds.
//
// `module` is not modified (its nodes are shared with the result). Rule
// predicates run on the calling thread, and may see one call more than
// once (a step tried by several patterns).
#pragma once

#include <memory>
#include <span>

#include "compiler/ir/module.h"
#include "kernels/external/external_codegen.h"

namespace relay::passes {

// The attribute marking a composite pattern's function literal inside a
// partitioned function, with the rule's name ("dnnl.conv2d_bias_relu").
inline constexpr const char* kCompositeAttr = "Composite";

// `module` with the calls `codegens` (in priority order) accept outlined
// into external functions. Without codegens, or with nothing accepted, the
// functions are those of `module` unchanged.
ir::Module PartitionGraph(
    const ir::Module& module,
    std::span<const std::shared_ptr<const kernels::external::ExternalCodegen>> codegens);

}  // namespace relay::passes
