// Reductions (sum, prod, mean, max, min, argmax, argmin, all, any, variance,
// std) compiled from their compute definitions and run on the host, against
// NumPy's results.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_reduction_cases.py; each line of
// fixtures/reduction/cases.txt becomes one test named after its case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/codegen/llvm/llvm_jit.h"
#include "kernels/codegen/llvm/lower_kernel.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::kir;
using namespace relay::kernels::testing;

const std::string kCaseDirectory = FixtureDirectory("reduction");

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
    if (!ParseInteger(item, axis)) return std::nullopt;
    axes.push_back(axis);
  }
  return AttrValue::IntList(axes);
}

const std::vector<ToleranceCase>& AllCases() {
  static const std::vector<ToleranceCase> cases =
      LoadCaseIndex<ToleranceCase>(kCaseDirectory, ReadToleranceFields, ParseAttribute);
  return cases;
}

class ReductionKernelsTest : public ::testing::TestWithParam<ToleranceCase> {};

TEST_P(ReductionKernelsTest, MatchesNumPy) {
  ExpectToleranceCaseMatches(kCaseDirectory, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReductionKernelsTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<ToleranceCase>);

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

TEST(ReductionKernelsTest, OneKernelServesEveryShapeOfARank) {
  // Reductions keep their input dimensions symbolic: after the first shape,
  // other shapes of the same rank compile nothing and still reduce right.
  auto row_sums = [](int64_t rows, int64_t columns) {
    Ref<Tensor> data = Tensor::Empty(HostDevice(), {rows, columns}, DType::kFloat32);
    for (int64_t index = 0; index < rows * columns; ++index) data->data<float>()[index] = 1.0f;
    std::vector<Ref<Tensor>> inputs{data};
    return RunOperator("sum", inputs, {{"axis", AttrValue::IntList({1})}});
  };
  row_sums(3, 5);
  const uint64_t compiles = llvm_backend::HostJit().statistics().compiles;
  Ref<Tensor> sums = row_sums(4, 7);
  EXPECT_EQ(llvm_backend::HostJit().statistics().compiles, compiles);
  ASSERT_EQ(sums->shape(), (Shape{4}));
  for (int64_t row = 0; row < 4; ++row) EXPECT_EQ(sums->data<float>()[row], 7.0f);
}

}  // namespace
}  // namespace relay::kernels
