// Reductions (sum, prod, mean, max, min, argmax, argmin, all, any, variance,
// std) compiled from their compute definitions and run on the host, against
// NumPy's results.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_reduction_cases.py; each line of
// fixtures/reduction/cases.txt becomes one test named after its case.
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
#include "kernels/codegen/llvm/lower_kernel.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::kir;

const std::string kCaseDirectory = std::string(RELAY_TEST_FIXTURE_DIR) + "/reduction/";

struct ReductionCase {
  std::string name;
  std::string operator_name;
  int input_count = 0;
  double tolerance = 0;
  Attrs attributes;
  // Set when the index line could not be parsed; the test reports it.
  std::string index_error;
};

// gtest prints a failing case's parameter with this.
void PrintTo(const ReductionCase& test_case, std::ostream* out) {
  *out << test_case.name << " (" << test_case.operator_name << ")";
}

// `axis` is a comma-separated list of integers; every other attribute of the
// index is a bool written as true or false.
std::optional<AttrValue> ParseAttribute(const std::string& key, const std::string& text) {
  if (key != "axis") {
    if (text == "true" || text == "false") return AttrValue::Bool(text == "true");
    return std::nullopt;
  }
  std::vector<int64_t> axes;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    int64_t axis = 0;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), axis);
    if (error != std::errc() || end != item.data() + item.size()) return std::nullopt;
    axes.push_back(axis);
  }
  return AttrValue::IntList(axes);
}

std::vector<ReductionCase> LoadCases() {
  std::vector<ReductionCase> cases;
  std::ifstream index(kCaseDirectory + "cases.txt");
  std::string line;
  int line_number = 0;
  while (std::getline(index, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ReductionCase test_case;
    std::string tolerance;
    fields >> test_case.name >> test_case.operator_name >> test_case.input_count >> tolerance;
    std::string where = "cases.txt:" + std::to_string(line_number) + ": ";
    if (!fields || test_case.input_count < 1) {
      test_case.name = "malformed_line_" + std::to_string(line_number);
      test_case.index_error = where + "cannot parse '" + line + "'";
      cases.push_back(std::move(test_case));
      continue;
    }
    test_case.tolerance = std::strtod(tolerance.c_str(), nullptr);
    std::string attribute;
    while (fields >> attribute) {
      size_t equals = attribute.find('=');
      std::optional<AttrValue> value;
      if (equals != std::string::npos && equals != 0) {
        value = ParseAttribute(attribute.substr(0, equals), attribute.substr(equals + 1));
      }
      if (!value) {
        test_case.index_error = where + "malformed attribute '" + attribute + "'";
        break;
      }
      test_case.attributes.emplace_back(attribute.substr(0, equals), *value);
    }
    cases.push_back(std::move(test_case));
  }
  return cases;
}

const std::vector<ReductionCase>& AllCases() {
  static const std::vector<ReductionCase> cases = LoadCases();
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

class ReductionKernelsTest : public ::testing::TestWithParam<ReductionCase> {};

TEST_P(ReductionKernelsTest, MatchesNumPy) {
  const ReductionCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  try {
    std::vector<Ref<Tensor>> inputs;
    for (int position = 0; position < test_case.input_count; ++position) {
      inputs.push_back(
          ReadNpy(kCaseDirectory + test_case.name + ".in" + std::to_string(position) + ".npy",
                  HostDevice()));
    }
    Ref<Tensor> expected = ReadNpy(kCaseDirectory + test_case.name + ".out.npy", HostDevice());

    Ref<Tensor> actual = RunOperator(test_case.operator_name, inputs, test_case.attributes);

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

std::string CaseTestName(const ::testing::TestParamInfo<ReductionCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReductionKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName);

TEST(ReductionCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 68 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 60u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

Ref<Tensor> FloatTensor(Shape shape, DType dtype = DType::kFloat32) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), dtype);
  std::memset(tensor->host_data(), 0,
              static_cast<size_t>(tensor->element_count()) * DTypeSize(dtype));
  return tensor;
}

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

TEST(ReductionKernelsErrorsTest, ReductionsWithoutIdentityRejectAnEmptyAxisAtRunTime) {
  Ref<Tensor> empty = FloatTensor({2, 0});
  Attrs over_axis_1 = {{"axis", AttrValue::IntList({1})}};
  for (const char* name : {"max", "min", "argmax", "argmin"}) {
    Error error = ExpectRunError(name, {empty}, over_axis_1);
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime) << error.what();
    EXPECT_NE(error.message().find("operator " + std::string(name) +
                                   " cannot reduce axis 1, which has size 0"),
              std::string::npos)
        << error.what();
    EXPECT_EQ(ExpectRunError(name, {empty}).kind(), ErrorKind::kRuntime);  // axis=None
  }
  // Reducing only the non-empty axis is fine: the output is empty.
  Ref<Tensor> result =
      RunOperator("max", std::vector<Ref<Tensor>>{empty}, {{"axis", AttrValue::IntList({0})}});
  EXPECT_EQ(ShapeToString(result->shape()), ShapeToString(Shape{0}));
}

TEST(ReductionKernelsErrorsTest, MeanVarianceAndStdOfIntegersAreUsageErrors) {
  Ref<Tensor> integers = FloatTensor({2, 3}, DType::kInt32);
  Ref<Tensor> integer_mean = FloatTensor({2, 1}, DType::kInt32);
  Attrs over_axis_1 = {{"axis", AttrValue::IntList({1})}};
  Error error = ExpectRunError("mean", {integers}, over_axis_1);
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  EXPECT_NE(error.message().find("mean supports only floating-point inputs"), std::string::npos)
      << error.what();
  EXPECT_EQ(ExpectRunError("variance", {integers, integer_mean}, over_axis_1).kind(),
            ErrorKind::kUsage);
  EXPECT_EQ(ExpectRunError("std", {integers, integer_mean}, over_axis_1).kind(), ErrorKind::kUsage);
}

TEST(ReductionKernelsErrorsTest, BadAxesAndDtypesAreRejectedByTheTypeRelation) {
  Ref<Tensor> x = FloatTensor({2, 3});
  EXPECT_EQ(ExpectRunError("sum", {x}, {{"axis", AttrValue::IntList({2})}}).kind(),
            ErrorKind::kUsage);
  EXPECT_EQ(ExpectRunError("sum", {x}, {{"axis", AttrValue::IntList({1, -1})}}).kind(),
            ErrorKind::kUsage);
  EXPECT_EQ(ExpectRunError("all", {x}).kind(), ErrorKind::kUsage);  // all needs bool
}

TEST(ReductionKernelsTest, ComputeIsOneReduceNodePerOutputElement) {
  Buffer data(new BufferNode("data", DType::kFloat32, {Int(2), Int(3)}));
  const OperatorDefinition* sum = FindOperator("sum");
  ASSERT_NE(sum, nullptr);
  ASSERT_TRUE(sum->compute);
  Attrs attrs;
  ASSERT_FALSE(NormalizeAttrs(sum->attributes, {{"axis", AttrValue::IntList({-1})}}, attrs));
  std::vector<TensorExpr> inputs = {FromBuffer(data)};
  TensorExpr output = sum->compute(inputs, attrs);
  ASSERT_EQ(output.ndim(), 1u);
  Var i(new VarNode("i"));
  // Accumulated in float64, rounded once (see reduction_compute.cc).
  EXPECT_EQ(PrintExpr(output.at({i})),
            "float32(sum(v0 in 0..3; init 0float64; float64(b0[((v1 * 3) + v0)])))");
}

}  // namespace
}  // namespace relay::kernels
