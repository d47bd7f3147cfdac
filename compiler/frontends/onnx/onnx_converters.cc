#include "compiler/frontends/onnx/onnx_converters.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "compiler/frontends/onnx/onnx_tensors.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

// ---- elementwise --------------------------------------------------------------------------

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

std::vector<OnnxValue> ConvertIdentity(ConvertContext& context) {
  OnnxValue value = context.Input(0);
  if (value.expr.empty()) value.expr = context.Tensor(0);
  return {value};
}

std::vector<OnnxValue> ConvertDropout(ConvertContext& context) {
  if (context.node().output_size() > 1 && !context.node().output(1).empty()) {
    Refuse("its mask output is not supported (inference only)");
  }
  if (context.opset() >= 12 && context.HasInput(2) && IntValues(*context.Constant(2)).at(0) != 0) {
    Refuse("training mode is not supported");
  }
  return ConvertIdentity(context);
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

// ---- products -----------------------------------------------------------------------------

std::vector<OnnxValue> ConvertGemm(ConvertContext& context) {
  std::string a = context.Tensor(0), b = context.Tensor(1);
  if (context.IntAttribute("transA", 0) != 0) a = Call("transpose", {a});
  // nn.dense(a, b) is a times b transposed.
  std::string product =
      context.IntAttribute("transB", 0) != 0 ? Call("nn.dense", {a, b}) : Call("nn.matmul", {a, b});
  const float alpha = context.FloatAttribute("alpha", 1.0f);
  const float beta = context.FloatAttribute("beta", 1.0f);
  if (alpha != 1.0f) product = Call("multiply", {product, FloatText(alpha)});
  if (context.HasInput(2) && beta != 0.0f) {
    std::string bias = context.Tensor(2);
    if (beta != 1.0f) bias = Call("multiply", {bias, FloatText(beta)});
    product = Call("add", {product, bias});
  }
  // [M, N]: A's rows (its columns when transposed) by B's columns (rows).
  std::optional<std::vector<int64_t>> shape;
  const OnnxValue &a_value = context.Input(0), &b_value = context.Input(1);
  if (a_value.shape && b_value.shape && a_value.shape->size() == 2 && b_value.shape->size() == 2) {
    shape = std::vector<int64_t>{(*a_value.shape)[context.IntAttribute("transA", 0) != 0 ? 1 : 0],
                                 (*b_value.shape)[context.IntAttribute("transB", 0) != 0 ? 0 : 1]};
  }
  return {Shaped(product, shape)};
}

// MatMul beyond the forms above, as NumPy's matmul: a vector operand gains
// the axis it lacks (and the result loses it), the lower rank gains leading
// axes, and batch axes that differ or are only known at run time are
// broadcast by adding zeros of the other operand's batch shape (which also
// refuses, at run time, batch axes that do not broadcast). Then one
// nn.batch_matmul of the batch axes merged (reshape's -3 merges two axes
// of any extent), split back to the batch axes after.
std::vector<OnnxValue> NdMatMul(ConvertContext& context) {
  std::vector<int64_t> a = *context.Input(0).shape, b = *context.Input(1).shape;
  if (a.empty() || b.empty()) Refuse("a product of scalars");
  std::string x = context.Tensor(0), y = context.Tensor(1);
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) {
    x = Call("expand_dims", {x}, {"axis=0"});
    a.insert(a.begin(), 1);
  }
  if (b_vector) {
    y = Call("expand_dims", {y}, {"axis=1"});
    b.push_back(1);
  }
  const size_t rank = std::max(a.size(), b.size());
  while (a.size() < rank) {
    x = Call("expand_dims", {x}, {"axis=0"});
    a.insert(a.begin(), 1);
  }
  while (b.size() < rank) {
    y = Call("expand_dims", {y}, {"axis=0"});
    b.insert(b.begin(), 1);
  }
  std::vector<int64_t> shape(rank);
  bool broadcast = false;
  for (size_t axis = 0; axis + 2 < rank; ++axis) {
    broadcast |= a[axis] != b[axis] || a[axis] < 0;
    shape[axis] = a[axis] == 1   ? b[axis]
                  : b[axis] == 1 ? a[axis]
                  : a[axis] >= 0 ? a[axis]
                                 : b[axis];
    if (a[axis] >= 0 && b[axis] >= 0 && a[axis] != b[axis] && a[axis] != 1 && b[axis] != 1)
      Refuse("batch axes that do not broadcast");
  }
  shape[rank - 2] = a[rank - 2];
  shape[rank - 1] = b[rank - 1];
  x = context.Bind(x);
  y = context.Bind(y);
  if (broadcast && rank > 2) {
    auto batch_zeros = [&](const std::string& operand) {
      return Call("zeros_like",
                  {Call("strided_slice", {operand},
                        {"begin=[0, 0]", "end=[1, 1]",
                         "axes=" + IntList({int64_t(rank) - 2, int64_t(rank) - 1})})});
    };
    const std::string x_full = context.Bind(Call("add", {x, batch_zeros(y)}));
    y = context.Bind(Call("add", {y, batch_zeros(x)}));
    x = x_full;
  }
  std::string result;
  if (rank == 2) {
    result = Call("nn.matmul", {x, y});
  } else {
    auto merged = [&](std::string operand) {
      for (size_t merge = 0; merge + 3 < rank; ++merge)
        operand = Call("reshape", {operand}, {"newshape=[-3, -2]"});
      return operand;
    };
    result = Call("nn.batch_matmul", {merged(x), merged(y)}, {"transpose_b=False"});
    if (rank > 3) {
      // Split the merged batch axis back: each unknown extent read from the
      // (broadcast) operands' shapes.
      ShapeEntries entries;
      for (size_t axis = 0; axis < rank; ++axis) {
        entries.known.push_back(shape[axis]);
        entries.exprs.push_back(shape[axis] >= 0 ? std::to_string(shape[axis]) + "i64"
                                                 : Extent(axis + 1 == rank ? y : x, {}, axis));
      }
      result = ReshapedTo(result, entries);
    }
  }
  std::vector<int64_t> squeezed;
  if (a_vector) squeezed.push_back(-2);
  if (b_vector) squeezed.push_back(-1);
  if (!squeezed.empty()) {
    result = Call("squeeze", {result}, {"axis=" + IntList(squeezed)});
    if (b_vector) shape.pop_back();                               // the columns
    if (a_vector) shape.erase(shape.end() - (b_vector ? 1 : 2));  // the rows
  }
  return {Shaped(result, shape)};
}

std::vector<OnnxValue> ConvertMatMul(ConvertContext& context) {
  const size_t a_rank = RankOf(context, 0), b_rank = RankOf(context, 1);
  if (a_rank == 2 && b_rank == 2) {
    return {
        Shaped(Call("nn.matmul", {context.Tensor(0), context.Tensor(1)}),
               std::vector<int64_t>{(*context.Input(0).shape)[0], (*context.Input(1).shape)[1]})};
  }
  if (a_rank == 3 && b_rank == 3) {
    const std::vector<int64_t>&a = *context.Input(0).shape, &b = *context.Input(1).shape;
    return {Shaped(
        Call("nn.batch_matmul", {context.Tensor(0), context.Tensor(1)}, {"transpose_b=False"}),
        std::vector<int64_t>{std::max(a[0], b[0]), a[1], b[2]})};
  }
  if (a_rank > 2 && b_rank == 2) {
    // nn.dense takes any leading axes, and b transposed: a constant b is
    // transposed while importing.
    const OnnxValue& b = context.Input(1);
    std::string weight;
    if (b.constant && b.constant->dtype() == DType::kFloat32) {
      const Shape& shape = b.constant->shape();
      Ref<Tensor> transposed = Tensor::Empty(HostDevice(), {shape[1], shape[0]}, DType::kFloat32);
      for (int64_t row = 0; row < shape[0]; ++row) {
        for (int64_t column = 0; column < shape[1]; ++column)
          transposed->data<float>()[column * shape[0] + row] =
              b.constant->data<float>()[row * shape[1] + column];
      }
      transposed->MarkImmutable();
      weight = context.Weight(context.node().input(1) + "_transposed", transposed);
    } else {
      weight = Call("transpose", {context.Tensor(1)});
    }
    std::vector<int64_t> out_shape = *context.Input(0).shape;
    out_shape.back() = (*b.shape)[1];
    return {Shaped(Call("nn.dense", {context.Tensor(0), weight}), out_shape)};
  }
  return NdMatMul(context);
}

// ---- convolution and pooling ----------------------------------------------------------------

// Relay's [top, left, bottom, right] padding of a 2-D window over input 0
// (N, C, H, W): from `pads` or `auto_pad`.
std::vector<int64_t> WindowPadding(ConvertContext& context, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& strides,
                                   const std::vector<int64_t>& dilations) {
  const std::string auto_pad = context.StringAttribute("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = context.IntsAttribute("pads").value_or(std::vector<int64_t>(4, 0));
    if (pads.size() != 4) Refuse("pads of " + std::to_string(pads.size()) + " values");
    return {pads[0], pads[1], pads[2], pads[3]};
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") Refuse("auto_pad " + auto_pad);
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  std::vector<int64_t> before(2), after(2);
  for (size_t axis = 0; axis < 2; ++axis) {
    const int64_t in = shape[2 + axis];
    const int64_t out = (in + strides[axis] - 1) / strides[axis];
    const int64_t extent = (kernel[axis] - 1) * dilations[axis] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[axis] + extent - in);
    const int64_t small = total / 2, large = total - small;
    before[axis] = auto_pad == "SAME_UPPER" ? small : large;
    after[axis] = total - before[axis];
  }
  return {before[0], before[1], after[0], after[1]};
}

std::vector<int64_t> Pair(ConvertContext& context, const std::string& name, int64_t fallback) {
  std::vector<int64_t> values = context.IntsAttribute(name).value_or(std::vector<int64_t>{});
  if (values.empty()) values = {fallback, fallback};
  if (values.size() != 2) Refuse(name + " of " + std::to_string(values.size()) + " values");
  return values;
}

std::vector<OnnxValue> ConvertConv(ConvertContext& context) {
  if (RankOf(context, 0) != 4) Refuse("only 2-D convolutions (4-D data) are supported");
  const std::vector<int64_t> weight = StaticShapeOf(context, 1);
  if (weight.size() != 4) Refuse("a weight of rank 4 is required");
  const std::vector<int64_t> kernel =
      context.IntsAttribute("kernel_shape").value_or(std::vector<int64_t>{weight[2], weight[3]});
  if (kernel.size() != 2) Refuse("a 2-D kernel_shape is required");
  const std::vector<int64_t> strides = Pair(context, "strides", 1);
  const std::vector<int64_t> dilations = Pair(context, "dilations", 1);
  const int64_t groups = context.IntAttribute("group", 1);
  std::string conv =
      Call("nn.conv2d", {context.Tensor(0), context.Tensor(1)},
           {"strides=" + IntList(strides),
            "padding=" + IntList(WindowPadding(context, kernel, strides, dilations)),
            "dilation=" + IntList(dilations), "groups=" + std::to_string(groups),
            "channels=" + std::to_string(weight[0]), "kernel_size=" + IntList(kernel)});
  if (context.HasInput(2)) conv = Call("nn.bias_add", {conv, context.Tensor(2)});
  return {Result(conv)};
}

Converter Pool(bool average) {
  return [average](ConvertContext& context) {
    if (RankOf(context, 0) != 4) Refuse("only 2-D pooling (4-D data) is supported");
    if (context.node().output_size() > 1) Refuse("its indices output is not supported");
    if (context.IntAttribute("storage_order", 0) != 0) Refuse("storage_order 1");
    const std::optional<std::vector<int64_t>> kernel = context.IntsAttribute("kernel_shape");
    if (!kernel || kernel->size() != 2) Refuse("a 2-D kernel_shape is required");
    const std::vector<int64_t> strides = Pair(context, "strides", 1);
    const std::vector<int64_t> dilations = Pair(context, "dilations", 1);
    std::vector<std::string> attributes = {
        "pool_size=" + IntList(*kernel), "strides=" + IntList(strides),
        "padding=" + IntList(WindowPadding(context, *kernel, strides, dilations)),
        std::string("ceil_mode=") + (context.IntAttribute("ceil_mode", 0) ? "True" : "False")};
    if (average) {
      if (dilations != std::vector<int64_t>{1, 1}) Refuse("dilated average pooling");
      attributes.push_back(std::string("count_include_pad=") +
                           (context.IntAttribute("count_include_pad", 0) ? "True" : "False"));
    } else {
      attributes.push_back("dilation=" + IntList(dilations));
    }
    return std::vector<OnnxValue>{
        Result(Call(average ? "nn.avg_pool2d" : "nn.max_pool2d", {context.Tensor(0)}, attributes))};
  };
}

Converter GlobalPool(const std::string& op) {
  return [op](ConvertContext& context) {
    if (RankOf(context, 0) != 4) Refuse("only 4-D data is supported");
    return std::vector<OnnxValue>{Result(Call(op, {context.Tensor(0)}))};
  };
}

// ---- data movement ---------------------------------------------------------------------------

std::vector<OnnxValue> ConvertFlatten(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = context.IntAttribute("axis", 1);
  const int64_t normalized = axis < 0 ? axis + int64_t(rank) : axis;
  if (normalized < 0 || normalized > int64_t(rank)) Refuse("axis " + std::to_string(axis));
  if (normalized == 1) return {Result(Call("nn.batch_flatten", {context.Tensor(0)}))};
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  const int64_t outer = Product(std::span(shape).first(size_t(normalized)));
  return {Result(Call("reshape", {context.Tensor(0)}, {"newshape=" + IntList({outer, -1})}))};
}

// Input `index` (a 1-D int64 shape) as ShapeEntries: its values where
// known while importing, and `take`s of it for the others.
ShapeEntries EntriesOf(ConvertContext& context, size_t index) {
  const OnnxValue& value = context.Input(index);
  if (value.dtype != DType::kInt64) Refuse("a shape other than int64");
  ShapeEntries entries;
  if (value.constant) {
    entries.known = IntValues(*value.constant);
  } else {
    if (!value.shape || value.shape->size() != 1 || (*value.shape)[0] < 0 ||
        (*value.shape)[0] > kMaximumShapeEntries)
      Refuse("the length of a shape (the result's rank) must be known while importing");
    const size_t length = size_t((*value.shape)[0]);
    entries.known = value.known_entries && value.known_entries->size() == length
                        ? *value.known_entries
                        : std::vector<int64_t>(length, -1);
  }
  const bool run_time =
      std::find(entries.known.begin(), entries.known.end(), -1) != entries.known.end();
  const std::string tensor = run_time && !value.constant ? context.Tensor(index) : "";
  for (size_t entry = 0; entry < entries.known.size(); ++entry) {
    entries.exprs.push_back(entries.known[entry] >= 0 || tensor.empty()
                                ? std::to_string(entries.known[entry]) + "i64"
                                : Call("take", {tensor, std::to_string(entry)}, {"axis=0"}));
  }
  return entries;
}

// Reshape to a shape with several entries only known at run time:
// reshape_like a bool tensor of that shape. As in Reshape, an entry 0
// copies the data's dimension and -1 is what the element count leaves;
// both are resolved at run time for the entries only known then.
std::vector<OnnxValue> RunTimeReshape(ConvertContext& context) {
  ShapeEntries entries = EntriesOf(context, 1);
  if (context.IntAttribute("allowzero", 0) != 0) Refuse("allowzero with a run-time shape");
  const std::string data = context.Tensor(0);
  const std::optional<std::vector<int64_t>>& in = context.Input(0).shape;
  const size_t in_rank = in ? in->size() : 0;
  auto dimension = [&](size_t axis) { return Extent(data, in, axis); };
  bool inferred = false;
  for (size_t entry = 0; entry < entries.known.size(); ++entry) {
    if (entries.known[entry] == 0) {
      if (entry >= in_rank) Refuse("a 0 entry past the data's rank");
      entries.exprs[entry] = dimension(entry);
      entries.known[entry] = (*in)[entry];
    } else if (entries.known[entry] < 0) {
      std::string value = context.Bind(entries.exprs[entry]);
      if (entry < in_rank) value = Where(Call("equal", {value, "0i64"}), dimension(entry), value);
      entries.exprs[entry] = context.Bind(value);
      inferred = true;
    }
  }
  if (inferred) {
    // The product of the other entries, a -1 counting as 1.
    std::string product = "1i64";
    for (const std::string& expr : entries.exprs) {
      product = Call("multiply", {product, Where(Call("less", {expr, "0i64"}), "1i64", expr)});
    }
    const std::string rest =
        context.Bind(Call("divide", {Call("ndarray_size", {data}, {"dtype=\"int64\""}), product}));
    for (size_t entry = 0; entry < entries.known.size(); ++entry) {
      if (entries.known[entry] >= 0) continue;
      entries.exprs[entry] = context.Bind(
          Where(Call("less", {entries.exprs[entry], "0i64"}), rest, entries.exprs[entry]));
    }
  }
  OnnxValue value = Shaped(ReshapedTo(data, entries), entries.known);
  value.dtype = context.Input(0).dtype;
  return {value};
}

std::vector<OnnxValue> ConvertReshape(ConvertContext& context) {
  std::vector<int64_t> shape;
  if (context.opset() < 5) {
    shape = context.IntsAttribute("shape").value_or(std::vector<int64_t>{});
  } else if (context.HasInput(1) && !context.Input(1).constant) {
    // Computed at run time (from Shape): one unknown entry follows from the
    // others, as -1 does; several need the shape itself.
    if (!context.Input(1).known_entries ||
        std::count(context.Input(1).known_entries->begin(), context.Input(1).known_entries->end(),
                   -1) > 1) {
      return RunTimeReshape(context);
    }
    shape = *context.Input(1).known_entries;
  } else {
    shape = IntValues(*context.Constant(1));
  }
  const bool allow_zero = context.IntAttribute("allowzero", 0) != 0;
  // The result's shape: 0 copies the input's dimension, -1 is unknown here
  // unless every other dimension is known.
  std::optional<std::vector<int64_t>> out_shape;
  if (const std::optional<std::vector<int64_t>>& in = context.Input(0).shape) {
    out_shape = shape;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (shape[axis] == 0 && !allow_zero)
        (*out_shape)[axis] = axis < in->size() ? (*in)[axis] : -1;
    }
    auto multiply = [](int64_t a, int64_t b) { return Product(std::vector<int64_t>{a, b}); };
    const int64_t in_count =
        std::accumulate(in->begin(), in->end(), int64_t{1},
                        [&](int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : multiply(a, b); });
    const int64_t known =
        std::accumulate(out_shape->begin(), out_shape->end(), int64_t{1},
                        [&](int64_t a, int64_t b) { return b < 0 ? a : multiply(a, b); });
    for (int64_t& dim : *out_shape) {
      if (dim < 0) dim = in_count >= 0 && known > 0 ? in_count / known : -1;
    }
  }
  return {Shaped(Call("reshape", {context.Tensor(0)},
                      {"newshape=" + IntList(shape),
                       std::string("allowzero=") + (allow_zero ? "True" : "False")}),
                 out_shape)};
}

std::vector<OnnxValue> ConvertTranspose(ConvertContext& context) {
  const std::optional<std::vector<int64_t>> perm = context.IntsAttribute("perm");
  const std::optional<std::vector<int64_t>>& in = context.Input(0).shape;
  std::optional<std::vector<int64_t>> out;
  if (in) {
    out = std::vector<int64_t>(in->rbegin(), in->rend());
    if (perm) {
      if (perm->size() != in->size()) Refuse("perm of another rank");
      for (size_t axis = 0; axis < perm->size(); ++axis)
        (*out)[axis] = (*in)[size_t(NormalizeAxis((*perm)[axis], in->size()))];
    }
  }
  if (!perm) return {Shaped(Call("transpose", {context.Tensor(0)}), out)};
  return {Shaped(Call("transpose", {context.Tensor(0)}, {"axes=" + IntList(*perm)}), out)};
}

std::vector<OnnxValue> ConvertConcat(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
  // Shape arithmetic: 1-D int64 constants concatenate while importing.
  bool constant_shapes = rank == 1;
  std::vector<int64_t> joined;
  for (size_t index = 0; index < context.input_count() && constant_shapes; ++index) {
    const OnnxValue& part = context.Input(index);
    constant_shapes = part.constant && part.constant->dtype() == DType::kInt64;
    if (constant_shapes) {
      const std::vector<int64_t> values = IntValues(*part.constant);
      joined.insert(joined.end(), values.begin(), values.end());
    }
  }
  if (constant_shapes) {
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {int64_t(joined.size())}, DType::kInt64);
    std::copy(joined.begin(), joined.end(), tensor->data<int64_t>());
    tensor->MarkImmutable();
    return {ConstantValue(tensor)};
  }
  std::string fields = "(";
  for (size_t index = 0; index < context.input_count(); ++index)
    fields += (index ? ", " : "") + context.Tensor(index);
  if (context.input_count() == 1) fields += ",";
  OnnxValue result = Result(Call("concatenate", {fields + ")"}, {"axis=" + std::to_string(axis)}));
  // A shape assembled from parts, some known while importing.
  std::vector<int64_t> entries, out;
  bool known = rank == 1, shaped = true;
  for (size_t index = 0; index < context.input_count(); ++index) {
    const OnnxValue& part = context.Input(index);
    if (!part.shape || part.shape->size() != rank) {
      shaped = known = false;
      break;
    }
    const int64_t extent = (*part.shape)[size_t(axis)];
    if (out.empty()) {
      out = *part.shape;
    } else {
      out[size_t(axis)] = out[size_t(axis)] < 0 || extent < 0 ? -1 : out[size_t(axis)] + extent;
    }
    if (!known) continue;
    if (part.constant) {
      const std::vector<int64_t> values = IntValues(*part.constant);
      entries.insert(entries.end(), values.begin(), values.end());
    } else if (part.known_entries && int64_t(part.known_entries->size()) == extent) {
      entries.insert(entries.end(), part.known_entries->begin(), part.known_entries->end());
    } else if (extent >= 0 && extent <= kMaximumShapeEntries) {
      entries.insert(entries.end(), size_t(extent), -1);
    } else {
      known = false;
    }
  }
  if (shaped) result.shape = out;
  if (known && context.Input(0).dtype == DType::kInt64) result.known_entries = entries;
  return {result};
}

std::vector<OnnxValue> ConvertUnsqueeze(ConvertContext& context) {
  std::optional<std::vector<int64_t>> axes = AxesOf(context, 13, 1);
  if (!axes) Refuse("axes are required");
  const int64_t out_rank = int64_t(RankOf(context, 0) + axes->size());
  for (int64_t& axis : *axes) axis = NormalizeAxis(axis, size_t(out_rank));
  std::sort(axes->begin(), axes->end());
  if (const Ref<relay::Tensor>& constant = context.Input(0).constant) {
    // Shape arithmetic stays constant.
    Shape shape = constant->shape();
    for (int64_t axis : *axes) shape.insert(shape.begin() + axis, 1);
    return {ConstantValue(constant->Reshape(shape))};
  }
  std::string expr = context.Tensor(0);
  for (int64_t axis : *axes) expr = Call("expand_dims", {expr}, {"axis=" + std::to_string(axis)});
  OnnxValue result = Result(expr);
  if (const std::optional<std::vector<int64_t>>& in = context.Input(0).shape) {
    std::vector<int64_t> out = *in;
    for (int64_t axis : *axes) out.insert(out.begin() + axis, 1);
    result.shape = out;
    // An entry of a shape (a scalar) stays one: unknown here.
    if (in->empty() && context.Input(0).dtype == DType::kInt64)
      result.known_entries = context.Input(0).known_entries.value_or(std::vector<int64_t>{-1});
  }
  return {result};
}

std::vector<OnnxValue> ConvertSqueeze(ConvertContext& context) {
  std::optional<std::vector<int64_t>> axes = AxesOf(context, 13, 1);
  if (!axes) return {Result(Call("squeeze", {context.Tensor(0)}))};
  const size_t rank = RankOf(context, 0);
  for (int64_t& axis : *axes) axis = NormalizeAxis(axis, rank);
  return {Result(Call("squeeze", {context.Tensor(0)}, {"axis=" + IntList(*axes)}))};
}

std::vector<OnnxValue> ConvertCast(ConvertContext& context) {
  const int64_t to = context.IntAttribute("to", 0);
  const std::optional<DType> dtype = DTypeOfElementType(int32_t(to));
  if (!dtype) Refuse("a cast to " + ElementTypeName(int32_t(to)));
  const OnnxValue& in = context.Input(0);
  if (in.constant && in.constant->dtype() == *dtype) return {in};  // already that type
  OnnxValue result = Shaped(
      Call("cast", {context.Tensor(0)}, {"dtype=\"" + std::string(DTypeName(*dtype)) + "\""}),
      in.shape);
  if (*dtype == DType::kInt64) result.known_entries = in.known_entries;
  return {result};
}

// CastLike: a cast to the second input's dtype.
std::vector<OnnxValue> ConvertCastLike(ConvertContext& context) {
  const OnnxValue& in = context.Input(0);
  const DType dtype = context.Input(1).dtype;
  if (in.dtype == dtype) return {in};
  OnnxValue result =
      Shaped(Call("cast", {context.Tensor(0)}, {"dtype=\"" + std::string(DTypeName(dtype)) + "\""}),
             in.shape);
  result.dtype = dtype;
  return {result};
}

// ---- constants and shapes ------------------------------------------------------------------

std::vector<OnnxValue> ConvertConstant(ConvertContext& context) {
  if (const onnx::AttributeProto* value = context.Attribute("value")) {
    return {ConstantValue(TensorFromProto(value->t(), context.model_folder(), "Constant's value"))};
  }
  auto filled = [](DType dtype, Shape shape, auto fill) {
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), dtype);
    fill(*tensor);
    tensor->MarkImmutable();
    return tensor;
  };
  if (const onnx::AttributeProto* value = context.Attribute("value_float")) {
    const float number = value->f();
    return {ConstantValue(
        filled(DType::kFloat32, {}, [&](Tensor& t) { t.data<float>()[0] = number; }))};
  }
  if (const onnx::AttributeProto* value = context.Attribute("value_int")) {
    const int64_t number = value->i();
    return {ConstantValue(
        filled(DType::kInt64, {}, [&](Tensor& t) { t.data<int64_t>()[0] = number; }))};
  }
  if (const onnx::AttributeProto* value = context.Attribute("value_floats")) {
    const auto& numbers = value->floats();
    return {ConstantValue(filled(DType::kFloat32, {numbers.size()}, [&](Tensor& t) {
      std::copy(numbers.begin(), numbers.end(), t.data<float>());
    }))};
  }
  if (const onnx::AttributeProto* value = context.Attribute("value_ints")) {
    const auto& numbers = value->ints();
    return {ConstantValue(filled(DType::kInt64, {numbers.size()}, [&](Tensor& t) {
      std::copy(numbers.begin(), numbers.end(), t.data<int64_t>());
    }))};
  }
  Refuse("a constant of this kind (sparse, string) is not supported");
}

// Shape: folded to a constant when every dimension is known, else shape_of.
std::vector<OnnxValue> ConvertShape(ConvertContext& context) {
  const OnnxValue& data = context.Input(0);
  if (!data.shape) Refuse("the rank of its input is unknown");
  const int64_t rank = int64_t(data.shape->size());
  int64_t start = context.IntAttribute("start", 0), end = context.IntAttribute("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  const std::vector<int64_t> dims(data.shape->begin() + start,
                                  data.shape->begin() + std::max(start, end));
  if (std::all_of(dims.begin(), dims.end(), [](int64_t dim) { return dim >= 0; })) {
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {int64_t(dims.size())}, DType::kInt64);
    std::copy(dims.begin(), dims.end(), tensor->data<int64_t>());
    tensor->MarkImmutable();
    return {ConstantValue(tensor)};
  }
  std::string expr = Call("shape_of", {context.Tensor(0)}, {"dtype=\"int64\""});
  if (start != 0 || end != rank) {
    expr = Call("strided_slice", {expr},
                {"begin=" + IntList({start}), "end=" + IntList({std::max(start, end)})});
  }
  OnnxValue value = Shaped(expr, std::vector<int64_t>{int64_t(dims.size())});
  value.known_entries = dims;
  value.dtype = DType::kInt64;
  return {value};
}

// Gather: folded when both operands are constant integers (shape
// arithmetic), else take along the axis.
std::vector<OnnxValue> ConvertGather(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
  const OnnxValue& data = context.Input(0);
  const OnnxValue& indices = context.Input(1);
  // Shape arithmetic: entries of a shape known while importing.
  std::optional<std::vector<int64_t>> values = data.known_entries;
  if (data.constant && data.constant->dtype() == DType::kInt64 && rank == 1)
    values = IntValues(*data.constant);
  if (values && indices.constant && rank == 1) {
    const std::vector<int64_t> picks = IntValues(*indices.constant);
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), indices.constant->shape(), DType::kInt64);
    bool known = true;
    for (size_t index = 0; index < picks.size() && known; ++index) {
      int64_t pick = picks[index] < 0 ? picks[index] + int64_t(values->size()) : picks[index];
      if (pick < 0 || pick >= int64_t(values->size())) Refuse("an index outside the data");
      tensor->data<int64_t>()[index] = (*values)[size_t(pick)];
      known = (*values)[size_t(pick)] >= 0 || data.constant;
    }
    if (known) {
      tensor->MarkImmutable();
      return {ConstantValue(tensor)};
    }
  }
  // ONNX's negative indices count from the end: take's "wrap" mode does
  // that for indices in [-n, n).
  OnnxValue result = Result(Call("take", {context.Tensor(0), context.Tensor(1)},
                                 {"axis=" + std::to_string(axis), "mode=\"wrap\""}));
  if (data.shape && indices.shape) {
    std::vector<int64_t> out(data.shape->begin(), data.shape->begin() + axis);
    out.insert(out.end(), indices.shape->begin(), indices.shape->end());
    out.insert(out.end(), data.shape->begin() + axis + 1, data.shape->end());
    result.shape = out;
  }
  if (values && indices.constant && rank == 1) {
    // Entries of a shape picked while importing, some only known at run time.
    std::vector<int64_t> picked;
    for (int64_t pick : IntValues(*indices.constant)) {
      if (pick < 0) pick += int64_t(values->size());
      if (pick < 0 || pick >= int64_t(values->size())) Refuse("an index outside the data");
      picked.push_back((*values)[size_t(pick)]);
    }
    result.known_entries = picked;
  }
  return {result};
}

// A reduction of `before(x)` by `op`, then `after` of the result (ReduceL2
// is sqrt of a sum of squares); ONNX's axes and keepdims.
using Wrap = std::function<std::string(const std::string&)>;
std::string Same(const std::string& value) {
  return value;
}

Converter Reduce(const std::string& op, int64_t axes_input_opset, Wrap before = Same,
                 Wrap after = Same) {
  return [op, axes_input_opset, before, after](ConvertContext& context) {
    const size_t rank = RankOf(context, 0);
    std::optional<std::vector<int64_t>> axes = AxesOf(context, axes_input_opset, 1);
    const bool keepdims = context.IntAttribute("keepdims", 1) != 0;
    std::vector<std::string> attributes{std::string("keepdims=") + (keepdims ? "True" : "False")};
    if (axes && axes->empty() && context.IntAttribute("noop_with_empty_axes", 0) != 0) {
      return std::vector<OnnxValue>{Result(context.Tensor(0))};
    }
    if (axes && !axes->empty()) {
      for (int64_t& axis : *axes) axis = NormalizeAxis(axis, rank);
      attributes.insert(attributes.begin(), "axis=" + IntList(*axes));
    }
    return std::vector<OnnxValue>{Result(after(Call(op, {before(context.Tensor(0))}, attributes)))};
  };
}

// ---- more elementwise ----------------------------------------------------------------------

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

// ---- more data movement ----------------------------------------------------------------------

// The broadcast of two static shapes (NumPy's rules).
std::vector<int64_t> BroadcastShapes(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t axis = 0; axis < a.size(); ++axis) {
    if (a[axis] == 1)
      a[axis] = b[axis];
    else if (b[axis] != 1 && b[axis] != a[axis])
      Refuse("shapes that do not broadcast");
  }
  return a;
}

std::vector<OnnxValue> ConvertExpand(ConvertContext& context) {
  if (!context.Input(1).constant) {
    // A shape computed at run time: NumPy's broadcast of the data with zeros
    // of that shape, which is what Expand is.
    const ShapeEntries entries = EntriesOf(context, 1);
    const OnnxValue& data = context.Input(0);
    std::optional<std::vector<int64_t>> shape;
    if (data.shape) {
      std::vector<int64_t> a = *data.shape, b = entries.known;
      if (a.size() < b.size()) std::swap(a, b);
      b.insert(b.begin(), a.size() - b.size(), 1);
      for (size_t axis = 0; axis < a.size(); ++axis) {
        if (a[axis] == 1 || (a[axis] < 0 && b[axis] > 1)) a[axis] = b[axis];
      }
      shape = a;
    }
    OnnxValue value =
        Shaped(Call(data.dtype == DType::kBool ? "logical_or" : "add",
                    {context.Tensor(0), Filled(entries, ZeroLiteral(data.dtype), data.dtype)}),
               shape);
    value.dtype = data.dtype;
    return {value};
  }
  const std::vector<int64_t> shape =
      BroadcastShapes(StaticShapeOf(context, 0), IntValues(*context.Constant(1)));
  return {Result(Call("broadcast_to", {context.Tensor(0)}, {"shape=" + IntList(shape)}))};
}

std::vector<OnnxValue> ConvertConstantOfShape(ConvertContext& context) {
  const ShapeEntries entries = EntriesOf(context, 0);
  std::string fill = "0f";
  DType dtype = DType::kFloat32;
  double fill_value = 0;
  if (const onnx::AttributeProto* value = context.Attribute("value")) {
    Ref<relay::Tensor> tensor = TensorFromProto(value->t(), context.model_folder(), "value");
    if (tensor->element_count() != 1) Refuse("a value of more than one element");
    dtype = tensor->dtype();
    fill = ScalarLiteral(*tensor->Reshape({}));
    if (fill.empty()) Refuse("a value of " + std::string(DTypeName(dtype)));
    if (dtype == DType::kInt64) fill_value = double(tensor->data<int64_t>()[0]);
  }
  if (entries.known.size() == 1 && entries.known[0] >= 0 &&
      entries.known[0] <= kMaximumShapeEntries && dtype == DType::kInt64) {
    // A short int64 vector (ones or zeros of a shape computation): folded,
    // so that the shapes built from it are known while importing.
    Ref<relay::Tensor> tensor = Tensor::Empty(HostDevice(), {entries.known[0]}, dtype);
    for (int64_t index = 0; index < entries.known[0]; ++index)
      tensor->data<int64_t>()[index] = int64_t(fill_value);
    tensor->MarkImmutable();
    return {ConstantValue(tensor)};
  }
  OnnxValue value;
  if (AllKnown(entries)) {
    value = Result(Call(
        "full", {fill},
        {"shape=" + IntList(entries.known), "dtype=\"" + std::string(DTypeName(dtype)) + "\""}));
  } else {
    value = Result(Filled(entries, fill, dtype));
  }
  value.shape = entries.known;
  value.dtype = dtype;
  return {value};
}

// Range: arange, its length known while importing when its bounds are.
std::vector<OnnxValue> ConvertRange(ConvertContext& context) {
  const DType dtype = context.Input(0).dtype;
  for (size_t index = 0; index < 3; ++index) {
    const OnnxValue& bound = context.Input(index);
    if (bound.dtype != dtype) Refuse("start, limit and delta of different dtypes");
    if (!bound.shape || !bound.shape->empty()) Refuse("start, limit and delta must be scalars");
  }
  std::vector<int64_t> shape{-1};
  if (context.Input(0).constant && context.Input(1).constant && context.Input(2).constant) {
    const double start = FloatValue(*context.Input(0).constant);
    const double delta = FloatValue(*context.Input(2).constant);
    if (delta == 0) Refuse("a delta of 0");
    const double length = std::ceil((FloatValue(*context.Input(1).constant) - start) / delta);
    if (!(length < double(std::numeric_limits<int32_t>::max()))) Refuse("a range too long");
    shape[0] = std::max<int64_t>(0, int64_t(length));
  }
  OnnxValue value = Shaped(Call("arange", {context.Tensor(0), context.Tensor(1), context.Tensor(2)},
                                {"dtype=\"" + std::string(DTypeName(dtype)) + "\""}),
                           shape);
  value.dtype = dtype;
  return {value};
}

std::vector<OnnxValue> ConvertTile(ConvertContext& context) {
  return {Result(
      Call("tile", {context.Tensor(0)}, {"reps=" + IntList(IntValues(*context.Constant(1)))}))};
}

// Slice with bounds known only at run time, or along axes whose extent
// is: each sliced axis is a `take` of the indices `arange` gives between
// the bounds, clamped as ONNX clamps them. Axes and steps must be known.
std::vector<OnnxValue> RunTimeSlice(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  std::optional<std::vector<int64_t>> axes;
  if (context.HasInput(3)) axes = IntValues(*context.Constant(3));
  const std::optional<std::vector<int64_t>>& bounds_shape = context.Input(1).shape;
  if (!bounds_shape || bounds_shape->size() != 1 || (*bounds_shape)[0] < 0)
    Refuse("starts of unknown length");
  const size_t count = size_t((*bounds_shape)[0]);
  if (!axes) {
    axes.emplace();
    for (size_t axis = 0; axis < count; ++axis) axes->push_back(int64_t(axis));
  }
  std::vector<int64_t> steps(count, 1);
  if (context.HasInput(4)) steps = IntValues(*context.Constant(4));
  if (axes->size() != count || steps.size() != count)
    Refuse("starts, ends, axes and steps of different lengths");
  const DType bounds_dtype = context.Input(1).dtype;
  if ((bounds_dtype != DType::kInt64 && bounds_dtype != DType::kInt32) ||
      context.Input(2).dtype != bounds_dtype)
    Refuse("starts and ends must be int32 or int64");
  const std::string starts = AsInt64(context.Tensor(1), bounds_dtype);
  const std::string ends = AsInt64(context.Tensor(2), bounds_dtype);
  const std::string input = context.Tensor(0);
  std::string data = input;
  std::vector<int64_t> shape = *context.Input(0).shape;
  for (size_t index = 0; index < count; ++index) {
    const int64_t axis = NormalizeAxis((*axes)[index], rank);
    const int64_t step = steps[index];
    if (step == 0) Refuse("a step of 0");
    const std::string extent = Extent(input, shape, size_t(axis));
    // A negative bound counts from the end; then it is clamped to [0, extent]
    // for a positive step, and for a negative one the start to
    // [0, extent - 1] and the end to [-1, extent - 1].
    auto bound = [&](const std::string& bounds, bool is_end) {
      const std::string value =
          context.Bind(Call("take", {bounds, std::to_string(index)}, {"axis=0"}));
      const std::string from_end =
          Where(Call("less", {value, "0i64"}), Call("add", {value, extent}), value);
      const std::string low = step > 0 || !is_end ? "0i64" : "-1i64";
      const std::string high = step > 0 ? extent : Call("subtract", {extent, "1i64"});
      return Call("minimum", {Call("maximum", {from_end, low}), high});
    };
    const std::string indices =
        Call("arange", {bound(starts, false), bound(ends, true), std::to_string(step) + "i64"},
             {"dtype=\"int64\""});
    data = context.Bind(Call("take", {data, indices}, {"axis=" + std::to_string(axis)}));
    shape[size_t(axis)] = -1;
  }
  OnnxValue value = Shaped(data, shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// Slice of a short constant int64 vector (a shape) with constant bounds:
// folded, as NumPy slices it (the bounds clamped as ONNX clamps them).
std::optional<OnnxValue> FoldSlice(ConvertContext& context) {
  const OnnxValue& data = context.Input(0);
  if (context.opset() < 10 || !data.constant || data.constant->dtype() != DType::kInt64 ||
      data.constant->ndim() != 1 || data.constant->element_count() > kMaximumShapeEntries ||
      !context.Input(1).constant || !context.Input(2).constant ||
      (context.HasInput(3) && !context.Input(3).constant) ||
      (context.HasInput(4) && !context.Input(4).constant)) {
    return std::nullopt;
  }
  const std::vector<int64_t> starts = IntValues(*context.Constant(1));
  const std::vector<int64_t> ends = IntValues(*context.Constant(2));
  if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
  if (context.HasInput(3) && NormalizeAxis(IntValues(*context.Constant(3)).at(0), 1) != 0)
    return std::nullopt;
  const int64_t step = context.HasInput(4) ? IntValues(*context.Constant(4)).at(0) : 1;
  if (step == 0) Refuse("a step of 0");
  const int64_t extent = data.constant->element_count();
  auto clamp = [&](int64_t value, bool is_end) {
    if (value < 0) value += extent;
    if (step > 0) return std::clamp<int64_t>(value, 0, extent);
    return std::min<int64_t>(std::max<int64_t>(value, is_end ? -1 : 0), extent - 1);
  };
  std::vector<int64_t> picked;
  for (int64_t at = clamp(starts[0], false), end = clamp(ends[0], true);
       step > 0 ? at < end : at > end; at += step) {
    picked.push_back(data.constant->data<int64_t>()[at]);
  }
  Ref<Tensor> result = Tensor::Empty(HostDevice(), {int64_t(picked.size())}, DType::kInt64);
  std::copy(picked.begin(), picked.end(), result->data<int64_t>());
  result->MarkImmutable();
  return ConstantValue(result);
}

std::vector<OnnxValue> ConvertSlice(ConvertContext& context) {
  if (std::optional<OnnxValue> folded = FoldSlice(context)) return {*folded};
  std::vector<int64_t> starts, ends, axes, steps;
  if (context.opset() >= 10) {
    bool run_time = !context.Input(1).constant || !context.Input(2).constant;
    const std::optional<std::vector<int64_t>>& shape = context.Input(0).shape;
    if (!run_time && shape) {
      // Bounds known, but an axis they slice is `?`.
      const size_t count = size_t(context.Input(1).constant->element_count());
      std::vector<int64_t> sliced;
      if (context.HasInput(3)) sliced = IntValues(*context.Constant(3));
      for (size_t axis = 0; axis < count && sliced.size() < count; ++axis)
        sliced.push_back(int64_t(axis));
      for (int64_t axis : sliced)
        run_time |= (*shape)[size_t(NormalizeAxis(axis, shape->size()))] < 0;
    }
    if (run_time) return RunTimeSlice(context);
  }
  if (context.opset() < 10) {
    starts = context.IntsAttribute("starts").value_or(std::vector<int64_t>{});
    ends = context.IntsAttribute("ends").value_or(std::vector<int64_t>{});
    axes = context.IntsAttribute("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = IntValues(*context.Constant(1));
    ends = IntValues(*context.Constant(2));
    if (context.HasInput(3)) axes = IntValues(*context.Constant(3));
    if (context.HasInput(4)) steps = IntValues(*context.Constant(4));
  }
  const size_t rank = RankOf(context, 0);
  if (axes.empty()) {
    for (size_t axis = 0; axis < starts.size(); ++axis) axes.push_back(int64_t(axis));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    Refuse("starts, ends, axes and steps of different lengths");
  std::vector<int64_t> shape = *context.Input(0).shape;
  // Clamped as ONNX clamps them (a huge end means "to the end").
  for (size_t index = 0; index < axes.size(); ++index) {
    axes[index] = NormalizeAxis(axes[index], rank);
    const int64_t extent = shape[size_t(axes[index])];
    if (extent < 0) Refuse("slicing an axis only known at run time (before opset 10)");
    // A negative step reads from a start in [0, extent - 1] down to an end in
    // [-1, extent - 1] (an empty axis gives an empty range).
    auto clamp = [&](int64_t value, bool is_end) {
      if (value < 0) value += extent;
      if (steps[index] > 0) return std::clamp<int64_t>(value, 0, extent);
      return std::min<int64_t>(std::max<int64_t>(value, is_end ? -1 : 0), extent - 1);
    };
    if (steps[index] == 0) Refuse("a step of 0");
    starts[index] = clamp(starts[index], false);
    ends[index] = clamp(ends[index], true);
  }
  // Positive steps slice in one strided_slice; an axis read backwards
  // takes the indices an arange of the (clamped) bounds gives.
  std::string data = context.Tensor(0);
  std::vector<int64_t> forward_starts, forward_ends, forward_steps, forward_axes;
  for (size_t index = 0; index < axes.size(); ++index) {
    const int64_t step = steps[index];
    shape[size_t(axes[index])] =
        step > 0 ? std::max<int64_t>(0, (ends[index] - starts[index] + step - 1) / step)
                 : std::max<int64_t>(0, (starts[index] - ends[index] - step - 1) / -step);
    if (step > 0) {
      forward_starts.push_back(starts[index]);
      forward_ends.push_back(std::max(ends[index], starts[index]));  // an empty slice
      forward_steps.push_back(step);
      forward_axes.push_back(axes[index]);
      continue;
    }
    const std::string indices =
        Call("arange",
             {std::to_string(starts[index]) + "i64", std::to_string(ends[index]) + "i64",
              std::to_string(step) + "i64"},
             {"dtype=\"int64\""});
    data = Call("take", {data, indices}, {"axis=" + std::to_string(axes[index])});
  }
  if (!forward_axes.empty()) {
    data = Call("strided_slice", {data},
                {"begin=" + IntList(forward_starts), "end=" + IntList(forward_ends),
                 "strides=" + IntList(forward_steps), "axes=" + IntList(forward_axes)});
  }
  return {Shaped(data, shape)};
}

std::vector<OnnxValue> ConvertSplit(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
  std::vector<int64_t> sizes;
  if (context.opset() < 13) {
    sizes = context.IntsAttribute("split").value_or(std::vector<int64_t>{});
  } else if (context.HasInput(1)) {
    sizes = IntValues(*context.Constant(1));
  }
  const size_t outputs = size_t(context.node().output_size());
  std::string sections;
  if (sizes.empty()) {
    const int64_t extent = StaticShapeOf(context, 0)[size_t(axis)];
    if (extent % int64_t(outputs) != 0) Refuse("an axis the outputs do not divide evenly");
    sections = std::to_string(outputs);
  } else {
    if (sizes.size() != outputs) Refuse("split sizes for another number of outputs");
    for (int64_t part : sizes) {
      if (part <= 0) Refuse("empty splits are not supported");
    }
    std::vector<int64_t> indices;
    int64_t position = 0;
    for (size_t index = 0; index + 1 < sizes.size(); ++index)
      indices.push_back(position += sizes[index]);
    sections = IntList(indices);
  }
  const std::string parts =
      context.Bind(Call("split", {context.Tensor(0)},
                        {"indices_or_sections=" + sections, "axis=" + std::to_string(axis)}));
  std::vector<OnnxValue> results;
  for (size_t index = 0; index < outputs; ++index)
    results.push_back(Result(parts + "." + std::to_string(index)));
  return results;
}

std::vector<OnnxValue> ConvertPad(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  std::vector<int64_t> pads = context.opset() < 11
                                  ? context.IntsAttribute("pads").value_or(std::vector<int64_t>{})
                                  : IntValues(*context.Constant(1));
  if (pads.size() != 2 * rank) Refuse("pads for another rank");
  for (int64_t pad : pads) {
    if (pad < 0) Refuse("negative pads (cropping) are not supported");
  }
  std::string widths = "[";
  for (size_t axis = 0; axis < rank; ++axis)
    widths += (axis ? ", " : "") + IntList({pads[axis], pads[axis + rank]});
  widths += "]";
  const std::string mode = context.StringAttribute("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") Refuse("mode " + mode);
  std::string value = Literal(context, 0);
  if (context.opset() < 11) {
    value = Literal(context, context.FloatAttribute("value", 0.0f));
  } else if (context.HasInput(2)) {
    value = context.Tensor(2);
  }
  return {Result(Call("nn.pad", {context.Tensor(0), value},
                      {"pad_width=" + widths, "pad_mode=\"" + mode + "\""}))};
}

// ---- layout ------------------------------------------------------------------------------

// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape of
// static shapes.
std::vector<OnnxValue> ConvertDepthToSpace(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("4-D data is required");
  const int64_t b = context.IntAttribute("blocksize", 0);
  const auto [n, c, h, w] = std::array<int64_t, 4>{shape[0], shape[1], shape[2], shape[3]};
  if (b <= 0 || c % (b * b) != 0) Refuse("a blocksize that does not divide the channels");
  const bool dcr = context.StringAttribute("mode", "DCR") == "DCR";
  const std::vector<int64_t> split = dcr ? std::vector<int64_t>{n, b, b, c / (b * b), h, w}
                                         : std::vector<int64_t>{n, c / (b * b), b, b, h, w};
  const std::vector<int64_t> order =
      dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
  return {Result(Call(
      "reshape",
      {Call("transpose", {Call("reshape", {context.Tensor(0)}, {"newshape=" + IntList(split)})},
            {"axes=" + IntList(order)})},
      {"newshape=" + IntList({n, c / (b * b), h * b, w * b})}))};
}

std::vector<OnnxValue> ConvertSpaceToDepth(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("4-D data is required");
  const int64_t b = context.IntAttribute("blocksize", 0);
  const auto [n, c, h, w] = std::array<int64_t, 4>{shape[0], shape[1], shape[2], shape[3]};
  if (b <= 0 || h % b != 0 || w % b != 0) Refuse("a blocksize that does not divide the map");
  return {Result(Call("reshape",
                      {Call("transpose",
                            {Call("reshape", {context.Tensor(0)},
                                  {"newshape=" + IntList({n, c, h / b, b, w / b, b})})},
                            {"axes=" + IntList({0, 3, 5, 1, 2, 4})})},
                      {"newshape=" + IntList({n, c * b * b, h / b, w / b})}))};
}

std::vector<OnnxValue> ConvertConvTranspose(ConvertContext& context) {
  if (RankOf(context, 0) != 4) Refuse("only 2-D transposed convolutions (4-D data) are supported");
  const std::vector<int64_t> weight = StaticShapeOf(context, 1);
  if (weight.size() != 4) Refuse("a weight of rank 4 is required");
  if (context.Attribute("output_shape") != nullptr) Refuse("output_shape is not supported");
  const std::string auto_pad = context.StringAttribute("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") Refuse("auto_pad " + auto_pad);
  const int64_t groups = context.IntAttribute("group", 1);
  std::vector<int64_t> pads = context.IntsAttribute("pads").value_or(std::vector<int64_t>(4, 0));
  if (pads.size() != 4) Refuse("pads of " + std::to_string(pads.size()) + " values");
  std::string conv = Call(
      "nn.conv2d_transpose", {context.Tensor(0), context.Tensor(1)},
      {"strides=" + IntList(Pair(context, "strides", 1)), "padding=" + IntList(pads),
       "output_padding=" + IntList(Pair(context, "output_padding", 0)),
       "dilation=" + IntList(Pair(context, "dilations", 1)), "groups=" + std::to_string(groups),
       "channels=" + std::to_string(Product(std::vector<int64_t>{weight[1], groups})),
       "kernel_size=" + IntList({weight[2], weight[3]})});
  if (context.HasInput(2)) conv = Call("nn.bias_add", {conv, context.Tensor(2)});
  return {Result(conv)};
}

// Resize of 4-D NCHW data over its spatial axes, as image.resize2d: the
// output size from `sizes` or from `scales` (floor(extent * scale)).
// The spatial size a Resize (or Upsample) of NCHW data of `shape` by
// `scales` gives: only scales that give a whole size and leave the batch
// and channels alone.
std::vector<int64_t> ScaledSize(const std::vector<int64_t>& shape,
                                const Ref<relay::Tensor>& scales) {
  if (scales->dtype() != DType::kFloat32 || scales->element_count() != 4)
    Refuse("scales of 4 float32 values are required");
  const float* scale = scales->data<float>();
  if (scale[0] != 1.0f || scale[1] != 1.0f) Refuse("scaling the batch or channel axis");
  for (int axis = 2; axis < 4; ++axis) {
    if (!(double(shape[size_t(axis)]) * scale[axis] < double(std::numeric_limits<int32_t>::max())))
      Refuse("scales that give an output too large");
  }
  const std::vector<int64_t> size = {int64_t(std::floor(double(shape[2]) * scale[2])),
                                     int64_t(std::floor(double(shape[3]) * scale[3]))};
  // ONNX maps coordinates by the scale itself, image.resize2d by the ratio
  // of the extents: the same only where the scale gives an exact size.
  if (double(size[0]) != double(shape[2]) * scale[2] ||
      double(size[1]) != double(shape[3]) * scale[3]) {
    Refuse("scales that do not give a whole output size");
  }
  return size;
}

// image.resize2d of input 0 (NCHW, `shape`) to `size` by `mode`.
OnnxValue Resized(ConvertContext& context, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& size, const std::string& mode,
                  const std::string& coordinates, const std::string& rounding) {
  if (coordinates == "tf_crop_and_resize") Refuse("tf_crop_and_resize is not supported");
  std::vector<std::string> attributes = {"size=" + IntList(size),
                                         "coordinate_transformation_mode=\"" + coordinates + "\""};
  if (mode == "nearest") {
    attributes.push_back("method=\"nearest_neighbor\"");
    attributes.push_back("rounding_method=\"" + rounding + "\"");
  } else if (mode == "linear" || mode == "bilinear") {
    attributes.push_back("method=\"linear\"");
  } else {
    Refuse("mode " + mode + " is not supported");
  }
  return Shaped(Call("image.resize2d", {context.Tensor(0)}, attributes),
                std::vector<int64_t>{shape[0], shape[1], size[0], size[1]});
}

std::vector<OnnxValue> ConvertResize(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("only 4-D (NCHW) data is supported");
  const size_t scales_input = context.opset() < 11 ? 1 : 2;
  std::vector<int64_t> size;
  if (context.opset() >= 11 && context.HasInput(3)) {
    const std::vector<int64_t> sizes = IntValues(*context.Constant(3));
    if (sizes.size() != 4 || sizes[0] != shape[0] || sizes[1] != shape[1])
      Refuse("sizes other than the spatial ones");
    size = {sizes[2], sizes[3]};
  } else {
    size = ScaledSize(shape, context.Constant(scales_input));
  }
  std::string coordinates = context.StringAttribute("coordinate_transformation_mode", "half_pixel");
  std::string rounding = context.StringAttribute("nearest_mode", "round_prefer_floor");
  if (context.opset() < 11) {
    // Resize-10 samples at x_out / scale and takes the floor.
    coordinates = "asymmetric";
    rounding = "floor";
  }
  return {Resized(context, shape, size, context.StringAttribute("mode", "nearest"), coordinates,
                  rounding)};
}

// Upsample (opsets 7-9): Resize-10's sampling, its scales an attribute
// (opset 7) or an input.
std::vector<OnnxValue> ConvertUpsample(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("only 4-D (NCHW) data is supported");
  Ref<relay::Tensor> scales;
  if (context.opset() < 9) {
    const onnx::AttributeProto* attribute = context.Attribute("scales");
    if (attribute == nullptr || attribute->floats_size() != 4) Refuse("scales of 4 values");
    scales = relay::Tensor::Empty(HostDevice(), {4}, DType::kFloat32);
    for (int index = 0; index < 4; ++index) scales->data<float>()[index] = attribute->floats(index);
  } else {
    scales = context.Constant(1);
  }
  return {Resized(context, shape, ScaledSize(shape, scales),
                  context.StringAttribute("mode", "nearest"), "asymmetric", "floor")};
}

// atan(x), written out over sqrt and arithmetic (there is no atan
// kernel): |x| > 1 uses atan(x) = pi/2 - atan(1/x); two halvings,
// atan(z) = 2 atan(z / (1 + sqrt(1 + z^2))), bring the argument below
// tan(pi/16) ~ 0.199, where 12 terms of atan's series are exact to
// float64's precision.
std::string Arctangent(const ConvertContext& context, const std::string& x) {
  const std::string magnitude = Call("abs", {x});
  const std::string beyond_one = Call("greater", {magnitude, Literal(context, 1)});
  std::string z = Where(beyond_one, Call("divide", {Literal(context, 1), magnitude}), magnitude);
  for (int halving = 0; halving < 2; ++halving) {
    z = Call("divide", {z, Call("add", {Literal(context, 1),
                                        Call("sqrt", {Call("add", {Literal(context, 1),
                                                                   Call("multiply", {z, z})})})})});
  }
  const std::string square = Call("multiply", {z, z});
  // Horner's form of sum over n of (-1)^n z^(2n+1) / (2n+1).
  std::string series = Literal(context, (11 % 2 ? -1.0 : 1.0) / 23.0);
  for (int n = 10; n >= 0; --n) {
    series = Call("add", {Literal(context, (n % 2 ? -1.0 : 1.0) / double(2 * n + 1)),
                          Call("multiply", {square, series})});
  }
  const std::string reduced =
      Call("multiply", {Literal(context, 4), Call("multiply", {z, series})});
  const std::string angle =
      Where(beyond_one, Call("subtract", {Literal(context, 1.5707963267948966), reduced}), reduced);
  return Call("multiply", {Call("sign", {x}), angle});
}

const std::map<std::string, Converter>& Table() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> converters;
    for (const auto& [onnx_name, relay_name] :
         std::vector<std::pair<std::string, std::string>>{{"Relu", "nn.relu"},
                                                          {"Sigmoid", "sigmoid"},
                                                          {"Tanh", "tanh"},
                                                          {"Exp", "exp"},
                                                          {"Log", "log"},
                                                          {"Sqrt", "sqrt"},
                                                          {"Abs", "abs"},
                                                          {"Neg", "negative"},
                                                          {"Floor", "floor"},
                                                          {"Ceil", "ceil"},
                                                          {"Erf", "erf"},
                                                          {"Sin", "sin"},
                                                          {"Cos", "cos"},
                                                          {"Not", "logical_not"},
                                                          {"Sign", "sign"},
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
           Call("minimum", {Literal(context, 0),
                            Call("multiply",
                                 {Literal(context, alpha),
                                  Call("subtract",
                                       {Call("exp", {Call("divide", {x, Literal(context, alpha)})}),
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
      return Call("multiply",
                  {x, Call("clip",
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
    converters["Mean"] = ConvertMean;
    converters["Size"] = ConvertSize;
    converters["ArgMax"] = ArgReduce("argmax");
    converters["ArgMin"] = ArgReduce("argmin");
    converters["PRelu"] = ConvertPRelu;
    converters["IsInf"] = ConvertIsInf;
    converters["Expand"] = ConvertExpand;
    converters["ConstantOfShape"] = ConvertConstantOfShape;
    converters["Tile"] = ConvertTile;
    converters["Range"] = ConvertRange;
    converters["Slice"] = ConvertSlice;
    converters["Split"] = ConvertSplit;
    converters["Pad"] = ConvertPad;
    converters["Max"] = Variadic("maximum");
    converters["Min"] = Variadic("minimum");
    converters["Sum"] = Variadic("add");
    converters["Div"] = ConvertDiv;
    converters["Pow"] = ConvertPow;
    converters["Mod"] = ConvertMod;
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
    converters["Gemm"] = ConvertGemm;
    converters["MatMul"] = ConvertMatMul;
    converters["Conv"] = ConvertConv;
    converters["MaxPool"] = Pool(false);
    converters["AveragePool"] = Pool(true);
    converters["GlobalAveragePool"] = GlobalPool("nn.global_avg_pool2d");
    converters["GlobalMaxPool"] = GlobalPool("nn.global_max_pool2d");
    converters["Flatten"] = ConvertFlatten;
    converters["Reshape"] = ConvertReshape;
    converters["Transpose"] = ConvertTranspose;
    converters["Concat"] = ConvertConcat;
    converters["Unsqueeze"] = ConvertUnsqueeze;
    converters["Squeeze"] = ConvertSqueeze;
    converters["Cast"] = ConvertCast;
    converters["CastLike"] = ConvertCastLike;
    converters["Constant"] = ConvertConstant;
    converters["Shape"] = ConvertShape;
    converters["Gather"] = ConvertGather;
    // ReduceSum takes its axes as an input from opset 13, the others from 18.
    converters["ReduceSum"] = Reduce("sum", 13);
    converters["ReduceMean"] = Reduce("mean", 18);
    converters["ReduceMax"] = Reduce("max", 18);
    converters["ReduceMin"] = Reduce("min", 18);
    converters["ReduceProd"] = Reduce("prod", 18);
    auto square = [](const std::string& x) { return Call("multiply", {x, x}); };
    converters["ReduceL1"] =
        Reduce("sum", 18, [](const std::string& x) { return Call("abs", {x}); });
    converters["ReduceL2"] =
        Reduce("sum", 18, square, [](const std::string& x) { return Call("sqrt", {x}); });
    converters["ReduceSumSquare"] = Reduce("sum", 18, square);
    converters["ReduceLogSum"] =
        Reduce("sum", 18, Same, [](const std::string& x) { return Call("log", {x}); });
    converters["ReduceLogSumExp"] = Reduce(
        "sum", 18, [](const std::string& x) { return Call("exp", {x}); },
        [](const std::string& x) { return Call("log", {x}); });
    converters["DepthToSpace"] = ConvertDepthToSpace;
    converters["SpaceToDepth"] = ConvertSpaceToDepth;
    converters["ConvTranspose"] = ConvertConvTranspose;
    converters["Resize"] = ConvertResize;
    converters["Upsample"] = ConvertUpsample;
    // Hyperbolic and other functions written out over exp, log, sin, cos.
    converters["Sinh"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call("divide",
                  {Call("subtract", {Call("exp", {x}), Call("exp", {Call("negative", {x})})}),
                   Literal(context, 2)});
    });
    converters["Cosh"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call("divide", {Call("add", {Call("exp", {x}), Call("exp", {Call("negative", {x})})}),
                             Literal(context, 2)});
    });
    converters["Tan"] = Formula([](ConvertContext&, const std::string& x) {
      return Call("divide", {Call("sin", {x}), Call("cos", {x})});
    });
    converters["Asinh"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call("log", {Call("add", {x, Call("sqrt", {Call("add", {Call("multiply", {x, x}),
                                                                     Literal(context, 1)})})})});
    });
    converters["Acosh"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call("log",
                  {Call("add", {x, Call("sqrt", {Call("subtract", {Call("multiply", {x, x}),
                                                                   Literal(context, 1)})})})});
    });
    converters["Atanh"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call("multiply",
                  {Literal(context, 0.5),
                   Call("log", {Call("divide", {Call("add", {Literal(context, 1), x}),
                                                Call("subtract", {Literal(context, 1), x})})})});
    });
    converters["Atan"] = Formula(Arctangent);
    // asin(x) = atan(x / sqrt(1 - x^2)); acos(x) = 2 atan(sqrt((1 - x) / (1 + x))),
    // which keeps its precision near x = 1.
    converters["Asin"] = Formula([](ConvertContext& context, const std::string& x) {
      return Arctangent(
          context,
          Call("divide", {x, Call("sqrt", {Call("subtract", {Literal(context, 1),
                                                             Call("multiply", {x, x})})})}));
    });
    converters["Acos"] = Formula([](ConvertContext& context, const std::string& x) {
      return Call(
          "multiply",
          {Literal(context, 2),
           Arctangent(context,
                      Call("sqrt", {Call("divide", {Call("subtract", {Literal(context, 1), x}),
                                                    Call("add", {Literal(context, 1), x})})}))});
    });
    converters["Shrink"] = Formula([](ConvertContext& context, const std::string& x) {
      const double lambd = context.FloatAttribute("lambd", 0.5f);
      const double bias = context.FloatAttribute("bias", 0.0f);
      return Where(Call("less", {x, Literal(context, -lambd)}),
                   Call("add", {x, Literal(context, bias)}),
                   Where(Call("greater", {x, Literal(context, lambd)}),
                         Call("subtract", {x, Literal(context, bias)}), Literal(context, 0)));
    });
    AddRecurrentConverters(converters);
    AddControlFlowConverters(converters);
    AddIndexConverters(converters);
    AddNormalizationConverters(converters);
    AddEinsumConverter(converters);
    return converters;
  }();
  return table;
}

}  // namespace

const Ref<relay::Tensor>& ConvertContext::Constant(size_t index) const {
  if (!HasInput(index)) Refuse("input " + std::to_string(index) + " is required");
  const OnnxValue& value = Input(index);
  if (!value.constant) {
    Refuse("input " + std::to_string(index) + " must be known while importing (a constant)");
  }
  return value.constant;
}

std::string ConvertContext::Bind(const std::string& expr) {
  const std::string variable = Fresh("tmp");
  Let(variable, expr);
  return variable;
}

const onnx::AttributeProto* ConvertContext::Attribute(const std::string& name) const {
  for (const onnx::AttributeProto& attribute : node().attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t ConvertContext::IntAttribute(const std::string& name, int64_t fallback) const {
  const onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return fallback;
  if (attribute->type() != onnx::AttributeProto::INT)
    Refuse("attribute " + name + " is not an int");
  return attribute->i();
}

float ConvertContext::FloatAttribute(const std::string& name, float fallback) const {
  const onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return fallback;
  if (attribute->type() != onnx::AttributeProto::FLOAT)
    Refuse("attribute " + name + " is not a float");
  return attribute->f();
}

std::string ConvertContext::StringAttribute(const std::string& name,
                                            const std::string& fallback) const {
  const onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return fallback;
  if (attribute->type() != onnx::AttributeProto::STRING)
    Refuse("attribute " + name + " is not a string");
  return attribute->s();
}

std::optional<std::vector<int64_t>> ConvertContext::IntsAttribute(const std::string& name) const {
  const onnx::AttributeProto* attribute = Attribute(name);
  if (attribute == nullptr) return std::nullopt;
  if (attribute->type() != onnx::AttributeProto::INTS) Refuse("attribute " + name + " is not ints");
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

const Converter* FindConverter(const std::string& op_type) {
  auto found = Table().find(op_type);
  return found == Table().end() ? nullptr : &found->second;
}

std::vector<std::string> ConvertedOperators() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : Table()) names.push_back(name);
  return names;
}

std::string ScalarLiteral(const relay::Tensor& scalar) {
  // Non-finite floats have no literal: they stay weights.
  if ((scalar.dtype() == DType::kFloat32 && !std::isfinite(scalar.data<float>()[0])) ||
      (scalar.dtype() == DType::kFloat64 && !std::isfinite(scalar.data<double>()[0]))) {
    return "";
  }
  switch (scalar.dtype()) {
    case DType::kFloat32:
      return FloatText(scalar.data<float>()[0]);
    case DType::kFloat64:
      return Float64Text(scalar.data<double>()[0]);
    case DType::kInt64:
      return std::to_string(scalar.data<int64_t>()[0]) + "i64";
    case DType::kInt32:
      return std::to_string(scalar.data<int32_t>()[0]);
    case DType::kBool:
      return scalar.data<bool>()[0] ? "True" : "False";
    default:
      return "";
  }
}

std::string TensorLiteral(const relay::Tensor& tensor) {
  if (tensor.ndim() == 0) return ScalarLiteral(tensor);
  const std::vector<int64_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.element_count() == 0) {
    return Call(
        "zeros", {},
        {"shape=" + IntList(shape), "dtype=\"" + std::string(DTypeName(tensor.dtype())) + "\""});
  }
  std::string elements;
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    const std::string element = ScalarLiteral(*relay::Tensor::View(
        tensor.storage(), tensor.byte_offset() + size_t(index) * DTypeSize(tensor.dtype()), {},
        tensor.dtype()));
    if (element.empty()) return "";
    elements += (index ? ", " : "") + element;
  }
  const std::string stacked =
      Call("stack", {"(" + elements + (tensor.element_count() == 1 ? ",)" : ")")}, {"axis=0"});
  return shape.size() == 1 ? stacked : Call("reshape", {stacked}, {"newshape=" + IntList(shape)});
}

}  // namespace relay::onnx_import
