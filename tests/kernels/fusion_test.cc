// A fused chain of elementwise operators runs as one kernel: composing the
// operators' compute definitions inlines producers into the consumer's loop.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/codegen/llvm/lower_kernel.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"
#include "relay/devices.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::kir;

TEST(FusionTest, ElementwiseChainIsOneKernel) {
  // exp(relu(x * w + b)) for x: (?, 16), w: (16,), b: scalar.
  Var rows(new VarNode("rows"));
  Buffer x(new BufferNode("x", DType::kFloat32, {rows, Int(16)}));
  Buffer w(new BufferNode("w", DType::kFloat32, {Int(16)}));
  Buffer b(new BufferNode("b", DType::kFloat32, {}));
  Attrs none;
  auto apply = [&](const char* name, std::vector<TensorExpr> inputs) {
    return FindOperator(name)->compute(inputs, none);
  };
  TensorExpr product = apply("multiply", {FromBuffer(x), FromBuffer(w)});
  TensorExpr sum = apply("add", {product, FromBuffer(b)});
  TensorExpr output = apply("exp", {apply("nn.relu", {sum})});
  kir::Kernel kernel = BuildInjectiveKernel("fused", {x, w, b}, {rows}, output);
  // One kernel: one store, and no intermediate buffers.
  std::string text = PrintKernel(kernel);
  EXPECT_EQ(std::count(text.begin(), text.end(), '='), 1) << text;

  llvm_backend::KernelEntry entry = llvm_backend::CompileKernel(kernel);
  const int64_t row_count = 3;
  std::vector<float> x_data(row_count * 16), w_data(16), out(row_count * 16);
  float b_value = 0.25f;
  for (size_t index = 0; index < x_data.size(); ++index) x_data[index] = std::cos(float(index));
  for (size_t index = 0; index < w_data.size(); ++index) w_data[index] = float(index) / 8 - 1;
  void* buffers[] = {x_data.data(), w_data.data(), &b_value, out.data()};
  int64_t dims[] = {row_count};
  entry(buffers, dims);
  for (int64_t row = 0; row < row_count; ++row) {
    for (int64_t column = 0; column < 16; ++column) {
      float expected =
          std::exp(std::max(x_data[row * 16 + column] * w_data[column] + b_value, 0.0f));
      EXPECT_NEAR(out[row * 16 + column], expected, 1e-6f * expected);
    }
  }
}

// Softmax's exponentials appear in its row's sum and in each element: the
// schedule computes them once per row, into a row the sum then reads.
TEST(FusionTest, ASoftmaxComputesEachExponentialOnce) {
  Buffer x(new BufferNode("x", DType::kFloat32, {Int(3), Int(37)}));
  const std::vector<TensorExpr> inputs{FromBuffer(x)};
  TensorExpr softmax = FindOperator("nn.softmax")->compute(inputs, {{"axis", AttrValue::Int(-1)}});
  kir::Kernel kernel = BuildInjectiveKernel("softmax", {x}, {}, softmax);
  const std::string text = PrintKernel(kernel);
  size_t exponentials = 0;
  for (size_t at = text.find("exp("); at != std::string::npos; at = text.find("exp(", at + 1))
    ++exponentials;
  EXPECT_EQ(exponentials, 1u) << text;

  std::vector<float> data(3 * 37), out(3 * 37);
  for (size_t index = 0; index < data.size(); ++index) data[index] = 3 * std::sin(float(index));
  void* buffers[] = {data.data(), out.data()};
  llvm_backend::CompileKernel(kernel)(buffers, nullptr);
  for (int64_t row = 0; row < 3; ++row) {
    double maximum = -INFINITY, sum = 0;
    for (int64_t column = 0; column < 37; ++column)
      maximum = std::max(maximum, double(data[row * 37 + column]));
    for (int64_t column = 0; column < 37; ++column)
      sum += std::exp(double(data[row * 37 + column]) - maximum);
    for (int64_t column = 0; column < 37; ++column) {
      const double expected = std::exp(double(data[row * 37 + column]) - maximum) / sum;
      EXPECT_NEAR(out[row * 37 + column], expected, 1e-6 * expected);
    }
  }
}

TEST(FusionTest, RunOperatorLaunchesOneKernelPerCall) {
  Ref<Tensor> a = Tensor::Empty(HostDevice(), {2, 3}, DType::kFloat32);
  Ref<Tensor> b = Tensor::Empty(HostDevice(), {3}, DType::kFloat32);
  for (int index = 0; index < 6; ++index) a->data<float>()[index] = float(index);
  for (int index = 0; index < 3; ++index) b->data<float>()[index] = 10.0f * float(index);
  uint64_t before = KernelLaunchCount();
  std::vector<Ref<Tensor>> inputs{a, b};
  Ref<Tensor> sum = RunOperator("add", inputs);
  EXPECT_EQ(KernelLaunchCount(), before + 1);
  ASSERT_EQ(sum->shape(), (Shape{2, 3}));
  for (int index = 0; index < 6; ++index) {
    EXPECT_EQ(sum->data<float>()[index], float(index) + 10.0f * float(index % 3));
  }
}

TEST(FusionTest, RunOperatorReportsBadInputs) {
  Ref<Tensor> a = Tensor::Empty(HostDevice(), {2, 3}, DType::kFloat32);
  Ref<Tensor> b = Tensor::Empty(HostDevice(), {4}, DType::kFloat32);
  std::vector<Ref<Tensor>> inputs{a, b};
  try {
    RunOperator("add", inputs);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be broadcast"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(RunOperator("no_such_op", inputs), Error);
  std::vector<Ref<Tensor>> one{a};
  EXPECT_THROW(RunOperator("add", one), Error);
}

}  // namespace
}  // namespace relay::kernels
