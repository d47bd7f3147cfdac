// Affine quantisation: QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear, written out elementwise in float32 (rounding half
// to even, as round does, and saturating to the integer type's range),
// per tensor or per axis.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

std::string ToFloat32(const std::string& expr) {
  return Call("cast", {expr}, {"dtype=\"float32\""});
}

std::string DTypeAttribute(DType dtype) {
  return "dtype=\"" + std::string(DTypeName(dtype)) + "\"";
}

// Input `index` (a scale or zero point: a scalar, or a vector along the
// data's `axis`) in a shape that broadcasts against data of rank `rank`.
std::string AlongAxis(ConvertContext& context, size_t index, size_t rank) {
  const OnnxValue& parameter = context.Input(index);
  if (!parameter.shape) Refuse("input " + std::to_string(index) + " has an unknown rank");
  if (parameter.shape->empty()) return context.Tensor(index);
  if (parameter.shape->size() != 1)
    Refuse("input " + std::to_string(index) + " must be a scalar or a vector");
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 1), rank);
  std::vector<int64_t> shape(rank, 1);
  shape[size_t(axis)] = -1;
  return Call("reshape", {context.Tensor(index)}, {"newshape=" + IntList(shape)});
}

// round(x) + zero point, saturated to `dtype`'s range and cast to it.
std::string Saturated(const std::string& rounded, DType dtype) {
  const bool is_unsigned = dtype == DType::kUInt8;
  return Call("cast",
              {Call("clip", {rounded},
                    {"a_min=" + FloatText(is_unsigned ? 0 : -128),
                     "a_max=" + FloatText(is_unsigned ? 255 : 127)})},
              {DTypeAttribute(dtype)});
}

DType QuantizedType(ConvertContext& context) {
  const DType dtype = context.HasInput(2) ? context.Input(2).dtype : DType::kUInt8;
  if (dtype != DType::kUInt8 && dtype != DType::kInt8)
    Refuse("quantising to " + std::string(DTypeName(dtype)) + " (uint8 and int8 are supported)");
  return dtype;
}

// y = saturate(round(x / scale) + zero_point).
std::vector<OnnxValue> ConvertQuantizeLinear(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const DType dtype = QuantizedType(context);
  const OnnxValue& x = context.Input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt32)
    Refuse("quantising " + std::string(DTypeName(x.dtype)) + " data");
  std::string value = Call(
      "round", {Call("divide",
                     {x.dtype == DType::kFloat32 ? context.Tensor(0) : ToFloat32(context.Tensor(0)),
                      AlongAxis(context, 1, rank)})});
  if (context.HasInput(2)) value = Call("add", {value, ToFloat32(AlongAxis(context, 2, rank))});
  OnnxValue result = Shaped(Saturated(value, dtype), x.shape);
  result.dtype = dtype;
  return {result};
}

// y = (x - zero_point) * scale.
std::vector<OnnxValue> ConvertDequantizeLinear(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const OnnxValue& x = context.Input(0);
  if (x.dtype != DType::kUInt8 && x.dtype != DType::kInt8 && x.dtype != DType::kInt32)
    Refuse("dequantising " + std::string(DTypeName(x.dtype)) + " data");
  if (context.Input(1).dtype != DType::kFloat32) Refuse("a scale other than float32");
  std::string value = ToFloat32(context.Tensor(0));
  if (context.HasInput(2))
    value = Call("subtract", {value, ToFloat32(AlongAxis(context, 2, rank))});
  OnnxValue result = Shaped(Call("multiply", {value, AlongAxis(context, 1, rank)}), x.shape);
  result.dtype = DType::kFloat32;
  return {result};
}

// The scale and zero point that map [min(x, 0), max(x, 0)] onto uint8's
// range, and x quantised by them.
std::vector<OnnxValue> ConvertDynamicQuantizeLinear(ConvertContext& context) {
  const OnnxValue& x = context.Input(0);
  if (x.dtype != DType::kFloat32) Refuse("quantising " + std::string(DTypeName(x.dtype)) + " data");
  const std::string data = context.Tensor(0);
  const std::string low = Call("minimum", {Call("min", {data}), FloatText(0)});
  const std::string high = Call("maximum", {Call("max", {data}), FloatText(0)});
  const std::string scale =
      context.Bind(Call("divide", {Call("subtract", {high, low}), FloatText(255)}));
  const std::string zero_point =
      context.Bind(Call("round", {Call("clip", {Call("negative", {Call("divide", {low, scale})})},
                                       {"a_min=" + FloatText(0), "a_max=" + FloatText(255)})}));
  OnnxValue quantised =
      Shaped(Saturated(Call("add", {Call("round", {Call("divide", {data, scale})}), zero_point}),
                       DType::kUInt8),
             x.shape);
  quantised.dtype = DType::kUInt8;
  OnnxValue scale_value = Shaped(scale, std::vector<int64_t>{});
  OnnxValue zero_point_value =
      Shaped(Call("cast", {zero_point}, {DTypeAttribute(DType::kUInt8)}), std::vector<int64_t>{});
  zero_point_value.dtype = DType::kUInt8;
  return {quantised, scale_value, zero_point_value};
}

}  // namespace

void AddQuantizationConverters(std::map<std::string, Converter>& table) {
  table["QuantizeLinear"] = ConvertQuantizeLinear;
  table["DequantizeLinear"] = ConvertDequantizeLinear;
  table["DynamicQuantizeLinear"] = ConvertDynamicQuantizeLinear;
}

}  // namespace relay::onnx_import
