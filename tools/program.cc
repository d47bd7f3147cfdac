#include "tools/program.h"

#include <ostream>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/passes/bind_params.h"
#include "relay/error.h"
#include "tools/source_file.h"
#include "vm/bytecode/executable_file.h"

namespace relay::tools {

std::optional<Program> CompileProgram(const std::string& path, const BoundParams& params,
                                      std::ostream& err) {
  Diagnostics diagnostics(path, ReadSourceFile(path));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return std::nullopt;
  }
  if (!params.values.empty())
    module = passes::BindParams(module, "main", params.values, params.origin);
  auto executable = std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
  return Program{std::move(executable)};
}

std::optional<Program> LoadProgram(const std::string& path, std::ostream& err) {
  if (path.size() > 4 && path.ends_with(".rbc")) {
    return Program{std::make_shared<const vm::Executable>(vm::ReadExecutableFile(path))};
  }
  return CompileProgram(path, BoundParams{}, err);
}

}  // namespace relay::tools
