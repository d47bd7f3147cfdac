#include "compiler/passes/fuse_operators.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;
using kernels::FusionPattern;

bool IsTupleType(const Type& type) {
  return type && type->kind() == NodeKind::kTupleType;
}

// The operator of a call that may join a fused kernel, or null: tensors in
// and out, a compute definition, an output shape that depends on shapes.
const kernels::OperatorDefinition* FusableOperator(const Expr& expr) {
  const auto* call = As<CallNode>(expr);
  if (call == nullptr) return nullptr;
  const auto* op = As<OpNode>(call->callee);
  if (op == nullptr) return nullptr;
  const kernels::OperatorDefinition& definition = *op->definition;
  if (definition.pattern == FusionPattern::kOpaque || !definition.compute ||
      definition.shape_dependence != kernels::ShapeDependence::kInputShapes ||
      IsTupleType(call->checked_type())) {
    return nullptr;
  }
  for (const Expr& arg : call->args) {
    if (IsTupleType(arg->checked_type())) return nullptr;
  }
  return &definition;
}

bool IsAnchor(FusionPattern pattern) {
  return pattern == FusionPattern::kOutElementwiseFusable || pattern == FusionPattern::kCommReduce;
}
bool IsInjective(FusionPattern pattern) {
  return pattern == FusionPattern::kElementwise || pattern == FusionPattern::kBroadcast ||
         pattern == FusionPattern::kInjective;
}

// A group under construction: its result as a call tree over the operands
// of the calls it absorbed.
struct Group {
  Expr tree;
  FusionPattern root = FusionPattern::kOpaque;
  bool has_anchor = false;
  size_t size = 1;
};

class Fuser {
 public:
  explicit Fuser(const Expr& body) {
    PostOrderVisit(body, [&](const Expr& expr) {
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) ++uses_[var];
      }
    });
  }

  Expr Rewrite(const Expr& root) {
    struct Binding {
      Var var;
      Expr value;
    };
    std::vector<Binding> bindings;
    // The single-use fusable bindings of this scope not absorbed yet; those
    // bound since the last other binding may still be.
    std::unordered_map<const VarNode*, Group> groups;
    std::unordered_map<const VarNode*, Group*> open;
    Expr expr = root;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value = RewriteOne(let->value);
      if (FusableOperator(value)) {
        Group group = Build(value, open, groups);
        if (uses_[let->var.get()] == 1) {
          open[let->var.get()] = &(groups[let->var.get()] = std::move(group));
          bindings.push_back({let->var, Expr()});  // filled in unless absorbed
          expr = let->body;
          continue;
        }
        value = Finish(group, value);
      }
      // Any other binding closes the open groups: moving one past it would
      // keep the group's inputs alive longer (a large tensor, say).
      open.clear();
      bindings.push_back({let->var, std::move(value)});
      expr = let->body;
    }
    Expr body = RewriteOne(expr);
    if (FusableOperator(body)) body = Finish(Build(body, open, groups), body);
    // Groups nobody absorbed are computed where they were bound.
    for (auto binding = bindings.rbegin(); binding != bindings.rend(); ++binding) {
      Expr value = binding->value;
      if (!value) {
        auto group = groups.find(binding->var.get());
        if (group == groups.end()) continue;  // absorbed by its user
        value = Finish(group->second, group->second.tree);
      }
      body = TypedLet(binding->var, value, body);
    }
    return body;
  }

 private:
  Expr RewriteOne(const Expr& expr) {
    if (const auto* function = As<FunctionNode>(expr)) {
      if (IsPrimitive(*function)) return expr;
      return WithBody(Function(function), Rewrite(function->body));
    }
    if (expr->kind() == NodeKind::kLet) return Rewrite(expr);
    std::vector<Expr> children = ExprChildren(expr);
    const bool scopes = expr->kind() == NodeKind::kIf || expr->kind() == NodeKind::kMatch;
    for (size_t index = 0; index < children.size(); ++index) {
      if (scopes && index > 0) children[index] = Rewrite(children[index]);
    }
    return WithTypedChildren(expr, children);
  }

  // The group of `call`, absorbing the open groups of its operands where
  // the patterns allow.
  Group Build(const Expr& call_expr, std::unordered_map<const VarNode*, Group*>& open,
              std::unordered_map<const VarNode*, Group>& groups) {
    const auto* call = As<CallNode>(call_expr);
    const FusionPattern pattern = FusableOperator(call_expr)->pattern;
    Group group;
    group.root = pattern;
    group.has_anchor = IsAnchor(pattern);
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      const auto* var = As<VarNode>(arg);
      auto producer = var ? open.find(var) : open.end();
      bool absorb = false;
      if (producer != open.end() && group.size + producer->second->size <= kMaximumGroup) {
        const Group& inner = *producer->second;
        switch (pattern) {
          case FusionPattern::kElementwise:
          case FusionPattern::kBroadcast:
            absorb = IsInjective(inner.root) || (IsAnchor(inner.root) && !group.has_anchor);
            absorb = absorb && !(inner.has_anchor && group.has_anchor);
            break;
          case FusionPattern::kInjective:
          case FusionPattern::kCommReduce:
            absorb = IsInjective(inner.root) && !(inner.has_anchor && group.has_anchor);
            break;
          default:
            break;
        }
      }
      if (absorb) {
        const Group& inner = *producer->second;
        group.size += inner.size;
        group.has_anchor = group.has_anchor || inner.has_anchor;
        args.push_back(inner.tree);
        open.erase(producer);
        groups.erase(var);
      } else {
        args.push_back(arg);
      }
    }
    group.tree = WithTypedChildren(call_expr, [&] {
      std::vector<Expr> children{call->callee};
      children.insert(children.end(), args.begin(), args.end());
      return children;
    }());
    return group;
  }

  // A group of one operator stays a plain call; a larger one becomes a
  // call of a primitive function whose parameters are the group's
  // distinct operands.
  static Expr Finish(const Group& group, const Expr& call) {
    if (group.size == 1) return call;
    std::vector<Expr> operands;
    std::unordered_map<const ExprNode*, Var> params;
    std::vector<Var> param_list;
    // Rebuild the tree over parameters, in evaluation order.
    std::unordered_map<const ExprNode*, Expr> rebuilt;
    PostOrderVisit(group.tree, [&](const Expr& expr) {
      const auto* node = As<CallNode>(expr);
      if (node == nullptr) return;
      std::vector<Expr> children{node->callee};
      for (const Expr& arg : node->args) {
        auto inner = rebuilt.find(arg.get());
        if (inner != rebuilt.end()) {
          children.push_back(inner->second);
          continue;
        }
        auto [param, inserted] = params.try_emplace(arg.get());
        if (inserted) {
          param->second = FreshVar("p" + std::to_string(param_list.size()), arg);
          param_list.push_back(param->second);
          operands.push_back(arg);
        }
        children.push_back(param->second);
      }
      rebuilt[expr.get()] = WithTypedChildren(expr, children);
    });
    Expr body = rebuilt.at(group.tree.get());
    Expr function = Make<FunctionNode>(
        param_list, body, body->checked_type(), std::vector<TypeVar>{},
        kernels::Attrs{{kPrimitiveAttr, kernels::AttrValue::Int(1)}}, call->span());
    Expr result =
        Make<CallNode>(function, operands, kernels::Attrs{}, std::vector<Type>{}, call->span());
    result->set_checked_type(call->checked_type());
    return result;
  }

  std::unordered_map<const VarNode*, int> uses_;
};

}  // namespace

Function FuseOperators(const Function& function) {
  return WithBody(function, Fuser(function->body).Rewrite(function->body));
}

}  // namespace relay::passes
