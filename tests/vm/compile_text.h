// Compiling a Relay program given as text (without its version header) to
// an executable, for VM tests that write their programs inline.
#pragma once

#include <memory>
#include <string>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/error.h"
#include "vm/bytecode/bytecode.h"

namespace relay::testing {

// `body` parsed, type-checked and compiled as the file `file_name` (and
// partitioned for `codegens`, if any); its errors, if any, are thrown as one
// kInternal error (the test's program is wrong).
inline std::shared_ptr<const vm::Executable> CompileText(const std::string& file_name,
                                                         const std::string& body,
                                                         passes::ExternalCodegens codegens = {}) {
  std::string text = "#[version = \"0.0.5\"]\n" + body;
  Diagnostics diagnostics(file_name, std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kInternal, diagnostics.FormatAll());
  return std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude(), codegens));
}

}  // namespace relay::testing
