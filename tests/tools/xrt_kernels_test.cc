// FPGA kernels called from Relay, run by relay-vm as a user runs it: a
// function marked Compiler="xrt", global_symbol="vadd" calls kernel vadd of
// tests/devices/data/vadd.xclbin, loaded with --xclbin, on a stand-in XRT
// driver built as libxrt_core.so.2 (tests/devices/fake_xrt_shared_library.c),
// which the binary opens as it would open XRT. The fake's vadd adds two
// int32 vectors on its "card" side; the expected values are computed here.
#include <gtest/gtest.h>

#include <cstdint>
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

const std::string kFakeXrt = std::string("LD_LIBRARY_PATH=") + RELAY_FAKE_XRT_DIR;
const std::string kXclbin = RELAY_TEST_XCLBIN;

// @vadd twice: the first result stays on the card for the second call.
const char* const kProgram = R"(#[version = "0.0.5"]
def @vadd(%a: Tensor[(1000), int32], %b: Tensor[(1000), int32], Compiler="xrt", global_symbol="vadd") -> Tensor[(1000), int32] {
  add(%a, %b)
}
def @main(%x: Tensor[(1000), int32], %y: Tensor[(1000), int32]) -> Tensor[(1000), int32] {
  multiply(@vadd(@vadd(%x, %y), %y), 2)
}
)";

class XrtKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = (scratch_ / "vadd.relay");
    std::ofstream(program_) << kProgram;
    Ref<Tensor> x = Tensor::Empty(HostDevice(), {1000}, DType::kInt32);
    Ref<Tensor> y = Tensor::Empty(HostDevice(), {1000}, DType::kInt32);
    for (int32_t index = 0; index < 1000; ++index) {
      x->data<int32_t>()[index] = index * 3 - 700;
      y->data<int32_t>()[index] = 5000 - index;
    }
    WriteNpy((scratch_ / "x.npy"), *x);
    WriteNpy((scratch_ / "y.npy"), *y);
    inputs_ = " --input x=" + (scratch_ / "x.npy") + " --input y=" + (scratch_ / "y.npy");
  }

  // The program's result, read from `path`, is (x + 2y) * 2.
  void ExpectResult(const std::string& path) {
    const Ref<Tensor> result = ReadNpy(path, HostDevice());
    ASSERT_EQ(result->shape(), (Shape{1000}));
    for (int32_t index = 0; index < 1000; ++index) {
      const int32_t x = index * 3 - 700, y = 5000 - index;
      ASSERT_EQ(result->data<int32_t>()[index], (x + 2 * y) * 2) << index;
    }
  }

  ScratchDirectory scratch_;
  std::string program_;
  std::string inputs_;
};

TEST_F(XrtKernelsTest, AFunctionMarkedXrtRunsTheXclbinsKernel) {
  const std::string output = (scratch_ / "out.npy");
  CommandResult result = RunRelayVm(
      "run " + program_ + inputs_ + " --xclbin " + kXclbin + " --output " + output + " --profile",
      {}, kFakeXrt);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectResult(output);
  // The profile times the FPGA kernel as a kernel of its own.
  EXPECT_TRUE(Contains(result.output, "xrt:vadd")) << result.output;
}

TEST_F(XrtKernelsTest, ACompiledExecutableCallsTheKernelToo) {
  const std::string executable = (scratch_ / "vadd.rbc");
  CommandResult result = RunRelayVm("compile " + program_ + " -o " + executable);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = RunRelayVm("disasm " + executable);
  EXPECT_TRUE(Contains(result.output, "invoke_kernel $2, xrt:vadd, [$0, $1]")) << result.output;
  const std::string output = (scratch_ / "out.npy");
  result = RunRelayVm(
      "run " + executable + inputs_ + " --xclbin " + kXclbin + " --output " + output, {}, kFakeXrt);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectResult(output);
}

TEST_F(XrtKernelsTest, DevicesListsTheCard) {
  CommandResult result = RunRelayVm("devices", {}, kFakeXrt);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "xrt:0 (")) << result.output;
}

TEST_F(XrtKernelsTest, AKernelNotLoadedIsNamedWithTheWayToLoadIt) {
  CommandResult result = RunRelayVm("run " + program_ + inputs_, {}, kFakeXrt);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output,
                       "xrt kernel vadd is not loaded on xrt:0: give the .xclbin that holds it "
                       "with --xclbin FILE"))
      << result.output;
}

// A function whose tensors do not fit the kernel's buffer arguments is
// refused before anything runs on the card, saying what each side has.
TEST_F(XrtKernelsTest, AFunctionThatDoesNotFitTheKernelIsRefused) {
  const std::string program = scratch_ / "three.relay";
  std::ofstream(program) << R"(#[version = "0.0.5"]
def @vadd(%a: Tensor[(1000), int32], %b: Tensor[(1000), int32], %c: Tensor[(1000), int32], Compiler="xrt", global_symbol="vadd") -> Tensor[(1000), int32] {
  add(add(%a, %b), %c)
}
def @main(%x: Tensor[(1000), int32], %y: Tensor[(1000), int32]) -> Tensor[(1000), int32] {
  @vadd(%x, %y, %y)
}
)";
  CommandResult result =
      RunRelayVm("run " + program + inputs_ + " --xclbin " + kXclbin, {}, kFakeXrt);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(Contains(result.output,
                       "xrt kernel vadd takes 3 buffers and 1 integer; the call gives 3 tensors "
                       "and its result (4 buffers)"))
      << result.output;
}

// XRT as a codegen: a plain program's adds, matched by a manifest that
// describes the card's vadd, are partitioned off to it (--byoc
// xrt:MANIFEST), and the partition is kept by a compiled executable.
TEST_F(XrtKernelsTest, AManifestPartitionsAPlainProgramForTheCard) {
  const std::string program = scratch_ / "plain.relay";
  std::ofstream(program) << R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1000), int32], %y: Tensor[(1000), int32]) -> Tensor[(1000), int32] {
  multiply(add(add(%x, %y), %y), 2)
}
)";
  const std::string manifest = scratch_ / "kernels.json";
  std::ofstream(manifest) << R"({"kernels": [
  {"name": "vadd", "pattern": ["add"], "dtype": "int32",
   "arguments": ["input0", "input1", "output", "output.shape[0]"]}
]})";
  CommandResult result = RunRelayVm("fmt --optimized --byoc xrt:" + manifest + " " + program);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "Compiler=\"xrt\", global_symbol=\"xrt_1\""))
      << result.output;
  EXPECT_TRUE(Contains(result.output, "Composite=\"xrt.vadd\"")) << result.output;
  const std::string output = (scratch_ / "out.npy");
  result = RunRelayVm("run " + program + inputs_ + " --byoc xrt:" + manifest + " --xclbin " +
                          kXclbin + " --output " + output + " --profile",
                      {}, kFakeXrt);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectResult(output);
  EXPECT_TRUE(Contains(result.output, "xrt:xrt_0")) << result.output;
  const std::string executable = (scratch_ / "plain.rbc");
  result = RunRelayVm("compile " + program + " --byoc xrt:" + manifest + " -o " + executable);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = RunRelayVm(
      "run " + executable + inputs_ + " --xclbin " + kXclbin + " --output " + output, {}, kFakeXrt);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectResult(output);
  // Without a card, running says so.
  result = RunRelayVm("run " + executable + inputs_);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "XRT")) << result.output;
}

TEST_F(XrtKernelsTest, AFileThatIsNotAnXclbinIsRefusedByName) {
  CommandResult result =
      RunRelayVm("run " + program_ + inputs_ + " --xclbin " + program_, {}, kFakeXrt);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, program_ + ": ")) << result.output;
  result =
      RunRelayVm("run " + program_ + inputs_ + " --xclbin " + kXclbin + " --xclbin " + kXclbin);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "--xclbin is given once")) << result.output;
}

}  // namespace
}  // namespace relay
