#include "compiler/passes/loop_inlining.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/attributes.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

// Whether `function`'s body is simple enough to copy with only its let
// variables renamed, and small enough to copy into every loop calling it.
bool Inlinable(const FunctionNode& function) {
  if (!function.type_params.empty() || IsPrimitive(function)) return false;
  int nodes = 0;
  bool simple = true;
  PostOrderVisit(function.body, [&](const Expr& expr) {
    ++nodes;
    switch (expr->kind()) {
      case NodeKind::kGlobalVar:  // a call of a global: it might recurse
      case NodeKind::kFunction:
      case NodeKind::kMatch:
        simple = false;
        break;
      default:
        break;
    }
  });
  return simple && nodes <= kMaxInlinedNodes;
}

bool Mentions(const Expr& root, const std::function<bool(const Expr&)>& is_it) {
  bool found = false;
  PostOrderVisit(root, [&](const Expr& expr) { found = found || is_it(expr); });
  return found;
}

// `body` with `replacements` for its free variables and a fresh variable
// for each of its let bindings (its only binders; see Inlinable).
Expr CopyWithFreshLets(const Expr& body, std::unordered_map<const VarNode*, Expr> replacements) {
  PostOrderVisit(body, [&](const Expr& expr) {
    const auto* let = As<LetNode>(expr);
    if (let == nullptr) return;
    const VarNode& old = *let->var;
    Var fresh = Make<VarNode>(old.name_hint, old.type_annotation, old.span());
    fresh->set_checked_type(old.checked_type());
    replacements[&old] = fresh;
  });

  class Copier : public TypedExprMutator {
   public:
    explicit Copier(const std::unordered_map<const VarNode*, Expr>& replacements)
        : replacements_(replacements) {}

   protected:
    Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
      if (const auto* var = As<VarNode>(original)) {
        auto found = replacements_.find(var);
        return found == replacements_.end() ? original : found->second;
      }
      if (const auto* let = As<LetNode>(rebuilt)) {
        Var var(As<VarNode>(replacements_.at(let->var.get())));
        Expr copy = Make<LetNode>(var, let->value, let->body, let->span());
        copy->set_checked_type(original->checked_type());
        return copy;
      }
      return rebuilt;
    }

   private:
    const std::unordered_map<const VarNode*, Expr>& replacements_;
  };
  return Copier(replacements).Mutate(body);
}

class LoopInliner {
 public:
  explicit LoopInliner(const Module& module) {
    for (const GlobalFunction& global : module.functions()) {
      if (Inlinable(*global.function)) callees_.emplace(global.name->name, global.function);
    }
  }

  Function RewriteGlobal(const GlobalFunction& global) {
    const std::string& name = global.name->name;
    const bool loop = Mentions(global.function->body, [&](const Expr& expr) {
      const auto* reference = As<GlobalVarNode>(expr);
      return reference != nullptr && reference->name == name;
    });
    return WithBody(global.function,
                    Rewrite(global.function->body, loop ? ParamsOf(*global.function) : Params{}));
  }

 private:
  // The parameters of the innermost loop around an expression; empty
  // outside loops.
  using Params = std::unordered_set<const VarNode*>;

  static Params ParamsOf(const FunctionNode& function) {
    Params params;
    for (const Var& param : function.params) params.insert(param.get());
    return params;
  }

  // Remembers `var` when `value` is take(_, parameter, axis=0): a step's
  // slice of a sequence, in a loop whose parameter counts the steps.
  void NoteSlice(const VarNode& var, const Expr& value, const Params& loop) {
    const auto* call = As<CallNode>(value);
    const auto* op = call != nullptr ? As<OpNode>(call->callee) : nullptr;
    if (op == nullptr || op->name() != "take") return;
    const auto* index = As<VarNode>(call->args[1]);
    const auto& axis = kernels::GetAttr(call->attrs, "axis");
    if (index != nullptr && loop.count(index) != 0 && !axis.is_none() && axis.as_int() == 0)
      slices_.insert(&var);
  }

  Expr Rewrite(const Expr& root, const Params& loop) {
    Bindings bindings;
    bool changed = false;
    Expr expr = root;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value;
      if (const auto* function = As<FunctionNode>(let->value);
          function != nullptr && !IsPrimitive(*function)) {
        const VarNode* self = let->var.get();
        const bool recursive =
            Mentions(function->body, [&](const Expr& use) { return use.get() == self; });
        value = WithBody(Function(function),
                         Rewrite(function->body, recursive ? ParamsOf(*function) : loop));
      } else if (Expr inlined = Inline(let->value)) {
        // The callee's bindings join this chain; its result is the value.
        while (const auto* inner = As<LetNode>(inlined)) {
          bindings.emplace_back(inner->var, inner->value);
          inlined = inner->body;
        }
        value = inlined;
      } else {
        value = RewriteNested(let->value, loop);
      }
      if (!loop.empty()) NoteSlice(*let->var, value, loop);
      changed = changed || value.get() != let->value.get();
      bindings.emplace_back(let->var, value);
      expr = let->body;
    }
    Expr tail = Inline(expr);
    if (!tail) tail = RewriteNested(expr, loop);
    if (!changed && tail.get() == expr.get()) return root;
    return WrapInLets(bindings, tail);
  }

  Expr RewriteNested(const Expr& expr, const Params& loop) {
    if (const auto* function = As<FunctionNode>(expr)) {
      if (IsPrimitive(*function)) return expr;
      return WithBody(Function(function), Rewrite(function->body, loop));
    }
    std::vector<Expr> children = ExprChildren(expr);
    if (children.empty()) return expr;
    for (Expr& child : children) child = Rewrite(child, loop);
    return WithTypedChildren(expr, children);
  }

  // The callee's body for a call of an inlinable global that receives a
  // step's slice; null otherwise.
  Expr Inline(const Expr& expr) {
    const auto* call = As<CallNode>(expr);
    if (call == nullptr) return {};
    const bool takes_slice =
        std::any_of(call->args.begin(), call->args.end(),
                    [&](const Expr& arg) { return slices_.count(As<VarNode>(arg)) != 0; });
    if (!takes_slice) return {};
    const auto* global = As<GlobalVarNode>(call->callee);
    if (global == nullptr) return {};
    auto callee = callees_.find(global->name);
    if (callee == callees_.end()) return {};
    const FunctionNode& function = *callee->second;
    std::unordered_map<const VarNode*, Expr> arguments;
    for (size_t index = 0; index < function.params.size(); ++index)
      arguments[function.params[index].get()] = call->args[index];
    return CopyWithFreshLets(function.body, std::move(arguments));
  }

  std::unordered_map<std::string, Function> callees_;
  std::unordered_set<const VarNode*> slices_;
};

}  // namespace

Module InlineCallsInLoops(const Module& module) {
  LoopInliner inliner(module);
  return RewriteGlobals(
      module, [&](const GlobalFunction& global) { return inliner.RewriteGlobal(global); });
}

}  // namespace relay::passes
