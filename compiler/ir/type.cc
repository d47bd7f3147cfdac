#include "compiler/ir/type.h"

#include <string>

namespace relay::ir {

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
#define RELAY_IR_NODE(enumerator, class_name, category) \
  case NodeKind::enumerator:                            \
    return #class_name;
#include "compiler/ir/nodes.def"
#undef RELAY_IR_NODE
  }
  return "unknown";
}

TensorTypeNode::TensorTypeNode(std::vector<int64_t> shape_in, DType dtype_in, Span span)
    : TypeNode(kKind, span), shape(std::move(shape_in)), dtype(dtype_in) {
  for (int64_t dimension : shape) {
    RELAY_CHECK(dimension >= 0 || dimension == kAnyDim, "tensor type with a negative dimension");
  }
}

TupleTypeNode::TupleTypeNode(std::vector<Type> fields_in, Span span)
    : TypeNode(kKind, span), fields(std::move(fields_in)) {
  for (const Type& field : fields) RELAY_CHECK(field, "tuple type with a null field");
}

FuncTypeNode::FuncTypeNode(std::vector<Type> params_in, Type ret_in,
                           std::vector<TypeVar> type_params_in, Span span)
    : TypeNode(kKind, span),
      params(std::move(params_in)),
      ret(std::move(ret_in)),
      type_params(std::move(type_params_in)) {
  RELAY_CHECK(ret, "function type without a return type");
  for (const Type& param : params) RELAY_CHECK(param, "function type with a null parameter");
}

TypeCallNode::TypeCallNode(GlobalTypeVar adt_in, std::vector<Type> args_in, Span span)
    : TypeNode(kKind, span), adt(std::move(adt_in)), args(std::move(args_in)) {
  RELAY_CHECK(adt, "type call without a type");
  for (const Type& arg : args) RELAY_CHECK(arg, "type call with a null argument");
}

RefTypeNode::RefTypeNode(Type value_in, Span span)
    : TypeNode(kKind, span), value(std::move(value_in)) {
  RELAY_CHECK(value, "reference type without a value type");
}

Type TensorType(std::vector<int64_t> shape, DType dtype, Span span) {
  return Make<TensorTypeNode>(std::move(shape), dtype, span);
}
Type ScalarType(DType dtype, Span span) {
  return Make<TensorTypeNode>(std::vector<int64_t>{}, dtype, span);
}
Type TupleType(std::vector<Type> fields, Span span) {
  return Make<TupleTypeNode>(std::move(fields), span);
}
Type UnitType() {
  return Make<TupleTypeNode>(std::vector<Type>{});
}
Type FuncType(std::vector<Type> params, Type ret, std::vector<TypeVar> type_params, Span span) {
  return Make<FuncTypeNode>(std::move(params), std::move(ret), std::move(type_params), span);
}
Type RefType(Type value, Span span) {
  return Make<RefTypeNode>(std::move(value), span);
}
Type IncompleteType(Span span) {
  return Make<IncompleteTypeNode>(span);
}
TypeVar MakeTypeVar(std::string name, Span span) {
  return Make<TypeVarNode>(std::move(name), span);
}

namespace {

void AppendType(const Type& type, std::string& out);

void AppendTypeList(const std::vector<Type>& types, std::string& out) {
  for (size_t index = 0; index < types.size(); ++index) {
    if (index > 0) out += ", ";
    AppendType(types[index], out);
  }
}

// Types nest only as deep as their source text, which the parser bounds, so
// recursion is safe here.
void AppendType(const Type& type, std::string& out) {
  if (!type) {
    out += "_";
    return;
  }
  switch (type->kind()) {
    case NodeKind::kTensorType: {
      const auto* tensor = As<TensorTypeNode>(type);
      if (tensor->is_scalar()) {
        out += DTypeName(tensor->dtype);
        return;
      }
      out += "Tensor[(";
      for (size_t index = 0; index < tensor->shape.size(); ++index) {
        if (index > 0) out += ", ";
        int64_t dimension = tensor->shape[index];
        out += dimension == kAnyDim ? std::string("?") : std::to_string(dimension);
      }
      if (tensor->shape.size() == 1) out += ",";
      out += "), ";
      out += DTypeName(tensor->dtype);
      out += "]";
      return;
    }
    case NodeKind::kTupleType: {
      const auto* tuple = As<TupleTypeNode>(type);
      out += "(";
      AppendTypeList(tuple->fields, out);
      if (tuple->fields.size() == 1) out += ",";
      out += ")";
      return;
    }
    case NodeKind::kFuncType: {
      const auto* function = As<FuncTypeNode>(type);
      out += "fn ";
      if (!function->type_params.empty()) {
        out += "[";
        for (size_t index = 0; index < function->type_params.size(); ++index) {
          if (index > 0) out += ", ";
          out += function->type_params[index]->name;
        }
        out += "]";
      }
      out += "(";
      AppendTypeList(function->params, out);
      out += ") -> ";
      AppendType(function->ret, out);
      return;
    }
    case NodeKind::kTypeVar:
      out += As<TypeVarNode>(type)->name;
      return;
    case NodeKind::kGlobalTypeVar:
      out += As<GlobalTypeVarNode>(type)->name;
      return;
    case NodeKind::kTypeCall: {
      const auto* call = As<TypeCallNode>(type);
      out += call->adt->name;
      if (!call->args.empty()) {
        out += "[";
        AppendTypeList(call->args, out);
        out += "]";
      }
      return;
    }
    case NodeKind::kRefType:
      out += "ref(";
      AppendType(As<RefTypeNode>(type)->value, out);
      out += ")";
      return;
    case NodeKind::kIncompleteType:
      out += "_";
      return;
    default:
      RELAY_UNREACHABLE("TypeToString of a non-type node");
  }
}

}  // namespace

std::string TypeToString(const Type& type) {
  std::string out;
  AppendType(type, out);
  return out;
}

}  // namespace relay::ir
