// A run pauses between instructions and resumes where it stopped: the
// state lives in the VM's frames, not on the C++ stack.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "relay/error.h"
#include "tests/vm/compile_text.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

std::shared_ptr<const vm::Executable> Compile(const std::string& body) {
  return testing::CompileText("pause.relay", body);
}

// Non-tail recursion 10000 deep, so a pause lands with many frames live.
constexpr char kSumTo[] = R"(
def @sum_to(%n: int32) -> int32 {
  if (equal(%n, 0)) { 0 } else { add(%n, @sum_to(subtract(%n, 1))) }
}
def @main() -> int32 { @sum_to(10000) }
)";

TEST(PauseTest, SlicedRunsGiveTheSameResult) {
  auto executable = Compile(kSumTo);
  vm::VirtualMachine machine(executable);
  const Value whole = machine.Invoke("main", {});
  machine.Start("main", {});
  std::optional<Value> result;
  int slices = 0;
  while (!(result = machine.Resume(997))) {
    EXPECT_TRUE(machine.paused());
    ++slices;
  }
  EXPECT_FALSE(machine.paused());
  EXPECT_GT(slices, 50);  // 10000 calls of several instructions each
  EXPECT_EQ(FormatValue(*result), FormatValue(whole));
  EXPECT_EQ(FormatValue(*result), "50005000");
}

TEST(PauseTest, ResumeWithoutARunAndRestartAreClear) {
  auto executable = Compile(kSumTo);
  vm::VirtualMachine machine(executable);
  EXPECT_THROW(machine.Resume(), Error);
  machine.Start("main", {});
  EXPECT_FALSE(machine.Resume(10).has_value());
  // Starting again abandons the paused run.
  machine.Start("main", {});
  std::optional<Value> result = machine.Resume();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(FormatValue(*result), "50005000");
}

TEST(PauseTest, AnErrorEndsTheRun) {
  auto executable = Compile(R"(
def @main() -> int32 {
  let %xs: List[int32] = Nil;
  add(@hd(%xs), 1)
}
)");
  vm::VirtualMachine machine(executable);
  machine.Start("main", {});
  EXPECT_THROW(machine.Resume(), Error);
  EXPECT_FALSE(machine.paused());
}

}  // namespace
}  // namespace relay
