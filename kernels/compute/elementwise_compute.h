// What the rest of the kernel pipeline needs to know about the elementwise
// family's compute definitions.
#pragma once

#include <string_view>

namespace relay::kernels {

// Whether `operator_name`'s compute definition depends on its inputs' shapes
// only through NumPy broadcasting. Such kernels may leave dimension sizes
// symbolic, so one compiled kernel serves every shape with the same
// broadcast pattern; every other operator's kernels are specialised to exact
// shapes.
bool IsBroadcastCompute(std::string_view operator_name);

}  // namespace relay::kernels
