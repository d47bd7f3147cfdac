// The GPU schedule: how an operator's output becomes a kernel for a
// device with many threads (OpenCL, CUDA).
//
// BuildGpuKernel picks, in this order: a shared-memory tile per work-group
// for contractions (dense, batch_matmul, conv2d with their epilogues); a
// work-group, or a 32-lane segment of one, per element for single long
// reductions (lanes split the reduction and meet in a shared-memory tree);
// a thread per row where the element holds reductions that do not depend on
// its position along the last axis (softmax's row maximum and sum, a
// normalisation's statistics), computing them once before the row's
// elements; otherwise a thread per element, whose position along each axis
// is recovered from the flat index by division and whose reductions are
// loops. Dimensions in `dims` stay symbolic (passed at launch), as on the
// CPU. docs/devices.md describes each schedule and when it applies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/compute/tensor_expr.h"
#include "kernels/kir/kir.h"

namespace relay::kernels {

struct GpuScheduleOptions {
  // Split reductions of 64 to 1023 values read along rows over 32 lanes
  // each (coalesced reads on a GPU). On CPU cores (PoCL) a work-item per
  // element already reads its row with vector instructions across
  // neighbouring work-items, and the split only adds barriers: the Tree-LSTM
  // ran 30% slower on PoCL with it.
  bool split_row_reductions = true;
};

kir::Kernel BuildGpuKernel(const std::string& name, const std::vector<kir::Buffer>& inputs,
                           const std::vector<kir::Var>& dims, const TensorExpr& output,
                           const GpuScheduleOptions& options = {});

}  // namespace relay::kernels
