// Registers die at their last use: a function that materialises three
// large tensors one after another never holds more than one of them.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

// Each %x is 4 MiB and used twice (so it is not fused away); each dies
// after its second use.
constexpr char kProgram[] = R"(#[version = "0.0.5"]
def @main() -> float32 {
  let %a = ones(shape=[1024, 1024], dtype="float32");
  let %s = add(sum(%a), max(%a));
  let %b = full(2f, shape=[1024, 1024], dtype="float32");
  let %t = add(sum(%b), max(%b));
  let %c = full(3f, shape=[1024, 1024], dtype="float32");
  let %u = add(sum(%c), max(%c));
  add(%s, add(%t, %u))
}
)";

TEST(LivenessTest, LargeTensorsAreFreedAtTheirLastUse) {
  Diagnostics diagnostics("liveness.relay", std::make_shared<const std::string>(kProgram));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  auto executable = std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
  vm::VirtualMachine machine(executable);
  machine.Invoke("main", {});  // compiles the kernels
  const MemoryStatistics before = HostDevice().memory_statistics();
  Value result = machine.Invoke("main", {});
  const MemoryStatistics after = HostDevice().memory_statistics();
  // (2^20 + 1) + (2 * 2^20 + 2) + (3 * 2^20 + 3)
  EXPECT_EQ(FormatValue(result), "6291462f");
  // One 4 MiB tensor at a time (the peak counts what was in use before).
  constexpr size_t kTensorBytes = size_t{4} << 20;
  EXPECT_LT(after.peak_bytes_in_use - before.bytes_in_use, 2 * kTensorBytes)
      << "peak " << after.peak_bytes_in_use << ", in use before " << before.bytes_in_use;
}

}  // namespace
}  // namespace relay
