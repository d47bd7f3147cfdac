#include "compiler/passes/simplify_batch_norm.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/ir/type.h"
#include "compiler/passes/pass_util.h"
#include "kernels/attributes.h"
#include "relay/devices.h"
#include "relay/tensor.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

// A batch_norm bound by a let whose tuple is only projected to field 0.
struct BatchNorm {
  const CallNode* call = nullptr;
  Var output;  // what its `.0` projections become
};

const CallNode* BatchNormCall(const Expr& value) {
  const auto* call = As<CallNode>(value);
  const auto* op = call != nullptr ? As<OpNode>(call->callee) : nullptr;
  if (op == nullptr || op->name() != "nn.batch_norm" || call->args.size() != 5) return nullptr;
  const auto* data = As<TensorTypeNode>(call->args[0]->checked_type());
  if (data == nullptr || (data->dtype != DType::kFloat32 && data->dtype != DType::kFloat64))
    return nullptr;
  for (const Expr& arg : call->args) {
    if (As<TensorTypeNode>(arg->checked_type()) == nullptr) return nullptr;
  }
  return call;
}

Expr ScalarConstant(double value, DType dtype, const Span& span) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  if (dtype == DType::kFloat32) {
    *tensor->data<float>() = static_cast<float>(value);
  } else {
    *tensor->data<double>() = value;
  }
  tensor->MarkImmutable();
  Expr constant = Make<ConstantNode>(tensor, span);
  constant->set_checked_type(Make<TensorTypeNode>(std::vector<int64_t>{}, dtype));
  return constant;
}

class BatchNormRewriter : public TypedExprMutator {
 public:
  explicit BatchNormRewriter(const Expr& body) {
    std::unordered_map<const VarNode*, int> other_uses;
    PostOrderVisit(body, [&](const Expr& expr) {
      if (const auto* let = As<LetNode>(expr)) {
        if (const CallNode* call = BatchNormCall(let->value)) {
          const auto* tuple = As<TupleTypeNode>(call->checked_type());
          Var output = Make<VarNode>(let->var->name_hint + "_normalized", tuple->fields[0],
                                     let->var->span());
          output->set_checked_type(tuple->fields[0]);
          batch_norms_.emplace(let->var.get(), BatchNorm{call, output});
        }
      }
      if (const auto* projection = As<TupleGetItemNode>(expr); projection && projection->index == 0)
        return;
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) ++other_uses[var];
      }
    });
    std::erase_if(batch_norms_,
                  [&](const auto& entry) { return other_uses.count(entry.first) > 0; });
  }

 protected:
  Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
    if (const auto* projection = As<TupleGetItemNode>(rebuilt)) {
      const auto* var = As<VarNode>(projection->tuple);
      auto found = var != nullptr ? batch_norms_.find(var) : batch_norms_.end();
      if (found != batch_norms_.end()) return found->second.output;
      return rebuilt;
    }
    if (const auto* let = As<LetNode>(rebuilt)) {
      auto found = batch_norms_.find(let->var.get());
      if (found != batch_norms_.end())
        return WrapInLets(ScaleAndShift(found->second, original->span()), let->body);
    }
    return rebuilt;
  }

 private:
  // The bindings that compute the batch_norm's `.0`, ending in its output.
  static Bindings ScaleAndShift(const BatchNorm& batch_norm, const Span& span) {
    const CallNode& call = *batch_norm.call;
    const auto* data_type = As<TensorTypeNode>(call.args[0]->checked_type());
    const int64_t rank = int64_t(data_type->shape.size());
    int64_t axis = 1;
    double epsilon = 1e-5;
    bool center = true, scale = true;
    for (const auto& [name, value] : call.attrs) {
      if (name == "axis") axis = value.as_int();
      if (name == "epsilon") epsilon = value.as_float();
      if (name == "center") center = value.as_bool();
      if (name == "scale") scale = value.as_bool();
    }
    if (axis < 0) axis += rank;
    Bindings bindings;
    auto bind = [&](const std::string& name, Expr value) {
      Var var = FreshVar(name, value);
      bindings.emplace_back(var, std::move(value));
      return Expr(var);
    };
    const Expr& data = call.args[0];
    const Expr& gamma = call.args[1];
    const Expr& beta = call.args[2];
    const Expr& mean = call.args[3];
    const Expr& variance = call.args[4];
    Expr factor = bind(
        "inverse_deviation",
        OperatorCall(
            "rsqrt",
            {bind("variance",
                  OperatorCall("add", {variance, ScalarConstant(epsilon, data_type->dtype, span)},
                               {}, span))},
            {}, span));
    if (scale) factor = bind("scale", OperatorCall("multiply", {gamma, factor}, {}, span));
    Expr shift = bind("shifted_mean", OperatorCall("multiply", {mean, factor}, {}, span));
    shift = bind("shift", center ? OperatorCall("subtract", {beta, shift}, {}, span)
                                 : OperatorCall("negative", {shift}, {}, span));
    // Per-channel vectors broadcast along the axes after the channel's.
    const int64_t trailing = rank - 1 - axis;
    if (trailing > 0) {
      const kernels::Attrs expand{{"axis", kernels::AttrValue::Int(1)},
                                  {"num_newaxis", kernels::AttrValue::Int(trailing)}};
      factor = bind("scale", OperatorCall("expand_dims", {factor}, expand, span));
      shift = bind("shift", OperatorCall("expand_dims", {shift}, expand, span));
    }
    Expr scaled = bind("scaled", OperatorCall("multiply", {data, factor}, {}, span));
    Expr output = OperatorCall("add", {scaled, shift}, {}, span);
    bindings.emplace_back(batch_norm.output, std::move(output));
    return bindings;
  }

  std::unordered_map<const VarNode*, BatchNorm> batch_norms_;
};

}  // namespace

Function SimplifyBatchNorm(const Function& function) {
  BatchNormRewriter rewriter(function->body);
  return WithBody(function, rewriter.Mutate(function->body));
}

}  // namespace relay::passes
