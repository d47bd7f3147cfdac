#include "tools/program_inputs.h"

#include <algorithm>
#include <charconv>
#include <random>

#include "api/program.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"
#include "relay/npy.h"
#include "relay/tensor.h"

namespace relay::tools {

bool TakeInputOption(std::span<const std::string_view> arguments, size_t& index,
                     InputOptions& options, std::string_view command) {
  const std::string_view argument = arguments[index];
  auto fail = [&](const std::string& message) {
    throw Error(ErrorKind::kUsage, "relay-vm " + std::string(command) + ": " + message);
  };
  auto value = [&]() -> std::string {
    if (index + 1 >= arguments.size()) fail(std::string(argument) + " needs a value");
    return std::string(arguments[++index]);
  };
  if (argument == "--entry") {
    options.entry = value();
    if (options.entry.starts_with("@")) options.entry.erase(0, 1);
  } else if (argument == "--input") {
    std::string binding = value();
    size_t equals = binding.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == binding.size()) {
      fail("--input takes NAME=FILE.npy or NAME=SCALAR, got '" + binding + "'");
    }
    std::string name = binding.substr(0, equals);
    if (name.starts_with("%")) name.erase(0, 1);
    if (!options.inputs.emplace(name, binding.substr(equals + 1)).second) {
      fail("input '" + name + "' given twice");
    }
  } else if (argument == "--params") {
    options.params = value();
  } else if (argument == "--random-inputs") {
    options.random_inputs = true;
  } else {
    return false;
  }
  return true;
}

namespace {

// A scalar of `dtype` from command-line text ("3", "2.5", "True").
Ref<Tensor> ParseScalar(const std::string& name, const std::string& text, DType dtype) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  auto fail = [&]() -> Ref<Tensor> {
    throw Error(ErrorKind::kUsage, "input '" + name + "': '" + text +
                                       "' is neither a .npy file nor a " +
                                       std::string(DTypeName(dtype)) + " scalar");
  };
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (dtype == DType::kBool) {
    if (text == "True" || text == "true" || text == "1") {
      *tensor->data<bool>() = true;
    } else if (text == "False" || text == "false" || text == "0") {
      *tensor->data<bool>() = false;
    } else {
      return fail();
    }
    return tensor;
  }
  if (IsFloat(dtype)) {
    double value = 0;
    auto [stop, error] = std::from_chars(begin, end, value);
    if (error != std::errc() || stop != end) return fail();
    if (dtype == DType::kFloat64) *tensor->data<double>() = value;
    if (dtype == DType::kFloat32) *tensor->data<float>() = static_cast<float>(value);
    if (dtype == DType::kFloat16) *tensor->data<Float16>() = Float16(static_cast<float>(value));
    return tensor;
  }
  if (dtype == DType::kUInt64) {  // beyond int64's range
    uint64_t value = 0;
    auto [stop, error] = std::from_chars(begin, end, value);
    if (error != std::errc() || stop != end) return fail();
    *tensor->data<uint64_t>() = value;
    return tensor;
  }
  int64_t value = 0;
  auto [stop, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || stop != end) return fail();
  switch (dtype) {
    case DType::kInt8:
      if (value < INT8_MIN || value > INT8_MAX) return fail();
      *tensor->data<int8_t>() = static_cast<int8_t>(value);
      break;
    case DType::kUInt8:
      if (value < 0 || value > UINT8_MAX) return fail();
      *tensor->data<uint8_t>() = static_cast<uint8_t>(value);
      break;
    case DType::kUInt16:
      if (value < 0 || value > UINT16_MAX) return fail();
      *tensor->data<uint16_t>() = static_cast<uint16_t>(value);
      break;
    case DType::kUInt32:
      if (value < 0 || value > UINT32_MAX) return fail();
      *tensor->data<uint32_t>() = static_cast<uint32_t>(value);
      break;
    case DType::kInt16:
      if (value < INT16_MIN || value > INT16_MAX) return fail();
      *tensor->data<int16_t>() = static_cast<int16_t>(value);
      break;
    case DType::kInt32:
      if (value < INT32_MIN || value > INT32_MAX) return fail();
      *tensor->data<int32_t>() = static_cast<int32_t>(value);
      break;
    default:
      *tensor->data<int64_t>() = value;
      break;
  }
  return tensor;
}

// Deterministic values for a missing input: the same program and name
// always get the same tensor.
Ref<Tensor> RandomTensor(const vm::ParamInfo& type) {
  const std::string& name = type.name;
  Shape shape;
  for (int64_t dim : type.shape) {
    if (dim < 0) {
      throw Error(ErrorKind::kUsage, "input '" + name +
                                         "' has a ? dimension: --random-inputs needs its size, "
                                         "give it with --input");
    }
    shape.push_back(dim);
  }
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, type.dtype);
  std::mt19937_64 generator(std::hash<std::string>{}(name) ^ 0x5eed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(-10, 10);
  for (int64_t index = 0; index < tensor->element_count(); ++index) {
    switch (type.dtype) {
      case DType::kBool:
        tensor->data<bool>()[index] = (generator() & 1) != 0;
        break;
      case DType::kFloat16:
        tensor->data<Float16>()[index] = Float16(static_cast<float>(real(generator)));
        break;
      case DType::kFloat32:
        tensor->data<float>()[index] = static_cast<float>(real(generator));
        break;
      case DType::kFloat64:
        tensor->data<double>()[index] = real(generator);
        break;
      case DType::kInt8:
        tensor->data<int8_t>()[index] = static_cast<int8_t>(integer(generator));
        break;
      case DType::kUInt8:
        tensor->data<uint8_t>()[index] = static_cast<uint8_t>(integer(generator) + 10);
        break;
      case DType::kUInt16:
        tensor->data<uint16_t>()[index] = static_cast<uint16_t>(integer(generator) + 10);
        break;
      case DType::kUInt32:
        tensor->data<uint32_t>()[index] = static_cast<uint32_t>(integer(generator) + 10);
        break;
      case DType::kUInt64:
        tensor->data<uint64_t>()[index] = static_cast<uint64_t>(integer(generator) + 10);
        break;
      case DType::kInt16:
        tensor->data<int16_t>()[index] = static_cast<int16_t>(integer(generator));
        break;
      case DType::kInt32:
        tensor->data<int32_t>()[index] = static_cast<int32_t>(integer(generator));
        break;
      case DType::kInt64:
        tensor->data<int64_t>()[index] = integer(generator);
        break;
    }
  }
  return tensor;
}

// `tensor` given for `type` must have its type (any size for a ? dim).
void CheckInput(const vm::ParamInfo& type, const Tensor& tensor, const std::string& origin) {
  if (!api::FitsParameter(type, tensor)) {
    throw Error(ErrorKind::kUsage, "input '" + type.name + "' from " + origin + " is a " +
                                       std::string(DTypeName(tensor.dtype())) + " array of shape " +
                                       ShapeToString(tensor.shape()) +
                                       ", but the parameter's type is " + type.type_text);
  }
}

}  // namespace

std::vector<Value> BindInputs(InputOptions options, const vm::Function& entry,
                              const std::map<std::string, std::string>& aliases) {
  // An imported model's inputs go by the names the model gives them.
  std::map<std::string, std::string> renamed;
  for (auto& [name, text] : options.inputs) {
    auto alias = aliases.find(name);
    renamed[alias != aliases.end() ? alias->second : name] = std::move(text);
  }
  options.inputs = std::move(renamed);
  std::map<std::string, Ref<Tensor>> params;
  if (!options.params.empty()) {
    for (NamedTensor& array : ReadNpz(options.params, HostDevice()))
      params[array.name] = std::move(array.tensor);
  }
  for (const auto& [name, text] : options.inputs) {
    bool known = std::any_of(entry.params.begin(), entry.params.end(),
                             [&](const vm::ParamInfo& param) { return param.name == name; });
    if (!known) {
      throw Error(ErrorKind::kUsage,
                  "--input " + name + ": @" + options.entry + " has no parameter %" + name);
    }
  }
  std::vector<Value> arguments;
  for (const vm::ParamInfo& param : entry.params) {
    const std::string& name = param.name;
    auto given = options.inputs.find(name);
    auto stored = params.find(name);
    if (!param.is_tensor) {
      throw Error(ErrorKind::kUsage, "parameter %" + name + " has type " + param.type_text +
                                         ", which cannot be given on the command line");
    }
    Ref<Tensor> tensor;
    std::string origin;
    if (given != options.inputs.end()) {
      const std::string& text = given->second;
      if (text.ends_with(".npy")) {
        tensor = ReadNpy(text, HostDevice());
        origin = text;
      } else if (param.shape.empty()) {
        tensor = ParseScalar(name, text, param.dtype);
        origin = "the command line";
      } else {
        throw Error(ErrorKind::kUsage, "input '" + name + "' is a " + param.type_text +
                                           ": give a .npy file, not '" + text + "'");
      }
    } else if (stored != params.end()) {
      tensor = stored->second;
      origin = options.params;
    } else if (options.random_inputs) {
      tensor = RandomTensor(param);
      origin = "--random-inputs";
    } else {
      throw Error(ErrorKind::kUsage, "missing input '" + name + "' of type " + param.type_text +
                                         ": give it with --input " + name + "=FILE.npy" +
                                         (options.params.empty() ? "" : " or in --params") +
                                         ", or use --random-inputs");
    }
    CheckInput(param, *tensor, origin);
    // Nothing writes the inputs while the program runs, however often it
    // runs (--repeat): kernels may keep what they derive from them, such as
    // a weight's packed copy.
    tensor->MarkImmutable();
    arguments.push_back(tensor);
  }
  return arguments;
}

}  // namespace relay::tools
