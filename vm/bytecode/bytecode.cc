#include "vm/bytecode/bytecode.h"

#include <algorithm>
#include <sstream>

#include "relay/device.h"
#include "relay/error.h"
#include "vm/bytecode/tensor_layout.h"

namespace relay::vm {

namespace {

const std::vector<OpcodeInfo>& OpcodeTable() {
  using enum OperandKind;
  static const std::vector<OpcodeInfo> table = {
#define RELAY_OPCODE(name, mnemonic, ...) {mnemonic, {__VA_ARGS__}},
#include "vm/bytecode/isa.def"
#undef RELAY_OPCODE
  };
  return table;
}

[[noreturn]] void Reject(const Function& function, size_t pc, const std::string& problem) {
  throw Error(ErrorKind::kLoad, "invalid bytecode in " + function.name + " at instruction " +
                                    std::to_string(pc) + ": " + problem);
}

// A debug variable of `function` (its position in `variables`) at fault.
[[noreturn]] void RejectVariable(const Function& function, size_t index,
                                 const std::string& problem) {
  const std::string& name = function.variables[index].name;
  throw Error(ErrorKind::kLoad, "invalid debug information in " + function.name + ": variable " +
                                    std::to_string(index) +
                                    (name.empty() ? "" : " (%" + name + ")") + " " + problem);
}

}  // namespace

const OpcodeInfo& InfoOf(Opcode opcode) {
  return OpcodeTable().at(static_cast<size_t>(opcode));
}

int32_t Executable::FindFunction(std::string_view name) const {
  if (!name.empty() && name.front() == '@') name.remove_prefix(1);
  for (size_t index = 0; index < functions.size(); ++index) {
    std::string_view candidate = functions[index].name;
    if (!candidate.empty() && candidate.front() == '@') candidate.remove_prefix(1);
    if (candidate == name) return static_cast<int32_t>(index);
  }
  return -1;
}

ValuePrintOptions Executable::PrintOptions() const {
  ValuePrintOptions options;
  // The executable outlives the printing of its values.
  options.constructor_name = [this](int32_t tag) {
    return tag >= 0 && size_t(tag) < constructors.size() ? constructors[tag].name
                                                         : "Constructor#" + std::to_string(tag);
  };
  options.function_name = [this](int32_t index) {
    return index >= 0 && size_t(index) < functions.size() ? functions[index].name
                                                          : "#" + std::to_string(index);
  };
  return options;
}

namespace {

const Tensor& ConstantTensor(const Executable& executable, int32_t index) {
  return static_cast<const Tensor&>(*executable.constants[size_t(index)]);
}

// Runs `decode` on an instruction's metadata constant; its complaint is the
// instruction's.
template <typename Decode>
void CheckMetadata(const Function& function, size_t pc, Decode decode) {
  try {
    decode();
  } catch (const Error& error) {
    Reject(function, pc, error.message());
  }
}

// A kernel given `input_count` registers; `tensor_result`: the instruction
// needs its result to be one tensor (explicit memory, shape functions).
void CheckKernelCall(const Function& function, size_t pc, const KernelCall& call,
                     size_t input_count, bool tensor_result) {
  if (call.tuple_input && input_count != 1) {
    Reject(function, pc, "kernel " + call.op + " takes one tuple register");
  }
  if (tensor_result && call.tuple_result) {
    Reject(function, pc, "kernel " + call.op + " has a tuple result");
  }
  for (size_t position = 0; position < call.fused.size(); ++position) {
    if (call.tuple_input || call.tuple_result) {
      Reject(function, pc, "a fused kernel with tuple values");
    }
    for (int32_t input : call.fused[position].inputs) {
      const bool valid =
          input >= 0 ? uint32_t(input) < input_count : size_t(-1 - int64_t(input)) < position;
      if (!valid) Reject(function, pc, "fused kernel " + call.op + " refers to a missing value");
    }
  }
}

}  // namespace

void Verify(const Executable& executable) {
  for (const Value& constant : executable.constants) {
    if (!constant || constant->kind() != ObjectKind::kTensor) {
      throw Error(ErrorKind::kLoad, "invalid bytecode: a constant is not a tensor");
    }
  }
  for (const Function& function : executable.functions) {
    if (function.param_count > function.register_count ||
        function.captured_count > function.param_count) {
      throw Error(ErrorKind::kLoad,
                  "invalid bytecode in " + function.name + ": more parameters than registers");
    }
    if (function.code.empty()) Reject(function, 0, "empty function");
    for (size_t pc = 0; pc < function.code.size(); ++pc) {
      const Instruction& instruction = function.code[pc];
      if (static_cast<size_t>(instruction.opcode) >= kOpcodeCount) {
        Reject(function, pc, "unknown opcode " + std::to_string(int(instruction.opcode)));
      }
      const OpcodeInfo& info = InfoOf(instruction.opcode);
      if (uint64_t(instruction.list_begin) + instruction.list_size > function.lists.size()) {
        Reject(function, pc, "register list out of range");
      }
      for (int32_t reg : function.ListOf(instruction)) {
        if (reg < 0 || uint32_t(reg) >= function.register_count) {
          Reject(function, pc, "register " + std::to_string(reg) + " out of range");
        }
      }
      size_t position = 0;
      for (OperandKind kind : info.operands) {
        if (kind == OperandKind::kList) continue;
        const int64_t operand = instruction.operands[position++];
        auto check = [&](size_t bound, const char* what) {
          if (operand < 0 || uint64_t(operand) >= bound) {
            Reject(function, pc,
                   std::string(what) + " " + std::to_string(operand) + " out of range (" +
                       std::to_string(bound) + ")");
          }
        };
        switch (kind) {
          case OperandKind::kDst:
          case OperandKind::kReg:
            check(function.register_count, "register");
            break;
          case OperandKind::kConst:
            check(executable.constants.size(), "constant");
            break;
          case OperandKind::kFunc:
            check(executable.functions.size(), "function");
            break;
          case OperandKind::kKernel:
            check(executable.kernels.size(), "kernel");
            break;
          case OperandKind::kTag:
            check(executable.constructors.size(), "constructor");
            break;
          case OperandKind::kIndex:
            check(uint64_t{1} << 31, "field index");
            break;
          case OperandKind::kTarget:
            check(function.code.size(), "jump target");
            break;
          case OperandKind::kString:
            check(executable.strings.size(), "string");
            break;
          case OperandKind::kList:
            break;
        }
      }
      // Arities that are known statically.
      const uint32_t list_size = instruction.list_size;
      switch (instruction.opcode) {
        case Opcode::kInvoke:
        case Opcode::kTailInvoke: {
          const Function& callee =
              executable.functions[instruction.operands[instruction.opcode == Opcode::kInvoke]];
          if (callee.captured_count != 0 || callee.param_count != list_size) {
            Reject(function, pc,
                   "call of " + callee.name + " with " + std::to_string(list_size) + " arguments");
          }
          break;
        }
        case Opcode::kInvokeKernel:
        case Opcode::kInvokeShapeFunc:
          CheckKernelCall(function, pc, executable.kernels[instruction.operands[1]], list_size,
                          instruction.opcode == Opcode::kInvokeShapeFunc);
          break;
        case Opcode::kInvokeKernelOut:
          if (list_size == 0) Reject(function, pc, "invoke_kernel_out without an output register");
          CheckKernelCall(function, pc, executable.kernels[instruction.operands[0]], list_size - 1,
                          true);
          break;
        case Opcode::kAllocStorage: {
          const int32_t alignment = instruction.operands[2];
          if (alignment <= 0 || (alignment & (alignment - 1)) != 0 ||
              size_t(alignment) > kAllocationAlignment) {
            Reject(function, pc,
                   "alignment " + std::to_string(alignment) + " (a power of two up to " +
                       std::to_string(kAllocationAlignment) + ")");
          }
          CheckMetadata(function, pc, [&] {
            DecodeByteSize(ConstantTensor(executable, instruction.operands[1]));
          });
          break;
        }
        case Opcode::kAllocTensor:
          CheckMetadata(function, pc, [&] {
            DecodeTensorLayout(ConstantTensor(executable, instruction.operands[2]));
          });
          break;
        case Opcode::kAllocTensorReg:
          if (instruction.operands[2] >= kDTypeCount) Reject(function, pc, "unknown dtype");
          break;
        case Opcode::kAllocAdt:
          if (executable.constructors[instruction.operands[1]].arity != list_size) {
            Reject(function, pc, "constructor arity mismatch");
          }
          break;
        case Opcode::kAllocClosure:
          if (executable.functions[instruction.operands[1]].captured_count != list_size) {
            Reject(function, pc, "closure captures the wrong number of values");
          }
          break;
        default:
          break;
      }
    }
    const Opcode last = function.code.back().opcode;
    if (last != Opcode::kRet && last != Opcode::kGoto && last != Opcode::kTailInvoke &&
        last != Opcode::kTailInvokeClosure && last != Opcode::kFatal) {
      Reject(function, function.code.size() - 1, "the function can run past its end");
    }
    for (size_t index = 0; index < function.variables.size(); ++index) {
      const VariableRange& variable = function.variables[index];
      if (variable.name.empty()) RejectVariable(function, index, "has no name");
      if (variable.reg < 0 || uint32_t(variable.reg) >= function.register_count) {
        RejectVariable(function, index,
                       "is in register " + std::to_string(variable.reg) + ", out of range (" +
                           std::to_string(function.register_count) + ")");
      }
      const std::string range =
          "[" + std::to_string(variable.begin) + ", " + std::to_string(variable.end) + ")";
      if (variable.begin > variable.end) {
        RejectVariable(function, index, "has an inverted instruction range " + range);
      }
      if (variable.end > function.code.size()) {
        RejectVariable(function, index,
                       "has instruction range " + range + " past the function's end (" +
                           std::to_string(function.code.size()) + " instructions)");
      }
    }
  }
}

void RemapJumpTargets(std::vector<Instruction>& code, const std::vector<int32_t>& new_position) {
  for (Instruction& instruction : code) {
    size_t position = 0;
    for (OperandKind kind : InfoOf(instruction.opcode).operands) {
      if (kind == OperandKind::kList) continue;
      if (kind == OperandKind::kTarget) {
        instruction.operands[position] = new_position[size_t(instruction.operands[position])];
      }
      ++position;
    }
  }
}

void RemapVariableRanges(std::vector<VariableRange>& variables,
                         const std::vector<int32_t>& new_position, size_t new_size) {
  // A range starts right after its first instruction's predecessor, so
  // that instructions inserted between the two (a kill, an allocation) are
  // in it: a function's parameters stay in scope from instruction 0.
  auto remap = [&](uint32_t position) -> uint32_t {
    if (position >= new_position.size()) return static_cast<uint32_t>(new_size);
    if (position == 0) return 0;
    return static_cast<uint32_t>(std::min(new_position[position], new_position[position - 1] + 1));
  };
  for (VariableRange& variable : variables) {
    variable.begin = remap(variable.begin);
    variable.end = std::max(variable.begin, remap(variable.end));
  }
}

std::string Disassemble(const Executable& executable) {
  std::string out;
  if (executable.default_device)
    out += "; runs on " + executable.default_device->ToString() + " unless told otherwise\n";
  for (size_t index = 0; index < executable.functions.size(); ++index)
    out += DisassembleFunction(executable, index);
  return out;
}

namespace {

// What an explicit-memory constant says: " (64 bytes)", " (+128 float32[4, 8])".
std::string DescribeMetadata(const Executable& executable, Opcode opcode, int32_t index) {
  if (size_t(index) >= executable.constants.size()) return "";
  try {
    if (opcode == Opcode::kAllocStorage) {
      return " (" + std::to_string(DecodeByteSize(ConstantTensor(executable, index))) + " bytes)";
    }
    if (opcode == Opcode::kAllocTensor) {
      const TensorLayout layout = DecodeTensorLayout(ConstantTensor(executable, index));
      std::string text = " (+" + std::to_string(layout.byte_offset) + " " +
                         std::string(DTypeName(layout.dtype)) + "[";
      for (size_t dim = 0; dim < layout.shape.size(); ++dim)
        text += (dim ? ", " : "") + std::to_string(layout.shape[dim]);
      return text + "])";
    }
  } catch (const Error&) {
    return " (malformed)";  // disassembling does not verify
  }
  return "";
}

}  // namespace

std::string DisassembleInstruction(const Executable& executable, size_t index, size_t pc) {
  const Function& function = executable.functions.at(index);
  const Instruction& instruction = function.code.at(pc);
  const OpcodeInfo& info = InfoOf(instruction.opcode);
  std::string text = std::to_string(pc) + ": " + std::string(info.mnemonic);
  size_t position = 0;
  bool first = true;
  for (OperandKind kind : info.operands) {
    text += first ? " " : ", ";
    first = false;
    if (kind == OperandKind::kList) {
      text += "[";
      bool first_item = true;
      for (int32_t reg : function.ListOf(instruction)) {
        text += (first_item ? "$" : ", $") + std::to_string(reg);
        first_item = false;
      }
      text += "]";
      continue;
    }
    const int32_t operand = instruction.operands[position++];
    switch (kind) {
      case OperandKind::kDst:
      case OperandKind::kReg:
        text += "$" + std::to_string(operand);
        break;
      case OperandKind::kFunc:
        text += size_t(operand) < executable.functions.size()
                    ? executable.functions[operand].name
                    : "function#" + std::to_string(operand);
        break;
      case OperandKind::kKernel:
        if (size_t(operand) < executable.kernels.size()) {
          const KernelCall& kernel = executable.kernels[operand];
          text += kernel.op;
          // Where the program placed it (on_device).
          if (kernel.device) text += "@" + kernel.device->ToString();
        } else {
          text += "kernel#" + std::to_string(operand);
        }
        break;
      case OperandKind::kTag:
        text += size_t(operand) < executable.constructors.size()
                    ? executable.constructors[operand].name
                    : "tag#" + std::to_string(operand);
        break;
      case OperandKind::kConst:
        text += "const#" + std::to_string(operand) +
                DescribeMetadata(executable, instruction.opcode, operand);
        break;
      case OperandKind::kTarget:
        text += "@" + std::to_string(operand);
        break;
      case OperandKind::kString:
        text += "string#" + std::to_string(operand);
        break;
      default:
        // alloc_tensor_reg's index is a dtype.
        if (instruction.opcode == Opcode::kAllocTensorReg && operand >= 0 &&
            operand < kDTypeCount) {
          text += DTypeName(static_cast<DType>(operand));
        } else {
          text += std::to_string(operand);
        }
        break;
    }
  }
  if (instruction.location.line > 0) {
    if (text.size() < 46) text.resize(46, ' ');
    text += "  ; line " + std::to_string(instruction.location.line);
  }
  return text;
}

std::string DisassembleFunction(const Executable& executable, size_t index) {
  std::ostringstream out;
  const Function& function = executable.functions.at(index);
  out << "function " << index << " " << function.name << " (params " << function.param_count;
  if (function.captured_count) out << ", captured " << function.captured_count;
  out << ", registers " << function.register_count << ")\n";
  for (size_t pc = 0; pc < function.code.size(); ++pc)
    out << "  " << DisassembleInstruction(executable, index, pc) << "\n";
  for (const VariableRange& variable : function.variables) {
    out << "  ; %" << variable.name << " in $" << variable.reg << " over [" << variable.begin
        << ", " << variable.end << ")\n";
  }
  return out.str();
}

}  // namespace relay::vm
