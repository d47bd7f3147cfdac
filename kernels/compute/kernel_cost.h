// What a kernel call costs in arithmetic, for profiles that report rates.
//
// A contraction (nn.dense, nn.matmul, nn.batch_matmul, nn.conv2d,
// nn.conv2d_transpose) is counted in floating-point operations: two per
// multiply-add of its sum. Every other operator is limited by memory rather
// than arithmetic, so profiles rate it by the bytes it reads and writes,
// which the caller knows from the tensors themselves.
#pragma once

#include <span>

#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"

namespace relay::kernels {

// The floating-point operations of the contractions among `operators` (a
// fused group, or one operator whose inputs are the group's inputs in
// order) on inputs of `input_types`; 0 when there is none or a shape
// cannot be worked out (an operator given a tuple, say). Never throws for
// inputs that do not type: such a call costs 0 here and fails elsewhere.
double ContractionFlops(std::span<const FusedOperator> operators,
                        std::span<const ValueType> input_types);

}  // namespace relay::kernels
