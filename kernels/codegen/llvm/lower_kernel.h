// Lowering of kernel IR (kernels/kir) to LLVM IR for the host CPU.
//
// The kernel becomes one function with the common calling convention,
//   void ENTRY(void* const* buffers, const int64_t* dims)
// Parallel loops are outlined into a function called through the CPU
// thread pool's `relay_cpu_parallel_for` (devices/cpu/thread_pool.h);
// vectorised and unrolled loops carry LLVM loop metadata asking for exactly
// that. Nested parallel loops run serially inside the outer one.
//
// The kernel's buffers (inputs, outputs, workspaces) must not overlap: each
// is its own allocation, as the VM and RunOperator make them. The IR tells
// LLVM so (an alias scope per buffer), which is what lets it hoist a load
// of one buffer out of a loop that stores to another and vectorise loops
// whose addresses depend on loaded values (a take's index).
//
// Integer division and remainder by zero yield 0 (and INT_MIN / -1 wraps)
// instead of trapping: data must never crash the process.
#pragma once

#include <string>

#include "kernels/codegen/llvm/llvm_jit.h"
#include "kernels/kir/kir.h"

namespace relay::kernels::llvm_backend {

// The C symbol generated code calls for parallel loops.
inline constexpr const char* kParallelForSymbol = "relay_cpu_parallel_for";
inline constexpr const char* kParallelForAlternatingSymbol = "relay_cpu_parallel_for_alternating";

// Builds the module holding `kernel` as the function `entry_name`. Throws an
// internal error for malformed kernels (an unbound variable, say).
BuiltModule LowerKernel(const kir::Kernel& kernel, const std::string& entry_name);

// The signature every lowered kernel has.
using KernelEntry = void (*)(void* const* buffers, const int64_t* dims);

// Lowers (or reuses from the JIT's caches) and links `kernel`, returning its
// entry point. The key is the kernel's printed text, so equal kernels share
// one compiled function.
KernelEntry CompileKernel(const kir::Kernel& kernel, LlvmJit& jit = HostJit());

}  // namespace relay::kernels::llvm_backend
