// Explicit memory, planned (docs/architecture.md, "Bytecode and the VM"):
// where a kernel's result has a static shape, the code generator emits
//   alloc_tensor $t, $block, layout      (a view of the function's block)
//   invoke_kernel_out kernel, [inputs..., $t]
// with every such tensor at offset 0 of one storage block register. This
// pass then gives them real offsets and allocates the block once, at the
// function's entry (`alloc_storage $block, size, alignment`):
//   - a tensor only read by kernels (an intermediate) shares bytes with
//     others whose lifetimes (first to last instruction, in code order) do
//     not overlap. The only backward jumps are self tail calls turned into
//     loops, and what crosses them travels through `move`s, which count as
//     escapes: an intermediate lives within one iteration, so code order
//     is the order of its uses;
//   - a tensor that escapes (returned, passed to a call, stored in a
//     tuple, ADT, closure or reference, moved) goes back to invoke_kernel,
//     which allocates it alone: a small result must not keep the whole
//     block alive.
// Run it before liveness, which then frees the block register after its
// last alloc_tensor (the block itself lives while any view of it does).
#pragma once

#include <functional>

#include "relay/tensor.h"
#include "vm/bytecode/bytecode.h"

namespace relay::codegen {

struct ConstantTable {
  std::function<const Tensor&(int32_t index)> at;
  std::function<int32_t(Ref<Tensor> value)> add;
};

void PlanMemory(vm::Function& function, int32_t block_register, const ConstantTable& constants);

}  // namespace relay::codegen
