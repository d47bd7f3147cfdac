// Kernel IR to GPU source text: OpenCL C and CUDA C from one emitter.
//
// EmitKernelSource prints a kir::Kernel as one kernel function of the
// chosen dialect, named kKernelEntry. Its parameters follow the kernel's
// (inputs, outputs, workspaces), then one 64-bit integer per symbolic
// dimension, in the order of kernel.dims:
//
// - OpenCL C: each buffer is two arguments, a `__global T*` (the cl_mem)
//   and a `long` byte offset into it, because OpenCL 1.2 has no pointer
//   arithmetic on the host side;
// - CUDA C: each buffer is one device pointer (the allocation's address
//   plus the tensor's byte offset, added by the host).
//
// The outermost loop of the kernel may be a ForKind::kDeviceThreads loop
// (kernels/compute/gpu_schedule.h): each iteration runs on a thread of its
// own, and the launcher starts `thread_count` threads (the loop's extent,
// an expression over kernel.dims); threads past the extent do nothing. Or
// a kDeviceGroups loop whose work-groups run a kDeviceLanes loop of
// kGroupLanes lanes, sharing kShared scratch and meeting at barriers.
// Without one, the whole body runs on one thread. Every other loop runs
// serially inside its thread; a reduction is a loop nest where its value is
// needed.
//
// The semantics are the kernel IR's, as the CPU's LLVM lowering implements
// them, so that every device computes the same values: integer division by
// zero gives 0, float-to-integer casts saturate (NaN gives 0), min and max
// propagate NaN, round rounds halves to even, bool is one byte in memory
// and float16 is stored as IEEE half and computed in float.
//
// Thread-safety: a pure function. Errors: RELAY_CHECK for kernels that
// break the kernel IR's invariants (a scratch buffer of symbolic size, a
// device-threads loop that is not outermost).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "devices/kernel_loader.h"
#include "kernels/kir/kir.h"

namespace relay::kernels::gpu {

using devices::SourceDialect;

// The name of the kernel function in every emitted source.
inline constexpr const char* kKernelEntry = "relay_kernel";

// The threads of a work-group (thread block) every launch uses
// (devices/kernel_loader.h): a kDeviceLanes loop has this extent.
inline constexpr int64_t kGroupLanes = 256;

struct KernelSource {
  std::string text;
  // How many threads a launch starts: the device-threads loop's extent, or
  // the constant 1. An int64 expression over the kernel's dims.
  kir::Expr thread_count;
};

KernelSource EmitKernelSource(const kir::Kernel& kernel, SourceDialect dialect);

// The value of an int64 index expression (immediates, the kernel's dims,
// + - * floordiv floormod min max) for the dims' values, in the order of
// `dims`. Throws kUsage for anything else or an unbound variable.
int64_t EvaluateIndexExpr(const kir::Expr& expr, std::span<const kir::Var> dims,
                          std::span<const int64_t> dim_values);

}  // namespace relay::kernels::gpu
