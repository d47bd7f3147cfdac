// The schedule for depthwise convolutions (nn.conv2d with one input channel
// per group and one output channel per input channel, MobileNet's 3x3
// layers) and max pooling, with any elementwise epilogue fused after them.
//
// The generic schedule evaluates every multiply-add through a padding test
// and clamped indices, which keeps its loop scalar. Here parallel tasks take
// runs of whole planes; each task copies its current input plane into its
// own zero-bordered slice of a workspace (the borders are zeroed once per
// task, the interior is a plain vectorised copy) and computes the plane's
// output from it, row by row, each element as the window's products
// written out in full (a 3x3 window is nine multiply-adds with no test), so
// the loop along a row vectorises with plain loads (at stride 2, each slice
// row holds the even columns and then the odd ones, so that a window's
// column is read contiguously, and a plane larger than the nearest cache
// is copied row by row as its output rows first need it); a narrow map at
// stride 1 is computed along the whole padded plane as one run instead, so
// that rows shorter than a vector (7 or 14 wide) vectorise too. The slice stays in the
// nearest caches between the copy and the products, so the data crosses
// memory once; without padding, the data is read in place. The epilogue
// (bias, activation, a residual add) is the rest of the output expression,
// applied as each element is stored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

// The kernel computing `output` (a depthwise nn.conv2d of inputs[data] by
// inputs[weight] with `conv_attributes`, normalised, possibly followed by
// elementwise operators), or nothing when the call is not one this schedule
// serves: not depthwise, not NCHW data with an OIHW weight, not
// floating-point, shapes not constant, or an output with more reductions
// than the convolution's. The planes are split into at most
// `parallel_tasks` parallel tasks.
std::optional<kir::Kernel> BuildDepthwiseKernel(const std::string& name,
                                                const std::vector<kir::Buffer>& inputs,
                                                const TensorExpr& output,
                                                const Attrs& conv_attributes, size_t data,
                                                size_t weight, int64_t parallel_tasks = 16);

// The kernel computing `output` (an NCHW nn.max_pool2d of inputs[data] with
// `pool_attributes`, normalised, possibly followed by elementwise
// operators) by the same schedule: planes padded with the lowest value, each
// element the maximum of its window written out. Nothing when the call is
// not one it serves (another layout, shapes not constant, a window of more
// than 49 elements).
std::optional<kir::Kernel> BuildMaxPoolKernel(const std::string& name,
                                              const std::vector<kir::Buffer>& inputs,
                                              const TensorExpr& output,
                                              const Attrs& pool_attributes, size_t data,
                                              int64_t parallel_tasks = 16);

}  // namespace relay::kernels
