// relay-vm fmt [--optimized [--byoc LIST]] FILE.relay: prints a program in
// canonical text form. Only syntax is checked, so a program with type errors
// can still be formatted. With --optimized the program is type-checked and
// printed as the IR passes leave it for the code generator (A-normal form,
// folded constants, ...), to see what they did; --byoc shows it partitioned
// for those external codegens (functions marked Compiler="NAME").
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "api/program.h"
#include "compiler/frontend.h"
#include "compiler/parser/parser.h"
#include "compiler/parser/printer.h"
#include "compiler/passes/pipeline.h"
#include "kernels/external/external_codegen.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

int RunFmtCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err) {
  const bool optimized = !arguments.empty() && arguments[0] == "--optimized";
  if (optimized) arguments = arguments.subspan(1);
  std::string byoc;
  if (optimized && arguments.size() >= 2 && arguments[0] == "--byoc") {
    byoc = std::string(arguments[1]);
    arguments = arguments.subspan(2);
  }
  if (arguments.size() != 1) {
    err << "relay-vm fmt: expected one file, e.g. 'relay-vm fmt [--optimized [--byoc LIST]] "
           "model.relay'\n";
    return kExitUsage;
  }
  const std::vector<std::shared_ptr<const kernels::external::ExternalCodegen>> codegens =
      kernels::external::ParseCodegenList(byoc);
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
    out << parser::PrintModule(passes::OptimizeForVm(module, nullptr, codegens).program, options);
    return kExitSuccess;
  }
  out << parser::PrintModule(module);
  return kExitSuccess;
}

}  // namespace relay::tools
