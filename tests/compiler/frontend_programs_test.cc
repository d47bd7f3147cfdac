// Runs the front end over the program corpus in tests/programs/frontend.
//
// valid/*.relay must parse and type-check; each global's type must equal its
// `// expect-type: @name: TYPE` line (written by hand from Relay's semantics,
// so it is an oracle independent of the type checker), and printing must
// give text that parses back to a structurally equal module and prints
// identically (fmt is idempotent).
//
// invalid/*.relay must fail; each `// expect-error: LINE:COL: TEXT` line
// must match a distinct reported diagnostic at that line and column whose
// message contains TEXT, and nothing else may be reported.
//
// pending/*.relay holds programs that should check but do not yet because
// of known front-end bugs; they are not run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/ir/module.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/type.h"
#include "compiler/parser/printer.h"

// The bound is there to catch work that grows faster than the chain (a
// quadratic pass takes minutes here), not to time the front end: Release
// builds have taken 0.4 s to 1.2 s on this project's shared two-core
// machines, so the bound is 2 s. Unoptimized (Debug) and sanitizer builds
// run several times slower, so they get a looser bound instead of skipping
// the measurement.
#if defined(__SANITIZE_ADDRESS__)
#define RELAY_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define RELAY_TEST_UNDER_SANITIZER 1
#endif
#endif
#ifndef RELAY_TEST_UNDER_SANITIZER
#define RELAY_TEST_UNDER_SANITIZER 0
#endif
#if defined(__OPTIMIZE__) && !RELAY_TEST_UNDER_SANITIZER
constexpr double kLetChainCpuSecondsLimit = 2.0;
#else
constexpr double kLetChainCpuSecondsLimit = 10.0;
#endif

namespace relay {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDirectory() {
  return fs::path(RELAY_TEST_FIXTURE_DIR).parent_path() / "programs" / "frontend";
}

// The .relay files of one corpus folder, sorted so test order is stable.
std::vector<fs::path> ProgramFiles(const std::string& folder) {
  std::vector<fs::path> files;
  const fs::path directory = CorpusDirectory() / folder;
  if (!fs::is_directory(directory)) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".relay") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

// gtest test names allow only letters, digits and underscores.
std::string TestNameOf(const testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& character : name) {
    if (!std::isalnum(static_cast<unsigned char>(character))) character = '_';
  }
  return name;
}

// The text after `// KEY: ` on each line that is such a comment (leading
// blanks allowed), with its 1-based line number.
struct Directive {
  int line;
  std::string text;
};

std::vector<Directive> FindDirectives(const std::string& source, std::string_view key) {
  const std::string prefix = "// " + std::string(key) + ": ";
  std::vector<Directive> directives;
  std::istringstream lines(source);
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, prefix.size(), prefix) != 0) continue;
    std::string text = line.substr(start + prefix.size());
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
    directives.push_back({line_number, text});
  }
  return directives;
}

Diagnostics MakeDiagnostics(const std::string& file, std::string text) {
  return Diagnostics(file, std::make_shared<const std::string>(std::move(text)));
}

// Each global's checked type, printed, by name.
std::map<std::string, std::string> GlobalTypes(const ir::Module& module) {
  std::map<std::string, std::string> types;
  for (const ir::GlobalFunction& global : module.functions()) {
    types[global.name->name] = ir::TypeToString(global.name->checked_type());
  }
  return types;
}

// ---- valid programs ---------------------------------------------------------------------

class ValidProgramTest : public testing::TestWithParam<fs::path> {};

TEST_P(ValidProgramTest, ChecksToExpectedTypesAndRoundTrips) {
  const fs::path& path = GetParam();
  const std::string source = ReadFile(path);
  EXPECT_NE(source.find("#[version = \"0.0.5\"]"), std::string::npos)
      << path << " lacks the version header";

  Diagnostics diagnostics = MakeDiagnostics(path.filename().string(), source);
  const ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  ASSERT_FALSE(module.functions().empty()) << path << " defines no global function";

  // The oracle: one hand-written expect-type line per global.
  std::map<std::string, std::string> expected_types;
  for (const Directive& directive : FindDirectives(source, "expect-type")) {
    const size_t separator = directive.text.find(": ");
    ASSERT_TRUE(directive.text.starts_with("@") && separator != std::string::npos)
        << path << ":" << directive.line << ": malformed expect-type line";
    const std::string name = directive.text.substr(1, separator - 1);
    EXPECT_TRUE(expected_types.emplace(name, directive.text.substr(separator + 2)).second)
        << path << ":" << directive.line << ": a second expect-type line for @" << name;
  }
  const std::map<std::string, std::string> actual_types = GlobalTypes(module);
  for (const auto& [name, type] : actual_types) {
    auto expected = expected_types.find(name);
    if (expected == expected_types.end()) {
      ADD_FAILURE() << path << ": @" << name << " has no expect-type line (its type is " << type
                    << ")";
      continue;
    }
    EXPECT_EQ(type, expected->second) << "the type of @" << name << " in " << path;
  }
  for (const auto& [name, type] : expected_types) {
    EXPECT_TRUE(actual_types.count(name))
        << path << ": expect-type names @" << name << ", which the program does not define";
  }

  // Printing must lose nothing: the printed text checks to an equal module
  // with the same types, and printing that module gives the same text.
  const std::string printed = parser::PrintModule(module);
  Diagnostics reparse_diagnostics =
      MakeDiagnostics(path.filename().string() + " (printed)", printed);
  const ir::Module reparsed = compiler::ParseAndCheck(reparse_diagnostics);
  ASSERT_FALSE(reparse_diagnostics.has_errors())
      << reparse_diagnostics.FormatAll() << "\nprinted text:\n"
      << printed;
  EXPECT_TRUE(ir::StructurallyEqual(module, reparsed)) << "printed text:\n" << printed;
  EXPECT_EQ(GlobalTypes(reparsed), actual_types) << "printed text:\n" << printed;
  EXPECT_EQ(parser::PrintModule(reparsed), printed);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ValidProgramTest, testing::ValuesIn(ProgramFiles("valid")),
                         TestNameOf);

// ---- invalid programs -------------------------------------------------------------------

struct ExpectedError {
  int directive_line;  // where the expect-error comment is
  int line;
  int column;
  std::string message_part;
};

// Parses "LINE:COL: TEXT"; false when the directive is malformed.
bool ParseExpectedError(const Directive& directive, ExpectedError& out) {
  std::istringstream stream(directive.text);
  char first_colon = 0, second_colon = 0;
  if (!(stream >> out.line >> first_colon >> out.column >> second_colon) || first_colon != ':' ||
      second_colon != ':') {
    return false;
  }
  std::getline(stream, out.message_part);
  const size_t start = out.message_part.find_first_not_of(' ');
  out.message_part = start == std::string::npos ? "" : out.message_part.substr(start);
  out.directive_line = directive.line;
  return !out.message_part.empty();
}

bool Matches(const Error& error, const ExpectedError& expected) {
  return error.span().has_value() && error.span()->line == expected.line &&
         error.span()->column == expected.column &&
         error.message().find(expected.message_part) != std::string::npos;
}

class InvalidProgramTest : public testing::TestWithParam<fs::path> {};

TEST_P(InvalidProgramTest, ReportsExactlyTheExpectedErrors) {
  const fs::path& path = GetParam();
  const std::string source = ReadFile(path);
  std::vector<ExpectedError> expected_errors;
  for (const Directive& directive : FindDirectives(source, "expect-error")) {
    ExpectedError expected;
    ASSERT_TRUE(ParseExpectedError(directive, expected))
        << path << ":" << directive.line << ": malformed expect-error line: " << directive.text;
    expected_errors.push_back(expected);
  }
  ASSERT_FALSE(expected_errors.empty()) << path << " has no expect-error line";

  Diagnostics diagnostics = MakeDiagnostics(path.filename().string(), source);
  compiler::ParseAndCheck(diagnostics);
  ASSERT_TRUE(diagnostics.has_errors()) << path << " checked without errors";

  // Each expectation claims a different diagnostic, so two expectations
  // cannot both be satisfied by one report.
  const std::vector<Error>& errors = diagnostics.errors();
  std::vector<bool> claimed(errors.size(), false);
  for (const ExpectedError& expected : expected_errors) {
    bool found = false;
    for (size_t index = 0; index < errors.size() && !found; ++index) {
      if (!claimed[index] && Matches(errors[index], expected)) claimed[index] = found = true;
    }
    EXPECT_TRUE(found) << path << ":" << expected.directive_line << ": no diagnostic at "
                       << expected.line << ":" << expected.column << " containing \""
                       << expected.message_part << "\"; reported:\n"
                       << diagnostics.FormatAll();
  }
  EXPECT_EQ(errors.size(), expected_errors.size())
      << path << ": the number of reported errors differs from the expect-error lines; "
      << "reported:\n"
      << diagnostics.FormatAll();
}

INSTANTIATE_TEST_SUITE_P(Corpus, InvalidProgramTest, testing::ValuesIn(ProgramFiles("invalid")),
                         TestNameOf);

// ---- scale ------------------------------------------------------------------------------

constexpr int kChainLength = 100000;

TEST(FrontendScaleTest, HundredThousandLetChainChecksQuickly) {
  std::string text = "#[version = \"0.0.5\"]\ndef @main(%p: Tensor[(2, 2), float32]) {\n";
  text += "  let %x0 = %p;\n";
  for (int index = 1; index < kChainLength; ++index) {
    text +=
        "  let %x" + std::to_string(index) + " = add(%x" + std::to_string(index - 1) + ", %p);\n";
  }
  text += "  %x" + std::to_string(kChainLength - 1) + "\n}\n";

  compiler::Prelude();  // parsed once per process; not part of the measurement
  // The bound is on CPU time, which other jobs on the machine do not
  // inflate; wall time is reported alongside for diagnosis.
  const std::clock_t cpu_start = std::clock();
  const auto wall_start = std::chrono::steady_clock::now();
  Diagnostics diagnostics = MakeDiagnostics("let_chain.relay", text);
  const ir::Module module = compiler::ParseAndCheck(diagnostics);
  const double cpu_seconds = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;

  RecordProperty("cpu_seconds", std::to_string(cpu_seconds));
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  ASSERT_EQ(module.functions().size(), 1u);
  EXPECT_EQ(ir::TypeToString(module.functions()[0].name->checked_type()),
            "fn (Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32]");
  EXPECT_LT(cpu_seconds, kLetChainCpuSecondsLimit)
      << "parsing and checking " << kChainLength << " let bindings took " << cpu_seconds
      << " s of CPU (" << wall.count() << " s wall)";
}

TEST(FrontendScaleTest, HundredThousandDeepGraphBindingsRoundTrip) {
  // Each binding uses the previous one, so the expression is 100,000 calls
  // deep: every pass over it must be iterative.
  std::string text = "#[version = \"0.0.5\"]\ndef @main(%p: Tensor[(3,), float32]) {\n";
  text += "  %0 = add(%p, %p);\n";
  for (int index = 1; index < kChainLength; ++index) {
    const std::string previous = "%" + std::to_string(index - 1);
    text += "  %" + std::to_string(index) + " = add(" + previous + ", " + previous + ");\n";
  }
  text += "  %" + std::to_string(kChainLength - 1) + "\n}\n";

  Diagnostics diagnostics = MakeDiagnostics("graph_chain.relay", text);
  const ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  EXPECT_EQ(ir::TypeToString(module.functions()[0].name->checked_type()),
            "fn (Tensor[(3,), float32]) -> Tensor[(3,), float32]");

  const std::string printed = parser::PrintModule(module);
  Diagnostics reparse_diagnostics = MakeDiagnostics("graph_chain (printed)", printed);
  const ir::Module reparsed = compiler::ParseAndCheck(reparse_diagnostics);
  ASSERT_FALSE(reparse_diagnostics.has_errors()) << reparse_diagnostics.FormatAll();
  EXPECT_TRUE(ir::StructurallyEqual(module, reparsed));
  EXPECT_EQ(parser::PrintModule(reparsed), printed);
}

}  // namespace
}  // namespace relay
