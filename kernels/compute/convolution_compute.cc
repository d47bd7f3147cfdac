// Compute definitions of the convolution, pooling and resizing operators
// (nn.conv2d, nn.conv2d_transpose, nn.conv2d_backward_weight, nn.max_pool2d,
// nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d,
// nn.adaptive_avg_pool2d, nn.adaptive_max_pool2d, the pools' gradients
// nn.*pool2d_grad, image.resize2d, nn.upsampling), attached to the operator table by
// AttachConvolutionComputes. The schedule is the naive one of
// BuildInjectiveKernel: one kir::ReduceNode per output element.
//
// These definitions need inputs with constant shapes (RunDefinition
// specialises every kOutElementwiseFusable operator and the resizes):
// window geometry, padding and interpolation coordinates are computed from
// known extents. Layouts are any arrangement of N, C, H, W (and O, I, H, W
// for conv2d's weight), as the type relations accept.
//
// Padding is never read: an element of the padded border is a Select
// between the value at a clamped (always in-bounds) index and the pad value,
// because a Select evaluates both of its operands.
//
// Precision: convolutions accumulate in DotAccumulator(out_dtype) (float32
// for float32 and float16, as BLAS-based convolutions do; integers wrap in
// out_dtype, as TVM's do); averages accumulate in float64 and round once to
// the output dtype. Float16 maxima are taken in float32.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "kernels/compute/convolution_compute.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

int64_t ConstantExtent(const Expr& extent) {
  const auto* constant = As<IntImmNode>(extent);
  if (constant == nullptr) {
    throw Error(ErrorKind::kInternal,
                "convolution and pooling compute definitions need inputs with constant shapes");
  }
  return constant->value;
}

// Where each letter of `letters` sits in `layout` (validated by the type
// relation): position[k] is the tensor axis of letters[k].
std::array<size_t, 4> LayoutPositions(const std::string& layout, std::string_view letters) {
  std::array<size_t, 4> position{};
  for (size_t letter = 0; letter < 4; ++letter) position[letter] = layout.find(letters[letter]);
  return position;
}

// The (N, C, H, W) extents of a tensor in `layout`.
std::array<int64_t, 4> ExtentsIn(const TensorExpr& tensor, const std::array<size_t, 4>& layout) {
  std::array<int64_t, 4> extents{};
  for (size_t letter = 0; letter < 4; ++letter)
    extents[letter] = ConstantExtent(tensor.shape[layout[letter]]);
  return extents;
}

// Arranges per-letter values into a layout's axis order.
std::vector<Expr> Arranged(const std::array<size_t, 4>& layout, std::array<Expr, 4> values) {
  std::vector<Expr> arranged(4);
  for (size_t letter = 0; letter < 4; ++letter) arranged[layout[letter]] = values[letter];
  return arranged;
}

constexpr size_t kBatch = 0, kChannel = 1, kHeight = 2, kWidth = 3;

// The sliding-window output extent (see WindowOutput in
// kernels/operators/neural_network.cc, which has validated it).
int64_t WindowExtent(int64_t input, int64_t padding, int64_t kernel, int64_t dilation,
                     int64_t stride, bool ceil_mode) {
  const int64_t span = input + padding - (dilation * (kernel - 1) + 1);
  return (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
}

Expr Compare(BinaryOp op, Expr a, Expr b) {
  return Binary(op, std::move(a), std::move(b));
}

// 0 <= index < extent.
Expr InRange(const Expr& index, int64_t lower, int64_t upper) {
  return Binary(BinaryOp::kAnd, Compare(BinaryOp::kGreaterEqual, index, Int(lower)),
                Compare(BinaryOp::kLess, index, Int(upper)));
}

// `index` clamped into [0, extent).
Expr Clamp(const Expr& index, int64_t extent) {
  return Binary(BinaryOp::kMaximum, Binary(BinaryOp::kMinimum, index, Int(extent - 1)), Int(0));
}

Expr Constant(double value, DType dtype) {
  if (IsFloat(dtype)) return Float(value, dtype);
  return Expr(new IntImmNode(static_cast<int64_t>(value), dtype));
}

// The lowest value of `dtype` (-inf for floats): where max pooling starts.
Expr Lowest(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return Constant(std::numeric_limits<int8_t>::lowest(), dtype);
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return Constant(0, dtype);
    case DType::kInt16:
      return Constant(std::numeric_limits<int16_t>::lowest(), dtype);
    case DType::kInt32:
      return Constant(std::numeric_limits<int32_t>::lowest(), dtype);
    case DType::kInt64:
      return Expr(new IntImmNode(std::numeric_limits<int64_t>::lowest(), dtype));
    default:
      break;
  }
  if (IsFloat(dtype)) return Float(-std::numeric_limits<double>::infinity(), dtype);
  throw Error(ErrorKind::kUsage,
              "max pooling does not support dtype " + std::string(DTypeName(dtype)));
}

DType Widened(DType dtype) {
  return dtype == DType::kFloat16 ? DType::kFloat32 : dtype;
}

// The maximum of `value` over a pooling window, skipping positions where
// `inside` is false (padding and past-the-edge cells). Float16 compares in
// float32.
Expr MaskedWindowMaximum(DType dtype, std::vector<Var> axes, std::vector<Expr> extents,
                         const Expr& inside, const Expr& value) {
  const DType computed = Widened(dtype);
  Expr lowest = Lowest(computed);
  Expr body = Select(inside, Cast(computed, value), lowest);
  return Cast(dtype, Reduce(ReduceOp::kMaximum, std::move(axes), std::move(extents), lowest, body));
}

// The float64 sum of `value` over a pooling window where `inside` holds.
Expr MaskedWindowSum(std::vector<Var> axes, std::vector<Expr> extents, const Expr& inside,
                     const Expr& value) {
  Expr zero = Float(0, DType::kFloat64);
  return Reduce(ReduceOp::kSum, std::move(axes), std::move(extents), zero,
                Select(inside, Cast(DType::kFloat64, value), zero));
}

void ExpectFloat(DType dtype, std::string_view name) {
  if (!IsFloat(dtype)) {
    throw Error(ErrorKind::kUsage, "operator " + std::string(name) +
                                       " supports only floating-point inputs for now, got " +
                                       std::string(DTypeName(dtype)));
  }
}

Var NewVar(const std::string& name) {
  return Var(new VarNode(name));
}

// ---- conv2d ------------------------------------------------------------------------------

// out[n, k, y, x] = sum over (c, ry, rx) of
//   data[n, group(k) * C/groups + c, y*sh + ry*dh - top, x*sw + rx*dw - left] * weight[k, c, ry,
//   rx]
// conv2d's layout and dtype attributes, read alike by conv2d and by its
// weight gradient.
struct ConvolutionLayouts {
  std::array<size_t, 4> data_layout, kernel_layout, out_layout;
  DType out_dtype, accumulator;
};

ConvolutionLayouts ReadConvolutionLayouts(const Attrs& attrs, DType data_dtype) {
  ConvolutionLayouts layouts;
  layouts.data_layout = LayoutPositions(StringAttr(attrs, "data_layout"), "NCHW");
  layouts.kernel_layout = LayoutPositions(StringAttr(attrs, "kernel_layout"), "OIHW");
  const std::string& out_text = StringAttr(attrs, "out_layout");
  layouts.out_layout = out_text.empty() ? layouts.data_layout : LayoutPositions(out_text, "NCHW");
  layouts.out_dtype = DTypeAttr(attrs, "out_dtype", data_dtype);
  layouts.accumulator = DotAccumulator(layouts.out_dtype);
  return layouts;
}

TensorExpr Conv2D(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr& data = inputs[0];
  const TensorExpr& weight = inputs[1];
  const auto [data_layout, kernel_layout, out_layout, out_dtype, accumulator] =
      ReadConvolutionLayouts(attrs, data.dtype);

  const auto in = ExtentsIn(data, data_layout);
  const auto kernel = ExtentsIn(weight, kernel_layout);  // O, I, H, W
  const int64_t groups = IntAttr(attrs, "groups");
  const auto strides = SpatialPair(attrs, "strides");
  const auto dilation = SpatialPair(attrs, "dilation");
  const auto padding = Padding(attrs);
  const int64_t out_height = WindowExtent(in[kHeight], padding[0] + padding[2], kernel[kHeight],
                                          dilation[0], strides[0], false);
  const int64_t out_width = WindowExtent(in[kWidth], padding[1] + padding[3], kernel[kWidth],
                                         dilation[1], strides[1], false);
  const int64_t out_per_group = kernel[0] / groups;
  const int64_t in_per_group = kernel[1];
  // The last input row and column any window reads.
  const int64_t last_row =
      (out_height - 1) * strides[0] + (kernel[kHeight] - 1) * dilation[0] - padding[0];
  const int64_t last_column =
      (out_width - 1) * strides[1] + (kernel[kWidth] - 1) * dilation[1] - padding[1];

  std::vector<Expr> shape =
      Arranged(out_layout, {Int(in[kBatch]), Int(kernel[0]), Int(out_height), Int(out_width)});
  return TensorExpr{
      shape, out_dtype, [=](const std::vector<Expr>& indices) {
        const Expr& n = indices[out_layout[kBatch]];
        const Expr& k = indices[out_layout[kChannel]];
        const Expr& y = indices[out_layout[kHeight]];
        const Expr& x = indices[out_layout[kWidth]];
        Var c = NewVar("rc"), ry = NewVar("ry"), rx = NewVar("rx");
        // Without groups every output channel reads every input channel: the
        // data's index must not mention k (the contraction schedule relies
        // on that to pack the weights by output channel).
        Expr group_base = groups == 1
                              ? Int(0)
                              : Multiply(Binary(BinaryOp::kFloorDivide, k, Int(out_per_group)),
                                         Int(in_per_group));
        Expr row = Subtract(Add(Multiply(y, Int(strides[0])), Multiply(ry, Int(dilation[0]))),
                            Int(padding[0]));
        Expr column = Subtract(Add(Multiply(x, Int(strides[1])), Multiply(rx, Int(dilation[1]))),
                               Int(padding[1]));
        // Without padding every window lies inside the input: no test, no
        // clamp, so the data is a plain load (which the contraction schedule
        // reads in place instead of packing).
        const bool row_inside = padding[0] == 0 && last_row < in[kHeight];
        const bool column_inside = padding[1] == 0 && last_column < in[kWidth];
        Expr inside =
            Binary(BinaryOp::kAnd, InRange(row, 0, in[kHeight]), InRange(column, 0, in[kWidth]));
        Expr value = data.at(Arranged(
            data_layout, {n, Add(group_base, c), row_inside ? row : Clamp(row, in[kHeight]),
                          column_inside ? column : Clamp(column, in[kWidth])}));
        Expr padded = row_inside && column_inside
                          ? Cast(accumulator, value)
                          : Select(inside, Cast(accumulator, value), Constant(0, accumulator));
        Expr filter = Cast(accumulator, weight.at(Arranged(kernel_layout, {k, c, ry, rx})));
        Expr sum = Reduce(ReduceOp::kSum, {c, ry, rx},
                          {Int(in_per_group), Int(kernel[kHeight]), Int(kernel[kWidth])},
                          Constant(0, accumulator), Multiply(padded, filter));
        return Cast(out_dtype, sum);
      }};
}

// nn.conv2d_transpose (the gradient of conv2d with respect to its data):
// each input element scatters weight-scaled values over a window of the
// output. Computed as a gather: output (y, x) receives input (iy, ix) through
// kernel tap (ry, rx) when y = iy * stride - top + ry * dilation (and
// likewise for x), that is when y + top - ry * dilation is a non-negative
// multiple of the stride whose quotient is inside the input. The weight is
// (in_channels, out_channels / groups, kh, kw) in the default IOHW layout.
TensorExpr Conv2DTranspose(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr& data = inputs[0];
  const TensorExpr& weight = inputs[1];
  const auto data_layout = LayoutPositions(StringAttr(attrs, "data_layout"), "NCHW");
  const auto kernel_layout = LayoutPositions(StringAttr(attrs, "kernel_layout"), "OIHW");
  const std::string& out_text = StringAttr(attrs, "out_layout");
  const auto out_layout = out_text.empty() ? data_layout : LayoutPositions(out_text, "NCHW");
  const DType out_dtype = DTypeAttr(attrs, "out_dtype", data.dtype);
  const DType accumulator = DotAccumulator(out_dtype);

  const auto in = ExtentsIn(data, data_layout);
  const auto kernel = ExtentsIn(weight, kernel_layout);  // O (per group), I, H, W
  const int64_t groups = IntAttr(attrs, "groups");
  const auto strides = SpatialPair(attrs, "strides");
  const auto dilation = SpatialPair(attrs, "dilation");
  const auto output_padding = SpatialPair(attrs, "output_padding");
  const auto padding = Padding(attrs);
  const int64_t out_per_group = kernel[0];
  const int64_t in_per_group = in[kChannel] / groups;
  std::array<int64_t, 2> extent{};
  for (size_t axis = 0; axis < 2; ++axis) {
    extent[axis] = (in[kHeight + axis] - 1) * strides[axis] - padding[axis] - padding[axis + 2] +
                   dilation[axis] * (kernel[kHeight + axis] - 1) + output_padding[axis] + 1;
  }
  std::vector<Expr> shape = Arranged(
      out_layout, {Int(in[kBatch]), Int(out_per_group * groups), Int(extent[0]), Int(extent[1])});
  return TensorExpr{
      shape, out_dtype, [=](const std::vector<Expr>& indices) {
        const Expr& n = indices[out_layout[kBatch]];
        const Expr& k = indices[out_layout[kChannel]];
        const std::array<Expr, 2> position = {indices[out_layout[kHeight]],
                                              indices[out_layout[kWidth]]};
        Var c = NewVar("rc"), ry = NewVar("ry"), rx = NewVar("rx");
        const std::array<Var, 2> taps = {ry, rx};
        const Expr group =
            groups == 1 ? Int(0) : Binary(BinaryOp::kFloorDivide, k, Int(out_per_group));
        const Expr k_in_group =
            groups == 1 ? k : Binary(BinaryOp::kFloorMod, k, Int(out_per_group));
        const Expr channel = Add(Multiply(group, Int(in_per_group)), c);
        Expr inside;
        std::array<Expr, 2> source;
        for (size_t axis = 0; axis < 2; ++axis) {
          // The offset into the strided input grid, and its cell.
          Expr offset = Subtract(Add(position[axis], Int(padding[axis])),
                                 Multiply(taps[axis], Int(dilation[axis])));
          Expr cell = Binary(BinaryOp::kFloorDivide, offset, Int(strides[axis]));
          Expr aligned = Compare(BinaryOp::kEqual,
                                 Binary(BinaryOp::kFloorMod, offset, Int(strides[axis])), Int(0));
          Expr valid = Binary(
              BinaryOp::kAnd,
              Binary(BinaryOp::kAnd, aligned, Compare(BinaryOp::kGreaterEqual, offset, Int(0))),
              Compare(BinaryOp::kLess, cell, Int(in[kHeight + axis])));
          inside = axis == 0 ? valid : Binary(BinaryOp::kAnd, inside, valid);
          source[axis] = Clamp(cell, in[kHeight + axis]);
        }
        Expr value = data.at(Arranged(data_layout, {n, channel, source[0], source[1]}));
        Expr filter = weight.at(Arranged(kernel_layout, {k_in_group, channel, ry, rx}));
        Expr term = Multiply(Select(inside, Cast(accumulator, value), Constant(0, accumulator)),
                             Cast(accumulator, filter));
        return Cast(out_dtype,
                    Reduce(ReduceOp::kSum, {c, ry, rx},
                           {Int(in_per_group), Int(kernel[kHeight]), Int(kernel[kWidth])},
                           Constant(0, accumulator), term));
      }};
}

// nn.conv2d_backward_weight (the gradient of conv2d with respect to its
// weight): weight[k, c, ry, rx] = sum over (n, y, x) of
//   out_grad[n, k, y, x] * data[n, group(k) * C/groups + c, y*sh + ry*dh - top, x*sw + rx*dw -
//   left]
// with the padded border reading zero.
TensorExpr Conv2DBackwardWeight(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr& out_grad = inputs[0];
  const TensorExpr& data = inputs[1];
  const auto [data_layout, kernel_layout, out_layout, out_dtype, accumulator] =
      ReadConvolutionLayouts(attrs, data.dtype);

  const auto in = ExtentsIn(data, data_layout);
  const auto grad = ExtentsIn(out_grad, out_layout);
  const std::vector<int64_t> kernel = OptionalIntListAttr(attrs, "kernel_size").value();
  const int64_t groups = IntAttr(attrs, "groups");
  const auto strides = SpatialPair(attrs, "strides");
  const auto dilation = SpatialPair(attrs, "dilation");
  const auto padding = Padding(attrs);
  const int64_t in_per_group = in[kChannel] / groups;
  const int64_t out_per_group = grad[kChannel] / groups;
  std::vector<Expr> shape = Arranged(
      kernel_layout, {Int(grad[kChannel]), Int(in_per_group), Int(kernel[0]), Int(kernel[1])});
  return TensorExpr{
      shape, out_dtype, [=](const std::vector<Expr>& indices) {
        const Expr& k = indices[kernel_layout[0]];
        const Expr& c = indices[kernel_layout[1]];
        const Expr& ry = indices[kernel_layout[kHeight]];
        const Expr& rx = indices[kernel_layout[kWidth]];
        Var n = NewVar("rn"), y = NewVar("ry"), x = NewVar("rx");
        Expr channel = groups == 1
                           ? c
                           : Add(Multiply(Binary(BinaryOp::kFloorDivide, k, Int(out_per_group)),
                                          Int(in_per_group)),
                                 c);
        Expr row = Subtract(Add(Multiply(y, Int(strides[0])), Multiply(ry, Int(dilation[0]))),
                            Int(padding[0]));
        Expr column = Subtract(Add(Multiply(x, Int(strides[1])), Multiply(rx, Int(dilation[1]))),
                               Int(padding[1]));
        Expr inside =
            Binary(BinaryOp::kAnd, InRange(row, 0, in[kHeight]), InRange(column, 0, in[kWidth]));
        Expr value = data.at(Arranged(
            data_layout, {n, channel, Clamp(row, in[kHeight]), Clamp(column, in[kWidth])}));
        Expr gradient = out_grad.at(Arranged(out_layout, {n, k, y, x}));
        Expr term = Multiply(Select(inside, Cast(accumulator, value), Constant(0, accumulator)),
                             Cast(accumulator, gradient));
        return Cast(out_dtype, Reduce(ReduceOp::kSum, {n, y, x},
                                      {Int(in[kBatch]), Int(grad[kHeight]), Int(grad[kWidth])},
                                      Constant(0, accumulator), term));
      }};
}

// ---- sliding-window pools ------------------------------------------------------------------

// The divisor of the average over the sliding window whose first cell is
// at `starts`: the count of its cells inside the input, or, with
// count_include_pad, inside the padded input (not the extra border
// ceil_mode adds), as TVM and PyTorch do; at least 1. An int64 expression.
Expr AverageDivisor(const std::array<Expr, 2>& starts, const std::array<int64_t, 2>& pool,
                    const std::array<int64_t, 2>& dilation, const std::array<int64_t, 4>& padding,
                    const std::array<int64_t, 2>& extents, bool count_include_pad) {
  std::array<Expr, 2> counts;
  for (size_t axis = 0; axis < 2; ++axis) {
    const int64_t lower = count_include_pad ? -padding[axis] : 0;
    const int64_t upper = count_include_pad ? extents[axis] + padding[axis + 2] : extents[axis];
    Var r = NewVar(axis == 0 ? "cy" : "cx");
    Expr position = Add(starts[axis], Multiply(r, Int(dilation[axis])));
    counts[axis] = Reduce(ReduceOp::kSum, {r}, {Int(pool[axis])}, Int(0),
                          Cast(DType::kInt64, InRange(position, lower, upper)));
  }
  return Binary(BinaryOp::kMaximum, Multiply(counts[0], counts[1]), Int(1));
}

ComputeFunction Pool2D(bool average) {
  return [average](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    const char* name = average ? "nn.avg_pool2d" : "nn.max_pool2d";
    if (average) ExpectFloat(data.dtype, name);
    const auto layout = LayoutPositions(StringAttr(attrs, "layout"), "NCHW");
    const std::string& out_text = StringAttr(attrs, "out_layout");
    const auto out_layout = out_text.empty() ? layout : LayoutPositions(out_text, "NCHW");
    const auto in = ExtentsIn(data, layout);
    const auto pool = SpatialPair(attrs, "pool_size");
    const auto strides = SpatialPair(attrs, "strides");
    const auto dilation = SpatialPair(attrs, "dilation");
    const auto padding = Padding(attrs);
    const bool ceil_mode = BoolAttr(attrs, "ceil_mode");
    const bool count_include_pad = average && BoolAttr(attrs, "count_include_pad");
    const int64_t out_height = WindowExtent(in[kHeight], padding[0] + padding[2], pool[0],
                                            dilation[0], strides[0], ceil_mode);
    const int64_t out_width = WindowExtent(in[kWidth], padding[1] + padding[3], pool[1],
                                           dilation[1], strides[1], ceil_mode);
    const DType dtype = data.dtype;
    std::vector<Expr> shape =
        Arranged(out_layout, {Int(in[kBatch]), Int(in[kChannel]), Int(out_height), Int(out_width)});
    return TensorExpr{
        shape, dtype, [=](const std::vector<Expr>& indices) {
          const Expr& n = indices[out_layout[kBatch]];
          const Expr& c = indices[out_layout[kChannel]];
          Var ry = NewVar("ry"), rx = NewVar("rx");
          // The window's first element and its position along each axis.
          Expr row_start =
              Subtract(Multiply(indices[out_layout[kHeight]], Int(strides[0])), Int(padding[0]));
          Expr column_start =
              Subtract(Multiply(indices[out_layout[kWidth]], Int(strides[1])), Int(padding[1]));
          Expr row = Add(row_start, Multiply(ry, Int(dilation[0])));
          Expr column = Add(column_start, Multiply(rx, Int(dilation[1])));
          Expr inside =
              Binary(BinaryOp::kAnd, InRange(row, 0, in[kHeight]), InRange(column, 0, in[kWidth]));
          Expr value =
              data.at(Arranged(layout, {n, c, Clamp(row, in[kHeight]), Clamp(column, in[kWidth])}));
          std::vector<Var> axes = {ry, rx};
          std::vector<Expr> extents = {Int(pool[0]), Int(pool[1])};
          if (!average) return MaskedWindowMaximum(dtype, axes, extents, inside, value);
          Expr sum = MaskedWindowSum(axes, extents, inside, value);
          Expr count = AverageDivisor({row_start, column_start}, pool, dilation, padding,
                                      {in[kHeight], in[kWidth]}, count_include_pad);
          return Cast(dtype, Binary(BinaryOp::kDivide, sum, Cast(DType::kFloat64, count)));
        }};
  };
}

// ---- adaptive and global pools --------------------------------------------------------------

// Output element i of an adaptive pool covers input [floor(i * in / out),
// ceil((i + 1) * in / out)), as PyTorch's. A global pool is the adaptive
// pool to 1 x 1.
Expr AdaptiveStart(const Expr& window, int64_t in, int64_t out) {
  return Binary(BinaryOp::kFloorDivide, Multiply(window, Int(in)), Int(out));
}

Expr AdaptiveEnd(const Expr& window, int64_t in, int64_t out) {
  return Binary(BinaryOp::kFloorDivide, Add(Multiply(Add(window, Int(1)), Int(in)), Int(out - 1)),
                Int(out));
}

// The widest adaptive window: the constant extent of a reduction over one,
// whose narrower windows mask their tail.
int64_t WidestAdaptiveWindow(int64_t in, int64_t out) {
  int64_t widest = 0;
  for (int64_t i = 0; i < out; ++i) {
    widest = std::max(widest, ((i + 1) * in + out - 1) / out - i * in / out);
  }
  return widest;
}

// The output height and width of an adaptive pool of input extents `in`
// (N, C, H, W): output_size, or the input's when it is empty.
std::array<int64_t, 2> AdaptiveOutput(const Attrs& attrs, const std::array<int64_t, 4>& in,
                                      bool global) {
  if (global) return {1, 1};
  const std::vector<int64_t> size =
      OptionalIntListAttr(attrs, "output_size").value_or(std::vector<int64_t>{});
  if (size.empty()) return {in[kHeight], in[kWidth]};
  return {size[0], size.back()};
}

ComputeFunction AdaptivePool2D(bool average, bool global) {
  return [average, global](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    if (average) {
      ExpectFloat(data.dtype, global ? "nn.global_avg_pool2d" : "nn.adaptive_avg_pool2d");
    }
    const auto layout = LayoutPositions(StringAttr(attrs, "layout"), "NCHW");
    const std::string& out_text = StringAttr(attrs, "out_layout");
    const auto out_layout = out_text.empty() ? layout : LayoutPositions(out_text, "NCHW");
    const auto in = ExtentsIn(data, layout);
    const std::array<int64_t, 2> out = AdaptiveOutput(attrs, in, global);
    const std::array<int64_t, 2> widest = {WidestAdaptiveWindow(in[kHeight], out[0]),
                                           WidestAdaptiveWindow(in[kWidth], out[1])};
    const DType dtype = data.dtype;
    std::vector<Expr> shape =
        Arranged(out_layout, {Int(in[kBatch]), Int(in[kChannel]), Int(out[0]), Int(out[1])});
    return TensorExpr{shape, dtype, [=](const std::vector<Expr>& indices) {
                        std::array<Expr, 2> positions, sizes, inside;
                        std::array<Var, 2> axes = {NewVar("ry"), NewVar("rx")};
                        for (size_t axis = 0; axis < 2; ++axis) {
                          const int64_t extent = in[axis == 0 ? kHeight : kWidth];
                          const Expr& i = indices[out_layout[axis == 0 ? kHeight : kWidth]];
                          Expr start = AdaptiveStart(i, extent, out[axis]);
                          sizes[axis] = Subtract(AdaptiveEnd(i, extent, out[axis]), start);
                          inside[axis] = Compare(BinaryOp::kLess, axes[axis], sizes[axis]);
                          positions[axis] = Clamp(Add(start, axes[axis]), extent);
                        }
                        Expr value = data.at(Arranged(
                            layout, {indices[out_layout[kBatch]], indices[out_layout[kChannel]],
                                     positions[0], positions[1]}));
                        Expr within = Binary(BinaryOp::kAnd, inside[0], inside[1]);
                        std::vector<Var> reduce_axes = {axes[0], axes[1]};
                        std::vector<Expr> extents = {Int(widest[0]), Int(widest[1])};
                        if (!average)
                          return MaskedWindowMaximum(dtype, reduce_axes, extents, within, value);
                        Expr sum = MaskedWindowSum(reduce_axes, extents, within, value);
                        Expr count = Cast(DType::kFloat64, Multiply(sizes[0], sizes[1]));
                        return Cast(dtype, Binary(BinaryOp::kDivide, sum, count));
                      }};
  };
}

// ---- pool gradients ---------------------------------------------------------------------------

// The windows of a pool along one spatial axis, seen from its input: which
// windows hold an input position, and where each window's cells lie.
// Sliding windows: cell r of window i is at i * stride - pad_before +
// r * dilation, r < kernel. Adaptive windows: cell r at AdaptiveStart(i) + r,
// while that is before AdaptiveEnd(i).
struct WindowAxis {
  int64_t in = 0, out = 0;
  bool adaptive = false;
  int64_t kernel = 1, stride = 1, dilation = 1, pad_before = 0;
  int64_t widest = 1;      // the cells of the widest window
  int64_t candidates = 1;  // the most windows that hold one input position

  static WindowAxis Sliding(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                            int64_t dilation, int64_t pad_before) {
    WindowAxis axis{in, out, false, kernel, stride, dilation, pad_before};
    axis.widest = kernel;
    // Window i holds position p when i * stride lies in
    // [p + pad_before - (kernel - 1) * dilation, p + pad_before].
    axis.candidates = (kernel - 1) * dilation / stride + 1;
    return axis;
  }

  static WindowAxis Adaptive(int64_t in, int64_t out) {
    WindowAxis axis{in, out, true};
    axis.widest = WidestAdaptiveWindow(in, out);
    axis.candidates = 1;
    for (int64_t position = 0; position < in; ++position) {
      const int64_t first = position * out / in;
      int64_t last = first;
      while (last + 1 < out && (last + 1) * in / out <= position) ++last;
      axis.candidates = std::max(axis.candidates, last - first + 1);
    }
    return axis;
  }

  Expr Start(const Expr& window) const {
    if (adaptive) return AdaptiveStart(window, in, out);
    return Subtract(Multiply(window, Int(stride)), Int(pad_before));
  }

  Expr Cell(const Expr& window, const Expr& r) const {
    return Add(Start(window), adaptive ? r : Multiply(r, Int(dilation)));
  }

  // Whether cell r of `window` exists and lies inside the input.
  Expr CellInside(const Expr& window, const Expr& r) const {
    Expr inside = InRange(Cell(window, r), 0, in);
    if (!adaptive) return inside;
    return Binary(
        BinaryOp::kAnd, inside,
        Compare(BinaryOp::kLess, r, Subtract(AdaptiveEnd(window, in, out), Start(window))));
  }

  // The first window that may hold input `position`; the next `candidates`
  // windows include every one that does.
  Expr FirstCandidate(const Expr& position) const {
    if (adaptive) return Binary(BinaryOp::kFloorDivide, Multiply(position, Int(out)), Int(in));
    return Binary(BinaryOp::kFloorDivide,
                  Add(position, Int(pad_before - (kernel - 1) * dilation + stride - 1)),
                  Int(stride));
  }

  // Whether `window` exists and one of its cells is input `position`.
  Expr Holds(const Expr& window, const Expr& position) const {
    Expr exists = InRange(window, 0, out);
    if (adaptive) {
      return Binary(
          BinaryOp::kAnd, exists,
          Binary(BinaryOp::kAnd, Compare(BinaryOp::kGreaterEqual, position, Start(window)),
                 Compare(BinaryOp::kLess, position, AdaptiveEnd(window, in, out))));
    }
    Expr offset = Subtract(position, Start(window));
    Expr held = Binary(BinaryOp::kAnd, exists, InRange(offset, 0, (kernel - 1) * dilation + 1));
    if (dilation == 1) return held;
    return Binary(
        BinaryOp::kAnd, held,
        Compare(BinaryOp::kEqual, Binary(BinaryOp::kFloorMod, offset, Int(dilation)), Int(0)));
  }
};

// The gradients of the pools, (out_grad, data) -> data's shape: each input
// element gathers, from every window that holds it, that window's out_grad
// divided by the window's divisor (averages) or, when it is the window's
// first maximal cell in row-major order, as TVM and PyTorch choose, the
// whole of it (maxima). Sums run in float64 and round once.
ComputeFunction PoolGradient(bool average, bool adaptive) {
  return [average, adaptive](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& out_grad = inputs[0];
    const TensorExpr& data = inputs[1];
    ExpectFloat(data.dtype,
                adaptive ? (average ? "nn.adaptive_avg_pool2d_grad" : "nn.adaptive_max_pool2d_grad")
                         : (average ? "nn.avg_pool2d_grad" : "nn.max_pool2d_grad"));
    const auto layout = LayoutPositions(StringAttr(attrs, "layout"), "NCHW");
    const std::string& out_text = StringAttr(attrs, "out_layout");
    const auto out_layout = out_text.empty() ? layout : LayoutPositions(out_text, "NCHW");
    const auto in = ExtentsIn(data, layout);
    const auto out = ExtentsIn(out_grad, out_layout);
    std::array<WindowAxis, 2> windows;
    std::array<int64_t, 2> pool = {1, 1}, dilation = {1, 1};
    std::array<int64_t, 4> padding = {0, 0, 0, 0};
    const bool count_include_pad = average && !adaptive && BoolAttr(attrs, "count_include_pad");
    if (!adaptive) {
      pool = SpatialPair(attrs, "pool_size");
      dilation = SpatialPair(attrs, "dilation");
      padding = Padding(attrs);
    }
    const auto strides = adaptive ? std::array<int64_t, 2>{1, 1} : SpatialPair(attrs, "strides");
    for (size_t axis = 0; axis < 2; ++axis) {
      windows[axis] = adaptive
                          ? WindowAxis::Adaptive(in[kHeight + axis], out[kHeight + axis])
                          : WindowAxis::Sliding(in[kHeight + axis], out[kHeight + axis], pool[axis],
                                                strides[axis], dilation[axis], padding[axis]);
    }
    const DType dtype = data.dtype;
    const DType wide = DType::kFloat64;
    return TensorExpr{
        data.shape, dtype, [=](const std::vector<Expr>& indices) {
          const Expr& n = indices[layout[kBatch]];
          const Expr& c = indices[layout[kChannel]];
          const std::array<Expr, 2> position = {indices[layout[kHeight]], indices[layout[kWidth]]};
          const std::array<Var, 2> candidate = {NewVar("wy"), NewVar("wx")};
          std::array<Expr, 2> window;
          for (size_t axis = 0; axis < 2; ++axis) {
            window[axis] = Add(windows[axis].FirstCandidate(position[axis]), candidate[axis]);
          }
          Expr holds = Binary(BinaryOp::kAnd, windows[0].Holds(window[0], position[0]),
                              windows[1].Holds(window[1], position[1]));
          Expr gradient =
              Cast(wide, out_grad.at(Arranged(out_layout, {n, c, Clamp(window[0], out[kHeight]),
                                                           Clamp(window[1], out[kWidth])})));
          Expr share;
          if (average) {
            Expr count;
            if (adaptive) {
              count = Multiply(Subtract(AdaptiveEnd(window[0], in[kHeight], out[kHeight]),
                                        windows[0].Start(window[0])),
                               Subtract(AdaptiveEnd(window[1], in[kWidth], out[kWidth]),
                                        windows[1].Start(window[1])));
            } else {
              count =
                  AverageDivisor({windows[0].Start(window[0]), windows[1].Start(window[1])}, pool,
                                 dilation, padding, {in[kHeight], in[kWidth]}, count_include_pad);
            }
            share = Binary(BinaryOp::kDivide, gradient, Cast(wide, count));
          } else {
            // The window's first maximal cell, compared as the pool compares.
            const std::array<Var, 2> cell = {NewVar("ry"), NewVar("rx")};
            Expr inside = Binary(BinaryOp::kAnd, windows[0].CellInside(window[0], cell[0]),
                                 windows[1].CellInside(window[1], cell[1]));
            Expr value = data.at(
                Arranged(layout, {n, c, Clamp(windows[0].Cell(window[0], cell[0]), in[kHeight]),
                                  Clamp(windows[1].Cell(window[1], cell[1]), in[kWidth])}));
            const DType computed = Widened(dtype);
            Expr lowest = Lowest(computed);
            Expr first =
                Cast(DType::kInt64, Reduce(ReduceOp::kArgMax, {cell[0], cell[1]},
                                           {Int(windows[0].widest), Int(windows[1].widest)}, lowest,
                                           Select(inside, Cast(computed, value), lowest)));
            Expr row = windows[0].Cell(
                window[0], Binary(BinaryOp::kFloorDivide, first, Int(windows[1].widest)));
            Expr column = windows[1].Cell(
                window[1], Binary(BinaryOp::kFloorMod, first, Int(windows[1].widest)));
            Expr chosen = Binary(BinaryOp::kAnd, Compare(BinaryOp::kEqual, row, position[0]),
                                 Compare(BinaryOp::kEqual, column, position[1]));
            share = Select(chosen, gradient, Float(0, wide));
          }
          Expr sum = Reduce(ReduceOp::kSum, {candidate[0], candidate[1]},
                            {Int(windows[0].candidates), Int(windows[1].candidates)},
                            Float(0, wide), Select(holds, share, Float(0, wide)));
          return Cast(dtype, sum);
        }};
  };
}

// ---- image.resize2d -----------------------------------------------------------------------

// The input coordinate (float64) of output position `index` along an axis
// of `in` input and `out` output elements, as TVM's resize.
Expr InputCoordinate(const Expr& index, int64_t in, int64_t out, const std::string& mode) {
  Expr position = Cast(DType::kFloat64, index);
  Expr half = Float(0.5, DType::kFloat64);
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  Expr scaled = Float(scale, DType::kFloat64);
  if (mode == "align_corners") {
    if (out <= 1) return Float(0, DType::kFloat64);
    return Multiply(position, Float(static_cast<double>(in - 1) / static_cast<double>(out - 1),
                                    DType::kFloat64));
  }
  if (mode == "asymmetric") return Multiply(position, scaled);
  if (mode == "tf_half_pixel_for_nn") return Multiply(Add(position, half), scaled);
  if (mode == "pytorch_half_pixel" && out <= 1) return Float(0, DType::kFloat64);
  // half_pixel and pytorch_half_pixel
  return Subtract(Multiply(Add(position, half), scaled), half);
}

// The nearest input index of a coordinate under TVM's rounding methods; an
// empty method is "round" for align_corners and tf_half_pixel_for_nn, else
// "floor". floor and ceil nudge by 1e-5 against rounding error, as TVM.
Expr NearestIndex(const Expr& coordinate, std::string method, const std::string& mode) {
  if (method.empty()) {
    method = mode == "align_corners" || mode == "tf_half_pixel_for_nn" ? "round" : "floor";
  }
  const DType f64 = DType::kFloat64;
  Expr rounded;
  if (method == "round") {
    rounded = Unary(UnaryOp::kRound, coordinate);
  } else if (method == "round_prefer_floor") {
    rounded = Unary(UnaryOp::kCeil, Subtract(coordinate, Float(0.5, f64)));
  } else if (method == "round_prefer_ceil") {
    rounded = Unary(UnaryOp::kFloor, Add(coordinate, Float(0.5, f64)));
  } else if (method == "ceil") {
    rounded = Unary(UnaryOp::kCeil, Subtract(coordinate, Float(1e-5, f64)));
  } else {
    rounded = Unary(UnaryOp::kFloor, Add(coordinate, Float(1e-5, f64)));
  }
  return Cast(DType::kInt64, rounded);
}

// `data` resized to `size` (height, width) by nearest_neighbor or linear
// interpolation, coordinates mapped by `mode`.
TensorExpr Resized(const TensorExpr& data, const std::string& layout, std::array<int64_t, 2> size,
                   const std::string& mode, const std::string& method, const std::string& rounding,
                   DType out_dtype, const std::string& op) {
  if (mode == "tf_crop_and_resize") {
    throw Error(ErrorKind::kUsage, "operator " + op +
                                       ": coordinate_transformation_mode "
                                       "\"tf_crop_and_resize\" has no CPU kernel yet");
  }
  const bool linear = method != "nearest_neighbor";
  if (linear && !(IsFloat(data.dtype) && IsFloat(out_dtype))) {
    throw Error(
        ErrorKind::kUsage,
        "operator " + op +
            ": linear interpolation supports only floating-point inputs and outputs for now");
  }
  const size_t height_axis = layout.find('H'), width_axis = layout.find('W');
  const std::array<int64_t, 2> in = {ConstantExtent(data.shape[height_axis]),
                                     ConstantExtent(data.shape[width_axis])};
  std::vector<Expr> shape = data.shape;
  shape[height_axis] = Int(size[0]);
  shape[width_axis] = Int(size[1]);
  return TensorExpr{shape, out_dtype, [=](const std::vector<Expr>& indices) {
                      std::array<Expr, 2> coordinates;
                      const std::array<size_t, 2> axes = {height_axis, width_axis};
                      for (size_t axis = 0; axis < 2; ++axis) {
                        coordinates[axis] =
                            InputCoordinate(indices[axes[axis]], in[axis], size[axis], mode);
                      }
                      auto read = [&](const Expr& row, const Expr& column) {
                        std::vector<Expr> at = indices;
                        at[height_axis] = Clamp(row, in[0]);
                        at[width_axis] = Clamp(column, in[1]);
                        return data.at(at);
                      };
                      if (!linear) {
                        return Cast(out_dtype, read(NearestIndex(coordinates[0], rounding, mode),
                                                    NearestIndex(coordinates[1], rounding, mode)));
                      }
                      const DType f64 = DType::kFloat64;
                      std::array<Expr, 2> lower, fraction;
                      for (size_t axis = 0; axis < 2; ++axis) {
                        Expr floor = Unary(UnaryOp::kFloor, coordinates[axis]);
                        lower[axis] = Cast(DType::kInt64, floor);
                        fraction[axis] = Subtract(coordinates[axis], floor);
                      }
                      auto lerp = [&](const Expr& a, const Expr& b, const Expr& t) {
                        return Add(Multiply(a, Subtract(Float(1, f64), t)), Multiply(b, t));
                      };
                      Expr next_row = Add(lower[0], Int(1)), next_column = Add(lower[1], Int(1));
                      Expr top = lerp(Cast(f64, read(lower[0], lower[1])),
                                      Cast(f64, read(lower[0], next_column)), fraction[1]);
                      Expr bottom = lerp(Cast(f64, read(next_row, lower[1])),
                                         Cast(f64, read(next_row, next_column)), fraction[1]);
                      return Cast(out_dtype, lerp(top, bottom, fraction[0]));
                    }};
}

TensorExpr Resize2D(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const std::vector<int64_t> size = IntListAttr(attrs, "size");
  return Resized(inputs[0], StringAttr(attrs, "layout"), {size[0], size[1]},
                 StringAttr(attrs, "coordinate_transformation_mode"), StringAttr(attrs, "method"),
                 StringAttr(attrs, "rounding_method"),
                 DTypeAttr(attrs, "out_dtype", inputs[0].dtype), "image.resize2d");
}

// nn.upsampling, as TVM computes it: a resize to the extents times the
// scales (rounded), nearest_neighbor by the asymmetric coordinates, bilinear
// by half_pixel ones, either by align_corners when asked.
TensorExpr Upsampling(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr& data = inputs[0];
  const std::string& layout = StringAttr(attrs, "layout");
  const std::string& method = StringAttr(attrs, "method");
  const bool align_corners = BoolAttr(attrs, "align_corners");
  const std::array<size_t, 2> axes = {layout.find('H'), layout.find('W')};
  const std::array<const char*, 2> scales = {"scale_h", "scale_w"};
  std::array<int64_t, 2> size;
  for (size_t axis = 0; axis < 2; ++axis) {
    size[axis] = static_cast<int64_t>(
        std::round(static_cast<double>(ConstantExtent(data.shape[axes[axis]])) *
                   FloatAttr(attrs, scales[axis])));
  }
  const std::string mode = align_corners
                               ? "align_corners"
                               : (method == "nearest_neighbor" ? "asymmetric" : "half_pixel");
  return Resized(data, layout, size, mode, method == "bilinear" ? "linear" : method, "", data.dtype,
                 "nn.upsampling");
}

std::unordered_map<std::string, ComputeFunction> ConvolutionComputes() {
  std::unordered_map<std::string, ComputeFunction> computes;
  computes["nn.conv2d"] = Conv2D;
  computes["nn.conv2d_transpose"] = Conv2DTranspose;
  computes["nn.max_pool2d"] = Pool2D(/*average=*/false);
  computes["nn.avg_pool2d"] = Pool2D(/*average=*/true);
  computes["nn.global_avg_pool2d"] = AdaptivePool2D(/*average=*/true, /*global=*/true);
  computes["nn.global_max_pool2d"] = AdaptivePool2D(/*average=*/false, /*global=*/true);
  computes["nn.adaptive_avg_pool2d"] = AdaptivePool2D(/*average=*/true, /*global=*/false);
  computes["nn.adaptive_max_pool2d"] = AdaptivePool2D(/*average=*/false, /*global=*/false);
  computes["nn.max_pool2d_grad"] = PoolGradient(/*average=*/false, /*adaptive=*/false);
  computes["nn.avg_pool2d_grad"] = PoolGradient(/*average=*/true, /*adaptive=*/false);
  computes["nn.adaptive_max_pool2d_grad"] = PoolGradient(/*average=*/false, /*adaptive=*/true);
  computes["nn.adaptive_avg_pool2d_grad"] = PoolGradient(/*average=*/true, /*adaptive=*/true);
  computes["nn.conv2d_backward_weight"] = Conv2DBackwardWeight;
  computes["image.resize2d"] = Resize2D;
  computes["nn.upsampling"] = Upsampling;
  return computes;
}

}  // namespace

std::array<int64_t, 2> SpatialPair(const Attrs& attrs, std::string_view name) {
  const std::vector<int64_t> values = IntListAttr(attrs, name);
  return {values[0], values.back()};
}

std::array<int64_t, 4> Padding(const Attrs& attrs) {
  const std::vector<int64_t> values = IntListAttr(attrs, "padding");
  if (values.size() == 1) return {values[0], values[0], values[0], values[0]};
  if (values.size() == 2) return {values[0], values[1], values[0], values[1]};
  return {values[0], values[1], values[2], values[3]};
}

void AttachConvolutionComputes(OperatorTableBuilder& table) {
  table.AttachComputes(ConvolutionComputes());
}

}  // namespace relay::kernels
