// Relay expressions and patterns.
//
// Every expression carries a type slot that type inference fills in once
// (checked_type()); nothing else about a node changes after construction.
// Constructors validate their arguments: a violation is an internal error,
// because only the parser and passes build nodes and they check user input
// first.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/type.h"
#include "kernels/attributes.h"
#include "relay/tensor.h"

namespace relay::kernels {
struct OperatorDefinition;
}

namespace relay::ir {

class ExprNode : public Node {
 public:
  using Node::Node;
  // The type inferred for this expression; null before type inference.
  const Type& checked_type() const { return checked_type_; }
  // Written by type inference only.
  void set_checked_type(Type type) const { checked_type_ = std::move(type); }

 private:
  mutable Type checked_type_;
};
using Expr = Ref<const ExprNode>;

class VarNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kVar;
  // `type_annotation` may be null (to be inferred).
  VarNode(std::string name_hint, Type type_annotation, Span span = {})
      : ExprNode(kKind, span),
        name_hint(std::move(name_hint)),
        type_annotation(std::move(type_annotation)) {}
  const std::string name_hint;  // without '%'
  const Type type_annotation;
};
using Var = Ref<const VarNode>;

class GlobalVarNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kGlobalVar;
  explicit GlobalVarNode(std::string name, Span span = {})
      : ExprNode(kKind, span), name(std::move(name)) {}
  const std::string name;  // without '@'
};
using GlobalVar = Ref<const GlobalVarNode>;

class ConstantNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kConstant;
  // `value` must be a host tensor.
  explicit ConstantNode(Ref<Tensor> value, Span span = {});
  const Ref<Tensor> value;
};

class TupleNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTuple;
  explicit TupleNode(std::vector<Expr> fields, Span span = {});
  const std::vector<Expr> fields;
};

class TupleGetItemNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kTupleGetItem;
  TupleGetItemNode(Expr tuple, int index, Span span = {});
  const Expr tuple;
  const int index;
};

class OpNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kOp;
  explicit OpNode(const kernels::OperatorDefinition* definition, Span span = {});
  const kernels::OperatorDefinition* const definition;
  const std::string& name() const;
};

class CallNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kCall;
  CallNode(Expr callee, std::vector<Expr> args, kernels::Attrs attrs = {},
           std::vector<Type> type_args = {}, Span span = {});
  const Expr callee;
  const std::vector<Expr> args;
  const kernels::Attrs attrs;         // operator calls: normalised by the operator's schema
  const std::vector<Type> type_args;  // explicit instantiation, rarely written
};

class FunctionNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kFunction;
  // `ret_type` may be null (to be inferred). `attrs` are function attributes
  // such as Primitive=1.
  FunctionNode(std::vector<Var> params, Expr body, Type ret_type,
               std::vector<TypeVar> type_params = {}, kernels::Attrs attrs = {}, Span span = {});
  const std::vector<Var> params;
  const Expr body;
  const Type ret_type;
  const std::vector<TypeVar> type_params;
  const kernels::Attrs attrs;
};
using Function = Ref<const FunctionNode>;

class LetNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kLet;
  LetNode(Var var, Expr value, Expr body, Span span = {});
  const Var var;
  const Expr value;
  const Expr body;
};

class IfNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kIf;
  IfNode(Expr condition, Expr then_branch, Expr else_branch, Span span = {});
  const Expr condition;
  const Expr then_branch;
  const Expr else_branch;
};

class ConstructorNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kConstructor;
  // `inputs` may mention the ADT's type parameters; `tag` is the
  // constructor's index within its type definition.
  ConstructorNode(std::string name, std::vector<Type> inputs, GlobalTypeVar adt, int tag,
                  Span span = {});
  const std::string name;
  const std::vector<Type> inputs;
  const GlobalTypeVar adt;
  const int tag;
};
using Constructor = Ref<const ConstructorNode>;

// ---- patterns ---------------------------------------------------------------

class PatternNode : public Node {
 public:
  using Node::Node;
};
using Pattern = Ref<const PatternNode>;

class PatternWildcardNode final : public PatternNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPatternWildcard;
  explicit PatternWildcardNode(Span span = {}) : PatternNode(kKind, span) {}
};

class PatternVarNode final : public PatternNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPatternVar;
  explicit PatternVarNode(Var var, Span span = {});
  const Var var;
};

class PatternConstructorNode final : public PatternNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPatternConstructor;
  PatternConstructorNode(Constructor constructor, std::vector<Pattern> patterns, Span span = {});
  const Constructor constructor;
  const std::vector<Pattern> patterns;
};

class PatternTupleNode final : public PatternNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kPatternTuple;
  explicit PatternTupleNode(std::vector<Pattern> patterns, Span span = {});
  const std::vector<Pattern> patterns;
};

struct Clause {
  Pattern pattern;
  Expr body;
};

class MatchNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kMatch;
  // `complete` is false for `match?`, whose non-exhaustiveness is accepted.
  MatchNode(Expr data, std::vector<Clause> clauses, bool complete, Span span = {});
  const Expr data;
  const std::vector<Clause> clauses;
  const bool complete;
};

class RefCreateNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kRefCreate;
  explicit RefCreateNode(Expr value, Span span = {});
  const Expr value;
};

class RefReadNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kRefRead;
  explicit RefReadNode(Expr ref, Span span = {});
  const Expr ref;
};

class RefWriteNode final : public ExprNode {
 public:
  static constexpr NodeKind kKind = NodeKind::kRefWrite;
  RefWriteNode(Expr ref, Expr value, Span span = {});
  const Expr ref;
  const Expr value;
};

}  // namespace relay::ir
