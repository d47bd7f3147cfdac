#include "compiler/passes/bind_params.h"

#include <unordered_map>
#include <vector>

#include "compiler/passes/pass_util.h"
#include "relay/error.h"

namespace relay::passes {

using namespace relay::ir;

namespace {

std::string ShapeText(const Shape& shape) {
  std::string text = "(";
  for (size_t index = 0; index < shape.size(); ++index)
    text += (index ? ", " : "") + std::to_string(shape[index]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

void CheckFits(const VarNode& param, const Tensor& value, const std::string& origin) {
  const Type& type = param.checked_type() ? param.checked_type() : param.type_annotation;
  const auto* tensor = As<TensorTypeNode>(type);
  const std::string where = origin + ": '" + param.name_hint + "'";
  if (tensor == nullptr) {
    throw Error(ErrorKind::kUsage, where + " names parameter %" + param.name_hint + " of type " +
                                       TypeToString(type) + ", which is not a tensor");
  }
  bool fits = tensor->dtype == value.dtype() && tensor->shape.size() == value.shape().size();
  for (size_t dim = 0; fits && dim < tensor->shape.size(); ++dim)
    fits = tensor->shape[dim] < 0 || tensor->shape[dim] == value.shape()[dim];
  if (!fits) {
    throw Error(ErrorKind::kUsage, where + " is " + std::string(DTypeName(value.dtype())) + " " +
                                       ShapeText(value.shape()) + ", but parameter %" +
                                       param.name_hint + " is " + TypeToString(type));
  }
}

}  // namespace

Module BindParams(const Module& module, const std::string& entry,
                  const std::map<std::string, Ref<Tensor>>& values, const std::string& origin) {
  if (module.FindFunction(entry) == nullptr)
    throw Error(ErrorKind::kUsage, "the program has no function @" + entry);
  return RewriteGlobals(module, [&](const GlobalFunction& global) -> Function {
    if (global.name->name != entry) return global.function;
    const Function& function = global.function;
    std::vector<Var> kept;
    std::vector<Type> kept_types;
    std::unordered_map<const VarNode*, Expr> constants;
    for (const Var& param : function->params) {
      auto value = values.find(param->name_hint);
      if (value == values.end()) {
        kept.push_back(param);
        kept_types.push_back(param->checked_type());
        continue;
      }
      CheckFits(*param, *value->second, origin);
      Expr constant = Make<ConstantNode>(value->second, param->span());
      constant->set_checked_type(
          Make<TensorTypeNode>(value->second->shape(), value->second->dtype()));
      constants[param.get()] = constant;
    }
    if (constants.empty()) return function;
    Function bound =
        Make<FunctionNode>(kept, Substitute(function->body, constants), function->ret_type,
                           function->type_params, function->attrs, function->span());
    if (const auto* type = As<FuncTypeNode>(function->checked_type()))
      bound->set_checked_type(Make<FuncTypeNode>(kept_types, type->ret, type->type_params));
    return bound;
  });
}

}  // namespace relay::passes
