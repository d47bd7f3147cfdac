#include "compiler/passes/loop_invariant_projection.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/type.h"
#include "compiler/passes/lambda_lifting.h"
#include "compiler/passes/pass_util.h"
#include "kernels/attributes.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

const CallNode* OperatorCall(const Expr& expr, const char* name) {
  const auto* call = As<CallNode>(expr);
  if (call == nullptr) return nullptr;
  const auto* op = As<OpNode>(call->callee);
  return op != nullptr && op->name() == name ? call : nullptr;
}

const TensorTypeNode* TensorTypeOf(const Expr& expr) {
  return expr->checked_type() ? As<TensorTypeNode>(expr->checked_type()) : nullptr;
}

// Hoists the projections out of one recursive function literal.
class LoopProjections {
 public:
  explicit LoopProjections(const Function& loop) : loop_(loop) {
    for (const VarNode* var : FreeVariables(*loop)) invariant_.insert(var);
    for (const Var& param : loop->params) counters_.insert(param.get());
  }

  // The loop with its projections replaced; their bindings, to precede the
  // loop's, go to `hoisted`.
  Function Hoist(Bindings& hoisted) {
    std::unordered_map<const VarNode*, const CallNode*> slices;  // let var -> its take
    PostOrderVisit(loop_->body, [&](const Expr& expr) {
      const auto* let = As<LetNode>(expr);
      if (let == nullptr) return;
      if (const CallNode* take = OperatorCall(let->value, "take"); take && IsStepSlice(*take))
        slices[let->var.get()] = take;
    });
    if (slices.empty()) return loop_;

    std::unordered_map<const VarNode*, Expr> new_values;  // let var -> take of a projection
    std::map<std::tuple<const ExprNode*, const ExprNode*, std::string>, Var> projections;
    PostOrderVisit(loop_->body, [&](const Expr& expr) {
      const auto* let = As<LetNode>(expr);
      if (let == nullptr) return;
      const CallNode* dense = OperatorCall(let->value, "nn.dense");
      if (dense == nullptr || !IsInvariant(dense->args[1])) return;
      const auto* input = As<VarNode>(dense->args[0]);
      auto slice = input != nullptr ? slices.find(input) : slices.end();
      if (slice == slices.end()) return;
      const CallNode& take = *slice->second;
      const TensorTypeNode* sequence_type = TensorTypeOf(take.args[0]);
      const TensorTypeNode* step_type = TensorTypeOf(let->value);
      if (sequence_type == nullptr || step_type == nullptr) return;

      std::string attrs;
      for (const auto& [name, value] : dense->attrs) attrs += name + "=" + value.ToString() + ",";
      Var& projected = projections[{take.args[0].get(), dense->args[1].get(), attrs}];
      if (!projected) {
        Expr product =
            Make<CallNode>(dense->callee, std::vector<Expr>{take.args[0], dense->args[1]},
                           dense->attrs, dense->type_args, dense->span());
        std::vector<int64_t> shape{sequence_type->shape[0]};
        shape.insert(shape.end(), step_type->shape.begin(), step_type->shape.end());
        product->set_checked_type(Make<TensorTypeNode>(shape, step_type->dtype));
        projected = FreshVar("projected", product);
        hoisted.emplace_back(projected, product);
      }
      Expr row = Make<CallNode>(take.callee, std::vector<Expr>{projected, take.args[1]}, take.attrs,
                                take.type_args, dense->span());
      row->set_checked_type(let->value->checked_type());
      new_values[let->var.get()] = row;
    });
    if (new_values.empty()) return loop_;
    return WithBody(loop_, ReplaceValues(loop_->body, new_values));
  }

 private:
  // take(%seq, %counter, axis=0) of a sequence the loop does not change.
  bool IsStepSlice(const CallNode& take) const {
    const TensorTypeNode* sequence_type = TensorTypeOf(take.args[0]);
    if (sequence_type == nullptr || sequence_type->shape.empty()) return false;
    const auto& axis = kernels::GetAttr(take.attrs, "axis");
    if (axis.is_none() || kernels::GetAttr(take.attrs, "batch_dims").as_int() != 0) return false;
    const int64_t rank = static_cast<int64_t>(sequence_type->shape.size());
    if (axis.as_int() != 0 && axis.as_int() != -rank) return false;
    const auto* index = As<VarNode>(take.args[1]);
    return IsInvariant(take.args[0]) && index != nullptr && counters_.count(index) != 0;
  }

  bool IsInvariant(const Expr& operand) const {
    if (operand->kind() == NodeKind::kConstant) return true;
    const auto* var = As<VarNode>(operand);
    return var != nullptr && invariant_.count(var) != 0;
  }

  static Expr ReplaceValues(const Expr& body,
                            const std::unordered_map<const VarNode*, Expr>& new_values) {
    class Replacer : public TypedExprMutator {
     public:
      explicit Replacer(const std::unordered_map<const VarNode*, Expr>& new_values)
          : new_values_(new_values) {}

     protected:
      Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
        const auto* let = As<LetNode>(rebuilt);
        auto found = let != nullptr ? new_values_.find(let->var.get()) : new_values_.end();
        if (found != new_values_.end()) {
          Expr replaced = Make<LetNode>(let->var, found->second, let->body, let->span());
          replaced->set_checked_type(original->checked_type());
          return replaced;
        }
        return rebuilt;
      }

     private:
      const std::unordered_map<const VarNode*, Expr>& new_values_;
    };
    return Replacer(new_values).Mutate(body);
  }

  const Function loop_;
  std::unordered_set<const VarNode*> invariant_;
  std::unordered_set<const VarNode*> counters_;
};

class ProjectionHoister {
 public:
  Expr Rewrite(const Expr& root) {
    Bindings bindings;
    bool changed = false;
    Expr expr = root;
    while (const auto* let = As<LetNode>(expr)) {
      Expr value;
      if (const auto* function = As<FunctionNode>(let->value);
          function != nullptr && !IsPrimitive(*function)) {
        // Inner loops first: what they hoist may then leave this one too.
        Function rewritten = WithBody(Function(function), Rewrite(function->body));
        if (CallsItself(*let->var, *rewritten)) {
          Bindings hoisted;
          rewritten = LoopProjections(rewritten).Hoist(hoisted);
          bindings.insert(bindings.end(), hoisted.begin(), hoisted.end());
          changed = changed || !hoisted.empty();
        }
        value = rewritten;
      } else {
        value = RewriteNested(let->value);
      }
      changed = changed || value.get() != let->value.get();
      bindings.emplace_back(let->var, value);
      expr = let->body;
    }
    Expr tail = RewriteNested(expr);
    if (!changed && tail.get() == expr.get()) return root;
    return WrapInLets(bindings, tail);
  }

 private:
  Expr RewriteNested(const Expr& expr) {
    if (const auto* function = As<FunctionNode>(expr)) {
      if (IsPrimitive(*function)) return expr;
      return WithBody(Function(function), Rewrite(function->body));
    }
    std::vector<Expr> children = ExprChildren(expr);
    if (children.empty()) return expr;
    for (Expr& child : children) child = Rewrite(child);
    return WithTypedChildren(expr, children);
  }

  static bool CallsItself(const VarNode& self, const FunctionNode& function) {
    bool found = false;
    PostOrderVisit(function.body, [&](const Expr& expr) { found = found || expr.get() == &self; });
    return found;
  }
};

}  // namespace

Function HoistLoopInvariantProjections(const Function& function) {
  return WithBody(function, ProjectionHoister().Rewrite(function->body));
}

}  // namespace relay::passes
