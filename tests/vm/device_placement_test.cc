// Programs that place work with on_device and device_copy: what device
// planning (compiler/passes/plan_devices.h) and the code generator make of
// them (each kernel's placement in the executable), the .rbc format keeping
// it, and the results of running them mixing the host and OpenCL (PoCL in
// CI), against the same program without annotations.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "vm/bytecode/executable_file.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

std::shared_ptr<const vm::Executable> CompileText(const std::string& text) {
  Diagnostics diagnostics("placement.relay",
                          std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kCompile, diagnostics.FormatAll());
  return std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
}

// "op@device" for each kernel of the table ("op" when not placed), in order.
std::vector<std::string> Placements(const vm::Executable& executable) {
  std::vector<std::string> placements;
  for (const vm::KernelCall& kernel : executable.kernels) {
    placements.push_back(kernel.op + (kernel.device ? "@" + kernel.device->ToString() : ""));
  }
  return placements;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

const char* const kMixed = R"(
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) -> Tensor[(2, 4), float32] {
  let %h = on_device(nn.dense(%x, %w), device_type="opencl");
  let %r = nn.relu(%h);
  let %c = device_copy(%r, src_device_type="opencl", dst_device_type="cpu");
  let %d = on_device(add(%c, 1f), device_type=1);
  multiply(%d, 2f)
}
)";

const char* const kUnannotated = R"(
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) -> Tensor[(2, 4), float32] {
  multiply(add(nn.relu(nn.dense(%x, %w)), 1f), 2f)
}
)";

TEST(DevicePlacementTest, AnnotationsPlaceTheirCallsAndWhatTheyFeed) {
  const std::vector<std::string> placements = Placements(*CompileText(kMixed));
  EXPECT_TRUE(Has(placements, "nn.dense@opencl:0")) << ::testing::PrintToString(placements);
  // relu reads the dense result: its domain, so OpenCL too.
  EXPECT_TRUE(Has(placements, "nn.relu@opencl:0")) << ::testing::PrintToString(placements);
  EXPECT_TRUE(Has(placements, "device_copy")) << ::testing::PrintToString(placements);
  // DLPack's code 1 is the CPU.
  EXPECT_TRUE(Has(placements, "add@cpu:0")) << ::testing::PrintToString(placements);
  // The multiply reads the host's sum: its domain.
  EXPECT_TRUE(Has(placements, "multiply@cpu:0")) << ::testing::PrintToString(placements);
}

TEST(DevicePlacementTest, AnArgumentFromAnotherDeviceIsCopiedToItsCall) {
  const std::vector<std::string> placements = Placements(*CompileText(R"(
def @main(%x: Tensor[(8), float32]) -> Tensor[(8), float32] {
  let %a = on_device(exp(%x), device_type="opencl");
  let %b = on_device(log(%x), device_type="cpu");
  add(%a, %b)
}
)"));
  EXPECT_TRUE(Has(placements, "exp@opencl:0")) << ::testing::PrintToString(placements);
  EXPECT_TRUE(Has(placements, "log@cpu:0")) << ::testing::PrintToString(placements);
  // add joins %a's domain; %b comes from the host through a copy.
  EXPECT_TRUE(Has(placements, "add@opencl:0")) << ::testing::PrintToString(placements);
  EXPECT_TRUE(Has(placements, "device_copy")) << ::testing::PrintToString(placements);
}

TEST(DevicePlacementTest, CallsNothingPlacesRunOnTheVmsDevice) {
  const std::vector<std::string> placements = Placements(*CompileText(R"(
def @main(%x: Tensor[(8), float32]) -> (Tensor[(8), float32], Tensor[(8), float32]) {
  let %a = exp(%x);
  let %b = on_device(log(%x), device_type="opencl");
  (%a, %b)
}
)"));
  EXPECT_TRUE(Has(placements, "exp")) << ::testing::PrintToString(placements);
  EXPECT_TRUE(Has(placements, "log@opencl:0")) << ::testing::PrintToString(placements);
}

// A domain as long as a let chain: planning neither recurses along it nor
// loses the annotation at its head.
TEST(DevicePlacementTest, APlacementFollowsALongChain) {
  constexpr int kLength = 20000;
  std::string text =
      "def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(4, 4), float32]) -> Tensor[(1, 4), "
      "float32] {\n  let %v0 = on_device(nn.dense(%x, %w), device_type=\"opencl\");\n";
  for (int index = 1; index < kLength; ++index) {
    text += "  let %v" + std::to_string(index) + " = nn.dense(%v" + std::to_string(index - 1) +
            ", %w);\n";
  }
  text += "  %v" + std::to_string(kLength - 1) + "\n}\n";
  const std::shared_ptr<const vm::Executable> executable = CompileText(text);
  int placed = 0;
  for (const vm::KernelCall& kernel : executable->kernels) {
    if (kernel.op == "nn.dense" && kernel.device && kernel.device->kind == DeviceKind::kOpenCL) {
      ++placed;
    }
  }
  EXPECT_EQ(placed, kLength);
}

TEST(DevicePlacementTest, ProgramsWithoutAnnotationsPlaceNothing) {
  for (const std::string& placement : Placements(*CompileText(kUnannotated))) {
    EXPECT_EQ(placement.find('@'), std::string::npos) << placement;
  }
}

TEST(DevicePlacementTest, AnUnknownDeviceIsATypeErrorNamingIt) {
  try {
    CompileText(R"(
def @main(%x: Tensor[(8), float32]) -> Tensor[(8), float32] {
  on_device(exp(%x), device_type="tpu")
}
)");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("names no device: \"tpu\""), std::string::npos)
        << error.message();
  }
}

TEST(DevicePlacementTest, PlacementsSurviveTheExecutableFile) {
  const std::shared_ptr<const vm::Executable> executable = CompileText(kMixed);
  const std::string bytes = vm::SerializeExecutable(*executable);
  const vm::Executable loaded = vm::LoadExecutable(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "mixed.rbc");
  EXPECT_EQ(Placements(loaded), Placements(*executable));

  // The device runs default to (compile --device) survives too.
  vm::Executable defaulted = *executable;
  defaulted.default_device = DeviceId{DeviceKind::kOpenCL, 2};
  const std::string defaulted_bytes = vm::SerializeExecutable(defaulted);
  const vm::Executable defaulted_loaded = vm::LoadExecutable(
      std::span(reinterpret_cast<const uint8_t*>(defaulted_bytes.data()), defaulted_bytes.size()),
      "defaulted.rbc");
  ASSERT_TRUE(defaulted_loaded.default_device.has_value());
  EXPECT_EQ(defaulted_loaded.default_device->ToString(), "opencl:2");
  EXPECT_FALSE(loaded.default_device.has_value());

  // A placement on a device kind the format does not know is refused.
  vm::Executable corrupted = *executable;
  for (vm::KernelCall& kernel : corrupted.kernels) {
    if (kernel.device) kernel.device->kind = static_cast<DeviceKind>(99);
  }
  const std::string bad = vm::SerializeExecutable(corrupted);
  try {
    vm::LoadExecutable(std::span(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()),
                       "bad.rbc");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_NE(error.message().find("placed on an unknown device (kind 99"), std::string::npos)
        << error.message();
  }
}

// The result of `executable`'s @main on fixed inputs, printed from the host.
std::string RunMain(const std::shared_ptr<const vm::Executable>& executable, Device* device) {
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {2, 3}, DType::kFloat32);
  Ref<Tensor> w = Tensor::Empty(HostDevice(), {4, 3}, DType::kFloat32);
  for (int index = 0; index < 6; ++index) x->data<float>()[index] = 0.5f * float(index) - 1.0f;
  for (int index = 0; index < 12; ++index)
    w->data<float>()[index] = 0.25f * float(index % 5) - 0.5f;
  vm::VirtualMachine machine(executable);
  machine.set_device(device);
  const std::vector<Value> arguments{x, w};
  return FormatValue(vm::ValueOnHost(machine.Invoke("main", arguments)),
                     executable->PrintOptions());
}

TEST(DevicePlacementTest, AMixedProgramComputesWhatTheHostAloneDoes) {
  Device* opencl = nullptr;
  try {
    opencl = &GetDevice(DeviceId{DeviceKind::kOpenCL, 0});
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  const std::string expected = RunMain(CompileText(kUnannotated), nullptr);
  const std::shared_ptr<const vm::Executable> mixed = CompileText(kMixed);
  EXPECT_EQ(RunMain(mixed, nullptr), expected);
  // With OpenCL as the VM's device too (placed calls stay where they are).
  EXPECT_EQ(RunMain(mixed, opencl), expected);
}

// arange's bounds decide its shape: computed on the device, they are read
// back, and arange runs on the host.
TEST(DevicePlacementTest, BoundsComputedOnTheDeviceShapeAnArange) {
  Device* opencl = nullptr;
  try {
    opencl = &GetDevice(DeviceId{DeviceKind::kOpenCL, 0});
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  const std::shared_ptr<const vm::Executable> executable = CompileText(R"(
def @main(%x: Tensor[(100), float32]) -> Tensor[(?), float32] {
  arange(0f, sum(%x), 25f)
}
)");
  Ref<Tensor> ones = Tensor::Empty(HostDevice(), {100}, DType::kFloat32);
  std::fill(ones->data<float>(), ones->data<float>() + 100, 1.0f);  // sums to exactly 100
  vm::VirtualMachine machine(executable);
  machine.set_device(opencl);
  const std::vector<Value> arguments{ones};
  EXPECT_EQ(
      FormatValue(vm::ValueOnHost(machine.Invoke("main", arguments)), executable->PrintOptions()),
      "[0, 25, 50, 75]");
}

TEST(DevicePlacementTest, AnAbsentDeviceIsARuntimeErrorAtTheCall) {
  const std::shared_ptr<const vm::Executable> executable = CompileText(R"(
def @main(%x: Tensor[(8), float32]) -> Tensor[(8), float32] {
  on_device(exp(%x), device_type="opencl", device_id=5)
}
)");
  vm::VirtualMachine machine(executable);
  const std::vector<Value> arguments{Tensor::Empty(HostDevice(), {8}, DType::kFloat32)};
  try {
    machine.Invoke("main", arguments);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("opencl:5"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace relay
