// A Relay module: global functions and algebraic data type definitions, in
// definition order, with the source they came from (for diagnostics).
//
// Not thread-safe while being built; read-only use from many threads is fine.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr.h"

namespace relay::ir {

// `type List[A] { Cons(A, List[A]), Nil }`
struct TypeDefinition {
  GlobalTypeVar name;
  std::vector<TypeVar> type_params;
  std::vector<Constructor> constructors;
  Span span;
};

struct GlobalFunction {
  GlobalVar name;
  Function function;
};

class Module {
 public:
  // Adds a function, replacing an existing one of the same name in place.
  void AddFunction(GlobalVar name, Function function);
  // Adds a type definition, replacing an existing one of the same name.
  void AddTypeDefinition(TypeDefinition definition);

  const std::vector<GlobalFunction>& functions() const { return functions_; }
  const std::vector<TypeDefinition>& type_definitions() const { return types_; }

  // Lookups by name (without sigils); null when absent.
  const GlobalFunction* FindFunction(std::string_view name) const;
  const TypeDefinition* FindTypeDefinition(std::string_view name) const;
  Constructor FindConstructor(std::string_view name) const;

  // Globals the program calls without defining them, for the front end to
  // derive: @f_grad, the gradient of the program's own @f
  // (compiler/passes/gradient.h). The parser records them; once derived
  // they are ordinary functions of the module.
  const std::vector<GlobalVar>& gradient_requests() const { return gradient_requests_; }
  void AddGradientRequest(GlobalVar name) { gradient_requests_.push_back(std::move(name)); }
  void ClearGradientRequests() { gradient_requests_.clear(); }

  // Where the module's text came from, for diagnostics.
  const std::string& source_name() const { return source_name_; }
  const std::string& source_text() const { return *source_text_; }
  void set_source(std::string name, std::shared_ptr<const std::string> text) {
    source_name_ = std::move(name);
    source_text_ = std::move(text);
  }

 private:
  std::vector<GlobalFunction> functions_;
  std::vector<TypeDefinition> types_;
  std::unordered_map<std::string, size_t> function_index_;
  std::unordered_map<std::string, size_t> type_index_;
  std::unordered_map<std::string, Constructor> constructors_;
  std::vector<GlobalVar> gradient_requests_;
  std::string source_name_;
  std::shared_ptr<const std::string> source_text_ = std::make_shared<const std::string>();
};

}  // namespace relay::ir
