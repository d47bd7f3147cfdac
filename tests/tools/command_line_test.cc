// Runs the built relay-vm binary as a user would and checks what it prints.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

CommandResult RunRelayVm(const std::string& arguments) {
  std::string command = std::string(RELAY_VM_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t read = fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), read);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CommandLineTest, HelpListsEverySubcommand) {
  CommandResult result = RunRelayVm("--help");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* name : {"compile", "run", "check", "fmt", "disasm"}) {
    EXPECT_TRUE(Contains(result.output, std::string("\n  ") + name + " ")) << name << "\n"
                                                                           << result.output;
  }
}

TEST(CommandLineTest, VersionPrintsAVersion) {
  CommandResult result = RunRelayVm("--version");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "relay-vm 0.")) << result.output;
}

TEST(CommandLineTest, NoArgumentsPrintsUsageAndFails) {
  CommandResult result = RunRelayVm("");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "usage: relay-vm")) << result.output;
}

TEST(CommandLineTest, UnknownCommandIsAUsageError) {
  CommandResult result = RunRelayVm("frobnicate");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "unknown command 'frobnicate'")) << result.output;
}

TEST(CommandLineTest, SubcommandHelpShowsUsage) {
  CommandResult result = RunRelayVm("compile --help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(Contains(result.output, "usage: relay-vm compile")) << result.output;
}

}  // namespace
