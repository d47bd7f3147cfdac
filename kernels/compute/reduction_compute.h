// What the rest of the kernel pipeline needs to know about the reduction
// family's compute definitions.
#pragma once

#include <string_view>

namespace relay::kernels {

// Whether `operator_name` is a reduction (sum, mean, argmax, variance, ...)
// whose compute definition works on symbolic input dimensions: its loops
// and output shape are expressions of them, so one compiled kernel serves
// every input shape of the same rank (dimensions of 0 and 1 stay constant:
// a reduction over an empty axis is rejected when the kernel is built).
bool IsReductionCompute(std::string_view operator_name);

}  // namespace relay::kernels
