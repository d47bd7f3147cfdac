#include "compiler/ir/structural_equal.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace relay::ir {

namespace {

bool TensorsEqual(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.host_data(), b.host_data(), a.byte_size()) == 0;
}

// Compares pairs of nodes from an explicit worklist. Binding sites are
// visited before the uses they scope (pairs are pushed so that the first
// child is compared first), which is when variables are paired up.
class EqualityChecker {
 public:
  bool Run(const Node* a, const Node* b) {
    work_.emplace_back(a, b);
    while (!work_.empty()) {
      auto [left, right] = work_.back();
      work_.pop_back();
      if (!Compare(left, right)) return false;
    }
    return true;
  }

 private:
  void Push(const Node* a, const Node* b) { pending_.emplace_back(a, b); }
  // Moves this node's child pairs onto the worklist so the first is next.
  void Flush() {
    for (size_t index = pending_.size(); index-- > 0;) work_.push_back(pending_[index]);
    pending_.clear();
  }

  template <typename T>
  void PushAll(const std::vector<Ref<const T>>& a, const std::vector<Ref<const T>>& b) {
    for (size_t index = 0; index < a.size(); ++index) Push(a[index].get(), b[index].get());
  }

  bool BindVars(const VarNode* a, const VarNode* b) {
    auto [position, inserted] = vars_.emplace(a, b);
    if (!inserted && position->second != b) return false;
    auto [reverse, reverse_inserted] = reverse_vars_.emplace(b, a);
    if (!reverse_inserted && reverse->second != a) return false;
    if ((a->type_annotation == nullptr) != (b->type_annotation == nullptr)) return false;
    if (a->type_annotation) Push(a->type_annotation.get(), b->type_annotation.get());
    return true;
  }

  bool BindTypeVars(const std::vector<TypeVar>& a, const std::vector<TypeVar>& b) {
    if (a.size() != b.size()) return false;
    for (size_t index = 0; index < a.size(); ++index) type_vars_[a[index].get()] = b[index].get();
    return true;
  }

  bool Compare(const Node* a, const Node* b) {
    if (a == nullptr || b == nullptr) return a == b;
    if (a->kind() != b->kind()) return false;
    // Shared subexpressions are compared once per pair, so DAGs with heavy
    // sharing compare in linear time. Variables are paired globally, so a
    // repeated pair always gives the same answer.
    if (a->kind() != NodeKind::kVar && !compared_.insert({a, b}).second) return true;
    bool equal = CompareNode(a, b);
    Flush();
    return equal;
  }

  bool CompareNode(const Node* a, const Node* b) {
    switch (a->kind()) {
      case NodeKind::kTensorType: {
        auto* x = static_cast<const TensorTypeNode*>(a);
        auto* y = static_cast<const TensorTypeNode*>(b);
        return x->shape == y->shape && x->dtype == y->dtype;
      }
      case NodeKind::kTupleType: {
        auto* x = static_cast<const TupleTypeNode*>(a);
        auto* y = static_cast<const TupleTypeNode*>(b);
        if (x->fields.size() != y->fields.size()) return false;
        PushAll(x->fields, y->fields);
        return true;
      }
      case NodeKind::kFuncType: {
        auto* x = static_cast<const FuncTypeNode*>(a);
        auto* y = static_cast<const FuncTypeNode*>(b);
        if (x->params.size() != y->params.size() || !BindTypeVars(x->type_params, y->type_params))
          return false;
        PushAll(x->params, y->params);
        Push(x->ret.get(), y->ret.get());
        return true;
      }
      case NodeKind::kTypeVar: {
        auto found = type_vars_.find(static_cast<const TypeVarNode*>(a));
        return found != type_vars_.end() && found->second == b;
      }
      case NodeKind::kGlobalTypeVar:
        return static_cast<const GlobalTypeVarNode*>(a)->name ==
               static_cast<const GlobalTypeVarNode*>(b)->name;
      case NodeKind::kTypeCall: {
        auto* x = static_cast<const TypeCallNode*>(a);
        auto* y = static_cast<const TypeCallNode*>(b);
        if (x->adt->name != y->adt->name || x->args.size() != y->args.size()) return false;
        PushAll(x->args, y->args);
        return true;
      }
      case NodeKind::kRefType:
        Push(static_cast<const RefTypeNode*>(a)->value.get(),
             static_cast<const RefTypeNode*>(b)->value.get());
        return true;
      case NodeKind::kIncompleteType:
        return true;
      case NodeKind::kVar: {
        auto found = vars_.find(static_cast<const VarNode*>(a));
        if (found == vars_.end()) {  // free in both: pair them on first sight
          return BindVars(static_cast<const VarNode*>(a), static_cast<const VarNode*>(b));
        }
        return found->second == b;
      }
      case NodeKind::kGlobalVar:
        return static_cast<const GlobalVarNode*>(a)->name ==
               static_cast<const GlobalVarNode*>(b)->name;
      case NodeKind::kConstant:
        return TensorsEqual(*static_cast<const ConstantNode*>(a)->value,
                            *static_cast<const ConstantNode*>(b)->value);
      case NodeKind::kTuple: {
        auto* x = static_cast<const TupleNode*>(a);
        auto* y = static_cast<const TupleNode*>(b);
        if (x->fields.size() != y->fields.size()) return false;
        PushAll(x->fields, y->fields);
        return true;
      }
      case NodeKind::kTupleGetItem: {
        auto* x = static_cast<const TupleGetItemNode*>(a);
        auto* y = static_cast<const TupleGetItemNode*>(b);
        Push(x->tuple.get(), y->tuple.get());
        return x->index == y->index;
      }
      case NodeKind::kOp:
        return static_cast<const OpNode*>(a)->definition ==
               static_cast<const OpNode*>(b)->definition;
      case NodeKind::kCall: {
        auto* x = static_cast<const CallNode*>(a);
        auto* y = static_cast<const CallNode*>(b);
        if (x->args.size() != y->args.size() || x->attrs != y->attrs ||
            x->type_args.size() != y->type_args.size()) {
          return false;
        }
        Push(x->callee.get(), y->callee.get());
        PushAll(x->args, y->args);
        PushAll(x->type_args, y->type_args);
        return true;
      }
      case NodeKind::kFunction: {
        auto* x = static_cast<const FunctionNode*>(a);
        auto* y = static_cast<const FunctionNode*>(b);
        if (x->params.size() != y->params.size() || x->attrs != y->attrs ||
            (x->ret_type == nullptr) != (y->ret_type == nullptr) ||
            !BindTypeVars(x->type_params, y->type_params)) {
          return false;
        }
        for (size_t index = 0; index < x->params.size(); ++index) {
          if (!BindVars(x->params[index].get(), y->params[index].get())) return false;
        }
        if (x->ret_type) Push(x->ret_type.get(), y->ret_type.get());
        Push(x->body.get(), y->body.get());
        return true;
      }
      case NodeKind::kLet: {
        auto* x = static_cast<const LetNode*>(a);
        auto* y = static_cast<const LetNode*>(b);
        if (!BindVars(x->var.get(), y->var.get())) return false;
        Push(x->value.get(), y->value.get());
        Push(x->body.get(), y->body.get());
        return true;
      }
      case NodeKind::kIf: {
        auto* x = static_cast<const IfNode*>(a);
        auto* y = static_cast<const IfNode*>(b);
        Push(x->condition.get(), y->condition.get());
        Push(x->then_branch.get(), y->then_branch.get());
        Push(x->else_branch.get(), y->else_branch.get());
        return true;
      }
      case NodeKind::kMatch: {
        auto* x = static_cast<const MatchNode*>(a);
        auto* y = static_cast<const MatchNode*>(b);
        if (x->complete != y->complete || x->clauses.size() != y->clauses.size()) return false;
        Push(x->data.get(), y->data.get());
        for (size_t index = 0; index < x->clauses.size(); ++index) {
          Push(x->clauses[index].pattern.get(), y->clauses[index].pattern.get());
          Push(x->clauses[index].body.get(), y->clauses[index].body.get());
        }
        return true;
      }
      case NodeKind::kConstructor: {
        auto* x = static_cast<const ConstructorNode*>(a);
        auto* y = static_cast<const ConstructorNode*>(b);
        return x->name == y->name && x->tag == y->tag && x->adt->name == y->adt->name;
      }
      case NodeKind::kRefCreate:
        Push(static_cast<const RefCreateNode*>(a)->value.get(),
             static_cast<const RefCreateNode*>(b)->value.get());
        return true;
      case NodeKind::kRefRead:
        Push(static_cast<const RefReadNode*>(a)->ref.get(),
             static_cast<const RefReadNode*>(b)->ref.get());
        return true;
      case NodeKind::kRefWrite:
        Push(static_cast<const RefWriteNode*>(a)->ref.get(),
             static_cast<const RefWriteNode*>(b)->ref.get());
        Push(static_cast<const RefWriteNode*>(a)->value.get(),
             static_cast<const RefWriteNode*>(b)->value.get());
        return true;
      case NodeKind::kPatternWildcard:
        return true;
      case NodeKind::kPatternVar:
        return BindVars(static_cast<const PatternVarNode*>(a)->var.get(),
                        static_cast<const PatternVarNode*>(b)->var.get());
      case NodeKind::kPatternConstructor: {
        auto* x = static_cast<const PatternConstructorNode*>(a);
        auto* y = static_cast<const PatternConstructorNode*>(b);
        if (x->patterns.size() != y->patterns.size()) return false;
        Push(x->constructor.get(), y->constructor.get());
        PushAll(x->patterns, y->patterns);
        return true;
      }
      case NodeKind::kPatternTuple: {
        auto* x = static_cast<const PatternTupleNode*>(a);
        auto* y = static_cast<const PatternTupleNode*>(b);
        if (x->patterns.size() != y->patterns.size()) return false;
        PushAll(x->patterns, y->patterns);
        return true;
      }
    }
    return false;
  }

  struct PairHash {
    size_t operator()(const std::pair<const Node*, const Node*>& pair) const {
      return std::hash<const void*>()(pair.first) * 31 + std::hash<const void*>()(pair.second);
    }
  };

  std::unordered_set<std::pair<const Node*, const Node*>, PairHash> compared_;
  std::vector<std::pair<const Node*, const Node*>> work_;
  std::vector<std::pair<const Node*, const Node*>> pending_;
  std::unordered_map<const VarNode*, const VarNode*> vars_;
  std::unordered_map<const VarNode*, const VarNode*> reverse_vars_;
  std::unordered_map<const TypeVarNode*, const TypeVarNode*> type_vars_;
};

}  // namespace

bool StructurallyEqual(const Expr& a, const Expr& b) {
  return EqualityChecker().Run(a.get(), b.get());
}

bool StructurallyEqual(const Type& a, const Type& b) {
  return EqualityChecker().Run(a.get(), b.get());
}

bool StructurallyEqual(const Module& a, const Module& b) {
  if (a.functions().size() != b.functions().size() ||
      a.type_definitions().size() != b.type_definitions().size()) {
    return false;
  }
  for (size_t index = 0; index < a.type_definitions().size(); ++index) {
    const TypeDefinition& x = a.type_definitions()[index];
    const TypeDefinition& y = b.type_definitions()[index];
    if (x.name->name != y.name->name || x.constructors.size() != y.constructors.size() ||
        x.type_params.size() != y.type_params.size()) {
      return false;
    }
    for (size_t ctor = 0; ctor < x.constructors.size(); ++ctor) {
      const Constructor& left = x.constructors[ctor];
      const Constructor& right = y.constructors[ctor];
      if (left->name != right->name || left->inputs.size() != right->inputs.size()) return false;
      // Constructor inputs mention the definition's type parameters.
      Type left_type = FuncType(left->inputs, UnitType(), x.type_params);
      Type right_type = FuncType(right->inputs, UnitType(), y.type_params);
      if (!StructurallyEqual(left_type, right_type)) return false;
    }
  }
  for (size_t index = 0; index < a.functions().size(); ++index) {
    const GlobalFunction& x = a.functions()[index];
    const GlobalFunction& y = b.functions()[index];
    if (x.name->name != y.name->name || !StructurallyEqual(Expr(x.function), Expr(y.function)))
      return false;
  }
  return true;
}

}  // namespace relay::ir
