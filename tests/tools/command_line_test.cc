// Runs the built relay-vm binary as a user would and checks what it prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include "tests/tools/relay_vm_command.h"

namespace {

using relay::testing::CommandResult;
using relay::testing::Contains;
using relay::testing::RunRelayVm;
using relay::testing::ScratchDirectory;

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

// Writes `text` to a fresh file under the test's temporary directory.
std::string WriteTempFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return path;
  std::fwrite(text.data(), 1, text.size(), file);
  std::fclose(file);
  return path;
}

TEST(CheckCommandTest, PrintsEachGlobalsType) {
  std::string path = WriteTempFile("check_ok.relay",
                                   "#[version = \"0.0.5\"]\n"
                                   "def @square(%x: Tensor[(2, ?), float32]) { multiply(%x, %x) }\n"
                                   "def @main(%n: int32) -> int32 { @length(Cons(%n, Nil)) }\n");
  CommandResult result = RunRelayVm("check " + path);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output,
            "@square: fn (Tensor[(2, ?), float32]) -> Tensor[(2, ?), float32]\n"
            "@main: fn (int32) -> int32\n");
}

TEST(CheckCommandTest, ReportsErrorsWithLocationAndCaretAndFails) {
  std::string path =
      WriteTempFile("check_bad.relay",
                    "#[version = \"0.0.5\"]\n"
                    "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(3, 2), float32]) {\n"
                    "  add(%a, %b)\n"
                    "}\n");
  CommandResult result = RunRelayVm("check " + path);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(Contains(result.output,
                       path + ":3:3: error: operator add: operands of shapes (2, 3) and (3, 2) "
                              "cannot be broadcast\n  add(%a, %b)\n  ^~~~~~~~~~~"))
      << result.output;
}

TEST(CheckCommandTest, MissingFileIsAOneLineError) {
  CommandResult result = RunRelayVm("check /nonexistent/model.relay");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.output,
            "relay-vm: /nonexistent/model.relay: error: cannot open: No such file or directory\n");
}

TEST(CheckCommandTest, WrongArgumentCountIsAUsageError) {
  CommandResult result = RunRelayVm("check");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(Contains(result.output, "expected one file")) << result.output;
}

TEST(FmtCommandTest, PrintsCanonicalTextThatIsAFixedPoint) {
  std::string path = WriteTempFile("fmt_in.relay",
                                   "#[version = \"0.0.5\"]\n"
                                   "def @main(%x: float32) { %x * 2f + 1f }\n");
  CommandResult first = RunRelayVm("fmt " + path);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output,
            "#[version = \"0.0.5\"]\n\n"
            "def @main(%x: float32) {\n"
            "  %0 = multiply(%x, 2f);\n"
            "  add(%0, 1f)\n"
            "}\n");
  std::string formatted = WriteTempFile("fmt_out.relay", first.output);
  CommandResult second = RunRelayVm("fmt " + formatted);
  EXPECT_EQ(second.output, first.output);
}

TEST(FmtCommandTest, OptimizedShowsWhatThePassesDid) {
  std::string path =
      WriteTempFile("fmt_optimized.relay",
                    "#[version = \"0.0.5\"]\n"
                    "def @main(%x: Tensor[(2), float32], %k: float32) {\n"
                    "  let %scale = fn (%v: Tensor[(2), float32]) { multiply(%v, %k) };\n"
                    "  %scale(nn.relu(add(%x, ones(shape=[2], dtype=\"float32\"))))\n"
                    "}\n");
  CommandResult result = RunRelayVm("fmt --optimized " + path);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // ones(...) folded to a constant, add and relu fused into one kernel,
  // the literal lifted to a global capturing %k.
  EXPECT_TRUE(Contains(result.output, "meta[relay.Constant][0]")) << result.output;
  EXPECT_TRUE(Contains(result.output, "Primitive=1")) << result.output;
  EXPECT_TRUE(Contains(result.output, "def @main.lambda1(%k: float32, %v")) << result.output;
  EXPECT_TRUE(Contains(result.output, "Closure=1")) << result.output;
  EXPECT_FALSE(Contains(result.output, "ones(")) << result.output;
}

TEST(FmtCommandTest, SyntaxErrorsFail) {
  std::string path = WriteTempFile("fmt_bad.relay", "#[version = \"0.0.5\"]\ndef @main( { 1 }\n");
  CommandResult result = RunRelayVm("fmt " + path);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(Contains(result.output, path + ":2:12: error: expected local variable, found '{'"))
      << result.output;
}

}  // namespace

namespace relay::testing {
namespace {

TEST(DevicesCommandTest, ListsTheHostAndSaysWhatEachBackendHas) {
  const CommandResult result = RunRelayVm("devices");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "cpu:0 (host memory")) << result.output;
  EXPECT_TRUE(Contains(result.output, "cpu kernels: the LLVM JIT")) << result.output;
  // Every other backend either lists its devices or says why it has none.
  for (const char* kind : {"opencl", "cuda", "xrt"}) {
    EXPECT_TRUE(Contains(result.output, std::string(kind) + ":0 (") ||
                Contains(result.output, std::string(kind) + ": unavailable: "))
        << kind << " missing from:\n"
        << result.output;
  }
}

TEST(DevicesCommandTest, TakesNoArguments) {
  const CommandResult result = RunRelayVm("devices extra");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(Contains(result.output, "takes no arguments")) << result.output;
}

}  // namespace
}  // namespace relay::testing
