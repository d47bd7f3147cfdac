// Gradients of the elementwise operators (kernels/operators/elementwise.cc):
// unary math, broadcasting arithmetic, where, cast, clip. Broadcasting
// operators sum each input's gradient back down to that input's shape.
#include <cmath>
#include <numbers>

#include "compiler/passes/operator_gradients/operator_gradients.h"

namespace relay::passes::operator_gradients {
namespace {

using ir::Expr;

// A rule for a unary operator whose derivative is `derivative(x, y)`.
GradientRule Unary(std::function<Expr(const Expr& x, const Expr& y, DType dtype)> derivative) {
  return [derivative](const GradientContext& context) -> std::vector<Expr> {
    const Expr& x = context.inputs[0];
    DType dtype = DTypeOfTensor(context.input_type(0));
    return {Op("multiply", {context.output_gradient, derivative(x, context.output, dtype)})};
  };
}

// A rule for a binary broadcasting operator whose input gradients, before
// summing down to each input's shape, are `lhs(...)` and `rhs(...)` (shaped
// like the output).
using BinaryPart =
    std::function<Expr(const Expr& a, const Expr& b, const Expr& y, const Expr& g, DType dtype)>;
GradientRule Binary(BinaryPart lhs, BinaryPart rhs) {
  return [lhs, rhs](const GradientContext& context) -> std::vector<Expr> {
    const Expr& a = context.inputs[0];
    const Expr& b = context.inputs[1];
    const Expr& y = context.output;
    const Expr& g = context.output_gradient;
    DType dtype = DTypeOfTensor(context.output_type());
    return {SumToShapeOf(lhs(a, b, y, g, dtype), context.output_type(), a, context.input_type(0)),
            SumToShapeOf(rhs(a, b, y, g, dtype), context.output_type(), b, context.input_type(1))};
  };
}

// `g` where `condition` holds, zero elsewhere.
Expr GradientWhere(const Expr& condition, const Expr& g) {
  return Op("where", {condition, g, Op("zeros_like", {g})});
}

}  // namespace

void AddElementwiseGradients(RuleTable& table) {
  table.emplace_back("negative", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("negative", {context.output_gradient})};
  });
  table.emplace_back("copy", [](const GradientContext& context) -> std::vector<Expr> {
    return {context.output_gradient};
  });
  table.emplace_back("abs",
                     Unary([](const Expr& x, const Expr&, DType) { return Op("sign", {x}); }));
  table.emplace_back("exp", Unary([](const Expr&, const Expr& y, DType) { return y; }));
  table.emplace_back("log", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("divide", {Scalar(1, dtype), x});
                     }));
  table.emplace_back("log2", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("divide", {Scalar(1 / std::numbers::ln2, dtype), x});
                     }));
  table.emplace_back("log10", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("divide", {Scalar(1 / std::numbers::ln10, dtype), x});
                     }));
  table.emplace_back("sqrt", Unary([](const Expr&, const Expr& y, DType dtype) {
                       return Op("divide", {Scalar(0.5, dtype), y});
                     }));
  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
  table.emplace_back(
      "rsqrt", Unary([](const Expr&, const Expr& y, DType dtype) {
        return Op("multiply", {Scalar(-0.5, dtype), Op("multiply", {y, Op("multiply", {y, y})})});
      }));
  table.emplace_back("sigmoid", Unary([](const Expr&, const Expr& y, DType dtype) {
                       return Op("multiply", {y, Op("subtract", {Scalar(1, dtype), y})});
                     }));
  table.emplace_back("tanh", Unary([](const Expr&, const Expr& y, DType dtype) {
                       return Op("subtract", {Scalar(1, dtype), Op("multiply", {y, y})});
                     }));
  // d/dx erf(x) = 2/sqrt(pi) e^(-x^2).
  table.emplace_back("erf", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("multiply",
                                 {Scalar(2 / std::sqrt(std::numbers::pi), dtype),
                                  Op("exp", {Op("negative", {Op("multiply", {x, x})})})});
                     }));
  table.emplace_back("sin",
                     Unary([](const Expr& x, const Expr&, DType) { return Op("cos", {x}); }));
  table.emplace_back("cos", Unary([](const Expr& x, const Expr&, DType) {
                       return Op("negative", {Op("sin", {x})});
                     }));
  // d/dx tan(x) = 1 + tan(x)^2.
  table.emplace_back("tan", Unary([](const Expr&, const Expr& y, DType dtype) {
                       return Op("add", {Scalar(1, dtype), Op("multiply", {y, y})});
                     }));
  // d/dx asin(x) = 1 / sqrt(1 - x^2), and acos's is its negation.
  table.emplace_back("asin", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("rsqrt",
                                 {Op("subtract", {Scalar(1, dtype), Op("multiply", {x, x})})});
                     }));
  table.emplace_back(
      "acos", Unary([](const Expr& x, const Expr&, DType dtype) {
        return Op("negative",
                  {Op("rsqrt", {Op("subtract", {Scalar(1, dtype), Op("multiply", {x, x})})})});
      }));
  // d/dx atan(x) = 1 / (1 + x^2).
  table.emplace_back("atan", Unary([](const Expr& x, const Expr&, DType dtype) {
                       return Op("divide", {Scalar(1, dtype),
                                            Op("add", {Scalar(1, dtype), Op("multiply", {x, x})})});
                     }));
  table.emplace_back("sinh",
                     Unary([](const Expr& x, const Expr&, DType) { return Op("cosh", {x}); }));
  table.emplace_back("cosh",
                     Unary([](const Expr& x, const Expr&, DType) { return Op("sinh", {x}); }));
  table.emplace_back("nn.relu", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& x = context.inputs[0];
    DType dtype = DTypeOfTensor(context.input_type(0));
    return {GradientWhere(Op("greater", {x, Scalar(0, dtype)}), context.output_gradient)};
  });

  auto pass = [](const Expr&, const Expr&, const Expr&, const Expr& g, DType) { return g; };
  auto negated = [](const Expr&, const Expr&, const Expr&, const Expr& g, DType) {
    return Op("negative", {g});
  };
  table.emplace_back("add", Binary(pass, pass));
  table.emplace_back("subtract", Binary(pass, negated));
  table.emplace_back("multiply", Binary([](const Expr&, const Expr& b, const Expr&, const Expr& g,
                                           DType) { return Op("multiply", {g, b}); },
                                        [](const Expr& a, const Expr&, const Expr&, const Expr& g,
                                           DType) { return Op("multiply", {g, a}); }));
  // d(a/b)/db = -a/b^2 = -y/b.
  table.emplace_back("divide",
                     Binary([](const Expr&, const Expr& b, const Expr&, const Expr& g,
                               DType) { return Op("divide", {g, b}); },
                            [](const Expr&, const Expr& b, const Expr& y, const Expr& g, DType) {
                              return Op("negative", {Op("divide", {Op("multiply", {g, y}), b})});
                            }));
  // a mod b = a - q(a/b) b with q the truncation (mod, trunc_mod) or the
  // floor (floor_mod), piecewise constant: d/da = 1, d/db = -q(a/b).
  auto remainder = [pass](const char* quotient) {
    return Binary(
        pass, [quotient](const Expr& a, const Expr& b, const Expr&, const Expr& g, DType) {
          return Op("negative", {Op("multiply", {g, Op(quotient, {Op("divide", {a, b})})})});
        });
  };
  table.emplace_back("mod", remainder("trunc"));
  table.emplace_back("trunc_mod", remainder("trunc"));
  table.emplace_back("floor_mod", remainder("floor"));
  // d(a^b)/da = b a^(b-1); d(a^b)/db = a^b ln a, taken as 0 where a = 0
  // (PyTorch's convention: the limit for b > 0, instead of 0 * -inf).
  table.emplace_back(
      "power",
      Binary(
          [](const Expr& a, const Expr& b, const Expr&, const Expr& g, DType dtype) {
            return Op(
                "multiply",
                {g, Op("multiply", {b, Op("power", {a, Op("subtract", {b, Scalar(1, dtype)})})})});
          },
          [](const Expr& a, const Expr&, const Expr& y, const Expr& g, DType dtype) {
            Expr zero_base = Op("equal", {a, Scalar(0, dtype)});
            Expr log_base = Op("log", {Op("where", {zero_base, Scalar(1, dtype), a})});
            return Op("multiply", {g, Op("multiply", {y, log_base})});
          }));
  // Ties send the gradient to the left operand, as TVM does.
  table.emplace_back("maximum",
                     Binary([](const Expr& a, const Expr& b, const Expr&, const Expr& g,
                               DType) { return GradientWhere(Op("greater_equal", {a, b}), g); },
                            [](const Expr& a, const Expr& b, const Expr&, const Expr& g, DType) {
                              return GradientWhere(Op("less", {a, b}), g);
                            }));
  table.emplace_back("minimum",
                     Binary([](const Expr& a, const Expr& b, const Expr&, const Expr& g,
                               DType) { return GradientWhere(Op("less_equal", {a, b}), g); },
                            [](const Expr& a, const Expr& b, const Expr&, const Expr& g, DType) {
                              return GradientWhere(Op("greater", {a, b}), g);
                            }));

  table.emplace_back("where", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& condition = context.inputs[0];
    const Expr& g = context.output_gradient;
    Expr zeros = Op("zeros_like", {g});
    return {nullptr,
            SumToShapeOf(Op("where", {condition, g, zeros}), context.output_type(),
                         context.inputs[1], context.input_type(1)),
            SumToShapeOf(Op("where", {condition, zeros, g}), context.output_type(),
                         context.inputs[2], context.input_type(2))};
  });
  // The gradient goes back in the input's dtype; an integer input has none.
  table.emplace_back("cast", [](const GradientContext& context) -> std::vector<Expr> {
    DType from = DTypeOfTensor(context.input_type(0));
    if (!IsFloat(from)) return {nullptr};
    return {Op("cast", {context.output_gradient},
               {{"dtype", kernels::AttrValue::String(std::string(DTypeName(from)))}})};
  });
  table.emplace_back("cast_like", [](const GradientContext& context) -> std::vector<Expr> {
    if (!IsFloat(DTypeOfTensor(context.input_type(0)))) return {nullptr, nullptr};
    return {Op("cast_like", {context.output_gradient, context.inputs[0]}), nullptr};
  });
  // Passes the gradient where the input was inside [a_min, a_max].
  table.emplace_back("clip", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& x = context.inputs[0];
    DType dtype = DTypeOfTensor(context.input_type(0));
    double low = kernels::GetAttr(context.call.attrs, "a_min").as_float();
    double high = kernels::GetAttr(context.call.attrs, "a_max").as_float();
    Expr inside = Op("logical_and", {Op("greater_equal", {x, Scalar(low, dtype)}),
                                     Op("less_equal", {x, Scalar(high, dtype)})});
    return {GradientWhere(inside, context.output_gradient)};
  });
}

}  // namespace relay::passes::operator_gradients
