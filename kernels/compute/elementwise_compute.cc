// Compute definitions of the elementwise and broadcast operators, attached
// to the operator table's entries. Float16 is stored as float16 but computed
// in float32, as on CPUs without half-precision arithmetic.
#include "kernels/compute/elementwise_compute.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "kernels/operator_table.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

Expr Widen(const Expr& value) {
  return value->dtype == DType::kFloat16 ? Cast(DType::kFloat32, value) : value;
}

// A constant of `dtype` (integers truncate, as a cast does).
Expr Constant(double value, DType dtype) {
  if (IsFloat(dtype)) return Float(value, dtype);
  if (dtype == DType::kBool) return Binary(BinaryOp::kNotEqual, Int(value != 0), Int(0));
  return Expr(new IntImmNode(static_cast<int64_t>(value), dtype));
}

using UnaryScalar = std::function<Expr(const Expr& x, const Attrs& attrs)>;
using BinaryScalar = std::function<Expr(const Expr& a, const Expr& b)>;

// An elementwise operator whose result has the input's dtype (or `result`
// when given), computed by `scalar` on widened values.
ComputeFunction UnaryCompute(UnaryScalar scalar, std::optional<DType> result = std::nullopt) {
  return [scalar, result](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& x = inputs[0];
    DType dtype = result.value_or(x.dtype);
    return TensorExpr{x.shape, dtype, [x, scalar, attrs, dtype](const std::vector<Expr>& indices) {
                        Expr value = scalar(Widen(x.at(indices)), attrs);
                        return value->dtype == dtype ? value : Cast(dtype, value);
                      }};
  };
}

ComputeFunction BinaryCompute(BinaryScalar scalar, std::optional<DType> result = std::nullopt) {
  return [scalar, result](std::span<const TensorExpr> inputs, const Attrs&) {
    TensorExpr a = inputs[0], b = inputs[1];
    std::vector<Expr> shape = BroadcastShape(inputs);
    DType dtype = result.value_or(a.dtype);
    return TensorExpr{shape, dtype, [a, b, shape, scalar, dtype](const std::vector<Expr>& indices) {
                        Expr value = scalar(Widen(BroadcastRead(a, shape, indices)),
                                            Widen(BroadcastRead(b, shape, indices)));
                        return value->dtype == dtype ? value : Cast(dtype, value);
                      }};
  };
}

BinaryScalar Op(BinaryOp op) {
  return [op](const Expr& a, const Expr& b) { return Binary(op, a, b); };
}
UnaryScalar Op(UnaryOp op) {
  return [op](const Expr& x, const Attrs&) { return Unary(op, x); };
}

Expr Sign(const Expr& x) {
  Expr zero = Constant(0, x->dtype);
  Expr negative_or_same = IsFloat(x->dtype) ? x : zero;  // NaN and zero stay as they are
  return Select(Binary(BinaryOp::kGreater, x, zero), Constant(1, x->dtype),
                Select(Binary(BinaryOp::kLess, x, zero), Constant(-1, x->dtype), negative_or_same));
}

// Rounds toward zero; integers are already whole.
Expr Trunc(const Expr& x) {
  if (!IsFloat(x->dtype)) return x;
  return Select(Binary(BinaryOp::kLess, x, Constant(0, x->dtype)), Unary(UnaryOp::kCeil, x),
                Unary(UnaryOp::kFloor, x));
}

std::unordered_map<std::string, ComputeFunction> ElementwiseComputes() {
  std::unordered_map<std::string, ComputeFunction> computes;
  computes["negative"] = UnaryCompute(Op(UnaryOp::kNegate));
  computes["abs"] = UnaryCompute(Op(UnaryOp::kAbs));
  computes["exp"] = UnaryCompute(Op(UnaryOp::kExp));
  computes["log"] = UnaryCompute(Op(UnaryOp::kLog));
  computes["sqrt"] = UnaryCompute(Op(UnaryOp::kSqrt));
  computes["tanh"] = UnaryCompute(Op(UnaryOp::kTanh));
  computes["erf"] = UnaryCompute(Op(UnaryOp::kErf));
  computes["floor"] = UnaryCompute(Op(UnaryOp::kFloor));
  computes["ceil"] = UnaryCompute(Op(UnaryOp::kCeil));
  computes["round"] = UnaryCompute(Op(UnaryOp::kRound));
  computes["logical_not"] = UnaryCompute(Op(UnaryOp::kNot));
  computes["trunc"] = UnaryCompute([](const Expr& x, const Attrs&) { return Trunc(x); });
  computes["log2"] = UnaryCompute([](const Expr& x, const Attrs&) {
    return Binary(BinaryOp::kDivide, Unary(UnaryOp::kLog, x), Float(std::log(2.0), x->dtype));
  });
  computes["log10"] = UnaryCompute([](const Expr& x, const Attrs&) {
    return Binary(BinaryOp::kDivide, Unary(UnaryOp::kLog, x), Float(std::log(10.0), x->dtype));
  });
  // Finite: |x| < inf, which is false for NaN (an ordered compare).
  computes["isfinite"] = UnaryCompute(
      [](const Expr& x, const Attrs&) {
        return Binary(BinaryOp::kLess, Unary(UnaryOp::kAbs, x),
                      Float(std::numeric_limits<double>::infinity(), x->dtype));
      },
      DType::kBool);
  computes["sin"] = UnaryCompute(Op(UnaryOp::kSin));
  computes["tan"] = UnaryCompute(Op(UnaryOp::kTan));
  computes["asin"] = UnaryCompute(Op(UnaryOp::kAsin));
  computes["acos"] = UnaryCompute(Op(UnaryOp::kAcos));
  computes["atan"] = UnaryCompute(Op(UnaryOp::kAtan));
  computes["sinh"] = UnaryCompute(Op(UnaryOp::kSinh));
  computes["cosh"] = UnaryCompute(Op(UnaryOp::kCosh));
  computes["cos"] = UnaryCompute(Op(UnaryOp::kCos));
  // NaN is the one value unequal to itself (an unordered compare).
  computes["isnan"] = UnaryCompute(
      [](const Expr& x, const Attrs&) { return Binary(BinaryOp::kNotEqual, x, x); }, DType::kBool);
  computes["isinf"] = UnaryCompute(
      [](const Expr& x, const Attrs&) {
        return Binary(BinaryOp::kEqual, Unary(UnaryOp::kAbs, x),
                      Float(std::numeric_limits<double>::infinity(), x->dtype));
      },
      DType::kBool);
  computes["copy"] = UnaryCompute([](const Expr& x, const Attrs&) { return x; });
  // The device annotations copy their input where they run as kernels (the
  // reference evaluator); the VM places work by them instead.
  computes["on_device"] = UnaryCompute([](const Expr& x, const Attrs&) { return x; });
  computes["device_copy"] = UnaryCompute([](const Expr& x, const Attrs&) { return x; });
  computes["rsqrt"] = UnaryCompute([](const Expr& x, const Attrs&) {
    return Binary(BinaryOp::kDivide, Constant(1, x->dtype), Unary(UnaryOp::kSqrt, x));
  });
  computes["sigmoid"] = UnaryCompute([](const Expr& x, const Attrs&) {
    Expr one = Constant(1, x->dtype);
    return Binary(BinaryOp::kDivide, one,
                  Add(one, Unary(UnaryOp::kExp, Unary(UnaryOp::kNegate, x))));
  });
  computes["sign"] = UnaryCompute([](const Expr& x, const Attrs&) { return Sign(x); });
  computes["nn.relu"] = UnaryCompute([](const Expr& x, const Attrs&) {
    return Binary(BinaryOp::kMaximum, x, Constant(0, x->dtype));
  });
  computes["nn.leaky_relu"] = UnaryCompute([](const Expr& x, const Attrs& attrs) {
    Expr scaled =
        Binary(BinaryOp::kMultiply, x, Constant(GetAttr(attrs, "alpha").as_float(), x->dtype));
    return Select(Binary(BinaryOp::kGreater, x, Constant(0, x->dtype)), x, scaled);
  });
  computes["clip"] = UnaryCompute([](const Expr& x, const Attrs& attrs) {
    Expr low = Constant(GetAttr(attrs, "a_min").as_float(), x->dtype);
    Expr high = Constant(GetAttr(attrs, "a_max").as_float(), x->dtype);
    return Binary(BinaryOp::kMinimum, Binary(BinaryOp::kMaximum, x, low), high);
  });
  computes["cast"] = [](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& x = inputs[0];
    DType dtype = *ParseDType(GetAttr(attrs, "dtype").as_string());
    return TensorExpr{x.shape, dtype, [x, dtype](const std::vector<Expr>& indices) {
                        return Cast(dtype, Widen(x.at(indices)));
                      }};
  };

  computes["add"] = BinaryCompute(Op(BinaryOp::kAdd));
  computes["subtract"] = BinaryCompute(Op(BinaryOp::kSubtract));
  computes["multiply"] = BinaryCompute(Op(BinaryOp::kMultiply));
  computes["divide"] = BinaryCompute(Op(BinaryOp::kDivide));
  computes["floor_divide"] = BinaryCompute(Op(BinaryOp::kFloorDivide));
  computes["mod"] = BinaryCompute(Op(BinaryOp::kTruncMod));
  computes["trunc_mod"] = BinaryCompute(Op(BinaryOp::kTruncMod));
  // Integer division truncates already; float quotients are truncated.
  computes["trunc_divide"] = BinaryCompute([](const Expr& a, const Expr& b) {
    Expr quotient = Binary(BinaryOp::kDivide, a, b);
    return IsFloat(a->dtype) ? Trunc(quotient) : quotient;
  });
  computes["floor_mod"] = BinaryCompute(Op(BinaryOp::kFloorMod));
  computes["power"] = BinaryCompute(Op(BinaryOp::kPower));
  computes["maximum"] = BinaryCompute(Op(BinaryOp::kMaximum));
  computes["minimum"] = BinaryCompute(Op(BinaryOp::kMinimum));
  computes["logical_and"] = BinaryCompute(Op(BinaryOp::kAnd));
  computes["logical_or"] = BinaryCompute(Op(BinaryOp::kOr));
  computes["logical_xor"] = BinaryCompute(Op(BinaryOp::kNotEqual));
  computes["left_shift"] = BinaryCompute(Op(BinaryOp::kShiftLeft));
  computes["right_shift"] = BinaryCompute(Op(BinaryOp::kShiftRight));
  for (auto [name, op] :
       {std::pair{"equal", BinaryOp::kEqual}, std::pair{"not_equal", BinaryOp::kNotEqual},
        std::pair{"less", BinaryOp::kLess}, std::pair{"less_equal", BinaryOp::kLessEqual},
        std::pair{"greater", BinaryOp::kGreater},
        std::pair{"greater_equal", BinaryOp::kGreaterEqual}}) {
    computes[name] = BinaryCompute(Op(op), DType::kBool);
  }
  computes["where"] = [](std::span<const TensorExpr> inputs, const Attrs&) {
    TensorExpr condition = inputs[0], x = inputs[1], y = inputs[2];
    std::vector<Expr> shape = BroadcastShape(inputs);
    return TensorExpr{shape, x.dtype, [condition, x, y, shape](const std::vector<Expr>& indices) {
                        // A non-bool condition selects x where it is nonzero, as in NumPy.
                        Expr test = Widen(BroadcastRead(condition, shape, indices));
                        if (test->dtype != DType::kBool) {
                          test = Binary(BinaryOp::kNotEqual, test, Constant(0, test->dtype));
                        }
                        return Select(test, BroadcastRead(x, shape, indices),
                                      BroadcastRead(y, shape, indices));
                      }};
  };
  return computes;
}

}  // namespace

bool IsBroadcastCompute(std::string_view operator_name) {
  static const std::unordered_map<std::string, ComputeFunction> computes = ElementwiseComputes();
  return computes.contains(std::string(operator_name));
}

void AttachElementwiseComputes(OperatorTableBuilder& table) {
  table.AttachComputes(ElementwiseComputes());
}

}  // namespace relay::kernels
