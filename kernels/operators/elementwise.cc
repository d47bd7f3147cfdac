// Elementwise operators: unary math, binary broadcasting arithmetic and
// comparisons, where, cast, clip.
#include <optional>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// Which input dtypes an operator accepts.
enum class Accepts {
  kAny,      // every dtype (copy, comparisons)
  kNumeric,  // every dtype but bool (arithmetic)
  kFloat,    // floating point only (transcendental functions)
  kBool,     // bool only (logical operators)
  kInteger,  // integers only (bit shifts)
};

void CheckAccepted(const ValueType& tensor, Accepts accepts, std::string_view name) {
  switch (accepts) {
    case Accepts::kAny:
      return;
    case Accepts::kNumeric:
      if (tensor.dtype == DType::kBool) {
        FailRelation("input '" + std::string(name) + "' must have a numeric dtype, got " +
                     tensor.ToString());
      }
      return;
    case Accepts::kFloat:
      ExpectFloatDType(tensor, name);
      return;
    case Accepts::kBool:
      ExpectBoolDType(tensor, name);
      return;
    case Accepts::kInteger:
      ExpectIntegerDType(tensor, name);
      return;
  }
}

// Output has the input's shape; its dtype is `output_dtype` or the input's.
TypeRelation UnaryRelation(Accepts accepts, std::optional<DType> output_dtype) {
  return [accepts, output_dtype](std::span<const RelationInput> inputs, const Attrs&) {
    const ValueType& data = ExpectTensor(inputs, 0, "data");
    CheckAccepted(data, accepts, "data");
    return ValueType::Tensor(data.shape, output_dtype.value_or(data.dtype));
  };
}

// Both operands share one dtype (as Relay requires: no implicit promotion);
// the output shape is their broadcast.
TypeRelation BinaryRelation(Accepts accepts, std::optional<DType> output_dtype) {
  return [accepts, output_dtype](std::span<const RelationInput> inputs, const Attrs&) {
    const ValueType& lhs = ExpectTensor(inputs, 0, "lhs");
    const ValueType& rhs = ExpectTensor(inputs, 1, "rhs");
    ExpectSameDType(lhs, rhs);
    CheckAccepted(lhs, accepts, "lhs");
    return ValueType::Tensor(BroadcastShapes(lhs.shape, rhs.shape),
                             output_dtype.value_or(lhs.dtype));
  };
}

struct UnaryOperator {
  const char* name;
  Accepts accepts;
  std::optional<DType> output_dtype;
  Differentiability differentiability;
  const char* summary;
};

struct BinaryOperator {
  const char* name;
  Accepts accepts;
  std::optional<DType> output_dtype;
  Differentiability differentiability;
  const char* summary;
};

constexpr std::optional<DType> kSameDType = std::nullopt;
// Short names for the table's differentiability column.
constexpr Differentiability kGrad = Differentiability::kGradient;
constexpr Differentiability kZero = Differentiability::kZeroGradient;
constexpr Differentiability kNone = Differentiability::kNotDifferentiable;

const UnaryOperator kUnaryOperators[] = {
    {"negative", Accepts::kNumeric, kSameDType, kGrad, "Elementwise negation: -x."},
    {"abs", Accepts::kNumeric, kSameDType, kGrad, "Elementwise absolute value."},
    {"sign", Accepts::kNumeric, kSameDType, kZero, "Elementwise sign: -1, 0 or 1."},
    // floor, ceil, round and trunc are the identity on integers, as in TVM.
    {"floor", Accepts::kNumeric, kSameDType, kZero, "Elementwise floor."},
    {"ceil", Accepts::kNumeric, kSameDType, kZero, "Elementwise ceiling."},
    {"round", Accepts::kNumeric, kSameDType, kZero,
     "Elementwise rounding, halves to even (as NumPy and ONNX)."},
    {"trunc", Accepts::kNumeric, kSameDType, kZero, "Elementwise truncation toward zero."},
    {"exp", Accepts::kFloat, kSameDType, kGrad, "Elementwise e^x."},
    {"log", Accepts::kFloat, kSameDType, kGrad, "Elementwise natural logarithm."},
    {"log2", Accepts::kFloat, kSameDType, kGrad, "Elementwise base-2 logarithm."},
    {"log10", Accepts::kFloat, kSameDType, kGrad, "Elementwise base-10 logarithm."},
    {"sqrt", Accepts::kFloat, kSameDType, kGrad, "Elementwise square root."},
    {"rsqrt", Accepts::kFloat, kSameDType, kGrad, "Elementwise reciprocal square root: 1/sqrt(x)."},
    {"sigmoid", Accepts::kFloat, kSameDType, kGrad, "Elementwise logistic function: 1/(1+e^-x)."},
    {"tanh", Accepts::kFloat, kSameDType, kGrad, "Elementwise hyperbolic tangent."},
    {"erf", Accepts::kFloat, kSameDType, kGrad, "Elementwise Gauss error function."},
    {"sin", Accepts::kFloat, kSameDType, kGrad, "Elementwise sine."},
    {"cos", Accepts::kFloat, kSameDType, kGrad, "Elementwise cosine."},
    {"tan", Accepts::kFloat, kSameDType, kGrad, "Elementwise tangent."},
    {"asin", Accepts::kFloat, kSameDType, kGrad, "Elementwise arcsine."},
    {"acos", Accepts::kFloat, kSameDType, kGrad, "Elementwise arccosine."},
    {"atan", Accepts::kFloat, kSameDType, kGrad, "Elementwise arctangent."},
    {"sinh", Accepts::kFloat, kSameDType, kGrad, "Elementwise hyperbolic sine."},
    {"cosh", Accepts::kFloat, kSameDType, kGrad, "Elementwise hyperbolic cosine."},
    {"isnan", Accepts::kFloat, DType::kBool, kNone, "Elementwise test for NaN."},
    {"isinf", Accepts::kFloat, DType::kBool, kNone, "Elementwise test for an infinity."},
    {"isfinite", Accepts::kFloat, DType::kBool, kNone, "Elementwise test for a finite value."},
    {"logical_not", Accepts::kBool, DType::kBool, kNone, "Elementwise logical NOT."},
    {"copy", Accepts::kAny, kSameDType, kGrad, "A copy of the input."},
    {"nn.relu", Accepts::kNumeric, kSameDType, kGrad, "Rectified linear unit: max(x, 0)."},
};

const BinaryOperator kBinaryOperators[] = {
    {"add", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting addition."},
    {"subtract", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting subtraction."},
    {"multiply", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting multiplication."},
    {"divide", Accepts::kNumeric, kSameDType, kGrad,
     "Broadcasting division (truncating for integers, as in TVM)."},
    {"floor_divide", Accepts::kNumeric, kSameDType, kZero, "Broadcasting division rounded down."},
    {"trunc_divide", Accepts::kNumeric, kSameDType, kZero,
     "Broadcasting division rounded toward zero."},
    {"mod", Accepts::kNumeric, kSameDType, kGrad,
     "Broadcasting remainder with the dividend's sign (truncating)."},
    {"floor_mod", Accepts::kNumeric, kSameDType, kGrad,
     "Broadcasting remainder with the divisor's sign (flooring)."},
    {"trunc_mod", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting truncating remainder."},
    {"power", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting power: lhs^rhs."},
    {"maximum", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting elementwise maximum."},
    {"minimum", Accepts::kNumeric, kSameDType, kGrad, "Broadcasting elementwise minimum."},
    {"equal", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs == rhs."},
    {"not_equal", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs != rhs."},
    {"less", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs < rhs."},
    {"less_equal", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs <= rhs."},
    {"greater", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs > rhs."},
    {"greater_equal", Accepts::kAny, DType::kBool, kNone, "Broadcasting comparison lhs >= rhs."},
    {"logical_and", Accepts::kBool, DType::kBool, kNone, "Broadcasting logical AND."},
    {"logical_or", Accepts::kBool, DType::kBool, kNone, "Broadcasting logical OR."},
    {"logical_xor", Accepts::kBool, DType::kBool, kNone, "Broadcasting logical XOR."},
    {"left_shift", Accepts::kInteger, kSameDType, kNone,
     "Broadcasting bit shift lhs << rhs (0 for amounts outside [0, width))."},
    {"right_shift", Accepts::kInteger, kSameDType, kNone,
     "Broadcasting bit shift lhs >> rhs, arithmetic for signed dtypes (amounts outside [0, "
     "width) shift every bit out)."},
};

ValueType WhereRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& condition = ExpectTensor(inputs, 0, "condition");
  const ValueType& x = ExpectTensor(inputs, 1, "x");
  const ValueType& y = ExpectTensor(inputs, 2, "y");
  ExpectSameDType(x, y);
  // The condition may have any dtype: nonzero selects x, as in NumPy.
  Dims shape;
  try {
    shape = BroadcastShapes(condition.shape, BroadcastShapes(x.shape, y.shape));
  } catch (const OperatorTypeError&) {
    // Name all three shapes: the pairwise message would show an intermediate.
    FailRelation("condition, x and y of shapes " + DimsToString(condition.shape) + ", " +
                 DimsToString(x.shape) + " and " + DimsToString(y.shape) + " cannot be broadcast");
  }
  return ValueType::Tensor(std::move(shape), x.dtype);
}

ValueType CastRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  return ValueType::Tensor(data.shape, DTypeAttr(attrs, "dtype", std::nullopt));
}

ValueType CastLikeRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& dtype_like = ExpectTensor(inputs, 1, "dtype_like");
  return ValueType::Tensor(data.shape, dtype_like.dtype);
}

ValueType ClipRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  CheckAccepted(data, Accepts::kNumeric, "data");
  return data;
}

}  // namespace

void RegisterElementwiseOperators(OperatorTableBuilder& table) {
  for (const UnaryOperator& unary : kUnaryOperators) {
    table.Add({.name = unary.name,
               .input_names = {"data"},
               .attributes = {},
               .pattern = FusionPattern::kElementwise,
               .relation = UnaryRelation(unary.accepts, unary.output_dtype),
               .summary = unary.summary,
               .differentiability = unary.differentiability});
  }
  for (const BinaryOperator& binary : kBinaryOperators) {
    table.Add({.name = binary.name,
               .input_names = {"lhs", "rhs"},
               .attributes = {},
               .pattern = FusionPattern::kBroadcast,
               .relation = BinaryRelation(binary.accepts, binary.output_dtype),
               .summary = binary.summary,
               .differentiability = binary.differentiability});
  }
  table.Add({.name = "where",
             .input_names = {"condition", "x", "y"},
             .attributes = {},
             .pattern = FusionPattern::kBroadcast,
             .relation = WhereRelation,
             .summary = "Elements of x where condition is nonzero, else of y (broadcasting).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "cast",
             .input_names = {"data"},
             .attributes = {RequiredAttr("dtype", AttrKind::kString)},
             .pattern = FusionPattern::kElementwise,
             .relation = CastRelation,
             .summary = "Converts each element to another dtype.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "cast_like",
             .input_names = {"data", "dtype_like"},
             .attributes = {},
             .pattern = FusionPattern::kElementwise,
             .relation = CastLikeRelation,
             .summary = "Converts each element to the dtype of a second tensor.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "clip",
             .input_names = {"data"},
             .attributes = {RequiredAttr("a_min", AttrKind::kFloat),
                            RequiredAttr("a_max", AttrKind::kFloat)},
             .pattern = FusionPattern::kElementwise,
             .relation = ClipRelation,
             .summary = "Clamps each element to [a_min, a_max].",
             .differentiability = Differentiability::kGradient});
}

}  // namespace relay::kernels
