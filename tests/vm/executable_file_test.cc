// The .rbc executable file (vm/bytecode/executable_file.h): every run
// program survives a save and load unchanged, and malformed bytes of every
// kind are rejected with a kLoad error, never a crash.
#include "vm/bytecode/executable_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/error.h"
#include "vm/core/zip_archive.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

namespace fs = std::filesystem;

const fs::path kRunPrograms = fs::path(RELAY_TEST_FIXTURE_DIR).parent_path() / "programs" / "run";

std::string ReadText(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

vm::Executable CompileText(const std::string& name, const std::string& text) {
  Diagnostics diagnostics(name, std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kCompile, diagnostics.FormatAll());
  return codegen::CompileToBytecode(module, &compiler::Prelude());
}

std::span<const uint8_t> BytesOf(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

vm::Executable Load(const std::string& bytes) {
  return vm::LoadExecutable(BytesOf(bytes), "t.rbc");
}

// What running @main prints, or the error it stops with.
std::string RunMain(std::shared_ptr<const vm::Executable> executable) {
  try {
    vm::VirtualMachine machine(executable);
    return FormatValue(machine.Invoke("main", {}), executable->PrintOptions());
  } catch (const Error& error) {
    return std::string("error ") + std::string(ErrorKindName(error.kind())) + ": " + error.what();
  }
}

// The message of the kLoad error that loading `bytes` gives ("" if it loads).
std::string LoadError(const std::string& bytes) {
  try {
    Load(bytes);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad) << error.what();
    return error.message();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- the layout, as the header documents it, for hand-made corruptions ----------------

constexpr size_t kSectionCountOffset = 12;
constexpr size_t kTableOffset = 16;
constexpr size_t kEntryBytes = 24;
constexpr uint32_t kDebugSection = 6;

uint64_t GetLittle(const std::string& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t byte = 0; byte < width; ++byte)
    value |= uint64_t(uint8_t(bytes[offset + byte])) << (8 * byte);
  return value;
}

// How many sections the table lists: 5, or 6 with the debug section.
size_t SectionCount(const std::string& bytes) {
  return GetLittle(bytes, kSectionCountOffset, 4);
}

size_t TableChecksumOffset(const std::string& bytes) {
  return kTableOffset + SectionCount(bytes) * kEntryBytes;
}

// The table entry of the section with `id`, or npos.
size_t SectionEntry(const std::string& bytes, uint32_t id) {
  for (size_t entry = 0; entry < SectionCount(bytes); ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    if (GetLittle(bytes, at, 4) == id) return at;
  }
  return std::string::npos;
}

void PutLittle(std::string& bytes, size_t offset, size_t width, uint64_t value) {
  for (size_t byte = 0; byte < width; ++byte) bytes[offset + byte] = char(value >> (8 * byte));
}

// Offset and size of the section with `id` (1 strings ... 5 functions, 6 debug).
std::pair<size_t, size_t> SectionRange(const std::string& bytes, uint32_t id) {
  const size_t at = SectionEntry(bytes, id);
  if (at != std::string::npos) return {GetLittle(bytes, at + 8, 8), GetLittle(bytes, at + 16, 8)};
  ADD_FAILURE() << "no section " << id;
  return {0, 0};
}

// Makes every checksum match the (corrupted) contents again, so that the
// parsers behind them are reached.
void RecomputeChecksums(std::string& bytes) {
  for (size_t entry = 0; entry < SectionCount(bytes); ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    const uint64_t offset = GetLittle(bytes, at + 8, 8);
    const uint64_t size = GetLittle(bytes, at + 16, 8);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    PutLittle(bytes, at + 4, 4, detail::Crc32(BytesOf(bytes).subspan(offset, size)));
  }
  PutLittle(bytes, TableChecksumOffset(bytes), 4,
            detail::Crc32(BytesOf(bytes).first(TableChecksumOffset(bytes))));
}

// A program using every section: constants, kernels with attributes, the
// prelude's constructors, a fatal message.
const char* const kEverySection = R"(#[version = "0.0.5"]
def @first(%xs: List[int32]) -> int32 {
  match? (%xs) {
    Cons(%x, _) => %x,
  }
}
def @main() -> (int32, Tensor[(2, 3), float32]) {
  // The scale comes from a call, so constant folding leaves a fused group.
  let %scale = cast(@first(Cons(2, Nil)), dtype="float32");
  let %t = add(multiply(ones(shape=[2, 3], dtype="float32"), %scale),
               arange(1f, 4f, 1f, dtype="float32"));
  (@first(Cons(7, Nil)), %t)
}
)";

// `executable` with debug information in every function: the compiler's,
// and for a function without any, a variable `v` in its last register over
// all its code.
vm::Executable WithVariables(vm::Executable executable) {
  for (vm::Function& function : executable.functions) {
    if (!function.variables.empty() || function.register_count == 0) continue;
    function.variables.push_back(
        {"v", int32_t(function.register_count) - 1, 0, uint32_t(function.code.size())});
  }
  return executable;
}

vm::Executable WithoutVariables(vm::Executable executable) {
  for (vm::Function& function : executable.functions) function.variables.clear();
  return executable;
}

// Every section, the optional debug section included.
const std::string& EverySectionBytes() {
  static const std::string bytes =
      vm::SerializeExecutable(WithVariables(CompileText("every_section.relay", kEverySection)));
  return bytes;
}

// The same program without debug information (as `compile --strip-debug`
// saves it).
const std::string& NoDebugBytes() {
  static const std::string bytes =
      vm::SerializeExecutable(WithoutVariables(CompileText("every_section.relay", kEverySection)));
  return bytes;
}

// A function's variables, one string each, for comparisons.
std::vector<std::string> DescribeVariables(const vm::Function& function) {
  std::vector<std::string> described;
  for (const vm::VariableRange& variable : function.variables) {
    described.push_back(variable.name + " $" + std::to_string(variable.reg) + " [" +
                        std::to_string(variable.begin) + ", " + std::to_string(variable.end) + ")");
  }
  return described;
}

// ---- round trips ------------------------------------------------------------------------

class ExecutableRoundTripTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(ExecutableRoundTripTest, LoadsToTheSameBytecodeAndResult) {
  auto original = std::make_shared<const vm::Executable>(
      CompileText(GetParam().filename().string(), ReadText(GetParam())));
  const std::string bytes = vm::SerializeExecutable(*original);
  auto loaded = std::make_shared<const vm::Executable>(Load(bytes));
  EXPECT_EQ(vm::Disassemble(*loaded), vm::Disassemble(*original));
  // Nothing is lost or reordered: saving the loaded executable gives the same bytes.
  EXPECT_TRUE(vm::SerializeExecutable(*loaded) == bytes);
  EXPECT_EQ(RunMain(loaded), RunMain(original));
}

std::vector<fs::path> RunPrograms() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(kRunPrograms))
    if (entry.path().extension() == ".relay") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The test's name: the program's file name, alphanumerics kept.
std::string ProgramTestName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Programs, ExecutableRoundTripTest, ::testing::ValuesIn(RunPrograms()),
                         ProgramTestName);

TEST(ExecutableFileTest, TheRoundTripCorpusIsThere) {
  EXPECT_GE(RunPrograms().size(), 21u);
}

TEST(ExecutableFileTest, KeepsEverySectionsContents) {
  const vm::Executable original = WithVariables(CompileText("every_section.relay", kEverySection));
  ASSERT_EQ(SectionCount(EverySectionBytes()), 6u);
  ASSERT_FALSE(original.constants.empty());
  ASSERT_FALSE(original.kernels.empty());
  ASSERT_FALSE(original.strings.empty());
  ASSERT_FALSE(original.constructors.empty());
  const vm::Executable loaded = Load(EverySectionBytes());
  EXPECT_EQ(loaded.strings, original.strings);
  ASSERT_EQ(loaded.kernels.size(), original.kernels.size());
  for (size_t index = 0; index < loaded.kernels.size(); ++index) {
    EXPECT_EQ(loaded.kernels[index].op, original.kernels[index].op);
    EXPECT_EQ(loaded.kernels[index].attrs, original.kernels[index].attrs);
    EXPECT_EQ(loaded.kernels[index].tuple_input, original.kernels[index].tuple_input);
    EXPECT_EQ(loaded.kernels[index].tuple_result, original.kernels[index].tuple_result);
    ASSERT_EQ(loaded.kernels[index].fused.size(), original.kernels[index].fused.size());
    for (size_t position = 0; position < loaded.kernels[index].fused.size(); ++position) {
      const kernels::FusedOperator& a = loaded.kernels[index].fused[position];
      const kernels::FusedOperator& b = original.kernels[index].fused[position];
      EXPECT_EQ(a.op, b.op);
      EXPECT_EQ(a.attrs, b.attrs);
      EXPECT_EQ(a.inputs, b.inputs);
    }
  }
  ASSERT_EQ(loaded.constants.size(), original.constants.size());
  for (size_t index = 0; index < loaded.constants.size(); ++index) {
    const auto& a = static_cast<const Tensor&>(*loaded.constants[index]);
    const auto& b = static_cast<const Tensor&>(*original.constants[index]);
    EXPECT_EQ(a.dtype(), b.dtype());
    EXPECT_EQ(a.shape(), b.shape());
    ASSERT_EQ(a.byte_size(), b.byte_size());
    EXPECT_EQ(std::memcmp(a.host_data(), b.host_data(), a.byte_size()), 0);
  }
  ASSERT_EQ(loaded.functions.size(), original.functions.size());
  for (size_t index = 0; index < loaded.functions.size(); ++index) {
    EXPECT_FALSE(original.functions[index].variables.empty());
    EXPECT_EQ(DescribeVariables(loaded.functions[index]),
              DescribeVariables(original.functions[index]));
  }
  const int32_t main = loaded.FindFunction("main");
  ASSERT_GE(main, 0);
  EXPECT_EQ(loaded.functions[main].source, original.functions[main].source);
  // What @main returns is described, and kept.
  ASSERT_EQ(loaded.functions[main].results.size(), original.functions[main].results.size());
  ASSERT_FALSE(original.functions[main].results.empty());
  for (size_t index = 0; index < loaded.functions[main].results.size(); ++index) {
    const vm::ParamInfo& a = loaded.functions[main].results[index];
    const vm::ParamInfo& b = original.functions[main].results[index];
    EXPECT_EQ(a.is_tensor, b.is_tensor);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.type_text, b.type_text);
  }
  EXPECT_EQ(RunMain(std::make_shared<const vm::Executable>(Load(EverySectionBytes()))),
            "(7, [[3, 4, 5], [3, 4, 5]])");
}

TEST(ExecutableFileTest, FilesRoundTripAndMissingFilesAreLoadErrors) {
  const fs::path path = fs::path(::testing::TempDir()) / "executable_file_test.rbc";
  vm::WriteExecutableFile(path.string(), Load(EverySectionBytes()));
  EXPECT_EQ(vm::Disassemble(vm::ReadExecutableFile(path.string())),
            vm::Disassemble(Load(EverySectionBytes())));
  fs::remove(path);
  try {
    vm::ReadExecutableFile(path.string());
    ADD_FAILURE() << "a missing file loaded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_TRUE(Contains(error.Format(), path.string())) << error.Format();
  }
}

// ---- malformed input --------------------------------------------------------------------

TEST(ExecutableFileTest, EveryTruncationIsALoadError) {
  const std::string& bytes = EverySectionBytes();
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::string message = LoadError(bytes.substr(0, size));
    ASSERT_FALSE(message.empty()) << "a file cut to " << size << " bytes loaded";
    ASSERT_EQ(message.rfind("t.rbc: ", 0), 0u) << message;
  }
}

TEST(ExecutableFileTest, ByteFlipsAreRejectedByTheChecksums) {
  const std::string& bytes = EverySectionBytes();
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string corrupt = bytes;
    const size_t at = random() % corrupt.size();
    corrupt[at] = char(corrupt[at] ^ (1 + random() % 255));
    EXPECT_FALSE(LoadError(corrupt).empty()) << "a flip of byte " << at << " loaded";
  }
}

// With the checksums made to match, flips reach the parsers and the
// verifier: each gives a kLoad error or an executable that verifies.
TEST(ExecutableFileTest, ByteFlipsBehindValidChecksumsLoadOrFailCleanly) {
  const std::string& bytes = EverySectionBytes();
  std::mt19937_64 random(17);
  int loaded = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string corrupt = bytes;
    const int flips = 1 + int(random() % 3);
    for (int flip = 0; flip < flips; ++flip) {
      // Mostly inside the sections, where the parsers are.
      const size_t sections_begin = TableChecksumOffset(corrupt) + 4;
      const size_t at = sections_begin + random() % (corrupt.size() - sections_begin);
      corrupt[at] = char(random());
    }
    RecomputeChecksums(corrupt);
    try {
      vm::Executable executable = Load(corrupt);
      vm::Verify(executable);
      (void)vm::Disassemble(executable);
      ++loaded;
    } catch (const Error& error) {
      ASSERT_EQ(error.kind(), ErrorKind::kLoad) << error.what();
      ASSERT_EQ(error.message().find('\n'), std::string::npos) << error.message();
    }
  }
  // Some flips land in operands, locations or constant data and still verify.
  EXPECT_GT(loaded, 0);
}

TEST(ExecutableFileTest, BadMagic) {
  std::string corrupt = EverySectionBytes();
  corrupt[1] = 'X';
  EXPECT_EQ(LoadError(corrupt), "t.rbc: not a relay-vm executable (bad magic bytes)");
  EXPECT_EQ(LoadError("#[version = \"0.0.5\"]\ndef @main() { 1 }\n"),
            "t.rbc: not a relay-vm executable (bad magic bytes)");
  EXPECT_EQ(LoadError(""), "t.rbc: truncated file");
}

TEST(ExecutableFileTest, FutureVersion) {
  std::string corrupt = EverySectionBytes();
  PutLittle(corrupt, 8, 4, vm::kExecutableFormatVersion + 1);
  EXPECT_EQ(LoadError(corrupt), "t.rbc: unsupported executable format version " +
                                    std::to_string(vm::kExecutableFormatVersion + 1) +
                                    " (this build reads version " +
                                    std::to_string(vm::kExecutableFormatVersion) + ")");
}

TEST(ExecutableFileTest, SectionPastTheEnd) {
  // The last section claims a byte more than the file has: the functions
  // section without debug information, else the debug section.
  const auto claim_a_byte_more = [](std::string bytes, uint32_t id) {
    const size_t at = SectionEntry(bytes, id);
    EXPECT_NE(at, std::string::npos);
    PutLittle(bytes, at + 16, 8, GetLittle(bytes, at + 16, 8) + 1);
    RecomputeChecksums(bytes);
    return bytes;
  };
  EXPECT_EQ(LoadError(claim_a_byte_more(NoDebugBytes(), 5)),
            "t.rbc: section functions lies outside the file (truncated file?)");
  EXPECT_EQ(LoadError(claim_a_byte_more(EverySectionBytes(), kDebugSection)),
            "t.rbc: section debug lies outside the file (truncated file?)");
}

TEST(ExecutableFileTest, OverlappingSections) {
  std::string corrupt = EverySectionBytes();
  const auto [strings_offset, strings_size] = SectionRange(corrupt, 1);
  ASSERT_GT(strings_size, 0u);
  // The constants section (id 2) made to start inside the strings section.
  PutLittle(corrupt, SectionEntry(corrupt, 2) + 8, 8, strings_offset);
  RecomputeChecksums(corrupt);
  EXPECT_TRUE(Contains(LoadError(corrupt), "overlap")) << LoadError(corrupt);
}

TEST(ExecutableFileTest, ChecksumMismatch) {
  std::string corrupt = EverySectionBytes();
  const auto [offset, size] = SectionRange(corrupt, 5);
  corrupt[offset + size / 2] ^= 0x10;
  EXPECT_EQ(LoadError(corrupt),
            "t.rbc: functions section: checksum mismatch (the file is corrupted)");
  std::string table = EverySectionBytes();
  table[kTableOffset + 2] ^= 0x01;
  EXPECT_EQ(LoadError(table), "t.rbc: section table checksum mismatch (the file is corrupted)");
}

TEST(ExecutableFileTest, CountsBeyondTheBytesLeft) {
  std::string corrupt = EverySectionBytes();
  const auto [offset, size] = SectionRange(corrupt, 1);
  PutLittle(corrupt, offset, 4, 0xFFFFFFFF);
  RecomputeChecksums(corrupt);
  EXPECT_EQ(LoadError(corrupt),
            "t.rbc: strings section: string count 4294967295 exceeds the bytes that remain");
}

TEST(ExecutableFileTest, RegisterOutOfRangeWithValidChecksums) {
  vm::Executable executable = Load(EverySectionBytes());
  const int32_t main = executable.FindFunction("main");
  ASSERT_GE(main, 0);
  vm::Function& function = executable.functions[main];
  function.code[0].operands[0] = int32_t(function.register_count) + 90;
  const std::string message = LoadError(vm::SerializeExecutable(executable));
  EXPECT_EQ(message.rfind("t.rbc: invalid bytecode in @main at instruction 0: register ", 0), 0u)
      << message;
  EXPECT_TRUE(Contains(message, "out of range")) << message;
}

TEST(ExecutableFileTest, OpcodePastTheTable) {
  vm::Executable executable = Load(EverySectionBytes());
  const int32_t main = executable.FindFunction("main");
  ASSERT_GE(main, 0);
  executable.functions[main].code[0].opcode = static_cast<vm::Opcode>(vm::kOpcodeCount);
  EXPECT_EQ(LoadError(vm::SerializeExecutable(executable)),
            "t.rbc: functions section: @main instruction 0: unknown opcode " +
                std::to_string(vm::kOpcodeCount));
}

TEST(ExecutableFileTest, UnknownOperatorAndBadAttributes) {
  vm::Executable executable = Load(EverySectionBytes());
  // A single operator's kernel (a fused group's name is only a label).
  auto single = std::find_if(executable.kernels.begin(), executable.kernels.end(),
                             [](const vm::KernelCall& kernel) { return kernel.fused.empty(); });
  ASSERT_NE(single, executable.kernels.end());
  const size_t index = size_t(single - executable.kernels.begin());
  const std::string prefix = "t.rbc: kernel " + std::to_string(index) + " (";
  vm::Executable unknown = Load(EverySectionBytes());
  unknown.kernels[index].op = "no.such_operator";
  EXPECT_EQ(LoadError(vm::SerializeExecutable(unknown)),
            prefix + "no.such_operator): unknown operator");
  vm::Executable bad_attrs = Load(EverySectionBytes());
  bad_attrs.kernels[index].attrs.emplace_back("no_such_attribute", kernels::AttrValue::Int(1));
  const std::string message = LoadError(vm::SerializeExecutable(bad_attrs));
  EXPECT_EQ(message.rfind(prefix + bad_attrs.kernels[index].op + "): ", 0), 0u) << message;
  EXPECT_TRUE(Contains(message, "no_such_attribute")) << message;
}

TEST(ExecutableFileTest, DeeplyNestedAttributes) {
  vm::Executable executable = Load(EverySectionBytes());
  kernels::AttrValue nested = kernels::AttrValue::Int(1);
  for (int depth = 0; depth < 100; ++depth) nested = kernels::AttrValue::List({nested});
  executable.kernels[0].attrs.emplace_back("deep", nested);
  EXPECT_EQ(LoadError(vm::SerializeExecutable(executable)),
            "t.rbc: kernels section: attribute lists nest deeper than " +
                std::to_string(vm::kMaxAttributeDepth));
}

// Verify cannot know a kernel's input form; the loader checks that a
// tuple-input kernel is given exactly the one register holding the tuple.
TEST(ExecutableFileTest, TupleInputKernelsTakeOneRegister) {
  vm::Executable executable = CompileText("concat.relay", R"(#[version = "0.0.5"]
def @main() -> Tensor[(4), float32] {
  concatenate((ones(shape=[2], dtype="float32"), zeros(shape=[2], dtype="float32")))
}
)");
  bool changed = false;
  for (vm::Function& function : executable.functions) {
    for (vm::Instruction& instruction : function.code) {
      if (instruction.opcode != vm::Opcode::kInvokeKernel ||
          !executable.kernels[instruction.operands[1]].tuple_input)
        continue;
      ASSERT_EQ(instruction.list_size, 1u);
      instruction.list_size = 0;
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  const std::string message = LoadError(vm::SerializeExecutable(executable));
  EXPECT_TRUE(Contains(message, "a tuple-input kernel takes one register")) << message;
}

TEST(ExecutableFileTest, FusedOperatorsReadOnlyEarlierResults) {
  vm::Executable executable = Load(EverySectionBytes());
  auto fused = std::find_if(executable.kernels.begin(), executable.kernels.end(),
                            [](const vm::KernelCall& kernel) { return kernel.fused.size() > 1; });
  ASSERT_NE(fused, executable.kernels.end()) << "the program should have a fused group";
  size_t position = 0;
  while (position < fused->fused.size() && fused->fused[position].inputs.empty()) ++position;
  ASSERT_LT(position, fused->fused.size());
  const int32_t own_result = -1 - int32_t(position);
  fused->fused[position].inputs[0] = own_result;
  const std::string message = LoadError(vm::SerializeExecutable(executable));
  EXPECT_TRUE(Contains(message, "operator " + std::to_string(position) + ": input " +
                                    std::to_string(own_result) +
                                    " is not an earlier operator's result"))
      << message;
}

TEST(ExecutableFileTest, ParameterDescriptionsMustMatchTheirFunction) {
  vm::Executable executable = CompileText("params.relay", R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, ?), float32]) { %x }
)");
  ASSERT_EQ(executable.functions[executable.FindFunction("main")].params.size(), 1u);
  executable.functions[executable.FindFunction("main")].params.push_back({});
  EXPECT_EQ(LoadError(vm::SerializeExecutable(executable)),
            "t.rbc: functions section: @main describes 2 parameters but takes 1");
}

// ---- debug information (section 6) ------------------------------------------------------

TEST(ExecutableFileTest, OlderVersionsAreRefused) {
  std::string old = NoDebugBytes();
  PutLittle(old, 8, 4, 3);
  EXPECT_EQ(LoadError(old),
            "t.rbc: unsupported executable format version 3 (this build reads version 7)");
  // Version 4 had no kernel placements, version 5 no external kernels,
  // version 6 no external functions' graphs.
  PutLittle(old, 8, 4, 6);
  EXPECT_EQ(LoadError(old),
            "t.rbc: unsupported executable format version 6 (this build reads version 7)");
}

TEST(ExecutableFileTest, VariablesSurviveARoundTripAndAreListed) {
  vm::Executable original = WithoutVariables(CompileText("every_section.relay", kEverySection));
  const int32_t main = original.FindFunction("main");
  ASSERT_GE(main, 0);
  vm::Function& function = original.functions[main];
  ASSERT_GE(function.register_count, 2u);
  ASSERT_GE(function.code.size(), 3u);
  const uint32_t code_size = uint32_t(function.code.size());
  function.variables = {{"scale", 1, 0, 2}, {"t", 0, 2, code_size}, {"t", 1, code_size, code_size}};
  const std::string bytes = vm::SerializeExecutable(original);
  EXPECT_EQ(SectionCount(bytes), 6u);
  const vm::Executable loaded = Load(bytes);
  EXPECT_EQ(DescribeVariables(loaded.functions[main]),
            (std::vector<std::string>{
                "scale $1 [0, 2)", "t $0 [2, " + std::to_string(code_size) + ")",
                "t $1 [" + std::to_string(code_size) + ", " + std::to_string(code_size) + ")"}));
  // Functions without variables stay without.
  for (size_t index = 0; index < loaded.functions.size(); ++index) {
    if (index != size_t(main)) {
      EXPECT_TRUE(loaded.functions[index].variables.empty());
    }
  }
  EXPECT_TRUE(vm::SerializeExecutable(loaded) == bytes);
  // The listing names them after the function's instructions.
  const std::string listing = vm::DisassembleFunction(loaded, size_t(main));
  const std::string expected_tail = "\n  ; %scale in $1 over [0, 2)\n  ; %t in $0 over [2, " +
                                    std::to_string(code_size) + ")\n  ; %t in $1 over [" +
                                    std::to_string(code_size) + ", " + std::to_string(code_size) +
                                    ")\n";
  ASSERT_GE(listing.size(), expected_tail.size());
  EXPECT_EQ(listing.substr(listing.size() - expected_tail.size()), expected_tail) << listing;
  EXPECT_TRUE(Contains(listing, "  " + std::to_string(code_size - 1) + ": ")) << listing;
  EXPECT_EQ(RunMain(std::make_shared<const vm::Executable>(loaded)), "(7, [[3, 4, 5], [3, 4, 5]])");
}

TEST(ExecutableFileTest, WithoutVariablesThereIsNoDebugSection) {
  const std::string& bytes = NoDebugBytes();
  EXPECT_EQ(SectionCount(bytes), 5u);
  EXPECT_EQ(SectionEntry(bytes, kDebugSection), std::string::npos);
  EXPECT_LT(bytes.size(), EverySectionBytes().size());
  const vm::Executable loaded = Load(bytes);
  for (const vm::Function& function : loaded.functions) EXPECT_TRUE(function.variables.empty());
  EXPECT_FALSE(Contains(vm::Disassemble(loaded), "; %"));
  EXPECT_EQ(RunMain(std::make_shared<const vm::Executable>(loaded)), "(7, [[3, 4, 5], [3, 4, 5]])");
}

TEST(ExecutableFileTest, TheSectionTableListsFiveToSevenSections) {
  std::string eight = EverySectionBytes();
  PutLittle(eight, kSectionCountOffset, 4, 8);
  EXPECT_EQ(LoadError(eight), "t.rbc: expected 5 to 7 sections, the table lists 8");
  std::string four = NoDebugBytes();
  PutLittle(four, kSectionCountOffset, 4, 4);
  EXPECT_EQ(LoadError(four), "t.rbc: expected 5 to 7 sections, the table lists 4");
  // Five entries, one of them debug: a required section is missing.
  std::string missing = NoDebugBytes();
  PutLittle(missing, SectionEntry(missing, 4), 4, kDebugSection);
  RecomputeChecksums(missing);
  EXPECT_EQ(LoadError(missing), "t.rbc: section constructors is missing");
  std::string twice = EverySectionBytes();
  PutLittle(twice, SectionEntry(twice, 5), 4, kDebugSection);
  RecomputeChecksums(twice);
  EXPECT_EQ(LoadError(twice), "t.rbc: section debug appears twice");
  std::string unknown = EverySectionBytes();
  PutLittle(unknown, SectionEntry(unknown, kDebugSection), 4, 8);
  RecomputeChecksums(unknown);
  EXPECT_EQ(LoadError(unknown), "t.rbc: unknown section id 8");
  // The debug section's bytes read as a device section: refused by what
  // they say.
  std::string device = EverySectionBytes();
  PutLittle(device, SectionEntry(device, kDebugSection), 4, 7);
  RecomputeChecksums(device);
  EXPECT_TRUE(LoadError(device).starts_with(
      "t.rbc: device section: the executable names an unknown device"))
      << LoadError(device);
}

TEST(ExecutableFileTest, DebugSectionChecksum) {
  std::string corrupt = EverySectionBytes();
  const auto [offset, size] = SectionRange(corrupt, kDebugSection);
  corrupt[offset + size / 2] ^= 0x10;
  EXPECT_EQ(LoadError(corrupt), "t.rbc: debug section: checksum mismatch (the file is corrupted)");
}

TEST(ExecutableFileTest, DebugCountsBeyondTheBytesLeft) {
  const auto [offset, size] = SectionRange(EverySectionBytes(), kDebugSection);
  ASSERT_GE(size, 8u);
  std::string functions = EverySectionBytes();
  PutLittle(functions, offset, 4, 0xFFFFFFFF);
  RecomputeChecksums(functions);
  EXPECT_EQ(LoadError(functions),
            "t.rbc: debug section: debug function count 4294967295 exceeds the bytes that remain");
  // The first function's variable count.
  std::string variables = EverySectionBytes();
  PutLittle(variables, offset + 4, 4, 0xFFFFFFFF);
  RecomputeChecksums(variables);
  EXPECT_EQ(LoadError(variables),
            "t.rbc: debug section: variable count 4294967295 exceeds the bytes that remain");
  // A variable's name.
  std::string name = EverySectionBytes();
  PutLittle(name, offset + 8, 4, 0x7FFFFFFF);
  RecomputeChecksums(name);
  EXPECT_EQ(
      LoadError(name),
      "t.rbc: debug section: variable name length count 2147483647 exceeds the bytes that remain");
}

TEST(ExecutableFileTest, TruncatedDebugSection) {
  // The section a byte short, so its last variable's end is cut off.
  std::string corrupt = EverySectionBytes();
  const size_t at = SectionEntry(corrupt, kDebugSection);
  PutLittle(corrupt, at + 16, 8, GetLittle(corrupt, at + 16, 8) - 1);
  RecomputeChecksums(corrupt);
  EXPECT_EQ(LoadError(corrupt), "t.rbc: debug section: truncated (needs 4 more bytes)");
  // And a byte long.
  std::string longer = EverySectionBytes() + '\0';
  const size_t entry = SectionEntry(longer, kDebugSection);
  PutLittle(longer, entry + 16, 8, GetLittle(longer, entry + 16, 8) + 1);
  RecomputeChecksums(longer);
  EXPECT_EQ(LoadError(longer), "t.rbc: debug section: 1 unexpected bytes after its contents");
}

TEST(ExecutableFileTest, DebugSectionMustDescribeEveryFunction) {
  const size_t function_count = Load(EverySectionBytes()).functions.size();
  ASSERT_GE(function_count, 2u);
  const auto [offset, size] = SectionRange(EverySectionBytes(), kDebugSection);
  for (size_t count : {function_count - 1, function_count + 1, size_t(0)}) {
    std::string corrupt = EverySectionBytes();
    PutLittle(corrupt, offset, 4, count);
    RecomputeChecksums(corrupt);
    EXPECT_EQ(LoadError(corrupt), "t.rbc: debug section: describes " + std::to_string(count) +
                                      " functions, the functions section has " +
                                      std::to_string(function_count));
  }
}

// Bounds are Verify's: each variable's register and instruction range.
TEST(ExecutableFileTest, VariablesOutOfTheirFunction) {
  const vm::Executable valid = Load(EverySectionBytes());
  const int32_t main = valid.FindFunction("main");
  ASSERT_GE(main, 0);
  const uint32_t registers = valid.functions[main].register_count;
  const uint32_t code_size = uint32_t(valid.functions[main].code.size());
  ASSERT_FALSE(valid.functions[main].variables.empty());
  const std::string prefix = "t.rbc: invalid debug information in @main: variable 0 ";
  const std::string named = "(%" + valid.functions[main].variables[0].name + ") ";
  const auto load_error = [&](auto change) {
    vm::Executable executable = valid;
    change(executable.functions[main].variables[0]);
    EXPECT_THROW(vm::Verify(executable), Error);
    return LoadError(vm::SerializeExecutable(executable));
  };
  EXPECT_EQ(load_error([&](vm::VariableRange& variable) { variable.reg = int32_t(registers); }),
            prefix + named + "is in register " + std::to_string(registers) + ", out of range (" +
                std::to_string(registers) + ")");
  EXPECT_EQ(load_error([](vm::VariableRange& variable) { variable.reg = -1; }),
            prefix + named + "is in register -1, out of range (" + std::to_string(registers) + ")");
  EXPECT_EQ(load_error([&](vm::VariableRange& variable) {
              variable.begin = 0;
              variable.end = code_size + 1;
            }),
            prefix + named + "has instruction range [0, " + std::to_string(code_size + 1) +
                ") past the function's end (" + std::to_string(code_size) + " instructions)");
  EXPECT_EQ(load_error([&](vm::VariableRange& variable) {
              variable.begin = code_size + 1;
              variable.end = code_size + 1;
            }),
            prefix + named + "has instruction range [" + std::to_string(code_size + 1) + ", " +
                std::to_string(code_size + 1) + ") past the function's end (" +
                std::to_string(code_size) + " instructions)");
  EXPECT_EQ(load_error([](vm::VariableRange& variable) {
              variable.begin = 2;
              variable.end = 1;
            }),
            prefix + named + "has an inverted instruction range [2, 1)");
  EXPECT_EQ(load_error([](vm::VariableRange& variable) { variable.name.clear(); }),
            prefix + "has no name");
}

}  // namespace
}  // namespace relay
