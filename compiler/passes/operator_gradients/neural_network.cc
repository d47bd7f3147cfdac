// Gradients of the neural-network operators (kernels/operators/
// neural_network.cc) and of image.resize2d (kernels/operators/image.cc).
//
// Each rule differentiates what the operator's compute definition computes
// (kernels/compute/neural_network_compute.cc, convolution_compute.cc): the
// normalisations with their statistics, batch_norm at inference with its
// given mean and variance, dropout as the identity. Shapes may hold `?`
// where the rule's operators allow it (a dense layer's batch); a rule that
// needs an extent it cannot know (conv2d's input height at strides > 1, the
// extent of an edge-padded axis) says so with a type error.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "kernels/operators/relation_helpers.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"
#include "relay/tensor.h"

namespace relay::passes::operator_gradients {
namespace {

using ir::Expr;
using kernels::Attrs;
using kernels::AttrValue;

const std::vector<int64_t>& ShapeOf(const GradientContext& context, size_t input) {
  return TensorTypeOf(context.input_type(input)).shape;
}

DType DTypeOf(const GradientContext& context, size_t input) {
  return TensorTypeOf(context.input_type(input)).dtype;
}

const AttrValue& Attr(const GradientContext& context, std::string_view name) {
  return kernels::GetAttr(context.call.attrs, name);
}

// The call's attributes with `name` set to `value`.
Attrs With(Attrs attrs, std::string_view name, AttrValue value) {
  for (auto& [key, existing] : attrs) {
    if (key == name) {
      existing = std::move(value);
      return attrs;
    }
  }
  attrs.emplace_back(std::string(name), std::move(value));
  return attrs;
}

// A gradient the rule cannot express: a type error naming the operator.
[[noreturn]] void Fail(const GradientContext& context, const std::string& message) {
  const auto* op = ir::As<ir::OpNode>(context.call.callee);
  throw Error(ErrorKind::kType, "cannot differentiate " +
                                    (op ? op->name() : std::string("the call")) + ": " + message);
}

// `gradient` of dtype `from` in dtype `to`: an operator whose out_dtype
// differs from its inputs' passes its gradient back in theirs.
Expr InDType(const Expr& gradient, DType from, DType to) {
  if (from == to) return gradient;
  return Op("cast", {gradient}, {{"dtype", AttrValue::String(std::string(DTypeName(to)))}});
}

// The output gradient of a single-result call, in the dtype of input 0.
Expr OutputGradientInInputDType(const GradientContext& context) {
  return InDType(context.output_gradient, TensorTypeOf(context.output_type()).dtype,
                 DTypeOf(context, 0));
}

Expr Sum(const Expr& value, const std::vector<int64_t>& axes, bool keepdims, bool exclude = false) {
  return Op("sum", {value},
            {{"axis", AttrValue::IntList(axes)},
             {"keepdims", AttrValue::Bool(keepdims)},
             {"exclude", AttrValue::Bool(exclude)}});
}

Expr Mean(const Expr& value, const std::vector<int64_t>& axes) {
  return Op("mean", {value},
            {{"axis", AttrValue::IntList(axes)}, {"keepdims", AttrValue::Bool(true)}});
}

// The sum over every axis but `axis`: a per-channel vector.
Expr SumAllBut(const Expr& value, int64_t axis) {
  return Sum(value, {axis}, /*keepdims=*/false, /*exclude=*/true);
}

// A per-channel vector shaped to broadcast along `axis` of a tensor of
// rank `rank`: (C, 1, ..., 1).
Expr AlongAxis(const Expr& vector, int64_t axis, size_t rank) {
  const int64_t trailing = static_cast<int64_t>(rank) - 1 - axis;
  if (trailing == 0) return vector;
  return Op("expand_dims", {vector},
            {{"axis", AttrValue::Int(1)}, {"num_newaxis", AttrValue::Int(trailing)}});
}

int64_t NormalizedAxis(const GradientContext& context, size_t rank) {
  return kernels::NormalizeAxis(Attr(context, "axis").as_int(), rank);
}

// ---- dense and matrix products ------------------------------------------------------------

Expr Matmul(const Expr& a, const Expr& b, bool transpose_a, bool transpose_b) {
  return Op("nn.matmul", {a, b},
            {{"transpose_a", AttrValue::Bool(transpose_a)},
             {"transpose_b", AttrValue::Bool(transpose_b)}});
}

Expr BatchMatmul(const Expr& a, const Expr& b, bool transpose_a, bool transpose_b) {
  return Op("nn.batch_matmul", {a, b},
            {{"transpose_a", AttrValue::Bool(transpose_a)},
             {"transpose_b", AttrValue::Bool(transpose_b)}});
}

// `value` of rank `rank` >= 2 with its last two axes swapped.
Expr TransposeLastTwo(const Expr& value, size_t rank) {
  std::vector<int64_t> axes;
  for (size_t axis = 0; axis + 2 < rank; ++axis) axes.push_back(static_cast<int64_t>(axis));
  axes.push_back(static_cast<int64_t>(rank) - 1);
  axes.push_back(static_cast<int64_t>(rank) - 2);
  return Op("transpose", {value}, {{"axes", AttrValue::IntList(axes)}});
}

// `value` of rank `rank` >= 2 as a matrix: its leading axes merged into one
// (by -3, which works whether or not they are known).
Expr AsMatrix(Expr value, size_t rank) {
  for (; rank > 2; --rank) {
    value = Op("reshape", {value}, {{"newshape", AttrValue::IntList({-3, -2})}});
  }
  return value;
}

// The gradient of the matrix operand b of a (..., M, K) x op(b) -> (..., M, N)
// given g (..., M, N): op(b)'s gradient is a^T g summed over the batch,
// and b's is that, transposed back when op transposes. `a` is the left
// operand as given, `transpose_a` whether op(a) transposes it.
Expr RightMatrixGradient(const Expr& a, size_t rank, bool transpose_a, const Expr& g,
                         bool transpose_b) {
  if (rank == 1) {
    // a (K,), g (N,): the outer product.
    auto column = [](const Expr& vector) {
      return Op("expand_dims", {vector}, {{"axis", AttrValue::Int(1)}});
    };
    return transpose_b ? Op("multiply", {column(g), a}) : Op("multiply", {column(a), g});
  }
  Expr left = a;
  Expr gradient = g;
  if (rank > 2) {
    if (transpose_a) left = TransposeLastTwo(a, rank);
    transpose_a = false;
    left = AsMatrix(left, rank);
    gradient = AsMatrix(g, rank);
  }
  return transpose_b ? Matmul(gradient, left, true, transpose_a)
                     : Matmul(left, gradient, !transpose_a, false);
}

std::vector<Expr> DenseGradient(const GradientContext& context) {
  const Expr& data = context.inputs[0];
  const Expr& weight = context.inputs[1];
  Expr g = OutputGradientInInputDType(context);
  // data (..., K), weight (N, K): data * weight^T.
  return {Matmul(g, weight, false, false),
          RightMatrixGradient(data, ShapeOf(context, 0).size(), false, g, true)};
}

std::vector<Expr> MatmulGradient(const GradientContext& context) {
  const Expr& a = context.inputs[0];
  const Expr& b = context.inputs[1];
  const bool transpose_a = Attr(context, "transpose_a").as_bool();
  const bool transpose_b = Attr(context, "transpose_b").as_bool();
  const size_t rank = ShapeOf(context, 0).size();
  Expr g = OutputGradientInInputDType(context);
  // op(a)'s gradient is g op(b)^T; a's is that, transposed back when op
  // transposes a.
  Expr a_gradient;
  if (!transpose_a) {
    a_gradient = Matmul(g, b, false, !transpose_b);
  } else if (rank == 2) {
    a_gradient = Matmul(b, g, transpose_b, true);
  } else {
    a_gradient = TransposeLastTwo(Matmul(g, b, false, !transpose_b), rank);
  }
  return {a_gradient, RightMatrixGradient(a, rank, transpose_a, g, transpose_b)};
}

// A batch_matmul operand's gradient, summed over the batch when the
// operand's batch of 1 (or one that may be 1) was broadcast.
Expr SumBroadcastBatch(const Expr& gradient, const GradientContext& context, size_t input) {
  const int64_t batch = ShapeOf(context, input)[0];
  const int64_t output_batch = TensorTypeOf(context.output_type()).shape[0];
  if (batch != ir::kAnyDim && batch == output_batch) return gradient;
  return Op("collapse_sum_like", {gradient, context.inputs[input]});
}

std::vector<Expr> BatchMatmulGradient(const GradientContext& context) {
  const Expr& a = context.inputs[0];
  const Expr& b = context.inputs[1];
  const bool transpose_a = Attr(context, "transpose_a").as_bool();
  const bool transpose_b = Attr(context, "transpose_b").as_bool();
  Expr g = OutputGradientInInputDType(context);
  Expr a_gradient =
      transpose_a ? BatchMatmul(b, g, transpose_b, true) : BatchMatmul(g, b, false, !transpose_b);
  Expr b_gradient =
      transpose_b ? BatchMatmul(g, a, true, transpose_a) : BatchMatmul(a, g, !transpose_a, false);
  return {SumBroadcastBatch(a_gradient, context, 0), SumBroadcastBatch(b_gradient, context, 1)};
}

// ---- per-channel operators, activations, softmax ----------------------------------------

std::vector<Expr> BiasAddGradient(const GradientContext& context) {
  const int64_t axis = NormalizedAxis(context, ShapeOf(context, 0).size());
  return {context.output_gradient, SumAllBut(context.output_gradient, axis)};
}

std::vector<Expr> LeakyReluGradient(const GradientContext& context) {
  const Expr& x = context.inputs[0];
  const Expr& g = context.output_gradient;
  const DType dtype = DTypeOf(context, 0);
  Expr scaled = Op("multiply", {g, Scalar(Attr(context, "alpha").as_float(), dtype)});
  return {Op("where", {Op("greater", {x, Scalar(0, dtype)}), g, scaled})};
}

std::vector<Expr> PReluGradient(const GradientContext& context) {
  const Expr& x = context.inputs[0];
  const Expr& alpha = context.inputs[1];
  const Expr& g = context.output_gradient;
  const size_t rank = ShapeOf(context, 0).size();
  const int64_t axis = NormalizedAxis(context, rank);
  Expr positive = Op("greater", {x, Scalar(0, DTypeOf(context, 0))});
  Expr data_gradient =
      Op("where", {positive, g, Op("multiply", {g, AlongAxis(alpha, axis, rank)})});
  Expr slope_terms = Op("where", {positive, Op("zeros_like", {g}), Op("multiply", {g, x})});
  return {data_gradient, SumAllBut(slope_terms, axis)};
}

// y = softmax(x): dx = y * (g - sum(g * y)) along the axis.
std::vector<Expr> SoftmaxGradient(const GradientContext& context) {
  const Expr& y = context.output;
  const Expr& g = context.output_gradient;
  const int64_t axis = NormalizedAxis(context, ShapeOf(context, 0).size());
  Expr along = Sum(Op("multiply", {g, y}), {axis}, /*keepdims=*/true);
  return {Op("multiply", {y, Op("subtract", {g, along})})};
}

// y = log_softmax(x): dx = g - exp(y) * sum(g) along the axis.
std::vector<Expr> LogSoftmaxGradient(const GradientContext& context) {
  const Expr& y = context.output;
  const Expr& g = context.output_gradient;
  const int64_t axis = NormalizedAxis(context, ShapeOf(context, 0).size());
  Expr along = Sum(g, {axis}, /*keepdims=*/true);
  return {Op("subtract", {g, Op("multiply", {Op("exp", {y}), along})})};
}

// ---- normalisations -------------------------------------------------------------------------

// batch_norm at inference: y = (x - mean) / sqrt(var + epsilon) [* gamma]
// [+ beta] per channel, with mean and var the given inputs, which also come
// back unchanged as fields 1 and 2.
std::vector<Expr> BatchNormGradient(const GradientContext& context) {
  const Expr& x = context.inputs[0];
  const Expr& gamma = context.inputs[1];
  const Expr& mean = context.inputs[3];
  const Expr& variance = context.inputs[4];
  Expr g = Project(context.output_gradient, 0);
  const size_t rank = ShapeOf(context, 0).size();
  const int64_t axis = NormalizedAxis(context, rank);
  const DType dtype = DTypeOf(context, 0);
  const bool scale = Attr(context, "scale").as_bool();
  const bool center = Attr(context, "center").as_bool();

  Expr inverse_std =
      Op("rsqrt", {Op("add", {variance, Scalar(Attr(context, "epsilon").as_float(), dtype)})});
  Expr factor = scale ? Op("multiply", {gamma, inverse_std}) : inverse_std;
  Expr centered = Op("subtract", {x, AlongAxis(mean, axis, rank)});
  Expr g_sum = SumAllBut(g, axis);
  Expr g_centered = SumAllBut(Op("multiply", {g, centered}), axis);

  Expr data_gradient = Op("multiply", {g, AlongAxis(factor, axis, rank)});
  Expr gamma_gradient = scale ? Op("multiply", {g_centered, inverse_std}) : nullptr;
  Expr beta_gradient = center ? g_sum : nullptr;
  Expr mean_gradient = Op("add", {Op("negative", {Op("multiply", {g_sum, factor})}),
                                  Project(context.output_gradient, 1)});
  // d/dvar (var + eps)^(-1/2) = -1/2 (var + eps)^(-3/2).
  Expr variance_factor = Op(
      "multiply",
      {factor, Op("multiply", {Scalar(-0.5, dtype), Op("multiply", {inverse_std, inverse_std})})});
  Expr variance_gradient = Op(
      "add", {Op("multiply", {g_centered, variance_factor}), Project(context.output_gradient, 2)});
  return {data_gradient, gamma_gradient, beta_gradient, mean_gradient, variance_gradient};
}

// layer_norm, instance_norm and group_norm: x normalised by the mean and
// (biased) variance of the elements over `reduced`, then scaled by gamma
// and shifted by beta along `axis`. With xhat the normalised data and
// dxhat = g * gamma, the data's gradient is
//   (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / sqrt(var + epsilon),
// the means over the same elements. group_norm's statistics span a group
// of channels too: the data is viewed with `axis` split into (groups,
// channels per group), and the statistics reduce the second part.
std::vector<Expr> NormalizationGradient(const GradientContext& context,
                                        std::vector<int64_t> reduced,
                                        std::optional<int64_t> groups) {
  const Expr& x = context.inputs[0];
  const Expr& gamma = context.inputs[1];
  const Expr& g = context.output_gradient;
  const size_t rank = ShapeOf(context, 0).size();
  const int64_t axis = NormalizedAxis(context, rank);
  const DType dtype = DTypeOf(context, 0);
  const bool scale = Attr(context, "scale").as_bool();
  const bool center = Attr(context, "center").as_bool();

  Expr dxhat = scale ? Op("multiply", {g, AlongAxis(gamma, axis, rank)}) : g;
  Expr data = x;
  if (groups.has_value()) {
    std::vector<int64_t> newshape(static_cast<size_t>(axis), 0);
    newshape.insert(newshape.end(), {-4, *groups, -1, -2});
    auto grouped = [&newshape](const Expr& value) {
      return Op("reshape", {value}, {{"newshape", AttrValue::IntList(newshape)}});
    };
    data = grouped(x);
    dxhat = grouped(dxhat);
    for (int64_t& reduced_axis : reduced) {
      if (reduced_axis > axis) ++reduced_axis;
    }
    reduced.push_back(axis + 1);
  }
  Expr centered = Op("subtract", {data, Mean(data, reduced)});
  Expr variance = Mean(Op("multiply", {centered, centered}), reduced);
  Expr inverse_std =
      Op("rsqrt", {Op("add", {variance, Scalar(Attr(context, "epsilon").as_float(), dtype)})});
  Expr xhat = Op("multiply", {centered, inverse_std});
  Expr data_gradient =
      Op("multiply",
         {inverse_std,
          Op("subtract", {Op("subtract", {dxhat, Mean(dxhat, reduced)}),
                          Op("multiply", {xhat, Mean(Op("multiply", {dxhat, xhat}), reduced)})})});
  if (groups.has_value()) {
    data_gradient = Op("reshape_like", {data_gradient, x});
    xhat = Op("reshape_like", {xhat, x});
  }
  Expr gamma_gradient = scale ? SumAllBut(Op("multiply", {g, xhat}), axis) : nullptr;
  Expr beta_gradient = center ? SumAllBut(g, axis) : nullptr;
  return {data_gradient, gamma_gradient, beta_gradient};
}

// The axes instance_norm and group_norm take statistics over: all but the
// batch (0) and the channel axis.
std::vector<int64_t> InstanceAxes(size_t rank, int64_t axis) {
  std::vector<int64_t> axes;
  for (int64_t other = 1; other < static_cast<int64_t>(rank); ++other) {
    if (other != axis) axes.push_back(other);
  }
  return axes;
}

// ---- convolution ------------------------------------------------------------------------------

// A kernel layout with O and I swapped: the same weight seen by the
// transposed convolution (conv2d's OIHW weight is conv2d_transpose's IOHW).
std::string SwappedKernelLayout(std::string layout) {
  for (char& letter : layout) {
    if (letter == 'O') {
      letter = 'I';
    } else if (letter == 'I') {
      letter = 'O';
    }
  }
  return layout;
}

// The extent of layout letter `letter` in `shape` arranged by `layout`.
int64_t ExtentOf(const std::vector<int64_t>& shape, const std::string& layout, char letter) {
  return shape[layout.find(letter)];
}

const std::string& OutputLayout(const Attrs& attrs) {
  const std::string& out_layout = kernels::StringAttr(attrs, "out_layout");
  return out_layout.empty() ? kernels::StringAttr(attrs, "data_layout") : out_layout;
}

// The gradient of conv2d's data (shape `data_shape`) given `g`, the
// gradient of its output, and `weight`, of kernel extents
// (`kernel_height`, `kernel_width`): the transposed convolution with the
// same geometry. Its output_padding restores the rows and columns the
// convolution's last window did not reach at strides > 1.
Expr ConvolutionDataGradient(const GradientContext& context, const Attrs& attrs, const Expr& g,
                             const Expr& weight, const std::vector<int64_t>& data_shape,
                             std::array<int64_t, 2> kernel) {
  const std::string& data_layout = kernels::StringAttr(attrs, "data_layout");
  const std::vector<int64_t> strides = kernels::IntListAttr(attrs, "strides");
  const std::vector<int64_t> dilation = kernels::IntListAttr(attrs, "dilation");
  const std::vector<int64_t> padding = kernels::IntListAttr(attrs, "padding");
  std::array<int64_t, 2> pad_total{};
  switch (padding.size()) {
    case 1:
      pad_total = {2 * padding[0], 2 * padding[0]};
      break;
    case 2:
      pad_total = {2 * padding[0], 2 * padding[1]};
      break;
    default:
      pad_total = {padding[0] + padding[2], padding[1] + padding[3]};
  }
  std::vector<int64_t> output_padding(2, 0);
  for (size_t axis = 0; axis < 2; ++axis) {
    const int64_t stride = strides[std::min(axis, strides.size() - 1)];
    if (stride == 1) continue;
    const int64_t extent = ExtentOf(data_shape, data_layout, axis == 0 ? 'H' : 'W');
    if (extent == ir::kAnyDim || kernel[axis] == ir::kAnyDim) {
      Fail(context, "at strides > 1 the data's height and width and the kernel's must be known");
    }
    const int64_t span = extent + pad_total[axis] -
                         dilation[std::min(axis, dilation.size() - 1)] * (kernel[axis] - 1) - 1;
    output_padding[axis] = span % stride;
  }
  Attrs transposed = {
      {"strides", AttrValue::IntList(strides)},
      {"padding", AttrValue::IntList(padding)},
      {"output_padding", AttrValue::IntList(output_padding)},
      {"dilation", AttrValue::IntList(dilation)},
      {"groups", kernels::GetAttr(attrs, "groups")},
      {"data_layout", AttrValue::String(OutputLayout(attrs))},
      {"kernel_layout",
       AttrValue::String(SwappedKernelLayout(kernels::StringAttr(attrs, "kernel_layout")))},
      {"out_layout", AttrValue::String(data_layout)},
  };
  return Op("nn.conv2d_transpose", {g, weight}, transposed);
}

// The kernel's height and width from a weight of `shape` in `layout`.
std::array<int64_t, 2> KernelExtents(const std::vector<int64_t>& shape, const std::string& layout) {
  return {ExtentOf(shape, layout, 'H'), ExtentOf(shape, layout, 'W')};
}

// conv2d's attributes for conv2d_backward_weight of a kernel of `kernel`
// extents, with out_dtype cleared (the gradient is in the inputs' dtype).
Attrs BackwardWeightAttrs(const GradientContext& context, const Attrs& attrs,
                          std::array<int64_t, 2> kernel) {
  if (kernel[0] == ir::kAnyDim || kernel[1] == ir::kAnyDim) {
    Fail(context, "the kernel's height and width must be known");
  }
  Attrs result = With(attrs, "kernel_size", AttrValue::IntList({kernel[0], kernel[1]}));
  result = With(result, "channels", AttrValue());
  return With(result, "out_dtype", AttrValue::String(""));
}

std::vector<Expr> Conv2DGradient(const GradientContext& context) {
  const Expr& data = context.inputs[0];
  const Expr& weight = context.inputs[1];
  const Attrs& attrs = context.call.attrs;
  Expr g = OutputGradientInInputDType(context);
  const std::array<int64_t, 2> kernel =
      KernelExtents(ShapeOf(context, 1), kernels::StringAttr(attrs, "kernel_layout"));
  return {ConvolutionDataGradient(context, attrs, g, weight, ShapeOf(context, 0), kernel),
          Op("nn.conv2d_backward_weight", {g, data}, BackwardWeightAttrs(context, attrs, kernel))};
}

// conv2d_transpose is the transpose of conv2d with the same geometry and
// the weight read with O and I swapped: its data's gradient is that
// conv2d of the output gradient, and its weight's gradient that conv2d's
// weight gradient with the roles of data and output gradient swapped.
std::vector<Expr> Conv2DTransposeGradient(const GradientContext& context) {
  const Expr& data = context.inputs[0];
  const Expr& weight = context.inputs[1];
  const Attrs& attrs = context.call.attrs;
  Expr g = OutputGradientInInputDType(context);
  const std::vector<int64_t> strides = kernels::IntListAttr(attrs, "strides");
  const std::vector<int64_t> output_padding = kernels::IntListAttr(attrs, "output_padding");
  for (size_t axis = 0; axis < 2; ++axis) {
    if (output_padding[std::min(axis, output_padding.size() - 1)] >=
        strides[std::min(axis, strides.size() - 1)]) {
      Fail(context, "output_padding must be smaller than the strides");
    }
  }
  Attrs convolution = {
      {"strides", kernels::GetAttr(attrs, "strides")},
      {"padding", kernels::GetAttr(attrs, "padding")},
      {"dilation", kernels::GetAttr(attrs, "dilation")},
      {"groups", kernels::GetAttr(attrs, "groups")},
      {"data_layout", AttrValue::String(OutputLayout(attrs))},
      {"kernel_layout",
       AttrValue::String(SwappedKernelLayout(kernels::StringAttr(attrs, "kernel_layout")))},
      {"out_layout", AttrValue::String(kernels::StringAttr(attrs, "data_layout"))},
  };
  const std::array<int64_t, 2> kernel =
      KernelExtents(ShapeOf(context, 1), kernels::StringAttr(attrs, "kernel_layout"));
  return {Op("nn.conv2d", {g, weight}, convolution),
          Op("nn.conv2d_backward_weight", {data, g},
             BackwardWeightAttrs(context, convolution, kernel))};
}

// conv2d_backward_weight(out_grad, data) is bilinear: out_grad's gradient
// is the convolution of data by the weight gradient G, and data's the
// transposed convolution of out_grad by G, as for conv2d.
std::vector<Expr> Conv2DBackwardWeightGradient(const GradientContext& context) {
  const Expr& out_grad = context.inputs[0];
  const Expr& data = context.inputs[1];
  const Attrs& attrs = context.call.attrs;
  Expr g = OutputGradientInInputDType(context);
  const std::vector<int64_t> kernel_size = kernels::IntListAttr(attrs, "kernel_size");
  Attrs convolution = With(attrs, "out_dtype", AttrValue::String(""));
  return {Op("nn.conv2d", {data, g}, convolution),
          ConvolutionDataGradient(context, attrs, out_grad, g, ShapeOf(context, 1),
                                  {kernel_size[0], kernel_size[1]})};
}

// ---- pooling ----------------------------------------------------------------------------------

GradientRule PoolGradient(const char* gradient_operator) {
  return [gradient_operator](const GradientContext& context) -> std::vector<Expr> {
    return {
        Op(gradient_operator, {context.output_gradient, context.inputs[0]}, context.call.attrs)};
  };
}

// A global pool is the adaptive pool to 1 x 1.
GradientRule GlobalPoolGradient(const char* gradient_operator) {
  return [gradient_operator](const GradientContext& context) -> std::vector<Expr> {
    Attrs attrs = With(context.call.attrs, "output_size", AttrValue::IntList({1, 1}));
    return {Op(gradient_operator, {context.output_gradient, context.inputs[0]}, attrs)};
  };
}

// An average pool's gradient is linear in out_grad, its transpose the pool
// itself; data only gives the shape.
GradientRule AveragePoolGradientGradient(const char* pool_operator) {
  return [pool_operator](const GradientContext& context) -> std::vector<Expr> {
    return {Op(pool_operator, {context.output_gradient}, context.call.attrs), nullptr};
  };
}

// ---- pad, flatten, dropout --------------------------------------------------------------------

std::vector<std::array<int64_t, 2>> PadWidths(const GradientContext& context) {
  std::vector<std::array<int64_t, 2>> widths;
  for (const AttrValue& pair : Attr(context, "pad_width").as_list()) {
    widths.push_back({pair.as_list()[0].as_int(), pair.as_list()[1].as_int()});
  }
  return widths;
}

Expr SliceAxis(const Expr& value, int64_t axis, int64_t begin, int64_t end) {
  return Op("strided_slice", {value},
            {{"begin", AttrValue::IntList({begin})},
             {"end", AttrValue::IntList({end})},
             {"axes", AttrValue::IntList({axis})}});
}

// `value` zero-padded by (before, after) along `axis` of `rank` axes.
Expr ZeroPadAxis(const Expr& value, int64_t axis, size_t rank, int64_t before, int64_t after,
                 DType dtype) {
  std::vector<AttrValue> widths;
  for (size_t index = 0; index < rank; ++index) {
    const bool padded = static_cast<int64_t>(index) == axis;
    widths.push_back(AttrValue::IntList({padded ? before : 0, padded ? after : 0}));
  }
  return Op("nn.pad", {value, Scalar(0, dtype)}, {{"pad_width", AttrValue::List(widths)}});
}

// constant: the data's gradient is the unpadded middle of g, the pad
// value's the sum of g over the border. edge and reflect: each border
// element's gradient goes to the data element it copied (the edge, or
// the mirror image), one padded axis at a time.
std::vector<Expr> PadGradient(const GradientContext& context) {
  const Expr& data = context.inputs[0];
  const Expr& g = context.output_gradient;
  const std::vector<int64_t>& shape = ShapeOf(context, 0);
  const DType dtype = DTypeOf(context, 0);
  const DType pad_dtype = DTypeOf(context, 1);
  const auto widths = PadWidths(context);
  const std::string& mode = Attr(context, "pad_mode").as_string();
  const bool padded = std::any_of(widths.begin(), widths.end(),
                                  [](const auto& width) { return width[0] > 0 || width[1] > 0; });
  if (!padded) return {g, nullptr};

  if (mode == "constant") {
    std::vector<int64_t> begin, end;
    for (const auto& [before, after] : widths) {
      begin.push_back(before);
      // A negative end counts from the end; without padding after, the
      // slice runs to the end.
      end.push_back(after > 0 ? -after : std::numeric_limits<int64_t>::max());
    }
    Expr data_gradient =
        Op("strided_slice", {g},
           {{"begin", AttrValue::IntList(begin)}, {"end", AttrValue::IntList(end)}});
    Expr pad_gradient = nullptr;
    if (IsFloat(pad_dtype)) {
      Expr border = Op("nn.pad", {Op("zeros_like", {data}), Scalar(1, dtype)},
                       {{"pad_width", Attr(context, "pad_width")}});
      pad_gradient = InDType(Op("sum", {Op("multiply", {g, border})}), dtype, pad_dtype);
    }
    return {data_gradient, pad_gradient};
  }

  const bool reflect = mode == "reflect";
  Expr gradient = g;
  for (size_t index = 0; index < widths.size(); ++index) {
    const auto [before, after] = widths[index];
    if (before == 0 && after == 0) continue;
    const int64_t extent = shape[index];
    if (extent == ir::kAnyDim) {
      Fail(context, mode + " padding needs the extent of each padded axis known");
    }
    const int64_t axis = static_cast<int64_t>(index);
    Expr result = SliceAxis(gradient, axis, before, before + extent);
    if (before > 0) {
      Expr border = SliceAxis(gradient, axis, 0, before);
      Expr folded = reflect ? ZeroPadAxis(Op("reverse", {border}, {{"axis", AttrValue::Int(axis)}}),
                                          axis, shape.size(), 1, extent - 1 - before, dtype)
                            : ZeroPadAxis(Sum(border, {axis}, true), axis, shape.size(), 0,
                                          extent - 1, dtype);
      result = Op("add", {result, folded});
    }
    if (after > 0) {
      Expr border = SliceAxis(gradient, axis, before + extent, before + extent + after);
      Expr folded = reflect ? ZeroPadAxis(Op("reverse", {border}, {{"axis", AttrValue::Int(axis)}}),
                                          axis, shape.size(), extent - 1 - after, 1, dtype)
                            : ZeroPadAxis(Sum(border, {axis}, true), axis, shape.size(), extent - 1,
                                          0, dtype);
      result = Op("add", {result, folded});
    }
    gradient = result;
  }
  return {gradient, nullptr};
}

// ---- image.resize2d ---------------------------------------------------------------------------

// The input coordinate of output position `index` along an axis of `in`
// input and `out` output elements. Mirrors InputCoordinate in
// kernels/compute/convolution_compute.cc, which computes it in the kernel;
// the gradient tests hold the two together.
double ResizeCoordinate(int64_t index, int64_t in, int64_t out, const std::string& mode) {
  const double position = static_cast<double>(index);
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  if (mode == "align_corners") {
    if (out <= 1) return 0;
    return position * (static_cast<double>(in - 1) / static_cast<double>(out - 1));
  }
  if (mode == "asymmetric") return position * scale;
  if (mode == "tf_half_pixel_for_nn") return (position + 0.5) * scale;
  if (mode == "pytorch_half_pixel" && out <= 1) return 0;
  return (position + 0.5) * scale - 0.5;
}

// The nearest input index of a coordinate; mirrors NearestIndex in
// kernels/compute/convolution_compute.cc.
int64_t ResizeNearestIndex(double coordinate, std::string method, const std::string& mode) {
  if (method.empty()) {
    method = mode == "align_corners" || mode == "tf_half_pixel_for_nn" ? "round" : "floor";
  }
  double rounded;
  if (method == "round") {
    rounded = std::nearbyint(coordinate);  // halves to even, as the kernel's roundeven
  } else if (method == "round_prefer_floor") {
    rounded = std::ceil(coordinate - 0.5);
  } else if (method == "round_prefer_ceil") {
    rounded = std::floor(coordinate + 0.5);
  } else if (method == "ceil") {
    rounded = std::ceil(coordinate - 1e-5);
  } else {
    rounded = std::floor(coordinate + 1e-5);
  }
  return static_cast<int64_t>(rounded);
}

// resize2d along one axis as a matrix (out x in) of interpolation weights:
// resize2d is separable, output = Wy * data * Wx^T over (H, W), so its
// gradient is Wy^T * g * Wx.
Ref<Tensor> ResizeWeights(int64_t in, int64_t out, const Attrs& attrs, DType dtype) {
  const std::string& mode = kernels::StringAttr(attrs, "coordinate_transformation_mode");
  const std::string& method = kernels::StringAttr(attrs, "method");
  const std::string& rounding = kernels::StringAttr(attrs, "rounding_method");
  std::vector<double> weights(static_cast<size_t>(in * out), 0.0);
  auto clamp = [in](int64_t index) { return std::clamp<int64_t>(index, 0, in - 1); };
  for (int64_t row = 0; row < out; ++row) {
    const double coordinate = ResizeCoordinate(row, in, out, mode);
    double* weight_row = weights.data() + row * in;
    if (method == "nearest_neighbor") {
      weight_row[clamp(ResizeNearestIndex(coordinate, rounding, mode))] += 1;
      continue;
    }
    const double lower = std::floor(coordinate);
    const double fraction = coordinate - lower;
    const auto lower_index = static_cast<int64_t>(lower);
    weight_row[clamp(lower_index)] += 1 - fraction;
    weight_row[clamp(lower_index + 1)] += fraction;
  }
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {out, in}, dtype);
  for (size_t index = 0; index < weights.size(); ++index) {
    switch (dtype) {
      case DType::kFloat64:
        tensor->data<double>()[index] = weights[index];
        break;
      case DType::kFloat32:
        tensor->data<float>()[index] = static_cast<float>(weights[index]);
        break;
      case DType::kFloat16:
        tensor->data<Float16>()[index] = Float16(static_cast<float>(weights[index]));
        break;
      default:
        RELAY_CHECK(false, "resize weights of a non-float dtype");
    }
  }
  return tensor;
}

std::vector<Expr> Resize2DGradient(const GradientContext& context) {
  const Attrs& attrs = context.call.attrs;
  if (kernels::StringAttr(attrs, "coordinate_transformation_mode") == "tf_crop_and_resize") {
    Fail(context, "coordinate_transformation_mode \"tf_crop_and_resize\" has no gradient yet");
  }
  const std::string& layout = kernels::StringAttr(attrs, "layout");
  const std::vector<int64_t>& shape = ShapeOf(context, 0);
  const int64_t in_height = ExtentOf(shape, layout, 'H');
  const int64_t in_width = ExtentOf(shape, layout, 'W');
  if (in_height == ir::kAnyDim || in_width == ir::kAnyDim) {
    Fail(context, "the data's height and width must be known");
  }
  const std::vector<int64_t> size = kernels::IntListAttr(attrs, "size");
  const DType dtype = DTypeOf(context, 0);
  Expr rows = ir::Make<ir::ConstantNode>(ResizeWeights(in_height, size[0], attrs, dtype));
  Expr columns = ir::Make<ir::ConstantNode>(ResizeWeights(in_width, size[1], attrs, dtype));
  // In (N, C, H, W) order: g Wx (contracts W), then (.)^T Wy (contracts H)
  // gives (N, C, W, H); one transpose puts that into the data's layout.
  const std::string order = "NCHW";
  Expr g = OutputGradientInInputDType(context);
  if (layout != order) {
    std::vector<int64_t> to_order;
    for (char letter : order) to_order.push_back(static_cast<int64_t>(layout.find(letter)));
    g = Op("transpose", {g}, {{"axes", AttrValue::IntList(to_order)}});
  }
  Expr product = Matmul(Matmul(g, columns, false, false), rows, true, false);
  const std::string product_order = "NCWH";
  std::vector<int64_t> to_layout;
  for (char letter : layout) to_layout.push_back(static_cast<int64_t>(product_order.find(letter)));
  return {Op("transpose", {product}, {{"axes", AttrValue::IntList(to_layout)}})};
}

}  // namespace

void AddNeuralNetworkGradients(RuleTable& table) {
  table.emplace_back("nn.dense", DenseGradient);
  table.emplace_back("nn.matmul", MatmulGradient);
  table.emplace_back("nn.batch_matmul", BatchMatmulGradient);
  table.emplace_back("nn.bias_add", BiasAddGradient);
  table.emplace_back("nn.leaky_relu", LeakyReluGradient);
  table.emplace_back("nn.prelu", PReluGradient);
  table.emplace_back("nn.softmax", SoftmaxGradient);
  table.emplace_back("nn.log_softmax", LogSoftmaxGradient);

  table.emplace_back("nn.batch_norm", BatchNormGradient);
  table.emplace_back("nn.layer_norm", [](const GradientContext& context) {
    const size_t rank = ShapeOf(context, 0).size();
    return NormalizationGradient(context, {NormalizedAxis(context, rank)}, std::nullopt);
  });
  table.emplace_back("nn.instance_norm", [](const GradientContext& context) {
    const size_t rank = ShapeOf(context, 0).size();
    return NormalizationGradient(context, InstanceAxes(rank, NormalizedAxis(context, rank)),
                                 std::nullopt);
  });
  table.emplace_back("nn.group_norm", [](const GradientContext& context) {
    const size_t rank = ShapeOf(context, 0).size();
    return NormalizationGradient(context, InstanceAxes(rank, NormalizedAxis(context, rank)),
                                 Attr(context, "num_groups").as_int());
  });

  table.emplace_back("nn.conv2d", Conv2DGradient);
  table.emplace_back("nn.conv2d_transpose", Conv2DTransposeGradient);
  table.emplace_back("nn.conv2d_backward_weight", Conv2DBackwardWeightGradient);

  table.emplace_back("nn.max_pool2d", PoolGradient("nn.max_pool2d_grad"));
  table.emplace_back("nn.avg_pool2d", PoolGradient("nn.avg_pool2d_grad"));
  table.emplace_back("nn.adaptive_max_pool2d", PoolGradient("nn.adaptive_max_pool2d_grad"));
  table.emplace_back("nn.adaptive_avg_pool2d", PoolGradient("nn.adaptive_avg_pool2d_grad"));
  table.emplace_back("nn.global_max_pool2d", GlobalPoolGradient("nn.adaptive_max_pool2d_grad"));
  table.emplace_back("nn.global_avg_pool2d", GlobalPoolGradient("nn.adaptive_avg_pool2d_grad"));
  table.emplace_back("nn.avg_pool2d_grad", AveragePoolGradientGradient("nn.avg_pool2d"));
  table.emplace_back("nn.adaptive_avg_pool2d_grad",
                     AveragePoolGradientGradient("nn.adaptive_avg_pool2d"));

  table.emplace_back("nn.pad", PadGradient);
  table.emplace_back("nn.batch_flatten", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("reshape_like", {context.output_gradient, context.inputs[0]})};
  });
  // At inference dropout is the identity; its mask is constant.
  table.emplace_back("nn.dropout", [](const GradientContext& context) -> std::vector<Expr> {
    return {Project(context.output_gradient, 0)};
  });
  table.emplace_back("image.resize2d", Resize2DGradient);
}

}  // namespace relay::passes::operator_gradients
