// Gradients of operators: for each differentiable operator, how the
// gradients of its inputs follow from the gradient of its output (the
// vector-Jacobian product), written as Relay expressions.
//
// The operator table (kernels/operator.h) says of each operator whether it
// has a gradient (Differentiability); the rules themselves live here, one
// file per operator family as in kernels/operators/, because they build
// compiler IR, which the kernels library does not know. A test checks that
// the two agree: every operator marked kGradient has a rule, and no other.
//
// A rule sees the original, type-checked call (for its attributes and the
// types of its inputs and output) and expressions for the values it needs;
// it returns untyped expressions, which the automatic differentiation pass
// places and type inference types. Rules use only operators that have
// gradients themselves, so a gradient program can be differentiated again.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "compiler/ir/expr.h"
#include "kernels/attributes.h"

namespace relay::passes {

struct GradientContext {
  // The call being differentiated, type-checked: attributes, the inputs'
  // and the output's checked types. Its argument expressions are not to be
  // reused: `inputs` holds their values.
  const ir::CallNode& call;
  // The values of the call's inputs (variables or projections of them).
  std::vector<ir::Expr> inputs;
  // The value of the call's output.
  ir::Expr output;
  // The gradient of the output: a tensor of the output's type, or a tuple
  // of them for an operator with a tuple result.
  ir::Expr output_gradient;

  // The checked type of input `index` / of the output.
  const ir::Type& input_type(size_t index) const;
  const ir::Type& output_type() const;
};

// One entry per input of the call: the gradient of that input, with the
// input's type (a tuple of gradients for a tuple input such as
// concatenate's), or null where the input has none (an integer index, a
// shape). Rules may assume every floating-point input needs its gradient.
using GradientRule = std::function<std::vector<ir::Expr>(const GradientContext&)>;

// The rule for operator `name`, or null when it has none.
const GradientRule* FindGradientRule(std::string_view name);
// Every operator that has a rule, for the consistency test.
std::vector<std::string_view> OperatorsWithGradientRules();

// ---- building blocks for rules ------------------------------------------------------------

// A call of operator `name` with `attrs`, normalised by its schema (a
// wrong attribute is an internal error: rules are ours).
ir::Expr CallOperator(std::string_view name, std::vector<ir::Expr> args,
                      const kernels::Attrs& attrs = {});
// A float scalar constant of `dtype`.
ir::Expr ScalarConstant(double value, DType dtype);
// `gradient` summed down to `like`'s shape (collapse_sum_like), where
// broadcasting may have grown it; `gradient` itself when `gradient_type`
// and `like_type` are the same tensor type with every dimension known.
ir::Expr SumToShapeOf(const ir::Expr& gradient, const ir::Type& gradient_type, const ir::Expr& like,
                      const ir::Type& like_type);

}  // namespace relay::passes

namespace relay::passes::operator_gradients {
// Short forms the families' rules share.
inline ir::Expr Op(std::string_view name, std::vector<ir::Expr> args,
                   const kernels::Attrs& attrs = {}) {
  return CallOperator(name, std::move(args), attrs);
}
inline ir::Expr Project(const ir::Expr& tuple, int index) {
  return ir::Make<ir::TupleGetItemNode>(tuple, index);
}
inline ir::Expr Scalar(double value, DType dtype) {
  return ScalarConstant(value, dtype);
}
// The tensor type `type` is (an internal error if it is not: rules see
// type-checked calls).
const ir::TensorTypeNode& TensorTypeOf(const ir::Type& type);
inline DType DTypeOfTensor(const ir::Type& type) {
  return TensorTypeOf(type).dtype;
}

// Each family adds its rules; registry.cc calls them all, once.
using RuleTable = std::vector<std::pair<std::string_view, GradientRule>>;
void AddElementwiseGradients(RuleTable& table);
void AddReductionGradients(RuleTable& table);
void AddTransformGradients(RuleTable& table);
void AddNeuralNetworkGradients(RuleTable& table);
}  // namespace relay::passes::operator_gradients
