// Injective data-movement operators (reshape, transpose, strided_slice, take,
// concatenate, nn.pad, ...) run through RunOperator (built, JIT-compiled and
// launched on the host) against NumPy's results.
//
// The cases are fixtures written by tests/kernels/generate_transform_cases.py;
// each line of fixtures/transform/cases.txt becomes one test named after its
// case. The operators only move data, so outputs must match bit for bit.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
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

const std::string kCaseDirectory = std::string(RELAY_TEST_FIXTURE_DIR) + "/transform/";

struct TransformCase {
  std::string name;
  std::string operator_name;
  int input_count = 0;
  bool tuple_input = false;  // the inputs are the fields of one tuple input
  int output_count = 1;
  bool tuple_output = false;  // expected: CASE.out0.npy, CASE.out1.npy, ...
  std::vector<std::pair<std::string, std::string>> attributes;
  // Set when the index line could not be parsed; the test reports it.
  std::string index_error;
};

void PrintTo(const TransformCase& test_case, std::ostream* out) {
  *out << test_case.name << " (" << test_case.operator_name << ")";
}

bool ParseInteger(const std::string& text, int64_t& value) {
  const char* end = text.data() + text.size();
  auto [parsed_end, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && parsed_end == end && !text.empty();
}

// The index's value syntax (see the generator): an integer, `[]`, a comma
// list of integers, a comma list of `a:b` pairs, or a word.
AttrValue ParseAttributeValue(const std::string& text) {
  int64_t integer = 0;
  if (ParseInteger(text, integer)) return AttrValue::Int(integer);
  if (text == "[]") return AttrValue::List({});
  if (text.find(',') == std::string::npos) return AttrValue::String(text);
  std::vector<AttrValue> items;
  std::istringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) continue;
    size_t colon = item.find(':');
    if (colon == std::string::npos) {
      ParseInteger(item, integer);
      items.push_back(AttrValue::Int(integer));
      continue;
    }
    int64_t first = 0, second = 0;
    ParseInteger(item.substr(0, colon), first);
    ParseInteger(item.substr(colon + 1), second);
    items.push_back(AttrValue::IntList({first, second}));
  }
  return AttrValue::List(std::move(items));
}

std::vector<TransformCase> LoadCases() {
  std::vector<TransformCase> cases;
  std::ifstream index(kCaseDirectory + "cases.txt");
  std::string line;
  int line_number = 0;
  while (std::getline(index, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    TransformCase test_case;
    std::string inputs, outputs;
    fields >> test_case.name >> test_case.operator_name >> inputs >> outputs;
    test_case.tuple_input = inputs.starts_with("tuple");
    test_case.tuple_output = outputs.starts_with("tuple");
    int64_t count = -1, output_count = -1;
    if (!fields || !ParseInteger(test_case.tuple_input ? inputs.substr(5) : inputs, count) ||
        count < 0 ||
        !ParseInteger(test_case.tuple_output ? outputs.substr(5) : outputs, output_count) ||
        output_count < 1) {
      test_case.name = "malformed_line_" + std::to_string(line_number);
      test_case.index_error =
          "cases.txt:" + std::to_string(line_number) + ": cannot parse '" + line + "'";
      cases.push_back(std::move(test_case));
      continue;
    }
    test_case.input_count = static_cast<int>(count);
    test_case.output_count = static_cast<int>(output_count);
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

const std::vector<TransformCase>& AllCases() {
  static const std::vector<TransformCase> cases = LoadCases();
  return cases;
}

// Reports the first few elements whose bytes differ and returns how many did.
int64_t CompareBytes(const Tensor& expected, const Tensor& actual) {
  constexpr int64_t kReportedMismatches = 8;
  const size_t size = DTypeSize(expected.dtype());
  const auto* want = static_cast<const uint8_t*>(expected.host_data());
  const auto* got = static_cast<const uint8_t*>(actual.host_data());
  int64_t mismatches = 0;
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const size_t offset = static_cast<size_t>(index) * size;
    if (std::memcmp(want + offset, got + offset, size) == 0) continue;
    if (++mismatches <= kReportedMismatches) {
      std::ostringstream bytes;
      for (size_t byte = 0; byte < size; ++byte) {
        bytes << " " << int(want[offset + byte]) << "/" << int(got[offset + byte]);
      }
      ADD_FAILURE() << "element " << index
                    << " (flat, row-major) differs; expected/actual bytes:" << bytes.str();
    }
  }
  return mismatches;
}

class TransformKernelsTest : public ::testing::TestWithParam<TransformCase> {};

TEST_P(TransformKernelsTest, MatchesNumPy) {
  const TransformCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  try {
    std::vector<Ref<Tensor>> inputs;
    for (int position = 0; position < test_case.input_count; ++position) {
      inputs.push_back(
          ReadNpy(kCaseDirectory + test_case.name + ".in" + std::to_string(position) + ".npy",
                  HostDevice()));
    }
    std::vector<Ref<Tensor>> expected;
    if (!test_case.tuple_output) {
      expected.push_back(ReadNpy(kCaseDirectory + test_case.name + ".out.npy", HostDevice()));
    }
    for (int position = 0; test_case.tuple_output && position < test_case.output_count;
         ++position) {
      expected.push_back(
          ReadNpy(kCaseDirectory + test_case.name + ".out" + std::to_string(position) + ".npy",
                  HostDevice()));
    }
    Attrs attributes;
    for (const auto& [key, value] : test_case.attributes) {
      attributes.emplace_back(key, ParseAttributeValue(value));
    }

    std::vector<Ref<Tensor>> actual;
    if (test_case.tuple_output) {
      actual = RunOperatorWithTupleResult(test_case.operator_name, inputs, attributes);
    } else if (test_case.tuple_input) {
      actual = {RunOperatorOnTuple(test_case.operator_name, inputs, attributes)};
    } else {
      actual = {RunOperator(test_case.operator_name, inputs, attributes)};
    }

    ASSERT_EQ(actual.size(), expected.size()) << "result fields";
    for (size_t field = 0; field < expected.size(); ++field) {
      SCOPED_TRACE("result field " + std::to_string(field));
      ASSERT_TRUE(actual[field]) << "RunOperator returned no tensor";
      ASSERT_EQ(DTypeName(actual[field]->dtype()), DTypeName(expected[field]->dtype()));
      ASSERT_EQ(ShapeToString(actual[field]->shape()), ShapeToString(expected[field]->shape()));
      EXPECT_EQ(CompareBytes(*expected[field], *actual[field]), 0)
          << "mismatching elements of " << expected[field]->element_count() << " for "
          << test_case.operator_name;
    }
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

std::string CaseTestName(const ::testing::TestParamInfo<TransformCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TransformKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName);

TEST(TransformCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 76 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 76u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

Ref<Tensor> Floats(Shape shape, const std::vector<float>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  EXPECT_EQ(tensor->element_count(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

std::vector<float> Values(const Ref<Tensor>& tensor) {
  return std::vector<float>(tensor->data<float>(), tensor->data<float>() + tensor->element_count());
}

TEST(TransformKernelsErrorsTest, BadReshapeIsAUsageErrorFromTheRelation) {
  std::vector<Ref<Tensor>> inputs = {Floats({2, 3}, {1, 2, 3, 4, 5, 6})};
  try {
    RunOperator("reshape", inputs, {{"newshape", AttrValue::IntList({4, -1})}});
    ADD_FAILURE() << "reshape of 6 elements to (4, -1) did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
    EXPECT_NE(error.message().find("reshape"), std::string::npos) << error.what();
  }
}

TEST(TransformKernelsErrorsTest, TupleOperatorsNeedTheTupleEntryPoint) {
  std::vector<Ref<Tensor>> inputs = {Floats({2}, {1, 2})};
  EXPECT_THROW(RunOperator("concatenate", inputs), Error);
  EXPECT_THROW(RunOperatorOnTuple("concatenate", {}), Error);  // an empty tuple
}

TEST(TransformKernelsErrorsTest, TakeFromAnEmptyAxisIsAnErrorNotAnOutOfBoundsRead) {
  Ref<Tensor> indices = Tensor::Empty(HostDevice(), {1}, DType::kInt32);
  indices->data<int32_t>()[0] = 0;
  std::vector<Ref<Tensor>> inputs = {Floats({0, 2}, {}), indices};
  EXPECT_THROW(RunOperator("take", inputs, {{"axis", AttrValue::Int(0)}}), Error);
}

TEST(TransformKernelsErrorsTest, TupleResultsNeedTheTupleEntryPoint) {
  std::vector<Ref<Tensor>> inputs = {Floats({4}, {1, 2, 3, 4})};
  Attrs sections = {{"indices_or_sections", AttrValue::Int(2)}};
  EXPECT_THROW(RunOperator("split", inputs, sections), Error);
  std::vector<Ref<Tensor>> parts = RunOperatorWithTupleResult("split", inputs, sections);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Values(parts[1]), (std::vector<float>{3, 4}));
}

TEST(TransformKernelsApiTest, OneKernelPerShapeGivesFreshResults) {
  // Transform kernels are specialised to their input shapes: the same
  // operator on a second shape must not reuse the first shape's kernel.
  std::vector<Ref<Tensor>> small = {Floats({2, 2}, {1, 2, 3, 4})};
  std::vector<Ref<Tensor>> large = {Floats({2, 3}, {1, 2, 3, 4, 5, 6})};
  EXPECT_EQ(Values(RunOperator("transpose", small)), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(Values(RunOperator("transpose", large)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Values(RunOperator("transpose", small)), (std::vector<float>{1, 3, 2, 4}));
}

}  // namespace
}  // namespace relay::kernels
