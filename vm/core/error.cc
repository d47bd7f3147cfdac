#include "relay/error.h"

#include <sstream>

namespace relay {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return "usage";
    case ErrorKind::kParse:
      return "parse";
    case ErrorKind::kType:
      return "type";
    case ErrorKind::kCompile:
      return "compile";
    case ErrorKind::kLoad:
      return "load";
    case ErrorKind::kRuntime:
      return "runtime";
    case ErrorKind::kDevice:
      return "device";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string SourceSpan::ToString() const {
  if (line <= 0) return file;
  std::string text = file;
  text += ':';
  text += std::to_string(line);
  if (column > 0) {
    text += ':';
    text += std::to_string(column);
  }
  return text;
}

namespace {

std::string Summarize(ErrorKind kind, const std::string& message,
                      const std::optional<SourceSpan>& span) {
  std::string summary;
  if (span && !span->file.empty()) summary = span->ToString() + ": ";
  summary += kind == ErrorKind::kInternal ? "internal error: " : "error: ";
  summary += message;
  return summary;
}

// The 1-based `line_number`-th line of `text`, without its newline; empty if
// the text is shorter.
std::string_view LineOf(std::string_view text, int line_number) {
  size_t start = 0;
  for (int line = 1; line < line_number; ++line) {
    size_t newline = text.find('\n', start);
    if (newline == std::string_view::npos) return {};
    start = newline + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(start, end - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

Error::Error(ErrorKind kind, std::string message, std::optional<SourceSpan> span,
             std::vector<std::string> backtrace)
    : kind_(kind),
      message_(std::move(message)),
      span_(std::move(span)),
      backtrace_(std::move(backtrace)),
      summary_(Summarize(kind_, message_, span_)) {}

std::string Error::Format(std::string_view source_text) const {
  std::ostringstream out;
  out << summary_;
  if (span_ && span_->line > 0 && !source_text.empty()) {
    std::string_view line = LineOf(source_text, span_->line);
    if (!line.empty() || span_->column <= 1) {
      out << "\n" << line << "\n";
      // Tabs in the source are echoed in the marker line so the caret lines up.
      int column = std::max(span_->column, 1);
      for (int index = 0; index + 1 < column && index < static_cast<int>(line.size()); ++index) {
        out << (line[index] == '\t' ? '\t' : ' ');
      }
      out << '^';
      if (span_->end_line == span_->line && span_->end_column > column + 1) {
        out << std::string(span_->end_column - column - 1, '~');
      }
    }
  }
  for (const std::string& frame : backtrace_) out << "\n  at " << frame;
  return out.str();
}

void ThrowInternalError(const char* condition, const char* file, int line,
                        const std::string& detail) {
  std::string message = detail + " (check '" + condition + "' failed at " + file + ":" +
                        std::to_string(line) + "; this is a bug in relay-vm)";
  throw Error(ErrorKind::kInternal, std::move(message));
}

}  // namespace relay
