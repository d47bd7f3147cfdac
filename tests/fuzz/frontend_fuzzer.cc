// libFuzzer target over the front end: lexer, parser, type inference,
// diagnostics formatting and the printer.
//
// Any input may be rejected, but only through reported diagnostics: a crash,
// a hang, a sanitizer report or an internal error is a bug. Accepted programs
// must also print to text that parses back to a structurally equal module.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/frontend.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/parser/printer.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "frontend_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto text = std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
  try {
    relay::Diagnostics diagnostics("fuzz.relay", text);
    relay::ir::Module module = relay::compiler::ParseAndCheck(diagnostics);
    (void)diagnostics.FormatAll();
    if (diagnostics.has_errors()) return 0;
    std::string printed = relay::parser::PrintModule(module);
    relay::Diagnostics reparse_diagnostics("printed.relay",
                                           std::make_shared<const std::string>(printed));
    relay::ir::Module reparsed = relay::compiler::ParseAndCheck(reparse_diagnostics);
    if (reparse_diagnostics.has_errors())
      Fail("printed text does not check", printed + "\n" + reparse_diagnostics.FormatAll());
    if (!relay::ir::StructurallyEqual(module, reparsed))
      Fail("printed text parses to a different module", printed);
  } catch (const relay::Error& error) {
    if (error.kind() == relay::ErrorKind::kInternal) Fail("internal error", error.what());
    // Other errors thrown (not reported) are legitimate refusals, e.g. a
    // program the printer cannot express.
  }
  return 0;
}
