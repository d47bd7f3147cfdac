// Floating-point operation counts of contractions, against counts worked
// out by hand: 2 x output elements x multiply-adds per output element.
#include "kernels/compute/kernel_cost.h"

#include <gtest/gtest.h>

namespace relay::kernels {
namespace {

ValueType Float(std::vector<int64_t> shape) {
  return ValueType::Tensor(std::move(shape), DType::kFloat32);
}

double FlopsOf(const std::string& op, const Attrs& attrs, std::vector<ValueType> inputs) {
  FusedOperator single{op, attrs, {}};
  for (size_t index = 0; index < inputs.size(); ++index) single.inputs.push_back(int32_t(index));
  return ContractionFlops(std::span<const FusedOperator>(&single, 1), inputs);
}

TEST(KernelCostTest, DenseMatmulAndBatchMatmul) {
  // 3 rows x 7 outputs, 5 multiply-adds each.
  EXPECT_EQ(FlopsOf("nn.dense", {}, {Float({3, 5}), Float({7, 5})}), 2.0 * 3 * 7 * 5);
  EXPECT_EQ(FlopsOf("nn.matmul", {}, {Float({3, 5}), Float({5, 7})}), 2.0 * 3 * 7 * 5);
  EXPECT_EQ(FlopsOf("nn.matmul", {{"transpose_a", AttrValue::Bool(true)}},
                    {Float({5, 3}), Float({5, 7})}),
            2.0 * 3 * 7 * 5);
  // Two batches of 3 x 7, 5 deep (transpose_b is the default).
  EXPECT_EQ(FlopsOf("nn.batch_matmul", {}, {Float({2, 3, 5}), Float({2, 7, 5})}),
            2.0 * 2 * 3 * 7 * 5);
}

TEST(KernelCostTest, Convolutions) {
  // 4 output channels of 5x5 (padding 1), each summing 2 channels x 3x3.
  EXPECT_EQ(FlopsOf("nn.conv2d", {{"padding", AttrValue::IntList({1, 1})}},
                    {Float({1, 2, 5, 5}), Float({4, 2, 3, 3})}),
            2.0 * 4 * 25 * 2 * 9);
  // Depthwise: each output channel sees one input channel.
  EXPECT_EQ(
      FlopsOf("nn.conv2d", {{"padding", AttrValue::IntList({1, 1})}, {"groups", AttrValue::Int(4)}},
              {Float({1, 4, 5, 5}), Float({4, 1, 3, 3})}),
      2.0 * 4 * 25 * 9);
  // Stride 2 without padding: 2x2 outputs.
  EXPECT_EQ(FlopsOf("nn.conv2d", {{"strides", AttrValue::IntList({2, 2})}},
                    {Float({1, 2, 5, 5}), Float({4, 2, 3, 3})}),
            2.0 * 4 * 4 * 2 * 9);
  // Transposed: each of the 2x3x3 inputs is scattered to 4 channels x 2x2.
  EXPECT_EQ(FlopsOf("nn.conv2d_transpose", {}, {Float({1, 2, 3, 3}), Float({2, 4, 2, 2})}),
            2.0 * 2 * 9 * 4 * 4);
}

TEST(KernelCostTest, FusedGroupsCountTheirContractionAndElementwiseIsFree) {
  const std::vector<FusedOperator> group = {
      {"nn.dense", {}, {0, 1}}, {"add", {}, {-1, 2}}, {"sigmoid", {}, {-2}}};
  const std::vector<ValueType> inputs = {Float({1, 8}), Float({16, 8}), Float({16})};
  EXPECT_EQ(ContractionFlops(group, inputs), 2.0 * 16 * 8);
  EXPECT_EQ(FlopsOf("exp", {}, {Float({4, 4})}), 0.0);
  // Inputs that do not type cost nothing here (the kernel reports them).
  EXPECT_EQ(FlopsOf("nn.dense", {}, {Float({3, 5}), Float({7, 6})}), 0.0);
}

}  // namespace
}  // namespace relay::kernels
