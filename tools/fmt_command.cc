// relay-vm fmt [--optimized] FILE.relay: prints a program in canonical text
// form. Only syntax is checked, so a program with type errors can still be
// formatted. With --optimized the program is type-checked and printed as
// the IR passes leave it for the code generator (A-normal form, folded
// constants, ...), to see what they did.
#include <ostream>

#include "api/program.h"
#include "compiler/frontend.h"
#include "compiler/parser/parser.h"
#include "compiler/parser/printer.h"
#include "compiler/passes/pipeline.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunFmtCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err) {
  const bool optimized = !arguments.empty() && arguments[0] == "--optimized";
  if (optimized) arguments = arguments.subspan(1);
  if (arguments.size() != 1) {
    err << "relay-vm fmt: expected one file, e.g. 'relay-vm fmt [--optimized] model.relay'\n";
    return kExitUsage;
  }
  std::string path(arguments[0]);
  Diagnostics diagnostics(path, api::ReadProgramSource(path).text);
  ir::Module module = optimized ? compiler::ParseAndCheck(diagnostics)
                                : parser::ParseModule(diagnostics, &compiler::Prelude());
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return kExitFailure;
  }
  if (optimized) {
    parser::PrintOptions options;
    options.tensor_constants_as_meta = true;  // folded constants
    out << parser::PrintModule(passes::OptimizeForVm(module, nullptr).program, options);
    return kExitSuccess;
  }
  out << parser::PrintModule(module);
  return kExitSuccess;
}

}  // namespace relay::tools
