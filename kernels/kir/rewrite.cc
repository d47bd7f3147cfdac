#include "kernels/kir/rewrite.h"

namespace relay::kernels::kir {

namespace {

void CollectReductions(const Expr& expr, std::vector<const ReduceNode*>& found) {
  if (const auto* reduce = As<ReduceNode>(expr)) found.push_back(reduce);
  for (const Expr& operand : Operands(expr)) CollectReductions(operand, found);
}

// Adds to `free` the variables of `expr` not in `bound`, which holds the
// axes of the reductions enclosing `expr` within the expression asked about.
void CollectFreeVariables(const Expr& expr, std::unordered_set<const VarNode*>& bound,
                          std::unordered_set<const VarNode*>& free) {
  if (const auto* var = As<VarNode>(expr)) {
    if (!bound.contains(var)) free.insert(var);
    return;
  }
  std::vector<const VarNode*> binds;
  if (const auto* reduction = As<ReduceNode>(expr)) {
    for (const Var& axis : reduction->axes) {
      if (bound.insert(axis.get()).second) binds.push_back(axis.get());
    }
  }
  for (const Expr& operand : Operands(expr)) CollectFreeVariables(operand, bound, free);
  for (const VarNode* var : binds) bound.erase(var);
}

}  // namespace

std::unordered_set<const VarNode*> FreeVariables(const Expr& expr) {
  std::unordered_set<const VarNode*> bound, free;
  CollectFreeVariables(expr, bound, free);
  return free;
}

std::vector<Expr> Operands(const Expr& expr) {
  switch (expr->node_kind()) {
    case NodeKind::kLoad:
      return {As<LoadNode>(expr)->index};
    case NodeKind::kBinary:
      return {As<BinaryNode>(expr)->a, As<BinaryNode>(expr)->b};
    case NodeKind::kUnary:
      return {As<UnaryNode>(expr)->a};
    case NodeKind::kSelect: {
      const auto* select = As<SelectNode>(expr);
      return {select->condition, select->if_true, select->if_false};
    }
    case NodeKind::kCast:
      return {As<CastNode>(expr)->value};
    case NodeKind::kReduce: {
      const auto* reduce = As<ReduceNode>(expr);
      std::vector<Expr> operands = reduce->extents;
      operands.push_back(reduce->init);
      operands.push_back(reduce->body);
      return operands;
    }
    default:
      return {};
  }
}

bool MentionsAny(const Expr& expr, const std::unordered_set<const VarNode*>& vars) {
  if (const auto* var = As<VarNode>(expr)) return vars.count(var) != 0;
  for (const Expr& operand : Operands(expr)) {
    if (MentionsAny(operand, vars)) return true;
  }
  return false;
}

std::vector<const ReduceNode*> FindReductions(const Expr& expr) {
  std::vector<const ReduceNode*> found;
  CollectReductions(expr, found);
  return found;
}

bool SameExpr(const Expr& a, const Expr& b) {
  if (a.get() == b.get()) return true;
  if (a->node_kind() != b->node_kind() || a->dtype != b->dtype) return false;
  switch (a->node_kind()) {
    case NodeKind::kIntImm:
      return As<IntImmNode>(a)->value == As<IntImmNode>(b)->value;
    case NodeKind::kFloatImm: {
      const double x = As<FloatImmNode>(a)->value, y = As<FloatImmNode>(b)->value;
      return x == y || (x != x && y != y);  // NaN constants alike
    }
    case NodeKind::kLoad:
      if (As<LoadNode>(a)->buffer.get() != As<LoadNode>(b)->buffer.get()) return false;
      break;
    case NodeKind::kBinary:
      if (As<BinaryNode>(a)->op != As<BinaryNode>(b)->op) return false;
      break;
    case NodeKind::kUnary:
      if (As<UnaryNode>(a)->op != As<UnaryNode>(b)->op) return false;
      break;
    case NodeKind::kSelect:
    case NodeKind::kCast:
      break;
    default:
      return false;  // variables and reductions: only themselves
  }
  const std::vector<Expr> x = Operands(a), y = Operands(b);
  for (size_t index = 0; index < x.size(); ++index) {
    if (!SameExpr(x[index], y[index])) return false;
  }
  return true;
}

const ExprNode* FindSame(const Expr& expr, const Expr& pattern) {
  if (SameExpr(expr, pattern)) return expr.get();
  for (const Expr& operand : Operands(expr)) {
    if (const ExprNode* found = FindSame(operand, pattern)) return found;
  }
  return nullptr;
}

Expr Substitute(const Expr& expr, const Replacements& replacements) {
  if (auto found = replacements.find(expr.get()); found != replacements.end()) return found->second;
  switch (expr->node_kind()) {
    case NodeKind::kLoad: {
      const auto* load = As<LoadNode>(expr);
      return Load(load->buffer, Substitute(load->index, replacements));
    }
    case NodeKind::kBinary: {
      const auto* binary = As<BinaryNode>(expr);
      return Binary(binary->op, Substitute(binary->a, replacements),
                    Substitute(binary->b, replacements));
    }
    case NodeKind::kUnary: {
      const auto* unary = As<UnaryNode>(expr);
      return Unary(unary->op, Substitute(unary->a, replacements));
    }
    case NodeKind::kSelect: {
      const auto* select = As<SelectNode>(expr);
      return Select(Substitute(select->condition, replacements),
                    Substitute(select->if_true, replacements),
                    Substitute(select->if_false, replacements));
    }
    case NodeKind::kCast: {
      const auto* cast = As<CastNode>(expr);
      return Cast(cast->dtype, Substitute(cast->value, replacements));
    }
    case NodeKind::kReduce: {
      const auto* reduce = As<ReduceNode>(expr);
      std::vector<Expr> extents;
      for (const Expr& extent : reduce->extents)
        extents.push_back(Substitute(extent, replacements));
      return Reduce(reduce->op, reduce->axes, std::move(extents),
                    Substitute(reduce->init, replacements), Substitute(reduce->body, replacements),
                    reduce->select_last);
    }
    default:
      return expr;  // constants and unreplaced variables
  }
}

void CollectLoads(const Expr& expr, const ExprNode* skip, std::vector<Expr>& loads) {
  if (expr.get() == skip) return;
  if (expr->node_kind() == NodeKind::kLoad) loads.push_back(expr);
  for (const Expr& operand : Operands(expr)) CollectLoads(operand, skip, loads);
}

std::optional<int64_t> StrideAlong(const Expr& operand, const Var& along,
                                   const std::vector<Var>& others) {
  const auto* load = As<LoadNode>(operand);
  if (load == nullptr) return std::nullopt;
  Replacements at;
  for (const Var& var : others) at[var.get()] = Int(0);
  at[along.get()] = Int(0);
  const Expr first = Substitute(load->index, at);
  at[along.get()] = Int(1);
  const Expr second = Substitute(load->index, at);
  const auto* first_value = As<IntImmNode>(first);
  const auto* second_value = As<IntImmNode>(second);
  if (first_value == nullptr || second_value == nullptr) return std::nullopt;
  return second_value->value - first_value->value;
}

}  // namespace relay::kernels::kir
