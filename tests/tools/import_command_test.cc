// relay-vm on ONNX models as a user runs it: `run MODEL.onnx` with inputs by
// their ONNX names and several outputs saved under theirs, `import` to a
// .relay and .npz that run the same, `check` on the model, and one clear
// line for a file that is not a model or a model that does not convert.
// The model and its expected outputs (NumPy's) are fixtures written by
// tests/tools/generate_onnx_fixtures.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "relay/devices.h"
#include "relay/npy.h"
#include "tests/tools/relay_vm_command.h"

namespace relay {
namespace {

using testing::CommandResult;
using testing::Contains;
using testing::RunRelayVm;
using testing::ScratchDirectory;

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(RELAY_TEST_FIXTURE_DIR) / "onnx";
const std::string kModel = (kFixtures / "two_outputs.onnx").string();
const std::string kInput = (kFixtures / "two_outputs_input.npy").string();

std::map<std::string, Ref<Tensor>> ReadArrays(const std::string& path) {
  std::map<std::string, Ref<Tensor>> arrays;
  for (NamedTensor& array : ReadNpz(path, HostDevice())) arrays[array.name] = array.tensor;
  return arrays;
}

void ExpectClose(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    EXPECT_NEAR(actual.data<float>()[index], expected.data<float>()[index], 1e-6)
        << "element " << index;
  }
}

TEST(ImportCommandTest, RunTakesAndGivesTheModelsNames) {
  ScratchDirectory scratch;
  const std::string outputs = scratch / "outputs.npz";
  CommandResult run =
      RunRelayVm("run " + kModel + " --input input.1=" + kInput + " --output " + outputs);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::map<std::string, Ref<Tensor>> got = ReadArrays(outputs);
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "two_outputs_expected.npz").string());
  ASSERT_EQ(got.count("out:0"), 1u);
  ASSERT_EQ(got.count("out:1"), 1u);
  ExpectClose(*got["out:0"], *want["relu"]);
  ExpectClose(*got["out:1"], *want["softmax"]);

  CommandResult check = RunRelayVm("check " + kModel);
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_EQ(check.output,
            "@main: fn (Tensor[(?, 3), float32], Tensor[(4, 3), float32]) -> "
            "(Tensor[(?, 4), float32], Tensor[(?, 4), float32])\n");
}

TEST(ImportCommandTest, TheImportedProgramRunsAsTheModelDoes) {
  ScratchDirectory scratch;
  const std::string program = scratch / "model.relay", weights = scratch / "model.npz";
  CommandResult direct = RunRelayVm("run " + kModel + " --input input.1=" + kInput);
  ASSERT_EQ(direct.exit_code, 0) << direct.output;

  CommandResult imported =
      RunRelayVm("import " + kModel + " -o " + program + " --params-out " + weights);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_EQ(imported.output, "");
  CommandResult through_text =
      RunRelayVm("run " + program + " --params " + weights + " --input input_1=" + kInput);
  ASSERT_EQ(through_text.exit_code, 0) << through_text.output;
  EXPECT_EQ(through_text.output, direct.output);
  EXPECT_EQ(ReadArrays(weights).count("w_0"), 1u);

  // Without --params-out, its small weight is written into the program.
  const std::string self_contained = scratch / "self_contained.relay";
  CommandResult inlined = RunRelayVm("import " + kModel + " -o " + self_contained);
  ASSERT_EQ(inlined.exit_code, 0) << inlined.output;
  CommandResult alone = RunRelayVm("run " + self_contained + " --input input_1=" + kInput);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(alone.output, direct.output);

  // A float16 weight has no Relay literal: it needs somewhere to go.
  CommandResult refused =
      RunRelayVm("import " + (kFixtures / "half_weight.onnx").string() + " -o " + program);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(Contains(refused.output, "give --params-out")) << refused.output;
}

// A Loop whose trip count is an input, with a carried value whose shape
// grows each step and a scan output, against NumPy's run of the same loop.
TEST(ImportCommandTest, LoopsRunAsManyStepsAsTheInputSays) {
  ScratchDirectory scratch;
  std::map<std::string, Ref<Tensor>> want = ReadArrays((kFixtures / "loop_expected.npz").string());
  for (const std::string n : {"0", "3"}) {
    const std::string outputs = scratch / ("loop_n" + n + ".npz");
    CommandResult run = RunRelayVm("run " + (kFixtures / "loop.onnx").string() +
                                   " --input x=" + (kFixtures / "loop_x.npy").string() +
                                   " --input n=" + (kFixtures / ("loop_n" + n + ".npy")).string() +
                                   " --output " + outputs);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::map<std::string, Ref<Tensor>> got = ReadArrays(outputs);
    for (const std::string name : {"x_last", "history", "totals"}) {
      ASSERT_EQ(got.count(name), 1u) << name;
      ExpectClose(*got[name], *want[name + "_n" + n]);
    }
  }
}

// An If whose branches read the graph's values, each way.
TEST(ImportCommandTest, BranchesRunAsTheConditionSays) {
  ScratchDirectory scratch;
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "branches_expected.npz").string());
  for (const char* which : {"positive", "negative"}) {
    const std::string output = scratch / (std::string(which) + ".npy");
    CommandResult run = RunRelayVm(
        "run " + (kFixtures / "branches.onnx").string() + " --input x=" +
        (kFixtures / ("branches_" + std::string(which) + ".npy")).string() + " --output " + output);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ExpectClose(*ReadNpy(output, HostDevice()), *want[which]);
  }
}

// Shapes computed from the input's `?` dimensions while running: a reshape
// with two run-time entries, Expand and ConstantOfShape of the input's
// shape, a Slice from a bound given as an input; NumPy's outputs.
TEST(ImportCommandTest, ShapesComputedAtRunTimeFollowTheInput) {
  ScratchDirectory scratch;
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "run_time_shapes_expected.npz").string());
  for (const std::string number : {"0", "1"}) {
    const std::string outputs = scratch / ("outputs" + number + ".npz");
    CommandResult run = RunRelayVm(
        "run " + (kFixtures / "run_time_shapes.onnx").string() +
        " --input x=" + (kFixtures / ("run_time_shapes_x" + number + ".npy")).string() +
        " --input start=" + (kFixtures / ("run_time_shapes_start" + number + ".npy")).string() +
        " --output " + outputs);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::map<std::string, Ref<Tensor>> got = ReadArrays(outputs);
    for (const std::string name : {"reshaped", "expanded", "filled", "sliced"}) {
      ASSERT_EQ(got.count(name), 1u) << name;
      ExpectClose(*got[name], *want[name + number]);
    }
  }
}

// Resize of an image whose height and width are `?` (an OCR detector's
// feature maps): nearest and linear by whole-number scales, through
// nn.upsampling; NumPy's outputs by ONNX's coordinate formula.
TEST(ImportCommandTest, ResizeFollowsAnImageOfAnySize) {
  ScratchDirectory scratch;
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "run_time_resize_expected.npz").string());
  for (const std::string number : {"0", "1"}) {
    const std::string outputs = scratch / ("outputs" + number + ".npz");
    CommandResult run =
        RunRelayVm("run " + (kFixtures / "run_time_resize.onnx").string() +
                   " --input x=" + (kFixtures / ("run_time_resize_x" + number + ".npy")).string() +
                   " --output " + outputs);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::map<std::string, Ref<Tensor>> got = ReadArrays(outputs);
    for (const std::string name : {"nearest", "linear", "linear23"}) {
      ASSERT_EQ(got.count(name), 1u) << name;
      ExpectClose(*got[name], *want[name + number]);
    }
  }
}

// A 1-D convolution network over a signal of any length (audio models):
// grouped, strided, dilated, padded Conv with a bias, Relu, 1-D MaxPool;
// NumPy's direct window sums.
TEST(ImportCommandTest, OneDimensionalConvolutionsFollowTheSignal) {
  ScratchDirectory scratch;
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "audio_conv_expected.npz").string());
  for (const std::string number : {"0", "1"}) {
    const std::string output = scratch / ("pooled" + number + ".npy");
    CommandResult run =
        RunRelayVm("run " + (kFixtures / "audio_conv.onnx").string() +
                   " --input signal=" + (kFixtures / ("audio_conv_x" + number + ".npy")).string() +
                   " --output " + output);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ExpectClose(*ReadNpy(output, HostDevice()), *want["pooled" + number]);
  }
}

// Opset 18's changed operators (and Mish, new in it), rewritten in their
// opset-17 form for ONNX 1.12's checker; NumPy's outputs.
TEST(ImportCommandTest, Opset18ModelsRun) {
  ScratchDirectory scratch;
  const std::string outputs = scratch / "outputs.npz";
  CommandResult run = RunRelayVm("run " + (kFixtures / "opset18.onnx").string() + " --input x=" +
                                 (kFixtures / "opset18_x.npy").string() + " --output " + outputs);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::map<std::string, Ref<Tensor>> got = ReadArrays(outputs);
  std::map<std::string, Ref<Tensor>> want =
      ReadArrays((kFixtures / "opset18_expected.npz").string());
  for (const std::string name : {"low", "high", "same", "padded", "mish"}) {
    ASSERT_EQ(got.count(name), 1u) << name;
    ExpectClose(*got[name], *want[name]);
  }
}

TEST(ImportCommandTest, BadModelsGetOneClearLine) {
  ScratchDirectory scratch;
  const std::string garbage = scratch / "garbage.onnx";
  std::ofstream(garbage) << "this is not a protobuf \xff\xff";
  CommandResult not_onnx = RunRelayVm("run " + garbage);
  EXPECT_EQ(not_onnx.exit_code, 1);
  EXPECT_TRUE(Contains(not_onnx.output, "garbage.onnx: not an ONNX model")) << not_onnx.output;

  // Cut short: the protobuf or the checker refuses it.
  std::ifstream source(kModel, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
  const std::string truncated = scratch / "truncated.onnx";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() * 2 / 3);
  CommandResult cut = RunRelayVm("run " + truncated + " --input input.1=" + kInput);
  EXPECT_EQ(cut.exit_code, 1);
  EXPECT_TRUE(Contains(cut.output, "truncated.onnx")) << cut.output;

  CommandResult missing = RunRelayVm("run " + (scratch / "absent.onnx"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Contains(missing.output, "cannot read")) << missing.output;

  // A stride of 0, which ONNX's own shape inference would divide by.
  CommandResult zero_stride = RunRelayVm("check " + (kFixtures / "conv_zero_stride.onnx").string());
  EXPECT_EQ(zero_stride.exit_code, 1);
  EXPECT_TRUE(Contains(zero_stride.output, "(Conv) has strides 0")) << zero_stride.output;

  // A wrong input name is named.
  CommandResult wrong = RunRelayVm("run " + kModel + " --input input=" + kInput);
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_TRUE(Contains(wrong.output, "--input input")) << wrong.output;
}

}  // namespace
}  // namespace relay
