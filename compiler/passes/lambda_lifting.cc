#include "compiler/passes/lambda_lifting.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

class FreeVariableCollector {
 public:
  std::vector<const VarNode*> Of(const FunctionNode& function) {
    for (const Var& param : function.params) Bind(param.get());
    Visit(function.body);
    return order_;
  }

 private:
  void Bind(const VarNode* var) { ++bound_[var]; }
  void Unbind(const VarNode* var) { --bound_[var]; }

  void BindPattern(const Pattern& pattern, std::vector<const VarNode*>& bound) {
    if (const auto* var = As<PatternVarNode>(pattern)) {
      Bind(var->var.get());
      bound.push_back(var->var.get());
    } else if (const auto* constructor = As<PatternConstructorNode>(pattern)) {
      for (const Pattern& inner : constructor->patterns) BindPattern(inner, bound);
    } else if (const auto* tuple = As<PatternTupleNode>(pattern)) {
      for (const Pattern& inner : tuple->patterns) BindPattern(inner, bound);
    }
  }

  void Visit(const Expr& root) {
    Expr expr = root;
    std::vector<const VarNode*> let_bound;
    // A let chain is walked in a loop: it may be very long.
    while (const auto* let = As<LetNode>(expr)) {
      // A let-bound function may call itself: its variable is in scope.
      const bool recursive = As<FunctionNode>(let->value) != nullptr;
      if (recursive) Bind(let->var.get());
      Visit(let->value);
      if (!recursive) Bind(let->var.get());
      let_bound.push_back(let->var.get());
      expr = let->body;
    }
    VisitOne(expr);
    for (const VarNode* var : let_bound) Unbind(var);
  }

  void VisitOne(const Expr& expr) {
    if (const auto* var = As<VarNode>(expr)) {
      if (bound_[var] == 0 && seen_.insert(var).second) order_.push_back(var);
      return;
    }
    if (const auto* function = As<FunctionNode>(expr)) {
      for (const Var& param : function->params) Bind(param.get());
      Visit(function->body);
      for (const Var& param : function->params) Unbind(param.get());
      return;
    }
    if (const auto* match = As<MatchNode>(expr)) {
      Visit(match->data);
      for (const Clause& clause : match->clauses) {
        std::vector<const VarNode*> bound;
        BindPattern(clause.pattern, bound);
        Visit(clause.body);
        for (const VarNode* var : bound) Unbind(var);
      }
      return;
    }
    for (const Expr& child : ExprChildren(expr)) Visit(child);
  }

  std::unordered_map<const VarNode*, int> bound_;
  std::unordered_set<const VarNode*> seen_;
  std::vector<const VarNode*> order_;
};

Expr TypedCall(const Expr& callee, std::vector<Expr> args, const Type& type, const Span& span) {
  Expr call = Make<CallNode>(callee, std::move(args), kernels::Attrs{}, std::vector<Type>{}, span);
  call->set_checked_type(type);
  return call;
}

// The global `function` only forwards its parameters to, or null.
const GlobalVarNode* ForwardedGlobal(const FunctionNode& function) {
  const auto* call = As<CallNode>(function.body);
  if (call == nullptr || call->args.size() != function.params.size()) return nullptr;
  for (size_t index = 0; index < call->args.size(); ++index) {
    if (call->args[index].get() != function.params[index].get()) return nullptr;
  }
  return As<GlobalVarNode>(call->callee);
}

class Lifter {
 public:
  explicit Lifter(std::vector<GlobalFunction>& lifted) : lifted_(lifted) {}

  Function LiftWithin(const Function& function, const std::string& name) {
    return WithBody(function, Rewrite(function->body, name));
  }

 private:
  Expr Rewrite(const Expr& root, const std::string& name) {
    Bindings bindings;
    Expr expr = root;
    bool changed = false;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value;
      if (const auto* literal = As<FunctionNode>(let->value)) {
        value = Lift(*literal, let->var.get(), name);
      } else {
        value = RewriteOne(let->value, name);
      }
      changed = changed || value.get() != let->value.get();
      bindings.emplace_back(let->var, std::move(value));
      expr = let->body;
    }
    Expr body = RewriteOne(expr, name);
    if (!changed && body.get() == expr.get()) return root;
    return WrapInLets(bindings, std::move(body));
  }

  // A primitive function (a fused kernel) called where it stands stays;
  // any other literal, primitive ones written by hand and used as values
  // included, becomes a closure.
  Expr RewriteOne(const Expr& expr, const std::string& name) {
    if (const auto* literal = As<FunctionNode>(expr)) return Lift(*literal, nullptr, name);
    if (expr->kind() == NodeKind::kLet) return Rewrite(expr, name);
    std::vector<Expr> children = ExprChildren(expr);
    const auto* call = As<CallNode>(expr);
    const auto* callee = call ? As<FunctionNode>(call->callee) : nullptr;
    const bool kernel = callee != nullptr && IsPrimitive(*callee);
    for (size_t index = kernel ? 1 : 0; index < children.size(); ++index)
      children[index] = RewriteOne(children[index], name);
    return WithTypedChildren(expr, children);
  }

  // The closure-making call that replaces `literal`; `self` is the let
  // variable it is bound to (it may name itself), or null.
  Expr Lift(const FunctionNode& literal, const VarNode* self, const std::string& outer) {
    if (const GlobalVarNode* global = ForwardedGlobal(literal)) {
      // fn (%a, %b) { @g(%a, %b) } (eta-expansion's) is @g, whose own
      // function is the closure.
      Expr value = Make<GlobalVarNode>(global->name, literal.span());
      value->set_checked_type(literal.checked_type());
      return value;
    }
    const std::string name = outer + ".lambda" + std::to_string(++count_);
    // Literals inside first: this one's free variables then include what
    // they capture.
    Function inner = WithBody(Function(&literal), Rewrite(literal.body, name));
    std::vector<const VarNode*> captured;
    for (const VarNode* var : FreeVariableCollector().Of(*inner)) {
      if (var != self) captured.push_back(var);
    }
    GlobalVar global = Make<GlobalVarNode>(name, literal.span());
    std::vector<Var> params;
    std::vector<Expr> captured_params;
    std::unordered_map<const VarNode*, Expr> replacements;
    for (const VarNode* var : captured) {
      Var param = Make<VarNode>(var->name_hint, var->checked_type(), var->span());
      param->set_checked_type(var->checked_type());
      params.push_back(param);
      captured_params.push_back(param);
      replacements[var] = param;
    }
    if (self != nullptr) {
      replacements[self] =
          TypedCall(global, captured_params, literal.checked_type(), literal.span());
    }
    params.insert(params.end(), literal.params.begin(), literal.params.end());
    Expr body = replacements.empty() ? inner->body : Substitute(inner->body, replacements);
    std::vector<Type> param_types;
    for (const Var& param : params) param_types.push_back(param->checked_type());
    const auto* literal_type = As<FuncTypeNode>(literal.checked_type());
    Type ret = literal_type ? literal_type->ret : literal.ret_type;
    Function lifted = Make<FunctionNode>(
        params, body, ret, literal.type_params,
        kernels::Attrs{{kClosureAttr, kernels::AttrValue::Int(int64_t(captured.size()))}},
        literal.span());
    if (ret) {  // (an eta-expanded constructor's literal may be untyped)
      Type type = Make<FuncTypeNode>(param_types, ret, literal.type_params);
      lifted->set_checked_type(type);
      global->set_checked_type(type);
    }
    lifted_.push_back({global, lifted});
    std::vector<Expr> captured_values;
    for (const VarNode* var : captured) captured_values.push_back(Var(var));
    return TypedCall(global, captured_values, literal.checked_type(), literal.span());
  }

  std::vector<GlobalFunction>& lifted_;
  int count_ = 0;
};

}  // namespace

std::vector<const VarNode*> FreeVariables(const FunctionNode& function) {
  return FreeVariableCollector().Of(function);
}

int CapturedCount(const FunctionNode& function) {
  for (const auto& [name, value] : function.attrs) {
    if (name == kClosureAttr) return int(value.as_int());
  }
  return -1;
}

Module LiftLambdas(const Module& module) {
  std::vector<GlobalFunction> lifted;
  Lifter lifter(lifted);
  Module result = RewriteGlobals(module, [&](const GlobalFunction& global) {
    return lifter.LiftWithin(global.function, global.name->name);
  });
  for (GlobalFunction& global : lifted) result.AddFunction(global.name, global.function);
  return result;
}

}  // namespace relay::passes
