// Neural-network operators (dense, matmul, batch_matmul, bias_add, prelu,
// softmax, log_softmax, layer_norm, instance_norm, group_norm, batch_norm,
// dropout, batch_flatten) compiled from their compute definitions and run on
// the host, and dft and det (C++ kernels with float results that need a
// tolerance), against NumPy's results.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_nn_cases.py; each line of fixtures/nn/cases.txt
// becomes one test named after its case. A tuple-valued operator's fields are
// compared with CASE.out0.npy, CASE.out1.npy, ...
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::testing;

const std::string kCaseDirectory = FixtureDirectory("nn");

// Attribute values of the index: see generate_nn_cases.py.
std::optional<AttrValue> ParseAttribute(const std::string& key, const std::string& text) {
  if (key == "axis" || key == "units" || key == "num_groups") {
    int64_t value = 0;
    if (!ParseInteger(text, value)) return std::nullopt;
    return AttrValue::Int(value);
  }
  if (key == "epsilon" || key == "rate") {
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return std::nullopt;
    return AttrValue::Float(value);
  }
  if (key == "out_dtype") return AttrValue::String(text);
  if (text == "true" || text == "false") return AttrValue::Bool(text == "true");
  return std::nullopt;
}

const std::vector<ToleranceCase>& AllCases() {
  static const std::vector<ToleranceCase> cases =
      LoadCaseIndex<ToleranceCase>(kCaseDirectory, ReadToleranceFields, ParseAttribute);
  return cases;
}

// CASE.out.npy, or the fields CASE.out0.npy, CASE.out1.npy, ... of a tuple.
std::vector<Ref<Tensor>> ReadExpected(const std::string& name) {
  const std::string single = kCaseDirectory + name + ".out.npy";
  if (std::filesystem::exists(single)) return {ReadNpy(single, HostDevice())};
  std::vector<Ref<Tensor>> fields;
  for (int field = 0;; ++field) {
    const std::string path = kCaseDirectory + name + ".out" + std::to_string(field) + ".npy";
    if (!std::filesystem::exists(path)) break;
    fields.push_back(ReadNpy(path, HostDevice()));
  }
  return fields;
}

class NnKernelsTest : public ::testing::TestWithParam<ToleranceCase> {};

TEST_P(NnKernelsTest, MatchesNumPy) {
  const ToleranceCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  RELAY_SKIP_WITHOUT_FIXTURE_DEVICE();
  try {
    std::vector<Ref<Tensor>> inputs =
        OnFixtureDevice(ReadCaseInputs(kCaseDirectory, test_case.name, test_case.input_count));
    std::vector<Ref<Tensor>> expected = ReadExpected(test_case.name);
    ASSERT_FALSE(expected.empty()) << "no expected output for " << test_case.name;

    std::vector<Ref<Tensor>> actual =
        OnHost(RunOperatorWithTupleResult(test_case.operator_name, inputs, test_case.attributes));

    ASSERT_EQ(actual.size(), expected.size());
    for (size_t field = 0; field < expected.size(); ++field) {
      SCOPED_TRACE("field " + std::to_string(field));
      ASSERT_TRUE(actual[field]);
      ASSERT_EQ(DTypeName(actual[field]->dtype()), DTypeName(expected[field]->dtype()));
      ASSERT_EQ(ShapeToString(actual[field]->shape()), ShapeToString(expected[field]->shape()));
      if (!FixtureDeviceComputes()) continue;
      EXPECT_EQ(CompareValues(*expected[field], *actual[field], test_case.tolerance), 0)
          << "mismatching elements of " << expected[field]->element_count() << " for "
          << test_case.operator_name;
    }
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NnKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<ToleranceCase>);

TEST(NnCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 55 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 55u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

TEST(NnKernelsTest, TupleResultsNeedRunOperatorWithTupleResult) {
  Ref<Tensor> x = FilledTensor({2, 2}, {1, 2, 3, 4});
  Error error = ExpectRunError("nn.dropout", {x});
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_NE(error.message().find("returns a tuple"), std::string::npos) << error.what();
}

TEST(NnKernelsTest, DenseRejectsMismatchedReductionDimension) {
  Ref<Tensor> data = FilledTensor({1, 3}, {1, 2, 3});
  Ref<Tensor> weight = FilledTensor({2, 2}, {1, 2, 3, 4});
  Error error = ExpectRunError("nn.dense", {data, weight});
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_NE(error.message().find("disagree on the reduction dimension"), std::string::npos)
      << error.what();
}

TEST(NnKernelsTest, DftAndDetRejectMalformedOperandsBeforeTheirKernels) {
  Ref<Tensor> re = FilledTensor({2, 2}, {1, 2, 3, 4});
  Ref<Tensor> im = FilledTensor({1, 2}, {1, 2});
  try {
    RunOperatorWithTupleResult("dft", std::vector<Ref<Tensor>>{re, im});
    ADD_FAILURE() << "dft of parts of different shapes did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  }
  Ref<Tensor> integers = Tensor::Empty(HostDevice(), {2, 2}, DType::kInt32);
  EXPECT_EQ(ExpectRunError("det", {integers}).kind(), ErrorKind::kUsage);
  Error error = ExpectRunError("det", {FilledTensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_EQ(ExpectRunError("det", {FilledTensor({3}, {1, 2, 3})}).kind(), ErrorKind::kUsage);
}

TEST(NnKernelsTest, SoftmaxOfARowWithInfinityIsNaNAsInNumPy) {
  // exp(inf - inf) is NaN and so is the row's sum, as in NumPy's max-subtracting softmax.
  const float infinity = std::numeric_limits<float>::infinity();
  Ref<Tensor> x = FilledTensor({1, 3}, {0, 1, 2});
  Ref<Tensor> result = RunOperator("nn.softmax", std::vector<Ref<Tensor>>{x});
  const float* values = result->data<float>();
  const double total = std::exp(0.0) + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(values[2], std::exp(2.0) / total, 1e-6);
  Ref<Tensor> with_infinity = FilledTensor({1, 2}, {infinity, 0});
  Ref<Tensor> nan_result = RunOperator("nn.softmax", std::vector<Ref<Tensor>>{with_infinity});
  EXPECT_TRUE(std::isnan(nan_result->data<float>()[0]));
  EXPECT_TRUE(std::isnan(nan_result->data<float>()[1]));  // 0 / NaN
}

}  // namespace
}  // namespace relay::kernels
