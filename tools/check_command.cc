// relay-vm check FILE.relay: type-checks a program and prints the type of
// each of its globals, one per line ("@main: fn (...) -> ...").
#include <ostream>

#include "api/program.h"
#include "compiler/frontend.h"
#include "compiler/ir/type.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunCheckCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err) {
  if (arguments.size() != 1) {
    err << "relay-vm check: expected one file, e.g. 'relay-vm check model.relay'\n";
    return kExitUsage;
  }
  std::string path(arguments[0]);
  Diagnostics diagnostics(path, api::ReadProgramSource(path).text);
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return kExitFailure;
  }
  for (const ir::GlobalFunction& global : module.functions()) {
    out << "@" << global.name->name << ": " << ir::TypeToString(global.name->checked_type())
        << "\n";
  }
  return kExitSuccess;
}

}  // namespace relay::tools
