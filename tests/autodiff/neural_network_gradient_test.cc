// Gradients of the neural-network operators and of image.resize2d against
// finite differences, at shapes drawn from seeded generators and with the
// attribute variants that change what the operator computes (strides,
// padding, dilation, groups, transposes, axes, layouts); and the forward
// values of the operators added for them (the pools' gradients,
// nn.conv2d_backward_weight) against plain loops.
//
// Each program multiplies the operator's result by a random weight tensor
// %c, so that every output element's gradient differs (softmax's rows sum
// to one: with the seed of ones alone its gradient would be zero).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/autodiff/gradient_check.h"

namespace relay::testing {
namespace {

using Shape = std::vector<int64_t>;

// ---- building programs -----------------------------------------------------------------------

int64_t Draw(std::mt19937& random, int64_t low, int64_t high) {  // inclusive
  return std::uniform_int_distribution<int64_t>(low, high)(random);
}

int64_t CountOf(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

// Relay's spelling of a tensor type; `unknown` marks dimensions typed `?`.
std::string TypeText(const Shape& shape, const std::vector<bool>& unknown = {}) {
  std::string text = "Tensor[(";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    text += axis < unknown.size() && unknown[axis] ? "?" : std::to_string(shape[axis]);
  }
  if (shape.size() == 1) text += ",";
  return text + "), float64]";
}

std::string ListText(const Shape& values) {
  std::string text = "[";
  for (size_t index = 0; index < values.size(); ++index) {
    if (index > 0) text += ", ";
    text += std::to_string(values[index]);
  }
  return text + "]";
}

// How a parameter's values are drawn.
enum class Values {
  kUniform,       // in [-1, 1)
  kAwayFromZero,  // in +-[0.1, 1): off relu-like kinks
  kPositive,      // in [0.5, 2): variances
  kDistinct,      // a shuffle of evenly spaced values: no ties for max pools
};

struct Param {
  std::string name;  // without the %
  Shape shape;
  Values values = Values::kUniform;
  std::vector<bool> unknown = {};  // dimensions typed `?`
};

Value DrawTensor(const Param& param, std::mt19937& random) {
  const int64_t count = CountOf(param.shape);
  switch (param.values) {
    case Values::kUniform:
      return RandomTensor(param.shape, random);
    case Values::kPositive:
      return RandomTensor(param.shape, random, 0.5, 2);
    case Values::kAwayFromZero: {
      Value tensor = RandomTensor(param.shape, random, 0.1, 1);
      std::bernoulli_distribution negative(0.5);
      double* data = static_cast<Tensor&>(*tensor).data<double>();
      for (int64_t index = 0; index < count; ++index) {
        if (negative(random)) data[index] = -data[index];
      }
      return tensor;
    }
    case Values::kDistinct: {
      std::vector<double> values(static_cast<size_t>(count));
      for (int64_t index = 0; index < count; ++index) {
        values[index] = -1 + 2 * (static_cast<double>(index) + 0.5) / static_cast<double>(count);
      }
      std::shuffle(values.begin(), values.end(), random);
      return TensorOf(param.shape, values);
    }
  }
  return nullptr;
}

ir::Module Parse(const std::string& program) {
  std::string text = "#[version = \"0.0.5\"]\n" + program;
  Diagnostics diagnostics("neural_network_gradient_test.relay",
                          std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  if (diagnostics.has_errors()) throw Error(ErrorKind::kParse, diagnostics.FormatAll());
  return module;
}

Value EvaluateProgram(const std::string& program, const std::vector<Value>& arguments) {
  return evaluator::Evaluate(Parse(program), "main", arguments);
}

std::string Signature(const std::vector<Param>& params) {
  std::string text;
  for (const Param& param : params) {
    if (!text.empty()) text += ", ";
    text += "%" + param.name + ": " + TypeText(param.shape, param.unknown);
  }
  return text;
}

// Checks the gradient of sum(body * c) with respect to every parameter,
// `body` a tensor expression of the parameters and %c a random tensor of
// its shape.
void CheckWeighted(const std::vector<Param>& params, const std::string& body, std::mt19937& random,
                   const GradientCheckOptions& options = {}) {
  std::vector<Value> arguments;
  for (const Param& param : params) arguments.push_back(DrawTensor(param, random));
  Value result =
      EvaluateProgram("def @main(" + Signature(params) + ") {\n  " + body + "\n}\n", arguments);
  const Shape result_shape = static_cast<const Tensor&>(*result).shape();
  std::vector<Param> weighted = params;
  weighted.push_back({"c", result_shape});
  arguments.push_back(RandomTensor(result_shape, random));
  const std::string program =
      "def @main(" + Signature(weighted) + ") {\n  let %y = " + body + ";\n  multiply(%y, %c)\n}\n";
  SCOPED_TRACE(program);
  CheckGradient(program, arguments, options);
}

// ---- dense and matrix products -----------------------------------------------------------

TEST(NeuralNetworkGradientTest, Dense) {
  std::mt19937 random(101);
  for (int draw = 0; draw < 3; ++draw) {
    const int64_t batch = Draw(random, 1, 4), inputs = Draw(random, 2, 5);
    const int64_t units = Draw(random, 2, 5);
    CheckWeighted({{"x", {batch, inputs}}, {"w", {units, inputs}}}, "nn.dense(%x, %w)", random);
  }
}

TEST(NeuralNetworkGradientTest, DenseWithUnknownBatch) {
  std::mt19937 random(102);
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t batch = Draw(random, 1, 4), inputs = Draw(random, 2, 5);
    const int64_t units = Draw(random, 2, 5);
    CheckWeighted({{"x", {batch, inputs}, Values::kUniform, {true, false}}, {"w", {units, inputs}}},
                  "nn.dense(%x, %w, units=" + std::to_string(units) + ")", random);
  }
}

TEST(NeuralNetworkGradientTest, DenseOfVectorsAndBatchesOfMatrices) {
  std::mt19937 random(103);
  const int64_t inputs = Draw(random, 2, 5), units = Draw(random, 2, 4);
  CheckWeighted({{"x", {inputs}}, {"w", {units, inputs}}}, "nn.dense(%x, %w)", random);
  CheckWeighted({{"x", {2, Draw(random, 1, 3), inputs}}, {"w", {units, inputs}}},
                "nn.dense(%x, %w)", random);
}

TEST(NeuralNetworkGradientTest, MatmulWithEachTranspose) {
  std::mt19937 random(104);
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      for (size_t rank : {2, 3}) {
        const int64_t rows = Draw(random, 1, 4), reduction = Draw(random, 2, 4);
        const int64_t columns = Draw(random, 1, 4);
        Shape a = transpose_a ? Shape{reduction, rows} : Shape{rows, reduction};
        if (rank == 3) a.insert(a.begin(), Draw(random, 1, 3));
        const Shape b = transpose_b ? Shape{columns, reduction} : Shape{reduction, columns};
        CheckWeighted({{"a", a}, {"b", b}},
                      std::string("nn.matmul(%a, %b, transpose_a=") +
                          (transpose_a ? "True" : "False") +
                          ", transpose_b=" + (transpose_b ? "True" : "False") + ")",
                      random);
      }
    }
  }
  // A vector on the left.
  CheckWeighted({{"a", {3}}, {"b", {4, 3}}}, "nn.matmul(%a, %b, transpose_b=True)", random);
}

TEST(NeuralNetworkGradientTest, BatchMatmulWithEachTransposeAndBroadcastBatches) {
  std::mt19937 random(105);
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      const int64_t batch = Draw(random, 2, 3), rows = Draw(random, 1, 3);
      const int64_t reduction = Draw(random, 2, 4), columns = Draw(random, 1, 3);
      // Alternately the left, the right or neither operand broadcasts a batch of 1.
      const int64_t broadcast = Draw(random, 0, 2);
      const int64_t a_batch = broadcast == 1 ? 1 : batch, b_batch = broadcast == 2 ? 1 : batch;
      const Shape a =
          transpose_a ? Shape{a_batch, reduction, rows} : Shape{a_batch, rows, reduction};
      const Shape b =
          transpose_b ? Shape{b_batch, columns, reduction} : Shape{b_batch, reduction, columns};
      CheckWeighted({{"a", a}, {"b", b}},
                    std::string("nn.batch_matmul(%a, %b, transpose_a=") +
                        (transpose_a ? "True" : "False") +
                        ", transpose_b=" + (transpose_b ? "True" : "False") + ")",
                    random);
    }
  }
  CheckWeighted({{"a", {1, 2, 3}}, {"b", {3, 4, 3}}}, "nn.batch_matmul(%a, %b)", random);
  CheckWeighted({{"a", {3, 2, 3}}, {"b", {1, 4, 3}}}, "nn.batch_matmul(%a, %b)", random);
}

// ---- per-channel operators, activations, softmax ---------------------------------------------

TEST(NeuralNetworkGradientTest, BiasAddAlongEachAxis) {
  std::mt19937 random(106);
  const Shape shape = {2, Draw(random, 2, 3), Draw(random, 2, 3), 2};
  for (int64_t axis : {1, -1, 0, 2}) {
    const int64_t normalized = axis < 0 ? axis + 4 : axis;
    CheckWeighted({{"x", shape}, {"b", {shape[normalized]}}},
                  "nn.bias_add(%x, %b, axis=" + std::to_string(axis) + ")", random);
  }
}

TEST(NeuralNetworkGradientTest, LeakyRelu) {
  std::mt19937 random(107);
  for (int draw = 0; draw < 2; ++draw) {
    CheckWeighted({{"x", {Draw(random, 1, 4), Draw(random, 2, 5)}, Values::kAwayFromZero}},
                  "nn.leaky_relu(%x, alpha=0.2)", random);
  }
}

TEST(NeuralNetworkGradientTest, PReluAlongEachAxis) {
  std::mt19937 random(108);
  const Shape shape = {2, Draw(random, 2, 3), Draw(random, 2, 4)};
  for (int64_t axis : {1, -1}) {
    const int64_t normalized = axis < 0 ? axis + 3 : axis;
    CheckWeighted({{"x", shape, Values::kAwayFromZero}, {"alpha", {shape[normalized]}}},
                  "nn.prelu(%x, %alpha, axis=" + std::to_string(axis) + ")", random);
  }
}

TEST(NeuralNetworkGradientTest, SoftmaxAndLogSoftmaxAlongEachAxis) {
  std::mt19937 random(109);
  for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
    for (int64_t axis : {-1, 0, 1}) {
      const Shape shape = {Draw(random, 2, 3), Draw(random, 2, 4), Draw(random, 2, 3)};
      CheckWeighted({{"x", shape}}, std::string(op) + "(%x, axis=" + std::to_string(axis) + ")",
                    random);
    }
  }
}

// ---- normalisations -------------------------------------------------------------------------

// Every output of batch_norm weighted, the moving statistics included.
void CheckBatchNorm(const Shape& shape, int64_t axis, const std::string& flags,
                    std::mt19937& random) {
  const int64_t channels = shape[axis < 0 ? axis + shape.size() : axis];
  std::vector<Param> params = {{"x", shape},
                               {"gamma", {channels}},
                               {"beta", {channels}},
                               {"mean", {channels}},
                               {"var", {channels}, Values::kPositive},
                               {"c", shape},
                               {"c1", {channels}},
                               {"c2", {channels}}};
  std::vector<Value> arguments;
  for (const Param& param : params) arguments.push_back(DrawTensor(param, random));
  const std::string program =
      "def @main(" + Signature(params) + ") {\n" +
      "  let %t = nn.batch_norm(%x, %gamma, %beta, %mean, %var, axis=" + std::to_string(axis) +
      flags + ");\n" + "  (multiply(%t.0, %c), multiply(%t.1, %c1), multiply(%t.2, %c2))\n}\n";
  SCOPED_TRACE(program);
  CheckGradient(program, arguments);
}

TEST(NeuralNetworkGradientTest, BatchNormOfEveryInput) {
  std::mt19937 random(110);
  CheckBatchNorm({2, Draw(random, 2, 3), Draw(random, 2, 3), 2}, 1, "", random);
  CheckBatchNorm({Draw(random, 2, 4), Draw(random, 2, 4)}, -1, ", epsilon=0.1", random);
  CheckBatchNorm({2, 3, Draw(random, 2, 3)}, 1, ", scale=False, center=False", random);
}

TEST(NeuralNetworkGradientTest, LayerNorm) {
  std::mt19937 random(111);
  for (int64_t axis : {-1, 1}) {
    const Shape shape = {2, Draw(random, 2, 4), Draw(random, 2, 4)};
    const int64_t channels = shape[axis < 0 ? axis + 3 : axis];
    CheckWeighted({{"x", shape}, {"gamma", {channels}}, {"beta", {channels}}},
                  "nn.layer_norm(%x, %gamma, %beta, axis=" + std::to_string(axis) + ")", random);
  }
  CheckWeighted({{"x", {3, 4}}, {"gamma", {4}}, {"beta", {4}}},
                "nn.layer_norm(%x, %gamma, %beta, scale=False, center=False)", random);
}

TEST(NeuralNetworkGradientTest, InstanceNorm) {
  std::mt19937 random(112);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {2, Draw(random, 2, 3), Draw(random, 2, 3), Draw(random, 2, 3)};
    CheckWeighted({{"x", shape}, {"gamma", {shape[1]}}, {"beta", {shape[1]}}},
                  "nn.instance_norm(%x, %gamma, %beta, epsilon=0.01)", random);
  }
  CheckWeighted({{"x", {2, 4, 3}}, {"gamma", {3}}, {"beta", {3}}},
                "nn.instance_norm(%x, %gamma, %beta, axis=2)", random);
}

TEST(NeuralNetworkGradientTest, GroupNorm) {
  std::mt19937 random(113);
  for (int64_t groups : {2, 1, 4}) {
    const Shape shape = {2, 4, Draw(random, 2, 3), Draw(random, 1, 2)};
    CheckWeighted({{"x", shape}, {"gamma", {4}}, {"beta", {4}}},
                  "nn.group_norm(%x, %gamma, %beta, num_groups=" + std::to_string(groups) + ")",
                  random);
  }
  CheckWeighted({{"x", {2, 3, 4}}, {"gamma", {4}}, {"beta", {4}}},
                "nn.group_norm(%x, %gamma, %beta, num_groups=2, axis=2)", random);
}

// ---- convolution ----------------------------------------------------------------------------

struct ConvolutionCase {
  Shape data, weight;
  std::string attrs;
};

TEST(NeuralNetworkGradientTest, Conv2DWithEachGeometry) {
  std::mt19937 random(114);
  auto spatial = [&random] { return Draw(random, 4, 5); };
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t height = spatial(), width = spatial();
    const std::vector<ConvolutionCase> cases = {
        {{1, 2, height, width}, {2, 2, 3, 3}, ""},
        {{1, 2, height, width}, {2, 2, 3, 3}, ", strides=[2, 2], padding=[1, 1]"},
        {{1, 2, height, width}, {3, 2, 2, 3}, ", strides=[2, 1], padding=[1, 0, 0, 2]"},
        {{1, 2, height, width}, {2, 2, 2, 2}, ", dilation=[2, 2], padding=[1, 1]"},
        {{1, 4, height, width}, {2, 2, 3, 3}, ", groups=2, padding=[1, 1]"},
        {{1, 2, height, width}, {2, 1, 3, 3}, ", groups=2, strides=[2, 2]"},  // depthwise
        {{2, 2, height, width}, {4, 1, 3, 3}, ", groups=2, channels=4, kernel_size=[3, 3]"},
    };
    for (const ConvolutionCase& test : cases) {
      CheckWeighted({{"x", test.data}, {"w", test.weight}}, "nn.conv2d(%x, %w" + test.attrs + ")",
                    random);
    }
  }
}

TEST(NeuralNetworkGradientTest, Conv2DInOtherLayouts) {
  std::mt19937 random(115);
  const int64_t height = Draw(random, 4, 5), width = Draw(random, 4, 5);
  CheckWeighted({{"x", {1, height, width, 2}}, {"w", {3, 3, 2, 2}}},
                "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], data_layout=\"NHWC\", "
                "kernel_layout=\"HWIO\")",
                random);
  CheckWeighted({{"x", {1, 2, height, width}}, {"w", {2, 3, 3, 2}}},
                "nn.conv2d(%x, %w, padding=[1, 1], kernel_layout=\"OHWI\", out_layout=\"NHWC\")",
                random);
}

TEST(NeuralNetworkGradientTest, Conv2DTranspose) {
  std::mt19937 random(116);
  for (int draw = 0; draw < 2; ++draw) {
    const int64_t height = Draw(random, 2, 3), width = Draw(random, 2, 3);
    const std::vector<ConvolutionCase> cases = {
        {{1, 2, height, width}, {2, 2, 3, 3}, ""},
        {{1, 2, height, width}, {2, 1, 3, 3}, ", strides=[2, 2], padding=[1, 1]"},
        {{1, 2, height, width},
         {2, 2, 2, 3},
         ", strides=[2, 2], output_padding=[1, 1], padding=[0, 1]"},
        {{1, 4, height, width}, {4, 1, 3, 3}, ", groups=2, dilation=[2, 1]"},
    };
    for (const ConvolutionCase& test : cases) {
      CheckWeighted({{"x", test.data}, {"w", test.weight}},
                    "nn.conv2d_transpose(%x, %w" + test.attrs + ")", random);
    }
  }
}

// ---- pooling ----------------------------------------------------------------------------------

// An NCHW shape rearranged to NHWC where the attributes ask for that layout.
Shape InLayoutOf(const std::string& attrs, const Shape& nchw) {
  if (attrs.find("layout=\"NHWC\"") == std::string::npos) return nchw;
  return {nchw[0], nchw[2], nchw[3], nchw[1]};
}

TEST(NeuralNetworkGradientTest, MaxPool2D) {
  std::mt19937 random(117);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {1, 2, Draw(random, 4, 5), Draw(random, 4, 5)};
    for (const char* attrs :
         {"pool_size=[2, 2], strides=[2, 2]", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]",
          "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 1, 1], ceil_mode=True",
          "pool_size=[2, 2], dilation=[2, 2]", "pool_size=[2, 2], layout=\"NHWC\""}) {
      CheckWeighted({{"x", InLayoutOf(attrs, shape), Values::kDistinct}},
                    std::string("nn.max_pool2d(%x, ") + attrs + ")", random);
    }
  }
}

TEST(NeuralNetworkGradientTest, AvgPool2D) {
  std::mt19937 random(118);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {1, 2, Draw(random, 4, 5), Draw(random, 4, 5)};
    for (const char* attrs :
         {"pool_size=[2, 2], strides=[2, 2]", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]",
          "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True",
          "pool_size=[3, 2], strides=[2, 2], padding=[1, 0, 0, 1], ceil_mode=True",
          "pool_size=[2, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, "
          "count_include_pad=True",
          "pool_size=[2, 2], dilation=[2, 1], layout=\"NHWC\", out_layout=\"NCHW\""}) {
      CheckWeighted({{"x", InLayoutOf(attrs, shape)}},
                    std::string("nn.avg_pool2d(%x, ") + attrs + ")", random);
    }
  }
}

TEST(NeuralNetworkGradientTest, GlobalPools) {
  std::mt19937 random(119);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {Draw(random, 1, 2), 2, Draw(random, 2, 4), Draw(random, 2, 4)};
    CheckWeighted({{"x", shape, Values::kDistinct}}, "nn.global_max_pool2d(%x)", random);
    CheckWeighted({{"x", shape}}, "nn.global_avg_pool2d(%x)", random);
  }
  CheckWeighted({{"x", {1, 3, 3, 2}}}, "nn.global_avg_pool2d(%x, layout=\"NHWC\")", random);
}

TEST(NeuralNetworkGradientTest, AdaptivePools) {
  std::mt19937 random(120);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {1, 2, Draw(random, 3, 5), Draw(random, 3, 5)};
    // Windows that overlap (5 -> 3), that tile (4 -> 2), that repeat cells (3 -> 4).
    for (const char* size : {"[3, 2]", "[2, 4]", "[4, 3]", "[2]"}) {
      CheckWeighted({{"x", shape, Values::kDistinct}},
                    std::string("nn.adaptive_max_pool2d(%x, output_size=") + size + ")", random);
      CheckWeighted({{"x", shape}},
                    std::string("nn.adaptive_avg_pool2d(%x, output_size=") + size + ")", random);
    }
  }
}

// The average pools' gradients are differentiable in turn.
TEST(NeuralNetworkGradientTest, AveragePoolGradientsOfOutGrad) {
  std::mt19937 random(121);
  const Shape shape = {1, 2, Draw(random, 4, 5), Draw(random, 4, 5)};
  const std::string attrs = "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]";
  Value pooled =
      EvaluateProgram("def @main(%x: " + TypeText(shape) + ") { nn.avg_pool2d(%x, " + attrs + ") }",
                      {RandomTensor(shape, random)});
  const Shape pooled_shape = static_cast<const Tensor&>(*pooled).shape();
  CheckWeighted({{"g", pooled_shape}, {"x", shape}}, "nn.avg_pool2d_grad(%g, %x, " + attrs + ")",
                random);
  CheckWeighted({{"g", {1, 2, 2, 3}}, {"x", shape}},
                "nn.adaptive_avg_pool2d_grad(%g, %x, output_size=[2, 3])", random);
}

// ---- conv2d_backward_weight ----------------------------------------------------------------

TEST(NeuralNetworkGradientTest, Conv2DBackwardWeightOfBothInputs) {
  std::mt19937 random(122);
  struct Case {
    Shape kernel;
    const char* attrs;
  };
  for (int draw = 0; draw < 2; ++draw) {
    const Shape data = {1, 2, Draw(random, 4, 5), Draw(random, 4, 5)};
    for (const Case& test :
         {Case{{2, 2, 3, 3}, "kernel_size=[3, 3]"},
          Case{{2, 2, 3, 3}, "kernel_size=[3, 3], strides=[2, 2], padding=[1, 1]"},
          Case{{2, 1, 2, 2}, "kernel_size=[2, 2], dilation=[2, 2], groups=2"}}) {
      Value output =
          EvaluateProgram("def @main(%x: " + TypeText(data) + ", %w: " + TypeText(test.kernel) +
                              ") { nn.conv2d(%x, %w, " + test.attrs + ") }",
                          {RandomTensor(data, random), RandomTensor(test.kernel, random)});
      const Shape grad = static_cast<const Tensor&>(*output).shape();
      CheckWeighted({{"g", grad}, {"x", data}},
                    std::string("nn.conv2d_backward_weight(%g, %x, ") + test.attrs + ")", random);
    }
  }
}

// The gradient of a gradient: @main differentiates conv2d, and the check
// differentiates @main.
TEST(NeuralNetworkGradientTest, Conv2DSecondOrder) {
  std::mt19937 random(123);
  const Shape data = {1, 2, 4, 4}, weight = {2, 2, 3, 3}, output = {1, 2, 2, 2};
  const std::string program =
      "def @f(%x: " + TypeText(data) + ", %w: " + TypeText(weight) + ", %c: " + TypeText(output) +
      ") {\n"
      "  multiply(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]), %c)\n}\n"
      "def @main(%x: " +
      TypeText(data) + ", %w: " + TypeText(weight) + ", %c: " + TypeText(output) +
      ", %d: " + TypeText(data) +
      ") {\n"
      "  let %r = @f_grad(%x, %w, %c);\n"
      "  add(multiply(%r.1.0, %d), multiply(%r.1.0, %r.1.0))\n}\n";
  CheckGradient(program, {RandomTensor(data, random), RandomTensor(weight, random),
                          RandomTensor(output, random), RandomTensor(data, random)});
}

// ---- pad, flatten, dropout, resize ------------------------------------------------------------

TEST(NeuralNetworkGradientTest, PadInEachMode) {
  std::mt19937 random(124);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {Draw(random, 2, 3), Draw(random, 3, 4), Draw(random, 3, 4)};
    const std::string widths = "pad_width=[[0, 0], [" + std::to_string(Draw(random, 0, 2)) + ", " +
                               std::to_string(Draw(random, 1, 2)) + "], [2, " +
                               std::to_string(Draw(random, 0, 2)) + "]]";
    CheckWeighted({{"x", shape}, {"v", {}}}, "nn.pad(%x, %v, " + widths + ")", random);
    for (const char* mode : {"edge", "reflect"}) {
      CheckWeighted({{"x", shape}}, "nn.pad(%x, 0.5f64, " + widths + ", pad_mode=\"" + mode + "\")",
                    random);
    }
  }
}

TEST(NeuralNetworkGradientTest, BatchFlattenAndDropout) {
  std::mt19937 random(125);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {Draw(random, 1, 3), Draw(random, 1, 3), Draw(random, 2, 4)};
    CheckWeighted({{"x", shape}}, "nn.batch_flatten(%x)", random);
    CheckWeighted({{"x", shape}}, "nn.dropout(%x, rate=0.25).0", random);
  }
}

TEST(NeuralNetworkGradientTest, Resize2DInEachMethodAndCoordinateMode) {
  std::mt19937 random(126);
  for (int draw = 0; draw < 2; ++draw) {
    const Shape shape = {1, 2, Draw(random, 2, 4), Draw(random, 2, 4)};
    const std::string size = "size=[" + std::to_string(Draw(random, 2, 6)) + ", " +
                             std::to_string(Draw(random, 2, 6)) + "]";
    for (const char* attrs :
         {"", ", coordinate_transformation_mode=\"align_corners\"",
          ", coordinate_transformation_mode=\"asymmetric\"",
          ", coordinate_transformation_mode=\"pytorch_half_pixel\"",
          ", method=\"nearest_neighbor\"",
          ", method=\"nearest_neighbor\", coordinate_transformation_mode=\"align_corners\"",
          ", method=\"nearest_neighbor\", coordinate_transformation_mode=\"tf_half_pixel_for_nn\", "
          "rounding_method=\"round_prefer_ceil\""}) {
      CheckWeighted({{"x", shape}}, "image.resize2d(%x, " + size + attrs + ")", random);
    }
  }
  CheckWeighted({{"x", {1, 3, 2, 2}}}, "image.resize2d(%x, size=[4, 3], layout=\"NHWC\")", random);
}

// ---- the new operators' values against plain loops --------------------------------------------

// An NCHW tensor's element.
struct Nchw {
  Shape shape;
  std::vector<double> values;
  double& at(int64_t n, int64_t c, int64_t y, int64_t x) {
    return values[((n * shape[1] + c) * shape[2] + y) * shape[3] + x];
  }
};

Nchw NchwOf(const Value& value) {
  const Tensor& tensor = static_cast<const Tensor&>(*value);
  const double* data = tensor.data<double>();
  return {tensor.shape(), std::vector<double>(data, data + tensor.element_count())};
}

void ExpectValues(const Value& actual, const Nchw& expected) {
  const Nchw got = NchwOf(actual);
  ASSERT_EQ(got.shape, expected.shape);
  for (size_t index = 0; index < got.values.size(); ++index) {
    EXPECT_NEAR(got.values[index], expected.values[index], 1e-12) << "element " << index;
  }
}

// One spatial axis of a pool's windows: window i's cells, in order.
struct WindowCells {
  std::function<std::vector<int64_t>(int64_t window)> cells;
  std::function<int64_t(int64_t window)> divisor;  // averages
};

WindowCells Sliding(int64_t extent, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t before, int64_t after, bool count_include_pad) {
  WindowCells windows;
  windows.cells = [=](int64_t window) {
    std::vector<int64_t> cells;
    for (int64_t r = 0; r < kernel; ++r) cells.push_back(window * stride - before + r * dilation);
    return cells;
  };
  windows.divisor = [=](int64_t window) {
    int64_t count = 0;
    for (int64_t r = 0; r < kernel; ++r) {
      const int64_t cell = window * stride - before + r * dilation;
      const int64_t low = count_include_pad ? -before : 0;
      const int64_t high = count_include_pad ? extent + after : extent;
      count += cell >= low && cell < high;
    }
    return count;
  };
  return windows;
}

WindowCells AdaptiveCells(int64_t extent, int64_t out) {
  WindowCells windows;
  windows.cells = [=](int64_t window) {
    std::vector<int64_t> cells;
    const int64_t start = window * extent / out;
    const int64_t end = ((window + 1) * extent + out - 1) / out;
    for (int64_t cell = start; cell < end; ++cell) cells.push_back(cell);
    return cells;
  };
  windows.divisor = [=](int64_t window) { return int64_t(windows.cells(window).size()); };
  return windows;
}

// The pool gradient by its definition: each window's out_grad to its first
// maximal cell (max) or shared by its divisor (average).
Nchw PoolGradientByLoops(const Value& out_grad, const Value& data, const WindowCells& rows,
                         const WindowCells& columns, bool average) {
  Nchw gradient = NchwOf(out_grad), input = NchwOf(data);
  Nchw result{input.shape, std::vector<double>(input.values.size(), 0.0)};
  const Shape& in = input.shape;
  for (int64_t n = 0; n < in[0]; ++n) {
    for (int64_t c = 0; c < in[1]; ++c) {
      for (int64_t i = 0; i < gradient.shape[2]; ++i) {
        for (int64_t j = 0; j < gradient.shape[3]; ++j) {
          const double g = gradient.at(n, c, i, j);
          int64_t best_row = -1, best_column = -1;
          double best = -INFINITY;
          for (int64_t row : rows.cells(i)) {
            for (int64_t column : columns.cells(j)) {
              if (row < 0 || row >= in[2] || column < 0 || column >= in[3]) continue;
              if (average) {
                result.at(n, c, row, column) += g / static_cast<double>(std::max<int64_t>(
                                                        rows.divisor(i) * columns.divisor(j), 1));
              } else if (input.at(n, c, row, column) > best) {
                best = input.at(n, c, row, column);
                best_row = row;
                best_column = column;
              }
            }
          }
          if (!average && best_row >= 0) result.at(n, c, best_row, best_column) += g;
        }
      }
    }
  }
  return result;
}

TEST(NeuralNetworkGradientTest, PoolGradientOperatorsMatchLoops) {
  std::mt19937 random(127);
  for (int draw = 0; draw < 3; ++draw) {
    const int64_t height = Draw(random, 4, 6), width = Draw(random, 4, 6);
    const Shape shape = {2, 2, height, width};
    // Ties among the data: a max window's first maximum must win.
    Value data = DrawTensor({"x", shape}, random);
    double* values = static_cast<Tensor&>(*data).data<double>();
    for (int64_t index = 0; index < CountOf(shape); index += 3)
      values[index] = std::round(values[index]);

    struct SlidingCase {
      int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
      Shape padding;  // top, left, bottom, right
      bool ceil_mode, count_include_pad;
    };
    for (const SlidingCase& test : {SlidingCase{2, 2, 2, 2, 1, 1, {0, 0, 0, 0}, false, false},
                                    SlidingCase{3, 3, 1, 2, 1, 1, {1, 1, 1, 1}, false, false},
                                    SlidingCase{3, 2, 2, 2, 1, 2, {1, 0, 0, 1}, true, true},
                                    SlidingCase{2, 3, 2, 1, 2, 1, {0, 1, 1, 1}, true, false}}) {
      const std::string attrs = "pool_size=" + ListText({test.kernel_h, test.kernel_w}) +
                                ", strides=" + ListText({test.stride_h, test.stride_w}) +
                                ", dilation=" + ListText({test.dilation_h, test.dilation_w}) +
                                ", padding=" + ListText(test.padding) +
                                ", ceil_mode=" + (test.ceil_mode ? "True" : "False");
      const std::string average_attrs =
          attrs + ", count_include_pad=" + (test.count_include_pad ? "True" : "False");
      Value pooled = EvaluateProgram(
          "def @main(%x: " + TypeText(shape) + ") { nn.avg_pool2d(%x, " + average_attrs + ") }",
          {data});
      const Shape out = static_cast<const Tensor&>(*pooled).shape();
      Value out_grad = RandomTensor(out, random);
      const std::string signature =
          "def @main(%g: " + TypeText(out) + ", %x: " + TypeText(shape) + ") { ";
      const WindowCells rows = Sliding(height, test.kernel_h, test.stride_h, test.dilation_h,
                                       test.padding[0], test.padding[2], test.count_include_pad);
      const WindowCells columns = Sliding(width, test.kernel_w, test.stride_w, test.dilation_w,
                                          test.padding[1], test.padding[3], test.count_include_pad);
      SCOPED_TRACE(average_attrs);
      ExpectValues(EvaluateProgram(signature + "nn.max_pool2d_grad(%g, %x, " + attrs + ") }",
                                   {out_grad, data}),
                   PoolGradientByLoops(out_grad, data, rows, columns, false));
      ExpectValues(
          EvaluateProgram(signature + "nn.avg_pool2d_grad(%g, %x, " + average_attrs + ") }",
                          {out_grad, data}),
          PoolGradientByLoops(out_grad, data, rows, columns, true));
    }
    for (const Shape& size : {Shape{3, 2}, Shape{height + 1, 2}, Shape{1, width}}) {
      const Shape out = {2, 2, size[0], size[1]};
      Value out_grad = RandomTensor(out, random);
      const std::string call = "(%g, %x, output_size=" + ListText(size) + ") }";
      const std::string signature =
          "def @main(%g: " + TypeText(out) + ", %x: " + TypeText(shape) + ") { ";
      const WindowCells rows = AdaptiveCells(height, size[0]);
      const WindowCells columns = AdaptiveCells(width, size[1]);
      SCOPED_TRACE(ListText(size));
      ExpectValues(
          EvaluateProgram(signature + "nn.adaptive_max_pool2d_grad" + call, {out_grad, data}),
          PoolGradientByLoops(out_grad, data, rows, columns, false));
      ExpectValues(
          EvaluateProgram(signature + "nn.adaptive_avg_pool2d_grad" + call, {out_grad, data}),
          PoolGradientByLoops(out_grad, data, rows, columns, true));
    }
  }
}

TEST(NeuralNetworkGradientTest, Conv2DBackwardWeightMatchesLoops) {
  std::mt19937 random(128);
  struct Case {
    int64_t channels, out_channels, groups, kernel_h, kernel_w, stride, dilation;
    Shape padding;  // top, left, bottom, right
  };
  for (int draw = 0; draw < 2; ++draw) {
    for (const Case& test :
         {Case{2, 3, 1, 3, 3, 1, 1, {0, 0, 0, 0}}, Case{2, 2, 1, 3, 2, 2, 1, {1, 0, 0, 1}},
          Case{4, 2, 2, 2, 2, 1, 2, {1, 1, 1, 1}}, Case{3, 3, 3, 3, 3, 2, 1, {1, 1, 1, 1}}}) {
      const int64_t batch = Draw(random, 1, 2);
      const int64_t height = Draw(random, 4, 5), width = Draw(random, 4, 5);
      const Shape data_shape = {batch, test.channels, height, width};
      const int64_t out_h =
          (height + test.padding[0] + test.padding[2] - test.dilation * (test.kernel_h - 1) - 1) /
              test.stride +
          1;
      const int64_t out_w =
          (width + test.padding[1] + test.padding[3] - test.dilation * (test.kernel_w - 1) - 1) /
              test.stride +
          1;
      const Shape grad_shape = {batch, test.out_channels, out_h, out_w};
      Value data = RandomTensor(data_shape, random), grad = RandomTensor(grad_shape, random);
      const std::string attrs = "kernel_size=" + ListText({test.kernel_h, test.kernel_w}) +
                                ", strides=" + ListText({test.stride, test.stride}) +
                                ", dilation=" + ListText({test.dilation, test.dilation}) +
                                ", padding=" + ListText(test.padding) +
                                ", groups=" + std::to_string(test.groups);
      SCOPED_TRACE(attrs);
      Value weight = EvaluateProgram("def @main(%g: " + TypeText(grad_shape) +
                                         ", %x: " + TypeText(data_shape) +
                                         ") { nn.conv2d_backward_weight(%g, %x, " + attrs + ") }",
                                     {grad, data});
      Nchw x = NchwOf(data), g = NchwOf(grad);
      const int64_t per_group = test.channels / test.groups;
      const int64_t out_per_group = test.out_channels / test.groups;
      Nchw expected{{test.out_channels, per_group, test.kernel_h, test.kernel_w},
                    std::vector<double>(
                        size_t(test.out_channels * per_group * test.kernel_h * test.kernel_w), 0)};
      for (int64_t k = 0; k < test.out_channels; ++k) {
        for (int64_t c = 0; c < per_group; ++c) {
          for (int64_t ry = 0; ry < test.kernel_h; ++ry) {
            for (int64_t rx = 0; rx < test.kernel_w; ++rx) {
              double sum = 0;
              for (int64_t n = 0; n < batch; ++n) {
                for (int64_t y = 0; y < out_h; ++y) {
                  for (int64_t x_ = 0; x_ < out_w; ++x_) {
                    const int64_t row = y * test.stride + ry * test.dilation - test.padding[0];
                    const int64_t column = x_ * test.stride + rx * test.dilation - test.padding[1];
                    if (row < 0 || row >= height || column < 0 || column >= width) continue;
                    sum += g.at(n, k, y, x_) *
                           x.at(n, (k / out_per_group) * per_group + c, row, column);
                  }
                }
              }
              expected.at(k, c, ry, rx) = sum;
            }
          }
        }
      }
      ExpectValues(weight, expected);
    }
  }
}

// ---- errors -----------------------------------------------------------------------------------

// The type error a program's checking reports.
std::string CheckingError(const std::string& program) {
  std::string text = "#[version = \"0.0.5\"]\n" + program;
  Diagnostics diagnostics("errors.relay", std::make_shared<const std::string>(text));
  compiler::ParseAndCheck(diagnostics);
  return diagnostics.FormatAll();
}

TEST(NeuralNetworkGradientTest, GradientOperatorsCheckTheirOperands) {
  EXPECT_NE(CheckingError("def @main(%g: Tensor[(1, 1, 3, 2), float64], %x: Tensor[(1, 1, 4, 4), "
                          "float64]) {\n  nn.max_pool2d_grad(%g, %x, pool_size=[2, 2], "
                          "strides=[2, 2])\n}\n")
                .find("'out_grad' Tensor[(1, 1, 3, 2), float64] is not the pool's output "
                      "Tensor[(1, 1, 2, 2), float64] at axis 2"),
            std::string::npos);
  EXPECT_NE(CheckingError("def @main(%g: Tensor[(1, 2, 2, 2), float64], %x: Tensor[(1, 2, 4, 4), "
                          "float64]) {\n  nn.conv2d_backward_weight(%g, %x)\n}\n")
                .find("attribute 'kernel_size' must give the kernel's [height, width], got None"),
            std::string::npos);
  EXPECT_NE(
      CheckingError("def @main(%g: Tensor[(1, 2, 3, 2), float64], %x: Tensor[(1, 2, 4, 4), "
                    "float64]) {\n  nn.conv2d_backward_weight(%g, %x, kernel_size=[3, 3])\n}\n")
          .find("the height of 'out_grad' is not conv2d's output height for 'data': 3 vs 2"),
      std::string::npos);
}

TEST(NeuralNetworkGradientTest, MaxPoolGradientIsNotDifferentiable) {
  const std::string program =
      "def @main(%g: Tensor[(1, 1, 2, 2), float64], %x: Tensor[(1, 1, 4, 4), float64]) {\n"
      "  nn.max_pool2d_grad(%g, %x, pool_size=[2, 2], strides=[2, 2])\n}\n";
  std::mt19937 random(129);
  try {
    CheckGradient(program,
                  {RandomTensor({1, 1, 2, 2}, random), RandomTensor({1, 1, 4, 4}, random)});
    ADD_FAILURE() << "expected a type error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kType);
    EXPECT_NE(error.message().find("nn.max_pool2d_grad is not differentiable"), std::string::npos)
        << error.message();
  }
}

TEST(NeuralNetworkGradientTest, StridedConvolutionOfUnknownHeightIsATypeError) {
  const std::string program =
      "def @main(%x: Tensor[(1, 1, ?, 4), float64], %w: Tensor[(1, 1, 3, 3), float64]) {\n"
      "  nn.conv2d(%x, %w, strides=[2, 2])\n}\n";
  std::mt19937 random(130);
  try {
    CheckGradient(program,
                  {RandomTensor({1, 1, 5, 4}, random), RandomTensor({1, 1, 3, 3}, random)});
    ADD_FAILURE() << "expected a type error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kType);
    EXPECT_NE(error.message().find("cannot differentiate nn.conv2d"), std::string::npos)
        << error.message();
  }
}

}  // namespace
}  // namespace relay::testing
