// Selection operators whose results are sized by the data's values:
// unique_along, ONNX's Unique (numpy.unique with every optional result).
// TVM Relay's `unique` pads its results to the input's length and works on
// 1-D data only, hence a name of its own. The kernel is C++
// (kernels/host/selection_kernels.cc).
#include "kernels/host/unique_slices.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// unique_along: the distinct slices along `axis` (the distinct elements of
// the flattened data without one), ascending when `sorted`, else in order
// of first occurrence, as the tuple (values, the first position of each,
// each position's distinct slice, the count of each), positions int64. The
// number of distinct slices is known once the data is.
ValueType UniqueAlongRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const std::optional<int64_t> given = OptionalIntAttr(attrs, "axis");
  std::optional<size_t> axis;
  if (given) {
    if (data.shape.empty()) FailRelation("an axis of a scalar: leave 'axis' out to flatten it");
    axis = size_t(NormalizeAxis(*given, data.shape.size()));
  }
  int64_t positions = 1;
  if (axis) {
    positions = data.shape[*axis];
  } else {
    for (int64_t dim : data.shape) positions = MultiplyDims(positions, dim);
  }
  int64_t distinct = kAnyDim;
  const Tensor* value = inputs[0].constant;
  if (value != nullptr && value->on_host()) {
    distinct =
        int64_t(host::FindUniqueSlices(*value, axis, BoolAttr(attrs, "sorted")).first.size());
  }
  Dims values_shape{distinct};
  if (axis) {
    values_shape = data.shape;
    values_shape[*axis] = distinct;
  }
  const ValueType per_slice = ValueType::Tensor({distinct}, DType::kInt64);
  return ValueType::Tuple({ValueType::Tensor(values_shape, data.dtype), per_slice,
                           ValueType::Tensor({positions}, DType::kInt64), per_slice});
}

}  // namespace

void RegisterSelectionOperators(OperatorTableBuilder& table) {
  table.Add({.name = "unique_along",
             .input_names = {"data"},
             .attributes = {DefaultAttr("axis", AttrKind::kOptionalInt, AttrValue()),
                            DefaultAttr("sorted", AttrKind::kBool, AttrValue::Bool(true))},
             .pattern = FusionPattern::kOpaque,
             .relation = UniqueAlongRelation,
             .summary = "The distinct slices along an axis (elements without one), their first "
                        "positions, each position's slice and their counts (int64).",
             .shape_dependence = ShapeDependence::kInputValues});
}

}  // namespace relay::kernels
