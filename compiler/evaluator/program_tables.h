// The static numbering the reference evaluator gives a module's constructors
// and functions, so that the Constructed tags and Closure function indices of
// its values mean the same thing in every evaluation of the module (and can
// be named when printing).
//
// Constructor tags: the module's type definitions in definition order, each
// definition's constructors in declaration order; then the prelude's type
// definitions the same way (also when the module shadows one of them: the
// prelude's own functions still build the prelude's values).
//
// Function indices: the module's global functions in definition order, then
// the prelude's; then every function literal inside them, in post-order of
// each global's body (globals in the same order); then one entry per
// constructor (a constructor used as a function value), in tag order.
//
// Building the tables walks every body once without recursion; each function
// literal's captured variables are found by one more walk of its own body.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/module.h"

namespace relay::evaluator {

struct FunctionEntry {
  // Exactly one of `function` and `constructor` is set.
  const ir::FunctionNode* function = nullptr;
  const ir::ConstructorNode* constructor = nullptr;
  int32_t constructor_tag = -1;  // with `constructor`
  // The variables a closure of this function captures, in a fixed order
  // (the order of their first use in the body); empty for globals.
  std::vector<const ir::VarNode*> captured;
  // A let-bound function literal that calls itself (`let %f = fn ... %f(...)`)
  // sees its own closure as this variable; null otherwise.
  const ir::VarNode* self = nullptr;
  // The module whose definitions the body's global names refer to.
  const ir::Module* home = nullptr;
  // For printing and backtraces: "@main", "@main.%loop", "@main.fn:4:7",
  // or the constructor's name.
  std::string name;
};

class ProgramTables {
 public:
  // `module` must outlive the tables. `prelude` may be null, or the module
  // itself (the prelude evaluated on its own): then it adds nothing.
  ProgramTables(const ir::Module& module, const ir::Module* prelude);

  const std::vector<FunctionEntry>& functions() const { return functions_; }
  const FunctionEntry& function(int32_t index) const { return functions_[index]; }
  const std::vector<std::string>& constructor_names() const { return constructor_names_; }

  // The tag of `constructor`; -1 when it belongs to neither module.
  int32_t ConstructorTag(const ir::ConstructorNode* constructor) const;
  // The function entry of `constructor` used as a value; -1 when unknown.
  int32_t ConstructorFunction(int32_t tag) const {
    return tag < 0 ? -1 : first_constructor_function_ + tag;
  }
  // The entry of a function literal or global's function node; -1 if unknown.
  int32_t FunctionIndex(const ir::FunctionNode* function) const;
  // The entry of the global `name` as seen from `home` (its own definitions
  // first, then the prelude's); -1 when there is none.
  int32_t GlobalIndex(const ir::Module* home, const std::string& name) const;
  // Whether `expr` has more than one parent in the program (a graph binding
  // used more than once): it is then evaluated once per function activation.
  bool IsShared(const ir::ExprNode* expr) const { return shared_.count(expr) != 0; }

 private:
  void AddTypeDefinitions(const ir::Module& module);
  void AddGlobals(const ir::Module& module);
  void AddLiterals(const ir::Module& module, size_t first_global);

  const ir::Module* prelude_ = nullptr;
  std::vector<FunctionEntry> functions_;
  std::vector<std::string> constructor_names_;
  std::unordered_map<const ir::ConstructorNode*, int32_t> constructor_tags_;
  std::unordered_map<const ir::FunctionNode*, int32_t> function_indices_;
  // Per module: global name to entry index.
  std::unordered_map<const ir::Module*, std::unordered_map<std::string, int32_t>> globals_;
  std::unordered_set<const ir::ExprNode*> shared_;
  int32_t first_constructor_function_ = 0;
};

}  // namespace relay::evaluator
