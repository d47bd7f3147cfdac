// relay-vm run --profile, --trace and RELAY_PERF_MAP as a user meets them:
// the table follows the result, the trace is JSON with a slice per launch
// the table counts, and perf's map names the kernels, fresh or cached.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/tools/relay_vm_command.h"

namespace relay {
namespace {

using testing::CommandResult;
using testing::Contains;
using testing::RunRelayVm;
using testing::ScratchDirectory;

namespace fs = std::filesystem;

const fs::path kRoot = testing::RepositoryRoot();
const std::string kMlpRun = "run " + (kRoot / "examples" / "mlp.relay").string() + " --params " +
                            (kRoot / "examples" / "mlp_params.npz").string() +
                            " --input input=" + (kRoot / "examples" / "mlp_input.npy").string();

// The "calls" column of the table's "kernels" line.
uint64_t KernelLaunchesInTable(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex("\\nkernels +([0-9]+) "))) return 0;
  return std::stoull(match[1]);
}

TEST(ProfileCommandTest, TheTableFollowsTheResult) {
  CommandResult result = RunRelayVm(kMlpRun + " --profile");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const size_t table = result.output.find("relay-vm profile: 1 run, ");
  ASSERT_NE(table, std::string::npos) << result.output;
  EXPECT_LT(result.output.find("[["), table);  // the probabilities come first
  for (const char* part :
       {"kernel ", "inputs", "calls", "total ms", "mean us", "rate", "nn.dense+nn.bias_add+nn.relu",
        "GFLOP/s", "\nkernels ", "\nkernel preparation ", "\nVM outside kernels "}) {
    EXPECT_TRUE(Contains(result.output, part)) << part << " in\n" << result.output;
  }
  EXPECT_EQ(KernelLaunchesInTable(result.output), 3u) << result.output;  // two layers, softmax
}

TEST(ProfileCommandTest, KernelsOffTheHostNameTheirDevice) {
  CommandResult devices = RunRelayVm("devices");
  if (!Contains(devices.output, "opencl:0 ("))
    GTEST_SKIP() << "no OpenCL device:\n" << devices.output;
  CommandResult result = RunRelayVm(kMlpRun + " --profile --device opencl");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "nn.dense+nn.bias_add+nn.relu@opencl:0")) << result.output;
  EXPECT_EQ(KernelLaunchesInTable(result.output), 3u) << result.output;
}

TEST(ProfileCommandTest, RepeatedRunsAreProfiledWithoutTheWarmUp) {
  CommandResult result = RunRelayVm(kMlpRun + " --repeat 4 --profile");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "relay-vm profile: 4 runs, ")) << result.output;
  EXPECT_EQ(KernelLaunchesInTable(result.output), 12u) << result.output;
}

TEST(ProfileCommandTest, TheTraceHasOneSlicePerLaunch) {
  ScratchDirectory scratch;
  const std::string trace_path = scratch / "trace.json";
  CommandResult result = RunRelayVm(kMlpRun + " --profile --trace " + trace_path);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream file(trace_path);
  ASSERT_TRUE(file.good());
  const nlohmann::json trace = nlohmann::json::parse(file);  // throws unless valid JSON
  uint64_t slices = 0, begins = 0, ends = 0;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "X") ++slices;
    if (event.at("ph") == "B") ++begins;
    if (event.at("ph") == "E") ++ends;
  }
  EXPECT_EQ(slices, KernelLaunchesInTable(result.output));
  EXPECT_GE(begins, 1u);  // @main at least
  EXPECT_EQ(begins, ends);
}

TEST(ProfileCommandTest, AnUnwritableTraceIsAClearError) {
  CommandResult result = RunRelayVm(kMlpRun + " --trace /nonexistent-directory/trace.json");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "/nonexistent-directory/trace.json")) << result.output;
  result = RunRelayVm(kMlpRun + " --trace");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "--trace needs a value")) << result.output;
}

// Runs relay-vm with RELAY_PERF_MAP=1 and the kernel cache in `cache` and
// returns the perf map it wrote (removing it).
std::string RunWithPerfMap(const fs::path& cache) {
  // `exec` keeps the shell's child pid, which `$!` reports, for relay-vm.
  const std::string command = "RELAY_PERF_MAP=1 RELAY_CACHE_DIR=" + cache.string() + " sh -c '" +
                              "exec " + RELAY_VM_BINARY + " " + kMlpRun +
                              " >/dev/null 2>&1' & echo $!; wait $!";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::array<char, 64> buffer{};
  std::string pid;
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) pid += buffer.data();
  pclose(pipe);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  const fs::path map = "/tmp/perf-" + pid + ".map";
  std::ifstream file(map);
  std::stringstream contents;
  contents << file.rdbuf();
  fs::remove(map);
  return contents.str();
}

TEST(ProfileCommandTest, PerfMapsNameCompiledAndCachedKernels) {
  ScratchDirectory scratch;
  for (const char* round : {"compiled", "from the disk cache"}) {
    const std::string map = RunWithPerfMap(scratch / "cache");
    EXPECT_TRUE(std::regex_search(
        map,
        std::regex("(^|\\n)[0-9a-f]+ [0-9a-f]+ relay\\.nn\\.dense\\+nn\\.bias_add\\+nn\\.relu\\n")))
        << round << ":\n"
        << map;
    EXPECT_TRUE(Contains(map, " relay.nn.softmax.parallel.")) << round << ":\n" << map;
  }
}

}  // namespace
}  // namespace relay
