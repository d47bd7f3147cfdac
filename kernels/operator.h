// The operator table: one definition per operator (docs/architecture.md,
// "Operators").
//
// An OperatorDefinition names the operator, its inputs, its attribute schema,
// its fusion pattern and its type relation. The type relation works on
// device- and compiler-neutral value types, so the same function types a
// call at compile time (where dimensions may be unknown, kAnyDim) and
// computes output shapes at run time (where every dimension is known).
// Each entry with a kernel also carries its compute definition (kernel IR).
//
// Thread-safety: the table is built once, on first use, and is immutable
// afterwards; lookups may happen from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/tensor_expr.h"
#include "relay/dtype.h"
#include "relay/tensor.h"

namespace relay::kernels {

// An unknown dimension, Relay's `?`.
inline constexpr int64_t kAnyDim = -1;

// The type of an operator input or output: a tensor, or a tuple of them
// (concatenate takes a tuple; split and batch_norm return one).
struct ValueType {
  bool is_tuple = false;
  std::vector<int64_t> shape;  // tensors: dims, kAnyDim for `?`
  DType dtype = DType::kFloat32;
  std::vector<ValueType> fields;  // tuples

  static ValueType Tensor(std::vector<int64_t> shape, DType dtype);
  static ValueType Tuple(std::vector<ValueType> fields);
  bool operator==(const ValueType& other) const;
  // Relay text: Tensor[(2, ?), float32], (Tensor[...], ...).
  std::string ToString() const;
};

// How an operator may be fused with its neighbours (Relay's OpPatternKind).
enum class FusionPattern {
  kElementwise,
  kBroadcast,
  kInjective,
  kCommReduce,
  kOutElementwiseFusable,  // dense, conv: an elementwise epilogue may fuse
  kOpaque,
};

// What an operator's output shape depends on. The type relation doubles as
// the host shape function: given inputs whose dimensions are all known it
// computes the output's exact shape. Most operators need nothing more
// (kInputShapes); a few need the values of their inputs too (arange's
// bounds): for those the caller must have the inputs on the host and pass
// them as RelationInput::constant before it can allocate the result.
enum class ShapeDependence {
  kInputShapes,
  kInputValues,
};

// What a type relation sees of one input besides its type: its value, when
// the input is a constant (arange's bounds, dyn.reshape's shape).
struct RelationInput {
  const ValueType* type;
  const Tensor* constant;  // null unless the input is a known constant
};

// Thrown by type relations; the type checker adds the operator name and the
// call's source location.
struct OperatorTypeError {
  std::string message;
};

using TypeRelation =
    std::function<ValueType(std::span<const RelationInput> inputs, const Attrs& attrs)>;

// A kernel written in C++ instead of kernel IR, for operators whose work is
// not one expression per output element: sorting and selecting (topk,
// argsort), scans (cumsum), outputs sized by values (argwhere), non-maximum
// suppression. It computes result `result` (0 for a tensor result, else the
// tuple field's position) from host tensors `inputs` into the host tensor
// `output`, whose shape and dtype the type relation gave; `attrs` are
// normalised. Such an operator is never fused and runs on the host: inputs
// on a device are copied there, and its result back (as ONNX Runtime falls
// back to its CPU kernels).
using HostKernel = std::function<void(std::span<const Tensor* const> inputs, const Attrs& attrs,
                                      size_t result, const Tensor& output)>;

// Whether reverse-mode automatic differentiation can go through an operator
// (compiler/passes/gradient.h). Only calls with a floating-point result and
// a floating-point input ask: an integer index, a comparison or a shape
// carries no gradient whatever its operator says.
enum class Differentiability {
  // A gradient through it is a type error naming the operator.
  kNotDifferentiable,
  // Its gradient rule is in compiler/passes/operator_gradients/, in the
  // file of the operator's family.
  kGradient,
  // Piecewise constant (floor, sign, round): the gradient of every input is
  // zero wherever it exists, as in TVM and PyTorch.
  kZeroGradient,
};

struct OperatorDefinition {
  std::string name;                      // Relay's name: "add", "nn.conv2d"
  std::vector<std::string> input_names;  // fixed arity
  AttrSchema attributes;
  FusionPattern pattern = FusionPattern::kOpaque;
  TypeRelation relation;
  std::string summary;  // one line for documentation and the REPL
  ShapeDependence shape_dependence = ShapeDependence::kInputShapes;
  Differentiability differentiability = Differentiability::kNotDifferentiable;
  // How an output element is computed (kernels/compute/); empty for
  // operators whose kernels are not written yet. Attached after the
  // families register their entries, hence last.
  ComputeFunction compute = {};
  // Set instead of `compute` for an operator computed by C++ code
  // (kernels/host/); attached the same way.
  HostKernel host_kernel = {};

  // Whether a kernel computes this operator (either kind).
  bool has_kernel() const { return compute || host_kernel; }
};

// The operator named `name`, or null.
const OperatorDefinition* FindOperator(std::string_view name);
// Every operator, sorted by name.
std::span<const OperatorDefinition* const> AllOperators();

}  // namespace relay::kernels
