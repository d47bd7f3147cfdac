#include "vm/interpreter/virtual_machine.h"

#include <chrono>
#include <unordered_set>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <utility>

#include "devices/kernel_loader.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"
#include "kernels/operators/device_annotations.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/storage.h"
#include "relay/tensor.h"
#include "vm/bytecode/tensor_layout.h"
#include "vm/interpreter/dispatch.h"

namespace relay::vm {

namespace {

const Tensor* AsTensor(const Value& value) {
  return value && value->kind() == ObjectKind::kTensor ? static_cast<const Tensor*>(value.get())
                                                       : nullptr;
}

std::string KindName(const Value& value) {
  if (!value) return "nothing (an unset register)";
  switch (value->kind()) {
    case ObjectKind::kTensor:
      return "a tensor";
    case ObjectKind::kTuple:
      return "a tuple";
    case ObjectKind::kConstructed:
      return "a constructed value";
    case ObjectKind::kClosure:
      return "a closure";
    case ObjectKind::kReference:
      return "a reference";
    case ObjectKind::kStorage:
      return "a storage block";
    default:
      return "an internal object";
  }
}

}  // namespace

VirtualMachine::VirtualMachine(std::shared_ptr<const Executable> executable)
    : executable_(std::move(executable)) {
  RELAY_CHECK(executable_ != nullptr, "a VirtualMachine needs an executable");
  call_sites_.resize(executable_->kernels.size());
  for (size_t index = 0; index < call_sites_.size(); ++index) {
    const KernelCall& call = executable_->kernels[index];
    const kernels::OperatorDefinition* definition =
        call.fused.empty() ? kernels::FindOperator(call.op) : nullptr;
    call_sites_[index].host_values =
        definition != nullptr &&
        (definition->shape_dependence == kernels::ShapeDependence::kInputValues ||
         definition->host_kernel);
    if (call.fused.empty() && !call.tuple_input && !call.tuple_result) {
      call_sites_[index].scalar = ScalarOperatorFor(call.op, call.attrs);
      call_sites_[index].shape_only = call.op == "shape_of" || call.op == "ndarray_size";
      if (call.op == kernels::kDeviceCopy || call.op == kernels::kOnDevice) {
        const bool copy = call.op == kernels::kDeviceCopy;
        call_sites_[index].move_to =
            kernels::DeviceFromAttrs(call.attrs, copy ? "dst_device_type" : "device_type",
                                     copy ? "dst_device_id" : "device_id")
                .device;
      }
    }
  }
}

const kernels::PreparedOperator& VirtualMachine::PrepareKernel(
    int32_t kernel, const std::vector<Ref<Tensor>>& tensors) {
  const KernelCall& call = executable_->kernels[kernel];
  return call_sites_[kernel].prepared.For(tensors, [&] {
    return !call.fused.empty()
               ? kernels::PrepareFusedOperators(call.fused, tensors)
               : kernels::PrepareOperator(
                     call.op, tensors, call.attrs,
                     call.tuple_input ? kernels::InputForm::kTuple : kernels::InputForm::kTensors);
  });
}

namespace {

// The most elements a host tensor may have for kernels reading only such
// tensors to stay on the host under a device (see PlaceKernelInputs).
constexpr int64_t kHostControlElements = 64;

}  // namespace

Device& VirtualMachine::DeviceNamed(DeviceId id) {
  return id.kind == DeviceKind::kCPU ? HostDevice() : GetDevice(id);
}

void VirtualMachine::PlaceKernelInputs(int32_t kernel, std::vector<Ref<Tensor>>& tensors,
                                       const Tensor* output) const {
  Device* target = nullptr;  // the host
  const std::optional<DeviceId>& placed = executable_->kernels[kernel].device;
  if (output != nullptr) {
    // Where the result must go wins: a kernel writes only its own device's
    // memory.
    if (!output->on_host()) target = output->storage()->device();
  } else if (call_sites_[kernel].host_values) {
    // Shaped by its inputs' values (arange): they are read on the host.
  } else if (placed) {
    if (placed->kind != DeviceKind::kCPU) target = &DeviceNamed(*placed);
  } else if (device_ == nullptr) {
    // Tensors handed in on a device run there, where it compiles kernels;
    // an external kernel's result (on an FPGA) comes to the host.
    const bool runnable = std::all_of(tensors.begin(), tensors.end(), [](const Ref<Tensor>& t) {
      return t->on_host() || devices::KernelLoaderOf(*t->storage()->device()) != nullptr;
    });
    if (runnable) return;
  } else {
    // Control values stay on the host, as Nimble keeps them: a kernel of
    // small host tensors alone (scalars, shapes, a loop's index lookups)
    // runs there, since its result usually decides a branch, which would
    // otherwise wait for the device and read back (a Tree-LSTM's
    // traversal: 30x slower on PoCL).
    const bool host_control = std::all_of(tensors.begin(), tensors.end(), [](const Ref<Tensor>& t) {
      return t->on_host() && t->element_count() <= kHostControlElements;
    });
    if (!host_control) target = device_;
  }
  for (Ref<Tensor>& tensor : tensors) {
    if (target == nullptr) {
      if (!tensor->on_host()) tensor = CopyTensor(*tensor, HostDevice());
    } else {
      tensor = TensorOn(tensor, *target);
    }
  }
}

Ref<Tensor> VirtualMachine::HostShapeResult(const KernelCall& call, const Tensor& input) const {
  std::string dtype_name = "int32";  // the operators' default
  for (const auto& [name, value] : call.attrs) {
    if (name == "dtype") dtype_name = value.as_string();
  }
  const std::optional<DType> dtype = ParseDType(dtype_name);
  if (!dtype || (*dtype != DType::kInt32 && *dtype != DType::kInt64)) {
    throw Error(ErrorKind::kUsage,
                "operator " + call.op + ": dtype " + dtype_name + " is not int32 or int64");
  }
  const Shape& shape = input.shape();
  std::vector<int64_t> values;
  if (call.op == "shape_of") {
    values = shape;
  } else {
    values.push_back(input.element_count());
  }
  Ref<Tensor> result = Tensor::Empty(
      HostDevice(), call.op == "shape_of" ? Shape{int64_t(shape.size())} : Shape{}, *dtype);
  for (size_t index = 0; index < values.size(); ++index) {
    if (*dtype == DType::kInt64) {
      result->data<int64_t>()[index] = values[index];
    } else {
      result->data<int32_t>()[index] = static_cast<int32_t>(values[index]);
    }
  }
  return result;
}

Value VirtualMachine::InvokeKernel(int32_t kernel, const std::vector<Ref<Tensor>>& tensors) {
  if (profiler_ != nullptr) return ProfiledInvokeKernel(kernel, tensors);
  const kernels::PreparedOperator& prepared = PrepareKernel(kernel, tensors);
  if (!prepared.tuple_result) {
    const kernels::PreparedKernel& only = prepared.kernels[0];
    if (!only.output_shape.empty() || only.device != nullptr) return only.Launch(tensors);
    // A 0-d result (a scan's comparison) goes into a recycled tensor, as the
    // scalar operators' do: no allocation per call.
    Ref<Tensor> result = call_sites_[kernel].scalar_results.Allocate(only.output_dtype);
    only.LaunchInto(tensors, *result);
    return result;
  }
  std::vector<Ref<Tensor>> results = prepared.Run(tensors);
  return MakeRef<Tuple>(std::vector<Value>(results.begin(), results.end()));
}

Value VirtualMachine::ProfiledInvokeKernel(int32_t kernel,
                                           const std::vector<Ref<Tensor>>& tensors) {
  const Profiler::Clock::time_point prepare_start = Profiler::Clock::now();
  const kernels::PreparedOperator& prepared = PrepareKernel(kernel, tensors);
  const Profiler::Clock::time_point start = Profiler::Clock::now();
  profiler_->RecordPreparation(prepare_start, start);
  std::vector<Ref<Tensor>> results = prepared.Run(tensors);
  // A device kernel is only queued by then: time it to its end.
  if (!results.empty() && !results[0]->on_host()) results[0]->storage()->device()->Synchronize();
  const Profiler::Clock::time_point end = Profiler::Clock::now();
  int64_t output_bytes = 0;
  for (const Ref<Tensor>& result : results) output_bytes += result->byte_size();
  profiler_->RecordKernel(kernel, tensors, output_bytes, start, end);
  if (!prepared.tuple_result) return results[0];
  return MakeRef<Tuple>(std::vector<Value>(results.begin(), results.end()));
}

Value VirtualMachine::Invoke(std::string_view name, std::span<const Value> arguments) {
  Start(name, arguments);
  return *Resume();
}

void VirtualMachine::Start(std::string_view name, std::span<const Value> arguments) {
  const int32_t index = executable_->FindFunction(name);
  if (index < 0) {
    throw Error(ErrorKind::kUsage, "the program has no function @" +
                                       std::string(name.starts_with("@") ? name.substr(1) : name));
  }
  const Function& function = executable_->functions[index];
  if (function.captured_count != 0 || arguments.size() != function.param_count) {
    throw Error(ErrorKind::kUsage, function.name + " takes " +
                                       std::to_string(function.param_count) + " arguments, got " +
                                       std::to_string(arguments.size()));
  }
  if (memory_budget_ && device_ != nullptr) {
    throw Error(ErrorKind::kUsage,
                "a memory budget applies to runs on the host (cpu); this VM runs on " +
                    device_->id().ToString());
  }
  registers_.clear();
  frames_.clear();
  failed_ = false;
  rematerializer_.reset();
  if (memory_budget_ || measure_memory_) {
    rematerializer_ = std::make_unique<Rematerializer>(
        memory_budget_,
        [this](int32_t kernel, std::span<const Ref<Tensor>> inputs,
               std::span<const Ref<Tensor>> outputs) { RerunKernel(kernel, inputs, outputs); });
    // The arguments' bytes count, once per storage; they are never evicted.
    std::unordered_set<const Storage*> seen;
    size_t bytes = 0;
    for (const Value& argument : arguments) {
      const Tensor* tensor = AsTensor(argument);
      if (tensor != nullptr && seen.insert(tensor->storage().get()).second) {
        bytes += tensor->storage()->size();
      }
    }
    rematerializer_->AddFixedBytes(bytes);
  }
  std::vector<Value> values(arguments.begin(), arguments.end());
  PushFrame(index, values, 0, Value());
  if (profiler_ != nullptr) {
    profiler_->BeginRun();
    profiler_->EnterFunction(index);
  }
}

std::optional<Value> VirtualMachine::Resume(uint64_t budget) {
  if (frames_.empty() || failed_)
    throw Error(ErrorKind::kUsage, "no run to resume: Start one first");
  try {
    std::optional<Value> result;
    {
      // What the run allocates is tracked (and, under a budget, evicted).
      std::optional<ScopedStorageObserver> observing;
      if (rematerializer_) observing.emplace(rematerializer_.get());
      result = Run(budget);
      if (result) FinishMemoryTracking(&*result);
    }
    if (result) {
      registers_.clear();
      if (profiler_ != nullptr) profiler_->EndRun();
    }
    return result;
  } catch (...) {
    FinishMemoryTracking(nullptr);
    // A failed run under a budget is not kept: its registers may hold
    // evicted tensors, which nothing could recompute afterwards.
    if (keep_failed_run_ && memory_budget_ == std::nullopt) {
      failed_ = true;
    } else {
      registers_.clear();
      frames_.clear();
    }
    call_arguments_.clear();
    if (profiler_ != nullptr) profiler_->EndRun();
    throw;
  }
}

void VirtualMachine::FinishMemoryTracking(const Value* result) {
  if (!rematerializer_) return;
  // The result leaves the run resident: nothing recomputes it later.
  if (result != nullptr && Rematerializing()) rematerializer_->TouchDeep(*result);
  memory_stats_ = rematerializer_->stats();
  rematerializer_.reset();
}

void VirtualMachine::RerunKernel(int32_t kernel, std::span<const Ref<Tensor>> inputs,
                                 std::span<const Ref<Tensor>> outputs) {
  std::vector<Ref<Tensor>> tensors(inputs.begin(), inputs.end());
  const kernels::PreparedOperator& prepared = PrepareKernel(kernel, tensors);
  RELAY_CHECK(prepared.kernels.size() == outputs.size(),
              "recomputing a kernel with another number of results");
  for (size_t index = 0; index < outputs.size(); ++index) {
    prepared.kernels[index].LaunchInto(tensors, *outputs[index]);
  }
}

std::vector<VirtualMachine::FrameView> VirtualMachine::frames() const {
  std::vector<FrameView> views;
  for (size_t depth = 0; depth < frames_.size(); ++depth) {
    const Frame& frame = frames_[depth];
    const Function& function = executable_->functions[frame.function];
    const size_t next = static_cast<size_t>(frame.next - function.code.data());
    const bool innermost_running = depth + 1 == frames_.size() && !failed_;
    views.push_back({frame.function, innermost_running ? next : CurrentIndex(frame, function),
                     frame.return_register});
  }
  return views;
}

const Value& VirtualMachine::RegisterOf(size_t depth, int32_t reg) const {
  static const Value kNothing;
  if (depth >= frames_.size()) return kNothing;
  const Frame& frame = frames_[depth];
  if (reg < 0 || uint32_t(reg) >= executable_->functions[frame.function].register_count)
    return kNothing;
  return registers_[frame.base + size_t(reg)];
}

void VirtualMachine::PushFrame(int32_t function, std::vector<Value>& arguments,
                               int32_t return_register, Value self) {
  const Function& callee = executable_->functions[function];
  const size_t base =
      frames_.empty()
          ? 0
          : frames_.back().base + executable_->functions[frames_.back().function].register_count;
  registers_.resize(base + callee.register_count);
  for (size_t index = 0; index < arguments.size(); ++index)
    registers_[base + index] = std::move(arguments[index]);
  frames_.push_back(Frame{function, callee.code.data(), base, return_register, std::move(self)});
}

void VirtualMachine::ReplaceFrame(int32_t function, std::vector<Value>& arguments, Value self) {
  Frame& frame = frames_.back();
  const Function& callee = executable_->functions[function];
  registers_.resize(frame.base);  // releases the caller's values
  registers_.resize(frame.base + callee.register_count);
  for (size_t index = 0; index < arguments.size(); ++index)
    registers_[frame.base + index] = std::move(arguments[index]);
  frame.function = function;
  frame.next = callee.code.data();
  frame.self = std::move(self);
}

size_t VirtualMachine::CurrentIndex(const Frame& frame, const Function& function) {
  const size_t next = static_cast<size_t>(frame.next - function.code.data());
  return next == 0 ? 0 : next - 1;
}

std::vector<std::string> VirtualMachine::Backtrace() const {
  constexpr size_t kShownFrames = 32;
  std::vector<std::string> frames;
  for (size_t depth = frames_.size(); depth-- > 0;) {
    if (frames.size() == kShownFrames) {
      frames.push_back("... " + std::to_string(depth + 1) + " more frames");
      break;
    }
    const Frame& frame = frames_[depth];
    const Function& function = executable_->functions[frame.function];
    std::string text = function.name;
    const size_t pc = CurrentIndex(frame, function);
    if (pc < function.code.size() && function.code[pc].location.line > 0) {
      const SourceLocation& location = function.code[pc].location;
      text += " (" + function.source + ":" + std::to_string(location.line) + ":" +
              std::to_string(location.column) + ")";
    }
    frames.push_back(std::move(text));
  }
  return frames;
}

void VirtualMachine::Fail(ErrorKind kind, const std::string& message) const {
  std::optional<SourceSpan> span;
  if (!frames_.empty()) {
    const Frame& frame = frames_.back();
    const Function& function = executable_->functions[frame.function];
    const size_t pc = CurrentIndex(frame, function);
    if (pc < function.code.size() && function.code[pc].location.line > 0) {
      span = SourceSpan{function.source, function.code[pc].location.line,
                        function.code[pc].location.column, 0, 0};
    }
  }
  throw Error(kind, message, std::move(span), Backtrace());
}

std::vector<Value>& VirtualMachine::GatherArguments(std::span<const int32_t> argument_registers,
                                                    const Value* registers) {
  std::vector<Value>& arguments = call_arguments_;
  arguments.clear();
  arguments.reserve(argument_registers.size());
  for (int32_t reg : argument_registers) arguments.push_back(registers[reg]);
  return arguments;
}

void VirtualMachine::CallClosure(Value callee, std::span<const int32_t> argument_registers,
                                 const Value* registers, int32_t return_register, bool tail) {
  if (!callee || callee->kind() != ObjectKind::kClosure) {
    Fail(ErrorKind::kRuntime, "calling " + KindName(callee) + ", not a closure");
  }
  const auto* closure = static_cast<const Closure*>(callee.get());
  const Function& target = executable_->functions[closure->function()];
  std::vector<Value>& arguments = call_arguments_;
  arguments.assign(closure->captured().begin(), closure->captured().end());
  for (int32_t reg : argument_registers) arguments.push_back(registers[reg]);
  if (arguments.size() != target.param_count) {
    Fail(ErrorKind::kRuntime, "closure of " + target.name + " called with " +
                                  std::to_string(argument_registers.size()) + " arguments");
  }
  if (tail) {
    ReplaceFrame(closure->function(), arguments, std::move(callee));
  } else {
    PushFrame(closure->function(), arguments, return_register, std::move(callee));
  }
}

void VirtualMachine::FailInKernel(const Error& error) const {
  // Shapes only known at run time reach the kernels (and the allocators):
  // their complaint, located in the program.
  Fail(error.kind() == ErrorKind::kUsage ? ErrorKind::kRuntime : error.kind(), error.message());
}

bool VirtualMachine::RunScalarKernel(int32_t kernel, std::span<const int32_t> input_registers,
                                     Value* registers, int32_t result_register) {
  CallSite& site = call_sites_[kernel];
  const ScalarOperator op = site.scalar;
  if (op == ScalarOperator::kNone || input_registers.size() > 2) return false;
  // The registers' tensors, read in place: no references taken.
  const Tensor* inputs[2] = {};
  for (size_t index = 0; index < input_registers.size(); ++index) {
    inputs[index] = AsTensor(registers[input_registers[index]]);
    if (inputs[index] == nullptr) return false;  // the kernel path reports it
    if (Rematerializing()) rematerializer_->Touch(*inputs[index]);
  }
  return RunScalarOperatorInto(op, std::span<const Tensor* const>(inputs, input_registers.size()),
                               registers[result_register], site.scalar_results);
}

std::vector<Ref<Tensor>>& VirtualMachine::GatherKernelInputs(
    const KernelCall& call, std::span<const int32_t> input_registers, const Value* registers) {
  std::vector<Ref<Tensor>>& tensors = kernel_inputs_;
  tensors.clear();
  auto add_tensor = [&](const Value& value) {
    const Tensor* tensor = AsTensor(value);
    if (tensor == nullptr) {
      Fail(ErrorKind::kRuntime, "operator " + call.op + " given " + KindName(value));
    }
    tensors.push_back(Ref<Tensor>(const_cast<Tensor*>(tensor)));
  };
  if (call.tuple_input) {
    const Value& tuple = registers[input_registers[0]];
    if (!tuple || tuple->kind() != ObjectKind::kTuple) {
      Fail(ErrorKind::kRuntime, "operator " + call.op + " given " + KindName(tuple));
    }
    for (const Value& field : static_cast<const Tuple*>(tuple.get())->fields()) add_tensor(field);
  } else {
    for (int32_t reg : input_registers) add_tensor(registers[reg]);
  }
  return tensors;
}

const Ref<Tensor>* VirtualMachine::KeptShapeResult(int32_t kernel,
                                                   std::span<const int32_t> input_registers,
                                                   const Value* registers) const {
  const CallSite& site = call_sites_[kernel];
  if (!site.shape_only || !site.shape_result || input_registers.size() != 1) return nullptr;
  const Tensor* input = AsTensor(registers[input_registers[0]]);
  if (input == nullptr || input->shape() != site.shape_input) return nullptr;
  return &site.shape_result;
}

void VirtualMachine::KeepShapeResult(int32_t kernel, const Tensor& input, const Tensor& result) {
  CallSite& site = call_sites_[kernel];
  if (!site.shape_only) return;
  // A copy on the host: the result may be a view into a block the next
  // call reuses, or on a device.
  Ref<Tensor> kept = CopyTensor(result, HostDevice());
  kept->MarkImmutable();
  site.shape_input = input.shape();
  site.shape_result = std::move(kept);
}

Value VirtualMachine::CallKernel(int32_t kernel, std::span<const int32_t> input_registers,
                                 const Value* registers) {
  if (const Ref<Tensor>* kept = KeptShapeResult(kernel, input_registers, registers)) return *kept;
  const KernelCall& call = executable_->kernels[kernel];
  std::vector<Ref<Tensor>>& tensors = GatherKernelInputs(call, input_registers, registers);
  // Under a budget its inputs are made resident, and kept so for the call.
  std::optional<Rematerializer::Pin> resident;
  if (Rematerializing()) resident.emplace(*rematerializer_, tensors);
  try {
    if (call_sites_[kernel].shape_only && tensors.size() == 1 && !tensors[0]->on_host()) {
      Ref<Tensor> result = HostShapeResult(call, *tensors[0]);
      KeepShapeResult(kernel, *tensors[0], *result);
      return result;
    }
    if (call.external) return CallExternalKernel(kernel, tensors);
    if (const std::optional<DeviceId>& destination = call_sites_[kernel].move_to) {
      if (tensors.size() != 1) Fail(ErrorKind::kRuntime, call.op + " takes one tensor");
      Device& device = DeviceNamed(*destination);
      if (tensors[0]->storage()->device() == &device) return tensors[0];
      return CopyTensor(*tensors[0], device);
    }
    PlaceKernelInputs(kernel, tensors, nullptr);
    if (Rematerializing()) return CallRecordedKernel(kernel, tensors);
    Value result = InvokeKernel(kernel, tensors);
    if (call_sites_[kernel].shape_only && tensors.size() == 1 && AsTensor(result) != nullptr)
      KeepShapeResult(kernel, *tensors[0], *AsTensor(result));
    return result;
  } catch (const Error& error) {
    FailInKernel(error);
  }
}

Value VirtualMachine::CallRecordedKernel(int32_t kernel, std::vector<Ref<Tensor>>& tensors) {
  // (CallKernel keeps its inputs resident while its results are allocated.)
  std::vector<Ref<Tensor>> inputs = tensors;
  const auto start = std::chrono::steady_clock::now();
  Value result = InvokeKernel(kernel, inputs);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::vector<Ref<Tensor>> outputs;
  if (const Tensor* tensor = AsTensor(result)) {
    // A 0-d result may be a recycled scalar (InvokeKernel): not recorded,
    // so never evicted.
    if (tensor->ndim() > 0) outputs.push_back(Ref<Tensor>(const_cast<Tensor*>(tensor)));
  } else if (result && result->kind() == ObjectKind::kTuple) {
    for (const Value& field : static_cast<const Tuple*>(result.get())->fields()) {
      outputs.push_back(Ref<Tensor>(const_cast<Tensor*>(AsTensor(field))));
    }
  }
  if (!outputs.empty()) {
    rematerializer_->Record(kernel, inputs, outputs,
                            std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed));
  }
  if (call_sites_[kernel].shape_only && inputs.size() == 1 && AsTensor(result) != nullptr)
    KeepShapeResult(kernel, *inputs[0], *AsTensor(result));
  return result;
}

Value VirtualMachine::CallExternalKernel(int32_t kernel, std::vector<Ref<Tensor>>& tensors) {
  const Profiler::Clock::time_point start =
      profiler_ != nullptr ? Profiler::Clock::now() : Profiler::Clock::time_point();
  const KernelCall::External& external = *executable_->kernels[kernel].external;
  Ref<Tensor> result = external.function->Run(tensors);
  if (profiler_ != nullptr) {
    profiler_->RecordKernel(kernel, tensors, result->byte_size(), start, Profiler::Clock::now());
  }
  return result;
}

Value VirtualMachine::KernelResultShape(int32_t kernel, std::span<const int32_t> input_registers,
                                        const Value* registers) {
  std::vector<Ref<Tensor>>& tensors =
      GatherKernelInputs(executable_->kernels[kernel], input_registers, registers);
  std::optional<Rematerializer::Pin> resident;
  if (Rematerializing()) resident.emplace(*rematerializer_, tensors);
  try {
    // Where the call will run: its kernel is prepared there, once, for both.
    PlaceKernelInputs(kernel, tensors, nullptr);
    return ShapeToTensor(PrepareKernel(kernel, tensors).kernels.at(0).output_shape);
  } catch (const Error& error) {
    FailInKernel(error);
  }
}

void VirtualMachine::CallKernelInto(int32_t kernel, std::span<const int32_t> registers_list,
                                    const Value* registers) {
  const KernelCall& call = executable_->kernels[kernel];
  const Tensor* output = AsTensor(registers[registers_list.back()]);
  if (output == nullptr) {
    Fail(ErrorKind::kRuntime, "operator " + call.op + " given " +
                                  KindName(registers[registers_list.back()]) + " to write into");
  }
  if (Rematerializing()) {
    rematerializer_->Touch(*output);
    rematerializer_->BeforeOverwrite(*output);
  }
  if (const Ref<Tensor>* kept =
          KeptShapeResult(kernel, registers_list.first(registers_list.size() - 1), registers)) {
    if (output->shape() == (*kept)->shape() && output->dtype() == (*kept)->dtype()) {
      if (output->on_host()) {
        std::memcpy(output->host_data(), (*kept)->host_data(), output->byte_size());
      } else {
        output->storage()->device()->CopyFromHost((*kept)->host_data(), output->storage()->handle(),
                                                  output->byte_offset(), output->byte_size());
      }
      return;
    }
  }
  std::vector<Ref<Tensor>>& tensors =
      GatherKernelInputs(call, registers_list.first(registers_list.size() - 1), registers);
  std::optional<Rematerializer::Pin> resident;
  if (Rematerializing()) resident.emplace(*rematerializer_, tensors);
  try {
    PlaceKernelInputs(kernel, tensors, output);
  } catch (const Error& error) {
    FailInKernel(error);
  }
  const kernels::PreparedKernel* prepared = nullptr;
  const Profiler::Clock::time_point prepare_start =
      profiler_ != nullptr ? Profiler::Clock::now() : Profiler::Clock::time_point();
  try {
    prepared = &PrepareKernel(kernel, tensors).kernels.at(0);
  } catch (const Error& error) {
    FailInKernel(error);
  }
  if (output->shape() != prepared->output_shape || output->dtype() != prepared->output_dtype) {
    Fail(ErrorKind::kRuntime, "operator " + call.op +
                                  " given an output tensor of another shape or dtype than it "
                                  "computes");
  }
  // A kernel reads its inputs while it writes: they must not share bytes
  // (blocks of one storage; different storages never overlap).
  const size_t out_begin = output->byte_offset();
  const size_t out_end = out_begin + output->byte_size();
  for (const Ref<Tensor>& input : tensors) {
    const size_t in_begin = input->byte_offset();
    if (input->storage() == output->storage() && in_begin < out_end &&
        out_begin < in_begin + input->byte_size()) {
      Fail(ErrorKind::kRuntime, "operator " + call.op + " writes over one of its inputs");
    }
  }
  if (Rematerializing()) {
    std::vector<Ref<Tensor>> inputs = tensors;
    std::vector<Ref<Tensor>> outputs = {Ref<Tensor>(const_cast<Tensor*>(output))};
    Rematerializer::Pin pin_output(*rematerializer_, outputs);
    const auto start = std::chrono::steady_clock::now();
    prepared->LaunchInto(inputs, *output);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    rematerializer_->Record(kernel, inputs, outputs,
                            std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed));
  } else if (profiler_ == nullptr) {
    prepared->LaunchInto(tensors, *output);
  } else {
    const Profiler::Clock::time_point start = Profiler::Clock::now();
    profiler_->RecordPreparation(prepare_start, start);
    prepared->LaunchInto(tensors, *output);
    if (prepared->device != nullptr) prepared->device->Synchronize();  // timed to its end
    profiler_->RecordKernel(kernel, tensors, output->byte_size(), start, Profiler::Clock::now());
  }
  if (call_sites_[kernel].shape_only && tensors.size() == 1)
    KeepShapeResult(kernel, *tensors[0], *output);
}

Value VirtualMachine::AllocateStorage(const Tensor& size_constant) {
  // Under a budget the planned blocks step aside (set_memory_budget): an
  // empty storage stands for the block, and each tensor gets its own.
  if (Rematerializing()) return Storage::Allocate(HostDevice(), 0);
  try {
    return Storage::Allocate(device_ != nullptr ? *device_ : HostDevice(),
                             DecodeByteSize(size_constant));
  } catch (const Error& error) {
    FailInKernel(error);  // out of memory, at the instruction
  }
}

Value VirtualMachine::AllocateTensor(const Value& storage, const Tensor& layout_constant) {
  if (!storage || storage->kind() != ObjectKind::kStorage) {
    Fail(ErrorKind::kRuntime, "alloc_tensor given " + KindName(storage) + ", not a storage");
  }
  const TensorLayout layout = DecodeTensorLayout(layout_constant);  // verified when loaded
  try {
    if (Rematerializing()) return Tensor::Empty(HostDevice(), layout.shape, layout.dtype);
    return Tensor::View(
        Ref<Storage>(const_cast<Storage*>(static_cast<const Storage*>(storage.get()))),
        layout.byte_offset, layout.shape, layout.dtype);
  } catch (const Error& error) {
    FailInKernel(error);  // the layout does not fit the storage
  }
}

Value VirtualMachine::AllocateTensorOfShape(const Value& shape, int32_t dtype) {
  const Tensor* shape_tensor = AsTensor(shape);
  if (shape_tensor == nullptr) {
    Fail(ErrorKind::kRuntime, "alloc_tensor_reg given " + KindName(shape) + " as a shape");
  }
  if (Rematerializing()) rematerializer_->Touch(*shape_tensor);
  try {
    const Shape dims = shape_tensor->on_host()
                           ? ShapeFromTensor(*shape_tensor)
                           : ShapeFromTensor(*CopyTensor(*shape_tensor, HostDevice()));
    return Tensor::Empty(device_ != nullptr ? *device_ : HostDevice(), dims,
                         static_cast<DType>(dtype));
  } catch (const Error& error) {
    FailInKernel(error);
  }
}

std::optional<Value> VirtualMachine::Run(uint64_t budget) {
  const Executable& executable = *executable_;
  const uint64_t budget_given = budget;  // what is spent is the instructions executed
  std::optional<Value> result;           // set by the outermost ret

  // The current frame, cached: enter_frame() reloads it after anything that
  // changes frames_ or registers_ (calls and returns). Each instruction, as
  // it starts, stores where its frame goes on, so that errors (Fail,
  // Backtrace) and a call's return find it; a jump only sets `next`, which
  // the next start or a pause stores. (Helpers take these by value: a
  // lambda capturing them by reference, if not inlined, would keep them in
  // memory for the whole loop.)
  Frame* frame = nullptr;
  const Function* function = nullptr;
  const Instruction* next = nullptr;
  Value* registers = nullptr;
  auto enter_frame = [&] {
    frame = &frames_.back();
    function = &executable.functions[frame->function];
    next = frame->next;
    registers = registers_.data() + frame->base;
  };
  const Instruction* instruction = nullptr;  // the one running
  auto operand = [&](size_t index) { return instruction->operands[index]; };
  auto list = [&] { return function->ListOf(*instruction); };
  auto jump = [&](int32_t target) { next = function->code.data() + target; };

  // Between instructions: stop when the budget is spent, else start the
  // next one (dispatch.h runs this before every instruction in both modes).
#define RELAY_VM_FETCH()          \
  do {                            \
    if (budget == 0) goto paused; \
    --budget;                     \
    instruction = next++;         \
    frame->next = next;           \
  } while (false)
#define RELAY_VM_OPCODE() (instruction->opcode)

  RELAY_VM_HANDLER_TABLE = {
#define RELAY_OPCODE RELAY_VM_HANDLER_TABLE_ENTRY
#include "vm/bytecode/isa.def"
#undef RELAY_OPCODE
  };

  try {
    enter_frame();
    RELAY_VM_DISPATCH_BEGIN()
    RELAY_VM_CASE(kMove) {
      registers[operand(0)] = registers[operand(1)];
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kExchange) {
      std::swap(registers[operand(0)], registers[operand(1)]);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kLoadConst) {
      registers[operand(0)] = executable.constants[operand(1)];
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kInvoke) {
      PushFrame(operand(1), GatherArguments(list(), registers), operand(0), Value());
      if (profiler_ != nullptr) profiler_->EnterFunction(operand(1));
      enter_frame();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kTailInvoke) {
      ReplaceFrame(operand(0), GatherArguments(list(), registers), Value());
      if (profiler_ != nullptr) {
        profiler_->LeaveFunction();
        profiler_->EnterFunction(operand(0));
      }
      enter_frame();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kInvokeClosure) {
      CallClosure(registers[operand(1)], list(), registers, operand(0), /*tail=*/false);
      if (profiler_ != nullptr) profiler_->EnterFunction(frames_.back().function);
      enter_frame();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kTailInvokeClosure) {
      CallClosure(registers[operand(0)], list(), registers, 0, /*tail=*/true);
      if (profiler_ != nullptr) {
        profiler_->LeaveFunction();
        profiler_->EnterFunction(frames_.back().function);
      }
      enter_frame();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kRet) {
      if (profiler_ != nullptr) profiler_->LeaveFunction();
      if (frames_.size() == 1) {
        result = std::move(registers[operand(0)]);
        registers_.clear();
        frames_.pop_back();
        goto finished;
      }
      const Frame& caller = frames_[frames_.size() - 2];
      registers_[caller.base + frame->return_register] = std::move(registers[operand(0)]);
      registers_.resize(frame->base);
      frames_.pop_back();
      enter_frame();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kInvokeKernel) {
      if (!RunScalarKernel(operand(1), list(), registers, operand(0)))
        registers[operand(0)] = CallKernel(operand(1), list(), registers);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocTuple) {
      registers[operand(0)] = MakeRef<Tuple>(std::move(GatherArguments(list(), registers)));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocAdt) {
      registers[operand(0)] =
          MakeRef<Constructed>(operand(1), std::move(GatherArguments(list(), registers)));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocClosure) {
      registers[operand(0)] =
          MakeRef<Closure>(operand(1), std::move(GatherArguments(list(), registers)));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kGetField) {
      const Value& value = registers[operand(1)];
      const std::vector<Value>* fields = nullptr;
      if (value && value->kind() == ObjectKind::kTuple) {
        fields = &static_cast<const Tuple*>(value.get())->fields();
      } else if (value && value->kind() == ObjectKind::kConstructed) {
        fields = &static_cast<const Constructed*>(value.get())->fields();
      }
      if (fields == nullptr || size_t(operand(2)) >= fields->size()) {
        Fail(ErrorKind::kRuntime, "field " + std::to_string(operand(2)) + " of " + KindName(value));
      }
      registers[operand(0)] = (*fields)[operand(2)];
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kLoadSelf) {
      if (!frame->self) Fail(ErrorKind::kRuntime, "load_self outside a closure");
      registers[operand(0)] = frame->self;
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kGoto) {
      jump(operand(0));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kIfFalse) {
      const Tensor* condition = AsTensor(registers[operand(0)]);
      if (condition == nullptr || condition->dtype() != DType::kBool ||
          condition->element_count() != 1) {
        Fail(ErrorKind::kRuntime,
             "a condition must be a bool scalar, got " + KindName(registers[operand(0)]));
      }
      if (Rematerializing()) rematerializer_->Touch(*condition);
      uint8_t holds = 0;
      if (condition->on_host()) {
        holds = *static_cast<const uint8_t*>(condition->host_data());
      } else {
        // Computed on the device: read back, after the work queued there.
        condition->storage()->device()->CopyToHost(condition->storage()->handle(),
                                                   condition->byte_offset(), &holds, 1);
      }
      if (holds == 0) jump(operand(1));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kIfTagNot) {
      const Value& value = registers[operand(0)];
      if (!value || value->kind() != ObjectKind::kConstructed) {
        Fail(ErrorKind::kRuntime, "matching " + KindName(value) + " against a constructor");
      }
      if (static_cast<const Constructed*>(value.get())->tag() != operand(1)) jump(operand(2));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocRef) {
      registers[operand(0)] = MakeRef<Reference>(registers[operand(1)]);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kRefRead) {
      const Value& value = registers[operand(1)];
      if (!value || value->kind() != ObjectKind::kReference) {
        Fail(ErrorKind::kRuntime, "reading " + KindName(value) + " as a reference");
      }
      registers[operand(0)] = static_cast<const Reference*>(value.get())->Read();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kRefWrite) {
      const Value& value = registers[operand(0)];
      if (!value || value->kind() != ObjectKind::kReference) {
        Fail(ErrorKind::kRuntime, "writing " + KindName(value) + " as a reference");
      }
      const_cast<Reference*>(static_cast<const Reference*>(value.get()))
          ->Write(registers[operand(1)]);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocStorage) {
      registers[operand(0)] =
          AllocateStorage(static_cast<const Tensor&>(*executable.constants[operand(1)]));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocTensor) {
      registers[operand(0)] = AllocateTensor(
          registers[operand(1)], static_cast<const Tensor&>(*executable.constants[operand(2)]));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kAllocTensorReg) {
      registers[operand(0)] = AllocateTensorOfShape(registers[operand(1)], operand(2));
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kInvokeShapeFunc) {
      registers[operand(0)] = KernelResultShape(operand(1), list(), registers);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kInvokeKernelOut) {
      CallKernelInto(operand(0), list(), registers);
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kKill) {
      registers[operand(0)] = Value();
      RELAY_VM_NEXT();
    }
    RELAY_VM_CASE(kFatal) {
      Fail(ErrorKind::kRuntime, executable.strings[operand(0)]);
    }
    RELAY_VM_DISPATCH_END()

  paused:                // the frames hold everything needed to go on
    frame->next = next;  // a jump's target, if the last instruction jumped
  } catch (...) {
    instructions_executed_ += budget_given - budget;
    throw;
  }
#undef RELAY_VM_FETCH
#undef RELAY_VM_OPCODE

finished:
  instructions_executed_ += budget_given - budget;
  return result;
}

Value ValueOnHost(const Value& value) {
  // Post-order over tuples and ADT values with an explicit stack: a list of
  // a million elements is a million nested values.
  struct Pending {
    explicit Pending(const Object* pending_object) : object(pending_object) {}
    const Object* object;
    size_t next_field = 0;
    std::vector<Value> fields;  // done so far
    bool changed = false;       // whether one of them moved
  };
  auto fields_of = [](const Object* object) -> const std::vector<Value>* {
    if (object->kind() == ObjectKind::kTuple) return &static_cast<const Tuple*>(object)->fields();
    if (object->kind() == ObjectKind::kConstructed)
      return &static_cast<const Constructed*>(object)->fields();
    return nullptr;
  };
  auto leaf = [](const Value& leaf_value) -> Value {
    const Tensor* tensor = AsTensor(leaf_value);
    if (tensor == nullptr || tensor->on_host()) return leaf_value;
    return CopyTensor(*tensor, HostDevice());
  };
  if (!value || fields_of(value.get()) == nullptr) return leaf(value);
  std::vector<Pending> stack;
  stack.emplace_back(value.get());
  while (true) {
    Pending& top = stack.back();
    const std::vector<Value>& fields = *fields_of(top.object);
    if (top.next_field < fields.size()) {
      const Value& field = fields[top.next_field++];
      if (field && fields_of(field.get()) != nullptr) {
        stack.emplace_back(field.get());
        continue;
      }
      Value moved = leaf(field);
      top.changed |= moved.get() != field.get();
      top.fields.push_back(std::move(moved));
      continue;
    }
    Value rebuilt;
    if (!top.changed) {
      rebuilt = Value(const_cast<Object*>(top.object));
    } else if (top.object->kind() == ObjectKind::kTuple) {
      rebuilt = MakeRef<Tuple>(std::move(top.fields));
    } else {
      rebuilt = MakeRef<Constructed>(static_cast<const Constructed*>(top.object)->tag(),
                                     std::move(top.fields));
    }
    const bool moved = top.changed;
    stack.pop_back();
    if (stack.empty()) return rebuilt;
    stack.back().changed |= moved;
    stack.back().fields.push_back(std::move(rebuilt));
  }
}

}  // namespace relay::vm
