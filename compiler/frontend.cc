#include "compiler/frontend.h"

#include <memory>
#include <string_view>

#include "compiler/parser/parser.h"
#include "compiler/typing/type_inference.h"

namespace relay::compiler {

extern const std::string_view kPreludeText;

const ir::Module& Prelude() {
  static const ir::Module* prelude = [] {
    Diagnostics diagnostics("prelude.relay", std::make_shared<const std::string>(kPreludeText));
    auto module = std::make_unique<ir::Module>(parser::ParseModule(diagnostics, nullptr));
    if (!diagnostics.has_errors()) typing::InferTypes(*module, diagnostics, nullptr);
    RELAY_CHECK(!diagnostics.has_errors(),
                "the built-in prelude does not check:\n" + diagnostics.FormatAll());
    return module.release();  // lives until the process exits
  }();
  return *prelude;
}

ir::Module ParseAndCheck(Diagnostics& diagnostics) {
  const ir::Module& prelude = Prelude();
  ir::Module module = parser::ParseModule(diagnostics, &prelude);
  if (!diagnostics.has_errors()) typing::InferTypes(module, diagnostics, &prelude);
  return module;
}

}  // namespace relay::compiler
