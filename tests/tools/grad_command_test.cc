// relay-vm grad as a user runs it: the program it writes runs with
// `run --entry main_grad`, its gradients those worked out by hand; and its
// errors, none of which touches an existing file.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>
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

Ref<Tensor> Floats(std::initializer_list<float> values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {int64_t(values.size())}, DType::kFloat32);
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream stream(path);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

// f(x, w, n) = x * x * w summed: d/dx = 2 x w, d/dw = x^2; n (an integer)
// gets no slot.
const char* kProgram =
    "#[version = \"0.0.5\"]\n"
    "def @main(%x: Tensor[(2,), float32], %w: Tensor[(2,), float32], %n: int32) {\n"
    "  multiply(multiply(%x, %x), %w)\n"
    "}\n";

TEST(GradCommandTest, WritesAProgramWhoseGradientRuns) {
  ScratchDirectory scratch;
  WriteFile(scratch / "f.relay", kProgram);
  CommandResult grad = RunRelayVm("grad " + scratch / "f.relay" + " -o " + scratch / "g.relay");
  ASSERT_EQ(grad.exit_code, 0) << grad.output;
  EXPECT_TRUE(Contains(ReadFile(scratch / "g.relay"), "def @main_grad("))
      << ReadFile(scratch / "g.relay");
  // x = (1, 3), w = (0.5, 2): f = (0.5, 18), d/dx = (1, 12), d/dw = (1, 9).
  WriteNpy(scratch / "x.npy", *Floats({1, 3}));
  WriteNpy(scratch / "w.npy", *Floats({0.5f, 2}));
  CommandResult run = RunRelayVm(
      "run " + scratch / "g.relay" + " --entry main_grad --input x=" + scratch / "x.npy" +
      " --input w=" + scratch / "w.npy" + " --input n=4 --output " + scratch / "out.npz");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<NamedTensor> out = ReadNpz(scratch / "out.npz", HostDevice());
  ASSERT_EQ(out.size(), 3u);  // the result, d/dx, d/dw: n has no slot
  const float expected[3][2] = {{0.5f, 18}, {1, 12}, {1, 9}};
  for (size_t field = 0; field < 3; ++field) {
    ASSERT_EQ(out[field].tensor->shape(), (Shape{2}));
    for (int index = 0; index < 2; ++index) {
      EXPECT_FLOAT_EQ(out[field].tensor->data<float>()[index], expected[field][index])
          << out[field].name << "[" << index << "]";
    }
  }
  // Without -o the program goes to standard output.
  CommandResult printed = RunRelayVm("grad " + scratch / "f.relay");
  ASSERT_EQ(printed.exit_code, 0) << printed.output;
  EXPECT_TRUE(Contains(printed.output, "def @main_grad(")) << printed.output;
}

TEST(GradCommandTest, ErrorsLeaveFilesAlone) {
  ScratchDirectory scratch;
  WriteFile(scratch / "f.relay", kProgram);
  CommandResult same = RunRelayVm("grad " + scratch / "f.relay" + " -o " + scratch / "f.relay");
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_TRUE(Contains(same.output, "is the input")) << same.output;
  EXPECT_EQ(ReadFile(scratch / "f.relay"), kProgram);

  WriteFile(scratch / "old.relay", "keep me");
  CommandResult missing =
      RunRelayVm("grad " + scratch / "f.relay" + " --entry loss -o " + scratch / "old.relay");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "no global @loss")) << missing.output;
  EXPECT_EQ(ReadFile(scratch / "old.relay"), "keep me");

  WriteFile(scratch / "maxpool_grad.relay",
            "#[version = \"0.0.5\"]\n"
            "def @main(%x: Tensor[(2, 3), float32]) {\n"
            "  let %y = reshape(%x, newshape=[1, 1, 2, 3]);\n"
            "  nn.max_pool2d_grad(%y, %y, pool_size=[1, 1])\n"
            "}\n");
  CommandResult refused = RunRelayVm("grad " + scratch / "maxpool_grad.relay");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(Contains(refused.output, "operator nn.max_pool2d_grad is not differentiable"))
      << refused.output;
  EXPECT_TRUE(Contains(refused.output, "maxpool_grad.relay:4:")) << refused.output;

  CommandResult help = RunRelayVm("grad --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_TRUE(Contains(help.output, "get no slot")) << help.output;
}

}  // namespace
}  // namespace relay
