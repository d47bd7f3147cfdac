#include "vm/interpreter/virtual_machine.h"

#include <optional>
#include <utility>

#include "kernels/compute/cpu_kernels.h"
#include "relay/error.h"
#include "relay/tensor.h"

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
    if (call.fused.empty() && !call.tuple_input && !call.tuple_result)
      call_sites_[index].scalar = ScalarOperatorFor(call.op, call.attrs);
  }
}

Value VirtualMachine::InvokeKernel(int32_t kernel, const std::vector<Ref<Tensor>>& tensors) {
  const KernelCall& call = executable_->kernels[kernel];
  CallSite& site = call_sites_[kernel];
  if (site.scalar != ScalarOperator::kNone) {
    if (Ref<Tensor> result = RunScalarOperator(site.scalar, tensors, scalar_pool_)) return result;
  }
  const kernels::PreparedOperator& prepared = site.prepared.For(tensors, [&] {
    return !call.fused.empty()
               ? kernels::PrepareFusedOperators(call.fused, tensors)
               : kernels::PrepareOperator(
                     call.op, tensors, call.attrs,
                     call.tuple_input ? kernels::InputForm::kTuple : kernels::InputForm::kTensors);
  });
  if (!prepared.tuple_result) return prepared.kernels[0].Launch(tensors);
  std::vector<Ref<Tensor>> results = prepared.Run(tensors);
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
  registers_.clear();
  frames_.clear();
  std::vector<Value> values(arguments.begin(), arguments.end());
  PushFrame(index, values, 0, Value());
}

std::optional<Value> VirtualMachine::Resume(uint64_t budget) {
  if (frames_.empty()) throw Error(ErrorKind::kUsage, "no run to resume: Start one first");
  try {
    std::optional<Value> result = Run(budget);
    if (result) registers_.clear();
    return result;
  } catch (...) {
    registers_.clear();
    frames_.clear();
    throw;
  }
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
  frames_.push_back(Frame{function, 0, base, return_register, std::move(self)});
}

void VirtualMachine::ReplaceFrame(int32_t function, std::vector<Value>& arguments, Value self) {
  Frame& frame = frames_.back();
  const Function& callee = executable_->functions[function];
  registers_.resize(frame.base);  // releases the caller's values
  registers_.resize(frame.base + callee.register_count);
  for (size_t index = 0; index < arguments.size(); ++index)
    registers_[frame.base + index] = std::move(arguments[index]);
  frame.function = function;
  frame.pc = 0;
  frame.self = std::move(self);
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
    const uint32_t pc = frame.pc == 0 ? 0 : frame.pc - 1;
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
    const uint32_t pc = frame.pc == 0 ? 0 : frame.pc - 1;
    if (pc < function.code.size() && function.code[pc].location.line > 0) {
      span = SourceSpan{function.source, function.code[pc].location.line,
                        function.code[pc].location.column, 0, 0};
    }
  }
  throw Error(kind, message, std::move(span), Backtrace());
}

std::optional<Value> VirtualMachine::Run(uint64_t budget) {
  const Executable& executable = *executable_;
  std::vector<Value> arguments;
  for (; budget != 0; --budget) {
    Frame& frame = frames_.back();
    const Function& function = executable.functions[frame.function];
    const Instruction& instruction = function.code[frame.pc++];
    Value* registers = registers_.data() + frame.base;
    const auto& operand = instruction.operands;
    ++instructions_executed_;
    auto gather = [&](size_t first_reserved) {
      arguments.clear();
      arguments.reserve(first_reserved + instruction.list_size);
      for (int32_t reg : function.ListOf(instruction)) arguments.push_back(registers[reg]);
    };
    switch (instruction.opcode) {
      case Opcode::kMove:
        registers[operand[0]] = registers[operand[1]];
        break;
      case Opcode::kLoadConst:
        registers[operand[0]] = executable.constants[operand[1]];
        break;
      case Opcode::kInvoke:
        gather(0);
        PushFrame(operand[1], arguments, operand[0], Value());
        break;
      case Opcode::kTailInvoke:
        gather(0);
        ReplaceFrame(operand[0], arguments, Value());
        break;
      case Opcode::kInvokeClosure:
      case Opcode::kTailInvokeClosure: {
        const bool tail = instruction.opcode == Opcode::kTailInvokeClosure;
        Value callee = registers[operand[tail ? 0 : 1]];
        if (!callee || callee->kind() != ObjectKind::kClosure) {
          Fail(ErrorKind::kRuntime, "calling " + KindName(callee) + ", not a closure");
        }
        const auto* closure = static_cast<const Closure*>(callee.get());
        const Function& target = executable.functions[closure->function()];
        arguments.assign(closure->captured().begin(), closure->captured().end());
        for (int32_t reg : function.ListOf(instruction)) arguments.push_back(registers[reg]);
        if (arguments.size() != target.param_count) {
          Fail(ErrorKind::kRuntime, "closure of " + target.name + " called with " +
                                        std::to_string(instruction.list_size) + " arguments");
        }
        if (tail) {
          ReplaceFrame(closure->function(), arguments, std::move(callee));
        } else {
          PushFrame(closure->function(), arguments, operand[0], std::move(callee));
        }
        break;
      }
      case Opcode::kRet: {
        Value result = std::move(registers[operand[0]]);
        const int32_t destination = frame.return_register;
        registers_.resize(frame.base);
        frames_.pop_back();
        if (frames_.empty()) return result;
        registers_[frames_.back().base + destination] = std::move(result);
        break;
      }
      case Opcode::kInvokeKernel: {
        const KernelCall& call = executable.kernels[operand[1]];
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
          const Value& tuple = registers[function.ListOf(instruction)[0]];
          if (!tuple || tuple->kind() != ObjectKind::kTuple) {
            Fail(ErrorKind::kRuntime, "operator " + call.op + " given " + KindName(tuple));
          }
          for (const Value& field : static_cast<const Tuple*>(tuple.get())->fields())
            add_tensor(field);
        } else {
          for (int32_t reg : function.ListOf(instruction)) add_tensor(registers[reg]);
        }
        try {
          registers[operand[0]] = InvokeKernel(operand[1], tensors);
        } catch (const Error& error) {
          // Shapes only known at run time reach the kernels here: the
          // kernel's complaint, located in the program.
          Fail(error.kind() == ErrorKind::kUsage ? ErrorKind::kRuntime : error.kind(),
               error.message());
        }
        break;
      }
      case Opcode::kAllocTuple:
        gather(0);
        registers[operand[0]] = MakeRef<Tuple>(arguments);
        break;
      case Opcode::kAllocAdt:
        gather(0);
        registers[operand[0]] = MakeRef<Constructed>(operand[1], arguments);
        break;
      case Opcode::kAllocClosure:
        gather(0);
        registers[operand[0]] = MakeRef<Closure>(operand[1], arguments);
        break;
      case Opcode::kGetField: {
        const Value& value = registers[operand[1]];
        const std::vector<Value>* fields = nullptr;
        if (value && value->kind() == ObjectKind::kTuple) {
          fields = &static_cast<const Tuple*>(value.get())->fields();
        } else if (value && value->kind() == ObjectKind::kConstructed) {
          fields = &static_cast<const Constructed*>(value.get())->fields();
        }
        if (fields == nullptr || size_t(operand[2]) >= fields->size()) {
          Fail(ErrorKind::kRuntime,
               "field " + std::to_string(operand[2]) + " of " + KindName(value));
        }
        registers[operand[0]] = (*fields)[operand[2]];
        break;
      }
      case Opcode::kLoadSelf:
        if (!frame.self) Fail(ErrorKind::kRuntime, "load_self outside a closure");
        registers[operand[0]] = frame.self;
        break;
      case Opcode::kGoto:
        frame.pc = static_cast<uint32_t>(operand[0]);
        break;
      case Opcode::kIfFalse: {
        const Tensor* condition = AsTensor(registers[operand[0]]);
        if (condition == nullptr || condition->dtype() != DType::kBool ||
            condition->element_count() != 1 || condition->device_id().kind != DeviceKind::kCPU) {
          Fail(ErrorKind::kRuntime, "a condition must be a bool scalar on the host, got " +
                                        KindName(registers[operand[0]]));
        }
        if (*static_cast<const uint8_t*>(condition->host_data()) == 0)
          frame.pc = static_cast<uint32_t>(operand[1]);
        break;
      }
      case Opcode::kIfTagNot: {
        const Value& value = registers[operand[0]];
        if (!value || value->kind() != ObjectKind::kConstructed) {
          Fail(ErrorKind::kRuntime, "matching " + KindName(value) + " against a constructor");
        }
        if (static_cast<const Constructed*>(value.get())->tag() != operand[1])
          frame.pc = static_cast<uint32_t>(operand[2]);
        break;
      }
      case Opcode::kAllocRef:
        registers[operand[0]] = MakeRef<Reference>(registers[operand[1]]);
        break;
      case Opcode::kRefRead: {
        const Value& value = registers[operand[1]];
        if (!value || value->kind() != ObjectKind::kReference) {
          Fail(ErrorKind::kRuntime, "reading " + KindName(value) + " as a reference");
        }
        registers[operand[0]] = static_cast<const Reference*>(value.get())->Read();
        break;
      }
      case Opcode::kRefWrite: {
        const Value& value = registers[operand[0]];
        if (!value || value->kind() != ObjectKind::kReference) {
          Fail(ErrorKind::kRuntime, "writing " + KindName(value) + " as a reference");
        }
        const_cast<Reference*>(static_cast<const Reference*>(value.get()))
            ->Write(registers[operand[1]]);
        break;
      }
      case Opcode::kKill:
        registers[operand[0]] = Value();
        break;
      case Opcode::kFatal:
        Fail(ErrorKind::kRuntime, executable.strings[operand[0]]);
    }
  }
  return std::nullopt;  // paused: the frames hold everything needed to go on
}

}  // namespace relay::vm
