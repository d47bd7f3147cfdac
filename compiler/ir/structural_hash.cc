#include "compiler/ir/structural_hash.h"

#include <cstring>
#include <unordered_map>
#include <vector>

namespace relay::ir {

namespace {

uint64_t Mix(uint64_t seed, uint64_t value) {
  // 64-bit variant of the boost::hash_combine recipe with a stronger finaliser.
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 12) + (seed >> 4);
  seed ^= seed >> 33;
  seed *= 0xff51afd7ed558ccdull;
  seed ^= seed >> 33;
  return seed;
}

uint64_t HashBytes(const void* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t index = 0; index < size; ++index) hash = (hash ^ bytes[index]) * 0x100000001b3ull;
  return hash;
}

uint64_t HashString(const std::string& text) {
  return HashBytes(text.data(), text.size());
}

uint64_t HashAttrValue(const kernels::AttrValue& value) {
  // Attribute values are short; their printed form is a faithful key.
  return HashString(value.ToString());
}

// Hashes nodes in post-order with an explicit stack. Binders are numbered
// when their binding node is first entered, before any use below it.
class Hasher {
 public:
  uint64_t Run(const Node* root) {
    stack_.push_back({root, false});
    while (!stack_.empty()) {
      auto [node, expanded] = stack_.back();
      if (hashes_.count(node)) {
        stack_.pop_back();
        continue;
      }
      if (!expanded) {
        stack_.back().second = true;
        Enter(node);
        std::vector<const Node*> children = Children(node);
        for (size_t index = children.size(); index-- > 0;) {
          if (children[index] && !hashes_.count(children[index]))
            stack_.push_back({children[index], false});
        }
        continue;
      }
      stack_.pop_back();
      hashes_[node] = Combine(node);
    }
    return hashes_.at(root);
  }

 private:
  void Bind(const VarNode* var) {
    if (!var_numbers_.count(var)) var_numbers_[var] = var_numbers_.size();
  }
  void BindTypeVars(const std::vector<TypeVar>& type_vars) {
    for (const TypeVar& var : type_vars) {
      if (!type_var_numbers_.count(var.get()))
        type_var_numbers_[var.get()] = type_var_numbers_.size();
    }
  }
  void BindPattern(const PatternNode* pattern) {
    if (const auto* var = As<PatternVarNode>(pattern)) Bind(var->var.get());
    if (const auto* constructor = As<PatternConstructorNode>(pattern)) {
      for (const Pattern& field : constructor->patterns) BindPattern(field.get());
    }
    if (const auto* tuple = As<PatternTupleNode>(pattern)) {
      for (const Pattern& field : tuple->patterns) BindPattern(field.get());
    }
  }

  void Enter(const Node* node) {
    if (const auto* function = As<FunctionNode>(node)) {
      BindTypeVars(function->type_params);
      for (const Var& param : function->params) Bind(param.get());
    } else if (const auto* let = As<LetNode>(node)) {
      Bind(let->var.get());
    } else if (const auto* match = As<MatchNode>(node)) {
      for (const Clause& clause : match->clauses) BindPattern(clause.pattern.get());
    } else if (const auto* function_type = As<FuncTypeNode>(node)) {
      BindTypeVars(function_type->type_params);
    }
  }

  static std::vector<const Node*> Children(const Node* node) {
    std::vector<const Node*> children;
    auto add = [&](const auto& ref) { children.push_back(ref.get()); };
    switch (node->kind()) {
      case NodeKind::kTupleType:
        for (const Type& field : As<TupleTypeNode>(node)->fields) add(field);
        break;
      case NodeKind::kFuncType:
        for (const Type& param : As<FuncTypeNode>(node)->params) add(param);
        add(As<FuncTypeNode>(node)->ret);
        break;
      case NodeKind::kTypeCall:
        for (const Type& arg : As<TypeCallNode>(node)->args) add(arg);
        break;
      case NodeKind::kRefType:
        add(As<RefTypeNode>(node)->value);
        break;
      case NodeKind::kVar:
        add(As<VarNode>(node)->type_annotation);
        break;
      case NodeKind::kTuple:
        for (const Expr& field : As<TupleNode>(node)->fields) add(field);
        break;
      case NodeKind::kTupleGetItem:
        add(As<TupleGetItemNode>(node)->tuple);
        break;
      case NodeKind::kCall:
        add(As<CallNode>(node)->callee);
        for (const Expr& arg : As<CallNode>(node)->args) add(arg);
        for (const Type& type : As<CallNode>(node)->type_args) add(type);
        break;
      case NodeKind::kFunction: {
        const auto* function = As<FunctionNode>(node);
        for (const Var& param : function->params) add(param);
        add(function->ret_type);
        add(function->body);
        break;
      }
      case NodeKind::kLet:
        add(As<LetNode>(node)->var);
        add(As<LetNode>(node)->value);
        add(As<LetNode>(node)->body);
        break;
      case NodeKind::kIf:
        add(As<IfNode>(node)->condition);
        add(As<IfNode>(node)->then_branch);
        add(As<IfNode>(node)->else_branch);
        break;
      case NodeKind::kMatch:
        add(As<MatchNode>(node)->data);
        for (const Clause& clause : As<MatchNode>(node)->clauses) {
          add(clause.pattern);
          add(clause.body);
        }
        break;
      case NodeKind::kRefCreate:
        add(As<RefCreateNode>(node)->value);
        break;
      case NodeKind::kRefRead:
        add(As<RefReadNode>(node)->ref);
        break;
      case NodeKind::kRefWrite:
        add(As<RefWriteNode>(node)->ref);
        add(As<RefWriteNode>(node)->value);
        break;
      case NodeKind::kPatternVar:
        add(As<PatternVarNode>(node)->var);
        break;
      case NodeKind::kPatternConstructor:
        add(As<PatternConstructorNode>(node)->constructor);
        for (const Pattern& field : As<PatternConstructorNode>(node)->patterns) add(field);
        break;
      case NodeKind::kPatternTuple:
        for (const Pattern& field : As<PatternTupleNode>(node)->patterns) add(field);
        break;
      default:
        break;
    }
    return children;
  }

  uint64_t ChildHash(const Node* child) const { return child ? hashes_.at(child) : 0x5bd1e995ull; }

  uint64_t Combine(const Node* node) {
    uint64_t hash = Mix(0, static_cast<uint64_t>(node->kind()) + 1);
    for (const Node* child : Children(node)) hash = Mix(hash, ChildHash(child));
    switch (node->kind()) {
      case NodeKind::kTensorType: {
        const auto* tensor = As<TensorTypeNode>(node);
        hash = Mix(hash, static_cast<uint64_t>(tensor->dtype));
        for (int64_t dimension : tensor->shape) hash = Mix(hash, static_cast<uint64_t>(dimension));
        break;
      }
      case NodeKind::kTypeVar: {
        auto found = type_var_numbers_.find(As<TypeVarNode>(node));
        hash = Mix(hash, found == type_var_numbers_.end() ? HashString(As<TypeVarNode>(node)->name)
                                                          : found->second);
        break;
      }
      case NodeKind::kGlobalTypeVar:
        hash = Mix(hash, HashString(As<GlobalTypeVarNode>(node)->name));
        break;
      case NodeKind::kTypeCall:
        hash = Mix(hash, HashString(As<TypeCallNode>(node)->adt->name));
        break;
      case NodeKind::kVar: {
        auto found = var_numbers_.find(As<VarNode>(node));
        if (found == var_numbers_.end()) {  // free: numbered on first sight, as equality pairs them
          Bind(As<VarNode>(node));
          found = var_numbers_.find(As<VarNode>(node));
        }
        hash = Mix(hash, found->second);
        break;
      }
      case NodeKind::kGlobalVar:
        hash = Mix(hash, HashString(As<GlobalVarNode>(node)->name));
        break;
      case NodeKind::kConstant: {
        const Tensor& tensor = *As<ConstantNode>(node)->value;
        hash = Mix(hash, static_cast<uint64_t>(tensor.dtype()));
        for (int64_t dimension : tensor.shape()) hash = Mix(hash, static_cast<uint64_t>(dimension));
        hash = Mix(hash, HashBytes(tensor.host_data(), tensor.byte_size()));
        break;
      }
      case NodeKind::kTupleGetItem:
        hash = Mix(hash, static_cast<uint64_t>(As<TupleGetItemNode>(node)->index));
        break;
      case NodeKind::kOp:
        hash = Mix(hash, HashString(As<OpNode>(node)->name()));
        break;
      case NodeKind::kCall:
        for (const auto& [name, value] : As<CallNode>(node)->attrs)
          hash = Mix(Mix(hash, HashString(name)), HashAttrValue(value));
        break;
      case NodeKind::kFunction:
        for (const auto& [name, value] : As<FunctionNode>(node)->attrs)
          hash = Mix(Mix(hash, HashString(name)), HashAttrValue(value));
        break;
      case NodeKind::kMatch:
        hash = Mix(hash, As<MatchNode>(node)->complete ? 1 : 2);
        break;
      case NodeKind::kConstructor:
        hash = Mix(hash, HashString(As<ConstructorNode>(node)->name));
        break;
      default:
        break;
    }
    return hash;
  }

  std::vector<std::pair<const Node*, bool>> stack_;
  std::unordered_map<const Node*, uint64_t> hashes_;
  std::unordered_map<const VarNode*, uint64_t> var_numbers_;
  std::unordered_map<const TypeVarNode*, uint64_t> type_var_numbers_;
};

}  // namespace

uint64_t StructuralHash(const Expr& expr) {
  return Hasher().Run(expr.get());
}
uint64_t StructuralHash(const Type& type) {
  return Hasher().Run(type.get());
}

}  // namespace relay::ir
