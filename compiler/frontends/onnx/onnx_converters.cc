#include "compiler/frontends/onnx/onnx_converters.h"

#include <onnx/onnx_pb.h>

#include <cmath>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

const std::map<std::string, Converter>& Table() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> converters;
    AddElementwiseConverters(converters);
    AddProductConverters(converters);
    AddShapeConverters(converters);
    AddSliceConverters(converters);
    AddReductionConverters(converters);
    AddResizeConverters(converters);
    AddRecurrentConverters(converters);
    AddControlFlowConverters(converters);
    AddIndexConverters(converters);
    AddNormalizationConverters(converters);
    AddEinsumConverter(converters);
    AddLossConverters(converters);
    AddSignalConverters(converters);
    AddScatterConverters(converters);
    AddQuantizationConverters(converters);
    AddVisionConverters(converters);
    AddFourierConverters(converters);
    AddLinearAlgebraConverters(converters);
    AddSelectionConverters(converters);
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
