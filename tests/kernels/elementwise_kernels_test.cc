// Elementwise and broadcast operators run through RunOperator (built,
// JIT-compiled and launched on the host) against NumPy's results.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_elementwise_cases.py; each line of
// fixtures/elementwise/cases.txt becomes one test named after its case.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"

namespace relay::kernels {
namespace {

const std::string kCaseDirectory = std::string(RELAY_TEST_FIXTURE_DIR) + "/elementwise/";

struct ElementwiseCase {
  std::string name;
  std::string operator_name;
  int input_count = 0;
  double tolerance = 0;
  // Attribute values as written in the index, converted by ParseAttributeValue.
  std::vector<std::pair<std::string, std::string>> attributes;
  // Set when the index line could not be parsed; the test reports it.
  std::string index_error;
};

// gtest prints a failing case's parameter with this.
void PrintTo(const ElementwiseCase& test_case, std::ostream* out) {
  *out << test_case.name << " (" << test_case.operator_name << ")";
}

// An integer (written without a point or exponent) becomes AttrValue::Int, a
// number with one becomes AttrValue::Float, anything else (a dtype name)
// AttrValue::String.
AttrValue ParseAttributeValue(const std::string& text) {
  int64_t integer = 0;
  const char* end = text.data() + text.size();
  auto [integer_end, integer_error] = std::from_chars(text.data(), end, integer);
  if (integer_error == std::errc() && integer_end == end) return AttrValue::Int(integer);
  char* float_end = nullptr;
  double number = std::strtod(text.c_str(), &float_end);
  if (!text.empty() && float_end == text.c_str() + text.size()) return AttrValue::Float(number);
  return AttrValue::String(text);
}

std::vector<ElementwiseCase> LoadCases() {
  std::vector<ElementwiseCase> cases;
  std::ifstream index(kCaseDirectory + "cases.txt");
  std::string line;
  int line_number = 0;
  while (std::getline(index, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ElementwiseCase test_case;
    std::string tolerance;
    fields >> test_case.name >> test_case.operator_name >> test_case.input_count >> tolerance;
    if (!fields || test_case.input_count < 1) {
      test_case.name = "malformed_line_" + std::to_string(line_number);
      test_case.index_error =
          "cases.txt:" + std::to_string(line_number) + ": cannot parse '" + line + "'";
      cases.push_back(std::move(test_case));
      continue;
    }
    test_case.tolerance = std::strtod(tolerance.c_str(), nullptr);
    std::string attribute;
    while (fields >> attribute) {
      size_t equals = attribute.find('=');
      if (equals == std::string::npos || equals == 0) {
        test_case.index_error = "cases.txt:" + std::to_string(line_number) +
                                ": attribute without a value: '" + attribute + "'";
        break;
      }
      test_case.attributes.emplace_back(attribute.substr(0, equals), attribute.substr(equals + 1));
    }
    cases.push_back(std::move(test_case));
  }
  return cases;
}

const std::vector<ElementwiseCase>& AllCases() {
  static const std::vector<ElementwiseCase> cases = LoadCases();
  return cases;
}

const uint8_t* ElementBytes(const Tensor& tensor, int64_t index) {
  return static_cast<const uint8_t*>(tensor.host_data()) +
         static_cast<size_t>(index) * DTypeSize(tensor.dtype());
}

template <typename T>
T LoadElement(const Tensor& tensor, int64_t index) {
  T value;
  std::memcpy(&value, ElementBytes(tensor, index), sizeof value);
  return value;
}

double FloatElement(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::kFloat16:
      return static_cast<float>(LoadElement<Float16>(tensor, index));
    case DType::kFloat32:
      return LoadElement<float>(tensor, index);
    case DType::kFloat64:
      return LoadElement<double>(tensor, index);
    default:
      break;
  }
  ADD_FAILURE() << "not a floating-point dtype: " << DTypeName(tensor.dtype());
  return 0;
}

// Integers and bools, widened; a bool is read as its raw byte so that a value
// other than 0 or 1 shows up as a mismatch.
int64_t IntegerElement(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::kBool:
      return LoadElement<uint8_t>(tensor, index);
    case DType::kInt8:
      return LoadElement<int8_t>(tensor, index);
    case DType::kInt16:
      return LoadElement<int16_t>(tensor, index);
    case DType::kInt32:
      return LoadElement<int32_t>(tensor, index);
    case DType::kInt64:
      return LoadElement<int64_t>(tensor, index);
    case DType::kUInt8:
      return LoadElement<uint8_t>(tensor, index);
    default:
      break;
  }
  ADD_FAILURE() << "not an integer dtype: " << DTypeName(tensor.dtype());
  return 0;
}

// NaN matches NaN, an infinity matches only itself, anything else within
// tolerance * max(1, |expected|) (relative for large values, absolute near 0).
bool FloatsMatch(double expected, double actual, double tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return std::fabs(actual - expected) <= tolerance * std::max(1.0, std::fabs(expected));
}

// Reports each mismatching element (the first few in full) and returns how
// many there were.
int64_t CompareValues(const Tensor& expected, const Tensor& actual, double tolerance) {
  constexpr int64_t kReportedMismatches = 8;
  int64_t mismatches = 0;
  const bool is_float = IsFloat(expected.dtype());
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    std::ostringstream difference;
    difference.precision(17);
    if (is_float) {
      double want = FloatElement(expected, index), got = FloatElement(actual, index);
      if (FloatsMatch(want, got, tolerance)) continue;
      difference << "expected " << want << ", got " << got << " (difference " << got - want
                 << ", tolerance " << tolerance << " * max(1, |expected|))";
    } else {
      int64_t want = IntegerElement(expected, index), got = IntegerElement(actual, index);
      if (want == got) continue;
      difference << "expected " << want << ", got " << got;
    }
    if (++mismatches <= kReportedMismatches) {
      ADD_FAILURE() << "element " << index << " (flat, row-major): " << difference.str();
    }
  }
  return mismatches;
}

class ElementwiseKernelsTest : public ::testing::TestWithParam<ElementwiseCase> {};

TEST_P(ElementwiseKernelsTest, MatchesNumPy) {
  const ElementwiseCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  try {
    std::vector<Ref<Tensor>> inputs;
    for (int position = 0; position < test_case.input_count; ++position) {
      inputs.push_back(
          ReadNpy(kCaseDirectory + test_case.name + ".in" + std::to_string(position) + ".npy",
                  HostDevice()));
    }
    Ref<Tensor> expected = ReadNpy(kCaseDirectory + test_case.name + ".out.npy", HostDevice());
    Attrs attributes;
    for (const auto& [key, value] : test_case.attributes) {
      attributes.emplace_back(key, ParseAttributeValue(value));
    }

    Ref<Tensor> actual = RunOperator(test_case.operator_name, inputs, attributes);

    ASSERT_TRUE(actual) << "RunOperator returned no tensor";
    ASSERT_EQ(DTypeName(actual->dtype()), DTypeName(expected->dtype()));
    ASSERT_EQ(ShapeToString(actual->shape()), ShapeToString(expected->shape()));
    EXPECT_EQ(CompareValues(*expected, *actual, test_case.tolerance), 0)
        << "mismatching elements of " << expected->element_count() << " for "
        << test_case.operator_name;
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

std::string CaseTestName(const ::testing::TestParamInfo<ElementwiseCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ElementwiseKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName);

TEST(ElementwiseCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 188 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 150u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

Ref<Tensor> FilledTensor(Shape shape, const std::vector<float>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  EXPECT_EQ(tensor->element_count(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

// Runs `name` and returns the relay::Error it throws (failing if it throws
// none).
Error ExpectRunError(std::string_view name, const std::vector<Ref<Tensor>>& inputs,
                     const Attrs& attributes = {}) {
  try {
    RunOperator(name, inputs, attributes);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << name << " did not throw relay::Error";
  return Error(ErrorKind::kInternal, "no error");
}

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
