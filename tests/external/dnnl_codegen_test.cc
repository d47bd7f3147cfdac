// The oneDNN codegen against relay-vm's own kernels (RunOperator, tested
// against NumPy in tests/kernels), operator by operator on the same random
// inputs: convolutions of every kind alone, as composites and in chains that
// pass blocked layouts, residual blocks, pools, softmax, layer_norm, dense,
// matmul and batch_matmul; a `?` batch; units that fall back to relay-vm's
// kernels; its rules; its errors; weights kept with immutable tensors; and
// calls from several threads at once.
#include "kernels/external/dnnl/dnnl_codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/external/graph_test_util.h"

namespace relay::kernels::external {
namespace {

using namespace testing;

std::shared_ptr<const ExternalFunction> Load(const ExternalGraph& graph) {
  const ExternalCodegen& codegen = DnnlCodegen();
  return codegen.Load(graph, codegen.Compile(graph, "dnnl_0"), "dnnl_0");
}

// Within 1e-4 of the expected values' magnitude (sums of many products
// differ in their last bits by the order of summation); equal infinities.
void ExpectClose(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), kF32);
  ASSERT_TRUE(actual.on_host());
  float magnitude = 1.0f;
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const float value = expected.data<float>()[index];
    if (std::isfinite(value)) magnitude = std::max(magnitude, std::fabs(value));
  }
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const float want = expected.data<float>()[index], got = actual.data<float>()[index];
    if (got == want) continue;
    ASSERT_LE(std::fabs(got - want), 1e-4f * magnitude)
        << "element " << index << ": " << got << " vs " << want;
  }
}

// Runs `graph` through the codegen on random inputs of `shapes` and
// compares with relay-vm's kernels.
void ExpectMatchesReference(const ExternalGraph& graph, const std::vector<Shape>& shapes,
                            uint32_t seed = 1) {
  const std::vector<Ref<Tensor>> inputs = RandomInputs(shapes, seed);
  const Ref<Tensor> actual = Load(graph)->Run(inputs);
  ExpectClose(*actual, *Reference(graph, inputs));
}

// ---- convolution ---------------------------------------------------------------

struct ConvCase {
  std::string name;
  Shape data;
  Shape weight;
  Attrs attrs;
};

std::vector<ConvCase> ConvCases() {
  return {
      {"3x3", {1, 16, 10, 10}, {32, 16, 3, 3}, {{"padding", Ints({1, 1})}}},
      {"unpadded", {2, 8, 9, 7}, {16, 8, 3, 3}, {}},
      {"strided",
       {1, 16, 11, 11},
       {16, 16, 3, 3},
       {{"strides", Ints({2, 2})}, {"padding", Ints({1, 1})}}},
      {"dilated",
       {1, 8, 12, 12},
       {8, 8, 3, 3},
       {{"dilation", Ints({2, 2})}, {"padding", Ints({2, 2})}}},
      {"asymmetric",
       {1, 8, 9, 9},
       {8, 8, 3, 3},
       {{"padding", Ints({0, 1, 2, 1})}, {"strides", Ints({1, 2})}}},
      {"1x1", {2, 32, 7, 7}, {64, 32, 1, 1}, {}},
      {"stem",
       {1, 3, 32, 32},
       {16, 3, 7, 7},
       {{"strides", Ints({2, 2})}, {"padding", Ints({3, 3})}}},
      {"depthwise",
       {1, 32, 14, 14},
       {32, 1, 3, 3},
       {{"groups", AttrValue::Int(32)}, {"padding", Ints({1, 1})}}},
      {"depthwise_strided",
       {1, 24, 15, 15},
       {24, 1, 3, 3},
       {{"groups", AttrValue::Int(24)}, {"padding", Ints({1, 1})}, {"strides", Ints({2, 2})}}},
      {"grouped",
       {1, 16, 8, 8},
       {32, 8, 3, 3},
       {{"groups", AttrValue::Int(2)}, {"padding", Ints({1, 1})}}},
      {"odd_channels", {1, 5, 6, 6}, {7, 5, 3, 3}, {{"padding", Ints({1})}}},
  };
}

TEST(DnnlCodegenTest, Conv2DAlone) {
  for (const ConvCase& conv : ConvCases()) {
    SCOPED_TRACE(conv.name);
    GraphBuilder builder({F32(conv.data), F32(conv.weight)});
    builder.Add("nn.conv2d", {0, 1}, conv.attrs);
    ExpectMatchesReference(builder.graph(), {conv.data, conv.weight});
  }
}

TEST(DnnlCodegenTest, Conv2DWithBiasAndActivation) {
  for (const ConvCase& conv : ConvCases()) {
    SCOPED_TRACE(conv.name);
    const int64_t channels = conv.weight[0];
    // bias_add then relu; add of a (C, 1, 1) bias then clip; relu alone.
    {
      GraphBuilder builder({F32(conv.data), F32(conv.weight), F32({channels})});
      const int32_t y = builder.Add("nn.conv2d", {0, 1}, conv.attrs, "dnnl.conv2d_bias_relu");
      const int32_t biased = builder.Add("nn.bias_add", {y, 2}, {}, "dnnl.conv2d_bias_relu");
      builder.Add("nn.relu", {biased}, {}, "dnnl.conv2d_bias_relu");
      ExpectMatchesReference(builder.graph(), {conv.data, conv.weight, {channels}});
    }
    {
      GraphBuilder builder({F32(conv.data), F32(conv.weight), F32({channels, 1, 1})});
      const int32_t y = builder.Add("nn.conv2d", {0, 1}, conv.attrs, "dnnl.conv2d_bias_relu");
      const int32_t biased = builder.Add("add", {2, y}, {}, "dnnl.conv2d_bias_relu");
      builder.Add("clip", {biased},
                  {{"a_min", AttrValue::Float(0)}, {"a_max", AttrValue::Float(6)}},
                  "dnnl.conv2d_bias_relu");
      ExpectMatchesReference(builder.graph(), {conv.data, conv.weight, {channels, 1, 1}});
    }
    {
      GraphBuilder builder({F32(conv.data), F32(conv.weight)});
      const int32_t y = builder.Add("nn.conv2d", {0, 1}, conv.attrs, "dnnl.conv2d_relu");
      builder.Add("nn.relu", {y}, {}, "dnnl.conv2d_relu");
      ExpectMatchesReference(builder.graph(), {conv.data, conv.weight});
    }
  }
}

TEST(DnnlCodegenTest, Conv2DBiasWithoutActivation) {
  GraphBuilder builder({F32({1, 8, 6, 6}), F32({16, 8, 3, 3}), F32({1, 16, 1, 1})});
  const int32_t y = builder.Add("nn.conv2d", {0, 1}, {}, "dnnl.conv2d_bias_relu");
  builder.Add("add", {y, 2}, {}, "dnnl.conv2d_bias_relu");
  ExpectMatchesReference(builder.graph(), {{1, 8, 6, 6}, {16, 8, 3, 3}, {1, 16, 1, 1}});
}

TEST(DnnlCodegenTest, EachActivation) {
  for (const std::string activation : {"nn.relu", "clip", "nn.leaky_relu", "sigmoid", "tanh"}) {
    SCOPED_TRACE(activation);
    Attrs attrs;
    if (activation == "clip")
      attrs = {{"a_min", AttrValue::Float(-0.5)}, {"a_max", AttrValue::Float(0.75)}};
    if (activation == "nn.leaky_relu") attrs = {{"alpha", AttrValue::Float(0.2)}};
    GraphBuilder builder({F32({1, 4, 5, 5}), F32({8, 4, 3, 3}), F32({8})});
    const int32_t y =
        builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}}, "dnnl.conv2d_bias_relu");
    const int32_t biased = builder.Add("nn.bias_add", {y, 2}, {}, "dnnl.conv2d_bias_relu");
    builder.Add(activation, {biased}, attrs, "dnnl.conv2d_bias_relu");
    ExpectMatchesReference(builder.graph(), {{1, 4, 5, 5}, {8, 4, 3, 3}, {8}});
  }
}

// conv2d, bias, relu three times: one composite index shared by three
// instances, oneDNN's blocked layouts passed from one to the next.
TEST(DnnlCodegenTest, ChainOfConvolutions) {
  const std::string composite = "dnnl.conv2d_bias_relu";
  GraphBuilder builder({F32({1, 16, 12, 12}), F32({32, 16, 3, 3}), F32({32}), F32({32, 1, 3, 3}),
                        F32({32}), F32({16, 32, 1, 1}), F32({16})});
  int32_t x = 0;
  const std::vector<std::pair<int32_t, Attrs>> layers = {
      {1, {{"padding", Ints({1, 1})}}},
      {3, {{"padding", Ints({1, 1})}, {"strides", Ints({2, 2})}, {"groups", AttrValue::Int(32)}}},
      {5, {}},
  };
  for (const auto& [weight, attrs] : layers) {
    const int32_t y = builder.Add("nn.conv2d", {x, weight}, attrs, composite);
    const int32_t biased = builder.Add("nn.bias_add", {y, weight + 1}, {}, composite);
    x = builder.Add("nn.relu", {biased}, {}, composite);
  }
  ExpectMatchesReference(
      builder.graph(),
      {{1, 16, 12, 12}, {32, 16, 3, 3}, {32}, {32, 1, 3, 3}, {32}, {16, 32, 1, 1}, {16}});
}

// Two chains of conv2d then a pool then conv2d, the pools reading the
// convolutions' blocked results.
TEST(DnnlCodegenTest, ConvolutionsAndPools) {
  for (const std::string pool : {"nn.max_pool2d", "nn.avg_pool2d"}) {
    SCOPED_TRACE(pool);
    GraphBuilder builder({F32({2, 8, 16, 16}), F32({16, 8, 3, 3}), F32({16, 16, 3, 3})});
    const int32_t y = builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}});
    const int32_t pooled = builder.Add(
        pool, {y},
        {{"pool_size", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"padding", Ints({1, 1})}});
    const int32_t z = builder.Add("nn.conv2d", {pooled, 2}, {{"padding", Ints({1, 1})}});
    builder.Add("nn.global_avg_pool2d", {z});
    ExpectMatchesReference(builder.graph(), {{2, 8, 16, 16}, {16, 8, 3, 3}, {16, 16, 3, 3}});
  }
}

// A ResNet basic block: the residual a graph input (copied into the
// result's buffer) and an intermediate (summed in place).
TEST(DnnlCodegenTest, ResidualBlocks) {
  const std::vector<Shape> shapes = {{1, 16, 8, 8}, {16, 16, 3, 3}, {16}, {16, 16, 3, 3}, {16}};
  const Attrs same = {{"padding", Ints({1, 1})}};
  for (bool residual_is_input : {true, false}) {
    SCOPED_TRACE(residual_is_input ? "input residual" : "intermediate residual");
    GraphBuilder builder(
        {F32(shapes[0]), F32(shapes[1]), F32(shapes[2]), F32(shapes[3]), F32(shapes[4])});
    int32_t x = 0;
    if (!residual_is_input) {
      const int32_t stem = builder.Add("nn.conv2d", {0, 3}, same, "dnnl.conv2d_bias_relu");
      x = builder.Add("nn.bias_add", {stem, 4}, {}, "dnnl.conv2d_bias_relu");
    }
    const int32_t y = builder.Add("nn.conv2d", {x, 1}, same, "dnnl.conv2d_bias_relu");
    const int32_t y_biased = builder.Add("nn.bias_add", {y, 2}, {}, "dnnl.conv2d_bias_relu");
    const int32_t y_relu = builder.Add("nn.relu", {y_biased}, {}, "dnnl.conv2d_bias_relu");
    const std::string block = "dnnl.conv2d_bias_add_relu";
    const int32_t z = builder.Add("nn.conv2d", {y_relu, 3}, same, block);
    const int32_t z_biased = builder.Add("nn.bias_add", {z, 4}, {}, block);
    const int32_t summed = builder.Add("add", {x, z_biased}, {}, block);
    builder.Add("nn.relu", {summed}, {}, block);
    ExpectMatchesReference(builder.graph(), shapes);
  }
}

// A residual without a bias or activation, and one without an activation.
TEST(DnnlCodegenTest, ResidualVariants) {
  const std::string block = "dnnl.conv2d_bias_add_relu";
  {
    GraphBuilder builder({F32({1, 8, 5, 5}), F32({8, 8, 3, 3}), F32({1, 8, 5, 5})});
    const int32_t y = builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}}, block);
    builder.Add("add", {y, 2}, {}, block);
    ExpectMatchesReference(builder.graph(), {{1, 8, 5, 5}, {8, 8, 3, 3}, {1, 8, 5, 5}});
  }
  {
    GraphBuilder builder({F32({1, 8, 5, 5}), F32({8, 8, 3, 3}), F32({8, 1, 1})});
    const int32_t y = builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}}, block);
    const int32_t biased = builder.Add("add", {y, 2}, {}, block);
    builder.Add("add", {biased, 0}, {}, block);
    ExpectMatchesReference(builder.graph(), {{1, 8, 5, 5}, {8, 8, 3, 3}, {8, 1, 1}});
  }
}

// A batch norm's per-channel scale and shift (simplify_batch_norm.h) after
// a convolution, with and without its bias, a residual and an activation.
TEST(DnnlCodegenTest, Conv2DWithBatchNorm) {
  const std::string block = "dnnl.conv2d_bias_batch_norm_add_relu";
  const Attrs same = {{"padding", Ints({1, 1})}};
  for (bool bias : {false, true}) {
    for (bool residual : {false, true}) {
      SCOPED_TRACE(std::string(bias ? "bias" : "no bias") + (residual ? ", residual" : ""));
      const std::vector<Shape> shapes = {{2, 6, 7, 7}, {8, 6, 3, 3}, {8},
                                         {8, 1, 1},    {8, 1, 1},    {2, 8, 7, 7}};
      std::vector<ValueType> params;
      for (const Shape& shape : shapes) params.push_back(F32(shape));
      GraphBuilder builder(params);
      int32_t value = builder.Add("nn.conv2d", {0, 1}, same, block);
      if (bias) value = builder.Add("nn.bias_add", {value, 2}, {}, block);
      value = builder.Add("multiply", {3, value}, {}, block);
      value = builder.Add("add", {value, 4}, {}, block);
      if (residual) value = builder.Add("add", {value, 5}, {}, block);
      builder.Add("nn.relu", {value}, {}, block);
      ExpectMatchesReference(builder.graph(), shapes);
    }
  }
}

// ---- pools ---------------------------------------------------------------------

TEST(DnnlCodegenTest, Pools) {
  struct PoolCase {
    std::string op;
    Attrs attrs;
  };
  const std::vector<PoolCase> cases = {
      {"nn.max_pool2d",
       {{"pool_size", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"padding", Ints({1, 1})}}},
      {"nn.max_pool2d", {{"pool_size", Ints({2, 2})}, {"strides", Ints({2, 2})}}},
      {"nn.max_pool2d",
       {{"pool_size", Ints({3, 3})},
        {"strides", Ints({2, 2})},
        {"ceil_mode", AttrValue::Bool(true)}}},
      {"nn.max_pool2d",
       {{"pool_size", Ints({2, 2})}, {"dilation", Ints({2, 2})}, {"padding", Ints({1, 0, 0, 1})}}},
      {"nn.avg_pool2d",
       {{"pool_size", Ints({3, 3})},
        {"strides", Ints({2, 2})},
        {"padding", Ints({1, 1})},
        {"count_include_pad", AttrValue::Bool(true)}}},
      {"nn.avg_pool2d",
       {{"pool_size", Ints({3, 3})},
        {"strides", Ints({2, 2})},
        {"padding", Ints({1, 1})},
        {"count_include_pad", AttrValue::Bool(false)}}},
      {"nn.avg_pool2d",
       {{"pool_size", Ints({3, 2})},
        {"strides", Ints({2, 2})},
        {"padding", Ints({1, 1})},
        {"ceil_mode", AttrValue::Bool(true)}}},
      {"nn.avg_pool2d", {{"pool_size", Ints({2, 2})}, {"strides", Ints({1, 1})}}},
  };
  for (const PoolCase& pool : cases) {
    for (const Shape& data : {Shape{2, 16, 11, 11}, Shape{1, 3, 8, 9}}) {
      GraphBuilder builder({F32(data)});
      builder.Add(pool.op, {0}, pool.attrs);
      SCOPED_TRACE(pool.op + " " + builder.graph().operators[0].attrs[0].second.ToString() +
                   " on " + ShapeToString(data));
      ExpectMatchesReference(builder.graph(), {data});
    }
  }
  for (const Shape& data : {Shape{2, 16, 7, 7}, Shape{1, 3, 5, 1}}) {
    GraphBuilder builder({F32(data)});
    builder.Add("nn.global_avg_pool2d", {0});
    ExpectMatchesReference(builder.graph(), {data});
  }
}

// ceil_mode's last window lying wholly past the input (relay-vm pools no
// cell: -inf) runs on relay-vm's kernels.
TEST(DnnlCodegenTest, APoolOverNoCellFallsBack) {
  GraphBuilder builder({F32({1, 2, 4, 4})});
  builder.Add("nn.max_pool2d", {0},
              {{"pool_size", Ints({1, 1})},
               {"strides", Ints({2, 2})},
               {"ceil_mode", AttrValue::Bool(true)}});
  ASSERT_EQ(builder.graph().types[0].shape, (std::vector<int64_t>{1, 2, 3, 3}));
  ExpectMatchesReference(builder.graph(), {{1, 2, 4, 4}});
}

// ---- softmax and layer_norm ----------------------------------------------------

TEST(DnnlCodegenTest, SoftmaxOverAnyAxis) {
  for (int64_t axis : {-1, 0, 1, 2}) {
    SCOPED_TRACE(axis);
    GraphBuilder builder({F32({3, 5, 7})});
    builder.Add("nn.softmax", {0}, {{"axis", AttrValue::Int(axis)}});
    ExpectMatchesReference(builder.graph(), {{3, 5, 7}});
  }
  GraphBuilder builder({F32({10})});
  builder.Add("nn.softmax", {0});
  ExpectMatchesReference(builder.graph(), {{10}});
}

TEST(DnnlCodegenTest, LayerNorm) {
  for (bool center : {true, false}) {
    for (bool scale : {true, false}) {
      GraphBuilder builder({F32({2, 4, 16}), F32({16}), F32({16})});
      builder.Add("nn.layer_norm", {0, 1, 2},
                  {{"axis", AttrValue::Int(-1)},
                   {"epsilon", AttrValue::Float(1e-5)},
                   {"center", AttrValue::Bool(center)},
                   {"scale", AttrValue::Bool(scale)}});
      ExpectMatchesReference(builder.graph(), {{2, 4, 16}, {16}, {16}});
    }
  }
  GraphBuilder builder({F32({32}), F32({32}), F32({32})});
  builder.Add("nn.layer_norm", {0, 1, 2}, {{"axis", AttrValue::Int(0)}});
  ExpectMatchesReference(builder.graph(), {{32}, {32}, {32}});
}

// ---- dense, matmul, batch_matmul -----------------------------------------------

TEST(DnnlCodegenTest, DenseOfEachRank) {
  for (const Shape& data : {Shape{5, 7}, Shape{2, 3, 7}, Shape{7}, Shape{1, 7}}) {
    GraphBuilder builder({F32(data), F32({3, 7})});
    builder.Add("nn.dense", {0, 1}, {{"units", AttrValue::Int(3)}});
    ExpectMatchesReference(builder.graph(), {data, {3, 7}});
  }
}

TEST(DnnlCodegenTest, DenseWithBiasAndActivation) {
  const std::string composite = "dnnl.dense_bias_relu";
  for (const std::string activation : {"", "nn.relu", "sigmoid", "tanh", "nn.leaky_relu", "clip"}) {
    SCOPED_TRACE(activation);
    GraphBuilder builder({F32({6, 9}), F32({4, 9}), F32({4})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, composite);
    const int32_t biased = builder.Add("nn.bias_add", {dense, 2}, {}, composite);
    Attrs attrs;
    if (activation == "clip")
      attrs = {{"a_min", AttrValue::Float(-0.2)}, {"a_max", AttrValue::Float(0.3)}};
    if (!activation.empty()) builder.Add(activation, {biased}, attrs, composite);
    ExpectMatchesReference(builder.graph(), {{6, 9}, {4, 9}, {4}});
  }
  for (bool bias_first : {false, true}) {
    GraphBuilder builder({F32({2, 3, 9}), F32({4, 9}), F32({1, 4})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, composite);
    const int32_t biased = builder.Add(
        "add", bias_first ? std::vector<int32_t>{2, dense} : std::vector<int32_t>{dense, 2}, {},
        composite);
    builder.Add("nn.relu", {biased}, {}, composite);
    ExpectMatchesReference(builder.graph(), {{2, 3, 9}, {4, 9}, {1, 4}});
  }
  {
    GraphBuilder builder({F32({6, 9}), F32({4, 9})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, "dnnl.dense_relu");
    builder.Add("nn.relu", {dense}, {}, "dnnl.dense_relu");
    ExpectMatchesReference(builder.graph(), {{6, 9}, {4, 9}});
  }
  {
    const std::string residual = "dnnl.dense_bias_add_relu";
    GraphBuilder builder({F32({6, 9}), F32({4, 9}), F32({4}), F32({6, 4})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, residual);
    const int32_t biased =
        builder.Add("nn.bias_add", {dense, 2}, {{"axis", AttrValue::Int(-1)}}, residual);
    builder.Add("add", {3, biased}, {}, residual);
    ExpectMatchesReference(builder.graph(), {{6, 9}, {4, 9}, {4}, {6, 4}});
  }
}

// A dense whose weight is an immutable tensor (an executable's constant):
// reordered to oneDNN's preferred layout and kept with it.
TEST(DnnlCodegenTest, DenseWithImmutableWeight) {
  GraphBuilder builder({F32({8, 64}), F32({48, 64}), F32({48})});
  const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, "dnnl.dense_bias_relu");
  const int32_t biased = builder.Add("nn.bias_add", {dense, 2}, {}, "dnnl.dense_bias_relu");
  builder.Add("nn.relu", {biased}, {}, "dnnl.dense_bias_relu");
  std::vector<Ref<Tensor>> inputs = RandomInputs({{8, 64}, {48, 64}, {48}}, 3);
  inputs[1]->MarkImmutable();
  const auto function = Load(builder.graph());
  for (int repeat = 0; repeat < 2; ++repeat)
    ExpectClose(*function->Run(inputs), *Reference(builder.graph(), inputs));
}

TEST(DnnlCodegenTest, MatmulWithEachTranspose) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
        Shape a = batch, b = transpose_b ? Shape{5, 6} : Shape{6, 5};
        a.insert(a.end(), transpose_a ? std::initializer_list<int64_t>{6, 4}
                                      : std::initializer_list<int64_t>{4, 6});
        SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
        GraphBuilder builder({F32(a), F32(b)});
        builder.Add("nn.matmul", {0, 1},
                    {{"transpose_a", AttrValue::Bool(transpose_a)},
                     {"transpose_b", AttrValue::Bool(transpose_b)}});
        ExpectMatchesReference(builder.graph(), {a, b});
      }
    }
  }
}

TEST(DnnlCodegenTest, BatchMatmulWithEachTransposeAndBroadcast) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      for (const auto& [batch_a, batch_b] :
           std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {1, 3}, {3, 1}}) {
        const Shape a = transpose_a ? Shape{batch_a, 6, 4} : Shape{batch_a, 4, 6};
        const Shape b = transpose_b ? Shape{batch_b, 5, 6} : Shape{batch_b, 6, 5};
        SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
        GraphBuilder builder({F32(a), F32(b)});
        builder.Add("nn.batch_matmul", {0, 1},
                    {{"transpose_a", AttrValue::Bool(transpose_a)},
                     {"transpose_b", AttrValue::Bool(transpose_b)}});
        ExpectMatchesReference(builder.graph(), {a, b});
      }
    }
  }
}

// A transformer's attention scores: batch_matmul, softmax, batch_matmul.
TEST(DnnlCodegenTest, AttentionChain) {
  GraphBuilder builder({F32({4, 8, 16}), F32({4, 8, 16}), F32({4, 8, 16})});
  const int32_t scores = builder.Add("nn.batch_matmul", {0, 1});
  const int32_t weights = builder.Add("nn.softmax", {scores});
  builder.Add("nn.batch_matmul", {weights, 2}, {{"transpose_b", AttrValue::Bool(false)}});
  ExpectMatchesReference(builder.graph(), {{4, 8, 16}, {4, 8, 16}, {4, 8, 16}});
}

// ---- dynamic shapes and fallbacks ------------------------------------------------

TEST(DnnlCodegenTest, AnyBatchRunsAtEachSize) {
  GraphBuilder builder(
      {F32({kAnyDim, 8, 10, 10}), F32({16, 8, 3, 3}), F32({16}), F32({kAnyDim, 16, 10, 10})});
  const std::string block = "dnnl.conv2d_bias_add_relu";
  const int32_t y = builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}}, block);
  const int32_t biased = builder.Add("nn.bias_add", {y, 2}, {}, block);
  const int32_t summed = builder.Add("add", {biased, 3}, {}, block);
  const int32_t relu = builder.Add("nn.relu", {summed}, {}, block);
  const int32_t pooled = builder.Add("nn.max_pool2d", {relu}, {{"pool_size", Ints({2, 2})}});
  builder.Add("nn.softmax", {pooled}, {{"axis", AttrValue::Int(1)}});
  const auto function = Load(builder.graph());
  for (int64_t batch : {1, 3, 1}) {
    SCOPED_TRACE(batch);
    const std::vector<Ref<Tensor>> inputs =
        RandomInputs({{batch, 8, 10, 10}, {16, 8, 3, 3}, {16}, {batch, 16, 10, 10}}, 7);
    ExpectClose(*function->Run(inputs), *Reference(builder.graph(), inputs));
  }
  // The residual's `?` broadcasting at run time: relay-vm's kernels add it.
  const std::vector<Ref<Tensor>> inputs =
      RandomInputs({{2, 8, 10, 10}, {16, 8, 3, 3}, {16}, {1, 16, 10, 10}}, 9);
  ExpectClose(*function->Run(inputs), *Reference(builder.graph(), inputs));
}

// ---- weights kept with immutable tensors -----------------------------------------

// The second run of a convolution whose weight is immutable reuses the
// reordered weight kept with it: written afterwards (which Tensor's
// contract says leaves such values stale), the weight does not change the
// result. A mutable weight is reordered on every run.
TEST(DnnlCodegenTest, ImmutableWeightsAreReorderedOnce) {
  GraphBuilder builder({F32({1, 16, 8, 8}), F32({32, 16, 3, 3})});
  builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}});
  const auto function = Load(builder.graph());
  for (bool immutable : {true, false}) {
    SCOPED_TRACE(immutable ? "immutable" : "mutable");
    std::vector<Ref<Tensor>> inputs = RandomInputs({{1, 16, 8, 8}, {32, 16, 3, 3}}, 11);
    if (immutable) inputs[1]->MarkImmutable();
    const Ref<Tensor> first = function->Run(inputs);
    ExpectClose(*first, *Reference(builder.graph(), inputs));
    float* weight = inputs[1]->data<float>();
    for (int64_t index = 0; index < inputs[1]->element_count(); ++index) weight[index] *= 2;
    const Ref<Tensor> second = function->Run(inputs);
    if (immutable) {
      ExpectClose(*second, *first);
    } else {
      ExpectClose(*second, *Reference(builder.graph(), inputs));
    }
  }
}

// ---- threads -------------------------------------------------------------------

TEST(DnnlCodegenTest, FourThreadsShareOneFunction) {
  GraphBuilder builder(
      {F32({kAnyDim, 8, 12, 12}), F32({16, 8, 3, 3}), F32({16}), F32({16, 16, 3, 3})});
  const int32_t y =
      builder.Add("nn.conv2d", {0, 1}, {{"padding", Ints({1, 1})}}, "dnnl.conv2d_bias_relu");
  const int32_t biased = builder.Add("nn.bias_add", {y, 2}, {}, "dnnl.conv2d_bias_relu");
  const int32_t relu = builder.Add("nn.relu", {biased}, {}, "dnnl.conv2d_bias_relu");
  const int32_t z = builder.Add("nn.conv2d", {relu, 3}, {{"padding", Ints({1, 1})}});
  builder.Add("nn.global_avg_pool2d", {z});
  const auto function = Load(builder.graph());
  constexpr int kThreads = 4;
  std::vector<std::vector<Ref<Tensor>>> inputs;
  std::vector<Ref<Tensor>> expected;
  for (int thread = 0; thread < kThreads; ++thread) {
    const int64_t batch = 1 + thread % 2;
    inputs.push_back(
        RandomInputs({{batch, 8, 12, 12}, {16, 8, 3, 3}, {16}, {16, 16, 3, 3}}, 20 + thread));
    inputs.back()[1]->MarkImmutable();
    expected.push_back(Reference(builder.graph(), inputs.back()));
  }
  std::vector<std::vector<Ref<Tensor>>> results(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] {
      try {
        for (int repeat = 0; repeat < 20; ++repeat)
          results[thread].push_back(function->Run(inputs[thread]));
      } catch (const std::exception& error) {
        failures[thread] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int thread = 0; thread < kThreads; ++thread) {
    SCOPED_TRACE(thread);
    ASSERT_EQ(failures[thread], "");
    for (const Ref<Tensor>& result : results[thread]) ExpectClose(*result, *expected[thread]);
  }
}

// ---- errors --------------------------------------------------------------------

TEST(DnnlCodegenTest, AWrongShapedInputIsAnError) {
  // Channels `?`: the type relation refuses 4 at run time, naming the operator.
  GraphBuilder builder({F32({kAnyDim, kAnyDim, 6, 6}), F32({16, 8, 3, 3})});
  builder.Add("nn.conv2d", {0, 1});
  const auto function = Load(builder.graph());
  const Error channels = ErrorFrom([&] {
    function->Run(RandomInputs({{1, 4, 6, 6}, {16, 8, 3, 3}}, 1));
  });
  EXPECT_EQ(channels.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(Contains(channels.message(), "nn.conv2d")) << channels.message();
  const Error rank = ErrorFrom([&] { function->Run(RandomInputs({{8, 6, 6}, {16, 8, 3, 3}}, 1)); });
  EXPECT_EQ(rank.kind(), ErrorKind::kUsage);
  const Error weight = ErrorFrom([&] {
    function->Run(RandomInputs({{1, 8, 6, 6}, {16, 8, 3, 2}}, 1));
  });
  EXPECT_EQ(weight.kind(), ErrorKind::kUsage);
  const Error count = ErrorFrom([&] { function->Run(RandomInputs({{1, 8, 6, 6}}, 1)); });
  EXPECT_EQ(count.kind(), ErrorKind::kUsage);
  std::vector<Ref<Tensor>> integers = {Tensor::Empty(HostDevice(), {1, 8, 6, 6}, DType::kInt32),
                                       Random({16, 8, 3, 3}, 1)};
  const Error dtype = ErrorFrom([&] { function->Run(integers); });
  EXPECT_EQ(dtype.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(Contains(dtype.message(), "float32")) << dtype.message();
}

TEST(DnnlCodegenTest, CompileRefusesWhatItDoesNotRun) {
  {
    GraphBuilder builder({F32({4, 4})});
    builder.Add("exp", {0});
    const Error error = ErrorFrom([&] { DnnlCodegen().Compile(builder.graph(), "dnnl_3"); });
    EXPECT_EQ(error.kind(), ErrorKind::kCompile);
    EXPECT_TRUE(Contains(error.message(), "dnnl_3")) << error.message();
    EXPECT_TRUE(Contains(error.message(), "exp")) << error.message();
  }
  {
    GraphBuilder builder({F32({1, 6, 6, 8}), F32({3, 3, 8, 16})});
    builder.Add(
        "nn.conv2d", {0, 1},
        {{"data_layout", AttrValue::String("NHWC")}, {"kernel_layout", AttrValue::String("HWIO")}});
    const Error error = ErrorFrom([&] { DnnlCodegen().Compile(builder.graph(), "dnnl_4"); });
    EXPECT_EQ(error.kind(), ErrorKind::kCompile);
    EXPECT_TRUE(Contains(error.message(), "nn.conv2d")) << error.message();
  }
  {
    // A composite whose calls are not its pattern.
    GraphBuilder builder({F32({1, 4, 6, 6}), F32({8, 4, 3, 3})});
    const int32_t y = builder.Add("nn.conv2d", {0, 1}, {}, "dnnl.conv2d_bias_relu");
    builder.Add("exp", {y}, {}, "dnnl.conv2d_bias_relu");
    const Error error = ErrorFrom([&] { DnnlCodegen().Compile(builder.graph(), "dnnl_5"); });
    EXPECT_EQ(error.kind(), ErrorKind::kCompile);
    EXPECT_TRUE(Contains(error.message(), "dnnl.conv2d_bias_relu")) << error.message();
  }
  GraphBuilder builder({F32({4, 4})});
  builder.Add("nn.softmax", {0});
  const Error error =
      ErrorFrom([&] { DnnlCodegen().Load(builder.graph(), "not dnnl state", "dnnl_6"); });
  EXPECT_EQ(error.kind(), ErrorKind::kLoad);
  EXPECT_TRUE(Contains(error.message(), "dnnl_6")) << error.message();
}

// ---- rules ---------------------------------------------------------------------

// Whether the operator rule for `op` accepts a call of it on `inputs`.
bool OperatorAccepts(const std::string& op, const std::vector<ValueType>& inputs,
                     const Attrs& given = {}) {
  const Attrs attrs = Normalized(op, given);
  std::vector<RelationInput> relation_inputs;
  for (const ValueType& type : inputs) relation_inputs.push_back({&type, nullptr});
  const ValueType result = FindOperator(op)->relation(relation_inputs, attrs);
  for (const OperatorRule& rule : DnnlCodegen().rules().operators) {
    if (rule.op == op) return !rule.accepts || rule.accepts(CallView{op, attrs, inputs, result});
  }
  return false;
}

// Whether step `step` of composite `name` accepts a call of `op`.
bool StepAccepts(const std::string& name, size_t step, const std::string& op,
                 const std::vector<ValueType>& inputs, const Attrs& given = {}) {
  const Attrs attrs = Normalized(op, given);
  std::vector<RelationInput> relation_inputs;
  for (const ValueType& type : inputs) relation_inputs.push_back({&type, nullptr});
  const ValueType result = FindOperator(op)->relation(relation_inputs, attrs);
  for (const CompositeRule& rule : DnnlCodegen().rules().composites) {
    if (rule.name != name) continue;
    const PatternStep& pattern = rule.steps.at(step);
    if (std::find(pattern.ops.begin(), pattern.ops.end(), op) == pattern.ops.end()) return false;
    return !pattern.accepts || pattern.accepts(CallView{op, attrs, inputs, result});
  }
  ADD_FAILURE() << "no composite " << name;
  return false;
}

TEST(DnnlCodegenTest, TheCodegenItself) {
  EXPECT_EQ(DnnlCodegen().name(), "dnnl");
  EXPECT_TRUE(DnnlCodegen().merges_regions());
  EXPECT_EQ(FindCodegen("dnnl"), &DnnlCodegen());
}

TEST(DnnlCodegenTest, OperatorRules) {
  const ValueType data = F32({kAnyDim, 8, 10, 10}), weight = F32({16, 8, 3, 3});
  EXPECT_TRUE(OperatorAccepts("nn.conv2d", {data, weight}));
  EXPECT_TRUE(OperatorAccepts("nn.conv2d", {F32({1, 8, 10, 10}), F32({8, 1, 3, 3})},
                              {{"groups", AttrValue::Int(8)}}));
  EXPECT_FALSE(OperatorAccepts(
      "nn.conv2d", {F32({1, 10, 10, 8}), F32({3, 3, 8, 16})},
      {{"data_layout", AttrValue::String("NHWC")}, {"kernel_layout", AttrValue::String("HWIO")}}));
  EXPECT_FALSE(
      OperatorAccepts("nn.conv2d", {data, weight}, {{"out_dtype", AttrValue::String("float64")}}));
  EXPECT_FALSE(
      OperatorAccepts("nn.conv2d", {data, weight}, {{"out_layout", AttrValue::String("NHWC")}}));
  EXPECT_FALSE(OperatorAccepts("nn.conv2d", {ValueType::Tensor({1, 8, 10, 10}, DType::kInt8),
                                             ValueType::Tensor({16, 8, 3, 3}, DType::kInt8)}));
  EXPECT_FALSE(OperatorAccepts("nn.conv2d", {ValueType::Tensor({1, 8, 10, 10}, DType::kFloat16),
                                             ValueType::Tensor({16, 8, 3, 3}, DType::kFloat16)}));

  const Attrs pool = {{"pool_size", Ints({3, 3})}, {"padding", Ints({1, 1})}};
  EXPECT_TRUE(OperatorAccepts("nn.max_pool2d", {data}, pool));
  EXPECT_FALSE(OperatorAccepts("nn.max_pool2d", {data},
                               {{"pool_size", Ints({2, 2})}, {"padding", Ints({2, 2})}}));
  EXPECT_FALSE(
      OperatorAccepts("nn.max_pool2d", {F32({1, 10, 10, 8})},
                      {{"pool_size", Ints({2, 2})}, {"layout", AttrValue::String("NHWC")}}));
  Attrs ceil_including = pool;
  ceil_including.push_back({"ceil_mode", AttrValue::Bool(true)});
  EXPECT_TRUE(OperatorAccepts("nn.avg_pool2d", {data}, ceil_including));
  ceil_including.push_back({"count_include_pad", AttrValue::Bool(true)});
  EXPECT_FALSE(OperatorAccepts("nn.avg_pool2d", {data}, ceil_including));
  EXPECT_TRUE(OperatorAccepts("nn.global_avg_pool2d", {data}));
  EXPECT_FALSE(OperatorAccepts("nn.global_max_pool2d", {data}));

  EXPECT_TRUE(OperatorAccepts("nn.softmax", {F32({kAnyDim, 4, 5})}, {{"axis", AttrValue::Int(1)}}));
  EXPECT_TRUE(OperatorAccepts("nn.layer_norm", {F32({kAnyDim, 5, 8}), F32({8}), F32({8})}));
  EXPECT_FALSE(OperatorAccepts("nn.layer_norm", {F32({2, 5, 8}), F32({5}), F32({5})},
                               {{"axis", AttrValue::Int(1)}}));

  EXPECT_TRUE(OperatorAccepts("nn.dense", {F32({kAnyDim, 16}), F32({8, 16})}));
  EXPECT_FALSE(OperatorAccepts(
      "nn.dense",
      {ValueType::Tensor({4, 16}, DType::kInt8), ValueType::Tensor({8, 16}, DType::kInt8)},
      {{"out_dtype", AttrValue::String("int32")}}));
  EXPECT_TRUE(OperatorAccepts("nn.matmul", {F32({3, 16, 4}), F32({16, 8})},
                              {{"transpose_a", AttrValue::Bool(true)}}));
  EXPECT_TRUE(OperatorAccepts("nn.batch_matmul", {F32({3, 4, 16}), F32({1, 8, 16})}));
  EXPECT_FALSE(OperatorAccepts("nn.batch_matmul", {F32({3, 4, 16}), F32({3, 8, 16})},
                               {{"out_dtype", AttrValue::String("float16")}}));
  EXPECT_FALSE(OperatorAccepts("nn.relu", {data}));
}

TEST(DnnlCodegenTest, CompositeRules) {
  const ValueType result = F32({kAnyDim, 16, 10, 10});
  const std::string conv = "dnnl.conv2d_bias_relu";
  EXPECT_TRUE(StepAccepts(conv, 0, "nn.conv2d", {F32({kAnyDim, 8, 10, 10}), F32({16, 8, 1, 1})}));
  EXPECT_TRUE(StepAccepts(conv, 1, "nn.bias_add", {result, F32({16})}));
  EXPECT_FALSE(
      StepAccepts(conv, 1, "nn.bias_add", {result, F32({10})}, {{"axis", AttrValue::Int(3)}}));
  EXPECT_TRUE(StepAccepts(conv, 1, "add", {result, F32({16, 1, 1})}));
  EXPECT_TRUE(StepAccepts(conv, 1, "add", {F32({1, 16, 1, 1}), result}));
  // A vector of 10 along the width is no channel bias.
  EXPECT_FALSE(StepAccepts(conv, 1, "add", {result, F32({10})}));
  EXPECT_FALSE(StepAccepts(conv, 1, "add", {result, result}));
  EXPECT_TRUE(StepAccepts(conv, 2, "nn.relu", {result}));
  EXPECT_TRUE(StepAccepts(conv, 2, "clip", {result},
                          {{"a_min", AttrValue::Float(0)}, {"a_max", AttrValue::Float(6)}}));
  EXPECT_FALSE(StepAccepts(conv, 2, "exp", {result}));

  const std::string residual = "dnnl.conv2d_bias_add_relu";
  EXPECT_TRUE(StepAccepts(residual, 2, "add", {result, result}));
  EXPECT_FALSE(StepAccepts(residual, 2, "add", {result, F32({16, 1, 1})}));

  const std::string dense = "dnnl.dense_bias_relu";
  const ValueType dense_result = F32({kAnyDim, 8});
  EXPECT_TRUE(StepAccepts(dense, 1, "nn.bias_add", {dense_result, F32({8})},
                          {{"axis", AttrValue::Int(-1)}}));
  EXPECT_TRUE(StepAccepts(dense, 1, "add", {dense_result, F32({8})}));
  EXPECT_TRUE(StepAccepts(dense, 1, "add", {F32({1, 8}), dense_result}));
  EXPECT_FALSE(
      StepAccepts(dense, 1, "nn.bias_add", {F32({4, 8}), F32({4})}, {{"axis", AttrValue::Int(0)}}));
  EXPECT_FALSE(StepAccepts(dense, 1, "add", {F32({4, 8}), F32({4, 1})}));
}

}  // namespace
}  // namespace relay::kernels::external
