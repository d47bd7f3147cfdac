#include "compiler/passes/a_normal_form.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

class Normalizer {
 public:
  Expr Run(const Expr& root) {
    Discover(root);
    AssignScopes(root);
    Emit(root);
    return Wrap(0, info_.at(root.get()).result);
  }

 private:
  struct NodeInfo {
    std::vector<Expr> children;  // within this activation: a function literal has none
    int uses = 0;
    const ExprNode* last_parent = nullptr;
    size_t last_slot = 0;
    int scope = -1;
    bool tail = false;               // the last expression of its scope
    std::vector<int> branch_scopes;  // an if's branches, a match's clauses
    bool emitted = false;
    Expr result;  // what stands for the node where it is used
  };
  struct Scope {
    int parent;
    int depth;
    Bindings bindings;  // in evaluation order
  };

  NodeInfo& Info(const Expr& expr) {
    auto [position, inserted] = info_.try_emplace(expr.get());
    if (inserted && expr->kind() != NodeKind::kFunction)
      position->second.children = ExprChildren(expr);
    return position->second;
  }

  // Counts uses and records a post order (children first).
  void Discover(const Expr& root) {
    struct Frame {
      Expr expr;
      size_t next;
    };
    std::vector<Frame> stack{{root, 0}};
    Info(root);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      NodeInfo& info = info_.at(frame.expr.get());
      if (frame.next == info.children.size()) {
        post_order_.push_back(frame.expr);
        stack.pop_back();
        continue;
      }
      const size_t slot = frame.next++;
      Expr child = info.children[slot];
      const bool seen = info_.count(child.get()) != 0;
      NodeInfo& child_info = Info(child);
      ++child_info.uses;
      child_info.last_parent = frame.expr.get();
      child_info.last_slot = slot;
      if (!seen) stack.push_back({std::move(child), 0});  // invalidates `frame`
    }
  }

  int NewScope(int parent) {
    scopes_.push_back({parent, parent < 0 ? 0 : scopes_[size_t(parent)].depth + 1, {}});
    return static_cast<int>(scopes_.size() - 1);
  }
  int CommonScope(int a, int b) const {
    while (scopes_[size_t(a)].depth > scopes_[size_t(b)].depth) a = scopes_[size_t(a)].parent;
    while (scopes_[size_t(b)].depth > scopes_[size_t(a)].depth) b = scopes_[size_t(b)].parent;
    while (a != b) {
      a = scopes_[size_t(a)].parent;
      b = scopes_[size_t(b)].parent;
    }
    return a;
  }
  void UseIn(const Expr& child, int scope, bool tail) {
    NodeInfo& info = info_.at(child.get());
    info.scope = info.scope < 0 ? scope : CommonScope(info.scope, scope);
    // Only meaningful for a node used once, and then this is its use.
    info.tail = tail;
  }

  // Parents before children (reverse post order), so each node's scope is
  // final when its children are placed.
  void AssignScopes(const Expr& root) {
    NodeInfo& root_info = info_.at(root.get());
    root_info.scope = NewScope(-1);
    root_info.tail = true;
    for (auto node = post_order_.rbegin(); node != post_order_.rend(); ++node) {
      NodeInfo& info = info_.at(node->get());
      const int scope = info.scope;
      switch ((*node)->kind()) {
        case NodeKind::kIf:
          info.branch_scopes = {NewScope(scope), NewScope(scope)};
          UseIn(info.children[0], scope, false);
          UseIn(info.children[1], info.branch_scopes[0], true);
          UseIn(info.children[2], info.branch_scopes[1], true);
          break;
        case NodeKind::kMatch:
          UseIn(info.children[0], scope, false);
          for (size_t clause = 1; clause < info.children.size(); ++clause) {
            info.branch_scopes.push_back(NewScope(scope));
            UseIn(info.children[clause], info.branch_scopes.back(), true);
          }
          break;
        case NodeKind::kLet:
          UseIn(info.children[0], scope, false);
          UseIn(info.children[1], scope, info.tail && info.uses <= 1);
          break;
        default:
          for (const Expr& child : info.children) UseIn(child, scope, false);
          break;
      }
    }
  }

  // Builds the normalised nodes in evaluation order, appending bindings to
  // their scopes as they complete.
  void Emit(const Expr& root) {
    struct Frame {
      Expr expr;
      size_t next;
    };
    std::vector<Frame> stack{{root, 0}};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      NodeInfo& info = info_.at(frame.expr.get());
      if (frame.next == info.children.size()) {
        Complete(frame.expr, info);
        stack.pop_back();
        continue;
      }
      const size_t slot = frame.next++;
      if (const auto* let = As<LetNode>(frame.expr); let != nullptr && slot == 1) {
        // The value is done: bind the let's own variable before its body.
        scopes_[size_t(info.scope)].bindings.emplace_back(let->var,
                                                          info_.at(let->value.get()).result);
      }
      Expr child = info.children[slot];
      if (!info_.at(child.get()).emitted) stack.push_back({std::move(child), 0});
    }
  }

  void Complete(const Expr& expr, NodeInfo& info) {
    info.emitted = true;
    if (IsAtomic(*expr)) {
      info.result = expr;
      return;
    }
    switch (expr->kind()) {
      case NodeKind::kLet:
        info.result = info_.at(info.children[1].get()).result;
        return;  // its variable was bound on the way
      case NodeKind::kFunction: {
        const auto* function = As<FunctionNode>(expr);
        Place(expr, info, IsPrimitive(*function) ? expr : Expr(ToANormalForm(Function(function))));
        return;
      }
      case NodeKind::kIf: {
        Expr rebuilt = Make<IfNode>(ResultOf(info.children[0]), WrapChild(info, 1, 0),
                                    WrapChild(info, 2, 1), expr->span());
        rebuilt->set_checked_type(expr->checked_type());
        Place(expr, info, rebuilt);
        return;
      }
      case NodeKind::kMatch: {
        const auto* match = As<MatchNode>(expr);
        std::vector<Clause> clauses;
        for (size_t clause = 0; clause < match->clauses.size(); ++clause) {
          clauses.push_back({match->clauses[clause].pattern, WrapChild(info, clause + 1, clause)});
        }
        Expr rebuilt = Make<MatchNode>(ResultOf(info.children[0]), std::move(clauses),
                                       match->complete, expr->span());
        rebuilt->set_checked_type(expr->checked_type());
        Place(expr, info, rebuilt);
        return;
      }
      default: {
        std::vector<Expr> operands;
        for (const Expr& child : info.children) operands.push_back(ResultOf(child));
        Place(expr, info, WithTypedChildren(expr, operands));
        return;
      }
    }
  }

  const Expr& ResultOf(const Expr& child) const { return info_.at(child.get()).result; }
  Expr WrapChild(const NodeInfo& info, size_t child, size_t branch) {
    return Wrap(info.branch_scopes[branch], ResultOf(info.children[child]));
  }

  // Decides what stands for a completed node: itself where it ends its
  // scope or is a let's value, else a fresh variable bound in its scope.
  void Place(const Expr& expr, NodeInfo& info, Expr rebuilt) {
    const bool only_use_is_let_value =
        info.uses == 1 && info.last_slot == 0 && info.last_parent->kind() == NodeKind::kLet;
    if ((info.tail && info.uses <= 1) || only_use_is_let_value) {
      info.result = std::move(rebuilt);
      return;
    }
    Var var = FreshVar("anf", rebuilt);
    scopes_[size_t(info.scope)].bindings.emplace_back(var, std::move(rebuilt));
    info.result = var;
    (void)expr;
  }

  // The scope's bindings around `result`, innermost built first.
  Expr Wrap(int scope, Expr result) {
    return WrapInLets(scopes_[size_t(scope)].bindings, std::move(result));
  }

  std::unordered_map<const ExprNode*, NodeInfo> info_;
  std::vector<Expr> post_order_;
  std::vector<Scope> scopes_;
};

}  // namespace

Function ToANormalForm(const Function& function) {
  if (IsPrimitive(*function)) return function;
  Expr body = Normalizer().Run(function->body);
  return WithBody(function, body);
}

}  // namespace relay::passes
