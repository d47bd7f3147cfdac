// Registers die at their last use (docs/architecture.md, "Bytecode and the
// VM"): a pass over a compiled function's bytecode that inserts `kill` after
// the instruction that last reads a register, so a large tensor, list or
// closure is freed as soon as nothing can need it, not when its function
// returns.
//
// Liveness is the usual backward dataflow over the function's control flow
// (fall-through, goto, the two edges of if_false and if_tag_not). A register
// read by an instruction and live on none of its successors is killed right
// after it, on the fall-through edge; one that dies on only one edge of a
// branch is left to the frame's end. Only registers the compiler marks as
// worth it are killed: a kill costs a dispatch, and a scalar costs nothing
// to keep. A `move` whose source dies there becomes an `exchange`: no
// reference count changes, and the destination's old value waits in the
// source (killed with it, or overwritten in place by the VM's scalar
// arithmetic in a loop).
#pragma once

#include <vector>

#include "vm/bytecode/bytecode.h"

namespace relay::codegen {

// Inserts the kills into `function` (jump targets follow the moved
// instructions). `worth_killing[r]` says whether register r may be killed;
// registers beyond it are not.
void KillDeadRegisters(vm::Function& function, const std::vector<bool>& worth_killing);

}  // namespace relay::codegen
