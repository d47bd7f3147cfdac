// Signal-processing operators: the windows of opset 17 (HannWindow,
// HammingWindow, BlackmanWindow), written out over cos of an arange.
#include <onnx/onnx_pb.h>

#include <numbers>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "compiler/frontends/onnx/onnx_tensors.h"

namespace relay::onnx_import {

namespace {

// A window's value at each point from the phase 2 pi n / N there (float64
// expressions).
using WindowFormula = std::string (*)(const std::string& phase);

std::string CosOf(double multiple, const std::string& phase) {
  return Call("cos", {multiple == 1 ? phase : Call("multiply", {Float64Text(multiple), phase})});
}

// Hann: 0.5 - 0.5 cos(phase).
std::string Hann(const std::string& phase) {
  return Call("subtract",
              {Float64Text(0.5), Call("multiply", {Float64Text(0.5), CosOf(1, phase)})});
}

// Hamming, with ONNX's coefficients: 25/46 - 21/46 cos(phase).
std::string Hamming(const std::string& phase) {
  return Call("subtract", {Float64Text(25.0 / 46.0),
                           Call("multiply", {Float64Text(21.0 / 46.0), CosOf(1, phase)})});
}

// Blackman: 0.42 - 0.5 cos(phase) + 0.08 cos(2 phase).
std::string Blackman(const std::string& phase) {
  return Call(
      "add",
      {Call("subtract", {Float64Text(0.42), Call("multiply", {Float64Text(0.5), CosOf(1, phase)})}),
       Call("multiply", {Float64Text(0.08), CosOf(2, phase)})});
}

// A window of `size` points (input 0: an integer scalar, known while
// importing or only at run time), symmetric (N = size - 1) or periodic
// (N = size, the default), computed in float64 and given in
// `output_datatype` (float32 by default).
Converter Window(WindowFormula formula) {
  return [formula](ConvertContext& context) {
    const OnnxValue& size = context.Input(0);
    if (size.dtype != DType::kInt64 && size.dtype != DType::kInt32)
      Refuse("the size must be an int32 or int64 scalar");
    if (size.shape && !size.shape->empty()) Refuse("the size must be a scalar");
    const int64_t element_type = context.IntAttribute("output_datatype", onnx::TensorProto::FLOAT);
    const std::optional<DType> dtype = DTypeOfElementType(int32_t(element_type));
    if (!dtype || (!IsFloatDType(*dtype) && *dtype != DType::kInt64 && *dtype != DType::kInt32))
      Refuse("output_datatype " + ElementTypeName(int32_t(element_type)));
    const bool periodic = context.IntAttribute("periodic", 1) != 0;
    const std::string points =
        context.Bind(Call("cast", {context.Tensor(0)}, {"dtype=\"float64\""}));
    const std::string n =
        Call("arange", {Float64Text(0), points, Float64Text(1)}, {"dtype=\"float64\""});
    const std::string period = periodic ? points : Call("subtract", {points, Float64Text(1)});
    const std::string phase = context.Bind(
        Call("divide", {Call("multiply", {Float64Text(2 * std::numbers::pi), n}), period}));
    std::string window = formula(phase);
    if (*dtype != DType::kFloat64)
      window = Call("cast", {window}, {"dtype=\"" + std::string(DTypeName(*dtype)) + "\""});
    int64_t length = -1;
    if (size.constant) length = IntValues(*size.constant).at(0);
    OnnxValue value = Shaped(window, std::vector<int64_t>{length});
    value.dtype = *dtype;
    return std::vector<OnnxValue>{value};
  };
}

}  // namespace

void AddSignalConverters(std::map<std::string, Converter>& table) {
  table["HannWindow"] = Window(Hann);
  table["HammingWindow"] = Window(Hamming);
  table["BlackmanWindow"] = Window(Blackman);
}

}  // namespace relay::onnx_import
