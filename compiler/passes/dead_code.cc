#include "compiler/passes/dead_code.h"

#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

class DeadCodeEliminator {
 public:
  explicit DeadCodeEliminator(const Expr& body) { CountReferences(body, +1); }

  Expr Rewrite(const Expr& root) {
    std::vector<const LetNode*> chain;
    Expr expr = root;
    while (const auto* let = As<LetNode>(expr)) {
      chain.push_back(let);
      expr = let->body;
    }
    Expr body = RewriteChildren(expr);
    bool changed = body.get() != expr.get();
    for (auto let = chain.rbegin(); let != chain.rend(); ++let) {
      const LetNode& binding = **let;
      if (references_[binding.var.get()] == 0 && IsPure(binding.value)) {
        CountReferences(binding.value, -1);
        changed = true;
        continue;
      }
      Expr value = Rewrite(binding.value);
      if (!changed && value.get() == binding.value.get()) {
        body = Expr(&binding);
        continue;
      }
      changed = true;
      Expr rebuilt = Make<LetNode>(binding.var, value, body, binding.span());
      rebuilt->set_checked_type(binding.checked_type());
      body = rebuilt;
    }
    return body;
  }

 private:
  Expr RewriteChildren(const Expr& expr) {
    std::vector<Expr> children = ExprChildren(expr);
    if (children.empty()) return expr;
    if (const auto* function = As<FunctionNode>(expr); function && IsPrimitive(*function)) {
      return expr;
    }
    // Later children first: what they stop reading may free earlier ones.
    for (auto child = children.rbegin(); child != children.rend(); ++child)
      *child = Rewrite(*child);
    return WithTypedChildren(expr, children);
  }

  // Adds `delta` to the count of every variable reference under `root`
  // (each distinct node once: after A-normal form nothing but atoms is
  // shared).
  void CountReferences(const Expr& root, int delta) {
    PostOrderVisit(root, [&](const Expr& expr) {
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) references_[var] += delta;
      }
    });
  }

  std::unordered_map<const VarNode*, int> references_;
};

}  // namespace

Function EliminateDeadCode(const Function& function) {
  Expr body = DeadCodeEliminator(function->body).Rewrite(function->body);
  return WithBody(function, body);
}

}  // namespace relay::passes
