#include "compiler/codegen/memory_plan.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "relay/device.h"
#include "vm/bytecode/tensor_layout.h"

namespace relay::codegen {

namespace {

using vm::Opcode;
using vm::OperandKind;

struct PlannedTensor {
  size_t alloc_pc;
  int32_t reg;
  vm::TensorLayout layout;
  size_t last_use;
  bool escapes = false;
  size_t slot = 0;
};

// Only kernels read an intermediate; anything else keeps a reference.
bool ReadsWithoutKeeping(Opcode opcode) {
  return opcode == Opcode::kInvokeKernel || opcode == Opcode::kInvokeKernelOut ||
         opcode == Opcode::kInvokeShapeFunc;
}

size_t AlignUp(size_t bytes) {
  return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

}  // namespace

void PlanMemory(vm::Function& function, int32_t block_register, const ConstantTable& constants) {
  std::vector<PlannedTensor> planned;
  std::unordered_map<int32_t, size_t> planned_by_register;
  for (size_t pc = 0; pc < function.code.size(); ++pc) {
    const vm::Instruction& instruction = function.code[pc];
    if (instruction.opcode != Opcode::kAllocTensor || instruction.operands[1] != block_register)
      continue;
    planned_by_register[instruction.operands[0]] = planned.size();
    planned.push_back({pc, instruction.operands[0],
                       vm::DecodeTensorLayout(constants.at(instruction.operands[2])), pc});
  }
  if (planned.empty()) return;

  // Lifetimes and escapes, from every instruction reading a planned tensor.
  for (size_t pc = 0; pc < function.code.size(); ++pc) {
    const vm::Instruction& instruction = function.code[pc];
    auto read = [&](int32_t reg) {
      auto found = planned_by_register.find(reg);
      if (found == planned_by_register.end()) return;
      PlannedTensor& tensor = planned[found->second];
      tensor.last_use = std::max(tensor.last_use, pc);
      if (!ReadsWithoutKeeping(instruction.opcode)) tensor.escapes = true;
    };
    size_t position = 0;
    for (OperandKind kind : vm::InfoOf(instruction.opcode).operands) {
      if (kind == OperandKind::kList) {
        for (int32_t reg : function.ListOf(instruction)) read(reg);
        continue;
      }
      const int32_t operand = instruction.operands[position++];
      if (kind == OperandKind::kReg) read(operand);
      if (kind == OperandKind::kDst) {
        auto found = planned_by_register.find(operand);
        if (found != planned_by_register.end() && planned[found->second].alloc_pc != pc)
          planned[found->second].escapes = true;  // overwritten: not an intermediate
      }
    }
  }

  // Slots: a tensor reuses the smallest slot free before its allocation
  // that is large enough, else grows the largest free one, else opens one.
  struct Slot {
    size_t bytes = 0;
    size_t busy_until = 0;  // the last use of its current tensor
    bool used = false;
  };
  std::vector<Slot> slots;
  for (PlannedTensor& tensor : planned) {
    if (tensor.escapes) continue;
    const size_t bytes = AlignUp(tensor.layout.ByteSize());
    size_t best = slots.size();
    for (size_t index = 0; index < slots.size(); ++index) {
      const Slot& slot = slots[index];
      if (slot.used && slot.busy_until >= tensor.alloc_pc) continue;
      if (best == slots.size()) {
        best = index;
        continue;
      }
      const Slot& chosen = slots[best];
      const bool fits = slot.bytes >= bytes;
      const bool chosen_fits = chosen.bytes >= bytes;
      if ((fits && (!chosen_fits || slot.bytes < chosen.bytes)) ||
          (!fits && !chosen_fits && slot.bytes > chosen.bytes)) {
        best = index;
      }
    }
    if (best == slots.size()) slots.emplace_back();
    Slot& slot = slots[best];
    slot.bytes = std::max(slot.bytes, bytes);
    slot.busy_until = tensor.last_use;
    slot.used = true;
    tensor.slot = best;
  }
  std::vector<size_t> slot_offsets;
  size_t block_bytes = 0;
  for (const Slot& slot : slots) {
    slot_offsets.push_back(block_bytes);
    block_bytes += slot.bytes;
  }

  // Rebuild: the block first, escaping tensors back to invoke_kernel,
  // planned ones at their offsets; then jumps to the moved instructions.
  std::vector<vm::Instruction> code;
  std::vector<int32_t> new_position(function.code.size() + 1, 0);
  if (!slots.empty()) {
    vm::Instruction alloc;
    alloc.opcode = Opcode::kAllocStorage;
    alloc.operands = {block_register, constants.add(vm::EncodeByteSize(block_bytes)),
                      int32_t(kAllocationAlignment)};
    alloc.location = function.code[0].location;
    code.push_back(alloc);
  }
  for (size_t pc = 0; pc < function.code.size(); ++pc) {
    new_position[pc] = int32_t(code.size());
    vm::Instruction instruction = function.code[pc];
    if (instruction.opcode == Opcode::kAllocTensor && instruction.operands[1] == block_register) {
      PlannedTensor& tensor = planned[planned_by_register.at(instruction.operands[0])];
      if (tensor.escapes) continue;  // its kernel allocates it
      vm::TensorLayout layout = tensor.layout;
      layout.byte_offset = slot_offsets[tensor.slot];
      instruction.operands[2] = constants.add(vm::EncodeTensorLayout(layout));
    } else if (instruction.opcode == Opcode::kInvokeKernelOut && instruction.list_size > 0) {
      const int32_t output = function.lists[instruction.list_begin + instruction.list_size - 1];
      auto found = planned_by_register.find(output);
      if (found != planned_by_register.end() && planned[found->second].escapes) {
        instruction.opcode = Opcode::kInvokeKernel;
        instruction.operands = {output, instruction.operands[0], 0};
        --instruction.list_size;
      }
    }
    code.push_back(instruction);
  }
  new_position[function.code.size()] = int32_t(code.size());
  vm::RemapJumpTargets(code, new_position);
  vm::RemapVariableRanges(function.variables, new_position, code.size());
  function.code = std::move(code);
}

}  // namespace relay::codegen
