// Golden bytecode: what typical snippets compile to, pinned so that a
// change to the compiler's output is seen and reviewed. Each
// tests/vm/golden/NAME.relay has NAME.bytecode, the disassembly of the
// program's own functions (the prelude's are left out). After an intended
// change, regenerate with RELAY_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "vm/bytecode/bytecode.h"

namespace relay {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDirectory = fs::path(RELAY_TEST_FIXTURE_DIR).parent_path() / "vm" / "golden";

std::string ReadText(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> GoldenNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kGoldenDirectory)) {
    if (entry.path().extension() == ".relay") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenBytecodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenBytecodeTest, MatchesTheGoldenListing) {
  const fs::path source = kGoldenDirectory / (GetParam() + ".relay");
  const std::string file_name = source.filename().string();
  Diagnostics diagnostics(file_name, std::make_shared<const std::string>(ReadText(source)));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  vm::Executable executable = codegen::CompileToBytecode(module, &compiler::Prelude());
  std::string listing;
  for (size_t index = 0; index < executable.functions.size(); ++index) {
    if (executable.functions[index].source == file_name)
      listing += vm::DisassembleFunction(executable, index);
  }
  const fs::path golden = kGoldenDirectory / (GetParam() + ".bytecode");
  const char* update = std::getenv("RELAY_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden) << listing;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run with RELAY_UPDATE_GOLDEN=1";
  EXPECT_EQ(listing, ReadText(golden));
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenBytecodeTest, ::testing::ValuesIn(GoldenNames()));

}  // namespace
}  // namespace relay
