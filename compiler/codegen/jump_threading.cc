#include "compiler/codegen/jump_threading.h"

#include <vector>

namespace relay::codegen {

namespace {

using vm::Opcode;
using vm::OperandKind;

bool FallsThrough(Opcode opcode) {
  return opcode != Opcode::kRet && opcode != Opcode::kTailInvoke &&
         opcode != Opcode::kTailInvokeClosure && opcode != Opcode::kFatal &&
         opcode != Opcode::kGoto;
}

// Calls `visit(operand)` for each jump target operand of `instruction`.
template <typename Visit>
void ForEachTarget(vm::Instruction& instruction, Visit visit) {
  size_t position = 0;
  for (OperandKind kind : vm::InfoOf(instruction.opcode).operands) {
    if (kind == OperandKind::kList) continue;
    if (kind == OperandKind::kTarget) visit(instruction.operands[position]);
    ++position;
  }
}

}  // namespace

void ThreadJumps(vm::Function& function) {
  std::vector<vm::Instruction>& code = function.code;
  const size_t count = code.size();
  // Follow chains of gotos; at most `count` steps, so a cycle of gotos
  // (which the compiler never makes) cannot hang.
  for (vm::Instruction& instruction : code) {
    ForEachTarget(instruction, [&](int32_t& target) {
      for (size_t steps = 0; steps < count && code[size_t(target)].opcode == Opcode::kGoto;
           ++steps) {
        if (code[size_t(target)].operands[0] == target) break;
        target = code[size_t(target)].operands[0];
      }
    });
  }
  // What the entry reaches.
  std::vector<bool> reached(count, false);
  std::vector<size_t> pending{0};
  while (!pending.empty()) {
    const size_t pc = pending.back();
    pending.pop_back();
    if (pc >= count || reached[pc]) continue;
    reached[pc] = true;
    if (FallsThrough(code[pc].opcode)) pending.push_back(pc + 1);
    ForEachTarget(code[pc], [&](int32_t& target) { pending.push_back(size_t(target)); });
  }
  std::vector<vm::Instruction> kept;
  std::vector<int32_t> new_position(count + 1, 0);
  for (size_t pc = 0; pc < count; ++pc) {
    new_position[pc] = int32_t(kept.size());
    if (reached[pc]) kept.push_back(code[pc]);
  }
  new_position[count] = int32_t(kept.size());
  vm::RemapJumpTargets(kept, new_position);
  vm::RemapVariableRanges(function.variables, new_position, kept.size());
  code = std::move(kept);
}

}  // namespace relay::codegen
