// relay-vm fmt FILE.relay: prints a program in canonical text form. Only
// syntax is checked, so a program with type errors can still be formatted.
#include <ostream>

#include "compiler/frontend.h"
#include "compiler/parser/parser.h"
#include "compiler/parser/printer.h"
#include "tools/command_line.h"
#include "tools/source_file.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunFmtCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err) {
  if (arguments.size() != 1) {
    err << "relay-vm fmt: expected one file, e.g. 'relay-vm fmt model.relay'\n";
    return kExitUsage;
  }
  std::string path(arguments[0]);
  Diagnostics diagnostics(path, ReadSourceFile(path));
  ir::Module module = parser::ParseModule(diagnostics, &compiler::Prelude());
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return kExitFailure;
  }
  out << parser::PrintModule(module);
  return kExitSuccess;
}

}  // namespace relay::tools
