// relay-vm debug and relay-vm repl, scripted: each tests/tools/debug/
// NAME.session and tests/tools/repl/NAME.session holds the command line on
// its first line ("# relay-vm debug ARGS", "// relay-vm repl ARGS": a
// comment to the debugger and to the REPL) and the input after it; what
// the command prints (standard output and error) must equal NAME.expected
// (numbers within a tolerance), a transcript read and checked by hand when
// it was made (tests/tools/update_transcripts.sh writes them again after a
// change that is meant to alter them). The sessions run from the
// repository's root, so the paths they print are the repository's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
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

// "debug/NAME" and "repl/NAME" for each session file.
std::vector<std::string> Sessions() {
  std::vector<std::string> names;
  for (const char* kind : {"debug", "repl"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(RepositoryRoot() / "tests" / "tools" / kind)) {
      if (entry.path().extension() == ".session")
        names.push_back(std::string(kind) + "/" + entry.path().stem().string());
    }
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

class SessionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionTest, PrintsItsTranscript) {
  const std::filesystem::path base = RepositoryRoot() / "tests" / "tools" / GetParam();
  const std::filesystem::path session = base.string() + ".session";
  std::ifstream file(session);
  std::string first_line;
  std::getline(file, first_line);
  const std::string kind = GetParam().substr(0, GetParam().find('/'));
  const std::string prefix = (kind == "debug" ? "# relay-vm " : "// relay-vm ") + kind;
  ASSERT_TRUE(first_line.starts_with(prefix)) << session << " must start with '" << prefix << "'";
  const std::string arguments = first_line.substr(prefix.size());
  CommandResult result =
      RunRelayVm(kind + arguments + " < '" + session.string() + "'", RepositoryRoot());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  // How long :time measured differs from run to run.
  const std::regex timing("Time: [0-9.]+ ms");
  const std::string printed = std::regex_replace(result.output, timing, "Time: T ms");
  const std::string expected =
      std::regex_replace(ReadText(base.string() + ".expected"), timing, "Time: T ms");
  EXPECT_TRUE(SameTranscript(printed, expected)) << "printed:\n"
                                                 << result.output << "\nexpected:\n"
                                                 << expected;
}

INSTANTIATE_TEST_SUITE_P(Sessions, SessionTest, ::testing::ValuesIn(Sessions()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

}  // namespace
}  // namespace relay::testing
