// relay-vm grad IN.relay [--entry NAME] [-o OUT.relay]: writes the program
// with the reverse-mode gradient of one global added (compiler/passes/
// gradient.h), as Relay text that `run --entry NAME_grad`, `check` and
// `compile` take like any other program.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "api/program.h"
#include "compiler/frontend.h"
#include "compiler/parser/printer.h"
#include "compiler/passes/gradient.h"
#include "relay/error.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm grad: " + message);
}

// Writes `text` to `path` through a temporary file beside it, so a failed
// write leaves what was there.
void WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string temporary = path + ".tmp";
  std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  if (!stream) {
    std::remove(temporary.c_str());
    throw Error(ErrorKind::kLoad, "cannot write " + path);
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(ErrorKind::kLoad, "cannot write " + path + ": " + error.message());
  }
}

}  // namespace

int RunGradCommand(std::span<const std::string_view> arguments, std::ostream& out,
                   std::ostream& err) {
  std::string input, output, entry = "main";
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= arguments.size()) UsageError(std::string(argument) + " needs a value");
      return std::string(arguments[++index]);
    };
    if (argument == "-o" || argument == "--output") {
      output = value();
    } else if (argument == "--entry") {
      entry = value();
      if (entry.starts_with("@")) entry.erase(0, 1);
    } else if (argument.starts_with("-")) {
      UsageError("unknown option '" + std::string(argument) + "'");
    } else if (input.empty()) {
      input = std::string(argument);
    } else {
      UsageError("expected one program, got '" + input + "' and '" + std::string(argument) + "'");
    }
  }
  if (input.empty()) UsageError("expected 'relay-vm grad IN.relay [--entry NAME] [-o OUT.relay]'");
  if (!output.empty()) {
    if (!output.ends_with(".relay"))
      UsageError("the output must end in .relay, got '" + output + "'");
    std::error_code error;
    if (std::filesystem::equivalent(input, output, error)) {
      UsageError("the output '" + output + "' is the input: give another file");
    }
  }
  Diagnostics diagnostics(input, api::ReadProgramSource(input).text);
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return kExitFailure;
  }
  ir::Module differentiated = passes::AddGradient(module, &compiler::Prelude(), entry);
  std::string text = parser::PrintModule(differentiated);
  if (output.empty()) {
    out << text;
  } else {
    WriteFileAtomically(output, text);
  }
  return kExitSuccess;
}

}  // namespace relay::tools
