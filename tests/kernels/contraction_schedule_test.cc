// The contraction schedule (kernels/compute/contraction_schedule.h): dense,
// matmul, batch_matmul and conv2d calls large enough for it, alone and with
// fused epilogues, against NumPy's results; and the cases it must leave to
// the naive schedule.
//
// The cases, their inputs and expected outputs are fixtures written by
// tests/kernels/generate_contraction_cases.py (fixtures/contraction/). Each
// case's chain of operators is composed from the operators' compute
// definitions, as fusion does, and must be served by the contraction
// schedule (a register tile; workspaces for the packed operands unless the
// case is one of few rows), so that these tests cannot pass on the naive
// schedule alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/contraction_schedule.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/compute/depthwise_schedule.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::kir;
using namespace relay::kernels::testing;

const std::string kCaseDirectory = FixtureDirectory("contraction");

// Attribute values of the index: see generate_contraction_cases.py.
std::optional<AttrValue> ParseAttribute(const std::string& key, const std::string& text) {
  static const std::set<std::string> kIntLists = {"strides", "padding", "dilation"};
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
  if (text == "true" || text == "false") return AttrValue::Bool(text == "true");
  return AttrValue::String(text);
}

const std::vector<ToleranceCase>& AllCases() {
  static const std::vector<ToleranceCase> cases =
      LoadCaseIndex<ToleranceCase>(kCaseDirectory, ReadToleranceFields, ParseAttribute);
  return cases;
}

std::vector<std::string> SplitChain(const std::string& chain) {
  std::vector<std::string> names;
  std::istringstream items(chain);
  std::string item;
  while (std::getline(items, item, '+')) names.push_back(item);
  return names;
}

Attrs Normalized(const OperatorDefinition& definition, const Attrs& given) {
  Attrs normalized;
  std::optional<std::string> problem = NormalizeAttrs(definition.attributes, given, normalized);
  if (problem) throw Error(ErrorKind::kUsage, definition.name + ": " + *problem);
  return normalized;
}

// The chain of `test_case` composed over buffers shaped like `inputs`: the
// first operator takes the first inputs it needs and the case's attributes;
// each later one the previous result, then the next inputs, and defaults.
TensorExpr ComposeChain(const ToleranceCase& test_case, const std::vector<Buffer>& buffers) {
  size_t next_input = 0;
  std::optional<TensorExpr> result;
  for (const std::string& name : SplitChain(test_case.operator_name)) {
    const OperatorDefinition* definition = FindOperator(name);
    if (definition == nullptr) throw Error(ErrorKind::kUsage, "unknown operator " + name);
    std::vector<TensorExpr> arguments;
    if (result) arguments.push_back(*result);
    while (arguments.size() < definition->input_names.size()) {
      if (next_input == buffers.size()) throw Error(ErrorKind::kUsage, "too few inputs");
      arguments.push_back(FromBuffer(buffers[next_input++]));
    }
    result = definition->compute(arguments,
                                 Normalized(*definition, result ? Attrs{} : test_case.attributes));
  }
  if (next_input != buffers.size()) throw Error(ErrorKind::kUsage, "unused inputs");
  return *result;
}

class ContractionScheduleTest : public ::testing::TestWithParam<ToleranceCase> {};

TEST_P(ContractionScheduleTest, MatchesNumPy) {
  const ToleranceCase& test_case = GetParam();
  ASSERT_TRUE(test_case.index_error.empty()) << test_case.index_error;
  RELAY_SKIP_WITHOUT_FIXTURE_DEVICE();
  try {
    std::vector<Ref<Tensor>> inputs =
        ReadCaseInputs(kCaseDirectory, test_case.name, test_case.input_count);
    Ref<Tensor> expected = ReadNpy(kCaseDirectory + test_case.name + ".out.npy", HostDevice());
    std::vector<Buffer> buffers;
    for (size_t index = 0; index < inputs.size(); ++index) {
      std::vector<Expr> shape;
      for (int64_t dim : inputs[index]->shape()) shape.push_back(Int(dim));
      buffers.push_back(
          Buffer(new BufferNode("in" + std::to_string(index), inputs[index]->dtype(), shape)));
    }
    TensorExpr output = ComposeChain(test_case, buffers);
    ASSERT_EQ(DTypeName(output.dtype), DTypeName(expected->dtype()));

    // On another device, the chain runs as one fused kernel of the GPU
    // schedule: each operator takes the one before it first, then the
    // next inputs.
    if (FixtureDevice() != nullptr) {
      std::vector<FusedOperator> chain;
      int32_t next_input = 0;
      for (const std::string& name : SplitChain(test_case.operator_name)) {
        FusedOperator fused{name, chain.empty() ? test_case.attributes : Attrs{}, {}};
        if (!chain.empty()) fused.inputs.push_back(-1 - int32_t(chain.size() - 1));
        while (fused.inputs.size() < FindOperator(name)->input_names.size())
          fused.inputs.push_back(next_input++);
        chain.push_back(std::move(fused));
      }
      const std::vector<Ref<Tensor>> on_device = OnFixtureDevice(inputs);
      Ref<Tensor> actual = OnHost(PrepareFusedOperators(chain, on_device)->Run(on_device)[0]);
      ASSERT_EQ(ShapeToString(actual->shape()), ShapeToString(expected->shape()));
      if (!FixtureDeviceComputes()) return;
      EXPECT_EQ(CompareValues(*expected, *actual, test_case.tolerance), 0)
          << "mismatching elements of " << expected->element_count();
      return;
    }

    // Depthwise convolutions have a schedule of their own, chosen by the
    // operator's attributes. Three tasks, so that most take several planes
    // (4 to 12 planes here) and the last one fewer.
    const bool depthwise = test_case.name.starts_with("depthwise");
    std::optional<kir::Kernel> depthwise_kernel;
    if (depthwise) {
      depthwise_kernel = BuildDepthwiseKernel(
          test_case.name, buffers, output,
          Normalized(*FindOperator("nn.conv2d"), test_case.attributes), 0, 1, 3);
      ASSERT_TRUE(depthwise_kernel) << "not served by the depthwise schedule";
      // A padded plane per task, unless there is no padding to add.
      ASSERT_EQ(depthwise_kernel->workspace_count, test_case.name.ends_with("nopad") ? 0u : 1u);
    }
    kir::Kernel kernel =
        depthwise ? *depthwise_kernel : BuildCpuKernel(test_case.name, buffers, output);
    // Both contraction schedules accumulate in a register tile; the packed
    // one also packs into workspaces, the small-rows one reads in place.
    const std::string text = PrintKernel(kernel);
    ASSERT_TRUE(depthwise || text.find("allocate ") != std::string::npos)
        << "not served by a contraction schedule:\n"
        << text;
    if (test_case.name.starts_with("small_rows")) {
      EXPECT_EQ(kernel.workspace_count, 0u) << text;
    }
    if (test_case.name.starts_with("packed")) {
      EXPECT_GE(kernel.workspace_count, 1u) << text;
    }
    // A 1x1 convolution's pixels are its columns, and both operands are
    // read in place.
    if (test_case.name == "conv_1x1_pixel_columns" || test_case.name == "conv_1x1_bias_residual") {
      EXPECT_EQ(kernel.workspace_count, 0u) << text;
    }
    Ref<Tensor> actual = RunKernel(kernel, inputs, expected->shape());
    EXPECT_EQ(CompareValues(*expected, *actual, test_case.tolerance), 0)
        << "mismatching elements of " << expected->element_count();

    // A single operator gives the same through the operator table.
    if (SplitChain(test_case.operator_name).size() == 1) {
      Ref<Tensor> through_table =
          RunOperator(test_case.operator_name, inputs, test_case.attributes);
      ASSERT_EQ(ShapeToString(through_table->shape()), ShapeToString(expected->shape()));
      EXPECT_EQ(CompareValues(*expected, *through_table, test_case.tolerance), 0);
    }
  } catch (const Error& error) {
    FAIL() << test_case.operator_name << " threw: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ContractionScheduleTest, ::testing::ValuesIn(AllCases()),
                         CaseTestName<ToleranceCase>);

TEST(ContractionCasesIndexTest, ListsEveryGeneratedCase) {
  EXPECT_GE(AllCases().size(), 37u) << "cannot read " << kCaseDirectory << "cases.txt";
}

// ---- cases the schedule leaves alone ----------------------------------------------------

std::optional<kir::Kernel> ContractionOf(const char* name, std::vector<Shape> shapes,
                                         const Attrs& attrs = {}, DType dtype = DType::kFloat32,
                                         const ContractionTiling& tiling = {}) {
  const OperatorDefinition* definition = FindOperator(name);
  std::vector<Buffer> buffers;
  std::vector<TensorExpr> inputs;
  for (size_t index = 0; index < shapes.size(); ++index) {
    std::vector<Expr> shape;
    for (int64_t dim : shapes[index]) shape.push_back(Int(dim));
    buffers.push_back(Buffer(new BufferNode("in" + std::to_string(index), dtype, shape)));
    inputs.push_back(FromBuffer(buffers.back()));
  }
  TensorExpr output = definition->compute(inputs, Normalized(*definition, attrs));
  return BuildContractionKernel(name, buffers, output, tiling);
}

TEST(ContractionScheduleTest, ServesLargeDotProducts) {
  std::optional<kir::Kernel> kernel = ContractionOf("nn.dense", {{128, 64}, {64, 64}});
  ASSERT_TRUE(kernel);
  // The data is read in place; the weight is packed: 64 columns in panels
  // of 32 float32 (128 bytes), for 64 k.
  ASSERT_EQ(kernel->workspace_count, 1u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[3])), "4096");

  // A padded convolution's windows are packed too (im2col): 100 output
  // pixels in blocks of 6 (17 blocks, the last one padded) for 8 * 3 * 3 k.
  // The packed weight (32 x 72) is small enough to stay in cache, so each
  // task packs one block at a time just before using it: 16 tasks wanted,
  // 2 blocks each, 9 tasks, 6 rows of 72 each.
  kernel = ContractionOf("nn.conv2d", {{1, 8, 10, 10}, {32, 8, 3, 3}},
                         {{"padding", AttrValue::IntList({1, 1})}});
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 2u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[3])), std::to_string(9 * 6 * 72));
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[4])), std::to_string(32 * 72));
  // A larger weight (256 x 576, 576 KiB) is swept panel by panel instead,
  // against every row block: the whole im2col is packed first.
  kernel = ContractionOf("nn.conv2d", {{1, 64, 10, 10}, {256, 64, 3, 3}},
                         {{"padding", AttrValue::IntList({1, 1})}});
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 2u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[3])), std::to_string(17 * 6 * 576));
  // Without padding every window is inside the data: it is read in place.
  kernel = ContractionOf("nn.conv2d", {{1, 8, 12, 12}, {32, 8, 3, 3}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 1u);
  // A 1x1 convolution at stride 1 reads its data contiguously along the
  // output pixels: they are the columns (13 x 9 = 117, flattened, in 4
  // panels of 32), and the output channels are the rows (5 blocks of 6), so
  // that each tile stores whole vectors. Both operands are read in place;
  // the last panel reads the last 32 columns (from 85) and stores those past
  // the third panel's (from 96).
  kernel = ContractionOf("nn.conv2d", {{1, 24, 13, 9}, {30, 24, 1, 1}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 0u);
  EXPECT_NE(PrintKernel(*kernel).find(", 85)"), std::string::npos) << PrintKernel(*kernel);
  // A 7x7 map's 49 pixels leave a third of their two panels empty, and 64
  // channels tile evenly (9 blocks of 6 pixels, 2 panels): the channels
  // are the columns, of the packed weight.
  kernel = ContractionOf("nn.conv2d", {{1, 24, 7, 7}, {64, 24, 1, 1}});
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 1u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[2 + 1])), std::to_string(2 * 24 * 32));
  // At stride 2 the pixels are not contiguous, but packing them costs a
  // quarter of the data: the 13 x 9 output pixels are still the columns,
  // packed (4 panels of 32 over 24 channels).
  kernel = ContractionOf("nn.conv2d", {{1, 24, 26, 18}, {31, 24, 1, 1}},
                         {{"strides", AttrValue::IntList({2, 2})}});
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 1u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[2 + 1])), std::to_string(4 * 24 * 32));
  // A 3x3 window would pack each pixel nine times: the channels stay the
  // columns, of the packed weight (one panel of 32 over 24 * 9 k).
  kernel = ContractionOf("nn.conv2d", {{1, 24, 26, 18}, {31, 24, 3, 3}},
                         {{"strides", AttrValue::IntList({2, 2})}});
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 1u);
  EXPECT_EQ(PrintExpr(ElementCount(kernel->params[2 + 1])), std::to_string(1 * 24 * 9 * 32));
}

// A host tensor of `shape` holding `values` (cycled).
Ref<Tensor> FilledTensor(const Shape& shape, const std::vector<float>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat32);
  float* data = tensor->data<float>();
  for (int64_t index = 0; index < tensor->element_count(); ++index)
    data[index] = values[size_t(index) % values.size()];
  return tensor;
}

// data (rows x k) times weight (columns x k) transposed, by the definition.
std::vector<float> DenseProduct(const Tensor& data, const Tensor& weight) {
  const int64_t rows = data.shape()[0], depth = data.shape()[1], columns = weight.shape()[0];
  std::vector<float> product(size_t(rows * columns));
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t column = 0; column < columns; ++column) {
      double sum = 0;
      for (int64_t k = 0; k < depth; ++k)
        sum +=
            double(data.data<float>()[row * depth + k]) * weight.data<float>()[column * depth + k];
      product[size_t(row * columns + column)] = float(sum);
    }
  }
  return product;
}

void ExpectValues(const Tensor& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.element_count(), int64_t(expected.size()));
  for (size_t index = 0; index < expected.size(); ++index)
    ASSERT_NEAR(actual.data<float>()[index], expected[index], 1e-3) << "element " << index;
}

TEST(ContractionScheduleTest, PacksAnImmutableWeightOnce) {
  std::optional<kir::Kernel> kernel = ContractionOf("nn.dense", {{70, 64}, {45, 64}});
  ASSERT_TRUE(kernel);
  // The weight's panels are filled by a kernel of their own, from the
  // weight alone.
  ASSERT_TRUE(kernel->derived_workspace);
  EXPECT_EQ(kernel->derived_workspace->input, 1u);
  EXPECT_EQ(kernel->derived_workspace->workspace, 0u);
  EXPECT_EQ(kernel->derived_workspace->fill->input_count(), 1u);

  const Ref<Tensor> data = FilledTensor({70, 64}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f});
  const Ref<Tensor> first = FilledTensor({45, 64}, {1.0f, -0.5f, 0.125f});
  const Ref<Tensor> second = FilledTensor({45, 64}, {-2.0f, 0.375f, 1.5f, 0.25f});
  const std::vector<float> with_first = DenseProduct(*data, *first);
  const std::vector<float> with_second = DenseProduct(*data, *second);

  // An ordinary weight is packed on every launch: writing it between
  // launches changes the result.
  Ref<Tensor> weight = FilledTensor({45, 64}, {1.0f, -0.5f, 0.125f});
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {70, 45}), with_first);
  std::memcpy(weight->host_data(), second->host_data(), second->byte_size());
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {70, 45}), with_second);

  // An immutable one is packed once, on its first launch, and the packed
  // copy serves later launches: writing the weight anyway (which the
  // contract forbids) shows that its first packing is still the one used.
  weight = FilledTensor({45, 64}, {1.0f, -0.5f, 0.125f});
  weight->MarkImmutable();
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {70, 45}), with_first);
  std::memcpy(weight->host_data(), second->host_data(), second->byte_size());
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {70, 45}), with_first);
  // A reshaped view of it shares what was derived from its contents.
  ExpectValues(*RunKernel(*kernel, {{data, weight->Reshape({45, 64})}}, {70, 45}), with_first);
}

// An unpadded convolution of `image` (N x C x H x W) by `filter` (K x C x
// R x S) at `stride` along both axes, by the definition.
std::vector<float> Convolution(const Tensor& image, const Tensor& filter, int64_t stride) {
  const Shape& in = image.shape();
  const Shape& window = filter.shape();
  const int64_t out_h = (in[2] - window[2]) / stride + 1, out_w = (in[3] - window[3]) / stride + 1;
  std::vector<float> result;
  for (int64_t n = 0; n < in[0]; ++n) {
    for (int64_t k = 0; k < window[0]; ++k) {
      for (int64_t y = 0; y < out_h; ++y) {
        for (int64_t x = 0; x < out_w; ++x) {
          double sum = 0;
          for (int64_t c = 0; c < in[1]; ++c) {
            for (int64_t dy = 0; dy < window[2]; ++dy) {
              for (int64_t dx = 0; dx < window[3]; ++dx) {
                const int64_t pixel =
                    ((n * in[1] + c) * in[2] + y * stride + dy) * in[3] + x * stride + dx;
                sum += double(image.data<float>()[pixel]) *
                       filter.data<float>()[((k * in[1] + c) * window[2] + dy) * window[3] + dx];
              }
            }
          }
          result.push_back(float(sum));
        }
      }
    }
  }
  return result;
}

// The wide tile (four vectors of 16 floats by six rows, as on AVX-512)
// where its columns divide into it, for long products over many rows or
// for plain operands (not a window), else the narrow one; both against the
// definition, on whatever vectors the host has.
TEST(ContractionScheduleTest, AWideTileServesLongProductsOverManyRows) {
  ContractionTiling tiling;
  tiling.column_bytes = 128;
  tiling.wide_column_bytes = 256;
  auto packed_panel_elements = [](const kir::Kernel& kernel) {
    return PrintExpr(ElementCount(kernel.params[kernel.params.size() - 1]));
  };
  // 131 rows (the last block clamped) by 128 columns (two wide panels) of
  // 260 k.
  std::optional<kir::Kernel> kernel =
      ContractionOf("nn.dense", {{131, 260}, {128, 260}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(2 * 260 * 64));
  const Ref<Tensor> data = FilledTensor({131, 260}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f});
  const Ref<Tensor> weight = FilledTensor({128, 260}, {1.0f, -0.5f, 0.125f});
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {131, 128}), DenseProduct(*data, *weight));
  // A dense layer's data is a plain operand: 20 rows take the wide tile.
  kernel = ContractionOf("nn.dense", {{20, 260}, {128, 260}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(2 * 260 * 64));
  const Ref<Tensor> few_rows = FilledTensor({20, 260}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f});
  ExpectValues(*RunKernel(*kernel, {{few_rows, weight}}, {20, 128}),
               DenseProduct(*few_rows, *weight));
  // Fewer rows than that, or columns that the wide tile does not divide:
  // the narrow tile (panels of 32).
  kernel = ContractionOf("nn.dense", {{12, 260}, {128, 260}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(4 * 260 * 32));
  kernel = ContractionOf("nn.dense", {{131, 260}, {96, 260}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(3 * 260 * 32));
  // A convolution's window is no plain operand: 7 x 7 output pixels are
  // too few rows for the wide tile.
  kernel = ContractionOf("nn.conv2d", {{1, 32, 9, 9}, {64, 32, 3, 3}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(2 * 288 * 32));

  // A 3x3 convolution read in place: 12 x 12 output pixels as rows, 64
  // output channels as one wide panel, 32 x 3 x 3 k.
  kernel =
      ContractionOf("nn.conv2d", {{1, 32, 14, 14}, {64, 32, 3, 3}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(1 * 288 * 64));
  const Ref<Tensor> image = FilledTensor({1, 32, 14, 14}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f});
  const Ref<Tensor> filter = FilledTensor({64, 32, 3, 3}, {1.0f, -0.5f, 0.125f, 0.75f});
  ExpectValues(*RunKernel(*kernel, {{image, filter}}, {1, 64, 12, 12}),
               Convolution(*image, *filter, 1));
}

// The kernel's first allocation (the register tile, where neither operand
// is packed per task), as printed up to its element count: "allocate
// b4: float32[192" for a tile of 6 x 32.
std::string TileAllocation(const kir::Kernel& kernel) {
  const std::string text = PrintKernel(kernel);
  const size_t at = text.find("allocate ");
  return at == std::string::npos ? std::string() : text.substr(at, text.find(']', at) - at);
}

// Seven rows instead of six where seven divide the rows and six would
// leave more than a twentieth of them empty (49 pixels of a 7x7 map),
// against the definition.
TEST(ContractionScheduleTest, SevenRowTilesWhereTheyDivideTheRows) {
  ContractionTiling tiling;
  tiling.exact_rows = 7;
  std::optional<kir::Kernel> kernel =
      ContractionOf("nn.dense", {{49, 40}, {64, 40}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_NE(TileAllocation(*kernel).find("[224"), std::string::npos) << TileAllocation(*kernel);
  const Ref<Tensor> data = FilledTensor({49, 40}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f});
  const Ref<Tensor> weight = FilledTensor({64, 40}, {1.0f, -0.5f, 0.125f});
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {49, 64}), DenseProduct(*data, *weight));
  // 35 rows: six leave one of 36 empty, so six it stays; 48 rows: seven
  // do not divide them.
  for (int64_t rows : {35, 48}) {
    kernel = ContractionOf("nn.dense", {{rows, 40}, {64, 40}}, {}, DType::kFloat32, tiling);
    ASSERT_TRUE(kernel);
    EXPECT_NE(TileAllocation(*kernel).find("[192"), std::string::npos) << TileAllocation(*kernel);
  }
}

// A 1x1 convolution of `image` (1 x C x H x W) by `filter` (K x C x 1 x 1),
// by the definition.
std::vector<float> PointwiseConvolution(const Tensor& image, const Tensor& filter) {
  const int64_t channels = image.shape()[1], pixels = image.shape()[2] * image.shape()[3];
  const int64_t outputs = filter.shape()[0];
  std::vector<float> result;
  for (int64_t output = 0; output < outputs; ++output) {
    for (int64_t pixel = 0; pixel < pixels; ++pixel) {
      double sum = 0;
      for (int64_t c = 0; c < channels; ++c) {
        sum += double(image.data<float>()[c * pixels + pixel]) *
               filter.data<float>()[output * channels + c];
      }
      result.push_back(float(sum));
    }
  }
  return result;
}

// Twelve rows instead of six where y is read in place (a 1x1
// convolution's data: 117 output pixels as columns, 60 output channels as
// rows), against the definition; six where y is packed.
TEST(ContractionScheduleTest, TallTilesWhereYIsReadInPlace) {
  ContractionTiling tiling;
  tiling.tall_rows = 12;
  std::optional<kir::Kernel> kernel =
      ContractionOf("nn.conv2d", {{1, 24, 13, 9}, {60, 24, 1, 1}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 0u);
  EXPECT_NE(TileAllocation(*kernel).find("[384"), std::string::npos) << TileAllocation(*kernel);
  const Ref<Tensor> image = FilledTensor({1, 24, 13, 9}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f});
  const Ref<Tensor> filter = FilledTensor({60, 24, 1, 1}, {1.0f, -0.5f, 0.125f, 0.75f});
  ExpectValues(*RunKernel(*kernel, {{image, filter}}, {1, 60, 13, 9}),
               PointwiseConvolution(*image, *filter));
  // 196 pixels of a 14x14 map: six panels of 32 and a last one of 4
  // columns, computed by a tile half as wide that ends at the last column.
  kernel =
      ContractionOf("nn.conv2d", {{1, 24, 14, 14}, {60, 24, 1, 1}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_NE(PrintKernel(*kernel).find("0..16 {"), std::string::npos) << PrintKernel(*kernel);
  const Ref<Tensor> map = FilledTensor({1, 24, 14, 14}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f});
  ExpectValues(*RunKernel(*kernel, {{map, filter}}, {1, 60, 14, 14}),
               PointwiseConvolution(*map, *filter));
  // A dense layer's weight is packed: six rows.
  kernel = ContractionOf("nn.dense", {{60, 40}, {64, 40}}, {}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_NE(TileAllocation(*kernel).find("[192"), std::string::npos) << TileAllocation(*kernel);
}

// A strided convolution of few k (a 3-channel stem) whose output row is a
// tile wide or more: each output row's pixels are columns (the rows of the
// map batch axes), and each task packs the panel it computes, a run of
// strided data, just before computing it, so that its tiles store whole
// vectors along the output rows. Against the definition.
TEST(ContractionScheduleTest, WindowPanelsForShortStridedConvolutions) {
  ContractionTiling tiling;
  tiling.parallel_tasks = 4;
  auto packed_panel_elements = [](const kir::Kernel& kernel) {
    return PrintExpr(ElementCount(kernel.params[kernel.params.size() - 1]));
  };
  // 9 output rows of 41 pixels: two panels each, the second a tile half as
  // wide (9 columns), so 18 units over 4 tasks of 5, a slot of 75 k x 32
  // columns each.
  std::optional<kir::Kernel> kernel =
      ContractionOf("nn.conv2d", {{1, 3, 21, 85}, {10, 3, 5, 5}},
                    {{"strides", AttrValue::IntList({2, 2})}}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->workspace_count, 1u);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(4 * 75 * 32));
  EXPECT_NE(PrintKernel(*kernel).find("0..16 {"), std::string::npos) << PrintKernel(*kernel);
  Ref<Tensor> image =
      FilledTensor({1, 3, 21, 85}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, -0.125f});
  Ref<Tensor> filter = FilledTensor({10, 3, 5, 5}, {1.0f, -0.5f, 0.125f, 0.75f, -1.25f});
  ExpectValues(*RunKernel(*kernel, {{image, filter}}, {1, 10, 9, 41}),
               Convolution(*image, *filter, 2));
  // 53 pixels a row: the last panel reads the row's last 32 pixels and
  // stores those past the first panel's.
  kernel = ContractionOf("nn.conv2d", {{1, 3, 13, 109}, {7, 3, 5, 5}},
                         {{"strides", AttrValue::IntList({2, 2})}}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(4 * 75 * 32));
  image = FilledTensor({1, 3, 13, 109}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, -0.125f});
  filter = FilledTensor({7, 3, 5, 5}, {1.0f, -0.5f, 0.125f, 0.75f, -1.25f});
  ExpectValues(*RunKernel(*kernel, {{image, filter}}, {1, 7, 5, 53}),
               Convolution(*image, *filter, 2));
  // More k than that (32 channels of 3 x 3): the output channels stay the
  // columns, of the packed weight (one panel over 288 k).
  kernel = ContractionOf("nn.conv2d", {{1, 32, 9, 70}, {20, 32, 3, 3}},
                         {{"strides", AttrValue::IntList({2, 2})}}, DType::kFloat32, tiling);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(packed_panel_elements(*kernel), std::to_string(288 * 32));
}

// With a padding, the kernel's output is the product padded: the tiles
// store each element at its shifted position, and the rest holds the pad
// value; against the definition.
TEST(ContractionScheduleTest, StoresItsTilesPadded) {
  ContractionTiling tiling;
  ConstantPadding padding{
      .extents = {1, 32, 10, 10}, .before = {0, 0, 1, 2}, .after = {0, 1, 2, 1}, .value = {}};
  padding.value = Float(0.5, DType::kFloat32);
  const Ref<Tensor> image =
      FilledTensor({1, 8, 12, 12}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, -0.125f});
  const Ref<Tensor> filter = FilledTensor({32, 8, 3, 3}, {1.0f, -0.5f, 0.125f, 0.75f, -1.25f});
  const OperatorDefinition* conv2d = FindOperator("nn.conv2d");
  std::vector<Buffer> buffers{
      Buffer(new BufferNode("in0", DType::kFloat32, {Int(1), Int(8), Int(12), Int(12)})),
      Buffer(new BufferNode("in1", DType::kFloat32, {Int(32), Int(8), Int(3), Int(3)}))};
  const std::vector<TensorExpr> operands{FromBuffer(buffers[0]), FromBuffer(buffers[1])};
  const TensorExpr product = conv2d->compute(operands, Normalized(*conv2d, {}));
  std::optional<kir::Kernel> kernel =
      BuildContractionKernel("padded", buffers, product, tiling, &padding);
  ASSERT_TRUE(kernel);
  const std::vector<float> unpadded = Convolution(*image, *filter, 1);
  std::vector<float> expected;
  for (int64_t channel = 0; channel < 33; ++channel) {
    for (int64_t y = 0; y < 13; ++y) {
      for (int64_t x = 0; x < 13; ++x) {
        const bool inside = channel < 32 && y >= 1 && y < 11 && x >= 2 && x < 12;
        expected.push_back(inside ? unpadded[(channel * 10 + y - 1) * 10 + x - 2] : 0.5f);
      }
    }
  }
  ExpectValues(*RunKernel(*kernel, {{image, filter}}, {1, 33, 13, 13}), expected);

  // A 1x1 convolution's flattened pixel columns stay contiguous under a
  // padding of rows, not of columns: nothing then.
  buffers[1] = Buffer(new BufferNode("in1", DType::kFloat32, {Int(32), Int(8), Int(1), Int(1)}));
  const TensorExpr pointwise =
      conv2d->compute(std::vector<TensorExpr>{FromBuffer(buffers[0]), FromBuffer(buffers[1])},
                      Normalized(*conv2d, {}));
  padding.extents = {1, 32, 12, 12};
  EXPECT_FALSE(BuildContractionKernel("padded", buffers, pointwise, tiling, &padding));
  padding.before = {0, 0, 1, 0};
  padding.after = {0, 0, 2, 0};
  kernel = BuildContractionKernel("padded", buffers, pointwise, tiling, &padding);
  ASSERT_TRUE(kernel);
  const Ref<Tensor> weights = FilledTensor({32, 8, 1, 1}, {1.0f, -0.5f, 0.125f, 0.75f, -1.25f});
  const std::vector<float> rows = PointwiseConvolution(*image, *weights);
  expected.clear();
  for (int64_t channel = 0; channel < 32; ++channel) {
    for (int64_t y = 0; y < 15; ++y) {
      for (int64_t x = 0; x < 12; ++x) {
        const bool inside = y >= 1 && y < 13;
        expected.push_back(inside ? rows[(channel * 12 + y - 1) * 12 + x] : 0.5f);
      }
    }
  }
  ExpectValues(*RunKernel(*kernel, {{image, weights}}, {1, 32, 15, 12}), expected);
}

TEST(ContractionScheduleTest, PrefetchesPanelsTooManyForTheCache) {
  // 1024 columns of 300 k: 32 panels of 37.5 KiB, 1.2 MiB in all. Each k
  // step of a row block also prefetches a line of the next panel; what the
  // kernel computes is unchanged, the last panel's prefetches included.
  std::optional<kir::Kernel> kernel = ContractionOf("nn.dense", {{20, 300}, {1024, 300}});
  ASSERT_TRUE(kernel);
  const std::string text = PrintKernel(*kernel);
  EXPECT_NE(text.find("prefetch "), std::string::npos) << text;
  const Ref<Tensor> data = FilledTensor({20, 300}, {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, 3.0f});
  const Ref<Tensor> weight = FilledTensor({1024, 300}, {1.0f, -0.5f, 0.125f, 0.75f, -2.0f});
  ExpectValues(*RunKernel(*kernel, {{data, weight}}, {20, 1024}), DenseProduct(*data, *weight));
  // 300 KiB of panels: prefetched for a few row blocks a task (4 here),
  // which would otherwise wait for each panel, not for many (34).
  kernel = ContractionOf("nn.dense", {{20, 300}, {256, 300}});
  ASSERT_TRUE(kernel);
  EXPECT_NE(PrintKernel(*kernel).find("prefetch "), std::string::npos);
  kernel = ContractionOf("nn.dense", {{200, 300}, {256, 300}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(PrintKernel(*kernel).find("prefetch "), std::string::npos);
  // Fewer panels stay in cache: no prefetches.
  kernel = ContractionOf("nn.dense", {{20, 300}, {128, 300}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(PrintKernel(*kernel).find("prefetch "), std::string::npos);
}

// max_pool2d by the window schedule (kernels/compute/depthwise_schedule.h),
// against the definition written out: 2 x 16 planes, so that tasks take
// several; stride 2 (the split even and odd columns), padding, and
// ceil_mode's extra border.
TEST(ContractionScheduleTest, MaxPoolByTheWindowScheduleMatchesTheDefinition) {
  const int64_t height = 16, width = 14;
  Ref<Tensor> data = Tensor::Empty(HostDevice(), {2, 16, height, width}, DType::kFloat32);
  uint32_t seed = 7;
  for (int64_t index = 0; index < data->element_count(); ++index) {
    seed = seed * 1664525u + 1013904223u;
    data->data<float>()[index] = float(seed >> 8) / float(1 << 23) - 1.0f;
  }
  for (const bool ceil_mode : {false, true}) {
    const Attrs attrs = {{"pool_size", AttrValue::IntList({3, 3})},
                         {"strides", AttrValue::IntList({2, 2})},
                         {"padding", AttrValue::IntList({1, 1})},
                         {"ceil_mode", AttrValue::Bool(ceil_mode)}};
    // Windows start at -1 + 2 i; ceil_mode adds a last one that starts inside
    // and reaches a row (column) past the padding.
    const int64_t out_height = ceil_mode ? 9 : 8, out_width = ceil_mode ? 8 : 7;
    std::vector<float> expected;
    for (int64_t plane = 0; plane < 32; ++plane) {
      for (int64_t y = 0; y < out_height; ++y) {
        for (int64_t x = 0; x < out_width; ++x) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t dy = 0; dy < 3; ++dy) {
            for (int64_t dx = 0; dx < 3; ++dx) {
              const int64_t row = 2 * y - 1 + dy, column = 2 * x - 1 + dx;
              if (row < 0 || row >= height || column < 0 || column >= width) continue;
              best = std::max(best, data->data<float>()[(plane * height + row) * width + column]);
            }
          }
          expected.push_back(best);
        }
      }
    }
    const Ref<Tensor> actual = RunOperator("nn.max_pool2d", {{data}}, attrs);
    ASSERT_EQ(actual->shape(), (Shape{2, 16, out_height, out_width}));
    ExpectValues(*actual, expected);
  }
  // The schedule serves it (not the generic one).
  std::vector<Expr> shape = {Int(2), Int(16), Int(height), Int(width)};
  const Buffer buffer(new BufferNode("in0", DType::kFloat32, shape));
  const OperatorDefinition* definition = FindOperator("nn.max_pool2d");
  const Attrs attrs = Normalized(*definition, {{"pool_size", AttrValue::IntList({3, 3})},
                                               {"strides", AttrValue::IntList({2, 2})},
                                               {"padding", AttrValue::IntList({1, 1})}});
  const TensorExpr output = definition->compute(std::vector<TensorExpr>{FromBuffer(buffer)}, attrs);
  EXPECT_TRUE(BuildMaxPoolKernel("pool", {buffer}, output, attrs, 0, 3));
}

// At stride 2, planes too large for the nearest cache are copied row by
// row as the output rows need them (kernels/compute/depthwise_schedule.cc):
// a 3x3 max pool and a depthwise convolution over 100 x 101 planes (a
// 102 x 103 slice, 42 KB), with padding 1, against the definitions.
TEST(ContractionScheduleTest, StrideTwoWindowsOverLargePlanes) {
  const int64_t height = 100, width = 101, out_height = 50, out_width = 51, planes = 3;
  Ref<Tensor> data = Tensor::Empty(HostDevice(), {1, planes, height, width}, DType::kFloat32);
  Ref<Tensor> weight = Tensor::Empty(HostDevice(), {planes, 1, 3, 3}, DType::kFloat32);
  uint32_t seed = 11;
  auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1 << 23) - 1.0f;
  };
  for (int64_t index = 0; index < data->element_count(); ++index)
    data->data<float>()[index] = next();
  for (int64_t index = 0; index < weight->element_count(); ++index)
    weight->data<float>()[index] = next();
  std::vector<float> maxima, sums;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t y = 0; y < out_height; ++y) {
      for (int64_t x = 0; x < out_width; ++x) {
        float best = -std::numeric_limits<float>::infinity();
        double sum = 0;
        for (int64_t dy = 0; dy < 3; ++dy) {
          for (int64_t dx = 0; dx < 3; ++dx) {
            const int64_t row = 2 * y - 1 + dy, column = 2 * x - 1 + dx;
            if (row < 0 || row >= height || column < 0 || column >= width) continue;
            const float value = data->data<float>()[(plane * height + row) * width + column];
            best = std::max(best, value);
            sum += double(value) * weight->data<float>()[plane * 9 + dy * 3 + dx];
          }
        }
        maxima.push_back(best);
        sums.push_back(float(sum));
      }
    }
  }
  const Attrs window = {{"strides", AttrValue::IntList({2, 2})},
                        {"padding", AttrValue::IntList({1, 1})}};
  Attrs pool = window;
  pool.emplace_back("pool_size", AttrValue::IntList({3, 3}));
  ExpectValues(*RunOperator("nn.max_pool2d", {{data}}, pool), maxima);
  Attrs conv = window;
  conv.emplace_back("groups", AttrValue::Int(planes));
  conv.emplace_back("channels", AttrValue::Int(planes));
  conv.emplace_back("kernel_size", AttrValue::IntList({3, 3}));
  ExpectValues(*RunOperator("nn.conv2d", {{data, weight}}, conv), sums);
  // The schedule copies the rows inside the output rows' loop.
  const Buffer buffer(
      new BufferNode("in0", DType::kFloat32, {Int(1), Int(planes), Int(height), Int(width)}));
  const OperatorDefinition* definition = FindOperator("nn.max_pool2d");
  const Attrs normalized = Normalized(*definition, pool);
  const TensorExpr output =
      definition->compute(std::vector<TensorExpr>{FromBuffer(buffer)}, normalized);
  std::optional<kir::Kernel> kernel =
      BuildMaxPoolKernel("pool", {buffer}, output, normalized, 0, 3);
  ASSERT_TRUE(kernel);
  EXPECT_NE(PrintKernel(*kernel).find("let "), std::string::npos) << PrintKernel(*kernel);
}

TEST(ContractionScheduleTest, FewRowsAreReadInPlace) {
  // One row against a 2048 x 512 weight: no packing, parallel tasks.
  std::optional<kir::Kernel> kernel = ContractionOf("nn.dense", {{1, 512}, {2048, 512}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 0u);
  EXPECT_NE(PrintKernel(*kernel).find("parallel "), std::string::npos) << PrintKernel(*kernel);
  // Too little work for a second thread: one serial task.
  kernel = ContractionOf("nn.dense", {{1, 16}, {64, 16}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(PrintKernel(*kernel).find("parallel "), std::string::npos) << PrintKernel(*kernel);
  // A weight contiguous along the columns rather than k (matmul without
  // transpose_b) keeps the packed schedule; its rows, 8 KiB apart, would
  // share a few cache sets if read in place: it is packed.
  kernel = ContractionOf("nn.matmul", {{1, 512}, {512, 2048}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 1u);
  // Rows 0.75 KiB apart spread over the sets: read in place.
  kernel = ContractionOf("nn.matmul", {{1, 512}, {512, 192}});
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->workspace_count, 0u);
  EXPECT_NE(PrintKernel(*kernel).find("allocate "), std::string::npos) << PrintKernel(*kernel);
}

TEST(ContractionScheduleTest, LeavesSmallAndUnsuitableCallsToTheNaiveSchedule) {
  // Too little work to pay for packing.
  EXPECT_FALSE(ContractionOf("nn.dense", {{100, 8}, {5, 8}}));
  // Too few columns for a tile.
  EXPECT_FALSE(ContractionOf("nn.dense", {{512, 512}, {3, 512}}));
  // Integer dot products keep the naive schedule.
  EXPECT_FALSE(ContractionOf("nn.dense", {{64, 64}, {64, 64}}, {}, DType::kInt32));
  // A grouped convolution's data index mentions the output channel.
  EXPECT_FALSE(ContractionOf("nn.conv2d", {{1, 64, 16, 16}, {64, 32, 3, 3}},
                             {{"groups", AttrValue::Int(2)}}));
  // Not a sum of products at all.
  EXPECT_FALSE(ContractionOf("sum", {{64, 64}}, {{"axis", AttrValue::IntList({1})}}));
}

}  // namespace
}  // namespace relay::kernels
