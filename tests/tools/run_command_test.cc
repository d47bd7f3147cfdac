// relay-vm run and disasm as a user runs them: the MLP example against
// NumPy's result, input binding and its errors, --repeat, --output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "relay/devices.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tests/tools/relay_vm_command.h"

namespace relay {
namespace {

using testing::CommandResult;
using testing::Contains;
using testing::RunRelayVm;
using testing::ScratchDirectory;

namespace fs = std::filesystem;

const fs::path kRoot = testing::RepositoryRoot();

std::string WriteProgram(const ScratchDirectory& scratch, const std::string& body) {
  std::string path = scratch / "program.relay";
  std::ofstream(path) << "#[version = \"0.0.5\"]\n" << body;
  return path;
}

const std::string kMlp = (kRoot / "examples" / "mlp.relay").string();
const std::string kMlpParams = (kRoot / "examples" / "mlp_params.npz").string();
const std::string kMlpInput = (kRoot / "examples" / "mlp_input.npy").string();

TEST(RunCommandTest, TheMlpExampleMatchesNumPy) {
  ScratchDirectory scratch;
  CommandResult result =
      RunRelayVm("run " + kMlp + " --params " + kMlpParams + " --input input=" + kMlpInput +
                 " --output " + scratch / "out.npy");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.substr(0, 3), "[[0") << result.output;
  Ref<Tensor> actual = ReadNpy(scratch / "out.npy", HostDevice());
  Ref<Tensor> expected = ReadNpy(
      (kRoot / "tests" / "fixtures" / "examples" / "mlp_expected.npy").string(), HostDevice());
  ASSERT_EQ(actual->shape(), expected->shape());
  for (int64_t index = 0; index < expected->element_count(); ++index) {
    EXPECT_NEAR(actual->data<float>()[index], expected->data<float>()[index], 1e-5) << index;
  }
}

TEST(RunCommandTest, DeviceOptionNamesADevice) {
  const std::string mlp = "run " + kMlp + " --params " + kMlpParams + " --input input=" + kMlpInput;
  CommandResult bad = RunRelayVm(mlp + " --device gpu");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(
      Contains(bad.output, "--device takes cpu, opencl[:N], cuda[:N] or xrt[:N], got 'gpu'"))
      << bad.output;
  // A device that is not there is an error naming why, not a crash.
  CommandResult absent = RunRelayVm(mlp + " --device opencl:7");
  EXPECT_EQ(absent.exit_code, 1) << absent.output;
  EXPECT_TRUE(Contains(absent.output, "opencl:7")) << absent.output;
  // The host is the default and may be named.
  CommandResult host = RunRelayVm(mlp + " --device cpu");
  EXPECT_EQ(host.exit_code, 0) << host.output;
}

TEST(RunCommandTest, RepeatReportsMedianAndMinimum) {
  CommandResult result = RunRelayVm("run " + kMlp + " --params " + kMlpParams +
                                    " --input input=" + kMlpInput + " --repeat 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "relay-vm: 3 runs, median ")) << result.output;
  EXPECT_TRUE(Contains(result.output, " ms, min ")) << result.output;
}

TEST(RunCommandTest, WarmupRunsBeforeTheTimedRuns) {
  const std::string run = "run " + kMlp + " --params " + kMlpParams + " --input input=" + kMlpInput;
  CommandResult result = RunRelayVm(run + " --repeat 3 --warmup 0.05");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "relay-vm: 3 runs, median ")) << result.output;
  // Only for timed runs, and only a number of seconds.
  result = RunRelayVm(run + " --warmup 0.05");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "--warmup is for timed runs")) << result.output;
  for (const char* bad : {"-1", "abc", "nan", "1e9", ""}) {
    result = RunRelayVm(run + " --repeat 3 --warmup '" + bad + "'");
    EXPECT_EQ(result.exit_code, 2) << bad;
    EXPECT_TRUE(Contains(result.output, "--warmup takes seconds from 0 to 3600")) << result.output;
  }
}

TEST(RunCommandTest, MissingInputsAreNamed) {
  CommandResult result = RunRelayVm("run " + kMlp + " --params " + kMlpParams);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "missing input 'input' of type Tensor[(?, 64), float32]"))
      << result.output;
}

TEST(RunCommandTest, InputsOfTheWrongShapeOrDtypeAreRejected) {
  ScratchDirectory scratch;
  Ref<Tensor> wrong = Tensor::Empty(HostDevice(), {3, 63}, DType::kFloat32);
  WriteNpy(scratch / "wrong_shape.npy", *wrong);
  CommandResult result = RunRelayVm("run " + kMlp + " --params " + kMlpParams +
                                    " --input input=" + scratch / "wrong_shape.npy");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output,
                       "is a float32 array of shape (3, 63), but the parameter's "
                       "type is Tensor[(?, 64), float32]"))
      << result.output;
  Ref<Tensor> integers = Tensor::Empty(HostDevice(), {3, 64}, DType::kInt32);
  WriteNpy(scratch / "wrong_dtype.npy", *integers);
  result = RunRelayVm("run " + kMlp + " --params " + kMlpParams +
                      " --input input=" + scratch / "wrong_dtype.npy");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "is a int32 array")) << result.output;
}

TEST(RunCommandTest, ScalarsFromTheCommandLine) {
  ScratchDirectory scratch;
  std::string program =
      WriteProgram(scratch,
                   "def @main(%x: int32, %y: float32, %b: bool) -> (int32, float32, bool) {\n"
                   "  (add(%x, 1), multiply(%y, 2f), logical_not(%b))\n}\n");
  CommandResult result =
      RunRelayVm("run " + program + " --input x=41 --input y=1.25 --input b=True");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "(42, 2.5f, False)\n");
  result = RunRelayVm("run " + program + " --input x=4.5 --input y=1 --input b=True");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "'4.5' is neither a .npy file nor a int32 scalar"))
      << result.output;
  result = RunRelayVm("run " + program + " --input x=1 --input y=1 --input b=1 --input z=2");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "has no parameter %z")) << result.output;
}

TEST(RunCommandTest, TupleResultsGoToNpzFiles) {
  ScratchDirectory scratch;
  std::string program = WriteProgram(
      scratch,
      "def @main() -> (Tensor[(2), float32], Tensor[(3), int32]) {\n"
      "  (ones(shape=[2], dtype=\"float32\"), zeros(shape=[3], dtype=\"int32\"))\n}\n");
  CommandResult result = RunRelayVm("run " + program + " --output " + scratch / "out.npz");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::vector<NamedTensor> arrays = ReadNpz(scratch / "out.npz", HostDevice());
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "out0");
  EXPECT_EQ(arrays[1].tensor->shape(), (Shape{3}));
  result = RunRelayVm("run " + program + " --output " + scratch / "out.npy");
  EXPECT_EQ(result.exit_code, 2);
}

// Nested tuples (a gradient's (result, (d_x, d_w))) are written depth-first
// as out0, out1, ...; a field that is no tensor is named by its path.
TEST(RunCommandTest, NestedTupleResultsGoToNpzDepthFirst) {
  ScratchDirectory scratch;
  std::string program = WriteProgram(
      scratch,
      "def @main() -> (float32, (Tensor[(2), float32], (Tensor[(3), int32],))) {\n"
      "  (1.5f, (ones(shape=[2], dtype=\"float32\"), (zeros(shape=[3], dtype=\"int32\"),)))\n}\n");
  CommandResult result = RunRelayVm("run " + program + " --output " + scratch / "out.npz");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::vector<NamedTensor> arrays = ReadNpz(scratch / "out.npz", HostDevice());
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(arrays[0].name, "out0");
  EXPECT_EQ(arrays[0].tensor->shape(), (Shape{}));
  EXPECT_EQ(arrays[0].tensor->data<float>()[0], 1.5f);
  EXPECT_EQ(arrays[1].name, "out1");
  EXPECT_EQ(arrays[1].tensor->shape(), (Shape{2}));
  EXPECT_EQ(arrays[1].tensor->data<float>()[1], 1.0f);
  EXPECT_EQ(arrays[2].name, "out2");
  EXPECT_EQ(arrays[2].tensor->dtype(), DType::kInt32);
  EXPECT_EQ(arrays[2].tensor->shape(), (Shape{3}));

  std::string with_list = WriteProgram(
      scratch, "def @main() -> (float32, (float32, List[int32])) {\n  (1f, (2f, Nil))\n}\n");
  result = RunRelayVm("run " + with_list + " --output " + scratch / "list.npz");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(
      Contains(result.output, "field 1.1 of the result is not a tensor or a tuple of tensors"))
      << result.output;
  EXPECT_FALSE(std::filesystem::exists(scratch / "list.npz")) << "nothing written";
}

TEST(RunCommandTest, RuntimeErrorsNameTheSourceAndExitOne) {
  ScratchDirectory scratch;
  std::string program = WriteProgram(scratch,
                                     "def @main() -> int32 {\n"
                                     "  let %xs: List[int32] = Nil;\n"
                                     "  match? (%xs) { Cons(%x, _) => %x }\n}\n");
  CommandResult result = RunRelayVm("run " + program);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(Contains(result.output, "program.relay:4:3: error: no clause of the match matches"))
      << result.output;
}

TEST(RunCommandTest, BadCommandLinesAndFiles) {
  EXPECT_EQ(RunRelayVm("run").exit_code, 2);
  EXPECT_EQ(RunRelayVm("run " + kMlp + " --repeat -1").exit_code, 2);
  EXPECT_EQ(RunRelayVm("run " + kMlp + " --no-such-option").exit_code, 2);
  CommandResult result = RunRelayVm("run /no/such/model.rbc");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(Contains(result.output, "model.rbc")) << result.output;
  EXPECT_EQ(RunRelayVm("run /no/such/file.relay").exit_code, 1);
}

TEST(DisasmCommandTest, ListsFunctionsWithSourceLines) {
  CommandResult result = RunRelayVm("disasm " + kMlp);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "function 0 @main (params 5, registers ")) << result.output;
  EXPECT_TRUE(Contains(result.output, "invoke_kernel $")) << result.output;
  EXPECT_TRUE(Contains(result.output, "; line 11")) << result.output;
}

}  // namespace
}  // namespace relay
