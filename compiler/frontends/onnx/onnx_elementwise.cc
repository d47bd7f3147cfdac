// Elementwise operators and activations (unary, binary, variadic, or written
// out over the data), and the softmaxes, ArgMax/ArgMin and Size.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

Converter Unary(const std::string& op) {
  return [op](ConvertContext& context) {
    return std::vector<OnnxValue>{Shaped(Call(op, {context.Tensor(0)}), context.Input(0).shape)};
  };
}

// Shape arithmetic on int64 constants (a head count, a dimension times a
// factor) folds while importing: the result of `op` on two such operands of
// at most one element each, or nothing.
std::optional<OnnxValue> FoldIntegers(const ConvertContext& context, const std::string& op) {
  const OnnxValue &a = context.Input(0), &b = context.Input(1);
  if (!a.constant || !b.constant || a.constant->dtype() != DType::kInt64 ||
      b.constant->dtype() != DType::kInt64 || b.constant->element_count() != 1) {
    return std::nullopt;
  }
  const int64_t y = b.constant->data<int64_t>()[0];
  Ref<Tensor> result = Tensor::Empty(HostDevice(), a.constant->shape(), DType::kInt64);
  for (int64_t index = 0; index < a.constant->element_count(); ++index) {
    const int64_t x = a.constant->data<int64_t>()[index];
    int64_t& out = result->data<int64_t>()[index];
    if (op == "add") {
      out = x + y;
    } else if (op == "subtract") {
      out = x - y;
    } else if (op == "multiply") {
      out = x * y;
    } else if (op == "trunc_divide" && y != 0) {
      out = x / y;
    } else {
      return std::nullopt;
    }
  }
  result->MarkImmutable();
  return ConstantValue(result);
}

// Neg of an int64 constant folds too (LayerNormalization's function body
// counts its reduced axes as the negated axis).
std::vector<OnnxValue> ConvertNeg(ConvertContext& context) {
  const OnnxValue& x = context.Input(0);
  if (x.constant && x.constant->dtype() == DType::kInt64) {
    Ref<Tensor> result = Tensor::Empty(HostDevice(), x.constant->shape(), DType::kInt64);
    for (int64_t index = 0; index < x.constant->element_count(); ++index)
      result->data<int64_t>()[index] = -x.constant->data<int64_t>()[index];
    result->MarkImmutable();
    return {ConstantValue(result)};
  }
  return Unary("negative")(context);
}

Converter Binary(const std::string& op) {
  return [op](ConvertContext& context) {
    if (std::optional<OnnxValue> folded = FoldIntegers(context, op))
      return std::vector<OnnxValue>{*folded};
    return std::vector<OnnxValue>{
        Shaped(Call(op, {context.Tensor(0), context.Tensor(1)}), BroadcastOfInputs(context))};
  };
}

// Max, Min, Sum: the operator folded over every input.
Converter Variadic(const std::string& op) {
  return [op](ConvertContext& context) {
    std::string expr = context.Tensor(0);
    for (size_t index = 1; index < context.input_count(); ++index)
      expr = Call(op, {expr, context.Tensor(index)});
    return std::vector<OnnxValue>{Shaped(expr, BroadcastOfInputs(context))};
  };
}

std::vector<OnnxValue> ConvertDiv(ConvertContext& context) {
  const bool integer = !IsFloatDType(context.Input(0).dtype);
  // ONNX divides integers truncating toward zero, as C does.
  const std::string op = integer ? "trunc_divide" : "divide";
  if (std::optional<OnnxValue> folded = FoldIntegers(context, op)) return {*folded};
  return {Shaped(Call(op, {context.Tensor(0), context.Tensor(1)}), BroadcastOfInputs(context))};
}

std::vector<OnnxValue> ConvertMod(ConvertContext& context) {
  const bool fmod = context.IntAttribute("fmod", 0) != 0;
  return {Result(Call(fmod ? "trunc_mod" : "floor_mod", {context.Tensor(0), context.Tensor(1)}))};
}

// BitShift (unsigned integers in ONNX): Relay's left_shift or right_shift.
std::vector<OnnxValue> ConvertBitShift(ConvertContext& context) {
  const std::string direction = context.StringAttribute("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") Refuse("direction '" + direction + "'");
  if (context.Input(0).dtype != context.Input(1).dtype ||
      !IsUnsignedInteger(context.Input(0).dtype))
    Refuse("operands that are not unsigned integers of one dtype");
  return {Shaped(Call(direction == "LEFT" ? "left_shift" : "right_shift",
                      {context.Tensor(0), context.Tensor(1)}),
                 BroadcastOfInputs(context))};
}

std::vector<OnnxValue> ConvertIdentity(ConvertContext& context) {
  OnnxValue value = context.Input(0);
  if (value.expr.empty()) value.expr = context.Tensor(0);
  return {value};
}

// Dropout in inference keeps every element, and so does training with a
// ratio of 0; the mask (bool from opset 10, the data's type before) is
// then all true. Training with another ratio drops at random: refused.
std::vector<OnnxValue> ConvertDropout(ConvertContext& context) {
  if (context.opset() >= 12 && context.HasInput(2)) {
    const relay::Tensor& mode = *context.Constant(2);
    if (mode.element_count() != 1) Refuse("training_mode must be a scalar");
    const bool training =
        mode.dtype() == DType::kBool ? mode.data<bool>()[0] : FloatValue(mode) != 0;
    if (training && (!context.HasInput(1) || FloatValue(*context.Constant(1)) != 0))
      Refuse("training mode (dropping at random) is not supported");
  }
  std::vector<OnnxValue> outputs = ConvertIdentity(context);
  if (context.node().output_size() > 1 && context.OutputUsed(1)) {
    const OnnxValue& data = context.Input(0);
    const std::string ones = Call("ones_like", {context.Tensor(0)});
    OnnxValue mask =
        Shaped(context.opset() >= 10 ? Call("cast", {ones}, {"dtype=\"bool\""}) : ones, data.shape);
    mask.dtype = context.opset() >= 10 ? DType::kBool : data.dtype;
    outputs.push_back(mask);
  }
  return outputs;
}

// The range of an integer dtype's values.
std::pair<double, double> IntegerRange(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return {-128, 127};
    case DType::kUInt8:
      return {0, 255};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kInt32:
      return {-2147483648.0, 2147483647.0};
    default:
      return {-9.2e18, 9.2e18};
  }
}

std::vector<OnnxValue> ConvertPow(ConvertContext& context) {
  const DType base = context.Input(0).dtype, exponent = context.Input(1).dtype;
  const std::string x = context.Tensor(0), y = context.Tensor(1);
  auto cast = [](const std::string& value, DType dtype) {
    return Call("cast", {value}, {"dtype=\"" + std::string(DTypeName(dtype)) + "\""});
  };
  // The result has the base's dtype; a float exponent of an integer base
  // is applied in the exponent's dtype first, as NumPy's power would.
  if (base == exponent) return {Result(Call("power", {x, y}))};
  if (IsFloatDType(base) || !IsFloatDType(exponent)) {
    return {Result(Call("power", {x, cast(y, base)}))};
  }
  return {Result(cast(Call("power", {cast(x, exponent), y}), base))};
}

std::vector<OnnxValue> ConvertClip(ConvertContext& context) {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  if (context.opset() < 11) {
    low = context.FloatAttribute("min", -std::numeric_limits<float>::max());
    high = context.FloatAttribute("max", std::numeric_limits<float>::max());
  } else {
    if (context.HasInput(1)) low = FloatValue(*context.Constant(1));
    if (context.HasInput(2)) high = FloatValue(*context.Constant(2));
  }
  const DType dtype = context.Input(0).dtype;
  if (!IsFloatDType(dtype)) {
    // Bounds in an integer dtype's range, so that none overflows there.
    const auto [lowest, highest] = IntegerRange(dtype);
    low = std::clamp(low, lowest, highest);
    high = std::clamp(high, lowest, highest);
    if (low == lowest && high == highest) return ConvertIdentity(context);
  }
  return {Result(
      Call("clip", {context.Tensor(0)}, {"a_min=" + FloatText(low), "a_max=" + FloatText(high)}))};
}

std::vector<OnnxValue> ConvertLeakyRelu(ConvertContext& context) {
  return {Result(Call("nn.leaky_relu", {context.Tensor(0)},
                      {"alpha=" + FloatText(context.FloatAttribute("alpha", 0.01f))}))};
}

Converter Softmax(const std::string& op) {
  return [op](ConvertContext& context) {
    const size_t rank = RankOf(context, 0);
    if (context.opset() >= 13) {
      const int64_t axis = NormalizeAxis(context.IntAttribute("axis", -1), rank);
      return std::vector<OnnxValue>{Shaped(
          Call(op, {context.Tensor(0)}, {"axis=" + std::to_string(axis)}), context.Input(0).shape)};
    }
    // Before opset 13 the input is coerced to 2-D at `axis` (default 1):
    // the softmax runs over all axes from it.
    const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 1), rank);
    if (axis == int64_t(rank) - 1) {
      return std::vector<OnnxValue>{Shaped(
          Call(op, {context.Tensor(0)}, {"axis=" + std::to_string(axis)}), context.Input(0).shape)};
    }
    const std::vector<int64_t> shape = StaticShapeOf(context, 0);
    const int64_t outer = Product(std::span(shape).first(size_t(axis)));
    std::string flat = Call("reshape", {context.Tensor(0)}, {"newshape=" + IntList({outer, -1})});
    return std::vector<OnnxValue>{
        Result(Call("reshape", {Call(op, {flat}, {"axis=1"})}, {"newshape=" + IntList(shape)}))};
  };
}

// Elementwise operators written out over the data `x` (input 0).
Converter Formula(std::function<std::string(ConvertContext&, const std::string&)> formula) {
  return [formula](ConvertContext& context) {
    return std::vector<OnnxValue>{
        Shaped(formula(context, context.Tensor(0)), context.Input(0).shape)};
  };
}

std::vector<OnnxValue> ConvertMean(ConvertContext& context) {
  std::string sum = context.Tensor(0);
  for (size_t index = 1; index < context.input_count(); ++index)
    sum = Call("add", {sum, context.Tensor(index)});
  return {Result(Call("divide", {sum, Literal(context, double(context.input_count()))}))};
}

std::vector<OnnxValue> ConvertSize(ConvertContext& context) {
  const std::optional<std::vector<int64_t>>& shape = context.Input(0).shape;
  if (shape && std::all_of(shape->begin(), shape->end(), [](int64_t dim) { return dim >= 0; })) {
    Ref<Tensor> size = Tensor::Empty(HostDevice(), {}, DType::kInt64);
    size->data<int64_t>()[0] = Product(*shape);
    size->MarkImmutable();
    return {ConstantValue(size)};
  }
  return {Result(Call("ndarray_size", {context.Tensor(0)}, {"dtype=\"int64\""}))};
}

// ArgMax/ArgMin: ONNX's indices are int64, relay-vm's int32.
Converter ArgReduce(const std::string& op) {
  return [op](ConvertContext& context) {
    const size_t rank = RankOf(context, 0);
    const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
    const bool keepdims = context.IntAttribute("keepdims", 1) != 0;
    const bool last = context.IntAttribute("select_last_index", 0) != 0;
    return std::vector<OnnxValue>{Result(Call(
        "cast",
        {Call(op, {context.Tensor(0)},
              {"axis=" + IntList({axis}), std::string("keepdims=") + (keepdims ? "True" : "False"),
               std::string("select_last_index=") + (last ? "True" : "False")})},
        {"dtype=\"int64\""}))};
  };
}

std::vector<OnnxValue> ConvertPRelu(ConvertContext& context) {
  const std::string x = context.Tensor(0);
  return {Result(
      Where(Call("less", {x, Literal(context, 0)}), Call("multiply", {x, context.Tensor(1)}), x))};
}

std::vector<OnnxValue> ConvertIsInf(ConvertContext& context) {
  const std::string x = context.Tensor(0);
  const bool negative = context.IntAttribute("detect_negative", 1) != 0;
  const bool positive = context.IntAttribute("detect_positive", 1) != 0;
  const std::string infinite = Call("isinf", {x});
  if (negative && positive) return {Result(infinite)};
  if (!negative && !positive) return {Result(Call("logical_and", {infinite, "False"}))};
  return {Result(Call("logical_and",
                      {infinite, Call(positive ? "greater" : "less", {x, Literal(context, 0)})}))};
}

}  // namespace

void AddElementwiseConverters(std::map<std::string, Converter>& converters) {
  for (const auto& [onnx_name, relay_name] : std::vector<std::pair<std::string, std::string>>{
           {"Relu", "nn.relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},       {"Exp", "exp"},
           {"Log", "log"},      {"Sqrt", "sqrt"},       {"Abs", "abs"},         {"Floor", "floor"},
           {"Ceil", "ceil"},    {"Erf", "erf"},         {"Sin", "sin"},         {"Cos", "cos"},
           {"Tan", "tan"},      {"Asin", "asin"},       {"Acos", "acos"},       {"Atan", "atan"},
           {"Sinh", "sinh"},    {"Cosh", "cosh"},       {"Not", "logical_not"}, {"Sign", "sign"},
           {"IsNaN", "isnan"}}) {
    converters[onnx_name] = Unary(relay_name);
  }
  for (const auto& [onnx_name, relay_name] :
       std::vector<std::pair<std::string, std::string>>{{"Add", "add"},
                                                        {"Sub", "subtract"},
                                                        {"Mul", "multiply"},
                                                        {"Equal", "equal"},
                                                        {"Less", "less"},
                                                        {"Greater", "greater"},
                                                        {"LessOrEqual", "less_equal"},
                                                        {"GreaterOrEqual", "greater_equal"},
                                                        {"And", "logical_and"},
                                                        {"Or", "logical_or"},
                                                        {"Xor", "logical_xor"}}) {
    converters[onnx_name] = Binary(relay_name);
  }
  converters["Reciprocal"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("divide", {Literal(context, 1), x});
  });
  converters["Elu"] = Formula([](ConvertContext& context, const std::string& x) {
    const std::string alpha = Literal(context, context.FloatAttribute("alpha", 1.0f));
    return Where(
        Call("less", {x, Literal(context, 0)}),
        Call("multiply", {alpha, Call("subtract", {Call("exp", {x}), Literal(context, 1)})}), x);
  });
  converters["Celu"] = Formula([](ConvertContext& context, const std::string& x) {
    const double alpha = context.FloatAttribute("alpha", 1.0f);
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    return Call(
        "add",
        {Call("maximum", {x, Literal(context, 0)}),
         Call("minimum",
              {Literal(context, 0),
               Call("multiply",
                    {Literal(context, alpha),
                     Call("subtract", {Call("exp", {Call("divide", {x, Literal(context, alpha)})}),
                                       Literal(context, 1)})})})});
  });
  converters["HardSigmoid"] = Formula([](ConvertContext& context, const std::string& x) {
    const double alpha = context.FloatAttribute("alpha", 0.2f);
    const double beta = context.FloatAttribute("beta", 0.5f);
    return Call(
        "clip",
        {Call("add", {Call("multiply", {x, Literal(context, alpha)}), Literal(context, beta)})},
        {"a_min=0.0f", "a_max=1.0f"});
  });
  converters["HardSwish"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("multiply", {x, Call("clip",
                                     {Call("add", {Call("multiply", {x, Literal(context, 1.0 / 6)}),
                                                   Literal(context, 0.5)})},
                                     {"a_min=0.0f", "a_max=1.0f"})});
  });
  converters["ThresholdedRelu"] = Formula([](ConvertContext& context, const std::string& x) {
    const double alpha = context.FloatAttribute("alpha", 1.0f);
    return Where(Call("greater", {x, Literal(context, alpha)}), x, Literal(context, 0));
  });
  converters["Softplus"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("log", {Call("add", {Call("exp", {x}), Literal(context, 1)})});
  });
  converters["Softsign"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("divide", {x, Call("add", {Call("abs", {x}), Literal(context, 1)})});
  });
  converters["Round"] = Unary("round");
  converters["Neg"] = ConvertNeg;
  converters["Mean"] = ConvertMean;
  converters["Size"] = ConvertSize;
  converters["ArgMax"] = ArgReduce("argmax");
  converters["ArgMin"] = ArgReduce("argmin");
  converters["PRelu"] = ConvertPRelu;
  converters["IsInf"] = ConvertIsInf;
  converters["Max"] = Variadic("maximum");
  converters["Min"] = Variadic("minimum");
  converters["Sum"] = Variadic("add");
  converters["Div"] = ConvertDiv;
  converters["Pow"] = ConvertPow;
  converters["Mod"] = ConvertMod;
  converters["BitShift"] = ConvertBitShift;
  converters["Where"] = [](ConvertContext& context) {
    return std::vector<OnnxValue>{
        Shaped(Call("where", {context.Tensor(0), context.Tensor(1), context.Tensor(2)}),
               BroadcastOfInputs(context))};
  };
  converters["Identity"] = ConvertIdentity;
  converters["Dropout"] = ConvertDropout;
  converters["Clip"] = ConvertClip;
  converters["LeakyRelu"] = ConvertLeakyRelu;
  converters["Softmax"] = Softmax("nn.softmax");
  converters["LogSoftmax"] = Softmax("nn.log_softmax");
  // The inverse hyperbolic functions, written out over log and sqrt.
  converters["Asinh"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("log", {Call("add", {x, Call("sqrt", {Call("add", {Call("multiply", {x, x}),
                                                                   Literal(context, 1)})})})});
  });
  converters["Acosh"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("log", {Call("add", {x, Call("sqrt", {Call("subtract", {Call("multiply", {x, x}),
                                                                        Literal(context, 1)})})})});
  });
  converters["Atanh"] = Formula([](ConvertContext& context, const std::string& x) {
    return Call("multiply",
                {Literal(context, 0.5),
                 Call("log", {Call("divide", {Call("add", {Literal(context, 1), x}),
                                              Call("subtract", {Literal(context, 1), x})})})});
  });
  converters["Selu"] = Formula([](ConvertContext& context, const std::string& x) {
    const double alpha = context.FloatAttribute("alpha", 1.67326319217681884765625f);
    const double gamma = context.FloatAttribute("gamma", 1.05070102214813232421875f);
    // gamma * (x for x > 0, else alpha * (exp(x) - 1))
    return Call(
        "multiply",
        {Literal(context, gamma),
         Where(Call("greater", {x, Literal(context, 0)}), x,
               Call("multiply", {Literal(context, alpha),
                                 Call("subtract", {Call("exp", {x}), Literal(context, 1)})}))});
  });
  converters["Shrink"] = Formula([](ConvertContext& context, const std::string& x) {
    const double lambd = context.FloatAttribute("lambd", 0.5f);
    const double bias = context.FloatAttribute("bias", 0.0f);
    return Where(Call("less", {x, Literal(context, -lambd)}),
                 Call("add", {x, Literal(context, bias)}),
                 Where(Call("greater", {x, Literal(context, lambd)}),
                       Call("subtract", {x, Literal(context, bias)}), Literal(context, 0)));
  });
}

}  // namespace relay::onnx_import
