// Search and scan operators: topk, argsort, sort, argwhere, cumsum,
// cumprod. None is one expression per output element, so their kernels are
// C++ (kernels/host/search_kernels.cc); names and attributes are TVM
// Relay's.
#include <utility>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

AttrField AxisDefault(int64_t axis) {
  return DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(axis));
}

// An index dtype attribute ("int32", "int64").
DType IndexDType(const Attrs& attrs) {
  const DType dtype = DTypeAttr(attrs, "dtype", DType::kInt32);
  if (!IsIntegerDType(dtype) || dtype == DType::kBool) {
    FailRelation("attribute 'dtype' must name an integer dtype for the indices, got " +
                 std::string(DTypeName(dtype)));
  }
  return dtype;
}

const ValueType& ExpectSortable(std::span<const RelationInput> inputs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  if (data.shape.empty()) FailRelation("input 'data' must have at least one axis, got a scalar");
  if (data.dtype == DType::kBool) FailRelation("input 'data' must be numbers, got bool");
  return data;
}

// topk: the k largest (or smallest) elements along an axis, in order, and
// their positions; ties keep the lower position first. k < 1 takes the
// whole axis, as in TVM.
ValueType TopKRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectSortable(inputs);
  const size_t axis = size_t(NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size()));
  const int64_t k = IntAttr(attrs, "k");
  Dims shape = data.shape;
  if (k >= 1) {
    if (IsKnownDim(shape[axis]) && k > shape[axis]) {
      FailRelation("k is " + std::to_string(k) + " but axis " + std::to_string(axis) +
                   " has only " + std::to_string(shape[axis]) + " elements");
    }
    shape[axis] = k;
  }
  const std::string& returned = ChoiceAttr(attrs, "ret_type", {"both", "values", "indices"});
  ValueType values = ValueType::Tensor(shape, data.dtype);
  ValueType indices = ValueType::Tensor(shape, IndexDType(attrs));
  if (returned == "values") return values;
  if (returned == "indices") return indices;
  return ValueType::Tuple({std::move(values), std::move(indices)});
}

ValueType ArgsortRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectSortable(inputs);
  NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  return ValueType::Tensor(data.shape, IndexDType(attrs));
}

ValueType SortRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectSortable(inputs);
  NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  return data;
}

// argwhere: the positions of the nonzero elements, one row each, in
// row-major order: (count, rank) int32. The count is the condition's
// values', known once the condition is.
ValueType ArgwhereRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& condition = ExpectTensor(inputs, 0, "condition");
  const int64_t rank = int64_t(condition.shape.size());
  const Tensor* value = inputs[0].constant;
  if (value == nullptr || !value->on_host())
    return ValueType::Tensor({kAnyDim, rank}, DType::kInt32);
  int64_t count = 0;
  const auto* bytes = static_cast<const uint8_t*>(value->host_data());
  const size_t size = DTypeSize(value->dtype());
  for (int64_t index = 0; index < value->element_count(); ++index) {
    const uint8_t* element = bytes + size_t(index) * size;
    bool nonzero = false;
    for (size_t byte = 0; byte < size; ++byte) nonzero = nonzero || element[byte] != 0;
    // Negative zero is zero.
    if (nonzero && IsFloat(value->dtype())) {
      nonzero = value->dtype() == DType::kFloat32 ? reinterpret_cast<const float*>(element)[0] != 0
                : value->dtype() == DType::kFloat64
                    ? reinterpret_cast<const double*>(element)[0] != 0
                    : (element[0] | (element[1] & 0x7f)) != 0;
    }
    count += nonzero ? 1 : 0;
  }
  return ValueType::Tensor({count, rank}, DType::kInt32);
}

// cumsum, cumprod: running sums (products) along an axis, or over the
// flattened data when axis is None; exclusive leaves each element out of
// its own.
ValueType ScanRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const DType dtype = DTypeAttr(attrs, "dtype", data.dtype);
  if (dtype == DType::kBool || data.dtype == DType::kBool) {
    FailRelation("a running sum or product of bool: cast to an integer dtype first");
  }
  const std::optional<int64_t> axis = OptionalIntAttr(attrs, "axis");
  if (!axis) {
    int64_t count = 1;
    for (int64_t dim : data.shape) count = MultiplyDims(count, dim);
    return ValueType::Tensor({count}, dtype);
  }
  if (data.shape.empty()) FailRelation("an axis of a scalar");
  NormalizeAxis(*axis, data.shape.size());
  return ValueType::Tensor(data.shape, dtype);
}

AttrSchema ScanSchema() {
  return {DefaultAttr("axis", AttrKind::kOptionalInt, AttrValue()),
          DefaultAttr("dtype", AttrKind::kString, AttrValue::String("")),
          DefaultAttr("exclusive", AttrKind::kBool, AttrValue::Bool(false))};
}

}  // namespace

void RegisterSearchOperators(OperatorTableBuilder& table) {
  table.Add({.name = "topk",
             .input_names = {"data"},
             .attributes = {DefaultAttr("k", AttrKind::kInt, AttrValue::Int(1)), AxisDefault(-1),
                            DefaultAttr("ret_type", AttrKind::kString, AttrValue::String("both")),
                            DefaultAttr("is_ascend", AttrKind::kBool, AttrValue::Bool(false)),
                            DefaultAttr("dtype", AttrKind::kString, AttrValue::String("int32"))},
             .pattern = FusionPattern::kOpaque,
             .relation = TopKRelation,
             .summary = "The k largest (is_ascend: smallest) elements along an axis and their "
                        "positions, in order."});
  table.Add({.name = "argsort",
             .input_names = {"data"},
             .attributes = {AxisDefault(-1),
                            DefaultAttr("is_ascend", AttrKind::kBool, AttrValue::Bool(true)),
                            DefaultAttr("dtype", AttrKind::kString, AttrValue::String("int32"))},
             .pattern = FusionPattern::kOpaque,
             .relation = ArgsortRelation,
             .summary = "The positions that sort data along an axis (stable)."});
  table.Add({.name = "sort",
             .input_names = {"data"},
             .attributes = {AxisDefault(-1),
                            DefaultAttr("is_ascend", AttrKind::kBool, AttrValue::Bool(true))},
             .pattern = FusionPattern::kOpaque,
             .relation = SortRelation,
             .summary = "Data sorted along an axis."});
  table.Add({.name = "argwhere",
             .input_names = {"condition"},
             .attributes = {},
             .pattern = FusionPattern::kOpaque,
             .relation = ArgwhereRelation,
             .summary = "The positions of the nonzero elements, one row each (int32).",
             .shape_dependence = ShapeDependence::kInputValues});
  table.Add({.name = "cumsum",
             .input_names = {"data"},
             .attributes = ScanSchema(),
             .pattern = FusionPattern::kOpaque,
             .relation = ScanRelation,
             .summary = "Running sums along an axis (of the flattened data without one)."});
  table.Add({.name = "cumprod",
             .input_names = {"data"},
             .attributes = ScanSchema(),
             .pattern = FusionPattern::kOpaque,
             .relation = ScanRelation,
             .summary = "Running products along an axis (of the flattened data without one)."});
}

}  // namespace relay::kernels
