#include "compiler/evaluator/program_tables.h"

#include <utility>

#include "compiler/ir/expr_functor.h"

namespace relay::evaluator {
namespace {

using ir::As;
using ir::NodeKind;

// Adds the variables bound by `pattern` to `binders`, without recursion.
void CollectPatternBinders(const ir::Pattern& pattern,
                           std::unordered_set<const ir::VarNode*>& binders) {
  std::vector<const ir::PatternNode*> pending = {pattern.get()};
  while (!pending.empty()) {
    const ir::PatternNode* current = pending.back();
    pending.pop_back();
    if (const auto* variable = As<ir::PatternVarNode>(current)) {
      binders.insert(variable->var.get());
    } else if (const auto* constructor = As<ir::PatternConstructorNode>(current)) {
      for (const ir::Pattern& field : constructor->patterns) pending.push_back(field.get());
    } else if (const auto* tuple = As<ir::PatternTupleNode>(current)) {
      for (const ir::Pattern& field : tuple->patterns) pending.push_back(field.get());
    }
  }
}

// The variables `function` uses but does not bind (its parameters, lets,
// pattern variables and those of nested literals are bound), in order of
// first use. Variables are nodes, each bound at one place, so "used and
// never bound inside" is exactly "free".
std::vector<const ir::VarNode*> FreeVariables(const ir::Function& function) {
  std::unordered_set<const ir::VarNode*> binders;
  std::vector<const ir::VarNode*> uses;
  std::unordered_set<const ir::VarNode*> seen;
  ir::PostOrderVisit(function, [&](const ir::Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kVar: {
        const auto* variable = As<ir::VarNode>(expr);
        if (seen.insert(variable).second) uses.push_back(variable);
        break;
      }
      case NodeKind::kFunction:
        for (const ir::Var& parameter : As<ir::FunctionNode>(expr)->params) {
          binders.insert(parameter.get());
        }
        break;
      case NodeKind::kLet:
        binders.insert(As<ir::LetNode>(expr)->var.get());
        break;
      case NodeKind::kMatch:
        for (const ir::Clause& clause : As<ir::MatchNode>(expr)->clauses) {
          CollectPatternBinders(clause.pattern, binders);
        }
        break;
      default:
        break;
    }
  });
  std::vector<const ir::VarNode*> free;
  for (const ir::VarNode* variable : uses) {
    if (binders.count(variable) == 0) free.push_back(variable);
  }
  return free;
}

std::string LocationName(const ir::Span& span) {
  return std::to_string(span.line) + ":" + std::to_string(span.column);
}

}  // namespace

ProgramTables::ProgramTables(const ir::Module& module, const ir::Module* prelude) {
  if (prelude == &module) prelude = nullptr;
  prelude_ = prelude;
  AddTypeDefinitions(module);
  if (prelude != nullptr) AddTypeDefinitions(*prelude);
  AddGlobals(module);
  const size_t prelude_first_global = functions_.size();
  if (prelude != nullptr) AddGlobals(*prelude);
  AddLiterals(module, 0);
  if (prelude != nullptr) AddLiterals(*prelude, prelude_first_global);
  first_constructor_function_ = static_cast<int32_t>(functions_.size());
  // One entry per constructor, in tag order.
  std::vector<const ir::ConstructorNode*> by_tag(constructor_names_.size(), nullptr);
  for (const auto& [constructor, tag] : constructor_tags_) by_tag[tag] = constructor;
  for (size_t tag = 0; tag < by_tag.size(); ++tag) {
    FunctionEntry entry;
    entry.constructor = by_tag[tag];
    entry.constructor_tag = static_cast<int32_t>(tag);
    entry.name = constructor_names_[tag];
    functions_.push_back(std::move(entry));
  }
}

void ProgramTables::AddTypeDefinitions(const ir::Module& module) {
  for (const ir::TypeDefinition& definition : module.type_definitions()) {
    for (const ir::Constructor& constructor : definition.constructors) {
      const auto tag = static_cast<int32_t>(constructor_names_.size());
      constructor_names_.push_back(constructor->name);
      constructor_tags_.emplace(constructor.get(), tag);
    }
  }
}

void ProgramTables::AddGlobals(const ir::Module& module) {
  auto& names = globals_[&module];
  for (const ir::GlobalFunction& global : module.functions()) {
    const auto index = static_cast<int32_t>(functions_.size());
    FunctionEntry entry;
    entry.function = global.function.get();
    entry.home = &module;
    entry.name = "@" + global.name->name;
    functions_.push_back(std::move(entry));
    names[global.name->name] = index;
    function_indices_.emplace(global.function.get(), index);
  }
}

void ProgramTables::AddLiterals(const ir::Module& module, size_t first_global) {
  std::unordered_map<const ir::ExprNode*, int32_t> parent_counts;
  for (size_t global = 0; global < module.functions().size(); ++global) {
    const FunctionEntry& owner = functions_[first_global + global];
    const ir::Function& root = module.functions()[global].function;
    std::vector<ir::Function> literals;
    std::unordered_map<const ir::FunctionNode*, const ir::VarNode*> let_bound;
    ir::PostOrderVisit(root, [&](const ir::Expr& expr) {
      for (const ir::Expr& child : ir::ExprChildren(expr)) ++parent_counts[child.get()];
      if (const auto* function = As<ir::FunctionNode>(expr)) {
        if (function != root.get()) literals.push_back(ir::Share(function));
      } else if (const auto* let = As<ir::LetNode>(expr)) {
        if (const auto* value = As<ir::FunctionNode>(let->value)) {
          let_bound.emplace(value, let->var.get());
        }
      }
    });
    const std::string owner_name = owner.name;
    for (const ir::Function& literal : literals) {
      if (function_indices_.count(literal.get()) != 0) continue;
      FunctionEntry entry;
      entry.function = literal.get();
      entry.home = &module;
      auto bound = let_bound.find(literal.get());
      const ir::VarNode* self = bound == let_bound.end() ? nullptr : bound->second;
      for (const ir::VarNode* variable : FreeVariables(literal)) {
        if (variable == self) {
          entry.self = self;
        } else {
          entry.captured.push_back(variable);
        }
      }
      entry.name =
          owner_name + "." +
          (self != nullptr ? "%" + self->name_hint : "fn:" + LocationName(literal->span()));
      function_indices_.emplace(literal.get(), static_cast<int32_t>(functions_.size()));
      functions_.push_back(std::move(entry));
    }
  }
  for (const auto& [expr, count] : parent_counts) {
    if (count < 2) continue;
    // Leaves and literals are cheap and pure: evaluating them again is the same.
    switch (expr->kind()) {
      case NodeKind::kVar:
      case NodeKind::kGlobalVar:
      case NodeKind::kConstant:
      case NodeKind::kOp:
      case NodeKind::kConstructor:
      case NodeKind::kFunction:
        break;
      default:
        shared_.insert(expr);
    }
  }
}

int32_t ProgramTables::ConstructorTag(const ir::ConstructorNode* constructor) const {
  auto found = constructor_tags_.find(constructor);
  return found == constructor_tags_.end() ? -1 : found->second;
}

int32_t ProgramTables::FunctionIndex(const ir::FunctionNode* function) const {
  auto found = function_indices_.find(function);
  return found == function_indices_.end() ? -1 : found->second;
}

int32_t ProgramTables::GlobalIndex(const ir::Module* home, const std::string& name) const {
  for (const ir::Module* module : {home, prelude_}) {
    if (module == nullptr) continue;
    auto names = globals_.find(module);
    if (names == globals_.end()) continue;
    auto found = names->second.find(name);
    if (found != names->second.end()) return found->second;
  }
  return -1;
}

}  // namespace relay::evaluator
