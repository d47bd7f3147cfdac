// Bytecode: the VM's instructions, functions and the executable that holds
// them (docs/architecture.md, "Bytecode and the VM").
//
// An Executable is what the bytecode compiler produces and the VM runs:
// functions of register-based instructions, the constants they load, the
// kernel table they invoke (operator calls, run by the CPU kernels), and the
// constructors their ADT values use. It is immutable once built or loaded
// and may be shared by any number of VirtualMachines on any threads.
//
// The instruction set is defined once, in isa.def; Opcode, the mnemonics,
// the operand layout, the verifier and the disassembler all derive from it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/external/external_codegen.h"
#include "relay/device.h"
#include "relay/dtype.h"
#include "relay/value.h"

namespace relay::vm {

enum class Opcode : uint8_t {
#define RELAY_OPCODE(name, mnemonic, ...) k##name,
#include "vm/bytecode/isa.def"
#undef RELAY_OPCODE
};

// What an operand indexes: a register written (kDst) or read (kReg), the
// executable's constants, functions, kernels, constructors (kTag) or
// strings, a field position, an instruction of the same function
// (kTarget), or the instruction's register list (kList, last when present).
enum class OperandKind : uint8_t {
  kDst,
  kReg,
  kConst,
  kFunc,
  kKernel,
  kTag,
  kIndex,
  kTarget,
  kString,
  kList,
};

struct OpcodeInfo {
  std::string_view mnemonic;
  std::vector<OperandKind> operands;  // in the instruction's order
};
const OpcodeInfo& InfoOf(Opcode opcode);
inline constexpr size_t kOpcodeCount = 0
#define RELAY_OPCODE(name, mnemonic, ...) +1
#include "vm/bytecode/isa.def"
#undef RELAY_OPCODE
    ;

// Where an instruction came from in the Relay source (line 0: unknown).
struct SourceLocation {
  int32_t line = 0;
  int32_t column = 0;
};

// One instruction: its fixed operands in table order (excluding the list),
// and its register list as a range of its function's `lists`.
struct Instruction {
  Opcode opcode = Opcode::kMove;
  std::array<int32_t, 3> operands{};
  uint32_t list_begin = 0;
  uint32_t list_size = 0;
  SourceLocation location;
};

// What a caller must pass for one parameter of an entry function: its name
// (without '%') and, for a tensor, its dtype and shape (-1 for `?`), so
// that inputs can be bound by name and checked before running.
struct ParamInfo {
  std::string name;
  bool is_tensor = false;  // false: a tuple, ADT, closure or reference
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string type_text;  // the Relay type, for messages: "Tensor[(?, 64), float32]"
};

// Debug information: Relay variable `name` (without '%') is held in
// register `reg` while instructions [begin, end) of its function run (its
// scope; a register killed after its last use holds nothing later on).
struct VariableRange {
  std::string name;
  int32_t reg = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
};

struct Function {
  std::string name;    // "@main", or "@main.lambda1" for a lifted closure body
  std::string source;  // the file its instructions' locations refer to
  // Parameters arrive in registers 0 .. param_count - 1: for a closure's
  // body, its captured values first, then the call's arguments.
  uint32_t param_count = 0;
  uint32_t captured_count = 0;  // of param_count, how many are captured values
  uint32_t register_count = 0;
  std::vector<Instruction> code;
  std::vector<int32_t> lists;     // register lists of the instructions
  std::vector<ParamInfo> params;  // for globals (entry points); empty for lifted functions
  // What an entry point returns: one entry per tensor of a tensor or a tuple
  // of tensors (its fields in order), else one entry of the whole type
  // (is_tensor false); names empty. Empty for lifted functions.
  std::vector<ParamInfo> results;
  // Debug information (optional: `compile --strip-debug` drops it): the
  // Relay variables the registers hold, by instruction range.
  std::vector<VariableRange> variables;

  std::span<const int32_t> ListOf(const Instruction& instruction) const {
    return std::span<const int32_t>(lists).subspan(instruction.list_begin, instruction.list_size);
  }
};

// What the VM runs as one kernel: an operator call (the operator, its
// normalised attributes and how its values are shaped: a tuple input is one
// register holding a Tuple, a tuple result is returned as a Tuple), or a
// fused group of operator calls (a primitive function) composed into one
// kernel, whose inputs are the instruction's registers.
struct KernelCall {
  std::string op;  // the operator; for a group, a name listing its operators
  kernels::Attrs attrs;
  bool tuple_input = false;
  bool tuple_result = false;
  std::vector<kernels::FusedOperator> fused;  // empty unless a fused group
  // Where the program placed the call (on_device, device_copy's source);
  // unset: the VM's device (VirtualMachine::set_device).
  std::optional<DeviceId> device;
  // Set for a kernel that relay-vm does not compile: a function marked
  // Compiler="dnnl" (the partitioner's, or written by hand), global_symbol
  // "dnnl_0", runs through that external codegen (BYOC:
  // kernels/external/external_codegen.h). Its inputs are the function's
  // parameters (tensors), in order; it returns one tensor.
  struct External {
    std::string compiler;                    // the codegen: "dnnl", "cblas", "xrt"
    std::string symbol;                      // the function's global_symbol
    kernels::external::ExternalGraph graph;  // what the function computes
    std::string state;                       // what the codegen's Compile wrote
    // The codegen's Load of graph and state: set by the code generator and
    // by the .rbc reader, never null in a loaded executable.
    std::shared_ptr<const kernels::external::ExternalFunction> function;
  };
  std::optional<External> external;
};

struct ConstructorInfo {
  std::string name;  // "Cons"
  uint32_t arity = 0;
};

struct Executable {
  std::vector<Function> functions;
  std::vector<Value> constants;  // host tensors
  std::vector<KernelCall> kernels;
  std::vector<ConstructorInfo> constructors;  // indexed by the tag of Constructed values
  std::vector<std::string> strings;           // fatal messages
  // Where `relay-vm run` puts the tensor work when not told (compile
  // --device); unset: the host.
  std::optional<DeviceId> default_device;

  // The index of the function named `name` ("main" or "@main"), or -1.
  int32_t FindFunction(std::string_view name) const;
  // Print options that name this executable's constructors and functions.
  ValuePrintOptions PrintOptions() const;
};

// Checks every structural property the interpreter relies on: operand
// bounds (registers, constants, functions, kernels, tags, strings, targets),
// list ranges, arities of direct calls and constructors, that each function
// ends with a control transfer, that parameter counts fit the registers, and
// that each debug variable is named, in a register of its function and
// within its code. Throws Error(kLoad) naming the function and instruction
// (or variable) at fault.
// Bytecode that passed cannot make the interpreter read out of bounds.
void Verify(const Executable& executable);

// After instructions were inserted or removed: points every jump target
// `t` of `code` at new_position[t] (what was instruction t is now there).
void RemapJumpTargets(std::vector<Instruction>& code, const std::vector<int32_t>& new_position);
// The same for the debug information's instruction ranges, taking in the
// instructions inserted just before a range's first and last positions
// (positions past the end of new_position map to `new_size`, the new
// code's length).
void RemapVariableRanges(std::vector<VariableRange>& variables,
                         const std::vector<int32_t>& new_position, size_t new_size);

// Human-readable listing: each function's signature, register count and
// instructions with their source lines, then its debug variables if any
// ("  ; %x in $3 over [2, 9)").
std::string Disassemble(const Executable& executable);
// The same for function `index` alone.
std::string DisassembleFunction(const Executable& executable, size_t index);
// Instruction `pc` of function `index`, as one line of that listing
// without its indent ("2: invoke_kernel_out nn.dense, [$0, $2, $5] ; line 18").
std::string DisassembleInstruction(const Executable& executable, size_t index, size_t pc);

}  // namespace relay::vm
