// Collects the errors of one compilation so that independent problems are
// all reported, each with its location in the source.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/node.h"
#include "relay/error.h"

namespace relay {

class Diagnostics {
 public:
  Diagnostics(std::string file, std::shared_ptr<const std::string> source_text)
      : file_(std::move(file)), source_text_(std::move(source_text)) {}

  // Past kMaxErrors further reports are dropped: a badly broken file then
  // still gets a short report instead of thousands of lines.
  void Report(ErrorKind kind, const ir::Span& span, std::string message) {
    if (errors_.size() < kMaxErrors) errors_.emplace_back(kind, std::move(message), span.In(file_));
  }
  static constexpr size_t kMaxErrors = 50;
  bool has_errors() const { return !errors_.empty(); }
  const std::vector<Error>& errors() const { return errors_; }
  const std::string& file() const { return file_; }
  const std::shared_ptr<const std::string>& source_text() const { return source_text_; }

  // Every error formatted with its source line and caret, one after another.
  std::string FormatAll() const {
    std::string out;
    for (const Error& error : errors_) {
      out += error.Format(*source_text_);
      out += "\n";
    }
    return out;
  }

  // Throws the first error; the message says how many more there were.
  [[noreturn]] void ThrowFirst() const {
    const Error& first = errors_.front();
    std::string message = first.message();
    if (errors_.size() > 1) {
      message += " (and " + std::to_string(errors_.size() - 1) + " more error" +
                 (errors_.size() > 2 ? "s" : "") + ")";
    }
    throw Error(first.kind(), std::move(message), first.span());
  }

 private:
  std::string file_;
  std::shared_ptr<const std::string> source_text_;
  std::vector<Error> errors_;
};

}  // namespace relay
