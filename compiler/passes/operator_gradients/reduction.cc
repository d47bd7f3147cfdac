// Gradients of the reductions (kernels/operators/reduction.cc): sum, mean,
// prod, max, min, variance and std. argmax, argmin, all and any give
// integers or bools, which carry no gradient.
//
// Each rule first puts the reduced axes back into the output's gradient
// (expand_dims where keepdims dropped them), so that it broadcasts against
// the input. Nothing here needs the input's dimensions: an input with `?`
// dimensions gets its gradient by broadcasting (broadcast_to_like) and by
// counting at run time, so the rules work for every shape the type checker
// accepts.
#include <optional>
#include <string>

#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "kernels/operator.h"

namespace relay::passes::operator_gradients {
namespace {

using ir::Expr;
using kernels::AttrValue;

// Which axes of the input a reduction call reduces, by the rule of its type
// relation: axis=None is every axis (exclude is then ignored); otherwise
// the listed axes (negative ones counting from the end), or with exclude
// every axis not listed.
struct Reduced {
  std::vector<bool> axes;  // per input axis
  bool keepdims = false;
};

Reduced ReducedAxes(const kernels::Attrs& attrs, size_t rank) {
  Reduced reduced;
  reduced.axes.assign(rank, true);
  const AttrValue& axis = kernels::GetAttr(attrs, "axis");
  if (!axis.is_none()) {
    const bool exclude = kernels::GetAttr(attrs, "exclude").as_bool();
    reduced.axes.assign(rank, exclude);
    for (int64_t listed : axis.as_int_list()) {
      if (listed < 0) listed += static_cast<int64_t>(rank);
      reduced.axes[static_cast<size_t>(listed)] = !exclude;
    }
  }
  reduced.keepdims = kernels::GetAttr(attrs, "keepdims").as_bool();
  return reduced;
}

// Attributes for sum, prod, ... over the call's axes with keepdims set: its
// result broadcasts against the input. (Only the axes are taken: variance
// and std have an attribute more.)
kernels::Attrs KeepingDims(const kernels::Attrs& attrs) {
  return {{"axis", kernels::GetAttr(attrs, "axis")},
          {"keepdims", AttrValue::Bool(true)},
          {"exclude", kernels::GetAttr(attrs, "exclude")}};
}

// `value`, shaped like the reduction's output, with the reduced axes back
// as 1s (the keepdims shape). Runs of adjacent axes go in one expand_dims;
// ascending order makes each insertion position final.
Expr Unreduce(Expr value, const Reduced& reduced) {
  if (reduced.keepdims) return value;
  const int64_t rank = static_cast<int64_t>(reduced.axes.size());
  for (int64_t axis = 0; axis < rank;) {
    if (!reduced.axes[axis]) {
      ++axis;
      continue;
    }
    int64_t run = 0;
    while (axis + run < rank && reduced.axes[axis + run]) ++run;
    value = Op("expand_dims", {value},
               {{"axis", AttrValue::Int(axis)}, {"num_newaxis", AttrValue::Int(run)}});
    axis += run;
  }
  return value;
}

// How many input elements each output element reduces, as something that
// broadcasts against the input: a scalar constant when the reduced
// dimensions are known, else counted at run time (a sum of ones).
Expr ReducedCount(const GradientContext& context, const Reduced& reduced) {
  const ir::TensorTypeNode& input = TensorTypeOf(context.input_type(0));
  double count = 1;
  bool known = true;
  for (size_t axis = 0; axis < reduced.axes.size(); ++axis) {
    if (!reduced.axes[axis]) continue;
    if (input.shape[axis] == ir::kAnyDim) known = false;
    count *= static_cast<double>(input.shape[axis]);
  }
  if (known) return ScalarConstant(count, input.dtype);
  return Op("sum", {Op("ones_like", {context.inputs[0]})}, KeepingDims(context.call.attrs));
}

struct Setup {
  Reduced reduced;
  DType dtype;
  Expr x;
  // The output's gradient and value with the reduced axes back as 1s.
  Expr gradient;
  Expr output;
};

Setup Prepare(const GradientContext& context) {
  const ir::TensorTypeNode& input = TensorTypeOf(context.input_type(0));
  Reduced reduced = ReducedAxes(context.call.attrs, input.shape.size());
  Expr gradient = Unreduce(context.output_gradient, reduced);
  Expr output = Unreduce(context.output, reduced);
  return {reduced, input.dtype, context.inputs[0], gradient, output};
}

// The keepdims-shaped `gradient` spread over the input's shape.
Expr Spread(const Expr& gradient, const Expr& x) {
  return Op("broadcast_to_like", {gradient, x});
}

// The gradient of variance (take_root false) or std (true). With
// n = count (count - 1 when unbiased), v = sum((x - m)^2) / n:
//   dv/dx = 2 (x - m) / n,           ds/dx = (x - m) / (n s),
// and the mean input, broadcast over the reduced axes, gets minus the sum
// of those. The mean is an input like any other: when it is itself
// mean(x), the chain rule through it adds its part (which sums to zero).
GradientRule VarianceRule(bool take_root) {
  return [take_root](const GradientContext& context) -> std::vector<Expr> {
    Setup setup = Prepare(context);
    const Expr& mean = context.inputs[1];
    Expr divisor = ReducedCount(context, setup.reduced);
    if (kernels::GetAttr(context.call.attrs, "unbiased").as_bool()) {
      divisor = Op("subtract", {divisor, ScalarConstant(1, setup.dtype)});
    }
    Expr deviation = Op("subtract", {setup.x, mean});
    Expr scale = take_root ? Op("multiply", {divisor, setup.output})
                           : Op("divide", {divisor, ScalarConstant(2, setup.dtype)});
    // The input's shape: deviation has it, and the rest broadcasts.
    Expr x_gradient = Op("multiply", {Op("divide", {deviation, scale}), setup.gradient});
    const ir::Type& x_type = context.input_type(0);
    Expr mean_gradient =
        SumToShapeOf(Op("negative", {x_gradient}), x_type, mean, context.input_type(1));
    return {x_gradient, mean_gradient};
  };
}

// Where x is an extremum of its reduction (x == the result), the gradient
// is shared equally between the tied elements: the average of the
// one-sided derivatives, which PyTorch's amax and amin use too.
GradientRule ExtremumRule() {
  return [](const GradientContext& context) -> std::vector<Expr> {
    Setup setup = Prepare(context);
    Expr chosen = Op("cast_like", {Op("equal", {setup.x, setup.output}), setup.x});
    Expr ties = Op("sum", {chosen}, KeepingDims(context.call.attrs));
    return {Op("multiply", {Op("divide", {chosen, ties}), setup.gradient})};
  };
}

}  // namespace

void AddReductionGradients(RuleTable& table) {
  table.emplace_back("sum", [](const GradientContext& context) -> std::vector<Expr> {
    Setup setup = Prepare(context);
    return {Spread(setup.gradient, setup.x)};
  });
  table.emplace_back("mean", [](const GradientContext& context) -> std::vector<Expr> {
    Setup setup = Prepare(context);
    Expr count = ReducedCount(context, setup.reduced);
    return {Spread(Op("divide", {setup.gradient, count}), setup.x)};
  });
  // d prod / dx_i is the product of the other elements. y / x_i is that
  // only where no element is 0, so the rule counts the zeros of each
  // reduction: with none, y / x; with one, the product of the nonzero
  // elements at the zero and 0 elsewhere; with more, 0 everywhere.
  table.emplace_back("prod", [](const GradientContext& context) -> std::vector<Expr> {
    Setup setup = Prepare(context);
    const Expr& x = setup.x;
    const kernels::Attrs keeping = KeepingDims(context.call.attrs);
    Expr zero = ScalarConstant(0, setup.dtype);
    Expr is_zero = Op("equal", {x, zero});
    Expr nonzero = Op("where", {is_zero, Op("ones_like", {x}), x});
    Expr product_of_nonzero = Op("prod", {nonzero}, keeping);
    Expr zeros = Op("sum", {Op("cast_like", {is_zero, x})}, keeping);
    Expr at_lone_zero =
        Op("logical_and", {Op("equal", {zeros, ScalarConstant(1, setup.dtype)}), is_zero});
    Expr derivative =
        Op("where", {Op("equal", {zeros, zero}), Op("divide", {product_of_nonzero, nonzero}),
                     Op("where", {at_lone_zero, product_of_nonzero, zero})});
    return {Op("multiply", {derivative, setup.gradient})};
  });
  table.emplace_back("max", ExtremumRule());
  table.emplace_back("min", ExtremumRule());
  table.emplace_back("variance", VarianceRule(/*take_root=*/false));
  table.emplace_back("std", VarianceRule(/*take_root=*/true));
}

}  // namespace relay::passes::operator_gradients
