// Data movement, shapes and constants: Reshape, Transpose, Concat, Gather,
// Expand, Cast, Constant, Shape, Range, Tile, DepthToSpace and the like.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "compiler/frontends/onnx/onnx_tensors.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

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

}  // namespace

void AddShapeConverters(std::map<std::string, Converter>& converters) {
  converters["Expand"] = ConvertExpand;
  converters["ConstantOfShape"] = ConvertConstantOfShape;
  converters["Tile"] = ConvertTile;
  converters["Range"] = ConvertRange;
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
  converters["DepthToSpace"] = ConvertDepthToSpace;
  converters["SpaceToDepth"] = ConvertSpaceToDepth;
}

}  // namespace relay::onnx_import
