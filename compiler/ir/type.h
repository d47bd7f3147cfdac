// Relay types.
//
//   Tensor[(2, ?), float32]   TensorTypeNode (a scalar is a rank-0 tensor: float32)
//   (T1, T2)                  TupleTypeNode  (() is the unit type)
//   fn [A](T1) -> R           FuncTypeNode
//   A                         TypeVarNode    (identity is the node)
//   List                      GlobalTypeVarNode, the name of an ADT
//   List[A]                   TypeCallNode
//   ref(T)                    RefTypeNode
//   _                         IncompleteTypeNode, solved by type inference
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/node.h"
#include "relay/dtype.h"

namespace relay::ir {

class TypeNode : public Node {
 public:
  using Node::Node;
};
using Type = Ref<const TypeNode>;

// An unknown dimension, printed `?`.
inline constexpr int64_t kAnyDim = -1;

class TensorTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTensorType;
  // Dimensions are >= 0 or kAnyDim; anything else is an internal error.
  TensorTypeNode(std::vector<int64_t> shape, DType dtype, Span span = {});
  const std::vector<int64_t> shape;
  const DType dtype;
  bool is_scalar() const { return shape.empty(); }
};

class TupleTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTupleType;
  explicit TupleTypeNode(std::vector<Type> fields, Span span = {});
  const std::vector<Type> fields;
};

class TypeVarNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTypeVar;
  explicit TypeVarNode(std::string name, Span span = {})
      : TypeNode(kKind, span), name(std::move(name)) {}
  const std::string name;
};
using TypeVar = Ref<const TypeVarNode>;

class FuncTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFuncType;
  FuncTypeNode(std::vector<Type> params, Type ret, std::vector<TypeVar> type_params = {},
               Span span = {});
  const std::vector<Type> params;
  const Type ret;
  const std::vector<TypeVar> type_params;
};

class GlobalTypeVarNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kGlobalTypeVar;
  explicit GlobalTypeVarNode(std::string name, Span span = {})
      : TypeNode(kKind, span), name(std::move(name)) {}
  const std::string name;
};
using GlobalTypeVar = Ref<const GlobalTypeVarNode>;

class TypeCallNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTypeCall;
  TypeCallNode(GlobalTypeVar adt, std::vector<Type> args, Span span = {});
  const GlobalTypeVar adt;
  const std::vector<Type> args;
};

class RefTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kRefType;
  explicit RefTypeNode(Type value, Span span = {});
  const Type value;
};

class IncompleteTypeNode final : public TypeNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kIncompleteType;
  explicit IncompleteTypeNode(Span span = {}) : TypeNode(kKind, span) {}
};

// Convenience constructors.
Type TensorType(std::vector<int64_t> shape, DType dtype, Span span = {});
Type ScalarType(DType dtype, Span span = {});
Type TupleType(std::vector<Type> fields, Span span = {});
Type UnitType();
Type FuncType(std::vector<Type> params, Type ret, std::vector<TypeVar> type_params = {},
              Span span = {});
Type RefType(Type value, Span span = {});
Type IncompleteType(Span span = {});
TypeVar MakeTypeVar(std::string name, Span span = {});

// Relay text for a type: Tensor[(2, ?), float32], fn (int32) -> bool, ...
std::string TypeToString(const Type& type);

}  // namespace relay::ir
