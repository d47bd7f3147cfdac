// relay-vm debug PROGRAM.relay|PROGRAM.onnx|PROGRAM.rbc [--entry NAME]
//   [--input NAME=FILE.npy | NAME=SCALAR]... [--params P.npz] [--random-inputs]
//
// Reads debugger commands (tools/debugger.h) from standard input, one per
// line, until `quit` or the end of the input. On a terminal it prompts with
// "(rdb) "; otherwise it prints each command's output only, so sessions
// can be scripted. Exits 0 at the end of the input. On a terminal, Ctrl-C
// stops a running program where it is, as a breakpoint would.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/program.h"
#include "relay/error.h"
#include "tools/command_line.h"
#include "tools/debugger.h"
#include "tools/program_inputs.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm debug: " + message);
}

// The text of every file the executable's locations name that can be
// read, and the program's own text (an ONNX model's imported program).
std::map<std::string, std::string> SourcesOf(const std::string& path,
                                             const vm::Executable& executable) {
  std::map<std::string, std::string> sources;
  if (!path.ends_with(".rbc")) sources[path] = *api::ReadProgramSource(path).text;
  for (const vm::Function& function : executable.functions) {
    if (function.source.empty() || sources.count(function.source)) continue;
    std::error_code error;
    if (!std::filesystem::is_regular_file(function.source, error)) continue;
    std::ifstream file(function.source);
    std::stringstream text;
    text << file.rdbuf();
    if (file) sources[function.source] = text.str();
  }
  return sources;
}

}  // namespace

int RunDebugCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err) {
  std::string path;
  InputOptions inputs;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    if (TakeInputOption(arguments, index, inputs, "debug")) continue;
    if (argument.starts_with("-")) UsageError("unknown option '" + std::string(argument) + "'");
    if (!path.empty()) {
      UsageError("expected one program file, got '" + path + "' and '" + std::string(argument) +
                 "'");
    }
    path = std::string(argument);
  }
  if (path.empty()) UsageError("expected a program file, e.g. 'relay-vm debug model.relay'");
  std::optional<api::Program> program = api::LoadProgram(path, err);
  if (!program) return kExitFailure;
  const int32_t entry = program->executable->FindFunction(inputs.entry);
  if (entry < 0 || program->executable->functions[entry].captured_count != 0)
    throw Error(ErrorKind::kUsage, path + " has no function @" + inputs.entry);
  std::vector<Value> arguments_of_entry =
      BindInputs(inputs, program->executable->functions[entry], program->input_aliases);

  Debugger debugger(program->executable, inputs.entry, std::move(arguments_of_entry),
                    SourcesOf(path, *program->executable), out);
  const bool terminal = isatty(STDIN_FILENO) != 0;
  if (terminal) {
    // Ctrl-C stops the running program where it is (Debugger::interrupted).
    struct sigaction action {};
    action.sa_handler = [](int) { Debugger::interrupted = true; };
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
  }
  std::string line;
  while (true) {
    if (terminal) out << "(rdb) " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (!debugger.Execute(line)) break;
    out << std::flush;
  }
  return kExitSuccess;
}

}  // namespace relay::tools
