// The OpenBLAS codegen against relay-vm's own kernels (RunOperator, tested
// against NumPy in tests/kernels), operator by operator on the same inputs:
// dense, dense with a bias and an activation, matmul and batch_matmul with
// each transpose, a `?` batch at several sizes; its rules; its errors; and
// calls from several threads at once.
#include "kernels/external/cblas/cblas_codegen.h"

#include <gtest/gtest.h>

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
  const ExternalCodegen& codegen = CblasCodegen();
  return codegen.Load(graph, codegen.Compile(graph, "cblas_0"), "cblas_0");
}

void ExpectClose(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), kF32);
  ASSERT_TRUE(actual.on_host());
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const float want = expected.data<float>()[index], got = actual.data<float>()[index];
    ASSERT_LE(std::fabs(got - want), 1e-4f * std::fabs(want) + 1e-5f)
        << "element " << index << ": " << got << " vs " << want;
  }
}

// Runs `graph` through the codegen on inputs of `shapes` and compares.
void ExpectMatchesReference(const ExternalGraph& graph, const std::vector<Shape>& shapes,
                            uint32_t seed = 1) {
  const std::vector<Ref<Tensor>> inputs = RandomInputs(shapes, seed);
  const Ref<Tensor> actual = Load(graph)->Run(inputs);
  ExpectClose(*actual, *Reference(graph, inputs));
}

// ---- results ---------------------------------------------------------------

TEST(CblasCodegenTest, DenseOfEachRank) {
  for (const Shape& data : {Shape{5, 7}, Shape{2, 3, 7}, Shape{7}, Shape{1, 7}}) {
    GraphBuilder builder({F32(data), F32({3, 7})});
    builder.Add("nn.dense", {0, 1}, {{"units", AttrValue::Int(3)}});
    ExpectMatchesReference(builder.graph(), {data, {3, 7}});
  }
}

TEST(CblasCodegenTest, DenseWithBiasAndActivation) {
  const std::string composite = "cblas.dense_bias";
  const std::vector<Shape> shapes = {{6, 9}, {4, 9}, {4}};
  for (const std::string activation : {"", "nn.relu", "sigmoid", "tanh", "nn.leaky_relu", "clip"}) {
    GraphBuilder builder({F32({6, 9}), F32({4, 9}), F32({4})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, composite);
    const int32_t biased = builder.Add("nn.bias_add", {dense, 2}, {}, composite);
    Attrs attrs;
    if (activation == "clip")
      attrs = {{"a_min", AttrValue::Float(-0.2)}, {"a_max", AttrValue::Float(0.3)}};
    if (!activation.empty()) builder.Add(activation, {biased}, attrs, composite);
    ExpectMatchesReference(builder.graph(), shapes);
  }
  // add, with the bias either side.
  for (bool bias_first : {false, true}) {
    GraphBuilder builder({F32({2, 3, 9}), F32({4, 9}), F32({4})});
    const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, composite);
    const int32_t biased = builder.Add(
        "add", bias_first ? std::vector<int32_t>{2, dense} : std::vector<int32_t>{dense, 2}, {},
        composite);
    builder.Add("nn.relu", {biased}, {}, composite);
    ExpectMatchesReference(builder.graph(), {{2, 3, 9}, {4, 9}, {4}});
  }
}

// A bias that does not start sgemm's C (one element broadcast, a `?`
// vector that turns out to be 1 long) is added by itself, still correctly.
TEST(CblasCodegenTest, ABiasThatBroadcastsIsAddedOnItsOwn) {
  GraphBuilder builder({F32({5, 8}), F32({4, 8}), F32({kAnyDim})});
  const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, "cblas.dense_bias");
  builder.Add("add", {dense, 2}, {}, "cblas.dense_bias");
  ExpectMatchesReference(builder.graph(), {{5, 8}, {4, 8}, {1}});
  ExpectMatchesReference(builder.graph(), {{5, 8}, {4, 8}, {4}});
  // sgemm adds a bias of the product's width, and no kernel of relay-vm runs.
  const std::shared_ptr<const ExternalFunction> function = Load(builder.graph());
  for (const auto& [bias, launches] : {std::pair<int64_t, uint64_t>{4, 0}, {1, 1}}) {
    const std::vector<Ref<Tensor>> inputs = RandomInputs({{5, 8}, {4, 8}, {bias}}, 3);
    const uint64_t before = KernelLaunchCount();
    function->Run(inputs);
    EXPECT_EQ(KernelLaunchCount() - before, launches) << "bias of " << bias;
  }
}

TEST(CblasCodegenTest, MatmulWithEachTranspose) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}}) {
        Shape a = batch, b = transpose_b ? Shape{5, 6} : Shape{6, 5};
        a.insert(a.end(), transpose_a ? std::initializer_list<int64_t>{6, 4}
                                      : std::initializer_list<int64_t>{4, 6});
        GraphBuilder builder({F32(a), F32(b)});
        builder.Add("nn.matmul", {0, 1},
                    {{"transpose_a", AttrValue::Bool(transpose_a)},
                     {"transpose_b", AttrValue::Bool(transpose_b)}});
        SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
        ExpectMatchesReference(builder.graph(), {a, b});
      }
    }
  }
}

TEST(CblasCodegenTest, BatchMatmulWithEachTransposeAndBroadcastBatch) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      for (const auto& [a_batch, b_batch] : {std::pair{3, 3}, {1, 3}, {3, 1}, {1, 1}}) {
        const Shape a = transpose_a ? Shape{a_batch, 7, 4} : Shape{a_batch, 4, 7};
        const Shape b = transpose_b ? Shape{b_batch, 5, 7} : Shape{b_batch, 7, 5};
        GraphBuilder builder({F32(a), F32(b)});
        builder.Add("nn.batch_matmul", {0, 1},
                    {{"transpose_a", AttrValue::Bool(transpose_a)},
                     {"transpose_b", AttrValue::Bool(transpose_b)}});
        SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
        ExpectMatchesReference(builder.graph(), {a, b});
      }
    }
  }
}

// One loaded function serves every extent of its `?` dimensions, an empty
// batch and an empty reduction included.
TEST(CblasCodegenTest, AnUnknownBatchRunsAtEachSize) {
  GraphBuilder builder({F32({kAnyDim, 8}), F32({4, 8}), F32({4})});
  const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, "cblas.dense_bias");
  const int32_t biased = builder.Add("nn.bias_add", {dense, 2}, {}, "cblas.dense_bias");
  builder.Add("nn.relu", {biased}, {}, "cblas.dense_bias");
  const std::shared_ptr<const ExternalFunction> function = Load(builder.graph());
  for (int64_t batch : {3, 17, 1, 0}) {
    const std::vector<Ref<Tensor>> inputs =
        RandomInputs({{batch, 8}, {4, 8}, {4}}, uint32_t(batch));
    ExpectClose(*function->Run(inputs), *Reference(builder.graph(), inputs));
  }
  GraphBuilder empty({F32({3, kAnyDim}), F32({4, kAnyDim}), F32({4})});
  const int32_t product = empty.Add("nn.dense", {0, 1}, {}, "cblas.dense_bias");
  empty.Add("add", {product, 2}, {}, "cblas.dense_bias");
  ExpectMatchesReference(empty.graph(), {{3, 0}, {4, 0}, {4}});
  ExpectMatchesReference(empty.graph(), {{3, 5}, {4, 5}, {4}});
}

TEST(CblasCodegenTest, ConcurrentCallsGiveEachCallersResult) {
  GraphBuilder builder({F32({kAnyDim, 32}), F32({16, 32}), F32({16})});
  const int32_t dense = builder.Add("nn.dense", {0, 1}, {}, "cblas.dense_bias");
  builder.Add("nn.bias_add", {dense, 2}, {}, "cblas.dense_bias");
  const std::shared_ptr<const ExternalFunction> function = Load(builder.graph());
  std::vector<std::vector<Ref<Tensor>>> inputs;
  std::vector<Ref<Tensor>> expected;
  for (uint32_t thread = 0; thread < 4; ++thread) {
    inputs.push_back(RandomInputs({{int64_t(8 + thread), 32}, {16, 32}, {16}}, 10 * thread));
    expected.push_back(Reference(builder.graph(), inputs.back()));
  }
  std::vector<Ref<Tensor>> results(4 * 25);
  std::vector<std::thread> threads;
  for (size_t thread = 0; thread < 4; ++thread) {
    threads.emplace_back([&, thread] {
      for (size_t repeat = 0; repeat < 25; ++repeat)
        results[thread * 25 + repeat] = function->Run(inputs[thread]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t index = 0; index < results.size(); ++index)
    ExpectClose(*results[index], *expected[index / 25]);
}

// ---- rules -------------------------------------------------------------------

const CallPredicate& OperatorPredicate(const std::string& op) {
  for (const OperatorRule& rule : CblasCodegen().rules().operators) {
    if (rule.op == op) return rule.accepts;
  }
  ADD_FAILURE() << "no rule for " << op;
  static const CallPredicate none;
  return none;
}

bool Accepts(const CallPredicate& predicate, const std::string& op, const Attrs& given,
             std::vector<ValueType> inputs, const ValueType& result) {
  const Attrs attrs = Normalized(op, given);
  return predicate({op, attrs, inputs, result});
}

TEST(CblasCodegenTest, TheRulesAcceptFloat32ProductsOnly) {
  const ExternalCodegen& codegen = CblasCodegen();
  EXPECT_EQ(codegen.name(), "cblas");
  EXPECT_TRUE(codegen.merges_regions());
  std::vector<std::string> ops;
  for (const OperatorRule& rule : codegen.rules().operators) ops.push_back(rule.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"nn.dense", "nn.matmul", "nn.batch_matmul"}));
  const CallPredicate& dense = OperatorPredicate("nn.dense");
  const std::vector<ValueType> f32 = {F32({kAnyDim, 8}), F32({4, 8})};
  EXPECT_TRUE(Accepts(dense, "nn.dense", {}, f32, F32({kAnyDim, 4})));
  EXPECT_TRUE(Accepts(dense, "nn.dense", {{"out_dtype", AttrValue::String("float32")}}, f32,
                      F32({kAnyDim, 4})));
  EXPECT_FALSE(Accepts(dense, "nn.dense", {{"out_dtype", AttrValue::String("float64")}}, f32,
                       ValueType::Tensor({kAnyDim, 4}, DType::kFloat64)));
  const std::vector<ValueType> i32 = {ValueType::Tensor({2, 8}, DType::kInt32),
                                      ValueType::Tensor({4, 8}, DType::kInt32)};
  EXPECT_FALSE(Accepts(dense, "nn.dense", {}, i32, ValueType::Tensor({2, 4}, DType::kInt32)));
  const std::vector<ValueType> f16 = {ValueType::Tensor({2, 8}, DType::kFloat16),
                                      ValueType::Tensor({4, 8}, DType::kFloat16)};
  EXPECT_FALSE(
      Accepts(dense, "nn.dense", {{"out_dtype", AttrValue::String("float32")}}, f16, F32({2, 4})));
  EXPECT_TRUE(Accepts(OperatorPredicate("nn.batch_matmul"), "nn.batch_matmul",
                      {{"transpose_a", AttrValue::Bool(true)}}, {F32({1, 8, 3}), F32({5, 4, 8})},
                      F32({5, 3, 4})));
}

TEST(CblasCodegenTest, TheDenseBiasCompositeTakesAVectorAlongTheLastAxis) {
  const std::vector<CompositeRule>& composites = CblasCodegen().rules().composites;
  ASSERT_EQ(composites.size(), 1u);
  const CompositeRule& rule = composites[0];
  EXPECT_EQ(rule.name, "cblas.dense_bias");
  ASSERT_EQ(rule.steps.size(), 3u);
  EXPECT_EQ(rule.steps[0].ops, (std::vector<std::string>{"nn.dense"}));
  EXPECT_FALSE(rule.steps[1].optional);
  EXPECT_TRUE(rule.steps[2].optional);
  const CallPredicate& bias = rule.steps[1].accepts;
  const ValueType product = F32({kAnyDim, 4});
  EXPECT_TRUE(Accepts(bias, "nn.bias_add", {}, {product, F32({4})}, product));
  EXPECT_TRUE(
      Accepts(bias, "nn.bias_add", {{"axis", AttrValue::Int(-1)}}, {product, F32({4})}, product));
  EXPECT_FALSE(Accepts(bias, "nn.bias_add", {{"axis", AttrValue::Int(0)}},
                       {product, F32({kAnyDim})}, product));
  EXPECT_TRUE(Accepts(bias, "add", {}, {F32({4}), product}, product));
  EXPECT_FALSE(Accepts(bias, "add", {}, {product, F32({3, 4})}, F32({3, 4})));
  EXPECT_FALSE(
      Accepts(bias, "add", {},
              {ValueType::Tensor({2, 4}, DType::kInt32), ValueType::Tensor({4}, DType::kInt32)},
              ValueType::Tensor({2, 4}, DType::kInt32)));
  const CallPredicate& activation = rule.steps[2].accepts;
  EXPECT_TRUE(Accepts(activation, "nn.relu", {}, {product}, product));
  EXPECT_FALSE(Accepts(activation, "nn.relu", {}, {ValueType::Tensor({2, 4}, DType::kInt32)},
                       ValueType::Tensor({2, 4}, DType::kInt32)));
}

// ---- errors --------------------------------------------------------------------

TEST(CblasCodegenTest, AGraphWithAnOperatorCblasDoesNotRunIsRefused) {
  GraphBuilder softmax({F32({2, 8}), F32({4, 8})});
  softmax.Add("nn.softmax", {softmax.Add("nn.dense", {0, 1})});
  Error error = ErrorFrom([&] { CblasCodegen().Compile(softmax.graph(), "cblas_3"); });
  EXPECT_EQ(error.kind(), ErrorKind::kCompile);
  EXPECT_EQ(error.message(), "cblas_3: cblas does not run operator 1 (nn.softmax)");
  error = ErrorFrom([&] { CblasCodegen().Load(softmax.graph(), "", "cblas_3"); });
  EXPECT_EQ(error.kind(), ErrorKind::kLoad);
  EXPECT_TRUE(Contains(error.message(), "cblas_3: cblas does not run operator 1"))
      << error.message();
  // An activation outside the composite's list.
  GraphBuilder exp({F32({2, 8}), F32({4, 8}), F32({4})});
  const int32_t dense = exp.Add("nn.dense", {0, 1}, {}, "cblas.dense_bias");
  exp.Add("exp", {exp.Add("nn.bias_add", {dense, 2}, {}, "cblas.dense_bias")}, {},
          "cblas.dense_bias");
  error = ErrorFrom([&] { CblasCodegen().Compile(exp.graph(), "cblas_4"); });
  EXPECT_EQ(error.message(), "cblas_4: cblas does not run operator 2 (exp in cblas.dense_bias)");
}

TEST(CblasCodegenTest, StateIsEmptyAndAnyOtherIsALoadError) {
  GraphBuilder builder({F32({2, 8}), F32({4, 8})});
  builder.Add("nn.dense", {0, 1});
  EXPECT_EQ(CblasCodegen().Compile(builder.graph(), "cblas_0"), "");
  const Error error = ErrorFrom([&] { CblasCodegen().Load(builder.graph(), "x", "cblas_0"); });
  EXPECT_EQ(error.kind(), ErrorKind::kLoad);
  EXPECT_TRUE(Contains(error.message(), "cblas_0: ")) << error.message();
}

TEST(CblasCodegenTest, InputsThatDoNotFitAreUsageErrors) {
  GraphBuilder builder({F32({kAnyDim, 8}), F32({4, 8})});
  builder.Add("nn.dense", {0, 1});
  const std::shared_ptr<const ExternalFunction> function = Load(builder.graph());
  Error error = ErrorFrom([&] { function->Run(RandomInputs({{2, 7}, {4, 8}}, 1)); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(Contains(error.message(), "(2, 7)")) << error.message();
  error = ErrorFrom([&] { function->Run(RandomInputs({{2, 8}}, 1)); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(Contains(error.message(), "takes 2 tensors, given 1")) << error.message();
  std::vector<Ref<Tensor>> integers = {Tensor::Empty(HostDevice(), {2, 8}, DType::kInt32),
                                       Random({4, 8}, 2)};
  error = ErrorFrom([&] { function->Run(integers); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_TRUE(
      Contains(error.message(), "cblas_0's input 0 is Tensor[(?, 8), float32], given int32"))
      << error.message();
}

}  // namespace
}  // namespace relay::kernels::external
