// How often each expression node (and variable) of a function is used: the
// number of places that refer to it, where a reference from inside a nested
// function counts as two (the nested function may run any number of times).
// Fusion uses it: only a value used once may be computed inside its user's
// kernel.
#pragma once

#include <unordered_map>

#include "compiler/ir/expr.h"

namespace relay::codegen {

class UseCounts {
 public:
  explicit UseCounts(const ir::FunctionNode& function);
  int Of(const ir::ExprNode* expr) const {
    auto found = counts_.find(expr);
    return found == counts_.end() ? 0 : found->second;
  }

 private:
  void Visit(const ir::Expr& root, int weight);
  void Count(const ir::Expr& child, int weight) { counts_[child.get()] += weight; }

  std::unordered_map<const ir::ExprNode*, int> counts_;
  std::unordered_map<const ir::ExprNode*, bool> visited_;
};

}  // namespace relay::codegen
