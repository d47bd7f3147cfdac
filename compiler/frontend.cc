#include "compiler/frontend.h"

#include <memory>
#include <string_view>

#include <unordered_set>

#include "compiler/ir/expr_functor.h"
#include "compiler/parser/parser.h"
#include "compiler/passes/gradient.h"
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

namespace {

// A module with `module`'s source and type definitions and the functions
// `keep` accepts, in order.
ir::Module SubModule(const ir::Module& module,
                     const std::function<bool(const ir::GlobalFunction&)>& keep) {
  ir::Module result;
  result.set_source(module.source_name(),
                    std::make_shared<const std::string>(module.source_text()));
  for (const ir::TypeDefinition& definition : module.type_definitions()) {
    result.AddTypeDefinition(definition);
  }
  for (const ir::GlobalFunction& function : module.functions()) {
    if (keep(function)) result.AddFunction(function.name, function.function);
  }
  return result;
}

// Type-checks a program that calls gradients it does not define (@f_grad
// for its own @f): first the functions that do not need them, then each
// gradient derived from those, then the functions that call them.
ir::Module CheckWithGradients(const ir::Module& module, Diagnostics& diagnostics,
                              const ir::Module& prelude) {
  std::unordered_set<const ir::ExprNode*> waiting;  // requested, then their callers
  for (const ir::GlobalVar& requested : module.gradient_requests()) waiting.insert(requested.get());
  for (bool grew = true; grew;) {
    grew = false;
    for (const ir::GlobalFunction& function : module.functions()) {
      if (waiting.count(function.name.get())) continue;
      bool calls_waiting = false;
      ir::PostOrderVisit(function.function, [&](const ir::Expr& expr) {
        if (waiting.count(expr.get())) calls_waiting = true;
      });
      if (calls_waiting) grew = waiting.insert(function.name.get()).second || grew;
    }
  }
  auto ready = [&](const ir::GlobalFunction& function) {
    return !waiting.count(function.name.get());
  };
  ir::Module checked = SubModule(module, ready);
  for (const ir::GlobalVar& requested : module.gradient_requests()) {
    std::string base = requested->name.substr(0, requested->name.size() - 5);  // "_grad"
    if (checked.FindFunction(base) == nullptr) {
      diagnostics.Report(
          ErrorKind::kType, requested->span(),
          "@" + requested->name + " cannot be derived: @" + base + " itself needs it");
    }
  }
  if (diagnostics.has_errors()) return module;
  if (!typing::InferTypes(checked, diagnostics, &prelude)) return module;
  for (const ir::GlobalVar& requested : module.gradient_requests()) {
    std::string base = requested->name.substr(0, requested->name.size() - 5);
    try {
      checked = passes::AddGradient(checked, &prelude, base, requested);
    } catch (const Error& error) {
      ir::Span span = requested->span();
      if (error.span() && error.span()->line > 0) {
        span = {error.span()->line, error.span()->column, error.span()->end_line,
                error.span()->end_column};
      }
      diagnostics.Report(error.kind(), span,
                         "cannot derive @" + requested->name + ": " + error.message());
      return module;
    }
  }
  for (const ir::GlobalFunction& function : module.functions()) {
    if (!ready(function)) checked.AddFunction(function.name, function.function);
  }
  typing::InferTypes(checked, diagnostics, &prelude);
  return checked;
}

}  // namespace

ir::Module ParseAndCheck(Diagnostics& diagnostics) {
  const ir::Module& prelude = Prelude();
  ir::Module module = parser::ParseModule(diagnostics, &prelude);
  if (diagnostics.has_errors()) return module;
  if (!module.gradient_requests().empty()) return CheckWithGradients(module, diagnostics, prelude);
  typing::InferTypes(module, diagnostics, &prelude);
  return module;
}

}  // namespace relay::compiler
