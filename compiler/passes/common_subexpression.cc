#include "compiler/passes/common_subexpression.h"

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

class SubexpressionEliminator {
 public:
  Expr Rewrite(const Expr& root) {
    Bindings kept;
    Expr expr = root;
    bool changed = false;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value = RewriteOne(let->value);
      changed = changed || value.get() != let->value.get();
      std::string key = KeyOf(value);
      if (!key.empty()) {
        auto [known, inserted] = available_.try_emplace(key, let->var);
        if (!inserted) {
          replacements_[let->var.get()] = known->second;
          changed = true;
          expr = let->body;
          continue;
        }
        added_.push_back(std::move(key));
      }
      kept.emplace_back(let->var, std::move(value));
      expr = let->body;
    }
    Expr body = RewriteOne(expr);
    if (!changed && body.get() == expr.get()) return root;
    return WrapInLets(kept, std::move(body));
  }

 private:
  // A nested scope: what it makes available is forgotten when it ends.
  Expr RewriteScope(const Expr& expr) {
    const size_t mark = added_.size();
    Expr result = Rewrite(expr);
    while (added_.size() > mark) {
      available_.erase(added_.back());
      added_.pop_back();
    }
    return result;
  }

  Expr RewriteOne(const Expr& expr) {
    if (const auto* var = As<VarNode>(expr)) {
      auto found = replacements_.find(var);
      return found == replacements_.end() ? expr : Expr(found->second);
    }
    if (expr->kind() == NodeKind::kLet) return RewriteScope(expr);  // its variables end with it
    if (const auto* function = As<FunctionNode>(expr)) {
      if (IsPrimitive(*function)) return expr;
      return WithBody(Function(function), RewriteScope(function->body));
    }
    std::vector<Expr> children = ExprChildren(expr);
    for (size_t index = 0; index < children.size(); ++index) {
      // An if's branches and a match's clauses are scopes of their own.
      const bool scope =
          (expr->kind() == NodeKind::kIf || expr->kind() == NodeKind::kMatch) && index > 0;
      children[index] = scope ? RewriteScope(children[index]) : RewriteOne(children[index]);
    }
    return WithTypedChildren(expr, children);
  }

  // A text that is equal for values computing the same thing; empty for
  // values that may not be shared (effects, allocations of functions).
  static std::string KeyOf(const Expr& value) {
    std::string key;
    std::vector<Expr> operands;
    if (const auto* call = As<CallNode>(value)) {
      const auto* op = As<OpNode>(call->callee);
      if (op == nullptr) return {};
      key = "call " + op->name() + "(";
      for (const auto& [name, attr] : call->attrs) key += name + "=" + attr.ToString() + ",";
      operands = call->args;
    } else if (const auto* tuple = As<TupleNode>(value)) {
      key = "tuple(";
      operands = tuple->fields;
    } else if (const auto* item = As<TupleGetItemNode>(value)) {
      key = "field " + std::to_string(item->index) + "(";
      operands = {item->tuple};
    } else {
      return {};
    }
    for (const Expr& operand : operands) {
      std::string atom = AtomKey(operand);
      if (atom.empty()) return {};
      key += atom + ",";
    }
    return key + ")";
  }

  static std::string AtomKey(const Expr& operand) {
    char pointer[32];
    if (operand->kind() == NodeKind::kVar) {
      std::snprintf(pointer, sizeof pointer, "%%%p", static_cast<const void*>(operand.get()));
      return pointer;
    }
    if (const auto* global = As<GlobalVarNode>(operand)) return "@" + global->name;
    if (const auto* constant = As<ConstantNode>(operand)) {
      // Small constants by content (two literals `1f` are the same value).
      const Tensor& tensor = *constant->value;
      if (tensor.byte_size() > 64) {
        std::snprintf(pointer, sizeof pointer, "#%p", static_cast<const void*>(&tensor));
        return pointer;
      }
      std::string key = "#" + std::string(DTypeName(tensor.dtype())) + "[";
      for (int64_t dim : tensor.shape()) key += std::to_string(dim) + ",";
      key += "]";
      const auto* bytes = static_cast<const unsigned char*>(tensor.host_data());
      for (size_t index = 0; index < tensor.byte_size(); ++index) {
        std::snprintf(pointer, sizeof pointer, "%02x", bytes[index]);
        key += pointer;
      }
      return key;
    }
    return {};
  }

  std::unordered_map<std::string, Var> available_;
  std::vector<std::string> added_;  // keys in the order they became available
  std::unordered_map<const VarNode*, Var> replacements_;
};

}  // namespace

Function EliminateCommonSubexpressions(const Function& function) {
  return WithBody(function, SubexpressionEliminator().Rewrite(function->body));
}

}  // namespace relay::passes
