#include "compiler/ir/expr_functor.h"

#include <unordered_set>

namespace relay::ir {

std::vector<Expr> ExprChildren(const Expr& expr) {
  switch (expr->kind()) {
    case NodeKind::kTuple:
      return As<TupleNode>(expr)->fields;
    case NodeKind::kTupleGetItem:
      return {As<TupleGetItemNode>(expr)->tuple};
    case NodeKind::kCall: {
      const auto* call = As<CallNode>(expr);
      std::vector<Expr> children{call->callee};
      children.insert(children.end(), call->args.begin(), call->args.end());
      return children;
    }
    case NodeKind::kFunction:
      return {As<FunctionNode>(expr)->body};
    case NodeKind::kLet:
      return {As<LetNode>(expr)->value, As<LetNode>(expr)->body};
    case NodeKind::kIf: {
      const auto* branch = As<IfNode>(expr);
      return {branch->condition, branch->then_branch, branch->else_branch};
    }
    case NodeKind::kMatch: {
      const auto* match = As<MatchNode>(expr);
      std::vector<Expr> children{match->data};
      for (const Clause& clause : match->clauses) children.push_back(clause.body);
      return children;
    }
    case NodeKind::kRefCreate:
      return {As<RefCreateNode>(expr)->value};
    case NodeKind::kRefRead:
      return {As<RefReadNode>(expr)->ref};
    case NodeKind::kRefWrite:
      return {As<RefWriteNode>(expr)->ref, As<RefWriteNode>(expr)->value};
    default:
      return {};
  }
}

bool IsAtomic(const ExprNode& expr) {
  switch (expr.kind()) {
    case NodeKind::kVar:
    case NodeKind::kGlobalVar:
    case NodeKind::kConstant:
    case NodeKind::kOp:
    case NodeKind::kConstructor:
      return true;
    default:
      return false;
  }
}

Expr WithChildren(const Expr& expr, const std::vector<Expr>& children) {
  std::vector<Expr> old_children = ExprChildren(expr);
  RELAY_CHECK(children.size() == old_children.size(),
              "WithChildren given the wrong number of children");
  if (children == old_children) return expr;
  const Span& span = expr->span();
  switch (expr->kind()) {
    case NodeKind::kTuple:
      return Make<TupleNode>(children, span);
    case NodeKind::kTupleGetItem:
      return Make<TupleGetItemNode>(children[0], As<TupleGetItemNode>(expr)->index, span);
    case NodeKind::kCall: {
      const auto* call = As<CallNode>(expr);
      return Make<CallNode>(children[0], std::vector<Expr>(children.begin() + 1, children.end()),
                            call->attrs, call->type_args, span);
    }
    case NodeKind::kFunction: {
      const auto* function = As<FunctionNode>(expr);
      return Make<FunctionNode>(function->params, children[0], function->ret_type,
                                function->type_params, function->attrs, span);
    }
    case NodeKind::kLet:
      return Make<LetNode>(As<LetNode>(expr)->var, children[0], children[1], span);
    case NodeKind::kIf:
      return Make<IfNode>(children[0], children[1], children[2], span);
    case NodeKind::kMatch: {
      const auto* match = As<MatchNode>(expr);
      std::vector<Clause> clauses;
      for (size_t index = 0; index < match->clauses.size(); ++index) {
        clauses.push_back({match->clauses[index].pattern, children[index + 1]});
      }
      return Make<MatchNode>(children[0], std::move(clauses), match->complete, span);
    }
    case NodeKind::kRefCreate:
      return Make<RefCreateNode>(children[0], span);
    case NodeKind::kRefRead:
      return Make<RefReadNode>(children[0], span);
    case NodeKind::kRefWrite:
      return Make<RefWriteNode>(children[0], children[1], span);
    default:
      RELAY_UNREACHABLE("WithChildren of a leaf given children");
  }
}

void PostOrderVisit(const Expr& root, const std::function<void(const Expr&)>& visit) {
  std::unordered_set<const ExprNode*> visited;
  // (node, whether its children have been pushed)
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto& [expr, expanded] = stack.back();
    if (expanded) {
      Expr done = std::move(expr);
      stack.pop_back();
      visit(done);
      continue;
    }
    if (!visited.insert(expr.get()).second) {
      stack.pop_back();
      continue;
    }
    expanded = true;
    std::vector<Expr> children = ExprChildren(expr);
    for (size_t index = children.size(); index-- > 0;) {
      if (!visited.count(children[index].get())) stack.emplace_back(children[index], false);
    }
  }
}

Expr ExprMutator::Mutate(const Expr& root) {
  PostOrderVisit(root, [&](const Expr& expr) {
    std::vector<Expr> children = ExprChildren(expr);
    for (Expr& child : children) child = memo_.at(child.get());
    memo_[expr.get()] = Rewrite(expr, WithChildren(expr, children));
  });
  return memo_.at(root.get());
}

}  // namespace relay::ir
