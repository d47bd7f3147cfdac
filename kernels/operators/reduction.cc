// Reductions over axes: sum, mean, prod, max, min, all, any, argmax, argmin,
// variance and std.
#include <algorithm>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// Relay's reduction schema (ReduceAttrs).
AttrSchema ReduceSchema() {
  return {DefaultAttr("axis", AttrKind::kOptionalIntList, AttrValue()),
          DefaultAttr("keepdims", AttrKind::kBool, AttrValue::Bool(false)),
          DefaultAttr("exclude", AttrKind::kBool, AttrValue::Bool(false))};
}

// The shape left after reducing `shape`:
// - axis=None reduces every axis (exclude is then ignored, as in TVM);
// - otherwise the listed axes (negative ones count from the end, each at most
//   once), or with exclude=True every axis *not* listed;
// - keepdims=True keeps each reduced axis as a 1.
Dims ReducedShape(const Dims& shape, const Attrs& attrs) {
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, true);
  if (std::optional<std::vector<int64_t>> axes = OptionalIntListAttr(attrs, "axis")) {
    const bool exclude = BoolAttr(attrs, "exclude");
    std::fill(reduced.begin(), reduced.end(), exclude);
    for (int64_t axis : NormalizeAxes(*axes, rank)) reduced[axis] = !exclude;
  }
  const bool keepdims = BoolAttr(attrs, "keepdims");
  Dims result;
  for (size_t index = 0; index < rank; ++index) {
    if (!reduced[index]) {
      result.push_back(shape[index]);
    } else if (keepdims) {
      result.push_back(1);
    }
  }
  return result;
}

enum class Accepts { kAny, kNumeric, kBool };

TypeRelation ReduceRelation(Accepts accepts, std::optional<DType> output_dtype) {
  return [accepts, output_dtype](std::span<const RelationInput> inputs, const Attrs& attrs) {
    const ValueType& data = ExpectTensor(inputs, 0, "data");
    if (accepts == Accepts::kNumeric && data.dtype == DType::kBool) {
      FailRelation("input 'data' must have a numeric dtype, got " + data.ToString());
    }
    if (accepts == Accepts::kBool) ExpectBoolDType(data, "data");
    return ValueType::Tensor(ReducedShape(data.shape, attrs), output_dtype.value_or(data.dtype));
  };
}

// variance and std take the mean as a second input (TVM's arity): it must
// have data's rank, with each dimension 1 (reduced) or equal to data's.
ValueType VarianceRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& mean = ExpectTensor(inputs, 1, "mean");
  if (data.dtype == DType::kBool) {
    FailRelation("input 'data' must have a numeric dtype, got " + data.ToString());
  }
  ExpectSameDType(data, mean);
  if (mean.shape.size() != data.shape.size()) {
    FailRelation("input 'mean' must have the rank of 'data': " + mean.ToString() + " vs " +
                 data.ToString());
  }
  for (size_t index = 0; index < data.shape.size(); ++index) {
    const int64_t mean_dim = mean.shape[index];
    const int64_t data_dim = data.shape[index];
    if (IsKnownDim(mean_dim) && IsKnownDim(data_dim) && mean_dim != 1 && mean_dim != data_dim) {
      FailRelation("input 'mean' of shape " + DimsToString(mean.shape) +
                   " does not broadcast to 'data' of shape " + DimsToString(data.shape));
    }
  }
  return ValueType::Tensor(ReducedShape(data.shape, attrs), data.dtype);
}

struct Reduction {
  const char* name;
  Accepts accepts;
  Differentiability differentiability;
  const char* summary;
};

constexpr Differentiability kGrad = Differentiability::kGradient;
// all and any take and give bool tensors: no gradient ever reaches them.
constexpr Differentiability kNone = Differentiability::kNotDifferentiable;

const Reduction kReductions[] = {
    {"sum", Accepts::kNumeric, kGrad, "Sum over the given axes."},
    {"mean", Accepts::kNumeric, kGrad, "Arithmetic mean over the given axes."},
    {"prod", Accepts::kNumeric, kGrad, "Product over the given axes."},
    {"max", Accepts::kAny, kGrad, "Maximum over the given axes."},
    {"min", Accepts::kAny, kGrad, "Minimum over the given axes."},
    {"all", Accepts::kBool, kNone, "Logical AND over the given axes."},
    {"any", Accepts::kBool, kNone, "Logical OR over the given axes."},
};

}  // namespace

void RegisterReductionOperators(OperatorTableBuilder& table) {
  for (const Reduction& reduction : kReductions) {
    table.Add({.name = reduction.name,
               .input_names = {"data"},
               .attributes = ReduceSchema(),
               .pattern = FusionPattern::kCommReduce,
               .relation = ReduceRelation(reduction.accepts, std::nullopt),
               .summary = reduction.summary,
               .differentiability = reduction.differentiability});
  }

  // argmax and argmin give int32 positions, which carry no gradient: they
  // stay kNotDifferentiable.
  AttrSchema arg_schema = ReduceSchema();
  arg_schema.push_back(DefaultAttr("select_last_index", AttrKind::kBool, AttrValue::Bool(false)));
  table.Add({.name = "argmax",
             .input_names = {"data"},
             .attributes = arg_schema,
             .pattern = FusionPattern::kCommReduce,
             .relation = ReduceRelation(Accepts::kAny, DType::kInt32),
             .summary = "Index (int32) of the maximum over the given axes."});
  table.Add({.name = "argmin",
             .input_names = {"data"},
             .attributes = arg_schema,
             .pattern = FusionPattern::kCommReduce,
             .relation = ReduceRelation(Accepts::kAny, DType::kInt32),
             .summary = "Index (int32) of the minimum over the given axes."});

  AttrSchema variance_schema = ReduceSchema();
  variance_schema.push_back(DefaultAttr("unbiased", AttrKind::kBool, AttrValue::Bool(false)));
  table.Add({.name = "variance",
             .input_names = {"data", "mean"},
             .attributes = variance_schema,
             .pattern = FusionPattern::kCommReduce,
             .relation = VarianceRelation,
             .summary = "Variance over the given axes, given the mean (keepdims shape).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "std",
             .input_names = {"data", "mean"},
             .attributes = variance_schema,
             .pattern = FusionPattern::kCommReduce,
             .relation = VarianceRelation,
             .summary = "Standard deviation over the given axes, given the mean.",
             .differentiability = Differentiability::kGradient});
}

}  // namespace relay::kernels
