// Generic traversal and rewriting of expressions, without recursion.
//
// Programs can be arbitrarily deep (100,000 chained graph bindings are one
// expression 100,000 levels deep), so every walk here keeps its own stack on
// the heap. Each distinct node is visited once, so shared subexpressions
// (DAGs) cost linear time, and rewriting keeps them shared.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr.h"

namespace relay::ir {

// The sub-expressions of `expr` in evaluation order. Binders (a let's
// variable, a function's parameters, pattern variables) are not children.
// Call: callee, then arguments. Function: body. Let: value, body. If:
// condition, then, else. Match: data, then each clause's body.
std::vector<Expr> ExprChildren(const Expr& expr);

// Variables, globals, constants, operators and constructors: the
// expressions with no parts to evaluate (A-normal form's operands, what the
// printer never binds to a graph variable).
bool IsAtomic(const ExprNode& expr);

// `expr` with its children replaced by `children` (in ExprChildren order);
// `expr` itself when every child is the same node.
Expr WithChildren(const Expr& expr, const std::vector<Expr>& children);

// Calls `visit` once for each distinct expression under `root` (root
// included), children before parents.
void PostOrderVisit(const Expr& root, const std::function<void(const Expr&)>& visit);

// Bottom-up rewriting. Mutate() rebuilds each distinct node once, after its
// children, and hands both the original and the rebuilt node to Rewrite().
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  Expr Mutate(const Expr& root);

 protected:
  // `rebuilt` is `original` with mutated children (the very same node when
  // no child changed). Returns what replaces `original` everywhere.
  virtual Expr Rewrite(const Expr& original, const Expr& rebuilt) {
    (void)original;
    return rebuilt;
  }

 private:
  std::unordered_map<const ExprNode*, Expr> memo_;
};

}  // namespace relay::ir
