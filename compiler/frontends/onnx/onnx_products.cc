// Products, convolutions and pooling: Gemm, MatMul, Conv, ConvTranspose,
// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool.
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

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
  if (RankOf(context, 0) != 4)
    Refuse("only 1-D and 2-D convolutions (3-D or 4-D data) are supported");
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
    if (RankOf(context, 0) != 4) Refuse("only 1-D and 2-D pooling (3-D or 4-D data) is supported");
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
    if (RankOf(context, 0) != 4) Refuse("only 3-D or 4-D data is supported");
    return std::vector<OnnxValue>{Result(Call(op, {context.Tensor(0)}))};
  };
}

// ConvTranspose. Its pads may be given, or derived from the output size it
// must have: `output_shape`, or for SAME_UPPER/SAME_LOWER the input's size
// times the stride. The padding that size needs is split between the two
// ends (the larger half at the end for SAME_UPPER, at the start
// otherwise, as ONNX specifies); a size past the full result is extra
// output padding at the end.
std::vector<OnnxValue> ConvertConvTranspose(ConvertContext& context) {
  if (RankOf(context, 0) != 4)
    Refuse("only 1-D and 2-D transposed convolutions (3-D or 4-D data) are supported");
  const std::vector<int64_t> weight = StaticShapeOf(context, 1);
  if (weight.size() != 4) Refuse("a weight of rank 4 is required");
  const std::string auto_pad = context.StringAttribute("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    Refuse("auto_pad " + auto_pad);
  const int64_t groups = context.IntAttribute("group", 1);
  const std::vector<int64_t> strides = Pair(context, "strides", 1);
  const std::vector<int64_t> dilations = Pair(context, "dilations", 1);
  std::vector<int64_t> output_padding = Pair(context, "output_padding", 0);
  std::vector<int64_t> pads = context.IntsAttribute("pads").value_or(std::vector<int64_t>(4, 0));
  if (pads.size() != 4) Refuse("pads of " + std::to_string(pads.size()) + " values");
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  std::optional<std::vector<int64_t>> target = context.IntsAttribute("output_shape");
  if (target) {
    if (target->size() < 2) Refuse("an output_shape of fewer than 2 extents");
    target->erase(target->begin(), target->end() - 2);  // the spatial extents
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const std::vector<int64_t> shape = StaticShapeOf(context, 0);
    target = std::vector<int64_t>{shape[2] * strides[0], shape[3] * strides[1]};
  }
  if (target) {
    const std::vector<int64_t> shape = StaticShapeOf(context, 0);
    for (size_t axis = 0; axis < 2; ++axis) {
      const int64_t full = strides[axis] * (shape[2 + axis] - 1) + output_padding[axis] +
                           (weight[2 + axis] - 1) * dilations[axis] + 1;
      const int64_t total = full - (*target)[axis];
      if (total < 0) {
        pads[axis] = pads[axis + 2] = 0;
        output_padding[axis] -= total;
        continue;
      }
      const int64_t small = total / 2, large = total - small;
      pads[axis] = auto_pad == "SAME_UPPER" ? small : large;
      pads[axis + 2] = total - pads[axis];
    }
  }
  std::string conv =
      Call("nn.conv2d_transpose", {context.Tensor(0), context.Tensor(1)},
           {"strides=" + IntList(strides), "padding=" + IntList(pads),
            "output_padding=" + IntList(output_padding), "dilation=" + IntList(dilations),
            "groups=" + std::to_string(groups),
            "channels=" + std::to_string(Product(std::vector<int64_t>{weight[1], groups})),
            "kernel_size=" + IntList({weight[2], weight[3]})});
  if (context.HasInput(2)) conv = Call("nn.bias_add", {conv, context.Tensor(2)});
  return {Result(conv)};
}

}  // namespace

void AddProductConverters(std::map<std::string, Converter>& converters) {
  converters["Gemm"] = ConvertGemm;
  converters["MatMul"] = ConvertMatMul;
  converters["Conv"] = WithOneDimensional(ConvertConv);
  converters["MaxPool"] = WithOneDimensional(Pool(false));
  converters["AveragePool"] = WithOneDimensional(Pool(true));
  converters["GlobalAveragePool"] = WithOneDimensional(GlobalPool("nn.global_avg_pool2d"));
  converters["GlobalMaxPool"] = WithOneDimensional(GlobalPool("nn.global_max_pool2d"));
  converters["ConvTranspose"] = WithOneDimensional(ConvertConvTranspose);
}

}  // namespace relay::onnx_import
