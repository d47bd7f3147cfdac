#include "serve/inference_protocol.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::serve {

namespace {

using nlohmann::json;

[[noreturn]] void BadRequest(const std::string& message) {
  throw RequestError(400, message);
}

// `value` as JSON text for a message; invalid UTF-8 (from a URL, say)
// replaced rather than thrown on.
std::string Text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(shape[axis]);
  }
  return text + "]";
}

const json& Member(const json& object, const char* key, const std::string& where) {
  auto found = object.find(key);
  if (found == object.end()) BadRequest(where + " has no \"" + key + "\"");
  return *found;
}

// Writes the leaves of `data` (nested arrays of elements, or one flat
// array; CountLeaves of them) into `out`, checking each with `store`.
int64_t CountLeaves(const json& data) {
  int64_t leaves = 0;
  for (const json& element : data) leaves += element.is_array() ? CountLeaves(element) : 1;
  return leaves;
}

template <typename T, typename Store>
void StoreElements(const json& data, T* out, int64_t& written, const Store& store,
                   const std::string& where) {
  for (const json& element : data) {
    if (element.is_array()) {
      StoreElements(element, out, written, store, where);
      continue;
    }
    if (!store(element, out[written])) {
      BadRequest(where + ": element " + std::to_string(written) + " (" + Text(element) +
                 ") is not a valid " + std::string(DTypeName(DTypeOf<T>().value())));
    }
    ++written;
  }
}

template <typename T>
bool StoreElement(const json& element, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!element.is_boolean()) return false;
    out = element.get<bool>();
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>) {
    if (!element.is_number()) return false;
    double value = element.get<double>();
    if constexpr (std::is_same_v<T, Float16>) {
      out = Float16(static_cast<float>(value));
    } else {
      out = static_cast<T>(value);
    }
  } else if (element.is_number_unsigned()) {
    uint64_t value = element.get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(value);
  } else if (element.is_number_integer()) {
    int64_t value = element.get<int64_t>();
    if (value < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (value > 0 &&
         static_cast<uint64_t>(value) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
      return false;
    out = static_cast<T>(value);
  } else {
    return false;
  }
  return true;
}

Ref<Tensor> ParseInput(const json& input, const TensorSpec& spec, const std::string& where) {
  const json& datatype = Member(input, "datatype", where);
  if (!datatype.is_string()) BadRequest(where + ": \"datatype\" must be a string");
  if (datatype.get_ref<const std::string&>() != ProtocolDatatype(spec.dtype)) {
    BadRequest(where + " is " + std::string(ProtocolDatatype(spec.dtype)) + ", got datatype " +
               Text(datatype));
  }
  const json& shape_json = Member(input, "shape", where);
  if (!shape_json.is_array()) BadRequest(where + ": \"shape\" must be an array of extents");
  const json& data = Member(input, "data", where);
  if (!data.is_array()) BadRequest(where + ": \"data\" must be an array");
  auto shape_error = [&](const std::string& got) {
    BadRequest(where + " has shape " + ShapeText(spec.shape) + " (-1: any extent), got " + got);
  };
  if (shape_json.size() != spec.shape.size()) shape_error(Text(shape_json));
  Shape shape;
  int64_t count = 1;
  for (size_t axis = 0; axis < spec.shape.size(); ++axis) {
    const json& extent_json = shape_json[axis];
    if (!extent_json.is_number_integer() || extent_json.get<int64_t>() < 0)
      shape_error(Text(shape_json));
    int64_t extent = extent_json.get<int64_t>();
    if (spec.shape[axis] != -1 && extent != spec.shape[axis]) shape_error(Text(shape_json));
    shape.push_back(extent);
    if (extent > 0 && count > std::numeric_limits<int64_t>::max() / extent)
      BadRequest(where + ": shape " + Text(shape_json) + " holds too many elements");
    count *= extent;
  }
  int64_t leaves = CountLeaves(data);
  if (leaves != count) {
    BadRequest(where + ": shape " + Text(shape_json) + " holds " + std::to_string(count) +
               " elements, \"data\" has " + std::to_string(leaves));
  }
  int64_t written = 0;
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, spec.dtype);
  switch (spec.dtype) {
#define RELAY_DTYPE(kind, name, ctype, size, code, numpy_kind)                       \
  case DType::kind:                                                                  \
    StoreElements(data, tensor->data<ctype>(), written, StoreElement<ctype>, where); \
    break;
#include "relay/dtypes.def"
#undef RELAY_DTYPE
  }
  return tensor;
}

// JSON with float32 numbers, so that an FP32 element prints as the
// shortest text that reads back as the same float (0.1, not the double
// 0.10000000149011612); FP64 and integers go through `json`.
using Float32Json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                         std::uint64_t, float>;

template <typename Json, typename T>
std::string ElementsText(const Tensor& tensor) {
  Json data = Json::array();
  const T* elements = tensor.data<T>();
  data.template get_ref<typename Json::array_t&>().reserve(
      static_cast<size_t>(tensor.element_count()));
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    if constexpr (std::is_same_v<T, Float16>) {
      data.push_back(static_cast<float>(elements[index]));
    } else {
      data.push_back(elements[index]);
    }
  }
  return data.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DataText(const Tensor& tensor) {
  switch (tensor.dtype()) {
    case DType::kFloat32:
      return ElementsText<Float32Json, float>(tensor);
    case DType::kFloat16:
      return ElementsText<Float32Json, Float16>(tensor);
    case DType::kFloat64:
      return ElementsText<json, double>(tensor);
    case DType::kBool:
      return ElementsText<json, bool>(tensor);
    case DType::kInt8:
      return ElementsText<json, int8_t>(tensor);
    case DType::kInt16:
      return ElementsText<json, int16_t>(tensor);
    case DType::kInt32:
      return ElementsText<json, int32_t>(tensor);
    case DType::kInt64:
      return ElementsText<json, int64_t>(tensor);
    case DType::kUInt8:
      return ElementsText<json, uint8_t>(tensor);
  }
  throw Error(ErrorKind::kInternal, "a tensor of no known dtype");
}

json TensorMetadata(const TensorSpec& spec) {
  return {{"name", spec.name}, {"datatype", ProtocolDatatype(spec.dtype)}, {"shape", spec.shape}};
}

}  // namespace

InferenceRequest ParseInferenceRequest(std::string_view body, const ModelSignature& signature) {
  json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) BadRequest("the request body is not valid JSON");
  if (!document.is_object()) BadRequest("the request body must be a JSON object");
  InferenceRequest request;
  if (auto id = document.find("id"); id != document.end()) {
    if (!id->is_string()) BadRequest("\"id\" must be a string");
    request.id = id->get<std::string>();
  }
  const json& inputs = Member(document, "inputs", "the request");
  if (!inputs.is_array()) BadRequest("\"inputs\" must be an array");
  request.inputs.resize(signature.inputs.size());
  for (const json& input : inputs) {
    if (!input.is_object()) BadRequest("each of \"inputs\" must be an object");
    const json& name = Member(input, "name", "an input");
    if (!name.is_string()) BadRequest("an input's \"name\" must be a string");
    const std::string& input_name = name.get_ref<const std::string&>();
    size_t index = 0;
    while (index < signature.inputs.size() && signature.inputs[index].name != input_name) ++index;
    if (index == signature.inputs.size()) {
      std::string known;
      for (const TensorSpec& spec : signature.inputs)
        known += (known.empty() ? "" : ", ") + spec.name;
      BadRequest("model '" + signature.name + "' has no input '" + input_name +
                 "' (its inputs: " + known + ")");
    }
    if (request.inputs[index]) BadRequest("input '" + input_name + "' is given twice");
    request.inputs[index] =
        ParseInput(input, signature.inputs[index], "input '" + input_name + "'");
  }
  for (size_t index = 0; index < signature.inputs.size(); ++index) {
    if (!request.inputs[index])
      BadRequest("input '" + signature.inputs[index].name + "' is missing");
  }
  if (auto outputs = document.find("outputs"); outputs != document.end()) {
    if (!outputs->is_array()) BadRequest("\"outputs\" must be an array");
    for (const json& output : *outputs) {
      if (!output.is_object()) BadRequest("each of \"outputs\" must be an object");
      const json& name = Member(output, "name", "a requested output");
      size_t index = 0;
      while (index < signature.outputs.size() &&
             !(name.is_string() &&
               signature.outputs[index].name == name.get_ref<const std::string&>()))
        ++index;
      if (index == signature.outputs.size())
        BadRequest("model '" + signature.name + "' has no output " + Text(name));
      request.outputs.push_back(index);
    }
  }
  if (request.outputs.empty()) {
    for (size_t index = 0; index < signature.outputs.size(); ++index)
      request.outputs.push_back(index);
  }
  return request;
}

std::string EncodeInferenceResponse(const ModelSignature& signature,
                                    const InferenceRequest& request,
                                    const std::vector<Ref<Tensor>>& outputs) {
  // Written piecewise: each output's data goes through the JSON type that
  // prints its dtype best (DataText), spliced into the envelope.
  json head = {{"model_name", signature.name}, {"model_version", "1"}};
  if (request.id) head["id"] = *request.id;
  std::string body = Text(head);
  body.pop_back();  // the closing brace: the outputs follow
  body += ",\"outputs\":[";
  for (size_t position = 0; position < request.outputs.size(); ++position) {
    size_t index = request.outputs[position];
    const Tensor& tensor = *outputs.at(index);
    std::string output = Text(json{{"name", signature.outputs[index].name},
                                   {"datatype", ProtocolDatatype(tensor.dtype())},
                                   {"shape", tensor.shape()}});
    output.pop_back();
    body += (position > 0 ? "," : "") + output + ",\"data\":" + DataText(tensor) + "}";
  }
  return body + "]}";
}

std::string EncodeModelMetadata(const ModelSignature& signature) {
  json metadata = {{"name", signature.name}, {"versions", {"1"}}, {"platform", "relay-vm"}};
  json& inputs = metadata["inputs"] = json::array();
  for (const TensorSpec& spec : signature.inputs) inputs.push_back(TensorMetadata(spec));
  json& outputs = metadata["outputs"] = json::array();
  for (const TensorSpec& spec : signature.outputs) outputs.push_back(TensorMetadata(spec));
  return Text(metadata);
}

std::string EncodeModelReady(const ModelSignature& signature) {
  return Text(json{{"name", signature.name}, {"ready", true}});
}

std::string EncodeError(std::string_view message) {
  return Text(json{{"error", message}});
}

}  // namespace relay::serve
