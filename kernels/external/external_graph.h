// The part of a program handed to an external codegen (BYOC): a partitioned
// function's operator calls in the kernels layer's neutral terms, without the
// compiler's IR. The compiler builds it from a function marked
// Compiler="NAME" (compiler/codegen/external_graph_builder.*); an external
// codegen compiles it (external_codegen.h); a .rbc file keeps it
// (vm/bytecode/executable_file.cc), so that a compiled executable runs
// without partitioning again.
//
// A graph computes one tensor: its last operator's result. Its operators are
// in evaluation order; each operand is a parameter of the graph (index >= 0)
// or the result of an earlier operator (-1 - its position), as in a fused
// group (kernels::FusedOperator). Operators whose calls came from one
// composite pattern (a codegen's "conv2d + bias_add + relu") share a
// composite index naming the pattern.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"

namespace relay::kernels::external {

struct ExternalGraph {
  // The parameters' types, as the compiler typed them (kAnyDim for `?`).
  std::vector<ValueType> params;
  std::vector<FusedOperator> operators;
  // One entry per operator: an index into composite_names, or -1.
  std::vector<int32_t> composites;
  std::vector<std::string> composite_names;  // "dnnl.conv2d_bias_relu"
  // Each operator's result type, as typed at compile time (kAnyDim for `?`).
  std::vector<ValueType> types;

  const ValueType& result() const { return types.back(); }
  // The composite pattern operator `index` belongs to, or empty.
  std::string_view CompositeOf(size_t index) const;
};

// Checks what every consumer relies on, so that a graph read from a file
// can be trusted (a .rbc file's reader calls it): at least one operator;
// parallel vectors of equal length; operands in range and earlier;
// operators known to the operator table, with tensor inputs and result;
// attributes its schema accepts (replaced by their normalised form); tensor
// types only; composite indices in range; and each operator's type relation,
// applied in order to the parameters' types, agreeing with the recorded
// types (a `?` agrees with any extent). Throws relay::Error of kind `kind`
// naming `subject` ("kernel 3") and the problem.
void ValidateGraph(ExternalGraph& graph, ErrorKind kind, const std::string& subject);

// Each operator's result shape for parameters of shapes `input_shapes`
// (exact: no kAnyDim), by the operators' type relations; the last entry is
// the graph's result. Throws kUsage naming the operator whose relation
// refused the shapes (a run-time shape error).
std::vector<Shape> InferShapes(const ExternalGraph& graph, std::span<const Shape> input_shapes);

}  // namespace relay::kernels::external
