// Tests of the operator table: attribute schemas, normalisation, and the type
// relations. Shape expectations come from NumPy (tests/fixtures/
// operator_shapes.txt, made by tests/kernels/generate_shape_cases.py) or from
// the closed-form formulas written out in each hand-written test.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/operator.h"
#include "kernels/operator_table.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::kernels {
namespace {

constexpr int64_t Q = kAnyDim;  // `?` in shapes below

}  // namespace

// Readable failure messages for EXPECT_EQ on types.
void PrintTo(const ValueType& type, std::ostream* stream) {
  *stream << type.ToString();
}

namespace {

ValueType T(std::vector<int64_t> shape, DType dtype = DType::kFloat32) {
  return ValueType::Tensor(std::move(shape), dtype);
}

// The result of typing a call, or the relation's (or normalisation's) error.
struct Outcome {
  std::optional<ValueType> type;
  std::string error;
};

Outcome Infer(std::string_view name, const std::vector<ValueType>& input_types,
              const Attrs& given = {}, const std::vector<const Tensor*>& constants = {}) {
  const OperatorDefinition* definition = FindOperator(name);
  if (definition == nullptr) {
    ADD_FAILURE() << "no operator " << name;
    return {};
  }
  Attrs attrs;
  if (std::optional<std::string> problem = NormalizeAttrs(definition->attributes, given, attrs)) {
    return {std::nullopt, *problem};
  }
  std::vector<RelationInput> inputs;
  for (size_t index = 0; index < input_types.size(); ++index) {
    inputs.push_back({&input_types[index], index < constants.size() ? constants[index] : nullptr});
  }
  try {
    return {definition->relation(inputs, attrs), ""};
  } catch (const OperatorTypeError& error) {
    return {std::nullopt, error.message};
  }
}

// Typing must succeed; returns the output type.
ValueType Type(std::string_view name, const std::vector<ValueType>& inputs,
               const Attrs& attrs = {}) {
  Outcome outcome = Infer(name, inputs, attrs);
  EXPECT_TRUE(outcome.type.has_value()) << name << ": " << outcome.error;
  return outcome.type.value_or(ValueType::Tuple({}));
}

// Typing must fail; returns the message.
std::string Error(std::string_view name, const std::vector<ValueType>& inputs,
                  const Attrs& attrs = {}) {
  Outcome outcome = Infer(name, inputs, attrs);
  EXPECT_FALSE(outcome.type.has_value())
      << name << " unexpectedly typed as " << outcome.type->ToString();
  return outcome.error;
}

AttrValue Ints(std::vector<int64_t> values) {
  return AttrValue::IntList(values);
}
AttrValue Str(const char* text) {
  return AttrValue::String(text);
}

// ---- the fixture: NumPy-computed shapes --------------------------------------------

// A tiny JSON reader for the fixture's attribute objects.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  Attrs ReadObject() {
    Attrs attrs;
    Expect('{');
    if (Peek() == '}') {
      ++position_;
      return attrs;
    }
    while (true) {
      std::string key = ReadString();
      Expect(':');
      attrs.emplace_back(std::move(key), ReadValue());
      if (Peek() == ',') {
        ++position_;
        continue;
      }
      Expect('}');
      return attrs;
    }
  }

 private:
  char Peek() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) {
      ++position_;
    }
    return position_ < text_.size() ? text_[position_] : '\0';
  }
  void Expect(char character) {
    if (Peek() != character) throw std::runtime_error("bad JSON near " + std::string(text_));
    ++position_;
  }
  std::string ReadString() {
    Expect('"');
    const size_t end = text_.find('"', position_);
    std::string text(text_.substr(position_, end - position_));
    position_ = end + 1;
    return text;
  }
  AttrValue ReadValue() {
    const char next = Peek();
    if (next == '"') return AttrValue::String(ReadString());
    if (next == '[') {
      ++position_;
      std::vector<AttrValue> items;
      if (Peek() == ']') {
        ++position_;
        return AttrValue::List(items);
      }
      while (true) {
        items.push_back(ReadValue());
        if (Peek() == ',') {
          ++position_;
          continue;
        }
        Expect(']');
        return AttrValue::List(items);
      }
    }
    for (auto [word, value] :
         {std::pair{"true", AttrValue::Bool(true)}, std::pair{"false", AttrValue::Bool(false)},
          std::pair{"null", AttrValue()}}) {
      if (text_.substr(position_, std::strlen(word)) == word) {
        position_ += std::strlen(word);
        return value;
      }
    }
    size_t consumed = 0;
    const int64_t number = std::stoll(std::string(text_.substr(position_)), &consumed);
    position_ += consumed;
    return AttrValue::Int(number);
  }

  std::string_view text_;
  size_t position_ = 0;
};

// DTYPE[d0,d1] or {T,T,...}.
ValueType ParseFixtureType(std::string_view text) {
  if (text.front() == '{') {
    std::vector<ValueType> fields;
    size_t start = 1;
    while (start < text.size() - 1) {
      const size_t close = text.find(']', start);
      fields.push_back(ParseFixtureType(text.substr(start, close + 1 - start)));
      start = close + 2;  // past "],"
    }
    return ValueType::Tuple(std::move(fields));
  }
  const size_t open = text.find('[');
  const std::optional<DType> dtype = ParseDType(text.substr(0, open));
  if (!dtype) throw std::runtime_error("bad dtype in " + std::string(text));
  std::vector<int64_t> shape;
  std::stringstream dims(std::string(text.substr(open + 1, text.size() - open - 2)));
  std::string dim;
  while (std::getline(dims, dim, ',')) shape.push_back(std::stoll(dim));
  return ValueType::Tensor(std::move(shape), *dtype);
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t bar = line.find(" | ", start);
    fields.push_back(line.substr(start, bar - start));
    if (bar == std::string::npos) return fields;
    start = bar + 3;
  }
}

TEST(OperatorShapeFixture, MatchesNumPy) {
  std::ifstream file(std::string(RELAY_TEST_FIXTURE_DIR) + "/operator_shapes.txt");
  ASSERT_TRUE(file.good()) << "missing operator_shapes.txt; run generate_shape_cases.py";
  std::string line;
  int cases = 0;
  std::set<std::string> operators;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    SCOPED_TRACE(line);
    const std::vector<std::string> fields = SplitFields(line);
    ASSERT_EQ(fields.size(), 4u);
    std::vector<ValueType> inputs;
    std::stringstream input_text(fields[1]);
    std::string input;
    while (input_text >> input) inputs.push_back(ParseFixtureType(input));
    const OperatorDefinition* definition = FindOperator(fields[0]);
    ASSERT_NE(definition, nullptr);
    Attrs attrs;
    const std::optional<std::string> problem =
        NormalizeAttrs(definition->attributes, JsonReader(fields[2]).ReadObject(), attrs);
    ASSERT_FALSE(problem.has_value()) << *problem;
    std::vector<RelationInput> relation_inputs;
    for (const ValueType& type : inputs) relation_inputs.push_back({&type, nullptr});
    if (fields[3] == "error") {
      EXPECT_THROW(definition->relation(relation_inputs, attrs), OperatorTypeError);
    } else {
      try {
        EXPECT_EQ(definition->relation(relation_inputs, attrs).ToString(),
                  ParseFixtureType(fields[3]).ToString());
      } catch (const OperatorTypeError& error) {
        ADD_FAILURE() << "unexpected error: " << error.message;
      }
    }
    operators.insert(fields[0]);
    ++cases;
  }
  EXPECT_GT(cases, 300);
  for (const char* name :
       {"reshape", "strided_slice", "split", "take", "where", "sum", "argmax", "broadcast_to",
        "tile", "repeat", "squeeze", "expand_dims", "stack", "concatenate", "transpose"}) {
    EXPECT_TRUE(operators.count(name)) << name << " has no fixture cases";
  }
}

// ---- the table ----------------------------------------------------------------------

TEST(OperatorTable, SortedUniqueAndFindable) {
  const auto all = AllOperators();
  // Update when adding operators (and give the new ones tests).
  EXPECT_EQ(all.size(), 140u);
  for (size_t index = 0; index < all.size(); ++index) {
    const OperatorDefinition* definition = all[index];
    if (index > 0) {
      EXPECT_LT(all[index - 1]->name, definition->name);
    }
    EXPECT_EQ(FindOperator(definition->name), definition);
    EXPECT_TRUE(static_cast<bool>(definition->relation)) << definition->name;
    EXPECT_FALSE(definition->summary.empty()) << definition->name;
  }
  EXPECT_EQ(FindOperator("nn.conv3d_but_not_really"), nullptr);
  EXPECT_EQ(FindOperator(""), nullptr);
  EXPECT_EQ(FindOperator("zzz"), nullptr);
}

TEST(OperatorTable, EveryOperatorHasAKernel) {
  // Operators with a tuple result have theirs beside the table
  // (kernels/compute: ComputeTupleResult, NeuralNetworkTupleResult).
  const std::set<std::string> tuple_results = {"split", "nn.batch_norm", "nn.dropout"};
  for (const OperatorDefinition* definition : AllOperators()) {
    EXPECT_TRUE(definition->has_kernel() || tuple_results.count(definition->name))
        << definition->name << " has no compute definition or host kernel";
    // A C++ kernel is never fused: its operator is opaque.
    if (definition->host_kernel) {
      EXPECT_FALSE(definition->compute) << definition->name;
      EXPECT_EQ(definition->pattern, FusionPattern::kOpaque) << definition->name;
    }
  }
  for (const char* name : {"topk", "argsort", "sort", "argwhere", "cumsum", "cumprod",
                           "vision.all_class_non_max_suppression", "vision.roi_align",
                           "image.grid_sample", "dft", "det", "unique_along"}) {
    const OperatorDefinition* definition = FindOperator(name);
    ASSERT_NE(definition, nullptr) << name;
    EXPECT_TRUE(definition->host_kernel) << name;
  }
}

TEST(OperatorTable, HasRelaysCoreOperators) {
  for (const char* name : {"negative",
                           "abs",
                           "exp",
                           "log",
                           "sqrt",
                           "rsqrt",
                           "sigmoid",
                           "tanh",
                           "erf",
                           "floor",
                           "ceil",
                           "round",
                           "sign",
                           "logical_not",
                           "copy",
                           "nn.relu",
                           "add",
                           "subtract",
                           "multiply",
                           "divide",
                           "floor_divide",
                           "mod",
                           "power",
                           "maximum",
                           "minimum",
                           "equal",
                           "not_equal",
                           "less",
                           "less_equal",
                           "greater",
                           "greater_equal",
                           "logical_and",
                           "logical_or",
                           "where",
                           "cast",
                           "clip",
                           "sum",
                           "mean",
                           "max",
                           "min",
                           "prod",
                           "argmax",
                           "argmin",
                           "variance",
                           "nn.conv2d",
                           "nn.dense",
                           "nn.matmul",
                           "nn.batch_matmul",
                           "nn.bias_add",
                           "nn.max_pool2d",
                           "nn.avg_pool2d",
                           "nn.global_avg_pool2d",
                           "nn.adaptive_avg_pool2d",
                           "nn.batch_norm",
                           "nn.layer_norm",
                           "nn.pad",
                           "nn.batch_flatten",
                           "nn.dropout",
                           "nn.leaky_relu",
                           "nn.softmax",
                           "nn.log_softmax",
                           "reshape",
                           "transpose",
                           "squeeze",
                           "expand_dims",
                           "concatenate",
                           "split",
                           "stack",
                           "strided_slice",
                           "take",
                           "broadcast_to",
                           "tile",
                           "repeat",
                           "zeros",
                           "ones",
                           "full",
                           "zeros_like",
                           "ones_like",
                           "full_like",
                           "arange",
                           "shape_of",
                           "image.resize2d",
                           "nn.upsampling",
                           "tan",
                           "asin",
                           "acos",
                           "atan",
                           "sinh",
                           "cosh"}) {
    EXPECT_NE(FindOperator(name), nullptr) << name;
  }
}

TEST(OperatorTable, InputNamesAndPatternsFollowRelay) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(FindOperator("add")->input_names, (Names{"lhs", "rhs"}));
  EXPECT_EQ(FindOperator("nn.conv2d")->input_names, (Names{"data", "weight"}));
  EXPECT_EQ(FindOperator("nn.batch_norm")->input_names,
            (Names{"data", "gamma", "beta", "moving_mean", "moving_var"}));
  EXPECT_EQ(FindOperator("nn.pad")->input_names, (Names{"data", "pad_value"}));
  EXPECT_EQ(FindOperator("variance")->input_names, (Names{"data", "mean"}));
  EXPECT_EQ(FindOperator("where")->input_names, (Names{"condition", "x", "y"}));
  EXPECT_EQ(FindOperator("zeros")->input_names, Names{});
  EXPECT_EQ(FindOperator("arange")->input_names.size(), 3u);

  EXPECT_EQ(FindOperator("exp")->pattern, FusionPattern::kElementwise);
  EXPECT_EQ(FindOperator("add")->pattern, FusionPattern::kBroadcast);
  EXPECT_EQ(FindOperator("expand_dims")->pattern, FusionPattern::kBroadcast);
  EXPECT_EQ(FindOperator("reshape")->pattern, FusionPattern::kInjective);
  EXPECT_EQ(FindOperator("sum")->pattern, FusionPattern::kCommReduce);
  EXPECT_EQ(FindOperator("nn.conv2d")->pattern, FusionPattern::kOutElementwiseFusable);
  EXPECT_EQ(FindOperator("nn.dense")->pattern, FusionPattern::kOutElementwiseFusable);
  EXPECT_EQ(FindOperator("nn.dropout")->pattern, FusionPattern::kOpaque);
  EXPECT_EQ(FindOperator("shape_of")->pattern, FusionPattern::kOpaque);
  EXPECT_EQ(FindOperator("arange")->pattern, FusionPattern::kOpaque);
}

TEST(OperatorTable, RelationChecksArity) {
  EXPECT_EQ(Error("add", {T({2})}), "expects 2 inputs, got 1");
  EXPECT_EQ(Error("exp", {T({2}), T({2})}), "expects 1 input, got 2");
}

TEST(OperatorTable, DuplicateDefinitionIsAnInternalError) {
  OperatorTableBuilder builder;
  auto relation = [](std::span<const RelationInput>, const Attrs&) { return T({}); };
  builder.Add({.name = "twice",
               .input_names = {},
               .attributes = {},
               .pattern = FusionPattern::kOpaque,
               .relation = relation,
               .summary = "first"});
  try {
    builder.Add({.name = "twice",
                 .input_names = {},
                 .attributes = {},
                 .pattern = FusionPattern::kOpaque,
                 .relation = relation,
                 .summary = "second"});
    FAIL() << "duplicate accepted";
  } catch (const relay::Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
    EXPECT_NE(error.message().find("'twice' is defined twice"), std::string::npos)
        << error.message();
  }
}

// ---- attributes ----------------------------------------------------------------------

TEST(Attributes, NormalizeFillsDefaultsInSchemaOrder) {
  Attrs attrs;
  ASSERT_FALSE(NormalizeAttrs(FindOperator("sum")->attributes,
                              {{"keepdims", AttrValue::Bool(true)}}, attrs));
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[0].first, "axis");
  EXPECT_TRUE(attrs[0].second.is_none());
  EXPECT_EQ(attrs[1], (std::pair<std::string, AttrValue>{"keepdims", AttrValue::Bool(true)}));
  EXPECT_EQ(attrs[2], (std::pair<std::string, AttrValue>{"exclude", AttrValue::Bool(false)}));
  EXPECT_TRUE(GetAttr(attrs, "keepdims").as_bool());
}

TEST(Attributes, CoercesIntToFloatAndZeroOneToBool) {
  Attrs attrs;
  ASSERT_FALSE(NormalizeAttrs(FindOperator("clip")->attributes,
                              {{"a_max", AttrValue::Int(6)}, {"a_min", AttrValue::Float(-1.5)}},
                              attrs));
  EXPECT_EQ(GetAttr(attrs, "a_max").kind(), AttrValue::Kind::kFloat);
  EXPECT_EQ(GetAttr(attrs, "a_max").as_float(), 6.0);
  EXPECT_EQ(attrs[0].first, "a_min");

  ASSERT_FALSE(NormalizeAttrs(FindOperator("reshape")->attributes,
                              {{"newshape", Ints({2, -1})}, {"allowzero", AttrValue::Int(1)}},
                              attrs));
  EXPECT_EQ(GetAttr(attrs, "allowzero"), AttrValue::Bool(true));
  EXPECT_EQ(GetAttr(attrs, "newshape").as_int_list(), (std::vector<int64_t>{2, -1}));
}

TEST(Attributes, RejectsWrongKindsUnknownAndMissing) {
  Attrs attrs;
  EXPECT_EQ(NormalizeAttrs(FindOperator("expand_dims")->attributes, {{"axis", Str("x")}}, attrs),
            "attribute 'axis' expects an integer, got \"x\"");
  EXPECT_EQ(NormalizeAttrs(FindOperator("sum")->attributes, {{"foo", AttrValue::Int(1)}}, attrs),
            "unknown attribute 'foo' (expected one of: axis, keepdims, exclude)");
  EXPECT_EQ(NormalizeAttrs(FindOperator("reshape")->attributes, {}, attrs),
            "missing required attribute 'newshape'");
  EXPECT_EQ(NormalizeAttrs(FindOperator("exp")->attributes, {{"axis", AttrValue::Int(1)}}, attrs),
            "unknown attribute 'axis' (the operator takes no attributes)");
  // A single integer is not a list: Relay spells lists.
  EXPECT_EQ(NormalizeAttrs(FindOperator("sum")->attributes, {{"axis", AttrValue::Int(1)}}, attrs),
            "attribute 'axis' expects a list of integers or None, got 1");
  EXPECT_EQ(NormalizeAttrs(FindOperator("transpose")->attributes,
                           {{"axes", AttrValue::List({AttrValue::Int(1), Str("a")})}}, attrs),
            "attribute 'axes' expects a list of integers or None, got [1, \"a\"]");
  EXPECT_EQ(NormalizeAttrs(FindOperator("cast")->attributes, {{"dtype", AttrValue()}}, attrs),
            "attribute 'dtype' expects a string, got None");
  EXPECT_EQ(NormalizeAttrs(FindOperator("nn.dropout")->attributes, {{"rate", Str("high")}}, attrs),
            "attribute 'rate' expects a number, got \"high\"");
  EXPECT_EQ(
      NormalizeAttrs(FindOperator("sum")->attributes, {{"keepdims", AttrValue::Int(2)}}, attrs),
      "attribute 'keepdims' expects a boolean, got 2");
  EXPECT_EQ(NormalizeAttrs(FindOperator("sum")->attributes,
                           {{"exclude", AttrValue::Bool(true)}, {"exclude", AttrValue::Bool(true)}},
                           attrs),
            "attribute 'exclude' is given twice");
}

TEST(Attributes, ValuesPrintAsRelayText) {
  EXPECT_EQ(AttrValue().ToString(), "None");
  EXPECT_EQ(AttrValue::Bool(true).ToString(), "True");
  EXPECT_EQ(AttrValue::Int(-3).ToString(), "-3");
  EXPECT_EQ(AttrValue::Float(1.5).ToString(), "1.5f");
  EXPECT_EQ(AttrValue::Float(1e-5).ToString(), "1e-05f");
  EXPECT_EQ(AttrValue::String("a\"b").ToString(), "\"a\\\"b\"");
  EXPECT_EQ(Ints({1, 2}).ToString(), "[1, 2]");
  EXPECT_EQ(AttrValue::List({}).ToString(), "[]");
  EXPECT_NE(AttrValue::Int(1), AttrValue::Float(1));
  EXPECT_EQ(AttrValue::Int(2).as_float(), 2.0);
}

TEST(Attributes, GetAttrOfAbsentNameIsInternal) {
  try {
    GetAttr({}, "axis");
    FAIL();
  } catch (const relay::Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInternal);
  }
}

TEST(ValueType, PrintsAsRelayTypes) {
  EXPECT_EQ(T({2, Q}).ToString(), "Tensor[(2, ?), float32]");
  EXPECT_EQ(T({}, DType::kBool).ToString(), "bool");
  EXPECT_EQ(ValueType::Tuple({T({1}, DType::kInt64)}).ToString(), "(Tensor[(1,), int64],)");
  EXPECT_EQ(ValueType::Tuple({T({1}), T({})}).ToString(), "(Tensor[(1,), float32], float32)");
  EXPECT_EQ(T({2}), T({2}));
  EXPECT_NE(T({2}), T({2}, DType::kInt32));
  EXPECT_NE(T({}), ValueType::Tuple({}));
}

// ---- elementwise ------------------------------------------------------------------------

TEST(Elementwise, ErrorMessagesNameShapesAndTypes) {
  EXPECT_EQ(Error("add", {T({2, 3}), T({4, 3})}),
            "operands of shapes (2, 3) and (4, 3) cannot be broadcast");
  EXPECT_EQ(Error("add", {T({2, 3}), T({2, 3}, DType::kInt32)}),
            "Tensor[(2, 3), float32] and Tensor[(2, 3), int32] have different dtypes");
  EXPECT_EQ(Error("exp", {T({2}, DType::kInt32)}),
            "input 'data' must have a floating-point dtype, got Tensor[(2,), int32]");
  EXPECT_EQ(Error("logical_and", {T({2}), T({2})}),
            "input 'lhs' must have dtype bool, got Tensor[(2,), float32]");
  EXPECT_EQ(Error("where", {T({3}, DType::kBool), T({2, 1}), T({4})}),
            "condition, x and y of shapes (3,), (2, 1) and (4,) cannot be broadcast");
  EXPECT_NE(Error("add", {ValueType::Tuple({T({2})}), T({2})}).find("must be a tensor"),
            std::string::npos);
}

TEST(Elementwise, OutputDTypes) {
  EXPECT_EQ(Type("less", {T({2, 1}), T({3})}), T({2, 3}, DType::kBool));
  EXPECT_EQ(Type("isnan", {T({4}, DType::kFloat16)}), T({4}, DType::kBool));
  EXPECT_EQ(Type("floor", {T({4}, DType::kInt32)}), T({4}, DType::kInt32));
  EXPECT_EQ(Type("cast", {T({2, 3})}, {{"dtype", Str("int8")}}), T({2, 3}, DType::kInt8));
  EXPECT_EQ(Error("cast", {T({2})}, {{"dtype", Str("float33")}}),
            "attribute 'dtype' names an unknown dtype \"float33\"");
  EXPECT_EQ(Type("cast_like", {T({2}), T({5}, DType::kInt64)}), T({2}, DType::kInt64));
  EXPECT_EQ(Type("clip", {T({2, 2})}, {{"a_min", AttrValue::Int(0)}, {"a_max", AttrValue::Int(6)}}),
            T({2, 2}));
  EXPECT_EQ(Type("logical_not", {T({3}, DType::kBool)}), T({3}, DType::kBool));
  EXPECT_NE(Error("negative", {T({3}, DType::kBool)}).find("numeric"), std::string::npos);
}

TEST(Elementwise, UnknownDimensionsFollowGradualBroadcasting) {
  EXPECT_EQ(Type("add", {T({Q, 3}), T({1, 3})}), T({Q, 3}));
  EXPECT_EQ(Type("add", {T({Q}), T({5})}), T({5}));
  EXPECT_EQ(Type("add", {T({1}), T({Q})}), T({Q}));
  EXPECT_EQ(Type("add", {T({Q}), T({Q})}), T({Q}));
  EXPECT_EQ(Type("multiply", {T({Q, 1}), T({4, Q, 7})}), T({4, Q, 7}));
  EXPECT_EQ(Error("add", {T({Q, 2}), T({3})}),
            "operands of shapes (?, 2) and (3,) cannot be broadcast");
  EXPECT_EQ(Type("where", {T({Q}, DType::kBool), T({1}), T({3})}), T({3}));
}

// ---- reductions --------------------------------------------------------------------------

TEST(Reduction, AxesKeepdimsExclude) {
  EXPECT_EQ(Type("sum", {T({2, 3, 4})}, {{"axis", Ints({-1})}}), T({2, 3}));
  EXPECT_EQ(
      Type("mean", {T({2, 3, 4})}, {{"axis", Ints({1})}, {"keepdims", AttrValue::Bool(true)}}),
      T({2, 1, 4}));
  EXPECT_EQ(Type("max", {T({2, 3, 4})}, {{"axis", Ints({1})}, {"exclude", AttrValue::Bool(true)}}),
            T({3}));
  EXPECT_EQ(Type("argmax", {T({Q, 5})}, {{"axis", Ints({1})}}), T({Q}, DType::kInt32));
  EXPECT_EQ(Type("argmin", {T({2, 5})}), T({}, DType::kInt32));
  EXPECT_EQ(Error("sum", {T({2, 3})}, {{"axis", Ints({2})}}),
            "axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)");
  EXPECT_EQ(Error("sum", {T({2, 3})}, {{"axis", Ints({1, -1})}}), "axis -1 is given twice (as 1)");
  EXPECT_NE(Error("all", {T({2})}).find("must have dtype bool"), std::string::npos);
}

TEST(Reduction, VarianceTakesDataAndMean) {
  const Attrs attrs = {{"axis", Ints({1})}, {"unbiased", AttrValue::Bool(true)}};
  EXPECT_EQ(Type("variance", {T({4, 6}), T({4, 1})}, attrs), T({4}));
  EXPECT_EQ(Type("std", {T({4, 6}), T({4, 1})}, attrs), T({4}));
  EXPECT_NE(Error("variance", {T({4, 6}), T({4})}, attrs).find("rank"), std::string::npos);
  EXPECT_NE(Error("variance", {T({4, 6}), T({4, 3})}, attrs).find("does not broadcast"),
            std::string::npos);
}

// ---- neural network -------------------------------------------------------------------

// Expected spatial sizes below use
//   out = floor((in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride) + 1.
TEST(NeuralNetwork, Conv2DOutputShapes) {
  // 224 + 3 + 3 - 6 - 1 = 223, / 2 = 111, + 1 = 112.
  EXPECT_EQ(Type("nn.conv2d", {T({1, 3, 224, 224}), T({64, 3, 7, 7})},
                 {{"strides", Ints({2, 2})}, {"padding", Ints({3, 3})}}),
            T({1, 64, 112, 112}));
  // Dilation 2, kernel 3: effective 5; (32 + 2 - 5) / 1 + 1 = 30.
  EXPECT_EQ(Type("nn.conv2d", {T({2, 8, 32, 32}), T({16, 8, 3, 3})},
                 {{"dilation", Ints({2, 2})}, {"padding", Ints({1})}}),
            T({2, 16, 30, 30}));
  // Asymmetric padding [top, left, bottom, right]: H (10 + 0 + 2 - 3) / 3 + 1 = 4,
  // W (9 + 1 + 0 - 3) / 3 + 1 = 3.
  EXPECT_EQ(Type("nn.conv2d", {T({1, 4, 10, 9}), T({6, 4, 3, 3})},
                 {{"strides", Ints({3, 3})}, {"padding", Ints({0, 1, 2, 0})}}),
            T({1, 6, 4, 3}));
  // Depthwise: groups = channels, weight (C * multiplier, 1, kh, kw).
  EXPECT_EQ(Type("nn.conv2d", {T({1, 32, 14, 14}), T({64, 1, 3, 3})},
                 {{"groups", AttrValue::Int(32)}, {"padding", Ints({1, 1})}}),
            T({1, 64, 14, 14}));
  // NHWC data with HWIO kernel.
  EXPECT_EQ(Type("nn.conv2d", {T({1, 28, 28, 3}), T({5, 5, 3, 10})},
                 {{"data_layout", Str("NHWC")}, {"kernel_layout", Str("HWIO")}}),
            T({1, 24, 24, 10}));
  // out_layout and out_dtype.
  EXPECT_EQ(Type("nn.conv2d", {T({1, 3, 8, 8}, DType::kInt8), T({4, 3, 1, 1}, DType::kInt8)},
                 {{"out_layout", Str("NHWC")}, {"out_dtype", Str("int32")}}),
            T({1, 8, 8, 4}, DType::kInt32));
  // Unknown batch and height stay unknown; width is computed.
  EXPECT_EQ(Type("nn.conv2d", {T({Q, 3, Q, 16}), T({8, 3, 3, 3})}), T({Q, 8, Q, 14}));
  // channels/kernel_size fill in an unknown weight dimension.
  EXPECT_EQ(Type("nn.conv2d", {T({1, 3, 8, 8}), T({Q, 3, Q, Q})},
                 {{"channels", AttrValue::Int(5)}, {"kernel_size", Ints({3, 3})}}),
            T({1, 5, 6, 6}));
}

TEST(NeuralNetwork, Conv2DErrors) {
  EXPECT_EQ(Error("nn.conv2d", {T({1, 3, 8, 8}), T({4, 2, 3, 3})}),
            "'data' has 3 channels but 'weight' expects 2 per group with groups=1");
  EXPECT_EQ(
      Error("nn.conv2d", {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, {{"channels", AttrValue::Int(5)}}),
      "the weight's output channels differ from attribute 'channels': 4 vs 5");
  EXPECT_NE(Error("nn.conv2d", {T({1, 3, 2, 2}), T({4, 3, 3, 3})}).find("larger than the padded"),
            std::string::npos);
  EXPECT_NE(
      Error("nn.conv2d", {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, {{"data_layout", Str("NCHW16c")}})
          .find("expected an arrangement of N, C, H, W"),
      std::string::npos);
  EXPECT_NE(Error("nn.conv2d", {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, {{"strides", Ints({0, 1})}})
                .find(">= 1"),
            std::string::npos);
  EXPECT_NE(Error("nn.conv2d", {T({1, 3, 8}), T({4, 3, 3, 3})}).find("rank 4"), std::string::npos);
}

TEST(NeuralNetwork, Conv2DTransposeOutputShape) {
  // (8 - 1) * 2 - (1 + 1) + 1 * (4 - 1) + 0 + 1 = 16.
  EXPECT_EQ(Type("nn.conv2d_transpose", {T({1, 16, 8, 8}), T({16, 8, 4, 4})},
                 {{"strides", Ints({2, 2})}, {"padding", Ints({1, 1})}}),
            T({1, 8, 16, 16}));
  // output_padding adds to one side: (5 - 1) * 2 - 0 + 2 + 1 + 1 = 12.
  EXPECT_EQ(Type("nn.conv2d_transpose", {T({1, 4, 5, 5}), T({4, 2, 3, 3})},
                 {{"strides", Ints({2, 2})}, {"output_padding", Ints({1, 1})}}),
            T({1, 2, 12, 12}));
}

TEST(NeuralNetwork, PoolOutputShapes) {
  // ResNet stem: (112 + 2 - 3) / 2 + 1 = 56.
  EXPECT_EQ(
      Type("nn.max_pool2d", {T({1, 64, 112, 112})},
           {{"pool_size", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"padding", Ints({1, 1})}}),
      T({1, 64, 56, 56}));
  // floor((6 - 3) / 2) + 1 = 2 but ceil((6 - 3) / 2) + 1 = 3.
  const Attrs pool = {{"pool_size", Ints({3, 3})}, {"strides", Ints({2, 2})}};
  EXPECT_EQ(Type("nn.max_pool2d", {T({1, 1, 6, 7})}, pool), T({1, 1, 2, 3}));
  Attrs ceil_pool = pool;
  ceil_pool.emplace_back("ceil_mode", AttrValue::Bool(true));
  EXPECT_EQ(Type("nn.avg_pool2d", {T({1, 1, 6, 7})}, ceil_pool), T({1, 1, 3, 3}));
  EXPECT_EQ(Type("nn.avg_pool2d", {T({2, 9, 9, 5})},
                 {{"pool_size", Ints({2})},
                  {"strides", Ints({2})},
                  {"layout", Str("NHWC")},
                  {"count_include_pad", AttrValue::Bool(true)}}),
            T({2, 4, 4, 5}));
  EXPECT_EQ(Type("nn.global_avg_pool2d", {T({Q, 2048, 7, 7})}), T({Q, 2048, 1, 1}));
  EXPECT_EQ(Type("nn.global_max_pool2d", {T({1, 7, 7, 8})}, {{"layout", Str("NHWC")}}),
            T({1, 1, 1, 8}));
  EXPECT_EQ(Type("nn.adaptive_avg_pool2d", {T({1, 512, 13, 9})}, {{"output_size", Ints({7})}}),
            T({1, 512, 7, 7}));
  EXPECT_EQ(Type("nn.adaptive_avg_pool2d", {T({1, 3, 13, 9})}), T({1, 3, 13, 9}));
  Attrs normalized;
  EXPECT_EQ(NormalizeAttrs(FindOperator("nn.max_pool2d")->attributes, {}, normalized),
            "missing required attribute 'pool_size'");
}

TEST(NeuralNetwork, DenseMatmulBatchMatmul) {
  EXPECT_EQ(Type("nn.dense", {T({4, 8}), T({16, 8})}), T({4, 16}));
  EXPECT_EQ(Type("nn.dense", {T({2, Q, 8}), T({16, 8})}, {{"units", AttrValue::Int(16)}}),
            T({2, Q, 16}));
  EXPECT_EQ(Type("nn.dense", {T({4, 8}, DType::kInt8), T({16, 8}, DType::kInt8)},
                 {{"out_dtype", Str("int32")}}),
            T({4, 16}, DType::kInt32));
  EXPECT_EQ(Error("nn.dense", {T({4, 8}), T({16, 7})}),
            "'data' Tensor[(4, 8), float32] and 'weight' Tensor[(16, 7), float32] disagree on "
            "the reduction dimension: 8 vs 7");
  EXPECT_EQ(Error("nn.dense", {T({4, 8}), T({16, 8})}, {{"units", AttrValue::Int(3)}}),
            "attribute 'units' differs from the weight's units: 16 vs 3");

  EXPECT_EQ(Type("nn.matmul", {T({4, 8}), T({8, 16})}), T({4, 16}));
  EXPECT_EQ(Type("nn.matmul", {T({3, 8, 4}), T({16, 8})},
                 {{"transpose_a", AttrValue::Bool(true)}, {"transpose_b", AttrValue::Bool(true)}}),
            T({3, 4, 16}));

  EXPECT_EQ(Type("nn.batch_matmul", {T({5, 4, 8}), T({5, 16, 8})}), T({5, 4, 16}));
  EXPECT_EQ(Type("nn.batch_matmul", {T({1, 4, 8}), T({5, 8, 16})},
                 {{"transpose_b", AttrValue::Bool(false)}}),
            T({5, 4, 16}));
  EXPECT_EQ(Type("nn.batch_matmul", {T({Q, 8, 4}), T({Q, 16, 8})},
                 {{"transpose_a", AttrValue::Bool(true)}}),
            T({Q, 4, 16}));
  EXPECT_NE(Error("nn.batch_matmul", {T({2, 4, 8}), T({3, 16, 8})}).find("batch dimensions"),
            std::string::npos);
  EXPECT_NE(Error("nn.batch_matmul", {T({2, 4, 8}), T({2, 16, 7})}).find("8 vs 7"),
            std::string::npos);
}

TEST(NeuralNetwork, NormalisationAndActivations) {
  const ValueType vector = T({16});
  EXPECT_EQ(Type("nn.batch_norm", {T({2, 16, 5, 5}), vector, vector, vector, vector}),
            ValueType::Tuple({T({2, 16, 5, 5}), T({16}), T({16})}));
  EXPECT_EQ(Type("nn.batch_norm", {T({2, Q}), vector, vector, vector, vector}),
            ValueType::Tuple({T({2, Q}), T({16}), T({16})}));
  EXPECT_EQ(Error("nn.batch_norm", {T({2, 16, 5, 5}), vector, T({15}), vector, vector}),
            "input 'beta' Tensor[(15,), float32] must have length 16 to match axis 1 of 'data' "
            "Tensor[(2, 16, 5, 5), float32]");
  EXPECT_EQ(Type("nn.layer_norm", {T({2, 7, 32}), T({32}), T({32})}), T({2, 7, 32}));
  EXPECT_EQ(
      Type("nn.group_norm", {T({2, 8, 4, 4}), T({8}), T({8})}, {{"num_groups", AttrValue::Int(4)}}),
      T({2, 8, 4, 4}));
  EXPECT_NE(
      Error("nn.group_norm", {T({2, 8, 4, 4}), T({8}), T({8})}, {{"num_groups", AttrValue::Int(3)}})
          .find("num_groups=3"),
      std::string::npos);
  EXPECT_EQ(Type("nn.bias_add", {T({2, 3, 4}), T({4})}, {{"axis", AttrValue::Int(-1)}}),
            T({2, 3, 4}));
  EXPECT_EQ(Error("nn.softmax", {T({2, 3})}, {{"axis", AttrValue::Int(2)}}),
            "axis 2 is out of range for a tensor of rank 2 (expected -2 <= axis < 2)");
  EXPECT_EQ(Error("nn.softmax", {T({2, 3}, DType::kInt32)}),
            "input 'data' must have a floating-point dtype, got Tensor[(2, 3), int32]");
  EXPECT_EQ(Type("nn.log_softmax", {T({2, 3})}), T({2, 3}));
  EXPECT_EQ(Type("nn.leaky_relu", {T({3})}, {{"alpha", AttrValue::Float(0.2)}}), T({3}));
  EXPECT_EQ(Type("nn.prelu", {T({1, 3, 2, 2}), T({3})}), T({1, 3, 2, 2}));
  EXPECT_EQ(Type("nn.relu", {T({Q, 3})}), T({Q, 3}));
  EXPECT_EQ(Type("nn.dropout", {T({4, 5})}), ValueType::Tuple({T({4, 5}), T({4, 5})}));
}

TEST(NeuralNetwork, PadAndBatchFlatten) {
  const AttrValue widths = AttrValue::List({Ints({0, 0}), Ints({1, 2}), Ints({3, 0})});
  EXPECT_EQ(Type("nn.pad", {T({2, 3, 4}), T({}, DType::kInt32)}, {{"pad_width", widths}}),
            T({2, 6, 7}));
  EXPECT_EQ(
      Type("nn.pad", {T({Q, 3, 4}), T({})}, {{"pad_width", widths}, {"pad_mode", Str("edge")}}),
      T({Q, 6, 7}));
  EXPECT_EQ(Error("nn.pad", {T({2, 3}), T({})}, {{"pad_width", widths}}),
            "attribute 'pad_width' has 3 pairs but 'data' has rank 2");
  EXPECT_NE(Error("nn.pad", {T({2, 3, 4}), T({})}, {{"pad_width", Ints({1, 2})}})
                .find("pairs of integers"),
            std::string::npos);
  EXPECT_NE(Error("nn.pad", {T({2, 3, 4}), T({1})}, {{"pad_width", widths}}).find("rank 0"),
            std::string::npos);
  EXPECT_NE(
      Error("nn.pad", {T({2, 3, 4}), T({})}, {{"pad_width", widths}, {"pad_mode", Str("wrap")}})
          .find("expected one of"),
      std::string::npos);
  EXPECT_EQ(Type("nn.batch_flatten", {T({Q, 2, 3, 4})}), T({Q, 24}));
  EXPECT_EQ(Type("nn.batch_flatten", {T({5, 2, Q})}), T({5, Q}));
}

// ---- transforms and creation -----------------------------------------------------------

TEST(Transform, UnknownDimensionsPropagate) {
  EXPECT_EQ(Type("reshape", {T({Q, 4})}, {{"newshape", Ints({-1, 2})}}), T({Q, 2}));
  EXPECT_EQ(Type("reshape", {T({Q, 4})}, {{"newshape", Ints({0, 2, 2})}}), T({Q, 2, 2}));
  EXPECT_EQ(Type("reshape", {T({Q, 6})}, {{"newshape", Ints({0, -4, -1, 3})}}), T({Q, 2, 3}));
  EXPECT_EQ(Type("concatenate", {ValueType::Tuple({T({Q, 3}), T({2, Q})})},
                 {{"axis", AttrValue::Int(1)}}),
            T({2, Q}));
  EXPECT_EQ(Type("concatenate", {ValueType::Tuple({T({2, 3}), T({4, 3})})}), T({6, 3}));
  EXPECT_EQ(Type("split", {T({Q, 6})}, {{"indices_or_sections", AttrValue::Int(2)}}),
            ValueType::Tuple({T({Q, 6}), T({Q, 6})}));
  EXPECT_EQ(Type("split", {T({Q, 6})},
                 {{"indices_or_sections", AttrValue::Int(3)}, {"axis", AttrValue::Int(0)}}),
            ValueType::Tuple({T({Q, 6}), T({Q, 6}), T({Q, 6})}));
  EXPECT_EQ(Type("split", {T({Q})}, {{"indices_or_sections", Ints({2})}}),
            ValueType::Tuple({T({2}), T({Q})}));
  EXPECT_EQ(Type("strided_slice", {T({Q, 10})},
                 {{"begin", Ints({0, 2})}, {"end", Ints({5, 8})}, {"strides", Ints({1, 3})}}),
            T({Q, 2}));
  EXPECT_EQ(Type("take", {T({Q, 7}), T({3, Q}, DType::kInt64)}, {{"axis", AttrValue::Int(1)}}),
            T({Q, 3, Q}));
  EXPECT_EQ(Type("transpose", {T({Q, 2, 3})}), T({3, 2, Q}));
  EXPECT_EQ(Type("squeeze", {T({Q, 1})}, {{"axis", Ints({0})}}), T({1}));
  EXPECT_NE(Error("squeeze", {T({Q, 1})}).find("needs every dimension known"), std::string::npos);
  EXPECT_EQ(Type("broadcast_to", {T({Q, 1})}, {{"shape", Ints({4, 5})}}), T({4, 5}));
  EXPECT_EQ(
      Type("stack", {ValueType::Tuple({T({Q, 2}), T({3, Q})})}, {{"axis", AttrValue::Int(-1)}}),
      T({3, 2, 2}));
  EXPECT_EQ(Type("tile", {T({Q, 2})}, {{"reps", Ints({2, 2})}}), T({Q, 4}));
  EXPECT_EQ(
      Type("repeat", {T({Q, 2})}, {{"repeats", AttrValue::Int(3)}, {"axis", AttrValue::Int(1)}}),
      T({Q, 6}));
}

TEST(Transform, ReshapeMessagesAndSpecialValues) {
  EXPECT_EQ(Error("reshape", {T({2, 3})}, {{"newshape", Ints({4, 2})}}),
            "cannot reshape a tensor of shape (2, 3) (6 elements) to shape (4, 2) (8 elements)");
  EXPECT_NE(Error("reshape", {T({2, 3})}, {{"newshape", Ints({-1, -1})}}).find("more than one -1"),
            std::string::npos);
  EXPECT_NE(Error("reshape", {T({2, 3})}, {{"newshape", Ints({-5})}}).find("unsupported value -5"),
            std::string::npos);
  // allowzero makes 0 a literal zero-size dimension.
  EXPECT_EQ(Type("reshape", {T({0, 3})},
                 {{"newshape", Ints({3, 0})}, {"allowzero", AttrValue::Bool(true)}}),
            T({3, 0}));
  EXPECT_EQ(Type("reshape", {T({2, 3, 4})}, {{"newshape", Ints({4, 0, 2})}}), T({4, 3, 2}));
  EXPECT_NE(Error("reshape", {T({2, 3})}, {{"newshape", Ints({3, 0})}}).find("(3, 3)"),
            std::string::npos);
  EXPECT_EQ(Type("reshape_like", {T({1, 2, 3, 4}), T({6, 2, 2, 3})},
                 {{"lhs_begin", AttrValue::Int(1)}, {"rhs_end", AttrValue::Int(3)}}),
            T({1, 6, 2, 2}));
}

TEST(Transform, SliceSplitTakeDetails) {
  EXPECT_EQ(Type("strided_slice", {T({4, 10})},
                 {{"begin", Ints({1, 2})}, {"end", Ints({2, 3})}, {"slice_mode", Str("size")}}),
            T({2, 3}));
  EXPECT_EQ(Type("strided_slice", {T({4, 10})},
                 {{"begin", Ints({1})}, {"end", Ints({-1})}, {"slice_mode", Str("size")}}),
            T({3, 10}));
  EXPECT_EQ(
      Type(
          "strided_slice", {T({4, 10})},
          {{"begin", Ints({8})}, {"end", Ints({0})}, {"strides", Ints({-3})}, {"axes", Ints({1})}}),
      T({4, 3}));
  EXPECT_NE(Error("strided_slice", {T({4})}, {{"begin", Ints({3})}, {"end", Ints({1})}})
                .find("run against stride 1"),
            std::string::npos);
  EXPECT_EQ(Error("strided_slice", {T({4})},
                  {{"begin", Ints({0})}, {"end", Ints({1})}, {"strides", Ints({0})}}),
            "attribute 'strides' must not contain 0");
  EXPECT_NE(Error("split", {T({6})}, {{"indices_or_sections", Ints({0, 3})}}).find("increasing"),
            std::string::npos);
  EXPECT_NE(Error("split", {T({6})}, {{"indices_or_sections", Str("3")}})
                .find("an integer or a list of integers"),
            std::string::npos);
  EXPECT_EQ(Type("take", {T({4, 5, 6}), T({4, 7}, DType::kInt32)},
                 {{"axis", AttrValue::Int(1)}, {"batch_dims", AttrValue::Int(1)}}),
            T({4, 7, 6}));
  EXPECT_NE(Error("take", {T({4}), T({2})}).find("integer dtype"), std::string::npos);
  EXPECT_EQ(Type("gather", {T({3, 4}), T({3, 2}, DType::kInt64)}, {{"axis", AttrValue::Int(1)}}),
            T({3, 2}));
  EXPECT_EQ(Error("broadcast_to", {T({3, 1})}, {{"shape", Ints({1, 4})}}),
            "a tensor of shape (3, 1) cannot be broadcast to shape (1, 4)");
  EXPECT_EQ(Error("broadcast_to", {T({3})}, {{"shape", Ints({4})}}),
            "a tensor of shape (3,) cannot be broadcast to shape (4,)");
  EXPECT_EQ(Error("broadcast_to", {T({2, 3})}, {{"shape", Ints({3})}}),
            "a tensor of shape (2, 3) cannot be broadcast to shape (3,)");
  EXPECT_EQ(Type("collapse_sum_like", {T({4, 3}), T({3})}), T({3}));
  EXPECT_EQ(Type("expand_dims", {T({2})},
                 {{"axis", AttrValue::Int(-1)}, {"num_newaxis", AttrValue::Int(2)}}),
            T({2, 1, 1}));
}

Ref<Tensor> Scalar(DType dtype, double value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  switch (dtype) {
    case DType::kFloat32:
      *tensor->data<float>() = static_cast<float>(value);
      break;
    case DType::kInt32:
      *tensor->data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kFloat16:
      *tensor->data<Float16>() = Float16(static_cast<float>(value));
      break;
    default:
      ADD_FAILURE() << "unsupported dtype in test";
  }
  return tensor;
}

TEST(Creation, InitOperators) {
  EXPECT_EQ(Type("zeros", {}, {{"shape", Ints({2, 3})}}), T({2, 3}));
  EXPECT_EQ(Type("ones", {}, {{"shape", Ints({})}, {"dtype", Str("int64")}}), T({}, DType::kInt64));
  EXPECT_NE(Error("zeros", {}, {{"shape", Ints({2, -1})}}).find("negative dimension"),
            std::string::npos);
  EXPECT_EQ(Type("full", {T({}, DType::kInt32)}, {{"shape", Ints({4})}}), T({4}, DType::kInt32));
  EXPECT_EQ(Type("full", {T({})}, {{"shape", Ints({4})}, {"dtype", Str("float16")}}),
            T({4}, DType::kFloat16));
  EXPECT_NE(Error("full", {T({1})}, {{"shape", Ints({4})}}).find("rank 0"), std::string::npos);
  EXPECT_EQ(Type("zeros_like", {T({Q, 2}, DType::kInt8)}), T({Q, 2}, DType::kInt8));
  EXPECT_EQ(Type("full_like", {T({3}), T({})}), T({3}));
  EXPECT_EQ(Type("shape_of", {T({Q, 2, 3})}), T({3}, DType::kInt32));
  EXPECT_EQ(Type("shape_of", {T({})}, {{"dtype", Str("int64")}}), T({0}, DType::kInt64));
  EXPECT_NE(Error("shape_of", {T({2})}, {{"dtype", Str("float32")}}).find("integer dtype"),
            std::string::npos);
  EXPECT_EQ(Type("ndarray_size", {T({2, 3})}), T({}, DType::kInt32));
}

TEST(Creation, ArangeLengthIsKnownOnlyForConstants) {
  const std::vector<ValueType> scalars = {T({}), T({}), T({})};
  EXPECT_EQ(Type("arange", scalars), T({Q}));
  const Ref<Tensor> start = Scalar(DType::kFloat32, 0);
  const Ref<Tensor> stop = Scalar(DType::kFloat32, 10);
  const Ref<Tensor> step = Scalar(DType::kFloat32, 3);
  // ceil((10 - 0) / 3) = 4, as np.arange(0, 10, 3).
  EXPECT_EQ(Infer("arange", scalars, {}, {start.get(), stop.get(), step.get()}).type, T({4}));
  // Only two constants: unknown.
  EXPECT_EQ(Infer("arange", scalars, {}, {start.get(), nullptr, step.get()}).type, T({Q}));
  // Empty range: ceil((0 - 10) / 3) < 0 gives 0, as np.arange(10, 0, 3).
  EXPECT_EQ(Infer("arange", scalars, {}, {stop.get(), start.get(), step.get()}).type, T({0}));
  const Ref<Tensor> half = Scalar(DType::kFloat16, 0.5);
  const std::vector<ValueType> halves = {T({}, DType::kFloat16), T({}, DType::kFloat16),
                                         T({}, DType::kFloat16)};
  const Ref<Tensor> two = Scalar(DType::kFloat16, 2);
  const Ref<Tensor> zero = Scalar(DType::kFloat16, 0);
  // np.arange(0, 2, 0.5) has 4 elements.
  EXPECT_EQ(
      Infer("arange", halves, {{"dtype", Str("float16")}}, {zero.get(), two.get(), half.get()})
          .type,
      T({4}, DType::kFloat16));
  const Ref<Tensor> zero_step = Scalar(DType::kFloat32, 0);
  EXPECT_EQ(Infer("arange", scalars, {}, {start.get(), stop.get(), zero_step.get()}).error,
            "arange's step must not be 0");
  EXPECT_EQ(Error("arange", {T({}, DType::kInt32), T({}), T({})}),
            "input 'start' must be a scalar of dtype float32 (the 'dtype' attribute), got "
            "int32");
}

TEST(Transform, HostileAttributesGiveErrorsNotCrashes) {
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();
  EXPECT_NE(Error("expand_dims", {T({2})},
                  {{"axis", AttrValue::Int(0)}, {"num_newaxis", AttrValue::Int(kHuge)}})
                .find("num_newaxis"),
            std::string::npos);
  EXPECT_NE(Error("split", {T({Q})}, {{"indices_or_sections", AttrValue::Int(kHuge)}})
                .find("indices_or_sections"),
            std::string::npos);
  EXPECT_NE(Error("nn.conv2d", {T({1, 3, 8, 8}), T({4, 3, 3, 3})}, {{"dilation", Ints({kHuge, 1})}})
                .find("too large"),
            std::string::npos);
  EXPECT_NE(Error("nn.max_pool2d", {T({1, 3, 8, 8})},
                  {{"pool_size", Ints({2, 2})}, {"padding", Ints({kHuge})}})
                .find("too large"),
            std::string::npos);
  EXPECT_NE(Error("reshape", {T({6})}, {{"newshape", Ints({-4, kHuge, 2})}}).find("split"),
            std::string::npos);
  EXPECT_EQ(Type("strided_slice", {T({10})},
                 {{"begin", Ints({3})}, {"end", Ints({kHuge})}, {"slice_mode", Str("size")}}),
            T({7}));
  EXPECT_NE(Error("tile", {T({kHuge / 2})}, {{"reps", Ints({3})}}).find("too large"),
            std::string::npos);
}

// ---- image -------------------------------------------------------------------------------

TEST(Image, Resize2D) {
  EXPECT_EQ(Type("image.resize2d", {T({1, 3, 32, 48})}, {{"size", Ints({64, 96})}}),
            T({1, 3, 64, 96}));
  EXPECT_EQ(Type("image.resize2d", {T({Q, 32, 48, 3}, DType::kUInt8)},
                 {{"size", Ints({16, 16})},
                  {"layout", Str("NHWC")},
                  {"method", Str("nearest_neighbor")},
                  {"out_dtype", Str("float32")}}),
            T({Q, 16, 16, 3}));
  EXPECT_NE(
      Error("image.resize2d", {T({1, 3, 8, 8})}, {{"size", Ints({4, 4})}, {"method", Str("cubic")}})
          .find("expected one of"),
      std::string::npos);
  EXPECT_NE(
      Error("image.resize2d", {T({1, 3, 8, 8})}, {{"size", Ints({4})}}).find("[height, width]"),
      std::string::npos);
  EXPECT_NE(
      Error("image.resize2d", {T({1, 3, 8, 8})}, {{"size", Ints({4, 4})}, {"roi", Ints({0, 0})}})
          .find("4 numbers"),
      std::string::npos);
}

// Its output follows an input whose height and width are only known at run
// time: the ONNX importer's Resize of such data.
TEST(Image, Upsampling) {
  const auto scales = [](double h, double w) {
    return Attrs{{"scale_h", AttrValue::Float(h)}, {"scale_w", AttrValue::Float(w)}};
  };
  EXPECT_EQ(Type("nn.upsampling", {T({1, 3, 5, 4})}, scales(2, 1.5)), T({1, 3, 10, 6}));
  EXPECT_EQ(Type("nn.upsampling", {T({Q, 3, Q, Q})}, scales(2, 2)), T({Q, 3, Q, Q}));
  Attrs nhwc = scales(3, 0.5);
  nhwc.emplace_back("layout", Str("NHWC"));
  nhwc.emplace_back("method", Str("bilinear"));
  EXPECT_EQ(Type("nn.upsampling", {T({2, 4, 8, 3})}, nhwc), T({2, 12, 4, 3}));
  EXPECT_NE(Error("nn.upsampling", {T({1, 3, 8, 8})}, scales(0, 2)).find("must be positive"),
            std::string::npos);
  Attrs cubic = scales(2, 2);
  cubic.emplace_back("method", Str("bicubic"));
  EXPECT_NE(Error("nn.upsampling", {T({1, 3, 8, 8})}, cubic).find("expected one of"),
            std::string::npos);
}

}  // namespace
}  // namespace relay::kernels
