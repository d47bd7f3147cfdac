// A second process running the same operators compiles no kernel: it links
// the objects the first one left in the disk cache. Checked the way a user
// would, through the line RELAY_KERNEL_STATS=1 prints at exit, for two
// processes (this test binary, started again) that run a small network's
// worth of operators: a fused-epilogue dense, a convolution, a reduction,
// elementwise and data-movement kernels.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "tests/core/npy_test_support.h"

extern char** environ;

namespace relay::kernels {
namespace {

constexpr char kChildVariable[] = "RELAY_KERNEL_CACHE_PROCESS_CHILD";

Ref<Tensor> Filled(Shape shape, float value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  for (int64_t index = 0; index < tensor->element_count(); ++index)
    tensor->data<float>()[index] = value;
  return tensor;
}

// What each process runs.
void RunSomeOperators() {
  std::vector<Ref<Tensor>> dense_inputs = {Filled({64, 96}, 0.5f), Filled({80, 96}, 0.25f)};
  Ref<Tensor> dense = RunOperator("nn.dense", dense_inputs);
  std::vector<Ref<Tensor>> relu_inputs = {dense};
  Ref<Tensor> activated = RunOperator("nn.relu", relu_inputs);
  std::vector<Ref<Tensor>> conv_inputs = {Filled({1, 8, 12, 12}, 1.0f),
                                          Filled({32, 8, 3, 3}, 1.0f)};
  RunOperator("nn.conv2d", conv_inputs, {{"padding", AttrValue::IntList({1, 1})}});
  std::vector<Ref<Tensor>> sum_inputs = {activated};
  RunOperator("sum", sum_inputs, {{"axis", AttrValue::IntList({1})}});
  std::vector<Ref<Tensor>> transpose_inputs = {activated};
  RunOperator("transpose", transpose_inputs);
}

// Runs only in the children KernelCacheProcessTest starts.
TEST(KernelCacheProcessChild, RunsTheOperators) {
  if (std::getenv(kChildVariable) == nullptr) GTEST_SKIP() << "run by KernelCacheProcessTest";
  RunSomeOperators();
}

// Runs this binary's child test with the kernel cache in `cache` and
// returns what it printed to stderr.
std::string RunChild(const std::string& cache, const std::string& stderr_path) {
  std::string executable = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=KernelCacheProcessChild.RunsTheOperators";
  std::vector<char*> arguments = {executable.data(), filter.data(), nullptr};
  std::vector<std::string> settings = {std::string(kChildVariable) + "=1",
                                       "RELAY_CACHE_DIR=" + cache, "RELAY_KERNEL_STATS=1"};
  std::vector<char*> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    std::string_view text(*variable);
    if (text.starts_with("RELAY_CACHE_DIR=") || text.starts_with("RELAY_KERNEL_STATS=")) continue;
    environment.push_back(*variable);
  }
  for (std::string& setting : settings) environment.push_back(setting.data());
  environment.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t child = 0;
  int spawned = ::posix_spawn(&child, executable.c_str(), &actions, nullptr, arguments.data(),
                              environment.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0);
  if (spawned != 0) return "";
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  std::ifstream file(stderr_path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(KernelCacheProcessTest, SecondProcessCompilesNoKernel) {
  testing::TemporaryDirectory directory;
  const std::string cache = directory / "kernels";
  std::string first = RunChild(cache, directory / "first.txt");
  std::string second = RunChild(cache, directory / "second.txt");
  // The first process compiles its kernels and writes them to the cache.
  EXPECT_EQ(first.find("relay-vm: kernels: 0 compiled"), std::string::npos) << first;
  EXPECT_NE(first.find("relay-vm: kernels: "), std::string::npos) << first;
  // The second links them all from the disk cache.
  EXPECT_NE(second.find("relay-vm: kernels: 0 compiled, "), std::string::npos) << second;
  EXPECT_EQ(second.find(" 0 from the disk cache"), std::string::npos) << second;
}

}  // namespace
}  // namespace relay::kernels
