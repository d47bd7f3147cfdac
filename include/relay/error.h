// The one error type of relay-vm (docs/architecture.md, "The runtime core").
//
// Every failure that reaches a user is a relay::Error carrying a kind, a
// message written for the user, and where known the source span it concerns
// and a VM backtrace. The library throws it and never exits; only a program's
// main() decides to exit.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relay {

enum class ErrorKind {
  kUsage,     // API or command-line misuse
  kParse,     // malformed source text
  kType,      // type inference failed
  kCompile,   // a compiler pass or code generation refused the program
  kLoad,      // malformed input file: .rbc, .npy, .npz
  kRuntime,   // data-dependent failure while running (shape mismatch, failed match)
  kDevice,    // device missing, driver failure, out of memory
  kInternal,  // a broken invariant: a bug in relay-vm
};

std::string_view ErrorKindName(ErrorKind kind);

// A region of a named source. A span with line == 0 names only the file (used
// for errors about whole input files such as a truncated .npy).
struct SourceSpan {
  std::string file;
  int line = 0;
  int column = 0;
  int end_line = 0;
  int end_column = 0;

  // "file:line:col", "file" when the span has no line.
  std::string ToString() const;
};

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message, std::optional<SourceSpan> span = std::nullopt,
        std::vector<std::string> backtrace = {});

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const std::optional<SourceSpan>& span() const { return span_; }
  // Innermost frame first, each like "@main (model.relay:3:5)".
  const std::vector<std::string>& backtrace() const { return backtrace_; }

  // One line: "FILE:LINE:COL: error: MESSAGE" (or "error: MESSAGE").
  const char* what() const noexcept override { return summary_.c_str(); }

  // The full report: the summary line, then, when `source_text` holds the
  // text of the span's file, the offending line with a caret under the
  // column, then the backtrace.
  std::string Format(std::string_view source_text = {}) const;

 private:
  ErrorKind kind_;
  std::string message_;
  std::optional<SourceSpan> span_;
  std::vector<std::string> backtrace_;
  std::string summary_;
};

// Throws an internal error naming the broken invariant and the C++ location.
[[noreturn]] void ThrowInternalError(const char* condition, const char* file, int line,
                                     const std::string& detail);

}  // namespace relay

// Checks an invariant that the code itself guarantees (never user input).
#define RELAY_CHECK(condition, detail)                                                       \
  do {                                                                                       \
    if (!(condition)) ::relay::ThrowInternalError(#condition, __FILE__, __LINE__, (detail)); \
  } while (false)

// Marks a path the code itself rules out; reaching it is an internal error.
#define RELAY_UNREACHABLE(detail) \
  ::relay::ThrowInternalError("unreachable", __FILE__, __LINE__, (detail))
