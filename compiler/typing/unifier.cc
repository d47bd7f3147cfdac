#include "compiler/typing/unifier.h"

namespace relay::typing {

using namespace relay::ir;

Type Unifier::Resolve(const Type& type) const {
  Type current = type;
  while (const auto* hole = As<IncompleteTypeNode>(current)) {
    auto found = solutions_.find(hole);
    if (found == solutions_.end()) break;
    current = found->second;
  }
  return current;
}

bool Unifier::Occurs(const IncompleteTypeNode* hole, const Type& type) const {
  Type resolved = Resolve(type);
  switch (resolved->kind()) {
    case NodeKind::kIncompleteType:
      return As<IncompleteTypeNode>(resolved) == hole;
    case NodeKind::kTupleType:
      for (const Type& field : As<TupleTypeNode>(resolved)->fields) {
        if (Occurs(hole, field)) return true;
      }
      return false;
    case NodeKind::kFuncType: {
      const auto* function = As<FuncTypeNode>(resolved);
      for (const Type& param : function->params) {
        if (Occurs(hole, param)) return true;
      }
      return Occurs(hole, function->ret);
    }
    case NodeKind::kTypeCall:
      for (const Type& arg : As<TypeCallNode>(resolved)->args) {
        if (Occurs(hole, arg)) return true;
      }
      return false;
    case NodeKind::kRefType:
      return Occurs(hole, As<RefTypeNode>(resolved)->value);
    default:
      return false;
  }
}

std::optional<Type> Unifier::Unify(const Type& a, const Type& b) {
  return UnifyResolved(Resolve(a), Resolve(b));
}

std::optional<Type> Unifier::UnifyResolved(const Type& a, const Type& b) {
  if (a == b) return a;
  if (const auto* hole = As<IncompleteTypeNode>(a)) {
    if (Occurs(hole, b)) return std::nullopt;
    solutions_[hole] = b;
    solved_holes_.push_back(a);
    return b;
  }
  if (As<IncompleteTypeNode>(b)) return UnifyResolved(b, a);
  if (a->kind() != b->kind()) return std::nullopt;
  switch (a->kind()) {
    case NodeKind::kTensorType: {
      const auto* left = As<TensorTypeNode>(a);
      const auto* right = As<TensorTypeNode>(b);
      if (left->dtype != right->dtype || left->shape.size() != right->shape.size())
        return std::nullopt;
      std::vector<int64_t> shape(left->shape.size());
      bool same_as_left = true;
      for (size_t axis = 0; axis < shape.size(); ++axis) {
        int64_t l = left->shape[axis], r = right->shape[axis];
        if (l != kAnyDim && r != kAnyDim && l != r) return std::nullopt;
        shape[axis] = l == kAnyDim ? r : l;
        same_as_left = same_as_left && shape[axis] == l;
      }
      return same_as_left ? a : TensorType(std::move(shape), left->dtype);
    }
    case NodeKind::kTupleType: {
      const auto* left = As<TupleTypeNode>(a);
      const auto* right = As<TupleTypeNode>(b);
      if (left->fields.size() != right->fields.size()) return std::nullopt;
      std::vector<Type> fields;
      for (size_t index = 0; index < left->fields.size(); ++index) {
        std::optional<Type> field = Unify(left->fields[index], right->fields[index]);
        if (!field) return std::nullopt;
        fields.push_back(*field);
      }
      return TupleType(std::move(fields));
    }
    case NodeKind::kFuncType: {
      const auto* left = As<FuncTypeNode>(a);
      const auto* right = As<FuncTypeNode>(b);
      if (left->params.size() != right->params.size() ||
          left->type_params.size() != right->type_params.size()) {
        return std::nullopt;
      }
      for (size_t index = 0; index < left->type_params.size(); ++index) {
        bound_type_vars_[left->type_params[index].get()] = right->type_params[index].get();
      }
      std::vector<Type> params;
      for (size_t index = 0; index < left->params.size(); ++index) {
        std::optional<Type> param = Unify(left->params[index], right->params[index]);
        if (!param) return std::nullopt;
        params.push_back(*param);
      }
      std::optional<Type> ret = Unify(left->ret, right->ret);
      if (!ret) return std::nullopt;
      return FuncType(std::move(params), *ret, left->type_params);
    }
    case NodeKind::kTypeVar: {
      auto found = bound_type_vars_.find(As<TypeVarNode>(a));
      if (found != bound_type_vars_.end() && found->second == As<TypeVarNode>(b)) return a;
      return std::nullopt;
    }
    case NodeKind::kGlobalTypeVar:
      return std::nullopt;  // distinct nodes: different ADTs
    case NodeKind::kTypeCall: {
      const auto* left = As<TypeCallNode>(a);
      const auto* right = As<TypeCallNode>(b);
      if (left->adt != right->adt || left->args.size() != right->args.size()) return std::nullopt;
      std::vector<Type> args;
      for (size_t index = 0; index < left->args.size(); ++index) {
        std::optional<Type> arg = Unify(left->args[index], right->args[index]);
        if (!arg) return std::nullopt;
        args.push_back(*arg);
      }
      return Make<TypeCallNode>(left->adt, std::move(args));
    }
    case NodeKind::kRefType: {
      std::optional<Type> value = Unify(As<RefTypeNode>(a)->value, As<RefTypeNode>(b)->value);
      if (!value) return std::nullopt;
      return RefType(*value);
    }
    default:
      return std::nullopt;
  }
}

Type Unifier::FullyResolve(const Type& type) const {
  Type resolved = Resolve(type);
  switch (resolved->kind()) {
    case NodeKind::kTupleType: {
      std::vector<Type> fields;
      for (const Type& field : As<TupleTypeNode>(resolved)->fields)
        fields.push_back(FullyResolve(field));
      return TupleType(std::move(fields), resolved->span());
    }
    case NodeKind::kFuncType: {
      const auto* function = As<FuncTypeNode>(resolved);
      std::vector<Type> params;
      for (const Type& param : function->params) params.push_back(FullyResolve(param));
      return FuncType(std::move(params), FullyResolve(function->ret), function->type_params,
                      resolved->span());
    }
    case NodeKind::kTypeCall: {
      const auto* call = As<TypeCallNode>(resolved);
      std::vector<Type> args;
      for (const Type& arg : call->args) args.push_back(FullyResolve(arg));
      return Make<TypeCallNode>(call->adt, std::move(args), resolved->span());
    }
    case NodeKind::kRefType:
      return RefType(FullyResolve(As<RefTypeNode>(resolved)->value), resolved->span());
    default:
      return resolved;
  }
}

bool Unifier::HasIncomplete(const Type& type) const {
  Type resolved = Resolve(type);
  switch (resolved->kind()) {
    case NodeKind::kIncompleteType:
      return true;
    case NodeKind::kTupleType:
      for (const Type& field : As<TupleTypeNode>(resolved)->fields) {
        if (HasIncomplete(field)) return true;
      }
      return false;
    case NodeKind::kFuncType: {
      const auto* function = As<FuncTypeNode>(resolved);
      for (const Type& param : function->params) {
        if (HasIncomplete(param)) return true;
      }
      return HasIncomplete(function->ret);
    }
    case NodeKind::kTypeCall:
      for (const Type& arg : As<TypeCallNode>(resolved)->args) {
        if (HasIncomplete(arg)) return true;
      }
      return false;
    case NodeKind::kRefType:
      return HasIncomplete(As<RefTypeNode>(resolved)->value);
    default:
      return false;
  }
}

Type Unifier::Substitute(const Type& type,
                         const std::unordered_map<const TypeVarNode*, Type>& substitution) {
  switch (type->kind()) {
    case NodeKind::kTypeVar: {
      auto found = substitution.find(As<TypeVarNode>(type));
      return found == substitution.end() ? type : found->second;
    }
    case NodeKind::kTupleType: {
      std::vector<Type> fields;
      for (const Type& field : As<TupleTypeNode>(type)->fields)
        fields.push_back(Substitute(field, substitution));
      return TupleType(std::move(fields), type->span());
    }
    case NodeKind::kFuncType: {
      const auto* function = As<FuncTypeNode>(type);
      std::vector<Type> params;
      for (const Type& param : function->params) params.push_back(Substitute(param, substitution));
      return FuncType(std::move(params), Substitute(function->ret, substitution),
                      function->type_params, type->span());
    }
    case NodeKind::kTypeCall: {
      const auto* call = As<TypeCallNode>(type);
      std::vector<Type> args;
      for (const Type& arg : call->args) args.push_back(Substitute(arg, substitution));
      return Make<TypeCallNode>(call->adt, std::move(args), type->span());
    }
    case NodeKind::kRefType:
      return RefType(Substitute(As<RefTypeNode>(type)->value, substitution), type->span());
    default:
      return type;
  }
}

}  // namespace relay::typing
