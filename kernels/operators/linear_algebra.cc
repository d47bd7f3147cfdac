// Linear-algebra operators: det, the determinant of square matrices. Its
// kernel is C++ (kernels/host/linear_algebra_kernels.cc): an LU
// factorisation is no expression per output element.
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// det: data (..., n, n) of a floating-point dtype to the determinants (...).
ValueType DetRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectMinimumRank(data, 2, "data");
  ExpectFloatDType(data, "data");
  const size_t rank = data.shape.size();
  UnifyDims(data.shape[rank - 2], data.shape[rank - 1], "the rows and columns of square matrices");
  return ValueType::Tensor(Dims(data.shape.begin(), data.shape.end() - 2), data.dtype);
}

}  // namespace

void RegisterLinearAlgebraOperators(OperatorTableBuilder& table) {
  table.Add({.name = "det",
             .input_names = {"data"},
             .attributes = {},
             .pattern = FusionPattern::kOpaque,
             .relation = DetRelation,
             .summary = "The determinants of the square matrices on the last two axes."});
}

}  // namespace relay::kernels
