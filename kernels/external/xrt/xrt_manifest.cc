#include "kernels/external/xrt/xrt_manifest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "kernels/operator.h"
#include "relay/error.h"

namespace relay::kernels::external {
namespace {

// A decimal index below 10^6 without leading zeros, taken from the front of
// `text`.
std::optional<int32_t> TakeIndex(std::string_view& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 6 || (digits > 1 && text[0] == '0')) return std::nullopt;
  int32_t value = 0;
  for (size_t index = 0; index < digits; ++index) value = value * 10 + (text[index] - '0');
  text.remove_prefix(digits);
  return value;
}

bool TakePrefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// Whether `call`'s tensors all have `dtype` and static shapes: what a
// manifest's kernel takes.
bool HasStaticTensorsOf(DType dtype, const CallView& call) {
  auto fits = [dtype](const ValueType& type) {
    return !type.is_tuple && type.dtype == dtype &&
           std::all_of(type.shape.begin(), type.shape.end(), [](int64_t dim) { return dim >= 0; });
  };
  return fits(call.result) && std::all_of(call.inputs.begin(), call.inputs.end(), fits);
}

// Reads one kernel entry of a manifest, or throws `fail`'s error.
template <typename Fail>
XrtManifestKernel ReadKernel(const nlohmann::json& entry, const Fail& fail) {
  if (!entry.is_object()) fail("is not an object");
  for (const auto& [key, value] : entry.items()) {
    if (key != "name" && key != "pattern" && key != "dtype" && key != "arguments")
      fail("has an unknown field \"" + key + "\" (it takes name, pattern, dtype and arguments)");
  }
  auto field = [&](const char* key) -> const nlohmann::json& {
    if (!entry.contains(key)) fail(std::string("lacks \"") + key + "\"");
    return entry.at(key);
  };
  auto strings = [&](const char* key) {
    const nlohmann::json& value = field(key);
    if (!value.is_array() || value.empty() ||
        !std::all_of(value.begin(), value.end(), [](const auto& item) { return item.is_string(); }))
      fail(std::string("\"") + key + "\" is not a non-empty list of strings");
    return value.get<std::vector<std::string>>();
  };
  XrtManifestKernel kernel;
  const nlohmann::json& name = field("name");
  if (!name.is_string() || !IsXrtKernelName(name.get<std::string>()))
    fail("\"name\" is not a kernel name (printable characters without spaces)");
  kernel.name = name.get<std::string>();
  kernel.pattern = strings("pattern");
  for (size_t step = 0; step < kernel.pattern.size(); ++step) {
    const OperatorDefinition* definition = FindOperator(kernel.pattern[step]);
    if (definition == nullptr) fail("\"" + kernel.pattern[step] + "\" is not an operator");
    const auto arity = int32_t(definition->input_names.size());
    if (step > 0 && arity == 0) {
      fail(kernel.pattern[step] + " takes no input, so it cannot follow " +
           kernel.pattern[step - 1]);
    }
    kernel.input_count += step == 0 ? arity : arity - 1;
  }
  const nlohmann::json& dtype = field("dtype");
  const std::optional<DType> parsed_dtype =
      dtype.is_string() ? ParseDType(dtype.get<std::string>()) : std::nullopt;
  if (!parsed_dtype) fail("\"dtype\" is not a dtype name such as \"float32\"");
  kernel.dtype = *parsed_dtype;
  std::vector<int32_t> passes(size_t(kernel.input_count), 0);
  int32_t outputs = 0;
  for (const std::string& text : strings("arguments")) {
    const std::optional<XrtArgument> argument = ParseXrtArgument(text);
    if (!argument) {
      fail("argument \"" + text +
           "\" is none of inputN, output, inputN.shape[D] and output.shape[D]");
    }
    if (argument->input >= kernel.input_count) {
      fail("argument \"" + text + "\" names an input the pattern does not have (it has " +
           std::to_string(kernel.input_count) + ")");
    }
    if (argument->kind == XrtArgument::Kind::kBuffer)
      ++(argument->input < 0 ? outputs : passes[size_t(argument->input)]);
    kernel.arguments.push_back(*argument);
  }
  if (outputs != 1)
    fail("its arguments pass \"output\" " + std::to_string(outputs) + " times, not once");
  for (int32_t input = 0; input < kernel.input_count; ++input) {
    if (passes[size_t(input)] != 1) {
      fail("its arguments pass \"input" + std::to_string(input) + "\" " +
           std::to_string(passes[size_t(input)]) + " times, not once");
    }
  }
  return kernel;
}

}  // namespace

std::string XrtArgument::ToString() const {
  std::string text = input < 0 ? "output" : "input" + std::to_string(input);
  if (kind == Kind::kInteger) text += ".shape[" + std::to_string(axis) + "]";
  return text;
}

std::optional<XrtArgument> ParseXrtArgument(std::string_view text) {
  XrtArgument argument;
  if (!TakePrefix(text, "output")) {
    if (!TakePrefix(text, "input")) return std::nullopt;
    const std::optional<int32_t> input = TakeIndex(text);
    if (!input) return std::nullopt;
    argument.input = *input;
  }
  if (text.empty()) return argument;
  if (!TakePrefix(text, ".shape[")) return std::nullopt;
  const std::optional<int32_t> axis = TakeIndex(text);
  if (!axis || text != "]") return std::nullopt;
  argument.kind = XrtArgument::Kind::kInteger;
  argument.axis = *axis;
  return argument;
}

bool IsXrtKernelName(std::string_view name) {
  return !name.empty() && name.size() <= 256 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c <= '~'; });
}

std::vector<XrtManifestKernel> ParseXrtManifest(std::string_view text, const std::string& path) {
  auto fail = [&](const std::string& problem) {
    throw Error(ErrorKind::kUsage, "xrt manifest " + path + ": " + problem);
  };
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    // what() reads "[json.exception.parse_error.101] parse error at line 2, ...".
    const std::string message = error.what();
    const size_t bracket = message.find("] ");
    fail("not JSON: " + (bracket == std::string::npos ? message : message.substr(bracket + 2)));
  }
  if (!document.is_object() || !document.contains("kernels") || document.size() != 1 ||
      !document["kernels"].is_array()) {
    fail("not an object whose one field \"kernels\" lists the kernels");
  }
  const nlohmann::json& entries = document["kernels"];
  if (entries.empty()) fail("lists no kernels");
  std::vector<XrtManifestKernel> kernels;
  std::set<std::string> names;
  for (size_t index = 0; index < entries.size(); ++index) {
    const nlohmann::json& entry = entries[index];
    std::string label = "kernel " + std::to_string(index);
    if (entry.is_object() && entry.contains("name") && entry["name"].is_string())
      label += " (" + entry["name"].get<std::string>() + ")";
    kernels.push_back(
        ReadKernel(entry, [&](const std::string& problem) { fail(label + " " + problem); }));
    if (!names.insert(kernels.back().name).second)
      fail(label + " is listed twice: a kernel has one pattern");
  }
  return kernels;
}

std::vector<XrtManifestKernel> ReadXrtManifest(const std::string& path) {
  auto unreadable = [&](const std::string& reason) {
    return Error(ErrorKind::kUsage, "xrt manifest " + path + ": cannot be read (" + reason + ")");
  };
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) throw unreadable("it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw unreadable(std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw unreadable(std::strerror(errno));
  return ParseXrtManifest(text, path);
}

RuleTable XrtManifestRules(const std::vector<XrtManifestKernel>& kernels) {
  RuleTable rules;
  for (const XrtManifestKernel& kernel : kernels) {
    CompositeRule rule{.name = "xrt." + kernel.name, .steps = {}};
    for (const std::string& op : kernel.pattern) {
      rule.steps.push_back({.ops = {op}, .accepts = [dtype = kernel.dtype](const CallView& call) {
                              return HasStaticTensorsOf(dtype, call);
                            }});
    }
    rules.composites.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace relay::kernels::external
