// Convolution, pooling and resizing (nn.conv2d, nn.max_pool2d, nn.avg_pool2d,
// the global and adaptive pools, image.resize2d) compiled from their compute
// definitions and run on the host, against NumPy reference implementations.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_conv_cases.py; each line of fixtures/conv/cases.txt
// becomes one test named after its case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::testing;

const std::string kCaseDirectory = FixtureDirectory("conv");

// Integer lists are comma-separated; groups is an integer; scale_h and
// scale_w are numbers; ceil_mode, count_include_pad and align_corners are
// true or false; every other attribute is a string.
std::optional<AttrValue> ParseAttribute(const std::string& key, const std::string& text) {
  static const std::set<std::string> kIntLists = {
      "strides", "padding", "dilation", "output_padding", "pool_size", "output_size", "size"};
  if (kIntLists.contains(key)) {
    std::vector<int64_t> values;
    std::istringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
      int64_t value = 0;
      if (!ParseInteger(item, value)) return std::nullopt;
      values.push_back(value);
    }
    return AttrValue::IntList(values);
  }
  if (key == "groups") {
    int64_t value = 0;
    if (!ParseInteger(text, value)) return std::nullopt;
    return AttrValue::Int(value);
  }
  if (key == "scale_h" || key == "scale_w") {
    try {
      size_t used = 0;
      const double value = std::stod(text, &used);
      if (used == text.size()) return AttrValue::Float(value);
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  if (key == "ceil_mode" || key == "count_include_pad" || key == "align_corners") {
    if (text == "true" || text == "false") return AttrValue::Bool(text == "true");
    return std::nullopt;
  }
  return AttrValue::String(text);
}

const std::vector<ToleranceCase>& AllCases() {
  static const std::vector<ToleranceCase> cases =
      LoadCaseIndex<ToleranceCase>(kCaseDirectory, ReadToleranceFields, ParseAttribute);
  return cases;
}

class ConvKernelsTest : public ::testing::TestWithParam<ToleranceCase> {};

TEST_P(ConvKernelsTest, MatchesNumPy) {
  ExpectToleranceCaseMatches(kCaseDirectory, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ConvKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<ToleranceCase>);

TEST(ConvCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes at least 40 cases; an unreadable index would run none.
  EXPECT_GE(AllCases().size(), 40u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

Ref<Tensor> ZeroTensor(Shape shape, DType dtype) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), dtype);
  std::memset(tensor->host_data(), 0,
              static_cast<size_t>(tensor->element_count()) * DTypeSize(dtype));
  return tensor;
}

void ExpectUsageError(std::string_view name, const std::vector<Ref<Tensor>>& inputs,
                      const Attrs& attrs, const std::string& message) {
  Error error = ExpectRunError(name, inputs, attrs);
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_NE(error.message().find(message), std::string::npos) << error.what();
}

TEST(ConvKernelsErrorsTest, AveragePoolsOfIntegersAreUsageErrors) {
  Ref<Tensor> integers = ZeroTensor({1, 2, 4, 4}, DType::kInt32);
  ExpectUsageError("nn.avg_pool2d", {integers}, {{"pool_size", AttrValue::IntList({2, 2})}},
                   "nn.avg_pool2d supports only floating-point inputs");
  ExpectUsageError("nn.global_avg_pool2d", {integers}, {},
                   "nn.global_avg_pool2d supports only floating-point inputs");
  ExpectUsageError("nn.adaptive_avg_pool2d", {integers},
                   {{"output_size", AttrValue::IntList({2, 2})}},
                   "nn.adaptive_avg_pool2d supports only floating-point inputs");
}

TEST(ConvKernelsErrorsTest, UnsupportedResizeModesAreUsageErrors) {
  Ref<Tensor> floats = ZeroTensor({1, 1, 3, 3}, DType::kFloat32);
  ExpectUsageError("image.resize2d", {floats},
                   {{"size", AttrValue::IntList({4, 4})},
                    {"coordinate_transformation_mode", AttrValue::String("tf_crop_and_resize")}},
                   "\"tf_crop_and_resize\" has no CPU kernel yet");
  Ref<Tensor> integers = ZeroTensor({1, 1, 3, 3}, DType::kInt32);
  ExpectUsageError("image.resize2d", {integers}, {{"size", AttrValue::IntList({4, 4})}},
                   "linear interpolation supports only floating-point");
}

TEST(ConvKernelsErrorsTest, BadGeometryIsRejectedByTheTypeRelation) {
  Ref<Tensor> data = ZeroTensor({1, 4, 5, 5}, DType::kFloat32);
  Ref<Tensor> weight = ZeroTensor({6, 3, 3, 3}, DType::kFloat32);  // 4 channels, 3 per group
  Error error = ExpectRunError("nn.conv2d", {data, weight}, {});
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  Ref<Tensor> small = ZeroTensor({1, 1, 2, 2}, DType::kFloat32);
  EXPECT_EQ(
      ExpectRunError("nn.max_pool2d", {small}, {{"pool_size", AttrValue::IntList({3, 3})}}).kind(),
      ErrorKind::kUsage);
}

}  // namespace
}  // namespace relay::kernels
