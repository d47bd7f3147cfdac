#include "compiler/passes/eta_expansion.h"

#include <string>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "relay/error.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

class EtaExpander : public TypedExprMutator {
 public:
  EtaExpander(const Module& scope, const Module* fallback) : scope_(scope), fallback_(fallback) {}

  // A function literal standing for `expr` where it is used as a value,
  // located at `site` (the use: a constructor or global carries the span
  // of its definition); `expr` itself when it is neither a constructor nor
  // a global.
  Expr Expand(const Expr& expr, const Span& site) const {
    std::vector<Type> param_types;
    if (const auto* constructor = As<ConstructorNode>(expr)) {
      param_types = constructor->inputs;
    } else if (const auto* global = As<GlobalVarNode>(expr)) {
      const GlobalFunction* definition = scope_.FindFunction(global->name);
      if (definition == nullptr && fallback_ != nullptr)
        definition = fallback_->FindFunction(global->name);
      if (definition == nullptr)
        throw Error(ErrorKind::kCompile, "no definition of @" + global->name);
      for (const Var& param : definition->function->params) {
        param_types.push_back(param->checked_type() ? param->checked_type()
                                                    : param->type_annotation);
      }
    } else {
      return expr;
    }
    std::vector<Var> params;
    std::vector<Expr> args;
    for (size_t index = 0; index < param_types.size(); ++index) {
      Var param = Make<VarNode>("eta" + std::to_string(index), param_types[index], site);
      param->set_checked_type(param_types[index]);
      params.push_back(param);
      args.push_back(param);
    }
    Expr call = Make<CallNode>(expr, args, kernels::Attrs{}, std::vector<Type>{}, site);
    const auto* type = As<FuncTypeNode>(expr->checked_type());
    if (type != nullptr) call->set_checked_type(type->ret);
    Expr function = Make<FunctionNode>(params, call, type ? type->ret : Type(),
                                       std::vector<TypeVar>{}, kernels::Attrs{}, site);
    function->set_checked_type(expr->checked_type());
    return function;
  }

 protected:
  Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
    (void)original;
    std::vector<Expr> children = ExprChildren(rebuilt);
    bool changed = false;
    for (size_t index = 0; index < children.size(); ++index) {
      if (rebuilt->kind() == NodeKind::kCall && index == 0) continue;  // called, not a value
      Expr expanded = Expand(children[index], rebuilt->span());
      changed = changed || expanded.get() != children[index].get();
      children[index] = std::move(expanded);
    }
    return changed ? WithTypedChildren(rebuilt, children) : rebuilt;
  }

 private:
  const Module& scope_;
  const Module* fallback_;
};

}  // namespace

Function EtaExpand(const Function& function, const Module& scope, const Module* fallback) {
  EtaExpander expander(scope, fallback);
  return WithBody(function, expander.Expand(expander.Mutate(function->body), function->span()));
}

}  // namespace relay::passes
