// relay-vm debug, scripted: each tests/tools/debug/NAME.session holds the
// command line on its first line ("# relay-vm debug ARGS") and the
// debugger's commands after it; what the debugger prints must equal
// NAME.expected (numbers within a tolerance), a transcript read and
// checked by hand when it was made
// (tests/tools/debug/update_expected.sh writes them again after a change
// that is meant to alter them). The sessions run from the repository's
// root, so the paths they print are the repository's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/tools/relay_vm_command.h"

namespace relay::testing {
namespace {

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> Sessions() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(RepositoryRoot() / "tests" / "tools" / "debug")) {
    if (entry.path().extension() == ".session") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Whether `actual` reads as `expected`, numbers within a relative 1e-4:
// kernels may round differently on another CPU (its vector width), and the
// transcripts print float32 values in full.
bool SameTranscript(const std::string& actual, const std::string& expected) {
  size_t a = 0;
  size_t e = 0;
  auto number_at = [](const std::string& text, size_t at) {
    return at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) ||
                                (text[at] == '-' && at + 1 < text.size() &&
                                 std::isdigit(static_cast<unsigned char>(text[at + 1]))));
  };
  while (a < actual.size() && e < expected.size()) {
    if (number_at(actual, a) && number_at(expected, e)) {
      char* a_end = nullptr;
      char* e_end = nullptr;
      const double x = std::strtod(actual.c_str() + a, &a_end);
      const double y = std::strtod(expected.c_str() + e, &e_end);
      if (std::fabs(x - y) > 1e-4 * std::max(1.0, std::fabs(y))) return false;
      a = static_cast<size_t>(a_end - actual.c_str());
      e = static_cast<size_t>(e_end - expected.c_str());
      continue;
    }
    if (actual[a++] != expected[e++]) return false;
  }
  return a == actual.size() && e == expected.size();
}

class DebugSessionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DebugSessionTest, PrintsItsTranscript) {
  const std::filesystem::path directory = RepositoryRoot() / "tests" / "tools" / "debug";
  const std::filesystem::path session = directory / (GetParam() + ".session");
  std::ifstream file(session);
  std::string first_line;
  std::getline(file, first_line);
  const std::string prefix = "# relay-vm debug ";
  ASSERT_TRUE(first_line.starts_with(prefix)) << session << " must start with '" << prefix << "'";
  CommandResult result =
      RunRelayVm("debug " + first_line.substr(prefix.size()) + " < '" + session.string() + "'",
                 RepositoryRoot());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  // (The session's first line is a comment to the debugger, as '#' lines
  // are to gdb.)
  const std::string expected = ReadText(directory / (GetParam() + ".expected"));
  EXPECT_TRUE(SameTranscript(result.output, expected)) << "printed:\n"
                                                       << result.output << "\nexpected:\n"
                                                       << expected;
}

INSTANTIATE_TEST_SUITE_P(Sessions, DebugSessionTest, ::testing::ValuesIn(Sessions()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace relay::testing
