#include "compiler/passes/pass_util.h"

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/type.h"
#include "compiler/typing/type_inference.h"
#include "kernels/operator.h"
#include "relay/error.h"

namespace relay::passes {

using namespace relay::ir;

Expr WithTypedChildren(const Expr& expr, const std::vector<Expr>& children) {
  Expr rebuilt = WithChildren(expr, children);
  if (rebuilt.get() != expr.get()) rebuilt->set_checked_type(expr->checked_type());
  return rebuilt;
}

Function WithBody(const Function& function, const Expr& body) {
  if (body.get() == function->body.get()) return function;
  Function result = Make<FunctionNode>(function->params, body, function->ret_type,
                                       function->type_params, function->attrs, function->span());
  result->set_checked_type(function->checked_type());
  return result;
}

Var FreshVar(const std::string& name_hint, const Expr& value) {
  Var var = Make<VarNode>(name_hint, value->checked_type(), value->span());
  var->set_checked_type(value->checked_type());
  return var;
}

Expr TypedLet(const Var& var, const Expr& value, const Expr& body) {
  Expr let = Make<LetNode>(var, value, body, value->span());
  let->set_checked_type(body->checked_type());
  return let;
}

Expr OperatorCall(std::string_view op, std::vector<Expr> args, const kernels::Attrs& attrs,
                  const Span& span) {
  const kernels::OperatorDefinition* definition = kernels::FindOperator(op);
  RELAY_CHECK(definition != nullptr, "no operator " + std::string(op));
  kernels::Attrs normalized;
  const std::optional<std::string> problem =
      kernels::NormalizeAttrs(definition->attributes, attrs, normalized);
  RELAY_CHECK(!problem, std::string(op) + " refused a pass's attributes: " + problem.value_or(""));
  std::vector<kernels::ValueType> types;
  for (const Expr& arg : args) {
    std::optional<kernels::ValueType> type = typing::ToValueType(arg->checked_type());
    RELAY_CHECK(type && !type->is_tuple, std::string(op) + " built on an operand of unknown type");
    types.push_back(std::move(*type));
  }
  std::vector<kernels::RelationInput> inputs;
  for (const kernels::ValueType& type : types) inputs.push_back({&type, nullptr});
  kernels::ValueType result;
  try {
    result = definition->relation(inputs, normalized);
  } catch (const kernels::OperatorTypeError& error) {
    RELAY_CHECK(false, std::string(op) + " refused a pass's operands: " + error.message);
  }
  RELAY_CHECK(!result.is_tuple, std::string(op) + " built by a pass returns a tuple");
  Expr call = Make<CallNode>(Make<OpNode>(definition, span), std::move(args), std::move(normalized),
                             std::vector<Type>{}, span);
  call->set_checked_type(Make<TensorTypeNode>(result.shape, result.dtype));
  return call;
}

Expr WrapInLets(const Bindings& bindings, Expr body) {
  // Innermost first: a long chain is built in a loop.
  for (auto binding = bindings.rbegin(); binding != bindings.rend(); ++binding)
    body = TypedLet(binding->first, binding->second, body);
  return body;
}

namespace {

class Substituter : public TypedExprMutator {
 public:
  explicit Substituter(const std::unordered_map<const VarNode*, Expr>& replacements)
      : replacements_(replacements) {}

 protected:
  Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
    if (const auto* var = As<VarNode>(original)) {
      auto found = replacements_.find(var);
      if (found != replacements_.end()) return found->second;
    }
    return rebuilt;
  }

 private:
  const std::unordered_map<const VarNode*, Expr>& replacements_;
};

}  // namespace

Expr Substitute(const Expr& expr, const std::unordered_map<const VarNode*, Expr>& replacements) {
  if (replacements.empty()) return expr;
  return Substituter(replacements).Mutate(expr);
}

bool IsPrimitive(const FunctionNode& function) {
  for (const auto& [name, value] : function.attrs) {
    if (name == kPrimitiveAttr || name == kCompilerAttr) return true;
  }
  return false;
}

std::string ExternalCompiler(const FunctionNode& function) {
  for (const auto& [name, value] : function.attrs) {
    if (name == kCompilerAttr && value.kind() == kernels::AttrValue::Kind::kString)
      return value.as_string();
  }
  return {};
}

bool IsPure(const Expr& root) {
  // Iterative: the operands of a pure expression may nest deeply.
  std::vector<Expr> pending{root};
  while (!pending.empty()) {
    Expr expr = std::move(pending.back());
    pending.pop_back();
    switch (expr->kind()) {
      case NodeKind::kVar:
      case NodeKind::kGlobalVar:
      case NodeKind::kConstant:
      case NodeKind::kConstructor:
      case NodeKind::kFunction:
      case NodeKind::kOp:
        continue;
      case NodeKind::kCall: {
        const auto* call = As<CallNode>(expr);
        const auto* callee_function = As<FunctionNode>(call->callee);
        const bool primitive = callee_function != nullptr && IsPrimitive(*callee_function);
        if (As<OpNode>(call->callee) == nullptr && As<ConstructorNode>(call->callee) == nullptr &&
            !primitive) {
          return false;
        }
        break;
      }
      case NodeKind::kTuple:
      case NodeKind::kTupleGetItem:
      case NodeKind::kRefCreate:  // a fresh cell nobody else sees
      case NodeKind::kRefRead:
        break;
      default:
        return false;
    }
    for (Expr& child : ExprChildren(expr)) {
      if (child->kind() != NodeKind::kFunction) pending.push_back(std::move(child));
    }
  }
  return true;
}

Module RewriteGlobals(const Module& module,
                      const std::function<Function(const GlobalFunction&)>& rewrite) {
  Module result;
  result.set_source(module.source_name(),
                    std::make_shared<const std::string>(module.source_text()));
  for (const TypeDefinition& definition : module.type_definitions())
    result.AddTypeDefinition(definition);
  for (const GlobalFunction& global : module.functions()) {
    // An external function's body only states what its kernel computes:
    // it is kept as written.
    Function rewritten = IsPrimitive(*global.function) ? global.function : rewrite(global);
    if (rewritten.get() != global.function.get())
      rewritten->set_checked_type(global.function->checked_type());
    result.AddFunction(global.name, rewritten);
  }
  return result;
}

Module RewriteFunctions(const Module& module, const FunctionRewrite& rewrite) {
  return RewriteGlobals(module,
                        [&](const GlobalFunction& global) { return rewrite(global.function); });
}

}  // namespace relay::passes
