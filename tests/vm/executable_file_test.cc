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

constexpr size_t kTableOffset = 16;
constexpr size_t kEntryBytes = 24;
constexpr size_t kSections = 5;
constexpr size_t kTableChecksumOffset = kTableOffset + kSections * kEntryBytes;

uint64_t GetLittle(const std::string& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t byte = 0; byte < width; ++byte)
    value |= uint64_t(uint8_t(bytes[offset + byte])) << (8 * byte);
  return value;
}

void PutLittle(std::string& bytes, size_t offset, size_t width, uint64_t value) {
  for (size_t byte = 0; byte < width; ++byte) bytes[offset + byte] = char(value >> (8 * byte));
}

// Offset and size of the section with `id` (1 strings ... 5 functions).
std::pair<size_t, size_t> SectionRange(const std::string& bytes, uint32_t id) {
  for (size_t entry = 0; entry < kSections; ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    if (GetLittle(bytes, at, 4) == id)
      return {GetLittle(bytes, at + 8, 8), GetLittle(bytes, at + 16, 8)};
  }
  ADD_FAILURE() << "no section " << id;
  return {0, 0};
}

// Makes every checksum match the (corrupted) contents again, so that the
// parsers behind them are reached.
void RecomputeChecksums(std::string& bytes) {
  for (size_t entry = 0; entry < kSections; ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    const uint64_t offset = GetLittle(bytes, at + 8, 8);
    const uint64_t size = GetLittle(bytes, at + 16, 8);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    PutLittle(bytes, at + 4, 4, detail::Crc32(BytesOf(bytes).subspan(offset, size)));
  }
  PutLittle(bytes, kTableChecksumOffset, 4,
            detail::Crc32(BytesOf(bytes).first(kTableChecksumOffset)));
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

const std::string& EverySectionBytes() {
  static const std::string bytes =
      vm::SerializeExecutable(CompileText("every_section.relay", kEverySection));
  return bytes;
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
  const vm::Executable original = CompileText("every_section.relay", kEverySection);
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
      const size_t at =
          kTableChecksumOffset + 4 + random() % (corrupt.size() - kTableChecksumOffset - 4);
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
  std::string corrupt = EverySectionBytes();
  // The functions section (id 5) claims a byte more than the file has.
  for (size_t entry = 0; entry < kSections; ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    if (GetLittle(corrupt, at, 4) == 5)
      PutLittle(corrupt, at + 16, 8, GetLittle(corrupt, at + 16, 8) + 1);
  }
  RecomputeChecksums(corrupt);
  EXPECT_EQ(LoadError(corrupt), "t.rbc: section functions lies outside the file (truncated file?)");
}

TEST(ExecutableFileTest, OverlappingSections) {
  std::string corrupt = EverySectionBytes();
  const auto [strings_offset, strings_size] = SectionRange(corrupt, 1);
  ASSERT_GT(strings_size, 0u);
  // The constants section (id 2) made to start inside the strings section.
  for (size_t entry = 0; entry < kSections; ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    if (GetLittle(corrupt, at, 4) == 2) PutLittle(corrupt, at + 8, 8, strings_offset);
  }
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

}  // namespace
}  // namespace relay
