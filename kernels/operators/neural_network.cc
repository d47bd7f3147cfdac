// Neural-network operators (nn.*): convolution, pooling, dense and matmul,
// normalisation, activations with parameters, padding, dropout; and the
// operators that the gradients of convolution and pooling need
// (compiler/passes/operator_gradients/neural_network.cc).
#include <array>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// ---- layouts ------------------------------------------------------------------

// Where each of four named axes sits in a 4-D layout string such as "NHWC"
// (data: N, C, H, W) or "HWIO" (kernel: O, I, H, W). Blocked layouts such as
// "NCHW16c" are not supported.
struct Layout4 {
  std::array<int, 4> position;  // position[k] = index in the tensor of letters[k]
};

Layout4 ParseLayout(const std::string& text, std::string_view letters, std::string_view attr) {
  Layout4 layout{};
  bool valid = text.size() == 4;
  std::array<bool, 4> seen{};
  for (size_t index = 0; valid && index < text.size(); ++index) {
    const size_t letter = letters.find(text[index]);
    if (letter == std::string_view::npos || seen[letter]) {
      valid = false;
      break;
    }
    seen[letter] = true;
    layout.position[letter] = static_cast<int>(index);
  }
  if (!valid) {
    std::string spelled;
    for (char letter : letters) {
      if (!spelled.empty()) spelled += ", ";
      spelled += letter;
    }
    FailRelation("attribute '" + std::string(attr) + "' is \"" + text +
                 "\": expected an arrangement of " + spelled + " such as \"" +
                 std::string(letters) + "\"");
  }
  return layout;
}

// Letter indices for data layouts ("NCHW") and kernel layouts ("OIHW").
constexpr int kBatch = 0, kChannel = 1, kHeight = 2, kWidth = 3;
constexpr int kOutChannel = 0, kInChannel = 1;

// The data layout, and the output layout (out_layout, or the data layout when
// out_layout is empty).
std::pair<Layout4, Layout4> DataLayouts(const Attrs& attrs, const char* layout_attr) {
  const Layout4 data = ParseLayout(StringAttr(attrs, layout_attr), "NCHW", layout_attr);
  const std::string& out_text = StringAttr(attrs, "out_layout");
  const Layout4 out = out_text.empty() ? data : ParseLayout(out_text, "NCHW", "out_layout");
  return {data, out};
}

// Arranges (N, C, H, W) values into `layout`'s order.
Dims Arrange(const Layout4& layout, std::array<int64_t, 4> values) {
  Dims dims(4);
  for (int letter = 0; letter < 4; ++letter) dims[layout.position[letter]] = values[letter];
  return dims;
}

// ---- window parameters --------------------------------------------------------

// A per-spatial-axis pair such as strides=[2, 2]; one value means both.
std::array<int64_t, 2> SpatialPair(const Attrs& attrs, std::string_view name, int64_t minimum) {
  const std::vector<int64_t> values = IntListAttr(attrs, name);
  if (values.size() != 1 && values.size() != 2) {
    FailRelation("attribute '" + std::string(name) + "' must have 1 or 2 values, got " +
                 GetAttr(attrs, name).ToString());
  }
  std::array<int64_t, 2> pair = {values[0], values.back()};
  for (int64_t value : pair) {
    if (value < minimum) {
      FailRelation("attribute '" + std::string(name) + "' must have values >= " +
                   std::to_string(minimum) + ", got " + GetAttr(attrs, name).ToString());
    }
  }
  return pair;
}

// padding: [all], [top/bottom, left/right] or [top, left, bottom, right].
// Returns the total padding of the height and of the width.
std::array<int64_t, 2> PaddingTotals(const Attrs& attrs) {
  const std::vector<int64_t> values = IntListAttr(attrs, "padding");
  for (int64_t value : values) {
    if (value < 0) {
      FailRelation("attribute 'padding' must not be negative, got " +
                   GetAttr(attrs, "padding").ToString());
    }
  }
  switch (values.size()) {
    case 1:
      return {CheckedMultiply(2, values[0]), CheckedMultiply(2, values[0])};
    case 2:
      return {CheckedMultiply(2, values[0]), CheckedMultiply(2, values[1])};
    case 4:
      return {CheckedAdd(values[0], values[2]), CheckedAdd(values[1], values[3])};
    default:
      FailRelation("attribute 'padding' must have 1, 2 or 4 values, got " +
                   GetAttr(attrs, "padding").ToString());
  }
}

// One spatial output extent of a sliding window:
//   floor((input + padding - dilation * (kernel - 1) - 1) / stride) + 1,
// with ceil_mode rounding the division up instead (pools only).
int64_t WindowOutput(int64_t input, int64_t padding, int64_t kernel, int64_t dilation,
                     int64_t stride, bool ceil_mode, std::string_view dimension) {
  if (IsKnownDim(kernel) && kernel < 1) {
    FailRelation("the window " + std::string(dimension) + " must be >= 1, got " +
                 std::to_string(kernel));
  }
  if (!IsKnownDim(input) || !IsKnownDim(kernel)) return kAnyDim;
  const int64_t dilated = CheckedAdd(CheckedMultiply(dilation, kernel - 1), 1);
  const int64_t padded = CheckedAdd(input, padding);
  if (padded < dilated) {
    FailRelation("the window (" + std::string(dimension) + " " + std::to_string(kernel) +
                 ", dilation " + std::to_string(dilation) + ", so " + std::to_string(dilated) +
                 " wide) is larger than the padded input " + std::string(dimension) + " " +
                 std::to_string(padded));
  }
  const int64_t span = CheckedAdd(padded - dilated, ceil_mode ? stride - 1 : 0);
  return span / stride + 1;
}

// ---- convolution ---------------------------------------------------------------

AttrSchema ConvolutionSchema(const char* default_kernel_layout, bool transposed) {
  AttrSchema schema = {
      DefaultAttr("strides", AttrKind::kIntList, AttrValue::IntList({1, 1})),
      DefaultAttr("padding", AttrKind::kIntList, AttrValue::IntList({0, 0})),
  };
  if (transposed) {
    schema.push_back(DefaultAttr("output_padding", AttrKind::kIntList, AttrValue::IntList({0, 0})));
  }
  AttrSchema rest = {
      DefaultAttr("dilation", AttrKind::kIntList, AttrValue::IntList({1, 1})),
      DefaultAttr("groups", AttrKind::kInt, AttrValue::Int(1)),
      DefaultAttr("channels", AttrKind::kOptionalInt, AttrValue()),
      DefaultAttr("kernel_size", AttrKind::kOptionalIntList, AttrValue()),
      DefaultAttr("data_layout", AttrKind::kString, AttrValue::String("NCHW")),
      DefaultAttr("kernel_layout", AttrKind::kString, AttrValue::String(default_kernel_layout)),
      DefaultAttr("out_layout", AttrKind::kString, AttrValue::String("")),
      DefaultAttr("out_dtype", AttrKind::kString, AttrValue::String("")),
  };
  schema.insert(schema.end(), rest.begin(), rest.end());
  return schema;
}

struct ConvolutionOperands {
  std::array<int64_t, 4> data;    // N, C, H, W
  std::array<int64_t, 4> weight;  // O, I, H, W (as named by kernel_layout)
  Layout4 out_layout;
  DType out_dtype;
  int64_t groups;
};

// Reads the operands common to conv2d and conv2d_transpose (`transposed`) and
// reconciles the weight's kernel size and channels with the channels and
// kernel_size attributes.
ConvolutionOperands ReadConvolution(std::span<const RelationInput> inputs, const Attrs& attrs,
                                    bool transposed) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& weight = ExpectTensor(inputs, 1, "weight");
  ExpectRank(data, 4, "data");
  ExpectRank(weight, 4, "weight");
  ExpectSameDType(data, weight);
  const auto [data_layout, out_layout] = DataLayouts(attrs, "data_layout");
  const Layout4 kernel_layout =
      ParseLayout(StringAttr(attrs, "kernel_layout"), "OIHW", "kernel_layout");

  ConvolutionOperands operands{};
  for (int letter = 0; letter < 4; ++letter) {
    operands.data[letter] = data.shape[data_layout.position[letter]];
    operands.weight[letter] = weight.shape[kernel_layout.position[letter]];
  }
  operands.out_layout = out_layout;
  operands.out_dtype = DTypeAttr(attrs, "out_dtype", data.dtype);
  operands.groups = IntAttr(attrs, "groups");
  if (operands.groups < 1) {
    FailRelation("attribute 'groups' must be >= 1, got " + std::to_string(operands.groups));
  }
  if (std::optional<std::vector<int64_t>> kernel_size = OptionalIntListAttr(attrs, "kernel_size")) {
    if (kernel_size->size() != 2) {
      FailRelation("attribute 'kernel_size' must have 2 values, got " +
                   GetAttr(attrs, "kernel_size").ToString());
    }
    operands.weight[kHeight] =
        UnifyDims(operands.weight[kHeight], (*kernel_size)[0],
                  "the weight's kernel height differs from attribute 'kernel_size'");
    operands.weight[kWidth] = UnifyDims(operands.weight[kWidth], (*kernel_size)[1],
                                        "the weight's kernel width differs from attribute "
                                        "'kernel_size'");
  }
  if (std::optional<int64_t> channels = OptionalIntAttr(attrs, "channels")) {
    // conv2d's weight holds all output channels; conv2d_transpose's holds
    // them per group.
    const int64_t weight_channels =
        transposed ? MultiplyDims(operands.weight[kOutChannel], operands.groups)
                   : operands.weight[kOutChannel];
    const int64_t unified = UnifyDims(weight_channels, *channels,
                                      "the weight's output channels differ from attribute "
                                      "'channels'");
    if (!IsKnownDim(operands.weight[kOutChannel])) {
      operands.weight[kOutChannel] = transposed ? unified / operands.groups : unified;
    }
  }
  return operands;
}

void ExpectDivisible(int64_t dim, int64_t divisor, const std::string& what) {
  if (IsKnownDim(dim) && dim % divisor != 0) {
    FailRelation(what + " " + std::to_string(dim) +
                 " is not divisible by groups=" + std::to_string(divisor));
  }
}

ValueType Conv2DRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ConvolutionOperands operands = ReadConvolution(inputs, attrs, false);
  const auto& [batch, channels, height, width] = operands.data;
  const int64_t groups = operands.groups;
  ExpectDivisible(channels, groups, "the input channel count");
  ExpectDivisible(operands.weight[kOutChannel], groups, "the output channel count");
  const int64_t expected_in = MultiplyDims(operands.weight[kInChannel], groups);
  if (IsKnownDim(channels) && IsKnownDim(expected_in) && channels != expected_in) {
    FailRelation("'data' has " + std::to_string(channels) + " channels but 'weight' expects " +
                 std::to_string(operands.weight[kInChannel]) +
                 " per group with groups=" + std::to_string(groups));
  }
  const auto strides = SpatialPair(attrs, "strides", 1);
  const auto dilation = SpatialPair(attrs, "dilation", 1);
  const auto padding = PaddingTotals(attrs);
  const int64_t out_height = WindowOutput(height, padding[0], operands.weight[kHeight], dilation[0],
                                          strides[0], false, "height");
  const int64_t out_width = WindowOutput(width, padding[1], operands.weight[kWidth], dilation[1],
                                         strides[1], false, "width");
  return ValueType::Tensor(
      Arrange(operands.out_layout, {batch, operands.weight[kOutChannel], out_height, out_width}),
      operands.out_dtype);
}

// conv2d_transpose: weight is (in_channels, out_channels / groups, kh, kw) in
// the default IOHW layout; each output extent is
//   (input - 1) * stride - padding + dilation * (kernel - 1) + output_padding + 1.
ValueType Conv2DTransposeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ConvolutionOperands operands = ReadConvolution(inputs, attrs, true);
  const auto& [batch, channels, height, width] = operands.data;
  const int64_t groups = operands.groups;
  ExpectDivisible(channels, groups, "the input channel count");
  const int64_t weight_in = operands.weight[kInChannel];
  if (IsKnownDim(channels) && IsKnownDim(weight_in) && channels != weight_in) {
    FailRelation("'data' has " + std::to_string(channels) + " channels but 'weight' expects " +
                 std::to_string(weight_in));
  }
  const auto strides = SpatialPair(attrs, "strides", 1);
  const auto dilation = SpatialPair(attrs, "dilation", 1);
  const auto output_padding = SpatialPair(attrs, "output_padding", 0);
  const auto padding = PaddingTotals(attrs);
  std::array<int64_t, 2> spatial = {height, width};
  const std::array<int64_t, 2> kernel = {operands.weight[kHeight], operands.weight[kWidth]};
  for (int axis = 0; axis < 2; ++axis) {
    if (output_padding[axis] >= strides[axis] && output_padding[axis] >= dilation[axis]) {
      FailRelation("attribute 'output_padding' must be smaller than the stride or the dilation");
    }
    if (!IsKnownDim(spatial[axis]) || !IsKnownDim(kernel[axis])) {
      spatial[axis] = kAnyDim;
      continue;
    }
    if (spatial[axis] < 1 || kernel[axis] < 1) {
      FailRelation("conv2d_transpose needs input and kernel extents >= 1");
    }
    const int64_t spread = CheckedAdd(CheckedMultiply(spatial[axis] - 1, strides[axis]),
                                      CheckedMultiply(dilation[axis], kernel[axis] - 1));
    const int64_t extent = CheckedAdd(spread, output_padding[axis] + 1) - padding[axis];
    if (extent < 1) FailRelation("the padding is larger than the transposed convolution output");
    spatial[axis] = extent;
  }
  const int64_t out_channels = MultiplyDims(operands.weight[kOutChannel], groups);
  return ValueType::Tensor(
      Arrange(operands.out_layout, {batch, out_channels, spatial[0], spatial[1]}),
      operands.out_dtype);
}

// conv2d_backward_weight(out_grad, data): the gradient of conv2d with
// respect to its weight. The attributes are conv2d's (kernel_size required:
// the extents of out_grad and data leave it ambiguous at strides > 1); the
// result is the weight, (O, C / groups, kh, kw) in kernel_layout, where
// out_grad is conv2d's output (in out_layout) and O its channel count.
ValueType Conv2DBackwardWeightRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& out_grad = ExpectTensor(inputs, 0, "out_grad");
  const ValueType& data = ExpectTensor(inputs, 1, "data");
  ExpectRank(out_grad, 4, "out_grad");
  ExpectRank(data, 4, "data");
  ExpectSameDType(out_grad, data);
  const auto [data_layout, out_layout] = DataLayouts(attrs, "data_layout");
  const Layout4 kernel_layout =
      ParseLayout(StringAttr(attrs, "kernel_layout"), "OIHW", "kernel_layout");
  const std::optional<std::vector<int64_t>> kernel_size = OptionalIntListAttr(attrs, "kernel_size");
  if (!kernel_size.has_value() || kernel_size->size() != 2) {
    FailRelation("attribute 'kernel_size' must give the kernel's [height, width], got " +
                 GetAttr(attrs, "kernel_size").ToString());
  }
  const int64_t groups = IntAttr(attrs, "groups");
  if (groups < 1) FailRelation("attribute 'groups' must be >= 1, got " + std::to_string(groups));
  std::array<int64_t, 4> in{}, out{};
  for (int letter = 0; letter < 4; ++letter) {
    in[letter] = data.shape[data_layout.position[letter]];
    out[letter] = out_grad.shape[out_layout.position[letter]];
  }
  UnifyDims(in[kBatch], out[kBatch], "'out_grad' and 'data' differ in batch size");
  int64_t out_channels = out[kChannel];
  if (std::optional<int64_t> channels = OptionalIntAttr(attrs, "channels")) {
    out_channels = UnifyDims(out_channels, *channels,
                             "the output channels of 'out_grad' differ from attribute 'channels'");
  }
  ExpectDivisible(in[kChannel], groups, "the input channel count");
  ExpectDivisible(out_channels, groups, "the output channel count");
  const auto strides = SpatialPair(attrs, "strides", 1);
  const auto dilation = SpatialPair(attrs, "dilation", 1);
  const auto padding = PaddingTotals(attrs);
  const char* names[] = {"height", "width"};
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t expected = WindowOutput(in[kHeight + axis], padding[axis], (*kernel_size)[axis],
                                          dilation[axis], strides[axis], false, names[axis]);
    UnifyDims(out[kHeight + axis], expected,
              std::string("the ") + names[axis] + " of 'out_grad' is not conv2d's output " +
                  names[axis] + " for 'data'");
  }
  const int64_t in_per_group = IsKnownDim(in[kChannel]) ? in[kChannel] / groups : kAnyDim;
  return ValueType::Tensor(
      Arrange(kernel_layout, {out_channels, in_per_group, (*kernel_size)[0], (*kernel_size)[1]}),
      DTypeAttr(attrs, "out_dtype", data.dtype));
}

// ---- pooling ---------------------------------------------------------------------

AttrSchema PoolSchema(bool average) {
  AttrSchema schema = {
      RequiredAttr("pool_size", AttrKind::kIntList),
      DefaultAttr("strides", AttrKind::kIntList, AttrValue::IntList({1, 1})),
      DefaultAttr("dilation", AttrKind::kIntList, AttrValue::IntList({1, 1})),
      DefaultAttr("padding", AttrKind::kIntList, AttrValue::IntList({0, 0})),
      DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
      DefaultAttr("out_layout", AttrKind::kString, AttrValue::String("")),
      DefaultAttr("ceil_mode", AttrKind::kBool, AttrValue::Bool(false)),
  };
  if (average) {
    schema.push_back(DefaultAttr("count_include_pad", AttrKind::kBool, AttrValue::Bool(false)));
  }
  return schema;
}

ValueType Pool2DRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(data, 4, "data");
  const auto [layout, out_layout] = DataLayouts(attrs, "layout");
  const auto pool_size = SpatialPair(attrs, "pool_size", 1);
  const auto strides = SpatialPair(attrs, "strides", 1);
  const auto dilation = SpatialPair(attrs, "dilation", 1);
  const auto padding = PaddingTotals(attrs);
  const bool ceil_mode = BoolAttr(attrs, "ceil_mode");
  const int64_t out_height =
      WindowOutput(data.shape[layout.position[kHeight]], padding[0], pool_size[0], dilation[0],
                   strides[0], ceil_mode, "height");
  const int64_t out_width = WindowOutput(data.shape[layout.position[kWidth]], padding[1],
                                         pool_size[1], dilation[1], strides[1], ceil_mode, "width");
  return ValueType::Tensor(
      Arrange(out_layout, {data.shape[layout.position[kBatch]],
                           data.shape[layout.position[kChannel]], out_height, out_width}),
      data.dtype);
}

ValueType GlobalPool2DRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(data, 4, "data");
  const auto [layout, out_layout] = DataLayouts(attrs, "layout");
  return ValueType::Tensor(Arrange(out_layout, {data.shape[layout.position[kBatch]],
                                                data.shape[layout.position[kChannel]], 1, 1}),
                           data.dtype);
}

// output_size: None or [] keeps the input extent, [s] means s x s.
ValueType AdaptivePool2DRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(data, 4, "data");
  const auto [layout, out_layout] = DataLayouts(attrs, "layout");
  int64_t out_height = data.shape[layout.position[kHeight]];
  int64_t out_width = data.shape[layout.position[kWidth]];
  const std::vector<int64_t> output_size =
      OptionalIntListAttr(attrs, "output_size").value_or(std::vector<int64_t>{});
  if (output_size.size() > 2) {
    FailRelation("attribute 'output_size' must have at most 2 values, got " +
                 GetAttr(attrs, "output_size").ToString());
  }
  if (!output_size.empty()) {
    out_height = output_size[0];
    out_width = output_size.back();
  }
  if (!output_size.empty() && (output_size[0] < 1 || output_size.back() < 1)) {
    FailRelation("attribute 'output_size' must have values >= 1, got " +
                 GetAttr(attrs, "output_size").ToString());
  }
  return ValueType::Tensor(
      Arrange(out_layout, {data.shape[layout.position[kBatch]],
                           data.shape[layout.position[kChannel]], out_height, out_width}),
      data.dtype);
}

// The gradient of a pool (out_grad, data) has data's type; out_grad must
// have the type `forward` gives the pool of data.
TypeRelation PoolGradientRelation(TypeRelation forward) {
  return [forward](std::span<const RelationInput> inputs, const Attrs& attrs) {
    const ValueType& out_grad = ExpectTensor(inputs, 0, "out_grad");
    const ValueType& data = ExpectTensor(inputs, 1, "data");
    ExpectSameDType(out_grad, data);
    const ValueType pooled = forward(inputs.subspan(1), attrs);
    ExpectRank(out_grad, pooled.shape.size(), "out_grad");
    for (size_t axis = 0; axis < pooled.shape.size(); ++axis) {
      UnifyDims(out_grad.shape[axis], pooled.shape[axis],
                "'out_grad' " + out_grad.ToString() + " is not the pool's output " +
                    pooled.ToString() + " at axis " + std::to_string(axis));
    }
    return data;
  };
}

// ---- dense and matmul ------------------------------------------------------------

// tensor_a: (..., M, K), or (..., K, M) with transpose_a; tensor_b: (K, N), or
// (N, K) with transpose_b. Output (..., M, N). nn.dense is transpose_b=True.
ValueType MatmulType(const ValueType& a, const ValueType& b, bool transpose_a, bool transpose_b,
                     std::optional<int64_t> units, const Attrs& attrs, std::string_view a_name,
                     std::string_view b_name) {
  ExpectMinimumRank(a, transpose_a ? 2 : 1, a_name);
  ExpectRank(b, 2, b_name);
  ExpectSameDType(a, b);
  Dims shape = a.shape;
  const size_t rank = shape.size();
  const int64_t reduction = transpose_a ? a.shape[rank - 2] : a.shape[rank - 1];
  if (transpose_a) shape[rank - 2] = a.shape[rank - 1];
  const int64_t b_reduction = transpose_b ? b.shape[1] : b.shape[0];
  int64_t columns = transpose_b ? b.shape[0] : b.shape[1];
  if (IsKnownDim(reduction) && IsKnownDim(b_reduction) && reduction != b_reduction) {
    FailRelation("'" + std::string(a_name) + "' " + a.ToString() + " and '" + std::string(b_name) +
                 "' " + b.ToString() + " disagree on the reduction dimension: " +
                 std::to_string(reduction) + " vs " + std::to_string(b_reduction));
  }
  if (units.has_value()) {
    columns = UnifyDims(columns, *units, "attribute 'units' differs from the weight's units");
  }
  shape[rank - 1] = columns;
  return ValueType::Tensor(std::move(shape), DTypeAttr(attrs, "out_dtype", a.dtype));
}

ValueType DenseRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  return MatmulType(ExpectTensor(inputs, 0, "data"), ExpectTensor(inputs, 1, "weight"), false, true,
                    OptionalIntAttr(attrs, "units"), attrs, "data", "weight");
}

ValueType MatmulRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  return MatmulType(ExpectTensor(inputs, 0, "tensor_a"), ExpectTensor(inputs, 1, "tensor_b"),
                    BoolAttr(attrs, "transpose_a"), BoolAttr(attrs, "transpose_b"),
                    OptionalIntAttr(attrs, "units"), attrs, "tensor_a", "tensor_b");
}

// tensor_a: (B, M, K) or (B, K, M); tensor_b: (B, K, N) or (B, N, K) with
// transpose_b (the default). Batch dimensions broadcast (one may be 1).
ValueType BatchMatmulRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& a = ExpectTensor(inputs, 0, "tensor_a");
  const ValueType& b = ExpectTensor(inputs, 1, "tensor_b");
  ExpectRank(a, 3, "tensor_a");
  ExpectRank(b, 3, "tensor_b");
  ExpectSameDType(a, b);
  const bool transpose_a = BoolAttr(attrs, "transpose_a");
  const bool transpose_b = BoolAttr(attrs, "transpose_b");
  const int64_t rows = transpose_a ? a.shape[2] : a.shape[1];
  const int64_t reduction = transpose_a ? a.shape[1] : a.shape[2];
  const int64_t b_reduction = transpose_b ? b.shape[2] : b.shape[1];
  const int64_t columns = transpose_b ? b.shape[1] : b.shape[2];
  if (IsKnownDim(reduction) && IsKnownDim(b_reduction) && reduction != b_reduction) {
    FailRelation("'tensor_a' " + a.ToString() + " and 'tensor_b' " + b.ToString() +
                 " disagree on the reduction dimension: " + std::to_string(reduction) + " vs " +
                 std::to_string(b_reduction));
  }
  Dims batch;
  try {
    batch = BroadcastShapes({a.shape[0]}, {b.shape[0]});
  } catch (const OperatorTypeError&) {
    FailRelation("'tensor_a' " + a.ToString() + " and 'tensor_b' " + b.ToString() +
                 " have batch dimensions that differ and neither is 1");
  }
  return ValueType::Tensor({batch[0], rows, columns}, DTypeAttr(attrs, "out_dtype", a.dtype));
}

// ---- per-channel parameters --------------------------------------------------------

// A parameter vector (bias, gamma, ...) of shape (channels,) matching data's
// dtype; returns the channel count with `?` resolved where the vector knows it.
int64_t ExpectChannelVector(const ValueType& data, const ValueType& vector, int64_t channels,
                            std::string_view name, std::string_view axis_description) {
  if (vector.shape.size() != 1) {
    FailRelation("input '" + std::string(name) + "' must be a vector of length " +
                 (IsKnownDim(channels) ? std::to_string(channels) : std::string("?")) + " (" +
                 std::string(axis_description) + "), got " + vector.ToString());
  }
  ExpectSameDType(data, vector);
  const int64_t length = vector.shape[0];
  if (IsKnownDim(length) && IsKnownDim(channels) && length != channels) {
    FailRelation("input '" + std::string(name) + "' " + vector.ToString() + " must have length " +
                 std::to_string(channels) + " to match " + std::string(axis_description) +
                 " of 'data' " + data.ToString());
  }
  return IsKnownDim(channels) ? channels : length;
}

ValueType BiasAddRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& bias = ExpectTensor(inputs, 1, "bias");
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  ExpectChannelVector(data, bias, data.shape[axis], "bias", "axis " + std::to_string(axis));
  return data;
}

ValueType PReluRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& alpha = ExpectTensor(inputs, 1, "alpha");
  ExpectFloatDType(data, "data");
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  ExpectChannelVector(data, alpha, data.shape[axis], "alpha", "axis " + std::to_string(axis));
  return data;
}

ValueType LeakyReluRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectFloatDType(data, "data");
  return data;
}

ValueType SoftmaxRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectFloatDType(data, "data");
  NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  return data;
}

AttrSchema NormalizationSchema(int64_t default_axis) {
  return {DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(default_axis)),
          DefaultAttr("epsilon", AttrKind::kFloat, AttrValue::Float(1e-5)),
          DefaultAttr("center", AttrKind::kBool, AttrValue::Bool(true)),
          DefaultAttr("scale", AttrKind::kBool, AttrValue::Bool(true))};
}

// batch_norm returns (normalised data, new moving mean, new moving variance).
ValueType BatchNormRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectFloatDType(data, "data");
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  const std::string description = "axis " + std::to_string(axis);
  int64_t channels = data.shape[axis];
  static constexpr const char* kNames[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (size_t index = 0; index < 4; ++index) {
    channels = ExpectChannelVector(data, ExpectTensor(inputs, index + 1, kNames[index]), channels,
                                   kNames[index], description);
  }
  const ValueType vector = ValueType::Tensor({channels}, data.dtype);
  return ValueType::Tuple({data, vector, vector});
}

// layer_norm, instance_norm and group_norm: gamma and beta are vectors over
// `axis`; the output has data's type.
TypeRelation NormRelation(size_t minimum_rank, bool grouped) {
  return [minimum_rank, grouped](std::span<const RelationInput> inputs, const Attrs& attrs) {
    const ValueType& data = ExpectTensor(inputs, 0, "data");
    ExpectFloatDType(data, "data");
    ExpectMinimumRank(data, minimum_rank, "data");
    const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
    const std::string description = "axis " + std::to_string(axis);
    int64_t channels = data.shape[axis];
    channels =
        ExpectChannelVector(data, ExpectTensor(inputs, 1, "gamma"), channels, "gamma", description);
    channels =
        ExpectChannelVector(data, ExpectTensor(inputs, 2, "beta"), channels, "beta", description);
    if (grouped) {
      const int64_t groups = IntAttr(attrs, "num_groups");
      if (groups < 1) FailRelation("attribute 'num_groups' must be >= 1");
      if (IsKnownDim(channels) && channels % groups != 0) {
        FailRelation("the " + std::to_string(channels) +
                     " channels cannot be split into num_groups=" + std::to_string(groups));
      }
    }
    return data;
  };
}

// ---- pad, flatten, dropout -----------------------------------------------------------

// pad_width: one [before, after] pair of non-negative integers per axis.
std::vector<std::array<int64_t, 2>> PadWidths(const Attrs& attrs, size_t rank) {
  const AttrValue& value = GetAttr(attrs, "pad_width");
  auto fail = [&value]() {
    FailRelation("attribute 'pad_width' expects a list of [before, after] pairs of integers, got " +
                 value.ToString());
  };
  if (value.kind() != AttrValue::Kind::kList) fail();
  std::vector<std::array<int64_t, 2>> widths;
  for (const AttrValue& pair : value.as_list()) {
    if (pair.kind() != AttrValue::Kind::kList || pair.as_list().size() != 2) fail();
    std::array<int64_t, 2> width{};
    for (size_t side = 0; side < 2; ++side) {
      const AttrValue& item = pair.as_list()[side];
      if (item.kind() != AttrValue::Kind::kInt) fail();
      if (item.as_int() < 0) {
        FailRelation("attribute 'pad_width' must not be negative, got " + value.ToString());
      }
      width[side] = item.as_int();
    }
    widths.push_back(width);
  }
  if (widths.size() != rank) {
    FailRelation("attribute 'pad_width' has " + std::to_string(widths.size()) +
                 " pairs but 'data' has rank " + std::to_string(rank));
  }
  return widths;
}

ValueType PadRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& pad_value = ExpectTensor(inputs, 1, "pad_value");
  // The pad value is converted to data's dtype, so its own dtype is free.
  ExpectRank(pad_value, 0, "pad_value");
  const std::string& mode = ChoiceAttr(attrs, "pad_mode", {"constant", "edge", "reflect"});
  const auto widths = PadWidths(attrs, data.shape.size());
  Dims shape = data.shape;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (mode == "reflect" && IsKnownDim(shape[axis]) &&
        (widths[axis][0] >= shape[axis] || widths[axis][1] >= shape[axis]) &&
        (widths[axis][0] > 0 || widths[axis][1] > 0)) {
      FailRelation("reflect padding of axis " + std::to_string(axis) +
                   " must be smaller than its extent " + std::to_string(shape[axis]));
    }
    shape[axis] = AddDims(AddDims(shape[axis], widths[axis][0]), widths[axis][1]);
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

ValueType BatchFlattenRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectMinimumRank(data, 1, "data");
  int64_t flattened = 1;
  for (size_t index = 1; index < data.shape.size(); ++index) {
    flattened = MultiplyDims(flattened, data.shape[index]);
  }
  return ValueType::Tensor({data.shape[0], flattened}, data.dtype);
}

// dropout returns (output, mask), both of data's type.
ValueType DropoutRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectFloatDType(data, "data");
  const double rate = FloatAttr(attrs, "rate");
  if (!(rate >= 0.0 && rate < 1.0)) {
    FailRelation("attribute 'rate' must be in [0, 1), got " + AttrValue::Float(rate).ToString());
  }
  return ValueType::Tuple({data, data});
}

AttrSchema LayoutOnlySchema() {
  return {DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
          DefaultAttr("out_layout", AttrKind::kString, AttrValue::String(""))};
}

}  // namespace

void RegisterNeuralNetworkOperators(OperatorTableBuilder& table) {
  table.Add({.name = "nn.conv2d",
             .input_names = {"data", "weight"},
             .attributes = ConvolutionSchema("OIHW", false),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = Conv2DRelation,
             .summary = "2-D convolution (grouped, dilated, strided, padded).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.conv2d_transpose",
             .input_names = {"data", "weight"},
             .attributes = ConvolutionSchema("IOHW", true),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = Conv2DTransposeRelation,
             .summary = "2-D transposed convolution (the gradient of conv2d).",
             .differentiability = Differentiability::kGradient});
  // The gradient of conv2d with respect to its weight (TVM's operator of
  // that name); differentiable in turn, being bilinear.
  table.Add({.name = "nn.conv2d_backward_weight",
             .input_names = {"out_grad", "data"},
             .attributes = ConvolutionSchema("OIHW", false),
             .pattern = FusionPattern::kOpaque,
             .relation = Conv2DBackwardWeightRelation,
             .summary = "Gradient of conv2d with respect to its weight, given out_grad and data.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.max_pool2d",
             .input_names = {"data"},
             .attributes = PoolSchema(false),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = Pool2DRelation,
             .summary = "2-D max pooling.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.avg_pool2d",
             .input_names = {"data"},
             .attributes = PoolSchema(true),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = Pool2DRelation,
             .summary = "2-D average pooling.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.global_avg_pool2d",
             .input_names = {"data"},
             .attributes = LayoutOnlySchema(),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = GlobalPool2DRelation,
             .summary = "Average over the whole height and width.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.global_max_pool2d",
             .input_names = {"data"},
             .attributes = LayoutOnlySchema(),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = GlobalPool2DRelation,
             .summary = "Maximum over the whole height and width.",
             .differentiability = Differentiability::kGradient});
  AttrSchema adaptive_schema = LayoutOnlySchema();
  adaptive_schema.insert(adaptive_schema.begin(),
                         DefaultAttr("output_size", AttrKind::kOptionalIntList, AttrValue()));
  table.Add({.name = "nn.adaptive_avg_pool2d",
             .input_names = {"data"},
             .attributes = adaptive_schema,
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = AdaptivePool2DRelation,
             .summary = "Average pooling to a given output height and width.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.adaptive_max_pool2d",
             .input_names = {"data"},
             .attributes = adaptive_schema,
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = AdaptivePool2DRelation,
             .summary = "Max pooling to a given output height and width.",
             .differentiability = Differentiability::kGradient});

  // The pools' gradients (TVM's max_pool2d_grad and avg_pool2d_grad, and
  // their adaptive counterparts): out_grad spread back over each window.
  // The average pools' gradients are linear in out_grad, their transposes
  // the pools themselves; the max pools' would need a gather at each
  // window's maximum, an operator not written yet.
  table.Add({.name = "nn.max_pool2d_grad",
             .input_names = {"out_grad", "data"},
             .attributes = PoolSchema(false),
             .pattern = FusionPattern::kOpaque,
             .relation = PoolGradientRelation(Pool2DRelation),
             .summary = "Gradient of max_pool2d: out_grad to each window's first maximum."});
  table.Add({.name = "nn.avg_pool2d_grad",
             .input_names = {"out_grad", "data"},
             .attributes = PoolSchema(true),
             .pattern = FusionPattern::kOpaque,
             .relation = PoolGradientRelation(Pool2DRelation),
             .summary = "Gradient of avg_pool2d: out_grad shared over each window.",
             .differentiability = Differentiability::kGradient});
  table.Add(
      {.name = "nn.adaptive_max_pool2d_grad",
       .input_names = {"out_grad", "data"},
       .attributes = adaptive_schema,
       .pattern = FusionPattern::kOpaque,
       .relation = PoolGradientRelation(AdaptivePool2DRelation),
       .summary = "Gradient of adaptive_max_pool2d: out_grad to each window's first maximum."});
  table.Add({.name = "nn.adaptive_avg_pool2d_grad",
             .input_names = {"out_grad", "data"},
             .attributes = adaptive_schema,
             .pattern = FusionPattern::kOpaque,
             .relation = PoolGradientRelation(AdaptivePool2DRelation),
             .summary = "Gradient of adaptive_avg_pool2d: out_grad shared over each window.",
             .differentiability = Differentiability::kGradient});

  table.Add({.name = "nn.dense",
             .input_names = {"data", "weight"},
             .attributes = {DefaultAttr("units", AttrKind::kOptionalInt, AttrValue()),
                            DefaultAttr("out_dtype", AttrKind::kString, AttrValue::String(""))},
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = DenseRelation,
             .summary = "Fully connected layer: data * weight^T, weight (units, input_dim).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.matmul",
             .input_names = {"tensor_a", "tensor_b"},
             .attributes = {DefaultAttr("units", AttrKind::kOptionalInt, AttrValue()),
                            DefaultAttr("out_dtype", AttrKind::kString, AttrValue::String("")),
                            DefaultAttr("transpose_a", AttrKind::kBool, AttrValue::Bool(false)),
                            DefaultAttr("transpose_b", AttrKind::kBool, AttrValue::Bool(false))},
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = MatmulRelation,
             .summary = "Matrix product of an n-D tensor and a matrix, either transposed.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.batch_matmul",
             .input_names = {"tensor_a", "tensor_b"},
             .attributes = {DefaultAttr("out_dtype", AttrKind::kString, AttrValue::String("")),
                            DefaultAttr("transpose_a", AttrKind::kBool, AttrValue::Bool(false)),
                            DefaultAttr("transpose_b", AttrKind::kBool, AttrValue::Bool(true))},
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = BatchMatmulRelation,
             .summary = "Batched matrix product of 3-D tensors (B transposed by default).",
             .differentiability = Differentiability::kGradient});

  table.Add({.name = "nn.bias_add",
             .input_names = {"data", "bias"},
             .attributes = {DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(1))},
             .pattern = FusionPattern::kBroadcast,
             .relation = BiasAddRelation,
             .summary = "Adds a bias vector along one axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.leaky_relu",
             .input_names = {"data"},
             .attributes = {DefaultAttr("alpha", AttrKind::kFloat, AttrValue::Float(0.01))},
             .pattern = FusionPattern::kElementwise,
             .relation = LeakyReluRelation,
             .summary = "Leaky ReLU: x > 0 ? x : alpha * x.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.prelu",
             .input_names = {"data", "alpha"},
             .attributes = {DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(1))},
             .pattern = FusionPattern::kBroadcast,
             .relation = PReluRelation,
             .summary = "Parametric ReLU with a slope per channel along axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.softmax",
             .input_names = {"data"},
             .attributes = {DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(-1))},
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = SoftmaxRelation,
             .summary = "Softmax along one axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.log_softmax",
             .input_names = {"data"},
             .attributes = {DefaultAttr("axis", AttrKind::kInt, AttrValue::Int(-1))},
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = SoftmaxRelation,
             .summary = "Logarithm of softmax along one axis.",
             .differentiability = Differentiability::kGradient});

  table.Add({.name = "nn.batch_norm",
             .input_names = {"data", "gamma", "beta", "moving_mean", "moving_var"},
             .attributes = NormalizationSchema(1),
             .pattern = FusionPattern::kOutElementwiseFusable,
             .relation = BatchNormRelation,
             .summary = "Batch normalisation; returns (output, moving_mean, moving_var).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.layer_norm",
             .input_names = {"data", "gamma", "beta"},
             .attributes = NormalizationSchema(-1),
             .pattern = FusionPattern::kOpaque,
             .relation = NormRelation(1, false),
             .summary = "Layer normalisation over one axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.instance_norm",
             .input_names = {"data", "gamma", "beta"},
             .attributes = NormalizationSchema(1),
             .pattern = FusionPattern::kOpaque,
             .relation = NormRelation(3, false),
             .summary = "Instance normalisation: per sample and channel.",
             .differentiability = Differentiability::kGradient});
  AttrSchema group_schema = NormalizationSchema(1);
  group_schema.insert(group_schema.begin(), RequiredAttr("num_groups", AttrKind::kInt));
  table.Add({.name = "nn.group_norm",
             .input_names = {"data", "gamma", "beta"},
             .attributes = group_schema,
             .pattern = FusionPattern::kOpaque,
             .relation = NormRelation(2, true),
             .summary = "Group normalisation over groups of channels.",
             .differentiability = Differentiability::kGradient});

  table.Add(
      {.name = "nn.pad",
       .input_names = {"data", "pad_value"},
       .attributes = {RequiredAttr("pad_width", AttrKind::kAny),
                      DefaultAttr("pad_mode", AttrKind::kString, AttrValue::String("constant"))},
       .pattern = FusionPattern::kInjective,
       .relation = PadRelation,
       .summary = "Pads each axis by [before, after] (constant, edge or reflect).",
       .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.batch_flatten",
             .input_names = {"data"},
             .attributes = {},
             .pattern = FusionPattern::kInjective,
             .relation = BatchFlattenRelation,
             .summary = "Flattens all axes but the first: (d0, d1 * ... * dn).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "nn.dropout",
             .input_names = {"data"},
             .attributes = {DefaultAttr("rate", AttrKind::kFloat, AttrValue::Float(0.5))},
             .pattern = FusionPattern::kOpaque,
             .relation = DropoutRelation,
             .summary = "Dropout; returns (output, mask). The identity at inference.",
             .differentiability = Differentiability::kGradient});
}

}  // namespace relay::kernels
