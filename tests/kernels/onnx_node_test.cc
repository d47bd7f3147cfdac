// ONNX's node tests (Debian's libonnx-testdata) as a second, independent
// oracle for the CPU operator kernels.
//
// Each directory RELAY_ONNX_TESTDATA_DIR/test_*/ holds a one-node model.onnx
// and test_data_set_N/{input,output}_K.pb. Every directory whose single node
// maps onto a Relay operator with the same semantics (the table Mappers()
// below) becomes one test, named after the directory, that runs the operator
// through RunOperator (or its tuple variants) on the data set's inputs and
// compares with output_0.pb (every output for Split). Inputs that are
// attributes in Relay (shapes, axes, pads, clip bounds, repeats) are read
// from their .pb files and turned into attributes. A node that does not map
// (a different semantics, a dtype relay-vm lacks, an operator we do not
// have) is not instantiated; OnnxNodeTestdata.MapsEnoughCases keeps the
// count honest so that a broken reader fails loudly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/kernels/fixture_cases.h"
#include "tests/kernels/onnx_testdata.h"

namespace relay::kernels {
namespace {

using namespace relay::kernels::testing;

const std::filesystem::path kDataDirectory = RELAY_ONNX_TESTDATA_DIR;

// Elementwise float32 results: our kernels and NumPy evaluate the same
// formula in float32, so they differ by a few ulps at most.
constexpr double kElementwiseTolerance = 1e-5;
// Reductions, dot products, convolutions and normalisations: our kernels
// accumulate in float32 in a different order from ONNX's NumPy reference
// (pairwise or float64 sums), so rounding errors grow with the reduced
// extent.
constexpr double kAccumulationTolerance = 1e-4;
// float16 results: half a float16 ulp at 1.0 is about 4.9e-4.
constexpr double kFloat16Tolerance = 1e-3;

// The node tests whose semantics match but where our kernel disagrees with
// ONNX: skipped with the reason, each one a bug to fix in kernels/.
struct KnownKernelBug {
  const char* test_name;
  const char* reason;
};
// None found so far: every mapped case whose kernel exists matches.
const std::vector<KnownKernelBug> kKnownKernelBugs = {};

// Operators of the table that have no CPU kernel yet (RunOperator throws
// "operator X has no CPU kernel yet"). Their cases are mapped but skipped
// while that is so, and run as soon as the kernel exists. None today.
const std::vector<std::string> kOperatorsWithoutCpuKernel = {};

// ---- what a node test runs -------------------------------------------------------------

// How a mapped node calls the kernels.
enum class CallForm {
  kTensors,      // RunOperator
  kTupleInput,   // RunOperatorOnTuple (concatenate)
  kTupleResult,  // RunOperatorWithTupleResult (split, batch_norm)
};

struct OnnxCall {
  std::string operator_name;
  CallForm form = CallForm::kTensors;
  std::vector<Ref<Tensor>> inputs;
  Attrs attributes;
  // Whether the result fields accumulate (see the tolerances above).
  bool accumulates = false;
  // argmax/argmin return int32 where ONNX returns int64; only values compare.
  bool compare_dtype = true;
  // Compare every ONNX output with the result fields (split); otherwise
  // output_0 with the first field.
  bool compare_all_outputs = false;
};

// Thrown by the mappers' checks: the node does not map onto our operator.
struct NotMapped {};

void Require(bool condition) {
  if (!condition) throw NotMapped{};
}

// A node and its input tensors (nullptr for an omitted optional input).
struct NodeContext {
  const OnnxNode& node;
  int64_t opset = 0;
  std::vector<Ref<Tensor>> inputs;

  size_t input_count() const { return inputs.size(); }
  bool HasInput(size_t index) const { return index < inputs.size() && inputs[index]; }
  const Ref<Tensor>& Input(size_t index) const {
    Require(HasInput(index));
    return inputs[index];
  }

  template <typename T>
  std::optional<T> Attribute(const std::string& name) const {
    const OnnxAttribute* attribute = node.FindAttribute(name);
    if (!attribute) return std::nullopt;
    const T* value = std::get_if<T>(&attribute->value);
    Require(value != nullptr);
    return *value;
  }
  int64_t IntAttribute(const std::string& name, int64_t fallback) const {
    return Attribute<int64_t>(name).value_or(fallback);
  }
  double FloatAttribute(const std::string& name, double fallback) const {
    return Attribute<float>(name).value_or(static_cast<float>(fallback));
  }
  // Requires the node to leave `name` unset or set it to `expected`.
  void RequireIntAttribute(const std::string& name, int64_t expected) const {
    Require(IntAttribute(name, expected) == expected);
  }
};

// The integers of an int32/int64 tensor (shapes, axes, pads, repeats).
std::vector<int64_t> TensorIntegers(const Tensor& tensor) {
  std::vector<int64_t> values;
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    if (tensor.dtype() == DType::kInt64) {
      values.push_back(tensor.data<int64_t>()[index]);
    } else {
      Require(tensor.dtype() == DType::kInt32);
      values.push_back(tensor.data<int32_t>()[index]);
    }
  }
  return values;
}

// The one value of a single-element tensor, widened to double.
double ScalarValue(const Tensor& tensor) {
  Require(tensor.element_count() == 1);
  if (IsFloat(tensor.dtype())) return FloatElement(tensor, 0);
  return static_cast<double>(IntegerElement(tensor, 0));
}

double ToleranceFor(DType dtype, bool accumulates) {
  if (dtype == DType::kFloat16) return kFloat16Tolerance;
  return accumulates ? kAccumulationTolerance : kElementwiseTolerance;
}

// A rank-0 tensor of `dtype` holding `value` (nn.pad's pad value).
Ref<Tensor> ScalarTensor(DType dtype, double value) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  switch (dtype) {
    case DType::kFloat32:
      *tensor->data<float>() = static_cast<float>(value);
      break;
    case DType::kFloat64:
      *tensor->data<double>() = value;
      break;
    case DType::kInt32:
      *tensor->data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kInt64:
      *tensor->data<int64_t>() = static_cast<int64_t>(value);
      break;
    default:
      Require(false);
  }
  return tensor;
}

OnnxCall Call(std::string operator_name, std::vector<Ref<Tensor>> inputs, Attrs attributes = {}) {
  OnnxCall call;
  call.operator_name = std::move(operator_name);
  call.inputs = std::move(inputs);
  call.attributes = std::move(attributes);
  return call;
}

// ---- the mapping table -----------------------------------------------------------------

using Mapper = std::function<OnnxCall(const NodeContext&)>;

Mapper Unary(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.input_count() == 1);
    return Call(operator_name, {context.Input(0)});
  };
}

// Broadcasting binary operators. Both inputs must share a dtype (ONNX's Pow
// allows mixed types, our power does not), and opset 1-6's legacy
// `broadcast`/`axis` attributes (a different broadcasting rule) must be unset.
Mapper Binary(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.input_count() == 2);
    Require(!context.node.FindAttribute("axis") && !context.node.FindAttribute("broadcast"));
    Require(context.Input(0)->dtype() == context.Input(1)->dtype());
    return Call(operator_name, {context.Input(0), context.Input(1)});
  };
}

// Div: for signed integers ONNX truncates like our divide, but its NumPy
// reference floors, so only float and unsigned division are compared.
OnnxCall MapDiv(const NodeContext& context) {
  Require(context.input_count() == 2);
  const DType dtype = context.Input(0)->dtype();
  Require(IsFloat(dtype) || dtype == DType::kUInt8);
  return Binary("divide")(context);
}

// Mod: fmod=1 is C's fmod (the dividend's sign: our mod); fmod=0, integers
// only, is Python's % (the divisor's sign: our floor_mod).
OnnxCall MapMod(const NodeContext& context) {
  const bool fmod = context.IntAttribute("fmod", 0) == 1;
  if (!fmod) Require(!IsFloat(context.Input(0)->dtype()));
  return Binary(fmod ? "mod" : "floor_mod")(context);
}

OnnxCall MapIsInf(const NodeContext& context) {
  context.RequireIntAttribute("detect_negative", 1);
  context.RequireIntAttribute("detect_positive", 1);
  return Unary("isinf")(context);
}

OnnxCall MapLeakyRelu(const NodeContext& context) {
  Require(context.input_count() == 1);
  return Call("nn.leaky_relu", {context.Input(0)},
              {{"alpha", AttrValue::Float(context.FloatAttribute("alpha", 0.01))}});
}

OnnxCall MapCast(const NodeContext& context) {
  const std::optional<DType> dtype = DTypeOfOnnxType(context.Attribute<int64_t>("to").value_or(0));
  Require(dtype.has_value());
  return Call("cast", {context.Input(0)},
              {{"dtype", AttrValue::String(std::string(DTypeName(*dtype)))}});
}

OnnxCall MapCastLike(const NodeContext& context) {
  Require(context.input_count() == 2);
  return Call("cast_like", {context.Input(0), context.Input(1)});
}

// Clip's bounds are inputs from opset 11 on (attributes before); a missing
// bound is no bound: an infinity for floats, the dtype's limit for integers
// (an infinite bound would not convert to an integer).
OnnxCall MapClip(const NodeContext& context) {
  const DType dtype = context.Input(0)->dtype();
  double lowest = -std::numeric_limits<double>::infinity();
  double highest = std::numeric_limits<double>::infinity();
  if (dtype == DType::kInt8) {
    lowest = std::numeric_limits<int8_t>::lowest(), highest = std::numeric_limits<int8_t>::max();
  } else if (dtype == DType::kUInt8) {
    lowest = 0, highest = std::numeric_limits<uint8_t>::max();
  } else {
    Require(IsFloat(dtype));
  }
  if (context.opset >= 11) {
    Require(context.input_count() <= 3);
    if (context.HasInput(1)) lowest = ScalarValue(*context.Input(1));
    if (context.HasInput(2)) highest = ScalarValue(*context.Input(2));
  } else {
    lowest = context.FloatAttribute("min", lowest);
    highest = context.FloatAttribute("max", highest);
  }
  return Call("clip", {context.Input(0)},
              {{"a_min", AttrValue::Float(lowest)}, {"a_max", AttrValue::Float(highest)}});
}

// Max, Min and Sum of exactly two inputs are the binary operators.
Mapper TwoInputVariadic(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.input_count() == 2);
    return Binary(operator_name)(context);
  };
}

OnnxCall MapWhere(const NodeContext& context) {
  Require(context.input_count() == 3);
  return Call("where", {context.Input(0), context.Input(1), context.Input(2)});
}

// ReduceX: axes from the `axes` attribute, or (ReduceSum from opset 13) from
// input 1; no axes reduce everything, unless noop_with_empty_axes asks for
// the identity.
Mapper Reduction(std::string operator_name, bool axes_are_input_from_13) {
  return [operator_name, axes_are_input_from_13](const NodeContext& context) {
    std::optional<std::vector<int64_t>> axes;
    if (axes_are_input_from_13 && context.opset >= 13) {
      Require(context.input_count() <= 2);
      if (context.HasInput(1)) axes = TensorIntegers(*context.Input(1));
    } else {
      Require(context.input_count() == 1);
      axes = context.Attribute<std::vector<int64_t>>("axes");
    }
    if (axes && axes->empty()) axes.reset();
    if (!axes && context.IntAttribute("noop_with_empty_axes", 0) == 1) {
      return Call("copy", {context.Input(0)});
    }
    OnnxCall call = Call(operator_name, {context.Input(0)},
                         {{"axis", axes ? AttrValue::IntList(*axes) : AttrValue()},
                          {"keepdims", AttrValue::Bool(context.IntAttribute("keepdims", 1) == 1)}});
    call.accumulates = true;
    return call;
  };
}

Mapper ArgReduction(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.input_count() == 1);
    OnnxCall call = Call(operator_name, {context.Input(0)},
                         {{"axis", AttrValue::IntList({context.IntAttribute("axis", 0)})},
                          {"keepdims", AttrValue::Bool(context.IntAttribute("keepdims", 1) == 1)},
                          {"select_last_index",
                           AttrValue::Bool(context.IntAttribute("select_last_index", 0) == 1)}});
    call.compare_dtype = false;
    return call;
  };
}

// Before opset 13 Softmax flattened the input to 2-D at `axis`; from 13 on it
// normalises along the one axis, as nn.softmax does.
Mapper SoftmaxLike(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.opset >= 13 && context.input_count() == 1);
    OnnxCall call = Call(operator_name, {context.Input(0)},
                         {{"axis", AttrValue::Int(context.IntAttribute("axis", -1))}});
    call.accumulates = true;
    return call;
  };
}

OnnxCall MapMatMul(const NodeContext& context) {
  Require(context.input_count() == 2);
  const Ref<Tensor>& a = context.Input(0);
  const Ref<Tensor>& b = context.Input(1);
  OnnxCall call;
  if (a->ndim() == 2 && b->ndim() == 2) {
    call = Call("nn.matmul", {a, b});
  } else if (a->ndim() == 3 && b->ndim() == 3 && a->shape()[0] == b->shape()[0]) {
    call = Call("nn.batch_matmul", {a, b}, {{"transpose_b", AttrValue::Bool(false)}});
  } else {
    Require(false);
  }
  call.accumulates = true;
  return call;
}

// The explicit-padding, 2-D (NCHW) spatial attributes shared by Conv and the
// pools. ONNX pads are [top, left, bottom, right], Relay's padding order.
Attrs SpatialAttributes(const NodeContext& context, bool with_dilation) {
  Require(context.Input(0)->ndim() == 4);
  const std::optional<std::string> auto_pad = context.Attribute<std::string>("auto_pad");
  Require(!auto_pad || *auto_pad == "NOTSET");
  const auto strides =
      context.Attribute<std::vector<int64_t>>("strides").value_or(std::vector<int64_t>{1, 1});
  const auto pads =
      context.Attribute<std::vector<int64_t>>("pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
  Require(strides.size() == 2 && pads.size() == 4);
  Attrs attributes = {{"strides", AttrValue::IntList(strides)},
                      {"padding", AttrValue::IntList(pads)}};
  const auto dilations =
      context.Attribute<std::vector<int64_t>>("dilations").value_or(std::vector<int64_t>{1, 1});
  Require(dilations.size() == 2);
  if (with_dilation) {
    attributes.emplace_back("dilation", AttrValue::IntList(dilations));
  } else {
    Require(dilations == std::vector<int64_t>{1, 1});
  }
  return attributes;
}

// Conv without a bias input (a bias would be a separate bias_add in Relay).
OnnxCall MapConv(const NodeContext& context) {
  Require(context.input_count() == 2);
  const Ref<Tensor>& weight = context.Input(1);
  Require(weight->ndim() == 4);
  if (auto kernel_shape = context.Attribute<std::vector<int64_t>>("kernel_shape")) {
    Require(*kernel_shape == Shape(weight->shape().begin() + 2, weight->shape().end()));
  }
  Attrs attributes = SpatialAttributes(context, true);
  attributes.emplace_back("groups", AttrValue::Int(context.IntAttribute("group", 1)));
  OnnxCall call = Call("nn.conv2d", {context.Input(0), weight}, std::move(attributes));
  call.accumulates = true;
  return call;
}

Mapper Pool(std::string operator_name, bool is_average) {
  return [operator_name, is_average](const NodeContext& context) {
    // MaxPool's optional second output (argmax indices) has no Relay
    // counterpart.
    Require(context.input_count() == 1 && context.node.outputs.size() == 1);
    context.RequireIntAttribute("storage_order", 0);
    const auto kernel_shape = context.Attribute<std::vector<int64_t>>("kernel_shape");
    Require(kernel_shape && kernel_shape->size() == 2);
    Attrs attributes = SpatialAttributes(context, !is_average);
    attributes.emplace_back("pool_size", AttrValue::IntList(*kernel_shape));
    attributes.emplace_back("ceil_mode",
                            AttrValue::Bool(context.IntAttribute("ceil_mode", 0) == 1));
    if (is_average) {
      attributes.emplace_back("count_include_pad",
                              AttrValue::Bool(context.IntAttribute("count_include_pad", 0) == 1));
    }
    OnnxCall call = Call(operator_name, {context.Input(0)}, std::move(attributes));
    call.accumulates = is_average;
    return call;
  };
}

Mapper GlobalPool(std::string operator_name) {
  return [operator_name](const NodeContext& context) {
    Require(context.input_count() == 1 && context.Input(0)->ndim() == 4);
    OnnxCall call = Call(operator_name, {context.Input(0)});
    call.accumulates = true;
    return call;
  };
}

// Inference-mode BatchNormalization: output 0 is batch_norm's field 0.
OnnxCall MapBatchNormalization(const NodeContext& context) {
  Require(context.input_count() == 5 && context.node.outputs.size() == 1);
  context.RequireIntAttribute("training_mode", 0);
  context.RequireIntAttribute("spatial", 1);
  std::vector<Ref<Tensor>> inputs;
  for (size_t index = 0; index < 5; ++index) inputs.push_back(context.Input(index));
  OnnxCall call = Call("nn.batch_norm", std::move(inputs),
                       {{"axis", AttrValue::Int(1)},
                        {"epsilon", AttrValue::Float(context.FloatAttribute("epsilon", 1e-5))}});
  call.form = CallForm::kTupleResult;
  call.accumulates = true;
  return call;
}

OnnxCall MapInstanceNormalization(const NodeContext& context) {
  Require(context.input_count() == 3);
  OnnxCall call = Call("nn.instance_norm", {context.Input(0), context.Input(1), context.Input(2)},
                       {{"axis", AttrValue::Int(1)},
                        {"epsilon", AttrValue::Float(context.FloatAttribute("epsilon", 1e-5))}});
  call.accumulates = true;
  return call;
}

// LayerNormalization over the last axis only (ONNX normalises over all axes
// from `axis` on; nn.layer_norm over one). A missing bias is a zero bias.
OnnxCall MapLayerNormalization(const NodeContext& context) {
  Require(context.input_count() == 2 || context.input_count() == 3);
  const Ref<Tensor>& data = context.Input(0);
  const int64_t axis = context.IntAttribute("axis", -1);
  Require(axis == -1 || axis == data->ndim() - 1);
  context.RequireIntAttribute("stash_type", 1);
  Ref<Tensor> bias = context.HasInput(2) ? context.Input(2) : nullptr;
  if (!bias) {
    const Ref<Tensor>& scale = context.Input(1);
    bias = Tensor::Empty(HostDevice(), scale->shape(), scale->dtype());
    std::fill_n(static_cast<uint8_t*>(bias->host_data()), bias->byte_size(), 0);
  }
  OnnxCall call = Call("nn.layer_norm", {data, context.Input(1), bias},
                       {{"axis", AttrValue::Int(-1)},
                        {"epsilon", AttrValue::Float(context.FloatAttribute("epsilon", 1e-5))}});
  call.accumulates = true;
  return call;
}

OnnxCall MapTranspose(const NodeContext& context) {
  const auto perm = context.Attribute<std::vector<int64_t>>("perm");
  return Call("transpose", {context.Input(0)},
              {{"axes", perm ? AttrValue::IntList(*perm) : AttrValue()}});
}

// ONNX's 0 (copy the dimension, unless allowzero) and -1 (infer) mean the
// same in Relay's newshape.
OnnxCall MapReshape(const NodeContext& context) {
  Require(context.input_count() == 2);
  return Call("reshape", {context.Input(0)},
              {{"newshape", AttrValue::IntList(TensorIntegers(*context.Input(1)))},
               {"allowzero", AttrValue::Bool(context.IntAttribute("allowzero", 0) == 1)}});
}

// Squeeze's and Unsqueeze's axes are input 1 from opset 13 on.
std::optional<std::vector<int64_t>> AxesInputOrAttribute(const NodeContext& context) {
  if (context.opset >= 13) {
    Require(context.input_count() <= 2);
    if (!context.HasInput(1)) return std::nullopt;
    return TensorIntegers(*context.Input(1));
  }
  Require(context.input_count() == 1);
  return context.Attribute<std::vector<int64_t>>("axes");
}

OnnxCall MapSqueeze(const NodeContext& context) {
  const auto axes = AxesInputOrAttribute(context);
  return Call("squeeze", {context.Input(0)},
              {{"axis", axes ? AttrValue::IntList(*axes) : AttrValue()}});
}

// One axis is expand_dims; several are a reshape to the unsqueezed shape
// (expand_dims inserts one run of axes at one place).
OnnxCall MapUnsqueeze(const NodeContext& context) {
  const auto axes = AxesInputOrAttribute(context);
  Require(axes && !axes->empty());
  const Ref<Tensor>& data = context.Input(0);
  if (axes->size() == 1) {
    return Call("expand_dims", {data}, {{"axis", AttrValue::Int(axes->front())}});
  }
  const int64_t rank = data->ndim() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : *axes) {
    const int64_t normalised = axis < 0 ? axis + rank : axis;
    Require(normalised >= 0 && normalised < rank && !inserted[normalised]);
    inserted[normalised] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t axis = 0; axis < rank; ++axis) {
    shape.push_back(inserted[axis] ? 1 : data->shape()[next++]);
  }
  return Call("reshape", {data}, {{"newshape", AttrValue::IntList(shape)}});
}

OnnxCall MapConcat(const NodeContext& context) {
  const auto axis = context.Attribute<int64_t>("axis");
  Require(axis.has_value());
  std::vector<Ref<Tensor>> fields;
  for (size_t index = 0; index < context.input_count(); ++index) {
    fields.push_back(context.Input(index));
  }
  OnnxCall call = Call("concatenate", std::move(fields), {{"axis", AttrValue::Int(*axis)}});
  call.form = CallForm::kTupleInput;
  return call;
}

// Split's part sizes (attribute `split` before opset 13, input 1 after)
// become Relay's split points; without sizes, equal parts, one per output.
OnnxCall MapSplit(const NodeContext& context) {
  std::optional<std::vector<int64_t>> sizes;
  if (context.opset >= 13) {
    Require(context.input_count() <= 2);
    if (context.HasInput(1)) sizes = TensorIntegers(*context.Input(1));
  } else {
    Require(context.input_count() == 1);
    sizes = context.Attribute<std::vector<int64_t>>("split");
  }
  AttrValue indices_or_sections = AttrValue::Int(static_cast<int64_t>(context.node.outputs.size()));
  if (sizes) {
    Require(sizes->size() == context.node.outputs.size());
    // Relay's split points must increase strictly: no empty parts.
    Require(std::all_of(sizes->begin(), sizes->end(), [](int64_t size) { return size > 0; }));
    std::vector<int64_t> points;
    int64_t point = 0;
    for (size_t index = 0; index + 1 < sizes->size(); ++index)
      points.push_back(point += (*sizes)[index]);
    indices_or_sections = AttrValue::IntList(points);
  }
  OnnxCall call = Call("split", {context.Input(0)},
                       {{"indices_or_sections", std::move(indices_or_sections)},
                        {"axis", AttrValue::Int(context.IntAttribute("axis", 0))}});
  call.form = CallForm::kTupleResult;
  call.compare_all_outputs = true;
  return call;
}

OnnxCall MapTile(const NodeContext& context) {
  Require(context.input_count() == 2);
  return Call("tile", {context.Input(0)},
              {{"reps", AttrValue::IntList(TensorIntegers(*context.Input(1)))}});
}

// Gather takes along `axis`; its negative indices count from the end, which
// is take's "wrap" mode for indices in [-extent, extent) (ONNX rejects
// others).
OnnxCall MapGather(const NodeContext& context) {
  Require(context.input_count() == 2);
  return Call("take", {context.Input(0), context.Input(1)},
              {{"axis", AttrValue::Int(context.IntAttribute("axis", 0))},
               {"mode", AttrValue::String("wrap")}});
}

// GatherElements is Relay's gather; ONNX also accepts negative indices
// (counting from the end), which gather does not, so those do not map.
OnnxCall MapGatherElements(const NodeContext& context) {
  Require(context.input_count() == 2);
  const std::vector<int64_t> indices = TensorIntegers(*context.Input(1));
  Require(std::all_of(indices.begin(), indices.end(), [](int64_t index) { return index >= 0; }));
  return Call("gather", {context.Input(0), context.Input(1)},
              {{"axis", AttrValue::Int(context.IntAttribute("axis", 0))}});
}

// Pad: ONNX pads are [begin_0, begin_1, ..., end_0, end_1, ...]; Relay's
// pad_width is [[begin_0, end_0], ...]. Negative pads (cropping) do not map.
OnnxCall MapPad(const NodeContext& context) {
  const Ref<Tensor>& data = context.Input(0);
  std::vector<int64_t> pads;
  double value = 0;
  if (context.opset >= 11) {
    Require(context.input_count() >= 2 && context.input_count() <= 3);
    pads = TensorIntegers(*context.Input(1));
    if (context.HasInput(2)) value = ScalarValue(*context.Input(2));
  } else {
    pads = context.Attribute<std::vector<int64_t>>("pads").value_or(std::vector<int64_t>{});
    value = context.FloatAttribute("value", 0);
  }
  const auto rank = static_cast<size_t>(data->ndim());
  Require(pads.size() == 2 * rank);
  std::vector<AttrValue> widths;
  for (size_t axis = 0; axis < rank; ++axis) {
    Require(pads[axis] >= 0 && pads[axis + rank] >= 0);
    widths.push_back(AttrValue::IntList({pads[axis], pads[axis + rank]}));
  }
  const std::string mode = context.Attribute<std::string>("mode").value_or("constant");
  Require(mode == "constant" || mode == "edge" || mode == "reflect");
  return Call(
      "nn.pad", {data, ScalarTensor(data->dtype(), value)},
      {{"pad_width", AttrValue::List(std::move(widths))}, {"pad_mode", AttrValue::String(mode)}});
}

// Flatten at axis 1 is batch_flatten; other axes are not.
OnnxCall MapFlatten(const NodeContext& context) {
  const Ref<Tensor>& data = context.Input(0);
  const int64_t axis = context.IntAttribute("axis", 1);
  Require(data->ndim() >= 2 && (axis == 1 || axis == 1 - data->ndim()));
  return Call("nn.batch_flatten", {data});
}

// Expand broadcasts both ways: the result's shape is the broadcast of the
// input's shape and `shape`, which is what broadcast_to is given.
OnnxCall MapExpand(const NodeContext& context) {
  Require(context.input_count() == 2);
  const Ref<Tensor>& data = context.Input(0);
  std::vector<int64_t> target = TensorIntegers(*context.Input(1));
  const Shape& shape = data->shape();
  const size_t rank = std::max(target.size(), shape.size());
  std::vector<int64_t> result(rank, 1);
  for (size_t index = 0; index < rank; ++index) {
    const int64_t from_target =
        index + target.size() >= rank ? target[index + target.size() - rank] : 1;
    const int64_t from_data = index + shape.size() >= rank ? shape[index + shape.size() - rank] : 1;
    Require(from_target == from_data || from_target == 1 || from_data == 1);
    result[index] = from_target == 1 ? from_data : from_target;
  }
  return Call("broadcast_to", {data}, {{"shape", AttrValue::IntList(result)}});
}

// PRelu with a slope vector along the last axis (what NumPy broadcasting
// of a 1-D slope means) is nn.prelu on that axis.
OnnxCall MapPRelu(const NodeContext& context) {
  Require(context.input_count() == 2);
  const Ref<Tensor>& data = context.Input(0);
  const Ref<Tensor>& slope = context.Input(1);
  Require(slope->ndim() == 1 && data->ndim() >= 1 && slope->shape()[0] == data->shape().back());
  return Call("nn.prelu", {data, slope}, {{"axis", AttrValue::Int(data->ndim() - 1)}});
}

OnnxCall MapShape(const NodeContext& context) {
  Require(!context.node.FindAttribute("start") && !context.node.FindAttribute("end"));
  return Call("shape_of", {context.Input(0)}, {{"dtype", AttrValue::String("int64")}});
}

OnnxCall MapSize(const NodeContext& context) {
  return Call("ndarray_size", {context.Input(0)}, {{"dtype", AttrValue::String("int64")}});
}

const std::map<std::string, Mapper>& Mappers() {
  static const std::map<std::string, Mapper> mappers = {
      {"Abs", Unary("abs")},
      {"Neg", Unary("negative")},
      {"Exp", Unary("exp")},
      {"Log", Unary("log")},
      {"Sqrt", Unary("sqrt")},
      {"Sigmoid", Unary("sigmoid")},
      {"Tanh", Unary("tanh")},
      {"Erf", Unary("erf")},
      {"Sin", Unary("sin")},
      {"Cos", Unary("cos")},
      {"Tan", Unary("tan")},
      {"Asin", Unary("asin")},
      {"Acos", Unary("acos")},
      {"Atan", Unary("atan")},
      {"Sinh", Unary("sinh")},
      {"Cosh", Unary("cosh")},
      {"Floor", Unary("floor")},
      {"Ceil", Unary("ceil")},
      {"Round", Unary("round")},
      {"Sign", Unary("sign")},
      {"Not", Unary("logical_not")},
      {"Relu", Unary("nn.relu")},
      {"Identity", Unary("copy")},
      {"IsNaN", Unary("isnan")},
      {"IsInf", MapIsInf},
      {"LeakyRelu", MapLeakyRelu},
      {"PRelu", MapPRelu},
      {"Cast", MapCast},
      {"CastLike", MapCastLike},
      {"Clip", MapClip},
      {"Add", Binary("add")},
      {"Sub", Binary("subtract")},
      {"Mul", Binary("multiply")},
      {"Div", MapDiv},
      {"Pow", Binary("power")},
      {"Mod", MapMod},
      {"Equal", Binary("equal")},
      {"Less", Binary("less")},
      {"Greater", Binary("greater")},
      {"LessOrEqual", Binary("less_equal")},
      {"GreaterOrEqual", Binary("greater_equal")},
      {"And", Binary("logical_and")},
      {"Or", Binary("logical_or")},
      {"Xor", Binary("logical_xor")},
      {"Max", TwoInputVariadic("maximum")},
      {"Min", TwoInputVariadic("minimum")},
      {"Sum", TwoInputVariadic("add")},
      {"Where", MapWhere},
      {"ReduceSum", Reduction("sum", true)},
      {"ReduceMean", Reduction("mean", false)},
      {"ReduceMax", Reduction("max", false)},
      {"ReduceMin", Reduction("min", false)},
      {"ReduceProd", Reduction("prod", false)},
      {"ArgMax", ArgReduction("argmax")},
      {"ArgMin", ArgReduction("argmin")},
      {"Softmax", SoftmaxLike("nn.softmax")},
      {"LogSoftmax", SoftmaxLike("nn.log_softmax")},
      {"MatMul", MapMatMul},
      {"Conv", MapConv},
      {"MaxPool", Pool("nn.max_pool2d", false)},
      {"AveragePool", Pool("nn.avg_pool2d", true)},
      {"GlobalAveragePool", GlobalPool("nn.global_avg_pool2d")},
      {"GlobalMaxPool", GlobalPool("nn.global_max_pool2d")},
      {"BatchNormalization", MapBatchNormalization},
      {"InstanceNormalization", MapInstanceNormalization},
      {"LayerNormalization", MapLayerNormalization},
      {"Transpose", MapTranspose},
      {"Reshape", MapReshape},
      {"Squeeze", MapSqueeze},
      {"Unsqueeze", MapUnsqueeze},
      {"Concat", MapConcat},
      {"Split", MapSplit},
      {"Tile", MapTile},
      {"Gather", MapGather},
      {"GatherElements", MapGatherElements},
      {"Pad", MapPad},
      {"Flatten", MapFlatten},
      {"Expand", MapExpand},
      {"Shape", MapShape},
      {"Size", MapSize},
  };
  return mappers;
}

// ---- reading a node test ---------------------------------------------------------------

// The data sets of a test directory, in order.
std::vector<std::filesystem::path> DataSets(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> data_sets;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_")) {
      data_sets.push_back(entry.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  return data_sets;
}

// The node's input tensors from `data_set` (graph input K is input_K.pb);
// nullopt when an input is not a graph input (an initializer).
std::optional<std::vector<Ref<Tensor>>> ReadNodeInputs(const OnnxModel& model,
                                                       const std::filesystem::path& data_set) {
  const OnnxNode& node = model.graph.nodes.front();
  std::vector<Ref<Tensor>> inputs;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const auto& graph_inputs = model.graph.inputs;
    const auto found = std::find(graph_inputs.begin(), graph_inputs.end(), name);
    if (found == graph_inputs.end()) return std::nullopt;
    const auto position = std::to_string(found - graph_inputs.begin());
    inputs.push_back(ReadOnnxTensorFile((data_set / ("input_" + position + ".pb")).string()));
  }
  // Trailing omitted optional inputs are as if absent.
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  return inputs;
}

// The call for `model`'s node on `inputs`, or nullopt when it does not map.
std::optional<OnnxCall> MapNode(const OnnxModel& model, std::vector<Ref<Tensor>> inputs) {
  if (model.graph.nodes.size() != 1) return std::nullopt;
  const OnnxNode& node = model.graph.nodes.front();
  if (!node.domain.empty() && node.domain != "ai.onnx") return std::nullopt;
  const auto mapper = Mappers().find(node.op_type);
  if (mapper == Mappers().end()) return std::nullopt;
  NodeContext context{node, model.OpsetVersion(), std::move(inputs)};
  try {
    if (context.input_count() == 0) return std::nullopt;
    return mapper->second(context);
  } catch (const NotMapped&) {
    return std::nullopt;
  }
}

struct NodeCase {
  std::string name;  // the directory's name without "test_"
  std::filesystem::path directory;
};

void PrintTo(const NodeCase& node_case, std::ostream* out) {
  *out << node_case.name;
}

// Every node test that maps, judged on its first data set. A directory that
// cannot be read does not map (MapsEnoughCases notices if many do not).
const std::vector<NodeCase>& MappedCases() {
  static const std::vector<NodeCase> cases = [] {
    std::vector<NodeCase> found;
    std::error_code error;
    if (!std::filesystem::is_directory(kDataDirectory, error)) return found;
    std::vector<std::filesystem::path> directories;
    for (const auto& entry : std::filesystem::directory_iterator(kDataDirectory, error)) {
      if (entry.path().filename().string().starts_with("test_")) directories.push_back(entry);
    }
    std::sort(directories.begin(), directories.end());
    for (const std::filesystem::path& directory : directories) {
      // The test data holds bfloat16 values as uint16 tensors (NumPy has no
      // bfloat16), which now read as relay-vm's uint16: not the model's type.
      if (directory.filename().string().find("BFLOAT16") != std::string::npos) continue;
      try {
        const OnnxModel model = ReadOnnxModelFile((directory / "model.onnx").string());
        if (model.graph.nodes.size() != 1 || !Mappers().contains(model.graph.nodes[0].op_type)) {
          continue;
        }
        const std::vector<std::filesystem::path> data_sets = DataSets(directory);
        if (data_sets.empty()) continue;
        std::optional<std::vector<Ref<Tensor>>> inputs = ReadNodeInputs(model, data_sets.front());
        if (!inputs || !MapNode(model, std::move(*inputs))) continue;
        found.push_back({directory.filename().string().substr(5), directory});
      } catch (const Error&) {
        continue;  // e.g. a string or uint32 tensor: relay-vm has no such dtype
      }
    }
    return found;
  }();
  return cases;
}

std::string NodeCaseName(const ::testing::TestParamInfo<NodeCase>& info) {
  return info.param.name;
}

const KnownKernelBug* FindKnownKernelBug(const std::string& name) {
  for (const KnownKernelBug& bug : kKnownKernelBugs) {
    if (name == bug.test_name) return &bug;
  }
  return nullptr;
}

// ---- running a node test ---------------------------------------------------------------

// On the fixture device (results back on the host); arange reads its
// bounds' values for its shape, so they stay on the host.
std::vector<Ref<Tensor>> RunCall(const OnnxCall& call) {
  const std::vector<Ref<Tensor>> inputs =
      call.operator_name == "arange" ? call.inputs : OnFixtureDevice(call.inputs);
  switch (call.form) {
    case CallForm::kTensors:
      return {OnHost(RunOperator(call.operator_name, inputs, call.attributes))};
    case CallForm::kTupleInput:
      return {OnHost(RunOperatorOnTuple(call.operator_name, inputs, call.attributes))};
    case CallForm::kTupleResult:
      return OnHost(RunOperatorWithTupleResult(call.operator_name, inputs, call.attributes));
  }
  return {};
}

void ExpectMatches(const Tensor& expected, const Tensor& actual, const OnnxCall& call) {
  if (call.compare_dtype) {
    ASSERT_EQ(DTypeName(actual.dtype()), DTypeName(expected.dtype()));
  } else {
    ASSERT_EQ(IsFloat(actual.dtype()), IsFloat(expected.dtype()));
  }
  ASSERT_EQ(ShapeToString(actual.shape()), ShapeToString(expected.shape()));
  if (!FixtureDeviceComputes()) return;
  const double tolerance = ToleranceFor(expected.dtype(), call.accumulates);
  EXPECT_EQ(CompareValues(expected, actual, tolerance), 0)
      << "mismatching elements of " << expected.element_count() << " for " << call.operator_name;
}

class OnnxNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(OnnxNodeTest, MatchesOnnxReference) {
  const NodeCase& node_case = GetParam();
  RELAY_SKIP_WITHOUT_FIXTURE_DEVICE();
  if (const KnownKernelBug* bug = FindKnownKernelBug(node_case.name)) {
    GTEST_SKIP() << "known kernel bug: " << bug->reason;
  }
  try {
    const OnnxModel model = ReadOnnxModelFile((node_case.directory / "model.onnx").string());
    const std::vector<std::filesystem::path> data_sets = DataSets(node_case.directory);
    ASSERT_FALSE(data_sets.empty());
    for (const std::filesystem::path& data_set : data_sets) {
      SCOPED_TRACE(data_set.string());
      std::optional<std::vector<Ref<Tensor>>> inputs = ReadNodeInputs(model, data_set);
      ASSERT_TRUE(inputs.has_value());
      const std::optional<OnnxCall> call = MapNode(model, std::move(*inputs));
      ASSERT_TRUE(call.has_value()) << "data set does not map like the first one";

      std::vector<Ref<Tensor>> actual;
      try {
        actual = RunCall(*call);
      } catch (const Error& error) {
        const bool listed =
            std::find(kOperatorsWithoutCpuKernel.begin(), kOperatorsWithoutCpuKernel.end(),
                      call->operator_name) != kOperatorsWithoutCpuKernel.end();
        if (listed && error.message().find("has no CPU kernel yet") != std::string::npos) {
          GTEST_SKIP() << error.what();
        }
        throw;
      }

      const size_t compared = call->compare_all_outputs ? model.graph.outputs.size() : 1;
      ASSERT_GE(actual.size(), compared) << call->operator_name << " returned too few fields";
      for (size_t output = 0; output < compared; ++output) {
        SCOPED_TRACE("output " + std::to_string(output));
        const Ref<Tensor> expected =
            ReadOnnxTensorFile((data_set / ("output_" + std::to_string(output) + ".pb")).string());
        ASSERT_TRUE(actual[output]);
        ExpectMatches(*expected, *actual[output], *call);
      }
    }
  } catch (const Error& error) {
    FAIL() << "threw: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxNodeTest, ::testing::ValuesIn(MappedCases()), NodeCaseName);
// Without the data there are no cases; OnnxNodeTestdata says why.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxNodeTest);

TEST(OnnxNodeTestdata, IsInstalled) {
  EXPECT_TRUE(std::filesystem::is_directory(kDataDirectory))
      << kDataDirectory << " does not exist: install Debian's libonnx-testdata package "
      << "(tools/install-deps.sh does)";
}

TEST(OnnxNodeTestdata, MapsEnoughCases) {
  // The count reached when the table was written; fewer means the reader or
  // the data broke, not that the kernels did.
  constexpr size_t kMappedCases = 341;
  EXPECT_GE(MappedCases().size(), kMappedCases);
}

}  // namespace
}  // namespace relay::kernels
