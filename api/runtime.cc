// The C++ embedding API (include/relay/runtime.h) over the compiler's
// program loading (api/program.h) and the bytecode VM.
#include "relay/runtime.h"

#include <algorithm>

#include "api/program.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {

class Executable::Impl {
 public:
  explicit Impl(api::Program program) : program_(std::move(program)) {
    for (const auto& [onnx_name, parameter] : program_.input_aliases)
      onnx_input_names_[parameter] = onnx_name;
    // What lookups per request need, found once: entry points by name, and
    // for each parameter name its description (@main's, else the first
    // entry point's that has one).
    const auto& functions = program_.executable->functions;
    for (size_t index = 0; index < functions.size(); ++index) {
      const vm::Function& function = functions[index];
      if (!IsEntry(function)) continue;
      std::string_view name = function.name;
      if (name.starts_with("@")) name.remove_prefix(1);
      entries_.emplace(std::string(name), &function);
      for (const vm::ParamInfo& param : function.params) {
        auto [known, added] = inputs_.emplace(param.name, &param);
        if (!added && name == "main") known->second = &param;
      }
    }
  }
  const std::shared_ptr<const vm::Executable>& shared() const { return program_.executable; }
  const api::Program& program() const { return program_; }
  const std::map<std::string, std::string>& onnx_input_names() const { return onnx_input_names_; }

  // The entry function `name` ("main" or "@main"), or kUsage.
  const vm::Function& Entry(std::string_view name) const {
    if (name.starts_with("@")) name.remove_prefix(1);
    auto found = entries_.find(name);
    if (found == entries_.end())
      throw Error(ErrorKind::kUsage, "the program has no function @" + std::string(name));
    return *found->second;
  }
  // The parameter that input `name` (a parameter's or an ONNX input's name)
  // sets, or kUsage.
  const vm::ParamInfo& Input(std::string_view name) const {
    auto alias = program_.input_aliases.find(std::string(name));
    auto found =
        inputs_.find(alias != program_.input_aliases.end() ? alias->second : std::string(name));
    if (found == inputs_.end())
      throw Error(ErrorKind::kUsage, "no function has an input '" + std::string(name) + "'");
    return *found->second;
  }
  // Globals, not the closures and loops lifted out of them.
  static bool IsEntry(const vm::Function& function) {
    return function.name.find('.') == std::string::npos;
  }

 private:
  api::Program program_;
  std::map<std::string, std::string> onnx_input_names_;
  std::map<std::string, const vm::Function*, std::less<>> entries_;
  std::map<std::string, const vm::ParamInfo*, std::less<>> inputs_;
};

namespace {

ParameterInfo Describe(const vm::ParamInfo& param, std::string name) {
  return ParameterInfo{std::move(name), param.is_tensor, param.dtype, param.shape, param.type_text};
}

// `function`'s description; `output_names` name @main's results (an ONNX
// model's), when there is one per result.
FunctionInfo Describe(const vm::Function& function,
                      const std::vector<std::string>& output_names = {}) {
  FunctionInfo info;
  info.name = function.name.starts_with("@") ? function.name.substr(1) : function.name;
  for (const vm::ParamInfo& param : function.params)
    info.parameters.push_back(Describe(param, param.name));
  const bool named = info.name == "main" && output_names.size() == function.results.size();
  for (size_t index = 0; index < function.results.size(); ++index) {
    info.results.push_back(Describe(function.results[index],
                                    named ? output_names[index] : "out" + std::to_string(index)));
  }
  return info;
}

// `value` given for `param` must have its type (any extent for a `?`).
void CheckArgument(const vm::ParamInfo& param, const Value& value) {
  if (!value) throw Error(ErrorKind::kUsage, "input '" + param.name + "' is null");
  if (!param.is_tensor) return;  // tuples and ADT values: the program's own checks
  if (value->kind() != ObjectKind::kTensor) {
    throw Error(ErrorKind::kUsage,
                "input '" + param.name + "' must be a tensor of type " + param.type_text);
  }
  const auto& tensor = static_cast<const Tensor&>(*value);
  if (!api::FitsParameter(param, tensor)) {
    throw Error(ErrorKind::kUsage, "input '" + param.name + "' is a " +
                                       std::string(DTypeName(tensor.dtype())) +
                                       " tensor of shape " + ShapeToString(tensor.shape()) +
                                       ", but the parameter's type is " + param.type_text);
  }
  if (tensor.device_id().kind != DeviceKind::kCPU) {
    throw Error(ErrorKind::kUsage, "input '" + param.name + "' is not on the host");
  }
}

}  // namespace

Executable Executable::Load(const std::string& path, const LoadOptions& options) {
  api::BoundParams params;
  if (!options.params_path.empty()) {
    for (NamedTensor& array : ReadNpz(options.params_path, HostDevice()))
      params.values[array.name] = std::move(array.tensor);
    params.origin = options.params_path;
  }
  return Executable(std::make_shared<const Impl>(
      api::BuildProgram(path, params, {.gradients = options.gradients, .byoc = options.byoc})));
}

std::vector<FunctionInfo> Executable::functions() const {
  std::vector<FunctionInfo> infos;
  for (const vm::Function& function : impl_->shared()->functions) {
    if (Impl::IsEntry(function)) infos.push_back(Describe(function, impl_->program().output_names));
  }
  return infos;
}

FunctionInfo Executable::function(std::string_view name) const {
  return Describe(impl_->Entry(name), impl_->program().output_names);
}

ParameterInfo Executable::input(std::string_view name) const {
  const vm::ParamInfo& param = impl_->Input(name);
  return Describe(param, param.name);
}

std::vector<std::string> Executable::onnx_output_names() const {
  return impl_->program().output_names;
}

const std::map<std::string, std::string>& Executable::onnx_input_names() const {
  return impl_->onnx_input_names();
}

class VirtualMachine::Impl {
 public:
  explicit Impl(const Executable& executable)
      : executable_(executable), machine_(executable.impl().shared()) {}

  const Executable executable_;  // keeps the program alive
  vm::VirtualMachine machine_;
  std::map<std::string, Value> inputs_;  // @main's, by parameter name
};

VirtualMachine::VirtualMachine(const Executable& executable, std::string_view device) {
  const std::optional<DeviceId> id = ParseDeviceId(device);
  if (!id) {
    throw Error(ErrorKind::kUsage, "device '" + std::string(device) +
                                       "': expected cpu, opencl[:N], cuda[:N] or xrt[:N]");
  }
  Device* const placed = id->kind == DeviceKind::kCPU ? nullptr : &GetDevice(*id);
  impl_ = std::make_unique<Impl>(executable);
  impl_->machine_.set_device(placed);
}

VirtualMachine::~VirtualMachine() = default;
VirtualMachine::VirtualMachine(VirtualMachine&&) noexcept = default;
VirtualMachine& VirtualMachine::operator=(VirtualMachine&&) noexcept = default;

void VirtualMachine::SetInput(std::string_view name, Ref<Tensor> tensor) {
  const vm::ParamInfo& param = impl_->executable_.impl().Input(name);
  CheckArgument(param, tensor);
  impl_->inputs_[param.name] = std::move(tensor);
}

void VirtualMachine::ClearInputs() {
  impl_->inputs_.clear();
}

Value VirtualMachine::Invoke(std::string_view name) {
  const vm::Function& entry = impl_->executable_.impl().Entry(name);
  std::map<std::string, Value> arguments;
  for (const vm::ParamInfo& param : entry.params) {
    auto found = impl_->inputs_.find(param.name);
    if (found != impl_->inputs_.end()) arguments.insert(*found);
  }
  return Invoke(name, arguments);
}

Value VirtualMachine::Invoke(std::string_view name, std::span<const Value> arguments) {
  const vm::Function& entry = impl_->executable_.impl().Entry(name);
  if (arguments.size() != entry.params.size()) {
    throw Error(ErrorKind::kUsage, "@" +
                                       std::string(name.starts_with("@") ? name.substr(1) : name) +
                                       " takes " + std::to_string(entry.params.size()) +
                                       " arguments, got " + std::to_string(arguments.size()));
  }
  for (size_t index = 0; index < arguments.size(); ++index)
    CheckArgument(entry.params[index], arguments[index]);
  // Work placed on a device leaves its results there: they come back.
  return vm::ValueOnHost(impl_->machine_.Invoke(name, arguments));
}

Value VirtualMachine::Invoke(std::string_view name, const std::map<std::string, Value>& arguments) {
  const vm::Function& entry = impl_->executable_.impl().Entry(name);
  for (const auto& [given, value] : arguments) {
    if (std::none_of(entry.params.begin(), entry.params.end(),
                     [&](const vm::ParamInfo& param) { return param.name == given; })) {
      throw Error(ErrorKind::kUsage,
                  "@" + Describe(entry).name + " has no parameter '" + given + "'");
    }
  }
  std::vector<Value> ordered;
  for (const vm::ParamInfo& param : entry.params) {
    auto found = arguments.find(param.name);
    if (found == arguments.end()) {
      throw Error(ErrorKind::kUsage, "missing input '" + param.name + "' of type " +
                                         param.type_text + " for @" + Describe(entry).name);
    }
    ordered.push_back(found->second);
  }
  return Invoke(name, ordered);
}

}  // namespace relay
