#include "serve/inference_protocol.h"

#include <simdjson.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::serve {

namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

[[noreturn]] void BadRequest(const std::string& message) {
  throw RequestError(400, message);
}

// `value` as JSON text for a message; invalid UTF-8 (from a URL, say)
// replaced rather than thrown on.
std::string Text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A parsed request's element or array as (minified) JSON text, for a
// message.
std::string Text(dom::element value) {
  return simdjson::minify(value);
}
std::string Text(dom::array value) {
  return simdjson::minify(value);
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(shape[axis]);
  }
  return text + "]";
}

dom::element Member(dom::object object, const char* key, const std::string& where) {
  dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) BadRequest(where + " has no \"" + key + "\"");
  return value;
}

int64_t CountLeaves(dom::array data) {
  int64_t leaves = 0;
  for (dom::element element : data)
    leaves += element.is_array() ? CountLeaves(element.get_array().value_unsafe()) : 1;
  return leaves;
}

template <typename T>
bool StoreElement(dom::element element, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    return element.get(out) == simdjson::SUCCESS;
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>) {
    // get_double takes integers as well as decimals.
    double value = 0;
    if (element.get_double().get(value) != simdjson::SUCCESS) return false;
    if constexpr (std::is_same_v<T, Float16>) {
      out = Float16(static_cast<float>(value));
    } else {
      out = static_cast<T>(value);
    }
    return true;
  } else if constexpr (std::is_same_v<T, uint64_t>) {  // beyond int64's range
    return element.get_uint64().get(out) == simdjson::SUCCESS;
  } else {
    int64_t value = 0;
    if (element.get_int64().get(value) != simdjson::SUCCESS) return false;
    if (value < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        value > static_cast<int64_t>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(value);
    return true;
  }
}

// Writes the leaves of `data` (nested arrays of elements, or one flat
// array; CountLeaves of them) into `out`, checking each.
template <typename T>
void StoreElements(dom::array data, T* out, int64_t& written, const std::string& where) {
  for (dom::element element : data) {
    if (element.is_array()) {
      StoreElements(element.get_array().value_unsafe(), out, written, where);
      continue;
    }
    if (!StoreElement(element, out[written])) {
      BadRequest(where + ": element " + std::to_string(written) + " (" + Text(element) +
                 ") is not a valid " + std::string(DTypeName(DTypeOf<T>().value())));
    }
    ++written;
  }
}

// The bytes after a request's JSON (the binary data extension), taken by
// the inputs in turn.
struct BinarySection {
  std::string_view bytes;
  bool present = false;  // the request had an Inference-Header-Content-Length
};

// An input's "parameters": {"binary_data_size": N}, if it has one.
std::optional<int64_t> BinaryDataSize(dom::object object, const std::string& where) {
  dom::object parameters;
  if (object["parameters"].get(parameters) != simdjson::SUCCESS) return std::nullopt;
  dom::element size;
  if (parameters["binary_data_size"].get(size) != simdjson::SUCCESS) return std::nullopt;
  int64_t value = 0;
  if (size.get_int64().get(value) != simdjson::SUCCESS || value < 0)
    BadRequest(where + ": \"binary_data_size\" must be a byte count");
  return value;
}

// Whether "parameters" of `object` has `key` true.
bool Flag(dom::object object, const char* key) {
  dom::object parameters;
  bool value = false;
  return object["parameters"].get(parameters) == simdjson::SUCCESS &&
         parameters[key].get(value) == simdjson::SUCCESS && value;
}

Ref<Tensor> ParseInput(dom::object input, const TensorSpec& spec, const std::string& where,
                       BinarySection& binary) {
  std::string_view datatype;
  if (Member(input, "datatype", where).get(datatype) != simdjson::SUCCESS)
    BadRequest(where + ": \"datatype\" must be a string");
  if (datatype != ProtocolDatatype(spec.dtype)) {
    BadRequest(where + " is " + std::string(ProtocolDatatype(spec.dtype)) + ", got datatype \"" +
               std::string(datatype) + "\"");
  }
  dom::array shape_json;
  if (Member(input, "shape", where).get(shape_json) != simdjson::SUCCESS)
    BadRequest(where + ": \"shape\" must be an array of extents");
  std::optional<int64_t> binary_size = BinaryDataSize(input, where);
  dom::array data;
  if (binary_size) {
    if (!binary.present) {
      BadRequest(where +
                 " has \"binary_data_size\", but the request no "
                 "Inference-Header-Content-Length header");
    }
    dom::element ignored;
    if (input["data"].get(ignored) == simdjson::SUCCESS)
      BadRequest(where + " has both \"data\" and \"binary_data_size\"");
  } else if (Member(input, "data", where).get(data) != simdjson::SUCCESS) {
    BadRequest(where + ": \"data\" must be an array");
  }
  auto shape_error = [&] {
    BadRequest(where + " has shape " + ShapeText(spec.shape) + " (-1: any extent), got " +
               Text(shape_json));
  };
  if (shape_json.size() != spec.shape.size()) shape_error();
  Shape shape;
  int64_t count = 1;
  size_t axis = 0;
  for (dom::element extent_json : shape_json) {
    int64_t extent = 0;
    if (extent_json.get_int64().get(extent) != simdjson::SUCCESS || extent < 0) shape_error();
    if (spec.shape[axis] != -1 && extent != spec.shape[axis]) shape_error();
    shape.push_back(extent);
    if (extent > 0 && count > std::numeric_limits<int64_t>::max() / extent)
      BadRequest(where + ": shape " + Text(shape_json) + " holds too many elements");
    count *= extent;
    ++axis;
  }
  if (binary_size) {
    // Checked before allocating, so a huge shape with little data
    // allocates nothing.
    if (static_cast<uint64_t>(count) * DTypeSize(spec.dtype) !=
        static_cast<uint64_t>(*binary_size)) {
      BadRequest(where + ": shape " + Text(shape_json) + " holds " + std::to_string(count) +
                 " elements of " + std::to_string(DTypeSize(spec.dtype)) +
                 " bytes, \"binary_data_size\" is " + std::to_string(*binary_size));
    }
    if (static_cast<uint64_t>(*binary_size) > binary.bytes.size()) {
      BadRequest(where + ": " + std::to_string(*binary_size) + " bytes of binary data, " +
                 std::to_string(binary.bytes.size()) + " left in the body");
    }
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, spec.dtype);
    std::memcpy(tensor->host_data(), binary.bytes.data(), static_cast<size_t>(*binary_size));
    binary.bytes.remove_prefix(static_cast<size_t>(*binary_size));
    if (spec.dtype == DType::kBool) {
      // Any nonzero byte is true; stored as 1, the one true a bool holds.
      auto* bytes = static_cast<uint8_t*>(tensor->host_data());
      for (int64_t index = 0; index < count; ++index) bytes[index] = bytes[index] != 0;
    }
    return tensor;
  }
  // Counted before allocating, so a huge shape with little data allocates
  // nothing.
  int64_t leaves = CountLeaves(data);
  if (leaves != count) {
    BadRequest(where + ": shape " + Text(shape_json) + " holds " + std::to_string(count) +
               " elements, \"data\" has " + std::to_string(leaves));
  }
  int64_t written = 0;
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, spec.dtype);
  switch (spec.dtype) {
#define RELAY_DTYPE(kind, name, ctype, size, code, numpy_kind)  \
  case DType::kind:                                             \
    StoreElements(data, tensor->data<ctype>(), written, where); \
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
    case DType::kUInt16:
      return ElementsText<json, uint16_t>(tensor);
    case DType::kUInt32:
      return ElementsText<json, uint32_t>(tensor);
    case DType::kUInt64:
      return ElementsText<json, uint64_t>(tensor);
  }
  throw Error(ErrorKind::kInternal, "a tensor of no known dtype");
}

json TensorMetadata(const TensorSpec& spec) {
  return {{"name", spec.name}, {"datatype", ProtocolDatatype(spec.dtype)}, {"shape", spec.shape}};
}

}  // namespace

InferenceRequest ParseInferenceRequest(std::string_view body, const ModelSignature& signature,
                                       std::optional<size_t> json_length, size_t readable_after) {
  BinarySection binary;
  if (json_length) {
    if (*json_length > body.size()) {
      BadRequest("Inference-Header-Content-Length is " + std::to_string(*json_length) +
                 ", beyond the body's " + std::to_string(body.size()) + " bytes");
    }
    binary.bytes = body.substr(*json_length);
    binary.present = true;
    readable_after += body.size() - *json_length;
    body = body.substr(0, *json_length);
  }
  // One parser per thread keeps its buffers from request to request, for
  // bodies up to kKeptParserBytes; a larger body gets a parser of its own,
  // released with its buffers (about 14 times the body) once it is read.
  // The tensors are copied out of the parsed document, so nothing refers
  // to the parser afterwards.
  thread_local dom::parser kept_parser;
  std::optional<dom::parser> own_parser;
  dom::parser& parser = body.size() <= kKeptParserBytes ? kept_parser : own_parser.emplace();
  const bool parse_in_place = readable_after >= simdjson::SIMDJSON_PADDING;
  dom::element document;
  if (simdjson::error_code error =
          parser.parse(body.data(), body.size(), !parse_in_place).get(document)) {
    BadRequest(std::string("the request body is not valid JSON: ") +
               simdjson::error_message(error));
  }
  dom::object object;
  if (document.get(object) != simdjson::SUCCESS)
    BadRequest("the request body must be a JSON object");
  InferenceRequest request;
  if (dom::element id; object["id"].get(id) == simdjson::SUCCESS) {
    std::string_view text;
    if (id.get(text) != simdjson::SUCCESS) BadRequest("\"id\" must be a string");
    request.id = std::string(text);
  }
  dom::array inputs;
  if (Member(object, "inputs", "the request").get(inputs) != simdjson::SUCCESS)
    BadRequest("\"inputs\" must be an array");
  request.inputs.resize(signature.inputs.size());
  for (dom::element input_element : inputs) {
    dom::object input;
    if (input_element.get(input) != simdjson::SUCCESS)
      BadRequest("each of \"inputs\" must be an object");
    std::string_view name;
    if (Member(input, "name", "an input").get(name) != simdjson::SUCCESS)
      BadRequest("an input's \"name\" must be a string");
    size_t index = 0;
    while (index < signature.inputs.size() && signature.inputs[index].name != name) ++index;
    if (index == signature.inputs.size()) {
      std::string known;
      for (const TensorSpec& spec : signature.inputs)
        known += (known.empty() ? "" : ", ") + spec.name;
      BadRequest("model '" + signature.name + "' has no input '" + std::string(name) +
                 "' (its inputs: " + known + ")");
    }
    if (request.inputs[index]) BadRequest("input '" + std::string(name) + "' is given twice");
    request.inputs[index] =
        ParseInput(input, signature.inputs[index], "input '" + std::string(name) + "'", binary);
  }
  if (!binary.bytes.empty()) {
    BadRequest(std::to_string(binary.bytes.size()) +
               " bytes of binary data follow the JSON that no input's \"binary_data_size\" "
               "takes");
  }
  const bool all_binary = Flag(object, "binary_data_output");
  for (size_t index = 0; index < signature.inputs.size(); ++index) {
    if (!request.inputs[index])
      BadRequest("input '" + signature.inputs[index].name + "' is missing");
  }
  if (dom::element outputs_element; object["outputs"].get(outputs_element) == simdjson::SUCCESS) {
    dom::array outputs;
    if (outputs_element.get(outputs) != simdjson::SUCCESS)
      BadRequest("\"outputs\" must be an array");
    for (dom::element output_element : outputs) {
      dom::object output;
      if (output_element.get(output) != simdjson::SUCCESS)
        BadRequest("each of \"outputs\" must be an object");
      dom::element name = Member(output, "name", "a requested output");
      std::string_view text;
      bool is_string = name.get(text) == simdjson::SUCCESS;
      size_t index = 0;
      while (index < signature.outputs.size() &&
             !(is_string && signature.outputs[index].name == text))
        ++index;
      if (index == signature.outputs.size())
        BadRequest("model '" + signature.name + "' has no output " + Text(name));
      request.outputs.push_back(index);
      request.binary_outputs.push_back(all_binary || Flag(output, "binary_data"));
    }
  }
  if (request.outputs.empty()) {
    for (size_t index = 0; index < signature.outputs.size(); ++index) {
      request.outputs.push_back(index);
      request.binary_outputs.push_back(all_binary);
    }
  }
  return request;
}

EncodedResponse EncodeInferenceResponse(const ModelSignature& signature,
                                        const InferenceRequest& request,
                                        const std::vector<Ref<Tensor>>& outputs) {
  // Written piecewise: each output's data goes through the JSON type that
  // prints its dtype best (DataText), spliced into the envelope; outputs
  // answered in bytes follow the JSON.
  json head = {{"model_name", signature.name}, {"model_version", "1"}};
  if (request.id) head["id"] = *request.id;
  std::string body = Text(head);
  body.pop_back();  // the closing brace: the outputs follow
  body += ",\"outputs\":[";
  std::vector<const Tensor*> in_bytes;
  for (size_t position = 0; position < request.outputs.size(); ++position) {
    size_t index = request.outputs[position];
    const Tensor& tensor = *outputs.at(index);
    bool binary = position < request.binary_outputs.size() && request.binary_outputs[position];
    json description = {{"name", signature.outputs[index].name},
                        {"datatype", ProtocolDatatype(tensor.dtype())},
                        {"shape", tensor.shape()}};
    if (binary) description["parameters"] = {{"binary_data_size", tensor.byte_size()}};
    std::string output = Text(description);
    if (binary) {
      in_bytes.push_back(&tensor);
    } else {
      output.pop_back();
      output += ",\"data\":" + DataText(tensor) + "}";
    }
    body += (position > 0 ? "," : "") + output;
  }
  body += "]}";
  EncodedResponse response;
  if (!in_bytes.empty()) {
    response.json_length = body.size();
    for (const Tensor* tensor : in_bytes)
      body.append(static_cast<const char*>(tensor->host_data()), tensor->byte_size());
  }
  response.body = std::move(body);
  return response;
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
