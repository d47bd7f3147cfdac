// Injective data-movement operators (reshape, transpose, strided_slice, take,
// concatenate, nn.pad, ...) run through RunOperator (built, JIT-compiled and
// launched on the host) against NumPy's results.
//
// The cases are fixtures written by tests/kernels/generate_transform_cases.py;
// each line of fixtures/transform/cases.txt becomes one test named after its
// case. The operators only move data, so outputs must match bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/codegen/llvm/llvm_jit.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::testing;

const std::string kCaseDirectory = FixtureDirectory("transform");

// A line of this suite's index: CASE OPERATOR INPUTS OUTPUTS [KEY=VALUE ...].
struct TransformCase {
  std::string name;
  std::string operator_name;
  int input_count = 0;
  bool tuple_input = false;  // the inputs are the fields of one tuple input
  int output_count = 1;
  bool tuple_output = false;  // expected: CASE.out0.npy, CASE.out1.npy, ...
  Attrs attributes;
  // Set when the index line could not be parsed; the test reports it.
  std::string index_error;
};

void PrintTo(const TransformCase& test_case, std::ostream* out) {
  *out << test_case.name << " (" << test_case.operator_name << ")";
}

// INPUTS is N or tupleN, OUTPUTS 1 or tupleN.
bool ReadTransformFields(std::istringstream& fields, TransformCase& test_case) {
  std::string inputs, outputs;
  fields >> test_case.name >> test_case.operator_name >> inputs >> outputs;
  test_case.tuple_input = inputs.starts_with("tuple");
  test_case.tuple_output = outputs.starts_with("tuple");
  int64_t count = -1, output_count = -1;
  if (!fields || !ParseInteger(test_case.tuple_input ? inputs.substr(5) : inputs, count) ||
      count < 0 ||
      !ParseInteger(test_case.tuple_output ? outputs.substr(5) : outputs, output_count) ||
      output_count < 1) {
    return false;
  }
  test_case.input_count = static_cast<int>(count);
  test_case.output_count = static_cast<int>(output_count);
  return true;
}

// The index's value syntax (see the generator): an integer, `[]`, a comma
// list of integers, a comma list of `a:b` pairs, or a word.
std::optional<AttrValue> ParseAttributeValue(const std::string& /*key*/, const std::string& text) {
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

const std::vector<TransformCase>& AllCases() {
  static const std::vector<TransformCase> cases =
      LoadCaseIndex<TransformCase>(kCaseDirectory, ReadTransformFields, ParseAttributeValue);
  return cases;
}

class TransformKernelsTest : public ::testing::TestWithParam<TransformCase> {};

TEST_P(TransformKernelsTest, MatchesNumPy) {
  const TransformCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  RELAY_SKIP_WITHOUT_FIXTURE_DEVICE();
  try {
    std::vector<Ref<Tensor>> inputs =
        ReadCaseInputs(kCaseDirectory, test_case.name, test_case.input_count);
    // arange reads its bounds' values for its shape: they stay on the host.
    if (test_case.operator_name != "arange") inputs = OnFixtureDevice(std::move(inputs));
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
    const Attrs& attributes = test_case.attributes;

    std::vector<Ref<Tensor>> actual;
    if (test_case.tuple_output) {
      actual = RunOperatorWithTupleResult(test_case.operator_name, inputs, attributes);
    } else if (test_case.tuple_input) {
      actual = {RunOperatorOnTuple(test_case.operator_name, inputs, attributes)};
    } else {
      actual = {RunOperator(test_case.operator_name, inputs, attributes)};
    }
    actual = OnHost(std::move(actual));

    ASSERT_EQ(actual.size(), expected.size()) << "result fields";
    for (size_t field = 0; field < expected.size(); ++field) {
      SCOPED_TRACE("result field " + std::to_string(field));
      ASSERT_TRUE(actual[field]) << "RunOperator returned no tensor";
      ASSERT_EQ(DTypeName(actual[field]->dtype()), DTypeName(expected[field]->dtype()));
      ASSERT_EQ(ShapeToString(actual[field]->shape()), ShapeToString(expected[field]->shape()));
      if (!FixtureDeviceComputes()) continue;
      EXPECT_EQ(CompareBytes(*expected[field], *actual[field]), 0)
          << "mismatching elements of " << expected[field]->element_count() << " for "
          << test_case.operator_name;
    }
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TransformKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<TransformCase>);

TEST(TransformCasesIndexTest, ListsEveryGeneratedCase) {
  // The generator writes 89 cases; an unreadable index would silently run none.
  EXPECT_GE(AllCases().size(), 89u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- direct tests ------------------------------------------------------------------------

std::vector<float> Values(const Ref<Tensor>& tensor) {
  return std::vector<float>(tensor->data<float>(), tensor->data<float>() + tensor->element_count());
}

TEST(TransformKernelsErrorsTest, BadReshapeIsAUsageErrorFromTheRelation) {
  std::vector<Ref<Tensor>> inputs = {FilledTensor({2, 3}, {1, 2, 3, 4, 5, 6})};
  try {
    RunOperator("reshape", inputs, {{"newshape", AttrValue::IntList({4, -1})}});
    ADD_FAILURE() << "reshape of 6 elements to (4, -1) did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
    EXPECT_NE(error.message().find("reshape"), std::string::npos) << error.what();
  }
}

TEST(TransformKernelsErrorsTest, TupleOperatorsNeedTheTupleEntryPoint) {
  std::vector<Ref<Tensor>> inputs = {FilledTensor({2}, {1, 2})};
  EXPECT_THROW(RunOperator("concatenate", inputs), Error);
  EXPECT_THROW(RunOperatorOnTuple("concatenate", {}), Error);  // an empty tuple
}

TEST(TransformKernelsErrorsTest, TakeFromAnEmptyAxisIsAnErrorNotAnOutOfBoundsRead) {
  Ref<Tensor> indices = Tensor::Empty(HostDevice(), {1}, DType::kInt32);
  indices->data<int32_t>()[0] = 0;
  std::vector<Ref<Tensor>> inputs = {FilledTensor({0, 2}, {}), indices};
  EXPECT_THROW(RunOperator("take", inputs, {{"axis", AttrValue::Int(0)}}), Error);
}

TEST(TransformKernelsErrorsTest, UniqueAlongAnAxisTheDataLacksIsAUsageError) {
  std::vector<Ref<Tensor>> inputs = {FilledTensor({2, 2}, {1, 2, 1, 2})};
  try {
    RunOperatorWithTupleResult("unique_along", inputs, {{"axis", AttrValue::Int(2)}});
    ADD_FAILURE() << "unique_along of axis 2 of a matrix did not throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
  }
  // Of an empty axis: no slices, and four empty results.
  std::vector<Ref<Tensor>> empty = {FilledTensor({0, 3}, {})};
  std::vector<Ref<Tensor>> results =
      RunOperatorWithTupleResult("unique_along", empty, {{"axis", AttrValue::Int(0)}});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(ShapeToString(results[0]->shape()), ShapeToString(Shape{0, 3}));
  EXPECT_EQ(results[2]->element_count(), 0);
}

TEST(TransformKernelsErrorsTest, TupleResultsNeedTheTupleEntryPoint) {
  std::vector<Ref<Tensor>> inputs = {FilledTensor({4}, {1, 2, 3, 4})};
  Attrs sections = {{"indices_or_sections", AttrValue::Int(2)}};
  EXPECT_THROW(RunOperator("split", inputs, sections), Error);
  std::vector<Ref<Tensor>> parts = RunOperatorWithTupleResult("split", inputs, sections);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Values(parts[1]), (std::vector<float>{3, 4}));
}

TEST(TransformKernelsApiTest, OneKernelPerShapeGivesFreshResults) {
  // Transform kernels are specialised to their input shapes: the same
  // operator on a second shape must not reuse the first shape's kernel.
  std::vector<Ref<Tensor>> small = {FilledTensor({2, 2}, {1, 2, 3, 4})};
  std::vector<Ref<Tensor>> large = {FilledTensor({2, 3}, {1, 2, 3, 4, 5, 6})};
  EXPECT_EQ(Values(RunOperator("transpose", small)), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(Values(RunOperator("transpose", large)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Values(RunOperator("transpose", small)), (std::vector<float>{1, 3, 2, 4}));
}

// arange's bounds as float32 scalars.
std::vector<Ref<Tensor>> Bounds(float start, float stop, float step) {
  return {FilledTensor({}, {start}), FilledTensor({}, {stop}), FilledTensor({}, {step})};
}

TEST(TransformKernelsApiTest, OneArangeKernelServesEveryLength) {
  // arange's length comes from its bounds' values: the output dimension is
  // symbolic, so a second length runs the kernel compiled for the first.
  EXPECT_EQ(Values(RunOperator("arange", Bounds(0, 3, 1))), (std::vector<float>{0, 1, 2}));
  const uint64_t compiles = llvm_backend::HostJit().statistics().compiles;
  EXPECT_EQ(Values(RunOperator("arange", Bounds(1, 2.5f, 0.25f))),
            (std::vector<float>{1, 1.25f, 1.5f, 1.75f, 2, 2.25f}));
  EXPECT_EQ(llvm_backend::HostJit().statistics().compiles, compiles);
}

TEST(TransformKernelsErrorsTest, ArangeRejectsBadBounds) {
  Error error = ExpectRunError("arange", Bounds(0, 1, 0));
  EXPECT_NE(error.message().find("step must not be 0"), std::string::npos) << error.what();
  // Bounds of another dtype than the dtype attribute.
  error = ExpectRunError("arange", Bounds(0, 1, 1), {{"dtype", AttrValue::String("int32")}});
  EXPECT_NE(error.message().find("must be a scalar of dtype int32"), std::string::npos)
      << error.what();
  // An infinite length.
  error = ExpectRunError("arange", Bounds(0, std::numeric_limits<float>::infinity(), 1));
  EXPECT_NE(error.message().find("no finite length"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace relay::kernels
