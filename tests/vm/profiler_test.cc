// The profiler's table and trace account for a run's time and launches:
// the launch count comes from the kernel pipeline's own counter, the trace
// is parsed as JSON, and the table's rows must add up to its totals.
#include "vm/interpreter/profiler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "tests/vm/compile_text.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

std::shared_ptr<const vm::Executable> Compile(const std::string& body) {
  return testing::CompileText("profiled.relay", body);
}

// A loop of dense layers through a recursive global, so the trace has
// nested calls and the table a contraction with a fused epilogue.
constexpr char kLayers[] = R"(
def @layer(%x: Tensor[(4, 64), float32], %w: Tensor[(64, 64), float32]) -> Tensor[(4, 64), float32] {
  nn.relu(nn.dense(%x, %w))
}
def @repeat(%n: int32, %x: Tensor[(4, 64), float32], %w: Tensor[(64, 64), float32]) -> Tensor[(4, 64), float32] {
  if (equal(%n, 0)) { %x } else { @repeat(subtract(%n, 1), @layer(%x, %w), %w) }
}
def @main(%x: Tensor[(4, 64), float32], %w: Tensor[(64, 64), float32]) -> Tensor[(4, 64), float32] {
  @activate(@repeat(5, %x, %w))
}
def @activate(%x: Tensor[(4, 64), float32]) -> Tensor[(4, 64), float32] {
  exp(%x)
}
)";

std::vector<Value> Inputs() {
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {4, 64}, DType::kFloat32);
  Ref<Tensor> w = Tensor::Empty(HostDevice(), {64, 64}, DType::kFloat32);
  for (int64_t index = 0; index < x->element_count(); ++index) x->data<float>()[index] = 0.01f;
  for (int64_t index = 0; index < w->element_count(); ++index) w->data<float>()[index] = 0.02f;
  return {x, w};
}

// Each line of the printed table after the heads: its first word, and the
// "calls" (0 where blank) and "total ms" columns, found as the two words
// before the first one ending in '%'.
struct PrintedRow {
  uint64_t calls = 0;
  double milliseconds = 0;
};
std::vector<std::pair<std::string, PrintedRow>> ParseTable(const std::string& table) {
  std::vector<std::pair<std::string, PrintedRow>> rows;
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // column heads
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    size_t percent = 0;
    while (percent < tokens.size() && !tokens[percent].ends_with("%")) ++percent;
    if (percent < 2 || percent == tokens.size()) {
      ADD_FAILURE() << "unexpected line: " << line;
      continue;
    }
    PrintedRow row;
    row.milliseconds = std::stod(tokens[percent - 1]);
    const std::string& calls = tokens[percent - 2];
    if (calls.find_first_not_of("0123456789") == std::string::npos) row.calls = std::stoull(calls);
    rows.push_back({tokens[0], row});
  }
  return rows;
}

TEST(ProfilerTest, TableRowsAddUpToTheKernelTimeAndLaunches) {
  auto executable = Compile(kLayers);
  vm::VirtualMachine machine(executable);
  const std::vector<Value> inputs = Inputs();
  machine.Invoke("main", inputs);  // compiles the kernels

  vm::Profiler profiler(executable, /*record_trace=*/false);
  machine.set_profiler(&profiler);
  const uint64_t launches_before = kernels::KernelLaunchCount();
  for (int run = 0; run < 3; ++run) machine.Invoke("main", inputs);
  const uint64_t launches = kernels::KernelLaunchCount() - launches_before;

  EXPECT_EQ(profiler.kernel_launches(), launches);
  EXPECT_GE(launches, 3u * 6u);  // five layers and the exp, per run
  EXPECT_LE(profiler.kernel_nanoseconds() + profiler.preparation_nanoseconds(),
            profiler.run_nanoseconds());

  std::ostringstream table;
  profiler.FormatTable(table);
  const std::string text = table.str();
  EXPECT_NE(text.find("relay-vm profile: 3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("nn.dense+nn.relu"), std::string::npos) << text;
  EXPECT_NE(text.find("4x64, 64x64"), std::string::npos) << text;
  EXPECT_NE(text.find("GFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("GB/s"), std::string::npos) << text;  // exp: memory-bound

  double row_milliseconds = 0, kernels_milliseconds = -1;
  uint64_t row_calls = 0;
  for (const auto& [name, row] : ParseTable(text)) {
    if (name == "kernels") {
      kernels_milliseconds = row.milliseconds;
      EXPECT_EQ(row.calls, launches);
    } else if (name != "kernel" && name != "VM") {  // preparation, VM time
      row_milliseconds += row.milliseconds;
      row_calls += row.calls;
    }
  }
  EXPECT_EQ(row_calls, launches) << text;
  ASSERT_GT(kernels_milliseconds, 0) << text;
  // Each printed figure is rounded to a microsecond.
  EXPECT_NEAR(row_milliseconds, kernels_milliseconds,
              std::max(0.05 * kernels_milliseconds, 0.001 * 20))
      << text;
}

TEST(ProfilerTest, TraceHasASlicePerLaunchAndBalancedCalls) {
  auto executable = Compile(kLayers);
  vm::VirtualMachine machine(executable);
  const std::vector<Value> inputs = Inputs();
  vm::Profiler profiler(executable, /*record_trace=*/true);
  machine.set_profiler(&profiler);
  const uint64_t launches_before = kernels::KernelLaunchCount();
  machine.Invoke("main", inputs);
  const uint64_t launches = kernels::KernelLaunchCount() - launches_before;

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("relay-profiler-test-" + std::to_string(::getpid()) + ".json");
  profiler.WriteChromeTrace(path.string());
  std::ifstream file(path);
  const nlohmann::json trace = nlohmann::json::parse(file);
  std::filesystem::remove(path);

  uint64_t slices = 0;
  int depth = 0, deepest = 0;
  std::vector<std::string> entered;
  double last_timestamp = -1;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    const std::string phase = event.at("ph");
    if (phase == "M") continue;
    const double timestamp = event.at("ts");
    EXPECT_GE(timestamp, last_timestamp);  // in time order on one track
    last_timestamp = timestamp;
    if (phase == "X") {
      ++slices;
      EXPECT_EQ(event.at("cat"), "kernel");
      EXPECT_GE(double(event.at("dur")), 0.0);
    } else if (phase == "B") {
      entered.push_back(event.at("name"));
      deepest = std::max(deepest, ++depth);
    } else {
      ASSERT_EQ(phase, "E");
      --depth;
      ASSERT_GE(depth, 0);
    }
  }
  EXPECT_EQ(slices, launches);
  EXPECT_EQ(depth, 0);
  EXPECT_GE(deepest, 3);  // @main, @repeat, @layer
  EXPECT_NE(std::find(entered.begin(), entered.end(), "@layer"), entered.end());
  EXPECT_NE(std::find(entered.begin(), entered.end(), "@main"), entered.end());
}

TEST(ProfilerTest, AFailedRunClosesItsCalls) {
  auto executable = Compile(R"(
def @main(%x: Tensor[(?), float32], %y: Tensor[(?), float32]) -> Tensor[(?), float32] {
  add(%x, %y)
}
)");
  vm::VirtualMachine machine(executable);
  vm::Profiler profiler(executable, /*record_trace=*/true);
  machine.set_profiler(&profiler);
  Ref<Tensor> three = Tensor::Empty(HostDevice(), {3}, DType::kFloat32);
  Ref<Tensor> four = Tensor::Empty(HostDevice(), {4}, DType::kFloat32);
  EXPECT_THROW(machine.Invoke("main", std::vector<Value>{three, four}), Error);
  std::ostringstream table;
  profiler.FormatTable(table);
  EXPECT_NE(table.str().find("relay-vm profile: 1 run,"), std::string::npos) << table.str();
  EXPECT_THROW(vm::Profiler(executable, false).WriteChromeTrace("/nonexistent/x.json"), Error);
  EXPECT_THROW(profiler.WriteChromeTrace("/nonexistent-directory/trace.json"), Error);
}

}  // namespace
}  // namespace relay
