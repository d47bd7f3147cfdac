#include "compiler/passes/constant_folding.h"

#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"
#include "relay/error.h"
#include "vm/interpreter/scalar_operators.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

bool HasTupleType(const Expr& expr) {
  return expr->checked_type() && expr->checked_type()->kind() == NodeKind::kTupleType;
}

// Whether a value of `type` is a tensor of known shape and at most the
// folding limit.
bool SmallStaticTensor(const Type& type) {
  const auto* tensor = As<TensorTypeNode>(type);
  if (tensor == nullptr) return false;
  size_t bytes = DTypeSize(tensor->dtype);
  for (int64_t dim : tensor->shape) {
    if (dim < 0) return false;  // `?`
    if (dim > 0 && bytes > kMaximumFoldedBytes / size_t(dim)) return false;
    bytes *= size_t(dim);
  }
  return bytes <= kMaximumFoldedBytes;
}

class ConstantFolder {
 public:
  Expr Rewrite(const Expr& root) {
    Bindings kept;
    Expr expr = root;
    bool changed = false;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value = RewriteOne(let->value);
      changed = changed || value.get() != let->value.get();
      expr = let->body;
      if (value->kind() == NodeKind::kConstant) {
        constants_[let->var.get()] = value;  // every use becomes the constant
        changed = true;
        continue;
      }
      if (const auto* tuple = As<TupleNode>(value)) tuples_[let->var.get()] = tuple;
      kept.emplace_back(let->var, std::move(value));
    }
    Expr body = RewriteOne(expr);
    if (!changed && body.get() == expr.get()) return root;
    return WrapInLets(kept, std::move(body));
  }

 private:
  Expr RewriteOne(const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kVar: {
        auto found = constants_.find(As<VarNode>(expr));
        return found == constants_.end() ? expr : found->second;
      }
      case NodeKind::kLet:
        return Rewrite(expr);
      case NodeKind::kFunction: {
        const auto* function = As<FunctionNode>(expr);
        if (IsPrimitive(*function)) return expr;
        return WithBody(Function(function), Rewrite(function->body));
      }
      case NodeKind::kIf: {
        const auto* branch = As<IfNode>(expr);
        Expr condition = RewriteOne(branch->condition);
        if (const auto* known = As<ConstantNode>(condition)) {
          if (known->value->dtype() == DType::kBool && known->value->shape().empty()) {
            const bool taken = *known->value->data<bool>();
            return Rewrite(taken ? branch->then_branch : branch->else_branch);
          }
        }
        return WithTypedChildren(
            expr, {condition, Rewrite(branch->then_branch), Rewrite(branch->else_branch)});
      }
      case NodeKind::kTupleGetItem: {
        const auto* item = As<TupleGetItemNode>(expr);
        if (const auto* var = As<VarNode>(item->tuple)) {
          auto tuple = tuples_.find(var);
          if (tuple != tuples_.end()) return RewriteOne(tuple->second->fields[size_t(item->index)]);
        }
        break;
      }
      default:
        break;
    }
    std::vector<Expr> children = ExprChildren(expr);
    for (Expr& child : children) child = RewriteOne(child);
    Expr rebuilt = WithTypedChildren(expr, children);
    if (const auto* call = As<CallNode>(rebuilt)) {
      if (Expr folded = Fold(*call)) return folded;
    }
    return rebuilt;
  }

  static Expr Fold(const CallNode& call) {
    const auto* op = As<OpNode>(call.callee);
    if (op == nullptr || !op->definition->has_kernel() || HasTupleType(Expr(&call)) ||
        !SmallStaticTensor(call.checked_type())) {
      return {};
    }
    std::vector<Ref<Tensor>> inputs;
    bool scalars = true;
    for (const Expr& arg : call.args) {
      const auto* constant = As<ConstantNode>(arg);
      if (constant == nullptr) return {};
      inputs.push_back(constant->value);
      scalars = scalars && constant->value->shape().empty();
    }
    Ref<Tensor> result;
    const vm::ScalarOperator scalar = vm::ScalarOperatorFor(op->name(), call.attrs);
    if (scalars && scalar != vm::ScalarOperator::kNone) {
      vm::ScalarPool pool;  // the result outlives it: the constant holds it
      result = vm::RunScalarOperator(scalar, inputs, pool);
    }
    if (!result) {
      try {
        result = kernels::RunOperator(op->name(), inputs, call.attrs);
      } catch (const Error&) {
        return {};  // reported at run time, if the program gets there
      }
    }
    Expr folded = Make<ConstantNode>(result, call.span());
    folded->set_checked_type(call.checked_type());
    return folded;
  }

  std::unordered_map<const VarNode*, Expr> constants_;
  std::unordered_map<const VarNode*, const TupleNode*> tuples_;
};

}  // namespace

Function FoldConstants(const Function& function) {
  return WithBody(function, ConstantFolder().Rewrite(function->body));
}

}  // namespace relay::passes
