#include "compiler/passes/fuse_operators.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;
using kernels::FusionPattern;

bool IsTupleType(const Type& type) {
  return type && type->kind() == NodeKind::kTupleType;
}

// The operator of a call that may join a fused kernel, or null: tensors in
// and out, a compute definition, an output shape that depends on shapes.
const kernels::OperatorDefinition* FusableOperator(const Expr& expr) {
  const auto* call = As<CallNode>(expr);
  if (call == nullptr) return nullptr;
  const auto* op = As<OpNode>(call->callee);
  if (op == nullptr) return nullptr;
  const kernels::OperatorDefinition& definition = *op->definition;
  if (definition.pattern == FusionPattern::kOpaque || !definition.compute ||
      definition.shape_dependence != kernels::ShapeDependence::kInputShapes ||
      IsTupleType(call->checked_type())) {
    return nullptr;
  }
  for (const Expr& arg : call->args) {
    if (IsTupleType(arg->checked_type())) return nullptr;
  }
  return &definition;
}

bool IsAnchor(FusionPattern pattern) {
  return pattern == FusionPattern::kOutElementwiseFusable || pattern == FusionPattern::kCommReduce;
}
bool IsPointwise(FusionPattern pattern) {
  return pattern == FusionPattern::kElementwise || pattern == FusionPattern::kBroadcast;
}
bool IsInjective(FusionPattern pattern) {
  return pattern == FusionPattern::kElementwise || pattern == FusionPattern::kBroadcast ||
         pattern == FusionPattern::kInjective;
}

// Whether `expr` is a call of nn.pad in constant mode: as a group's root, it
// stores each of its data's elements unchanged, shifted into the padding,
// which the schedules of anchors can do as they store their elements
// (cpu_kernels: a contraction's tiles stored padded).
bool IsConstantPad(const Expr& expr) {
  const auto* call = As<CallNode>(expr);
  const auto* op = call ? As<OpNode>(call->callee) : nullptr;
  if (op == nullptr || op->name() != "nn.pad") return false;
  for (const auto& [name, value] : call->attrs) {
    if (name == "pad_mode") return value.as_string() == "constant";
  }
  return true;  // constant is the default
}

// Whether a tensor of `type` is small enough that computing it again, where
// a kernel uses it twice, costs less than a kernel of its own: a kernel
// call costs about a microsecond, a few thousand operations. Not a scalar:
// the VM computes arithmetic on those itself, without a kernel.
bool IsSmallTensor(const Type& type) {
  const auto* tensor = As<TensorTypeNode>(type);
  if (tensor == nullptr || tensor->shape.empty()) return false;
  int64_t elements = 1;
  for (int64_t extent : tensor->shape) {
    if (extent == kAnyDim) return false;
    elements *= extent;
    if (elements > kMaximumRepeatedElements) return false;
  }
  return true;
}

// Whether a producer with pattern `producer` may be computed inside the
// kernel of its user, an operator with pattern `user`.
bool MayAbsorb(FusionPattern user, FusionPattern producer) {
  switch (user) {
    case FusionPattern::kElementwise:
    case FusionPattern::kBroadcast:
      return IsInjective(producer) || IsAnchor(producer);
    case FusionPattern::kInjective:
    case FusionPattern::kCommReduce:
      return IsInjective(producer);
    default:
      return false;
  }
}

class Fuser {
 public:
  explicit Fuser(const Expr& body) {
    PostOrderVisit(body, [&](const Expr& expr) {
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) ++uses_[var];
      }
    });
  }

  // Groups the operator bindings of one let chain (and of the scopes nested
  // in it, recursively).
  Expr Rewrite(const Expr& root) {
    // The chain's bindings, then its body as a binding without a variable.
    std::vector<Binding> bindings;
    Expr expr = root;
    while (const auto* let = As<LetNode>(expr)) {
      bindings.push_back(MakeBinding(let->var, RewriteOne(let->value)));
      expr = let->body;
    }
    bindings.push_back(MakeBinding(Var(), RewriteOne(expr)));
    AssignGroups(bindings);

    // Each group is computed where its root was bound; its other members
    // disappear into it.
    std::unordered_map<const VarNode*, Expr> member_trees;
    Expr body;
    for (size_t index = 0; index < bindings.size(); ++index) {
      Binding& binding = bindings[index];
      if (binding.definition != nullptr) {
        Expr tree = GroupTree(bindings, index, member_trees);
        if (binding.root != index) {
          member_trees[binding.var.get()] = tree;
          continue;
        }
        binding.value = Finish(binding.group_size, tree, binding.value);
      }
      if (index + 1 == bindings.size()) body = binding.value;
    }
    for (size_t index = bindings.size() - 1; index-- > 0;) {
      const Binding& binding = bindings[index];
      if (binding.definition == nullptr || binding.root == index) {
        body = TypedLet(binding.var, binding.value, body);
      }
    }
    return body;
  }

 private:
  struct Binding {
    Var var;  // null for the chain's body
    Expr value;
    // Null for values that are not fusable operator calls.
    const kernels::OperatorDefinition* definition = nullptr;
    // The binding whose kernel computes this one (itself for a group's root).
    size_t root = 0;
    // How many times the group's kernel evaluates this value per element
    // it stores: 1, or more where it is used twice in the group (or by a
    // value used twice).
    int evaluations = 1;
    // For a group's root: the group's members and anchors.
    size_t group_size = 0;
    int group_anchors = 0;
    // Whether this value and every member between it and the group's root
    // are elementwise or broadcast operators: the root's element is then a
    // pointwise function of this value's element at the same position (or,
    // where the root is a constant pad, at that position shifted into the
    // padding).
    bool pointwise_to_root = false;
  };

  // Whether moving an operator past this binding could keep the
  // operator's inputs alive longer (a call, a closure, a match: anything
  // but another operator call or a binding that only names a value: a
  // tuple's field, a variable, a constant).
  static bool IsBarrier(const Binding& binding) {
    if (binding.definition != nullptr) return false;
    switch (binding.value->kind()) {
      case NodeKind::kTupleGetItem:
      case NodeKind::kVar:
      case NodeKind::kConstant:
        return false;
      default:
        return true;
    }
  }

  static Binding MakeBinding(const Var& var, Expr value) {
    Binding binding{.var = var, .value = value, .definition = FusableOperator(value)};
    return binding;
  }

  Expr RewriteOne(const Expr& expr) {
    if (const auto* function = As<FunctionNode>(expr)) {
      if (IsPrimitive(*function)) return expr;
      return WithBody(Function(function), Rewrite(function->body));
    }
    if (expr->kind() == NodeKind::kLet) return Rewrite(expr);
    std::vector<Expr> children = ExprChildren(expr);
    const bool scopes = expr->kind() == NodeKind::kIf || expr->kind() == NodeKind::kMatch;
    for (size_t index = 0; index < children.size(); ++index) {
      if (scopes && index > 0) children[index] = Rewrite(children[index]);
    }
    return WithTypedChildren(expr, children);
  }

  // Decides, from the chain's end backwards, which group each operator
  // binding joins: the group of its users when they all lie in one group
  // that may compute it, otherwise a group of its own.
  void AssignGroups(std::vector<Binding>& bindings) {
    std::unordered_map<const VarNode*, size_t> position;
    for (size_t index = 0; index + 1 < bindings.size(); ++index) {
      position[bindings[index].var.get()] = index;
    }
    // users[i]: the operator bindings using binding i's value, once per use.
    std::vector<std::vector<size_t>> users(bindings.size());
    for (size_t index = 0; index < bindings.size(); ++index) {
      if (bindings[index].definition == nullptr) continue;
      for (const Expr& arg : As<CallNode>(bindings[index].value)->args) {
        const auto* var = As<VarNode>(arg);
        auto producer = var ? position.find(var) : position.end();
        if (producer != position.end()) users[producer->second].push_back(index);
      }
    }
    // Just past the latest binding before each position that a group may
    // not move a value across (see IsBarrier).
    std::vector<size_t> barrier_before(bindings.size() + 1, 0);
    for (size_t index = 0; index < bindings.size(); ++index) {
      barrier_before[index + 1] = IsBarrier(bindings[index]) ? index + 1 : barrier_before[index];
    }
    for (size_t index = bindings.size(); index-- > 0;) {
      Binding& binding = bindings[index];
      if (binding.definition == nullptr) continue;
      binding.root = index;
      if (std::optional<size_t> root =
              JoinableGroup(bindings, index, users[index], barrier_before)) {
        binding.root = *root;
        binding.evaluations = Evaluations(bindings, users[index]);
        binding.pointwise_to_root =
            IsPointwise(binding.definition->pattern) &&
            std::all_of(users[index].begin(), users[index].end(),
                        [&](size_t user) { return bindings[user].pointwise_to_root; });
        ++bindings[*root].group_size;
        bindings[*root].group_anchors += IsAnchor(binding.definition->pattern) ? 1 : 0;
        continue;
      }
      binding.group_size = 1;
      binding.group_anchors = IsAnchor(binding.definition->pattern) ? 1 : 0;
      binding.pointwise_to_root =
          IsPointwise(binding.definition->pattern) || IsConstantPad(binding.value);
    }
  }

  // How many times a kernel evaluates a value with these users per element
  // it stores (capped, so that it cannot overflow).
  static int Evaluations(const std::vector<Binding>& bindings, const std::vector<size_t>& users) {
    int evaluations = 0;
    for (size_t user : users) {
      evaluations = std::min(evaluations + bindings[user].evaluations, kMaximumEvaluations + 1);
    }
    return evaluations;
  }

  // The root of the group binding `index` may join, if any.
  std::optional<size_t> JoinableGroup(const std::vector<Binding>& bindings, size_t index,
                                      const std::vector<size_t>& users,
                                      const std::vector<size_t>& barrier_before) {
    const Binding& binding = bindings[index];
    // Every use must be an operand of an operator in this chain: a value
    // used in a nested scope, by anything else, or as the chain's result is
    // needed as a tensor of its own.
    if (users.empty() || uses_[binding.var.get()] != static_cast<int>(users.size())) {
      return std::nullopt;
    }
    const size_t root = bindings[users.front()].root;
    const FusionPattern pattern = binding.definition->pattern;
    for (size_t user : users) {
      // A constant pad ending a group stores an anchor's elements as they
      // are, shifted (see IsConstantPad), as an elementwise user would.
      const bool padded_anchor =
          IsAnchor(pattern) && user == root && IsConstantPad(bindings[user].value);
      if (bindings[user].root != root ||
          !(padded_anchor || MayAbsorb(bindings[user].definition->pattern, pattern))) {
        return std::nullopt;
      }
    }
    const int evaluations = Evaluations(bindings, users);
    if (bindings[root].group_size + 1 > kMaximumGroup) return std::nullopt;
    // An anchor is computed once per kernel: never inside a value the
    // kernel evaluates repeatedly, and one at most. Its epilogue is
    // pointwise: its schedule computes each output element from the
    // anchor's element at the same position, or stores it shifted into a
    // constant padding that ends the group (a convolution's result padded
    // for the next one); a transpose, say, after a convolution would move
    // its elements: that gets a kernel of its own.
    if (IsAnchor(pattern) && (evaluations > 1 || bindings[root].group_anchors > 0 ||
                              !std::all_of(users.begin(), users.end(), [&](size_t user) {
                                return bindings[user].pointwise_to_root;
                              }))) {
      return std::nullopt;
    }
    if (evaluations > 1 &&
        (evaluations > kMaximumEvaluations || !IsSmallTensor(binding.value->checked_type()))) {
      return std::nullopt;
    }
    if (barrier_before[root + 1] > index) return std::nullopt;
    return root;
  }

  // The expression of binding `index` over the group's operands, with the
  // values of its members (already built, in `member_trees`) in place of
  // their variables.
  static Expr GroupTree(const std::vector<Binding>& bindings, size_t index,
                        const std::unordered_map<const VarNode*, Expr>& member_trees) {
    const auto* call = As<CallNode>(bindings[index].value);
    std::vector<Expr> children{call->callee};
    for (const Expr& arg : call->args) {
      const auto* var = As<VarNode>(arg);
      auto member = var ? member_trees.find(var) : member_trees.end();
      children.push_back(member != member_trees.end() ? member->second : arg);
    }
    return WithTypedChildren(bindings[index].value, children);
  }

  // A group of one operator stays a plain call; a larger one becomes a
  // call of a primitive function whose parameters are the group's
  // distinct operands.
  static Expr Finish(size_t size, const Expr& tree, const Expr& call) {
    if (size == 1) return call;
    std::vector<Expr> operands;
    std::unordered_map<const ExprNode*, Var> params;
    std::vector<Var> param_list;
    // Rebuild the tree over parameters, in evaluation order. A member used
    // twice is one node of the tree, rebuilt once.
    std::unordered_map<const ExprNode*, Expr> rebuilt;
    PostOrderVisit(tree, [&](const Expr& expr) {
      const auto* node = As<CallNode>(expr);
      if (node == nullptr) return;
      std::vector<Expr> children{node->callee};
      for (const Expr& arg : node->args) {
        auto inner = rebuilt.find(arg.get());
        if (inner != rebuilt.end()) {
          children.push_back(inner->second);
          continue;
        }
        auto [param, inserted] = params.try_emplace(arg.get());
        if (inserted) {
          param->second = FreshVar("p" + std::to_string(param_list.size()), arg);
          param_list.push_back(param->second);
          operands.push_back(arg);
        }
        children.push_back(param->second);
      }
      rebuilt[expr.get()] = WithTypedChildren(expr, children);
    });
    Expr body = rebuilt.at(tree.get());
    Expr function = Make<FunctionNode>(
        param_list, body, body->checked_type(), std::vector<TypeVar>{},
        kernels::Attrs{{kPrimitiveAttr, kernels::AttrValue::Int(1)}}, call->span());
    Expr result =
        Make<CallNode>(function, operands, kernels::Attrs{}, std::vector<Type>{}, call->span());
    result->set_checked_type(call->checked_type());
    return result;
  }

  std::unordered_map<const VarNode*, int> uses_;
};

}  // namespace

Function FuseOperators(const Function& function) {
  return WithBody(function, Fuser(function->body).Rewrite(function->body));
}

}  // namespace relay::passes
