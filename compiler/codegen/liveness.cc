#include "compiler/codegen/liveness.h"

#include <algorithm>

namespace relay::codegen {

namespace {

using vm::Opcode;
using vm::OperandKind;

// A set of registers as a bit vector.
class RegisterSet {
 public:
  explicit RegisterSet(size_t size = 0) : words_((size + 63) / 64, 0) {}
  void Insert(size_t reg) { words_[reg / 64] |= uint64_t{1} << (reg % 64); }
  void Erase(size_t reg) { words_[reg / 64] &= ~(uint64_t{1} << (reg % 64)); }
  bool Contains(size_t reg) const { return (words_[reg / 64] >> (reg % 64)) & 1; }
  // this |= other; whether anything changed.
  bool Merge(const RegisterSet& other) {
    bool changed = false;
    for (size_t index = 0; index < words_.size(); ++index) {
      uint64_t merged = words_[index] | other.words_[index];
      changed = changed || merged != words_[index];
      words_[index] = merged;
    }
    return changed;
  }

 private:
  std::vector<uint64_t> words_;
};

struct Effects {
  std::vector<int32_t> reads;
  std::vector<int32_t> writes;
  std::vector<size_t> successors;
};

Effects EffectsOf(const vm::Function& function, size_t pc) {
  const vm::Instruction& instruction = function.code[pc];
  Effects effects;
  size_t position = 0;
  for (OperandKind kind : vm::InfoOf(instruction.opcode).operands) {
    if (kind == OperandKind::kList) {
      for (int32_t reg : function.ListOf(instruction)) effects.reads.push_back(reg);
      continue;
    }
    const int32_t operand = instruction.operands[position++];
    if (kind == OperandKind::kReg) effects.reads.push_back(operand);
    if (kind == OperandKind::kDst) effects.writes.push_back(operand);
    if (kind == OperandKind::kTarget) effects.successors.push_back(size_t(operand));
  }
  if (instruction.opcode == Opcode::kExchange) {
    effects.reads = effects.writes;  // both registers are read and written
  }
  switch (instruction.opcode) {
    case Opcode::kRet:
    case Opcode::kTailInvoke:
    case Opcode::kTailInvokeClosure:
    case Opcode::kFatal:
    case Opcode::kGoto:
      break;  // no fall-through (goto's target is listed above)
    default:
      effects.successors.push_back(pc + 1);
  }
  return effects;
}

}  // namespace

void KillDeadRegisters(vm::Function& function, const std::vector<bool>& worth_killing) {
  const size_t count = function.code.size();
  const size_t registers = function.register_count;
  std::vector<Effects> effects;
  for (size_t pc = 0; pc < count; ++pc) effects.push_back(EffectsOf(function, pc));

  // live_in[pc] = reads ∪ (live_out \ writes); live_out = ∪ successors' live_in.
  std::vector<RegisterSet> live_in(count, RegisterSet(registers));
  std::vector<RegisterSet> live_out(count, RegisterSet(registers));
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t pc = count; pc-- > 0;) {
      for (size_t successor : effects[pc].successors) {
        if (successor < count) changed = live_out[pc].Merge(live_in[successor]) || changed;
      }
      RegisterSet in = live_out[pc];
      for (int32_t reg : effects[pc].writes) in.Erase(size_t(reg));
      for (int32_t reg : effects[pc].reads) in.Insert(size_t(reg));
      changed = live_in[pc].Merge(in) || changed;
    }
  }

  // Rebuild the code with the kills, then point jumps at the moved targets.
  std::vector<vm::Instruction> code;
  std::vector<int32_t> new_position(count + 1, 0);
  for (size_t pc = 0; pc < count; ++pc) {
    new_position[pc] = int32_t(code.size());
    code.push_back(function.code[pc]);
    vm::Instruction& added = code.back();
    if (added.opcode == Opcode::kMove && added.operands[0] != added.operands[1] &&
        !live_out[pc].Contains(size_t(added.operands[1]))) {
      // The source dies here: swap instead of copying (see isa.def).
      added.opcode = Opcode::kExchange;
    }
    const Opcode opcode = function.code[pc].opcode;
    if (opcode == Opcode::kRet || opcode == Opcode::kTailInvoke ||
        opcode == Opcode::kTailInvokeClosure || opcode == Opcode::kFatal ||
        opcode == Opcode::kGoto) {
      continue;  // nothing runs after it on this path
    }
    std::vector<int32_t> touched = effects[pc].reads;
    touched.insert(touched.end(), effects[pc].writes.begin(), effects[pc].writes.end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int32_t reg : touched) {
      if (size_t(reg) >= worth_killing.size() || !worth_killing[size_t(reg)]) continue;
      if (live_out[pc].Contains(size_t(reg))) continue;
      vm::Instruction kill;
      kill.opcode = Opcode::kKill;
      kill.operands = {reg, 0, 0};
      kill.location = function.code[pc].location;
      code.push_back(kill);
    }
  }
  new_position[count] = int32_t(code.size());
  vm::RemapJumpTargets(code, new_position);
  vm::RemapVariableRanges(function.variables, new_position, code.size());
  function.code = std::move(code);
}

}  // namespace relay::codegen
