// The GPU schedule: how an operator's output becomes a kernel for a
// device with many threads (OpenCL, CUDA).
//
// BuildGpuKernel gives every output element a thread of its own: the
// kernel's one loop is a ForKind::kDeviceThreads loop over the flat output
// index, whose position along each axis is recovered by division, and the
// element's expression (its reductions as loops) is computed by that
// thread. Where the element holds reductions that do not depend on its
// position along the last axis (softmax's row maximum and sum, a
// normalisation's statistics), each thread takes a row instead, computing
// them once before the row's elements. Dimensions in `dims` stay symbolic
// (passed at launch), as on the CPU. This is the schedule every operator
// has on a GPU; contractions and reductions compute correctly under it,
// without the cooperative tiling a tuned GPU schedule would add.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/compute/tensor_expr.h"
#include "kernels/kir/kir.h"

namespace relay::kernels {

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<kir::Buffer>& inputs,
                           const std::vector<kir::Var>& dims, const TensorExpr& output);

}  // namespace relay::kernels
