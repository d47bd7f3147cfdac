#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

using namespace relay::kernels::kir;

TensorExpr FromBuffer(const Buffer& buffer) {
  return TensorExpr{buffer->shape, buffer->dtype, [buffer](const std::vector<Expr>& indices) {
                      return Load(buffer, FlatIndex(buffer, indices));
                    }};
}

namespace {
bool IsConstant(const Expr& expr, int64_t value) {
  const auto* constant = As<IntImmNode>(expr);
  return constant != nullptr && constant->value == value;
}
}  // namespace

Expr BroadcastRead(const TensorExpr& input, const std::vector<Expr>& output_shape,
                   const std::vector<Expr>& indices) {
  size_t offset = output_shape.size() - input.ndim();
  std::vector<Expr> input_indices;
  for (size_t axis = 0; axis < input.ndim(); ++axis) {
    const Expr& dimension = input.shape[axis];
    const Expr& index = indices[offset + axis];
    if (IsConstant(dimension, 1)) {
      input_indices.push_back(Int(0));
    } else if (As<IntImmNode>(dimension) || dimension.get() == output_shape[offset + axis].get()) {
      input_indices.push_back(index);  // known to match the output
    } else {
      // Only known at run time: a dimension of 1 repeats its one element.
      input_indices.push_back(Select(Binary(BinaryOp::kEqual, dimension, Int(1)), Int(0), index));
    }
  }
  return input.at(input_indices);
}

std::vector<Expr> BroadcastShape(std::span<const TensorExpr> inputs) {
  size_t rank = 0;
  for (const TensorExpr& input : inputs) rank = std::max(rank, input.ndim());
  std::vector<Expr> shape(rank, Int(1));
  for (const TensorExpr& input : inputs) {
    size_t offset = rank - input.ndim();
    for (size_t axis = 0; axis < input.ndim(); ++axis) {
      Expr& current = shape[offset + axis];
      const Expr& dimension = input.shape[axis];
      if (IsConstant(current, 1)) {
        current = dimension;
      } else if (!IsConstant(dimension, 1) && !As<IntImmNode>(current) &&
                 As<IntImmNode>(dimension)) {
        current = dimension;  // a known size is more useful than a symbolic one
      } else if (!IsConstant(dimension, 1) && !As<IntImmNode>(current) &&
                 !As<IntImmNode>(dimension) && current.get() != dimension.get()) {
        // Two symbolic sizes, each possibly 1: the larger is the result.
        current = Binary(BinaryOp::kMaximum, current, dimension);
      }
    }
  }
  return shape;
}

DType DotAccumulator(DType out_dtype) {
  return out_dtype == DType::kFloat16 ? DType::kFloat32 : out_dtype;
}

}  // namespace relay::kernels
