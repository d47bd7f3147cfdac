// The passes between type inference and code generation, in order (each in
// a file of its own here):
//
//   eta_expansion       constructors and globals used as values -> functions
//   a_normal_form       operands atomic, shared expressions bound once
//   loop_inlining       small globals called in loops -> their bodies
//   loop_invariant_projection  nn.dense of each step's slice -> one product before the loop
//   simplify_batch_norm  inference batch_norm -> a per-channel scale and shift
//   constant_folding    operator calls on constants evaluated by the kernels
//   common_subexpression  a pure value computed twice in a scope, once
//   dead_code           pure bindings nobody reads, dropped
//   split_to_slices     projections of a split -> strided slices, which fuse
//   partition_graph     with external codegens (BYOC, --byoc): what they run ->
//                       global functions marked Compiler="NAME"
//   pad_convolutions    a convolution's padding -> an nn.pad of its input
//   fuse_operators      operator chains -> primitive functions (one kernel each)
//   lambda_lifting      function literals -> globals taking their captured values
//
// The code generator then emits matches from their decision trees
// (decision_tree.h) and the calls tail_calls.h marks as tail calls or loops.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "compiler/ir/module.h"
#include "kernels/external/external_codegen.h"

namespace relay::passes {

struct OptimizedProgram {
  ir::Module program;
  std::optional<ir::Module> prelude;
};

// The external codegens a program is partitioned for, in priority order.
using ExternalCodegens = std::span<const std::shared_ptr<const kernels::external::ExternalCodegen>>;

// Runs every pass over `program` and `prelude` (may be null), which must be
// type-checked; with `codegens`, the program (not the prelude) is
// partitioned for them.
OptimizedProgram OptimizeForVm(const ir::Module& program, const ir::Module* prelude,
                               ExternalCodegens codegens = {});

}  // namespace relay::passes
