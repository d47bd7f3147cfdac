#include "serve/model_signature.h"

#include <algorithm>

#include "relay/error.h"

namespace relay::serve {

namespace {

struct DatatypeName {
  DType dtype;
  std::string_view name;
};

constexpr DatatypeName kDatatypeNames[] = {
    {DType::kBool, "BOOL"},     {DType::kInt8, "INT8"},     {DType::kInt16, "INT16"},
    {DType::kInt32, "INT32"},   {DType::kInt64, "INT64"},   {DType::kUInt8, "UINT8"},
    {DType::kUInt16, "UINT16"}, {DType::kUInt32, "UINT32"}, {DType::kUInt64, "UINT64"},
    {DType::kFloat16, "FP16"},  {DType::kFloat32, "FP32"},  {DType::kFloat64, "FP64"},
};
static_assert(std::size(kDatatypeNames) == kDTypeCount, "name every dtype in the protocol");

bool LeadingDimensionIsDynamic(const TensorSpec& spec) {
  return !spec.shape.empty() && spec.shape.front() == -1;
}

}  // namespace

std::string_view ProtocolDatatype(DType dtype) {
  for (const DatatypeName& entry : kDatatypeNames) {
    if (entry.dtype == dtype) return entry.name;
  }
  throw Error(ErrorKind::kInternal, "no protocol datatype for a dtype");
}

std::optional<DType> ParseProtocolDatatype(std::string_view name) {
  for (const DatatypeName& entry : kDatatypeNames) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

ModelSignature DescribeModel(const Executable& executable, std::string name) {
  FunctionInfo main = executable.function("main");
  ModelSignature signature;
  signature.name = std::move(name);
  const std::map<std::string, std::string>& onnx_names = executable.onnx_input_names();
  for (const ParameterInfo& parameter : main.parameters) {
    if (!parameter.is_tensor) {
      throw Error(ErrorKind::kUsage, "cannot serve @main: parameter %" + parameter.name +
                                         " has type " + parameter.type +
                                         ", and the inference protocol carries tensors only");
    }
    auto onnx_name = onnx_names.find(parameter.name);
    signature.inputs.push_back({onnx_name != onnx_names.end() ? onnx_name->second : parameter.name,
                                parameter.dtype, parameter.shape});
  }
  for (const ParameterInfo& result : main.results) {
    if (!result.is_tensor) {
      throw Error(ErrorKind::kUsage, "cannot serve @main: it returns " + result.type +
                                         ", and the inference protocol carries tensors only "
                                         "(a tensor or a tuple of tensors)");
    }
    signature.outputs.push_back({result.name, result.dtype, result.shape});
  }
  signature.batchable =
      !signature.inputs.empty() &&
      std::all_of(signature.inputs.begin(), signature.inputs.end(), LeadingDimensionIsDynamic) &&
      std::all_of(signature.outputs.begin(), signature.outputs.end(), LeadingDimensionIsDynamic);
  return signature;
}

}  // namespace relay::serve
