#include "compiler/codegen/use_counts.h"

#include "compiler/ir/expr_functor.h"

namespace relay::codegen {

using namespace relay::ir;

UseCounts::UseCounts(const FunctionNode& function) {
  Visit(function.body, 1);
}

// `weight` is what a reference from this node's children counts: 2 once
// inside a nested function. A node shared by several parents is visited
// once, but each parent's reference is counted.
void UseCounts::Visit(const Expr& root, int weight) {
  Expr expr = root;
  // Let chains in a loop: they may be very long.
  while (true) {
    if (visited_[expr.get()]) return;
    visited_[expr.get()] = true;
    const auto* let = As<LetNode>(expr);
    if (let == nullptr) break;
    Count(let->value, weight);
    Visit(let->value, weight);
    Count(let->body, weight);
    expr = let->body;
  }
  const int inner = As<FunctionNode>(expr) != nullptr ? 2 : weight;
  for (const Expr& child : ExprChildren(expr)) {
    Count(child, inner);
    Visit(child, inner);
  }
}

}  // namespace relay::codegen
