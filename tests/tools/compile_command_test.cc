// relay-vm compile as a user runs it: the MLP example compiled to .rbc runs
// and disassembles exactly as its source does, with or without its debug
// information; broken .rbc files and bad command lines get one clear line
// and the right exit status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include "relay/devices.h"
#include "relay/npy.h"
#include "tests/tools/relay_vm_command.h"

namespace relay {
namespace {

using testing::CommandResult;
using testing::Contains;
using testing::RunRelayVm;
using testing::ScratchDirectory;

namespace fs = std::filesystem;

const fs::path kRoot = testing::RepositoryRoot();

std::string ReadBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// How many sections an .rbc file's table lists (executable_file.h): 5, or 6
// with the debug section.
uint32_t SectionCount(const std::string& bytes) {
  uint32_t count = 0;
  for (size_t byte = 0; byte < 4; ++byte)
    count |= uint32_t(uint8_t(bytes.at(12 + byte))) << (8 * byte);
  return count;
}

// `listing` without the lines that name debug variables ("  ; %x in $3 over [2, 9)").
std::string WithoutVariableLines(const std::string& listing) {
  std::string kept;
  size_t begin = 0;
  while (begin < listing.size()) {
    size_t end = listing.find('\n', begin);
    end = end == std::string::npos ? listing.size() : end + 1;
    if (listing.compare(begin, 5, "  ; %") != 0) kept.append(listing, begin, end - begin);
    begin = end;
  }
  return kept;
}

const std::string kMlp = (kRoot / "examples" / "mlp.relay").string();
const std::string kMlpArguments =
    " --params " + (kRoot / "examples" / "mlp_params.npz").string() +
    " --input input=" + (kRoot / "examples" / "mlp_input.npy").string();

TEST(CompileCommandTest, TheCompiledMlpRunsAsItsSourceDoes) {
  ScratchDirectory scratch;
  const std::string rbc = scratch / "mlp.rbc";
  CommandResult compiled = RunRelayVm("compile " + kMlp + " -o " + rbc);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_EQ(compiled.output, "");
  ASSERT_TRUE(fs::exists(rbc));
  CommandResult from_source = RunRelayVm("run " + kMlp + kMlpArguments);
  CommandResult from_rbc = RunRelayVm("run " + rbc + kMlpArguments);
  ASSERT_EQ(from_source.exit_code, 0) << from_source.output;
  ASSERT_EQ(from_rbc.exit_code, 0) << from_rbc.output;
  EXPECT_EQ(from_rbc.output.substr(0, 3), "[[0") << from_rbc.output;
  EXPECT_EQ(from_rbc.output, from_source.output);
  // Parameters are described in the file: a missing input is still named.
  CommandResult missing = RunRelayVm("run " + rbc);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(Contains(missing.output, "missing input 'input' of type Tensor[(?, 64), float32]"))
      << missing.output;
}

TEST(CompileCommandTest, ParamsAreBakedIntoTheExecutable) {
  ScratchDirectory scratch;
  const std::string rbc = scratch / "mlp.rbc";
  CommandResult compiled = RunRelayVm("compile " + kMlp + " -o " + rbc + " --params " +
                                      (kRoot / "examples" / "mlp_params.npz").string());
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  // Only the input is left to give.
  CommandResult listing = RunRelayVm("disasm " + rbc);
  EXPECT_TRUE(Contains(listing.output, "function 0 @main (params 1,")) << listing.output;
  CommandResult from_source = RunRelayVm("run " + kMlp + kMlpArguments);
  CommandResult baked = RunRelayVm(
      "run " + rbc + " --input input=" + (kRoot / "examples" / "mlp_input.npy").string());
  ASSERT_EQ(baked.exit_code, 0) << baked.output;
  EXPECT_EQ(baked.output, from_source.output);
}

TEST(CompileCommandTest, BakedParamsMustFitTheirParameters) {
  ScratchDirectory scratch;
  const std::string source = scratch / "add.relay";
  std::ofstream(source) << "#[version = \"0.0.5\"]\n"
                           "def @main(%w: Tensor[(2), float32], %x: Tensor[(2), float32]) {\n"
                           "  add(%w, %x)\n}\n";
  auto write_w = [&](const std::string& name, Shape shape, DType dtype) {
    Ref<Tensor> w = Tensor::Empty(HostDevice(), shape, dtype);
    std::fill_n(static_cast<char*>(w->host_data()), w->byte_size(), 0);
    WriteNpz(scratch / name, {NamedTensor{"w", w}});
    return scratch / name;
  };
  CommandResult wrong_dtype = RunRelayVm("compile " + source + " -o " + scratch / "a.rbc" +
                                         " --params " + write_w("int.npz", {2}, DType::kInt32));
  EXPECT_EQ(wrong_dtype.exit_code, 2);
  EXPECT_TRUE(
      Contains(wrong_dtype.output, "'w' is int32 (2,), but parameter %w is Tensor[(2,), float32]"))
      << wrong_dtype.output;
  CommandResult wrong_shape = RunRelayVm("compile " + source + " -o " + scratch / "a.rbc" +
                                         " --params " + write_w("long.npz", {3}, DType::kFloat32));
  EXPECT_EQ(wrong_shape.exit_code, 2);
  EXPECT_TRUE(Contains(wrong_shape.output, "'w' is float32 (3,)")) << wrong_shape.output;
  EXPECT_FALSE(fs::exists(scratch / "a.rbc"));
}

TEST(CompileCommandTest, DisassemblyOfTheRbcMatchesTheSource) {
  ScratchDirectory scratch;
  const std::string rbc = scratch / "mlp.rbc";
  ASSERT_EQ(RunRelayVm("compile " + kMlp + " -o " + rbc).exit_code, 0);
  CommandResult from_source = RunRelayVm("disasm " + kMlp);
  CommandResult from_rbc = RunRelayVm("disasm " + rbc);
  ASSERT_EQ(from_rbc.exit_code, 0) << from_rbc.output;
  EXPECT_TRUE(Contains(from_rbc.output, "function 0 @main")) << from_rbc.output;
  EXPECT_EQ(from_rbc.output, from_source.output);
}

TEST(CompileCommandTest, StripDebugLeavesOutTheVariablesAndStillRuns) {
  ScratchDirectory scratch;
  const std::string full = scratch / "full.rbc";
  const std::string stripped = scratch / "stripped.rbc";
  ASSERT_EQ(RunRelayVm("compile " + kMlp + " -o " + full).exit_code, 0);
  CommandResult compiled = RunRelayVm("compile " + kMlp + " -o " + stripped + " --strip-debug");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_EQ(compiled.output, "");
  const std::string full_bytes = ReadBytes(full);
  const std::string stripped_bytes = ReadBytes(stripped);
  EXPECT_EQ(SectionCount(stripped_bytes), 5u);
  CommandResult full_listing = RunRelayVm("disasm " + full);
  CommandResult stripped_listing = RunRelayVm("disasm " + stripped);
  ASSERT_EQ(stripped_listing.exit_code, 0) << stripped_listing.output;
  EXPECT_FALSE(Contains(stripped_listing.output, "\n  ; %")) << stripped_listing.output;
  // Only the variables are gone.
  EXPECT_EQ(stripped_listing.output, WithoutVariableLines(full_listing.output));
  if (Contains(full_listing.output, "\n  ; %")) {
    EXPECT_EQ(SectionCount(full_bytes), 6u);
    EXPECT_LT(stripped_bytes.size(), full_bytes.size());
  } else {
    // A compiler that records no variables writes no debug section to strip.
    EXPECT_EQ(stripped_bytes, full_bytes);
  }
  CommandResult from_source = RunRelayVm("run " + kMlp + kMlpArguments);
  CommandResult from_stripped = RunRelayVm("run " + stripped + kMlpArguments);
  ASSERT_EQ(from_stripped.exit_code, 0) << from_stripped.output;
  EXPECT_EQ(from_stripped.output.substr(0, 3), "[[0") << from_stripped.output;
  EXPECT_EQ(from_stripped.output, from_source.output);
}

TEST(CompileCommandTest, DeviceIsRecordedForRunsThatNameNone) {
  ScratchDirectory scratch;
  const std::string rbc = scratch / "mlp.rbc";
  // Recorded by name: the device need not be present when compiling.
  CommandResult compiled = RunRelayVm("compile " + kMlp + " -o " + rbc + " --device cuda:1");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_EQ(SectionCount(ReadBytes(rbc)), 7u) << "the debug and device sections";
  CommandResult listing = RunRelayVm("disasm " + rbc);
  EXPECT_TRUE(Contains(listing.output, "; runs on cuda:1 unless told otherwise")) << listing.output;
  // Running it asks for that device, or for the one --device names.
  CommandResult absent = RunRelayVm("run " + rbc + kMlpArguments);
  EXPECT_EQ(absent.exit_code, 1) << absent.output;
  EXPECT_TRUE(Contains(absent.output, "cuda")) << absent.output;
  CommandResult on_host = RunRelayVm("run " + rbc + kMlpArguments + " --device cpu");
  CommandResult source = RunRelayVm("run " + kMlp + kMlpArguments);
  ASSERT_EQ(on_host.exit_code, 0) << on_host.output;
  EXPECT_EQ(on_host.output, source.output);
  CommandResult bad = RunRelayVm("compile " + kMlp + " -o " + rbc + " --device tpu");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(Contains(bad.output, "--device takes cpu, opencl[:N], cuda[:N] or xrt[:N]"))
      << bad.output;
}

TEST(CompileCommandTest, ATruncatedRbcIsOneLineNamingTheFile) {
  ScratchDirectory scratch;
  const std::string rbc = scratch / "mlp.rbc";
  ASSERT_EQ(RunRelayVm("compile " + kMlp + " -o " + rbc).exit_code, 0);
  const std::string bytes = ReadBytes(rbc);
  ASSERT_GT(bytes.size(), 100u);
  for (size_t size : {size_t(0), size_t(5), size_t(40), bytes.size() / 2, bytes.size() - 1}) {
    const std::string cut = scratch / ("cut" + std::to_string(size) + ".rbc");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, size);
    CommandResult result = RunRelayVm("run " + cut + kMlpArguments);
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_EQ(result.output.rfind("relay-vm: error: " + cut + ": ", 0), 0u) << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

TEST(CompileCommandTest, SourceErrorsWriteNothing) {
  ScratchDirectory scratch;
  const std::string source = scratch / "bad.relay";
  std::ofstream(source) << "#[version = \"0.0.5\"]\ndef @main() -> int32 { 1f }\n";
  CommandResult result = RunRelayVm("compile " + source + " -o " + scratch / "bad.rbc");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(Contains(result.output, "error")) << result.output;
  EXPECT_FALSE(fs::exists(scratch / "bad.rbc"));
}

TEST(CompileCommandTest, BadCommandLines) {
  ScratchDirectory scratch;
  EXPECT_EQ(RunRelayVm("compile").exit_code, 2);
  EXPECT_EQ(RunRelayVm("compile " + kMlp).exit_code, 2);
  EXPECT_EQ(RunRelayVm("compile " + kMlp + " -o").exit_code, 2);
  EXPECT_EQ(RunRelayVm("compile " + kMlp + " -o " + scratch / "mlp.txt").exit_code, 2);
  EXPECT_EQ(RunRelayVm("compile " + kMlp + " -o " + scratch / "a.rbc" + " --frobnicate").exit_code,
            2);
  EXPECT_EQ(RunRelayVm("compile " + kMlp + " -o " + scratch / "a.rbc" + " --params").exit_code, 2);
  EXPECT_EQ(RunRelayVm("compile /no/such/file.relay -o " + scratch / "a.rbc").exit_code, 1);
}

}  // namespace
}  // namespace relay
