// Running the built relay-vm binary from tests, as a user would: its exit
// status and everything it printed, and a scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace relay::testing {

// The repository's root, from the fixture directory the build passes in.
inline const std::filesystem::path& RepositoryRoot() {
  static const std::filesystem::path root =
      std::filesystem::path(RELAY_TEST_FIXTURE_DIR).parent_path().parent_path();
  return root;
}

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// Runs `relay-vm ARGUMENTS` through the shell, in `directory` if given,
// with `environment` ("NAME=VALUE ...") added to its environment.
inline CommandResult RunRelayVm(const std::string& arguments,
                                const std::filesystem::path& directory = {},
                                const std::string& environment = {}) {
  std::string command = std::string(RELAY_VM_BINARY) + " " + arguments + " 2>&1";
  if (!environment.empty()) command = "env " + environment + " " + command;
  if (!directory.empty()) command = "cd '" + directory.string() + "' && " + command;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t read = fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), read);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A directory of its own for the running test, removed afterwards.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    path_ = std::filesystem::temp_directory_path() /
            ("relay-vm-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace relay::testing
