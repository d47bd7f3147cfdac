// Compute definitions of the operators whose results describe or are
// sized by values rather than by their inputs' shapes: arange (its length
// depends on the values of start, stop and step, so its output dimension
// stays symbolic and one kernel serves every length), shape_of and
// ndarray_size (read no data: the values are the input's dimensions, known
// to the kernel, symbolic or constant).
#include <unordered_map>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

// out[i] = start + i * step, in the output dtype (as TVM's arange: the
// index is converted first, so float outputs do not accumulate rounding).
TensorExpr ArangeCompute(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  const TensorExpr start = inputs[0], step = inputs[2];
  // The length is not known from shapes: the kernel builder replaces this
  // placeholder with the dimension the type relation computes from values.
  return TensorExpr{{Var(new VarNode("length"))}, dtype, [=](const std::vector<Expr>& indices) {
                      return Binary(
                          BinaryOp::kAdd, start.at({}),
                          Binary(BinaryOp::kMultiply, Cast(dtype, indices[0]), step.at({})));
                    }};
}

// Element i of `dimensions` (index expressions), as `dtype`.
Expr DimensionAt(const std::vector<Expr>& dimensions, const Expr& index, DType dtype) {
  Expr value = Int(0);
  for (size_t axis = dimensions.size(); axis-- > 0;) {
    value = Select(Binary(BinaryOp::kEqual, index, Int(static_cast<int64_t>(axis))),
                   dimensions[axis], value);
  }
  return Cast(dtype, value);
}

TensorExpr ShapeOfCompute(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  const std::vector<Expr> dimensions = inputs[0].shape;
  return TensorExpr{
      {Int(static_cast<int64_t>(dimensions.size()))}, dtype, [=](const std::vector<Expr>& indices) {
        return DimensionAt(dimensions, indices[0], dtype);
      }};
}

TensorExpr NDArraySizeCompute(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  Expr count = Int(1);
  for (const Expr& dimension : inputs[0].shape) count = Multiply(count, dimension);
  return TensorExpr{{}, dtype, [=](const std::vector<Expr>&) { return Cast(dtype, count); }};
}

}  // namespace

void AttachShapeComputes(OperatorTableBuilder& table) {
  table.AttachComputes({{"arange", ArangeCompute},
                        {"shape_of", ShapeOfCompute},
                        {"ndarray_size", NDArraySizeCompute}});
}

}  // namespace relay::kernels
