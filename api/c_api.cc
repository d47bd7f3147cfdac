// The C API (include/relay/relay_vm.h): each function catches what the C++
// API (relay/runtime.h) throws and turns it into a status code and the
// thread's last error message.
#include "relay/relay_vm.h"

#include <cstring>
#include <new>
#include <string>

#include "relay/devices.h"
#include "relay/dlpack.h"
#include "relay/error.h"
#include "relay/runtime.h"
#include "relay/version.h"

struct relay_executable {
  explicit relay_executable(relay::Executable loaded)
      : executable(std::move(loaded)), functions(executable.functions()) {}
  relay::Executable executable;
  std::vector<relay::FunctionInfo> functions;  // what inspection hands out points into these

  const relay::FunctionInfo& Function(const char* name_or_null) const {
    const std::string_view name = name_or_null == nullptr ? "main" : name_or_null;
    for (const relay::FunctionInfo& function : functions) {
      if (function.name == name || "@" + function.name == name) return function;
    }
    throw relay::Error(relay::ErrorKind::kUsage,
                       "the program has no function @" + std::string(name));
  }
};

struct relay_vm {
  relay_vm(const relay_executable& program, std::string_view device)
      : executable(&program), machine(program.executable, device) {}
  const relay_executable* executable;
  relay::VirtualMachine machine;
};

struct relay_value {
  relay::Value value;
};

namespace {

thread_local std::string last_error;

relay_status StatusOf(relay::ErrorKind kind) {
  switch (kind) {
    case relay::ErrorKind::kUsage:
      return RELAY_ERROR_USAGE;
    case relay::ErrorKind::kParse:
      return RELAY_ERROR_PARSE;
    case relay::ErrorKind::kType:
      return RELAY_ERROR_TYPE;
    case relay::ErrorKind::kCompile:
      return RELAY_ERROR_COMPILE;
    case relay::ErrorKind::kLoad:
      return RELAY_ERROR_LOAD;
    case relay::ErrorKind::kRuntime:
      return RELAY_ERROR_RUNTIME;
    case relay::ErrorKind::kDevice:
      return RELAY_ERROR_DEVICE;
    case relay::ErrorKind::kInternal:
      return RELAY_ERROR_INTERNAL;
  }
  return RELAY_ERROR_INTERNAL;
}

// Runs `body`, turning what it throws into a status and the last error.
template <typename Body>
int Guard(Body&& body) {
  try {
    body();
    return RELAY_OK;
  } catch (const relay::Error& error) {
    last_error = error.what();
    return StatusOf(error.kind());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return RELAY_ERROR_DEVICE;
  } catch (const std::exception& error) {
    last_error = std::string("internal error: ") + error.what();
    return RELAY_ERROR_INTERNAL;
  } catch (...) {
    last_error = "internal error: an unknown exception";
    return RELAY_ERROR_INTERNAL;
  }
}

template <typename T>
void Require(const T* pointer, const char* what) {
  if (pointer == nullptr)
    throw relay::Error(relay::ErrorKind::kUsage, std::string(what) + " must not be null");
}

// A host copy of `tensor` (CPU, compact): the caller's memory is not kept.
// FromDLPack checks its dtype, shape, layout and data on a view of it.
relay::Ref<relay::Tensor> CopyOf(const DLTensor& tensor) {
  if (tensor.device.device_type != kDLCPU)
    throw relay::Error(relay::ErrorKind::kUsage, "the tensor is not on the CPU");
  DLManagedTensor borrowed{tensor, nullptr, nullptr};  // no deleter: the caller keeps it
  const relay::Ref<relay::Tensor> view = relay::FromDLPack(&borrowed);
  relay::Ref<relay::Tensor> copy =
      relay::Tensor::Empty(relay::HostDevice(), view->shape(), view->dtype());
  if (copy->byte_size() > 0) std::memcpy(copy->host_data(), view->host_data(), copy->byte_size());
  return copy;
}

// A 0-d tensor of `dtype` holding `value`.
relay::Ref<relay::Tensor> Scalar(relay::DType dtype, double value) {
  relay::Ref<relay::Tensor> scalar = relay::Tensor::Empty(relay::HostDevice(), {}, dtype);
  switch (dtype) {
    case relay::DType::kFloat32:
      scalar->data<float>()[0] = float(value);
      break;
    case relay::DType::kFloat64:
      scalar->data<double>()[0] = value;
      break;
    case relay::DType::kInt32:
      scalar->data<int32_t>()[0] = int32_t(value);
      break;
    case relay::DType::kInt64:
      scalar->data<int64_t>()[0] = int64_t(value);
      break;
    case relay::DType::kBool:
      scalar->data<bool>()[0] = value != 0;
      break;
    default:
      throw relay::Error(
          relay::ErrorKind::kUsage,
          "a scalar of " + std::string(relay::DTypeName(dtype)) + " cannot be set from a number");
  }
  return scalar;
}

const std::vector<relay::Value>& FieldsOf(const relay_value* value, relay::ObjectKind kind,
                                          const char* what) {
  Require(value, "value");
  if (!value->value || value->value->kind() != kind)
    throw relay::Error(relay::ErrorKind::kUsage, std::string("the value is not ") + what);
  return kind == relay::ObjectKind::kTuple
             ? static_cast<const relay::Tuple&>(*value->value).fields()
             : static_cast<const relay::Constructed&>(*value->value).fields();
}

void Field(const std::vector<relay::Value>& fields, size_t index, relay_value** out) {
  Require(out, "out");
  if (index >= fields.size()) {
    throw relay::Error(relay::ErrorKind::kUsage,
                       "field " + std::to_string(index) + " of " + std::to_string(fields.size()));
  }
  *out = new relay_value{fields[index]};
}

// Entry `index` of `list` (a function's parameters or results) into `out`.
void DescribeInto(const std::vector<relay::ParameterInfo>& list, size_t index, const char* what,
                  const relay::FunctionInfo& function, relay_parameter* out) {
  if (index >= list.size()) {
    throw relay::Error(relay::ErrorKind::kUsage, std::string(what) + " " + std::to_string(index) +
                                                     " of @" + function.name + "'s " +
                                                     std::to_string(list.size()));
  }
  const relay::ParameterInfo& entry = list[index];
  out->name = entry.name.c_str();
  out->is_tensor = entry.is_tensor ? 1 : 0;
  out->dtype = relay::ToDLDataType(entry.dtype);
  out->ndim = int32_t(entry.shape.size());
  out->shape = entry.shape.data();
  out->type = entry.type.c_str();
}

}  // namespace

extern "C" {

const char* relay_last_error(void) {
  return last_error.c_str();
}

const char* relay_version(void) {
  return RELAY_VERSION_STRING;
}

int relay_executable_load(const char* path, const char* params_npz_or_null,
                          relay_executable** out) {
  return Guard([&] {
    Require(path, "path");
    Require(out, "out");
    *out = nullptr;
    relay::LoadOptions options;
    if (params_npz_or_null != nullptr) options.params_path = params_npz_or_null;
    *out = new relay_executable(relay::Executable::Load(path, options));
  });
}

void relay_executable_free(relay_executable* exe) {
  delete exe;
}

int relay_executable_function_count(const relay_executable* exe, size_t* count) {
  return Guard([&] {
    Require(exe, "exe");
    Require(count, "count");
    *count = exe->functions.size();
  });
}

int relay_executable_function_name(const relay_executable* exe, size_t index, const char** name) {
  return Guard([&] {
    Require(exe, "exe");
    Require(name, "name");
    if (index >= exe->functions.size())
      throw relay::Error(relay::ErrorKind::kUsage, "function " + std::to_string(index) + " of " +
                                                       std::to_string(exe->functions.size()));
    *name = exe->functions[index].name.c_str();
  });
}

int relay_executable_parameter_count(const relay_executable* exe, const char* function_or_null,
                                     size_t* count) {
  return Guard([&] {
    Require(exe, "exe");
    Require(count, "count");
    *count = exe->Function(function_or_null).parameters.size();
  });
}

int relay_executable_parameter(const relay_executable* exe, const char* function_or_null,
                               size_t index, relay_parameter* out) {
  return Guard([&] {
    Require(exe, "exe");
    Require(out, "out");
    const relay::FunctionInfo& function = exe->Function(function_or_null);
    DescribeInto(function.parameters, index, "parameter", function, out);
  });
}

int relay_executable_result_count(const relay_executable* exe, const char* function_or_null,
                                  size_t* count) {
  return Guard([&] {
    Require(exe, "exe");
    Require(count, "count");
    *count = exe->Function(function_or_null).results.size();
  });
}

int relay_executable_result(const relay_executable* exe, const char* function_or_null, size_t index,
                            relay_parameter* out) {
  return Guard([&] {
    Require(exe, "exe");
    Require(out, "out");
    const relay::FunctionInfo& function = exe->Function(function_or_null);
    DescribeInto(function.results, index, "result", function, out);
  });
}

int relay_vm_create(const relay_executable* exe, const char* device_or_null, relay_vm** out) {
  return Guard([&] {
    Require(exe, "exe");
    Require(out, "out");
    *out = nullptr;
    *out = new relay_vm(*exe, device_or_null == nullptr ? "cpu" : device_or_null);
  });
}

void relay_vm_free(relay_vm* vm) {
  delete vm;
}

int relay_vm_set_input(relay_vm* vm, const char* name, const DLTensor* tensor) {
  return Guard([&] {
    Require(vm, "vm");
    Require(name, "name");
    Require(tensor, "tensor");
    vm->machine.SetInput(name, CopyOf(*tensor));
  });
}

int relay_vm_set_input_scalar(relay_vm* vm, const char* name, double value) {
  return Guard([&] {
    Require(vm, "vm");
    Require(name, "name");
    const relay::ParameterInfo input = vm->executable->executable.input(name);
    if (!input.is_tensor || !input.shape.empty())
      throw relay::Error(relay::ErrorKind::kUsage,
                         "input '" + std::string(name) + "' is a " + input.type + ", not a scalar");
    vm->machine.SetInput(name, Scalar(input.dtype, value));
  });
}

int relay_vm_invoke(relay_vm* vm, const char* function_or_null, relay_value** result) {
  return Guard([&] {
    Require(vm, "vm");
    Require(result, "result");
    *result = nullptr;
    *result = new relay_value{
        vm->machine.Invoke(function_or_null == nullptr ? "main" : function_or_null)};
  });
}

int relay_value_kind_of(const relay_value* value, relay_value_kind* kind) {
  return Guard([&] {
    Require(value, "value");
    Require(kind, "kind");
    switch (value->value->kind()) {
      case relay::ObjectKind::kTensor:
        *kind = RELAY_VALUE_TENSOR;
        return;
      case relay::ObjectKind::kTuple:
        *kind = RELAY_VALUE_TUPLE;
        return;
      case relay::ObjectKind::kConstructed:
        *kind = RELAY_VALUE_CONSTRUCTED;
        return;
      case relay::ObjectKind::kClosure:
        *kind = RELAY_VALUE_CLOSURE;
        return;
      case relay::ObjectKind::kReference:
        *kind = RELAY_VALUE_REFERENCE;
        return;
      default:
        throw relay::Error(relay::ErrorKind::kInternal, "a value of an unknown kind");
    }
  });
}

int relay_value_tuple_size(const relay_value* value, size_t* size) {
  return Guard([&] {
    Require(size, "size");
    *size = FieldsOf(value, relay::ObjectKind::kTuple, "a tuple").size();
  });
}

int relay_value_tuple_get(const relay_value* value, size_t index, relay_value** out) {
  return Guard([&] { Field(FieldsOf(value, relay::ObjectKind::kTuple, "a tuple"), index, out); });
}

int relay_value_field_count(const relay_value* value, size_t* count) {
  return Guard([&] {
    Require(count, "count");
    *count = FieldsOf(value, relay::ObjectKind::kConstructed, "a constructed value").size();
  });
}

int relay_value_field_get(const relay_value* value, size_t index, relay_value** out) {
  return Guard([&] {
    Field(FieldsOf(value, relay::ObjectKind::kConstructed, "a constructed value"), index, out);
  });
}

int relay_value_to_dlpack(const relay_value* value, DLManagedTensor** out) {
  return Guard([&] {
    Require(value, "value");
    Require(out, "out");
    if (!value->value || value->value->kind() != relay::ObjectKind::kTensor)
      throw relay::Error(relay::ErrorKind::kUsage, "the value is not a tensor");
    *out = relay::ToDLPack(relay::Ref<relay::Tensor>(
        static_cast<relay::Tensor*>(const_cast<relay::Object*>(value->value.get()))));
  });
}

void relay_value_free(relay_value* value) {
  delete value;
}

}  // extern "C"
