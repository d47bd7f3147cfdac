#include "compiler/frontends/onnx/onnx_converter_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace relay::onnx_import {

[[noreturn]] void Refuse(const std::string& reason) {
  throw Unsupported{reason};
}

std::string IntList(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t index = 0; index < values.size(); ++index)
    text += (index ? ", " : "") + std::to_string(values[index]);
  return text + "]";
}

// A float literal; an infinity becomes float32's largest magnitude (for
// clip bounds), and NaN has no literal.
std::string FloatText(double value) {
  if (std::isnan(value)) Refuse("a NaN attribute or constant");
  if (std::isinf(value)) return value > 0 ? "3.4028235e38f" : "-3.4028235e38f";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::string Float64Text(double value) {
  if (std::isnan(value)) Refuse("a NaN attribute or constant");
  if (std::isinf(value))
    return value > 0 ? "1.7976931348623157e308f64" : "-1.7976931348623157e308f64";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f64";
}

// op(args..., attributes...) in Relay's text.
std::string Call(const std::string& op, const std::vector<std::string>& args,
                 const std::vector<std::string>& attributes) {
  std::string text = op + "(";
  bool first = true;
  for (const std::string& part : args) {
    text += (first ? "" : ", ") + part;
    first = false;
  }
  for (const std::string& part : attributes) {
    text += (first ? "" : ", ") + part;
    first = false;
  }
  return text + ")";
}

OnnxValue Result(std::string expr) {
  OnnxValue value;
  value.expr = std::move(expr);
  return value;
}

OnnxValue ConstantValue(Ref<Tensor> tensor) {
  OnnxValue value;
  value.dtype = tensor->dtype();
  value.shape = std::vector<int64_t>(tensor->shape().begin(), tensor->shape().end());
  value.constant = std::move(tensor);
  return value;
}

OnnxValue Shaped(std::string expr, std::optional<std::vector<int64_t>> shape) {
  OnnxValue value;
  value.expr = std::move(expr);
  value.shape = std::move(shape);
  return value;
}

// NumPy's broadcast of the inputs' shapes (-1 where a dimension is only
// known at run time), or nothing when a rank is unknown.
std::optional<std::vector<int64_t>> BroadcastOfInputs(const ConvertContext& context) {
  std::vector<int64_t> result;
  for (size_t index = 0; index < context.input_count(); ++index) {
    if (!context.HasInput(index)) continue;
    const OnnxValue& value = context.Input(index);
    if (!value.shape) return std::nullopt;
    std::vector<int64_t> shape = *value.shape;
    if (shape.size() > result.size())
      result.insert(result.begin(), shape.size() - result.size(), 1);
    shape.insert(shape.begin(), result.size() - shape.size(), 1);
    for (size_t axis = 0; axis < result.size(); ++axis) {
      if (result[axis] == 1)
        result[axis] = shape[axis];
      else if (shape[axis] != 1 && result[axis] < 0)
        result[axis] = shape[axis];
    }
  }
  return result;
}

// The known rank of input `index`, or Unsupported.
size_t RankOf(const ConvertContext& context, size_t index) {
  const OnnxValue& value = context.Input(index);
  if (!value.shape) Refuse("input " + std::to_string(index) + " has an unknown rank");
  return value.shape->size();
}

// The known shape of input `index` (every dimension known), or Unsupported.
std::vector<int64_t> StaticShapeOf(const ConvertContext& context, size_t index) {
  const OnnxValue& value = context.Input(index);
  if (!value.shape) Refuse("input " + std::to_string(index) + " has an unknown shape");
  for (int64_t dim : *value.shape) {
    if (dim < 0)
      Refuse("input " + std::to_string(index) + " has a dimension only known at run time");
  }
  return *value.shape;
}

// A constant input's integer values.
std::vector<int64_t> IntValues(const Tensor& tensor) {
  std::vector<int64_t> values;
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    switch (tensor.dtype()) {
      case DType::kInt64:
        values.push_back(tensor.data<int64_t>()[index]);
        break;
      case DType::kInt32:
        values.push_back(tensor.data<int32_t>()[index]);
        break;
      default:
        Refuse("an integer tensor was expected, got " + std::string(DTypeName(tensor.dtype())));
    }
  }
  return values;
}

double FloatValue(const Tensor& tensor) {
  if (tensor.element_count() != 1) Refuse("a scalar was expected");
  switch (tensor.dtype()) {
    case DType::kFloat32:
      return tensor.data<float>()[0];
    case DType::kFloat64:
      return tensor.data<double>()[0];
    case DType::kInt64:
      return double(tensor.data<int64_t>()[0]);
    case DType::kInt32:
      return double(tensor.data<int32_t>()[0]);
    case DType::kInt16:
      return double(tensor.data<int16_t>()[0]);
    case DType::kInt8:
      return double(tensor.data<int8_t>()[0]);
    case DType::kUInt8:
      return double(tensor.data<uint8_t>()[0]);
    case DType::kFloat16:
      return double(static_cast<float>(tensor.data<Float16>()[0]));
    default:
      Refuse("a numeric scalar was expected");
  }
}

std::string LiteralOf(DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat32:
      return FloatText(value);
    case DType::kFloat64:
      return Float64Text(value);
    case DType::kInt64:
      return std::to_string(int64_t(value)) + "i64";
    case DType::kInt32:
      return std::to_string(int64_t(value));
    case DType::kBool:
      Refuse("a bool value where a number was expected");
    default:
      return Call("cast", {std::to_string(int64_t(value)) + "i64"},
                  {"dtype=\"" + std::string(DTypeName(dtype)) + "\""});
  }
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t product = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(product, dim, &product))
      Refuse("a shape of more elements than int64 holds");
  }
  return product;
}

int64_t NormalizeAxis(int64_t axis, size_t rank) {
  const int64_t normalized = axis < 0 ? axis + int64_t(rank) : axis;
  if (normalized < 0 || normalized >= int64_t(rank)) {
    Refuse("axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank));
  }
  return normalized;
}

bool IsFloatDType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16;
}

// The node's axes, from its `axes` attribute (before `input_opset`) or its
// input `input` (from it); nothing when absent.
std::optional<std::vector<int64_t>> AxesOf(ConvertContext& context, int64_t input_opset,
                                           size_t input) {
  if (context.opset() < input_opset) return context.IntsAttribute("axes");
  if (!context.HasInput(input)) return std::nullopt;
  return IntValues(*context.Constant(input));
}

// A float literal of input 0's dtype.
std::string Literal(const ConvertContext& context, double value) {
  const DType dtype = context.Input(0).dtype;
  if (dtype == DType::kFloat64) return Float64Text(value);
  if (dtype != DType::kFloat32) Refuse("only float32 and float64 data are supported");
  return FloatText(value);
}

std::string Where(const std::string& condition, const std::string& yes, const std::string& no) {
  return Call("where", {condition, yes, no});
}

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  if (shape.empty()) return std::string(DTypeName(dtype));
  std::string text = "Tensor[(";
  for (size_t index = 0; index < shape.size(); ++index)
    text +=
        (index ? ", " : "") + (shape[index] < 0 ? std::string("?") : std::to_string(shape[index]));
  return text + (shape.size() == 1 ? ",), " : "), ") + std::string(DTypeName(dtype)) + "]";
}

bool AllKnown(const ShapeEntries& entries) {
  return std::all_of(entries.known.begin(), entries.known.end(),
                     [](int64_t dim) { return dim >= 0; });
}

std::string ZeroLiteral(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "0f";
    case DType::kFloat64:
      return "0f64";
    case DType::kInt64:
      return "0i64";
    case DType::kInt32:
      return "0";
    case DType::kBool:
      return "False";
    default:
      Refuse("data of " + std::string(DTypeName(dtype)) + " with a shape only known at run time");
  }
}

std::string Filled(const ShapeEntries& entries, const std::string& fill, DType dtype) {
  const size_t rank = entries.known.size();
  const std::string dtype_text = "dtype=\"" + std::string(DTypeName(dtype)) + "\"";
  std::vector<int64_t> known_shape;
  for (int64_t dim : entries.known) known_shape.push_back(dim >= 0 ? dim : 1);
  std::string result = Call("full", {fill}, {"shape=" + IntList(known_shape), dtype_text});
  for (size_t axis = 0; axis < rank; ++axis) {
    if (entries.known[axis] >= 0) continue;
    std::vector<int64_t> along(rank, 1);
    along[axis] = -1;
    const std::string zeros = Call(
        "cast",
        {Call(
            "multiply",
            {Call("arange", {"0i64", entries.exprs[axis], "1i64"}, {"dtype=\"int64\""}), "0i64"})},
        {dtype_text});
    result = Call(dtype == DType::kBool ? "logical_or" : "add",
                  {result, Call("reshape", {zeros}, {"newshape=" + IntList(along)})});
  }
  return result;
}

std::string Extent(const std::string& tensor, const std::optional<std::vector<int64_t>>& shape,
                   size_t axis) {
  if (shape && axis < shape->size() && (*shape)[axis] >= 0)
    return std::to_string((*shape)[axis]) + "i64";
  return Call("take", {Call("shape_of", {tensor}, {"dtype=\"int64\""}), std::to_string(axis)},
              {"axis=0"});
}

std::string PositionsAlong(const std::string& extent, size_t axis, size_t rank) {
  const std::string positions = Call("arange", {"0i64", extent, "1i64"}, {"dtype=\"int64\""});
  if (rank == 1) return positions;
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = -1;
  return Call("reshape", {positions}, {"newshape=" + IntList(shape)});
}

std::string AsInt64(const std::string& expr, DType dtype) {
  return dtype == DType::kInt64 ? expr : Call("cast", {expr}, {"dtype=\"int64\""});
}

std::string ReshapedTo(const std::string& data, const ShapeEntries& entries) {
  if (std::count(entries.known.begin(), entries.known.end(), -1) <= 1)
    return Call("reshape", {data}, {"newshape=" + IntList(entries.known)});
  return Call("reshape_like", {data, Filled(entries, "False", DType::kBool)});
}

std::string TupleRows(ConvertContext& context, const std::string& tuples,
                      const std::vector<int64_t>& shape, size_t tuple_rank, size_t batch,
                      size_t depth) {
  std::string row = "0i64";
  // The batch position, then the tuple's entries, as mixed-radix digits.
  for (size_t axis = 0; axis < batch; ++axis) {
    const std::string position =
        PositionsAlong(std::to_string(shape[axis]) + "i64", axis, tuple_rank);
    row = Call("add", {Call("multiply", {row, std::to_string(shape[axis]) + "i64"}), position});
  }
  for (size_t axis = batch; axis < batch + depth; ++axis) {
    const std::string extent = std::to_string(shape[axis]) + "i64";
    const std::string entry = context.Bind(Call("take", {tuples, std::to_string(axis - batch)},
                                                {"axis=" + std::to_string(tuple_rank)}));
    const std::string wrapped =
        Where(Call("less", {entry, "0i64"}), Call("add", {entry, extent}), entry);
    row = Call("add", {Call("multiply", {row, extent}), wrapped});
  }
  return row;
}

}  // namespace relay::onnx_import
