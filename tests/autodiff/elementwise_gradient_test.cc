// Gradients of the elementwise operators against finite differences.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "relay/devices.h"
#include "relay/tensor.h"
#include "tests/autodiff/gradient_check.h"

namespace relay::testing {
namespace {

struct UnaryCase {
  const char* op;
  double low, high;  // where the inputs are drawn: inside the domain, off kinks
};

class UnaryGradientTest : public ::testing::TestWithParam<UnaryCase> {};

// d/dx sum(op(x) * c), c random, so every element's derivative counts.
TEST_P(UnaryGradientTest, MatchesFiniteDifferences) {
  const UnaryCase& test = GetParam();
  std::mt19937 random(7);
  std::string program =
      std::string("def @main(%x: Tensor[(2, 3), float64], %c: Tensor[(2, 3), float64]) {\n") +
      "  multiply(" + test.op + "(%x), %c)\n}\n";
  CheckGradient(program,
                {RandomTensor({2, 3}, random, test.low, test.high), RandomTensor({2, 3}, random)});
}

INSTANTIATE_TEST_SUITE_P(
    Operators, UnaryGradientTest,
    ::testing::Values(
        UnaryCase{"negative", -1, 1}, UnaryCase{"copy", -1, 1}, UnaryCase{"abs", 0.1, 1},
        UnaryCase{"exp", -1, 1}, UnaryCase{"log", 0.5, 2}, UnaryCase{"log2", 0.5, 2},
        UnaryCase{"log10", 0.5, 2}, UnaryCase{"sqrt", 0.5, 2}, UnaryCase{"rsqrt", 0.5, 2},
        UnaryCase{"sigmoid", -2, 2}, UnaryCase{"tanh", -2, 2}, UnaryCase{"erf", -1, 1},
        UnaryCase{"sin", -2, 2}, UnaryCase{"cos", -2, 2}, UnaryCase{"tan", -1, 1},
        UnaryCase{"asin", -0.9, 0.9}, UnaryCase{"acos", -0.9, 0.9}, UnaryCase{"atan", -3, 3},
        UnaryCase{"sinh", -2, 2}, UnaryCase{"cosh", -2, 2}, UnaryCase{"nn.relu", 0.1, 1},
        UnaryCase{"nn.relu", -1, -0.1}, UnaryCase{"abs", -1, -0.1}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) {
      std::string name = info.param.op;
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      return name + (info.param.high < 0 ? "_negative" : "") + "_" + std::to_string(info.index);
    });

struct BinaryCase {
  const char* op;
  double lhs_low, lhs_high, rhs_low, rhs_high;
};

class BinaryGradientTest : public ::testing::TestWithParam<BinaryCase> {};

// Same shapes, and both kinds of broadcasting (a row, a column).
TEST_P(BinaryGradientTest, MatchesFiniteDifferencesWithBroadcasting) {
  const BinaryCase& test = GetParam();
  std::mt19937 random(11);
  for (const char* rhs_shape : {"(2, 3)", "(3,)", "(2, 1)"}) {
    SCOPED_TRACE(rhs_shape);
    std::vector<int64_t> shape = rhs_shape == std::string("(2, 3)") ? std::vector<int64_t>{2, 3}
                                 : rhs_shape == std::string("(3,)") ? std::vector<int64_t>{3}
                                                                    : std::vector<int64_t>{2, 1};
    std::string program = std::string("def @main(%a: Tensor[(2, 3), float64], %b: Tensor[") +
                          rhs_shape + ", float64], %c: Tensor[(2, 3), float64]) {\n" +
                          "  multiply(" + test.op + "(%a, %b), %c)\n}\n";
    CheckGradient(program, {RandomTensor({2, 3}, random, test.lhs_low, test.lhs_high),
                            RandomTensor(shape, random, test.rhs_low, test.rhs_high),
                            RandomTensor({2, 3}, random)});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Operators, BinaryGradientTest,
    ::testing::Values(BinaryCase{"add", -1, 1, -1, 1}, BinaryCase{"subtract", -1, 1, -1, 1},
                      BinaryCase{"multiply", -1, 1, -1, 1}, BinaryCase{"divide", -1, 1, 0.5, 2},
                      BinaryCase{"power", 0.5, 2, -1, 1}, BinaryCase{"maximum", -1, 1, -1, 1},
                      BinaryCase{"minimum", -1, 1, -1, 1}, BinaryCase{"mod", 0.1, 0.9, 1.1, 2},
                      BinaryCase{"mod", 2.2, 2.9, 1.1, 1.4},
                      BinaryCase{"floor_mod", -0.9, -0.1, 1.1, 2},
                      BinaryCase{"trunc_mod", -2.9, -2.2, 1.1, 1.4}),
    [](const ::testing::TestParamInfo<BinaryCase>& info) {
      return std::string(info.param.op) + "_" + std::to_string(info.index);
    });

TEST(ElementwiseGradientTest, WhereSendsEachSideItsElements) {
  std::mt19937 random(3);
  Ref<Tensor> condition = Tensor::Empty(HostDevice(), {2, 3}, DType::kBool);
  for (int index = 0; index < 6; ++index) condition->data<bool>()[index] = index % 4 == 1;
  CheckGradient(
      "def @main(%cond: Tensor[(2, 3), bool], %x: Tensor[(2, 3), float64], %y: Tensor[(3,), "
      "float64],\n"
      "          %c: Tensor[(2, 3), float64]) {\n"
      "  multiply(where(%cond, %x, %y), %c)\n}\n",
      {condition, RandomTensor({2, 3}, random), RandomTensor({3}, random),
       RandomTensor({2, 3}, random)});
}

TEST(ElementwiseGradientTest, ClipPassesTheGradientInsideItsRangeOnly) {
  CheckGradient(
      "def @main(%x: Tensor[(6,), float64]) {\n"
      "  multiply(clip(%x, a_min=-0.5, a_max=0.5), %x)\n}\n",
      {TensorOf({6}, {-0.9, -0.4, 0.1, 0.45, 0.6, 2.0})});
}

TEST(ElementwiseGradientTest, CastGoesBackInTheInputsDType) {
  GradientCheckOptions options;
  options.epsilon = 1e-3;  // the round trip through float32 rounds to about 1e-7
  options.tolerance = 1e-3;
  std::mt19937 random(5);
  CheckGradient(
      "def @main(%x: Tensor[(2, 3), float64]) {\n"
      "  let %y = cast(multiply(%x, %x), dtype=\"float32\");\n"
      "  cast_like(exp(%y), %x)\n}\n",
      {RandomTensor({2, 3}, random)}, options);
}

// floor, sign, ... have a zero gradient: only the other path counts.
TEST(ElementwiseGradientTest, PiecewiseConstantOperatorsPassNothing) {
  CheckGradient(
      "def @main(%x: Tensor[(4,), float64]) {\n"
      "  add(multiply(add(floor(%x), sign(%x)), %x), add(round(%x), trunc(ceil(%x))))\n}\n",
      {TensorOf({4}, {-1.3, -0.2, 0.4, 2.7})});
}

}  // namespace
}  // namespace relay::testing
