// relay-vm disasm IN.relay: compiles a program and lists its bytecode, each
// function's registers and instructions with their source lines.
#include <ostream>

#include "api/program.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunDisasmCommand(std::span<const std::string_view> arguments, std::ostream& out,
                     std::ostream& err) {
  if (arguments.size() != 1) {
    err << "relay-vm disasm: expected one file, e.g. 'relay-vm disasm model.relay'\n";
    return kExitUsage;
  }
  std::optional<api::Program> program = api::LoadProgram(std::string(arguments[0]), err);
  if (!program) return kExitFailure;
  out << vm::Disassemble(*program->executable);
  return kExitSuccess;
}

}  // namespace relay::tools
