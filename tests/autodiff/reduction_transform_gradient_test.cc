// Gradients of the reductions and of the data-movement and creation
// operators against finite differences, at shapes and attributes drawn from
// seeded generators; and the forward values of slice_scatter and
// scatter_add (the adjoints those gradients use) against plain loops.
//
// Each program multiplies the operator's result by a random weight tensor
// %c, so that every output element's gradient differs and a rule that sends
// one to the wrong input element fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "compiler/passes/gradient.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/autodiff/gradient_check.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::testing {
namespace {

using Shape = std::vector<int64_t>;

// ---- building programs -----------------------------------------------------------------------

int64_t Draw(std::mt19937& random, int64_t low, int64_t high) {  // inclusive
  return std::uniform_int_distribution<int64_t>(low, high)(random);
}

bool Coin(std::mt19937& random) {
  return Draw(random, 0, 1) == 1;
}

Shape RandomShape(std::mt19937& random, size_t rank, int64_t low, int64_t high) {
  Shape shape;
  for (size_t axis = 0; axis < rank; ++axis) shape.push_back(Draw(random, low, high));
  return shape;
}

int64_t CountOf(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

// Relay's spelling: "(2, 3)", "(5,)", "()".
std::string DimsText(const Shape& shape, const std::vector<bool>& unknown = {}) {
  std::string text = "(";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    text += axis < unknown.size() && unknown[axis] ? "?" : std::to_string(shape[axis]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

// The float64 tensor type of `shape`, with `?` where `unknown` says.
std::string TypeText(const Shape& shape, const std::vector<bool>& unknown = {},
                     const char* dtype = "float64") {
  if (shape.empty()) return dtype;
  return "Tensor[" + DimsText(shape, unknown) + ", " + dtype + "]";
}

std::string ListText(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t index = 0; index < values.size(); ++index) {
    if (index > 0) text += ", ";
    text += std::to_string(values[index]);
  }
  return text + "]";
}

// `axis` of a rank-`rank` tensor, spelled from the end half the time.
int64_t MaybeNegative(std::mt19937& random, int64_t axis, int64_t rank) {
  return Coin(random) ? axis - rank : axis;
}

// d/dx sum(call(x) * c), with x of `input` and c of `output` (the call's
// result shape). `x_type` overrides x's declared type (to give it `?`).
void CheckWeighted(const std::string& call, const Value& x, const Shape& input, const Shape& output,
                   std::mt19937& random, const std::string& x_type = "") {
  SCOPED_TRACE(call + " of x" + DimsText(input));
  std::string program = "def @main(%x: " + (x_type.empty() ? TypeText(input) : x_type) +
                        ", %c: " + TypeText(output) + ") {\n  multiply(" + call + ", %c)\n}\n";
  CheckGradient(program, {x, RandomTensor(output, random)});
}

Value IntTensor(const Shape& shape, const std::vector<int64_t>& values,
                DType dtype = DType::kInt64) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, dtype);
  EXPECT_EQ(static_cast<int64_t>(values.size()), tensor->element_count());
  for (size_t index = 0; index < values.size(); ++index) {
    if (dtype == DType::kInt64) {
      tensor->data<int64_t>()[index] = values[index];
    } else {
      tensor->data<int32_t>()[index] = static_cast<int32_t>(values[index]);
    }
  }
  return tensor;
}

// Distinct values, at least 1 / (count + 1) apart, in random order: max and
// min have no ties, so no kinks within a finite-difference step.
Value DistinctTensor(const Shape& shape, std::mt19937& random) {
  const int64_t count = CountOf(shape);
  std::vector<double> values;
  for (int64_t index = 0; index < count; ++index) {
    values.push_back(-1 + 2.0 * static_cast<double>(index) / static_cast<double>(count));
  }
  std::shuffle(values.begin(), values.end(), random);
  return TensorOf(shape, values);
}

const double* DataOf(const Value& value) {
  return static_cast<const Tensor&>(*value).data<double>();
}

// ---- reductions -----------------------------------------------------------------------------

// How a reduction's attributes were drawn, and the result shape they give
// (worked out here from NumPy's rules, independently of the type relation).
struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axes;  // None: every axis
  bool keepdims = false;
  bool exclude = false;

  std::string Text() const {
    std::string text = "axis=" + (axes ? ListText(*axes) : std::string("None"));
    return text + ", keepdims=" + (keepdims ? "True" : "False") +
           ", exclude=" + (exclude ? "True" : "False");
  }

  std::vector<bool> Reduced(size_t rank) const {
    std::vector<bool> reduced(rank, !axes || exclude);
    if (axes) {
      for (int64_t axis : *axes) {
        reduced[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis)] =
            !exclude;
      }
    }
    return reduced;
  }

  Shape ResultShape(const Shape& shape) const {
    std::vector<bool> reduced = Reduced(shape.size());
    Shape result;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (!reduced[axis]) {
        result.push_back(shape[axis]);
      } else if (keepdims) {
        result.push_back(1);
      }
    }
    return result;
  }
};

enum class AxisChoice { kNone, kList, kExclude };

// A random set of distinct axes, some spelled negative.
ReduceAttrs DrawReduceAttrs(std::mt19937& random, size_t rank, AxisChoice choice, bool keepdims) {
  ReduceAttrs attrs;
  attrs.keepdims = keepdims;
  if (choice == AxisChoice::kNone) return attrs;
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  std::shuffle(axes.begin(), axes.end(), random);
  // exclude may list no axis (reducing them all) or every one (reducing none).
  const int64_t fewest = choice == AxisChoice::kExclude ? 0 : 1;
  axes.resize(static_cast<size_t>(Draw(random, fewest, static_cast<int64_t>(rank))));
  for (int64_t& axis : axes) axis = MaybeNegative(random, axis, static_cast<int64_t>(rank));
  attrs.axes = axes;
  attrs.exclude = choice == AxisChoice::kExclude;
  return attrs;
}

struct ReductionCase {
  const char* op;
  double low, high;  // where the inputs are drawn (prod: away from 0)
  bool distinct;     // max and min: no ties
};

class ReductionGradientTest : public ::testing::TestWithParam<ReductionCase> {};

// Every way of choosing axes (None, a list, exclude) with and without
// keepdims, two random shapes of rank 1 to 3 each.
TEST_P(ReductionGradientTest, MatchesFiniteDifferencesForEveryAxisChoice) {
  const ReductionCase& test = GetParam();
  std::mt19937 random(101);
  for (AxisChoice choice : {AxisChoice::kNone, AxisChoice::kList, AxisChoice::kExclude}) {
    for (bool keepdims : {false, true}) {
      for (int draw = 0; draw < 2; ++draw) {
        const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
        const Shape shape = RandomShape(random, rank, 1, rank == 3 ? 3 : 4);
        const ReduceAttrs attrs = DrawReduceAttrs(random, rank, choice, keepdims);
        Value x = test.distinct ? DistinctTensor(shape, random)
                                : RandomTensor(shape, random, test.low, test.high);
        CheckWeighted(std::string(test.op) + "(%x, " + attrs.Text() + ")", x, shape,
                      attrs.ResultShape(shape), random);
      }
    }
  }
}

// The reduced axis unknown to the type checker: mean counts its elements
// at run time, the others broadcast with *_like operators.
TEST_P(ReductionGradientTest, WorksWithUnknownDimensions) {
  const ReductionCase& test = GetParam();
  std::mt19937 random(103);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = RandomShape(random, 2, 2, 4);
    for (const char* axis : {"[0]", "[-1]"}) {
      const Shape output = axis == std::string("[0]") ? Shape{shape[1]} : Shape{shape[0]};
      Value x = test.distinct ? DistinctTensor(shape, random)
                              : RandomTensor(shape, random, test.low, test.high);
      CheckWeighted(std::string(test.op) + "(%x, axis=" + axis + ")", x, shape, output, random,
                    TypeText(shape, {true, false}));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, ReductionGradientTest,
    ::testing::Values(ReductionCase{"sum", -1, 1, false}, ReductionCase{"mean", -1, 1, false},
                      ReductionCase{"prod", 0.5, 1.5, false}, ReductionCase{"max", 0, 0, true},
                      ReductionCase{"min", 0, 0, true}),
    [](const ::testing::TestParamInfo<ReductionCase>& info) { return std::string(info.param.op); });

// prod's gradient at zeros: one zero in a row gets the product of the
// others and the rest 0; two zeros give 0 everywhere. prod is linear in
// each element, so central differences are exact there.
TEST(ReductionGradientTest, ProdHandlesZeros) {
  std::mt19937 random(105);
  CheckWeighted("prod(%x, axis=[1])",
                TensorOf({3, 3}, {0.0, 1.5, -2.0, 0.0, 0.0, 3.0, 1.1, 0.7, -0.4}), {3, 3}, {3},
                random);
  CheckWeighted("prod(%x)", TensorOf({2, 2}, {1.2, 0.0, -0.8, 2.5}), {2, 2}, {}, random);
}

// At a tie between two elements, the central difference of max is half a
// step up and nothing down: 1/2 each, which is how the rule shares it.
TEST(ReductionGradientTest, MaxAndMinShareTheGradientBetweenTwoTiedElements) {
  std::mt19937 random(107);
  Value x = TensorOf({2, 3}, {1.0, 3.0, 3.0, -2.0, 0.5, -2.0});
  CheckWeighted("max(%x, axis=[1])", x, {2, 3}, {2}, random);
  CheckWeighted("min(%x, axis=[-1], keepdims=True)", x, {2, 3}, {2, 1}, random);
}

// variance and std with the mean as its own parameter (both partial
// derivatives), and with the mean computed from x (the usual program).
TEST(ReductionGradientTest, VarianceAndStdMatchFiniteDifferences) {
  std::mt19937 random(109);
  for (const char* op : {"variance", "std"}) {
    for (AxisChoice choice : {AxisChoice::kNone, AxisChoice::kList, AxisChoice::kExclude}) {
      for (int draw = 0; draw < 2; ++draw) {
        const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
        const Shape shape = RandomShape(random, rank, 2, 3);
        ReduceAttrs attrs = DrawReduceAttrs(random, rank, choice, Coin(random));
        // At least one axis reduced: a variance of one element is 0, where
        // std has no derivative (and unbiased divides by 0).
        while (CountOf(shape) == CountOf(attrs.ResultShape(shape))) {
          attrs = DrawReduceAttrs(random, rank, choice, attrs.keepdims);
        }
        const std::string unbiased = Coin(random) ? "True" : "False";
        const std::string all_attrs = attrs.Text() + ", unbiased=" + unbiased;
        ReduceAttrs keeping = attrs;
        keeping.keepdims = true;
        const Shape mean_shape = keeping.ResultShape(shape);
        const Shape output = attrs.ResultShape(shape);
        SCOPED_TRACE(std::string(op) + "(" + DimsText(shape) + ", " + all_attrs + ")");
        CheckGradient("def @main(%x: " + TypeText(shape) + ", %m: " + TypeText(mean_shape) +
                          ", %c: " + TypeText(output) + ") {\n  multiply(" + op + "(%x, %m, " +
                          all_attrs + "), %c)\n}\n",
                      {RandomTensor(shape, random), RandomTensor(mean_shape, random, -0.2, 0.2),
                       RandomTensor(output, random)});
        CheckWeighted(std::string(op) + "(%x, mean(%x, " + keeping.Text() + "), " + all_attrs + ")",
                      RandomTensor(shape, random), shape, output, random);
      }
    }
  }
}

TEST(ReductionGradientTest, VarianceWorksWithUnknownDimensions) {
  std::mt19937 random(111);
  const Shape shape = RandomShape(random, 2, 2, 4);
  for (const char* op : {"variance", "std"}) {
    CheckWeighted(
        std::string(op) + "(%x, mean(%x, axis=[0], keepdims=True), axis=[0], " + "unbiased=True)",
        RandomTensor(shape, random), shape, {shape[1]}, random, TypeText(shape, {true, true}));
  }
}

// ---- reshapes and permutations ---------------------------------------------------------------

TEST(TransformGradientTest, ReshapeWithEverySpecialValue) {
  std::mt19937 random(201);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape s = RandomShape(random, 3, 1, 3);
    const int64_t a = s[0], b = s[1], c = s[2];
    struct Case {
      std::vector<int64_t> newshape;
      Shape output;
    };
    for (const Case& test : std::vector<Case>{{{-1}, {a * b * c}},
                                              {{0, -1}, {a, b * c}},
                                              {{-3, 0}, {a * b, c}},
                                              {{c, -1, 1}, {c, a * b, 1}},
                                              {{-2, 1}, {a, b, c, 1}},
                                              {{-4, 1, -1, -2}, {1, a, b, c}}}) {
      CheckWeighted("reshape(%x, newshape=" + ListText(test.newshape) + ")",
                    RandomTensor(s, random), s, test.output, random);
    }
  }
}

TEST(TransformGradientTest, ReshapeLikeWithUnknownDimensionsAndAxisRanges) {
  std::mt19937 random(203);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape s = RandomShape(random, 2, 1, 4);
    const Shape like{s[1], s[0]};
    SCOPED_TRACE(DimsText(s));
    CheckGradient(
        "def @main(%x: " + TypeText(s, {true, false}) +
            ", %like: " + TypeText(like, {false, true}) + ", %c: " + TypeText(like) +
            ") {\n  multiply(reshape_like(%x, %like), %c)\n}\n",
        {RandomTensor(s, random), RandomTensor(like, random), RandomTensor(like, random)});
    // Axes 0 and 1 of a rank-3 x become like's one axis.
    const Shape x3{s[0], s[1], 2};
    const Shape merged{s[0] * s[1], 2};
    CheckGradient("def @main(%x: " + TypeText(x3, {false, false, true}) +
                      ", %like: " + TypeText({s[0] * s[1]}) + ", %c: " + TypeText(merged) +
                      ") {\n  multiply(reshape_like(%x, %like, lhs_begin=0, lhs_end=-1), %c)\n}\n",
                  {RandomTensor(x3, random), RandomTensor({s[0] * s[1]}, random),
                   RandomTensor(merged, random)});
  }
}

TEST(TransformGradientTest, TransposeWithAndWithoutAxes) {
  std::mt19937 random(205);
  for (int draw = 0; draw < 3; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 2, 3));
    const Shape s = RandomShape(random, rank, 1, 4);
    std::vector<int64_t> axes(rank);
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), random);
    Shape output, reversed(s.rbegin(), s.rend());
    std::vector<int64_t> spelled;
    for (int64_t axis : axes) {
      output.push_back(s[static_cast<size_t>(axis)]);
      spelled.push_back(MaybeNegative(random, axis, static_cast<int64_t>(rank)));
    }
    CheckWeighted("transpose(%x, axes=" + ListText(spelled) + ")", RandomTensor(s, random), s,
                  output, random);
    CheckWeighted("transpose(%x)", RandomTensor(s, random), s, reversed, random);
  }
}

TEST(TransformGradientTest, SqueezeAndExpandDims) {
  std::mt19937 random(207);
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t a = Draw(random, 2, 4), b = Draw(random, 2, 4);
    const Shape s{1, a, 1, b};
    CheckWeighted("squeeze(%x, axis=[0, -2])", RandomTensor(s, random), s, {a, b}, random);
    CheckWeighted("squeeze(%x)", RandomTensor(s, random), s, {a, b}, random);
    CheckWeighted("squeeze(%x, axis=[2])", RandomTensor(s, random), s, {1, a, b}, random);
    const Shape t{a, b};
    const int64_t count = Draw(random, 0, 2);
    const int64_t axis = Draw(random, 0, 2);  // an insertion position of a rank-2 tensor
    Shape expanded = t;
    expanded.insert(expanded.begin() + axis, static_cast<size_t>(count), 1);
    CheckWeighted("expand_dims(%x, axis=" + std::to_string(Coin(random) ? axis - 3 : axis) +
                      ", num_newaxis=" + std::to_string(count) + ")",
                  RandomTensor(t, random), t, expanded, random);
  }
}

TEST(TransformGradientTest, ReverseAlongAnAxis) {
  std::mt19937 random(209);
  for (int draw = 0; draw < 3; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
    const Shape s = RandomShape(random, rank, 1, rank == 3 ? 3 : 4);
    const int64_t axis = MaybeNegative(random, Draw(random, 0, static_cast<int64_t>(rank) - 1),
                                       static_cast<int64_t>(rank));
    CheckWeighted("reverse(%x, axis=" + std::to_string(axis) + ")", RandomTensor(s, random), s, s,
                  random);
  }
}

// ---- joining and splitting -------------------------------------------------------------------

// Fields of random extents along a random axis; `unknown` marks fields
// whose extent along it the program leaves `?`.
void CheckConcatenate(std::mt19937& random, const std::vector<bool>& unknown) {
  const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
  const int64_t axis = Draw(random, 0, static_cast<int64_t>(rank) - 1);
  const Shape common = RandomShape(random, rank, 1, 3);
  std::string params, fields;
  std::vector<Value> arguments;
  Shape output = common;
  output[axis] = 0;
  for (size_t field = 0; field < unknown.size(); ++field) {
    Shape shape = common;
    shape[axis] = Draw(random, 1, 3);
    output[axis] += shape[axis];
    std::vector<bool> marks(rank, false);
    marks[axis] = unknown[field];
    const std::string name = "%x" + std::to_string(field);
    params += name + ": " + TypeText(shape, marks) + ", ";
    fields += (field > 0 ? ", " : "") + name;
    arguments.push_back(RandomTensor(shape, random));
  }
  arguments.push_back(RandomTensor(output, random));
  if (unknown.size() == 1) fields += ",";
  const std::string call =
      "concatenate((" + fields +
      "), axis=" + std::to_string(MaybeNegative(random, axis, static_cast<int64_t>(rank))) + ")";
  SCOPED_TRACE(call + " to " + DimsText(output));
  CheckGradient(
      "def @main(" + params + "%c: " + TypeText(output) + ") {\n  multiply(" + call + ", %c)\n}\n",
      arguments);
}

TEST(TransformGradientTest, ConcatenateSendsEachFieldItsPart) {
  std::mt19937 random(211);
  for (int draw = 0; draw < 3; ++draw) {
    CheckConcatenate(random, std::vector<bool>(static_cast<size_t>(Draw(random, 1, 3)), false));
  }
}

// One field of unknown extent is found between the known ones before and
// after it, wherever it is.
TEST(TransformGradientTest, ConcatenateWithOneUnknownExtent) {
  std::mt19937 random(213);
  CheckConcatenate(random, {true});
  CheckConcatenate(random, {true, false, false});
  CheckConcatenate(random, {false, true, false});
  CheckConcatenate(random, {false, false, true});
}

TEST(TransformGradientTest, ConcatenateWithTwoUnknownExtentsIsATypeError) {
  const std::string text =
      "#[version = \"0.0.5\"]\n"
      "def @main(%a: Tensor[(?, 2), float64], %b: Tensor[(?, 2), float64]) {\n"
      "  concatenate((%a, %b))\n}\n";
  Diagnostics diagnostics("concatenate.relay", std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  try {
    passes::AddGradient(module, &compiler::Prelude(), "main");
    FAIL() << "expected a type error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kType);
    EXPECT_NE(error.message().find("the gradient of concatenate needs the extents"),
              std::string::npos)
        << error.message();
  }
}

TEST(TransformGradientTest, StackAlongEveryAxis) {
  std::mt19937 random(215);
  for (int draw = 0; draw < 3; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 2));
    const Shape shape = RandomShape(random, rank, 1, 3);
    const int64_t count = Draw(random, 1, 3);
    const int64_t axis = Draw(random, 0, static_cast<int64_t>(rank));  // an insertion position
    Shape output = shape;
    output.insert(output.begin() + axis, count);
    std::string params, fields;
    std::vector<Value> arguments;
    for (int64_t field = 0; field < count; ++field) {
      const std::string name = "%x" + std::to_string(field);
      params += name + ": " + TypeText(shape) + ", ";
      fields += (field > 0 ? ", " : "") + name;
      arguments.push_back(RandomTensor(shape, random));
    }
    arguments.push_back(RandomTensor(output, random));
    if (count == 1) fields += ",";
    const int64_t spelled = Coin(random) ? axis - static_cast<int64_t>(rank) - 1 : axis;
    const std::string call = "stack((" + fields + "), axis=" + std::to_string(spelled) + ")";
    SCOPED_TRACE(call);
    CheckGradient("def @main(" + params + "%c: " + TypeText(output) + ") {\n  multiply(" + call +
                      ", %c)\n}\n",
                  arguments);
  }
}

// The output's gradient is a tuple; a part the program drops contributes
// zeros.
TEST(TransformGradientTest, SplitBySectionsAndByIndices) {
  std::mt19937 random(217);
  for (int draw = 0; draw < 2; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
    const int64_t axis = Draw(random, 0, static_cast<int64_t>(rank) - 1);
    Shape shape = RandomShape(random, rank, 1, 3);
    const int64_t sections = Draw(random, 1, 3);
    shape[axis] = sections * Draw(random, 1, 2);
    const std::string spelled =
        std::to_string(MaybeNegative(random, axis, static_cast<int64_t>(rank)));
    // Parts: by sections, then at two random split points.
    std::vector<Shape> parts(static_cast<size_t>(sections), shape);
    for (Shape& part : parts) part[axis] = shape[axis] / sections;
    Shape by_indices = shape;
    by_indices[axis] = Draw(random, 3, 4);
    const int64_t first = Draw(random, 1, by_indices[axis] - 2);
    const int64_t second = Draw(random, first + 1, by_indices[axis] - 1);
    std::vector<Shape> index_parts(3, by_indices);
    index_parts[0][axis] = first;
    index_parts[1][axis] = second - first;
    index_parts[2][axis] = by_indices[axis] - second;

    auto check = [&](const Shape& input, const std::string& how, const std::vector<Shape>& outputs,
                     bool drop_first) {
      std::string params = "%x: " + TypeText(input), result;
      std::vector<Value> arguments{RandomTensor(input, random)};
      for (size_t part = drop_first ? 1 : 0; part < outputs.size(); ++part) {
        const std::string weight = "%c" + std::to_string(part);
        params += ", " + weight + ": " + TypeText(outputs[part]);
        result += std::string(result.empty() ? "" : ", ") + "multiply(%t." + std::to_string(part) +
                  ", " + weight + ")";
        arguments.push_back(RandomTensor(outputs[part], random));
      }
      const std::string call = "split(%x, indices_or_sections=" + how + ", axis=" + spelled + ")";
      SCOPED_TRACE(call + " of " + DimsText(input));
      const bool single = outputs.size() - (drop_first ? 1 : 0) == 1;
      CheckGradient("def @main(" + params + ") {\n  let %t = " + call + ";\n  (" + result +
                        (single ? ",)" : ")") + "\n}\n",
                    arguments);
    };
    check(shape, std::to_string(sections), parts, false);
    check(by_indices, ListText({first, second}), index_parts, false);
    check(by_indices, ListText({first, second}), index_parts, true);
  }
}

// ---- slicing and indexing --------------------------------------------------------------------

// One axis of a strided_slice: the attribute values and the extent they
// select, worked out by Python's slicing rules.
struct AxisSlice {
  int64_t begin, end, stride, extent;
};

AxisSlice DrawAxisSlice(std::mt19937& random, int64_t n) {
  static const int64_t kStrides[] = {1, 1, 2, 3, -1, -2};
  const int64_t stride = kStrides[Draw(random, 0, 5)];
  const int64_t magnitude = std::abs(stride);
  if (stride > 0) {
    const int64_t first = Draw(random, 0, n - 1);
    const int64_t last = Draw(random, first + 1, n);  // one past the end
    const int64_t begin = Coin(random) ? first - n : first;
    const int64_t end =
        last == n && Coin(random) ? n + 5 : (Coin(random) && last < n ? last - n : last);
    return {begin, end, stride, (last - first + magnitude - 1) / magnitude};
  }
  const int64_t first = Draw(random, 0, n - 1);
  const int64_t last = Draw(random, -1, first - 1);  // one before the end, -1 before element 0
  const int64_t begin = Coin(random) ? first - n : first;
  const int64_t end = last == -1 ? -n - 1 : (Coin(random) ? last - n : last);
  return {begin, end, stride, (first - last + magnitude - 1) / magnitude};
}

TEST(TransformGradientTest, StridedSliceWithStridesAxesAndSizes) {
  std::mt19937 random(301);
  for (int draw = 0; draw < 4; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
    const Shape s = RandomShape(random, rank, 2, rank == 3 ? 3 : 5);
    // Every axis, with begin/end/strides.
    std::vector<int64_t> begin, end, strides;
    Shape output;
    for (size_t axis = 0; axis < rank; ++axis) {
      AxisSlice slice = DrawAxisSlice(random, s[axis]);
      begin.push_back(slice.begin);
      end.push_back(slice.end);
      strides.push_back(slice.stride);
      output.push_back(slice.extent);
    }
    CheckWeighted("strided_slice(%x, begin=" + ListText(begin) + ", end=" + ListText(end) +
                      ", strides=" + ListText(strides) + ")",
                  RandomTensor(s, random), s, output, random);
    // Only the last axis, named in axes, in size mode.
    const int64_t last = static_cast<int64_t>(rank) - 1;
    const int64_t start = Draw(random, 0, s[last] - 1);
    const int64_t size = Coin(random) ? -1 : Draw(random, 1, s[last] - start);
    Shape sized = s;
    sized[last] = size < 0 ? s[last] - start : size;
    CheckWeighted("strided_slice(%x, begin=[" + std::to_string(start) + "], end=[" +
                      std::to_string(size) + "], axes=[-1], slice_mode=\"size\")",
                  RandomTensor(s, random), s, sized, random);
  }
}

// take's indices: a scalar, a vector with repeats (whose gradients add up),
// a matrix; from the flattened data (axis=None) and along an axis; out of
// range (clip clamps, wrap wraps); along an axis of unknown extent.
TEST(TransformGradientTest, TakeWithEveryKindOfIndices) {
  std::mt19937 random(303);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape s = RandomShape(random, 3, 2, 3);
    const int64_t axis = Draw(random, 0, 2);
    const int64_t n = s[axis];
    Value x = RandomTensor(s, random);
    auto check = [&](const std::string& attrs, const Value& indices, const Shape& index_shape,
                     const Shape& output, const std::string& x_type = "") {
      const std::string call = "take(%x, %i" + attrs + ")";
      SCOPED_TRACE(call + " of " + DimsText(s) + " with indices " + DimsText(index_shape));
      CheckGradient("def @main(%x: " + (x_type.empty() ? TypeText(s) : x_type) +
                        ", %i: " + TypeText(index_shape, {}, "int64") +
                        ", %c: " + TypeText(output) + ") {\n  multiply(" + call + ", %c)\n}\n",
                    {x, indices, RandomTensor(output, random)});
    };
    auto along = [&](const Shape& index_shape) {
      Shape output(s.begin(), s.begin() + axis);
      output.insert(output.end(), index_shape.begin(), index_shape.end());
      output.insert(output.end(), s.begin() + axis + 1, s.end());
      return output;
    };
    const std::string on_axis = ", axis=" + std::to_string(MaybeNegative(random, axis, 3));
    // A scalar index removes the axis.
    check(on_axis, IntTensor({}, {Draw(random, 0, n - 1)}), {}, along({}));
    // Repeated indices in a vector.
    std::vector<int64_t> vector{Draw(random, 0, n - 1), 0, n - 1, 0};
    check(on_axis, IntTensor({4}, vector), {4}, along({4}));
    // A matrix of indices, out of range: clip clamps them, wrap wraps them.
    std::vector<int64_t> wild{-1, n, 2 * n + 1, -n - 1, 1, 0};
    check(on_axis, IntTensor({2, 3}, wild), {2, 3}, along({2, 3}));
    check(on_axis + ", mode=\"wrap\"", IntTensor({2, 3}, wild), {2, 3}, along({2, 3}));
    // From the flattened data.
    const int64_t count = CountOf(s);
    std::vector<int64_t> flat{count - 1, 0, Draw(random, 0, count - 1), count - 1, count + 3};
    check("", IntTensor({5}, flat), {5}, {5});
    check(", mode=\"wrap\"", IntTensor({5}, flat), {5}, {5});
    check("", IntTensor({}, {Draw(random, 0, count - 1)}), {}, {});
    // The axis unknown to the type checker: wrap reads its extent at run time.
    std::vector<bool> unknown(3, false);
    unknown[axis] = true;
    check(on_axis + ", mode=\"wrap\"", IntTensor({2, 3}, wild), {2, 3}, along({2, 3}),
          TypeText(s, unknown));
    check(", mode=\"wrap\"", IntTensor({5}, flat), {5}, {5}, TypeText(s, unknown));
  }
}

TEST(TransformGradientTest, TakeWithBatchDimensions) {
  std::mt19937 random(305);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape s = RandomShape(random, 3, 2, 3);  // (b, p, a) taking along axis 2
    const int64_t b = s[0], extent = s[2];
    std::vector<int64_t> values;
    for (int64_t index = 0; index < b * 3; ++index) values.push_back(Draw(random, 0, extent - 1));
    const Shape output{b, s[1], 3};
    CheckGradient("def @main(%x: " + TypeText(s) + ", %i: " + TypeText({b, 3}, {}, "int32") +
                      ", %c: " + TypeText(output) +
                      ") {\n  multiply(take(%x, %i, axis=2, batch_dims=1), %c)\n}\n",
                  {RandomTensor(s, random), IntTensor({b, 3}, values, DType::kInt32),
                   RandomTensor(output, random)});
    // Every axis of indices a batch dimension: one element per batch.
    CheckGradient("def @main(%x: " + TypeText({b, s[2]}) + ", %i: " + TypeText({b}, {}, "int64") +
                      ", %c: " + TypeText({b}) +
                      ") {\n  multiply(take(%x, %i, axis=1, batch_dims=1), %c)\n}\n",
                  {RandomTensor({b, s[2]}, random),
                   IntTensor({b}, std::vector<int64_t>(values.begin(), values.begin() + b)),
                   RandomTensor({b}, random)});
  }
}

TEST(TransformGradientTest, GatherAddsUpRepeatedIndices) {
  std::mt19937 random(307);
  for (int draw = 0; draw < 3; ++draw) {
    const Shape s = RandomShape(random, 2, 2, 4);
    const int64_t axis = Draw(random, 0, 1);
    // indices: as long as data along the axis or longer (repeats), no
    // larger off it; one index out of range (clamped).
    Shape index_shape = s;
    index_shape[axis] = Draw(random, 1, 5);
    index_shape[1 - axis] = Draw(random, 1, s[1 - axis]);
    std::vector<int64_t> values;
    for (int64_t index = 0; index < CountOf(index_shape); ++index) {
      values.push_back(Draw(random, 0, s[axis] - 1));
    }
    values[0] = s[axis] + 2;
    const std::string call =
        "gather(%x, %i, axis=" + std::to_string(MaybeNegative(random, axis, 2)) + ")";
    SCOPED_TRACE(call + " of " + DimsText(s) + " with indices " + DimsText(index_shape));
    CheckGradient("def @main(%x: " + TypeText(s, {axis == 0, false}) +
                      ", %i: " + TypeText(index_shape, {}, "int64") +
                      ", %c: " + TypeText(index_shape) + ") {\n  multiply(" + call + ", %c)\n}\n",
                  {RandomTensor(s, random), IntTensor(index_shape, values),
                   RandomTensor(index_shape, random)});
  }
}

// ---- repetition and broadcasting -------------------------------------------------------------

TEST(TransformGradientTest, TileWithShorterAndLongerReps) {
  std::mt19937 random(401);
  for (int draw = 0; draw < 3; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 2));
    const Shape s = RandomShape(random, rank, 1, 3);
    const std::vector<int64_t> reps =
        RandomShape(random, static_cast<size_t>(Draw(random, 1, 3)), 1, 2);
    const size_t out_rank = std::max(rank, reps.size());
    Shape output(out_rank);
    for (size_t offset = 1; offset <= out_rank; ++offset) {
      const int64_t dim = offset <= rank ? s[rank - offset] : 1;
      const int64_t rep = offset <= reps.size() ? reps[reps.size() - offset] : 1;
      output[out_rank - offset] = dim * rep;
    }
    CheckWeighted("tile(%x, reps=" + ListText(reps) + ")", RandomTensor(s, random), s, output,
                  random, TypeText(s, std::vector<bool>(rank, Coin(random))));
  }
}

TEST(TransformGradientTest, RepeatAlongAnAxis) {
  std::mt19937 random(403);
  for (int draw = 0; draw < 3; ++draw) {
    const size_t rank = static_cast<size_t>(Draw(random, 1, 3));
    const Shape s = RandomShape(random, rank, 1, 3);
    const int64_t axis = Draw(random, 0, static_cast<int64_t>(rank) - 1);
    const int64_t repeats = Draw(random, 1, 3);
    Shape output = s;
    output[axis] *= repeats;
    CheckWeighted("repeat(%x, repeats=" + std::to_string(repeats) + ", axis=" +
                      std::to_string(MaybeNegative(random, axis, static_cast<int64_t>(rank))) + ")",
                  RandomTensor(s, random), s, output, random,
                  TypeText(s, std::vector<bool>(rank, Coin(random))));
  }
}

TEST(TransformGradientTest, BroadcastsSumTheCopiesBack) {
  std::mt19937 random(405);
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t a = Draw(random, 2, 3), b = Draw(random, 2, 3), c = Draw(random, 1, 3);
    const Shape s{a, 1};
    const Shape target{b, a, c};
    CheckWeighted("broadcast_to(%x, shape=" + ListText(target) + ")", RandomTensor(s, random), s,
                  target, random);
    CheckGradient(
        "def @main(%x: " + TypeText(s, {true, false}) +
            ", %like: " + TypeText(target, {false, true, false}) + ", %c: " + TypeText(target) +
            ") {\n  multiply(broadcast_to_like(%x, %like), %c)\n}\n",
        {RandomTensor(s, random), RandomTensor(target, random), RandomTensor(target, random)});
  }
}

TEST(TransformGradientTest, CollapseSumLikeWithUnknownDimensions) {
  std::mt19937 random(407);
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t a = Draw(random, 2, 3), b = Draw(random, 2, 3), c = Draw(random, 2, 3);
    const Shape s{b, a, c};
    for (const Shape& like : {Shape{a, 1}, Shape{c}, Shape{b, 1, c}}) {
      SCOPED_TRACE(DimsText(like));
      CheckGradient(
          "def @main(%x: " + TypeText(s, {true, false, false}) +
              ", %like: " + TypeText(like, std::vector<bool>(like.size(), false)) +
              ", %c: " + TypeText(like) + ") {\n  multiply(collapse_sum_like(%x, %like), %c)\n}\n",
          {RandomTensor(s, random), RandomTensor(like, random), RandomTensor(like, random)});
    }
  }
}

// ---- creation --------------------------------------------------------------------------------

TEST(TransformGradientTest, FullAndFullLikeSumIntoTheFillValue) {
  std::mt19937 random(501);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape s = RandomShape(random, static_cast<size_t>(Draw(random, 1, 3)), 1, 3);
    CheckGradient("def @main(%v: float64, %c: " + TypeText(s) + ") {\n  multiply(full(%v, shape=" +
                      ListText(s) + ", dtype=\"float64\"), %c)\n}\n",
                  {RandomTensor({}, random), RandomTensor(s, random)});
    // data gives only its shape: its gradient is zero.
    CheckGradient("def @main(%x: " + TypeText(s) + ", %v: float64, %c: " + TypeText(s) +
                      ") {\n  multiply(full_like(%x, %v), %c)\n}\n",
                  {RandomTensor(s, random), RandomTensor({}, random), RandomTensor(s, random)});
  }
  // A float32 tensor filled from a float64 scalar: the gradient goes back in
  // float64 (cast), through float32's rounding.
  GradientCheckOptions options;
  options.epsilon = 1e-3;
  options.tolerance = 1e-4;
  CheckGradient(
      "def @main(%v: float64, %c: Tensor[(2, 3), float64]) {\n"
      "  multiply(cast(full(%v, shape=[2, 3], dtype=\"float32\"), dtype=\"float64\"), %c)\n}\n",
      {TensorOf({}, {0.25}), RandomTensor({2, 3}, random)}, options);
}

// zeros_like and ones_like pass nothing to their input: only the other
// path of x counts.
TEST(TransformGradientTest, ZerosLikeAndOnesLikePassNothing) {
  std::mt19937 random(503);
  const Shape s = RandomShape(random, 2, 1, 4);
  CheckWeighted("add(multiply(zeros_like(%x), %x), add(ones_like(%x), %x))",
                RandomTensor(s, random), s, s, random);
}

// out[i] = start + i step: the bounds are parameters, so the length is `?`
// until run time (0.3 + 7 * 0.7 > 5.05: seven elements, far from a change).
TEST(TransformGradientTest, ArangeDifferentiatesStartAndStep) {
  std::mt19937 random(505);
  CheckGradient(
      "def @main(%start: float64, %stop: float64, %step: float64) {\n"
      "  let %y = arange(%start, %stop, %step, dtype=\"float64\");\n"
      "  sum(multiply(%y, %y))\n}\n",
      {TensorOf({}, {0.3}), TensorOf({}, {5.05}), TensorOf({}, {0.7})});
}

// ---- the adjoint operators -------------------------------------------------------------------

// Runs @main of `program` on the reference evaluator and on the VM.
std::vector<Value> RunBoth(const std::string& program, const std::vector<Value>& arguments) {
  const std::string text = "#[version = \"0.0.5\"]\n" + program;
  Diagnostics diagnostics("forward.relay", std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  if (diagnostics.has_errors()) return {};
  vm::VirtualMachine machine(std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude())));
  return {evaluator::Evaluate(module, "main", arguments), machine.Invoke("main", arguments)};
}

void ExpectValues(const Value& actual, const Shape& shape, const std::vector<double>& expected,
                  const std::string& what) {
  const Tensor& tensor = static_cast<const Tensor&>(*actual);
  ASSERT_EQ(Shape(tensor.shape().begin(), tensor.shape().end()), shape) << what;
  for (size_t index = 0; index < expected.size(); ++index) {
    EXPECT_NEAR(tensor.data<double>()[index], expected[index], 1e-12)
        << what << " element " << index;
  }
}

// Row-major strides of `shape`.
Shape StridesOf(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t axis = shape.size(); axis-- > 1;) strides[axis - 1] = strides[axis] * shape[axis];
  return strides;
}

TEST(ScatterAddTest, AddsEveryUpdateAtItsClampedIndex) {
  std::mt19937 random(601);
  for (int draw = 0; draw < 3; ++draw) {
    const Shape s = RandomShape(random, 2, 2, 4);
    const int64_t axis = Draw(random, 0, 1), other = 1 - axis;
    Shape index_shape = s;
    index_shape[axis] = Draw(random, 1, 6);
    index_shape[other] = Draw(random, 1, s[other]);
    std::vector<int64_t> indices;
    for (int64_t index = 0; index < CountOf(index_shape); ++index) {
      indices.push_back(Draw(random, -2, s[axis] + 1));  // some out of range on both sides
    }
    Value data = RandomTensor(s, random), updates = RandomTensor(index_shape, random);
    // The expectation: plain loops over the updates.
    std::vector<double> expected(DataOf(data), DataOf(data) + CountOf(s));
    const Shape data_strides = StridesOf(s), index_strides = StridesOf(index_shape);
    for (int64_t row = 0; row < index_shape[0]; ++row) {
      for (int64_t column = 0; column < index_shape[1]; ++column) {
        const int64_t at = row * index_strides[0] + column;
        int64_t target[2] = {row, column};
        target[axis] = std::clamp<int64_t>(indices[static_cast<size_t>(at)], 0, s[axis] - 1);
        expected[static_cast<size_t>(target[0] * data_strides[0] + target[1])] +=
            DataOf(updates)[at];
      }
    }
    const std::string program =
        "def @main(%d: " + TypeText(s) + ", %i: " + TypeText(index_shape, {}, "int64") +
        ", %u: " + TypeText(index_shape) +
        ") {\n  scatter_add(%d, %i, %u, axis=" + std::to_string(MaybeNegative(random, axis, 2)) +
        ")\n}\n";
    SCOPED_TRACE(program);
    std::vector<Value> results = RunBoth(program, {data, IntTensor(index_shape, indices), updates});
    ASSERT_EQ(results.size(), 2u);
    ExpectValues(results[0], s, expected, "evaluator");
    ExpectValues(results[1], s, expected, "VM");
    // Its own gradient: data passes through, updates gather.
    CheckGradient("def @main(%d: " + TypeText(s) + ", %i: " + TypeText(index_shape, {}, "int64") +
                      ", %u: " + TypeText(index_shape) + ", %c: " + TypeText(s) +
                      ") {\n  multiply(scatter_add(%d, %i, %u, axis=" + std::to_string(axis) +
                      "), %c)\n}\n",
                  {data, IntTensor(index_shape, indices), updates, RandomTensor(s, random)});
  }
}

TEST(ScatterAddTest, RejectsIndicesLargerThanDataOffTheAxis) {
  const std::string text =
      "#[version = \"0.0.5\"]\n"
      "def @main(%d: Tensor[(2, 3), float64], %i: Tensor[(3, 1), int64], %u: Tensor[(3, 1), "
      "float64]) {\n  scatter_add(%d, %i, %u, axis=1)\n}\n";
  Diagnostics diagnostics("scatter.relay", std::make_shared<const std::string>(text));
  compiler::ParseAndCheck(diagnostics);
  ASSERT_TRUE(diagnostics.has_errors());
  EXPECT_NE(diagnostics.FormatAll().find("must be no larger than 'data'"), std::string::npos)
      << diagnostics.FormatAll();
}

TEST(SliceScatterTest, PlacesSourceAtTheSliceAndKeepsDataElsewhere) {
  std::mt19937 random(603);
  for (int draw = 0; draw < 4; ++draw) {
    const Shape s = RandomShape(random, 2, 2, 5);
    AxisSlice slices[2] = {DrawAxisSlice(random, s[0]), DrawAxisSlice(random, s[1])};
    const Shape slice_shape{slices[0].extent, slices[1].extent};
    Value data = RandomTensor(s, random), source = RandomTensor(slice_shape, random);
    // The expectation: walk the slice the Python way and place source.
    std::vector<double> expected(DataOf(data), DataOf(data) + CountOf(s));
    auto first_of = [&](int axis) {
      const int64_t begin = slices[axis].begin;
      return begin < 0 ? begin + s[static_cast<size_t>(axis)] : begin;
    };
    for (int64_t row = 0; row < slice_shape[0]; ++row) {
      for (int64_t column = 0; column < slice_shape[1]; ++column) {
        const int64_t i = first_of(0) + row * slices[0].stride;
        const int64_t j = first_of(1) + column * slices[1].stride;
        expected[static_cast<size_t>(i * s[1] + j)] = DataOf(source)[row * slice_shape[1] + column];
      }
    }
    const std::string attrs = "begin=" + ListText({slices[0].begin, slices[1].begin}) +
                              ", end=" + ListText({slices[0].end, slices[1].end}) +
                              ", strides=" + ListText({slices[0].stride, slices[1].stride});
    const std::string program = "def @main(%d: " + TypeText(s) + ", %s: " + TypeText(slice_shape) +
                                ") {\n  slice_scatter(%d, %s, " + attrs + ")\n}\n";
    SCOPED_TRACE(program);
    std::vector<Value> results = RunBoth(program, {data, source});
    ASSERT_EQ(results.size(), 2u);
    ExpectValues(results[0], s, expected, "evaluator");
    ExpectValues(results[1], s, expected, "VM");
    // Its own gradient: data outside the slice, source the slice.
    CheckGradient("def @main(%d: " + TypeText(s) + ", %s: " + TypeText(slice_shape) +
                      ", %c: " + TypeText(s) + ") {\n  multiply(slice_scatter(%d, %s, " + attrs +
                      "), %c)\n}\n",
                  {data, source, RandomTensor(s, random)});
  }
}

// ---- gradients of gradients ------------------------------------------------------------------

// @main calls @f_grad, so differentiating @main differentiates the rules'
// own output: each rule must be built from differentiable operators.
TEST(TransformGradientTest, GradientsOfGradientsMatchFiniteDifferences) {
  std::mt19937 random(701);
  for (const char* body : {
           "sum(multiply(multiply(%x, %x), %c), axis=[1])",
           "prod(add(%x, %c), axis=[-1])",
           "mean(multiply(%x, %c), axis=[0], keepdims=True)",
           "max(multiply(%x, %c), axis=[1])",
           "variance(multiply(%x, %c), mean(%x, axis=[1], keepdims=True), axis=[1])",
           "std(multiply(%x, %c), mean(%x, axis=[1], keepdims=True), axis=[1])",
           "strided_slice(multiply(%x, %x), begin=[2, 0], end=[0, 4], strides=[-1, 3])",
           "take(multiply(%x, %c), %i, axis=1)",
           "gather(multiply(%x, %x), expand_dims(%i, axis=0), axis=1)",
           "concatenate((multiply(%x, %c), sin(%x)), axis=1)",
           "stack((multiply(%x, %c), cos(%x)), axis=-1)",
           "tile(multiply(%x, %x), reps=[2, 1])",
           "repeat(multiply(%x, %x), repeats=2, axis=0)",
           "transpose(multiply(%x, %x), axes=[1, 0])",
           "broadcast_to(sum(multiply(%x, %x), axis=[0], keepdims=True), shape=[2, 3, 4])",
           "full(sum(multiply(%x, %x)), shape=[2])",
           "reshape(multiply(%x, %c), newshape=[-1])",
       }) {
    SCOPED_TRACE(body);
    // d/dx sum(c2 * d/dx sum(f(x)))): the first derivative weighted again.
    CheckGradient(std::string("def @f(%x: Tensor[(3, 4), float64], %c: Tensor[(3, 4), float64], "
                              "%i: Tensor[(4,), int64]) {\n  ") +
                      body +
                      "\n}\n"
                      "def @main(%x: Tensor[(3, 4), float64], %c: Tensor[(3, 4), float64], %i: "
                      "Tensor[(4,), int64], %c2: Tensor[(3, 4), float64]) {\n"
                      "  let %g = @f_grad(%x, %c, %i);\n"
                      "  let %gradients = %g.1;\n"
                      "  multiply(%gradients.0, %c2)\n}\n",
                  {RandomTensor({3, 4}, random, 0.5, 1.5), RandomTensor({3, 4}, random, 0.5, 1.5),
                   IntTensor({4}, {3, 0, 0, 2}), RandomTensor({3, 4}, random)});
  }
}

}  // namespace
}  // namespace relay::testing
