// Elementwise and broadcast operators run through RunOperator (built,
// JIT-compiled and launched on the host) against NumPy's results.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_elementwise_cases.py; each line of
// fixtures/elementwise/cases.txt becomes one test named after its case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
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

const std::string kCaseDirectory = FixtureDirectory("elementwise");

// An integer (written without a point or exponent) becomes AttrValue::Int, a
// number with one becomes AttrValue::Float, anything else (a dtype name)
// AttrValue::String.
std::optional<AttrValue> ParseAttributeValue(const std::string& /*key*/, const std::string& text) {
  int64_t integer = 0;
  if (ParseInteger(text, integer)) return AttrValue::Int(integer);
  char* float_end = nullptr;
  double number = std::strtod(text.c_str(), &float_end);
  if (!text.empty() && float_end == text.c_str() + text.size()) return AttrValue::Float(number);
  return AttrValue::String(text);
}

const std::vector<ToleranceCase>& AllCases() {
  static const std::vector<ToleranceCase> cases =
      LoadCaseIndex<ToleranceCase>(kCaseDirectory, ReadToleranceFields, ParseAttributeValue);
  return cases;
}

class ElementwiseKernelsTest : public ::testing::TestWithParam<ToleranceCase> {};

TEST_P(ElementwiseKernelsTest, MatchesNumPy) {
  ExpectToleranceCaseMatches(kCaseDirectory, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ElementwiseKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<ToleranceCase>);

TEST(ElementwiseCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 188 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 150u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

TEST(ElementwiseKernelsErrorsTest, UnknownOperatorIsAUsageErrorNamingIt) {
  Ref<Tensor> x = FilledTensor({2}, {1, 2});
  Error error = ExpectRunError("no_such_operator", {x});
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_NE(error.message().find("no_such_operator"), std::string::npos) << error.what();
}

TEST(ElementwiseKernelsErrorsTest, WrongNumberOfInputsIsAnError) {
  Ref<Tensor> x = FilledTensor({2}, {1, 2});
  ExpectRunError("add", {x});
  ExpectRunError("add", {x, x, x});
  ExpectRunError("negative", {x, x});
  ExpectRunError("where", {x, x});
  ExpectRunError("exp", {});
}

TEST(ElementwiseKernelsErrorsTest, BadInputsAreRejectedByTheTypeRelation) {
  Ref<Tensor> three = FilledTensor({3}, {1, 2, 3});
  Ref<Tensor> four = FilledTensor({4}, {1, 2, 3, 4});
  Ref<Tensor> integers = Tensor::Empty(HostDevice(), {3}, DType::kInt32);
  std::fill_n(integers->data<int32_t>(), 3, 1);
  ExpectRunError("add", {three, four});           // shapes do not broadcast
  ExpectRunError("add", {three, integers});       // no implicit dtype promotion
  ExpectRunError("logical_and", {three, three});  // logical operators need bool
  ExpectRunError("exp", {integers});              // transcendental functions need floats
}

TEST(ElementwiseKernelsErrorsTest, MissingRequiredAttributeIsAnError) {
  Ref<Tensor> x = FilledTensor({2}, {1, 2});
  ExpectRunError("cast", {x});
  ExpectRunError("clip", {x}, {{"a_min", AttrValue::Float(0)}});
}

TEST(ElementwiseKernelsApiTest, LeavesInputsUntouchedAndReturnsANewTensor) {
  Ref<Tensor> x = FilledTensor({2, 2}, {1, -2, 3, -4});
  Ref<Tensor> y = FilledTensor({2}, {10, 20});
  std::vector<Ref<Tensor>> inputs = {x, y};
  Ref<Tensor> sum = RunOperator("add", inputs);
  ASSERT_TRUE(sum);
  EXPECT_NE(sum->host_data(), x->host_data());
  EXPECT_NE(sum->host_data(), y->host_data());
  EXPECT_EQ(std::vector<float>(sum->data<float>(), sum->data<float>() + 4),
            (std::vector<float>{11, 18, 13, 16}));
  EXPECT_EQ(std::vector<float>(x->data<float>(), x->data<float>() + 4),
            (std::vector<float>{1, -2, 3, -4}));
  EXPECT_EQ(std::vector<float>(y->data<float>(), y->data<float>() + 2),
            (std::vector<float>{10, 20}));
  std::vector<Ref<Tensor>> copy_input = {x};
  Ref<Tensor> copied = RunOperator("copy", copy_input);
  ASSERT_TRUE(copied);
  EXPECT_NE(copied->host_data(), x->host_data());
}

}  // namespace
}  // namespace relay::kernels
