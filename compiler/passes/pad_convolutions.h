// Convolutions read padded inputs. A convolution with padding tests, for
// every multiply-add, whether its window position lies in the border, and
// reads the input at a clamped index; the contraction schedule
// (kernels/compute/contraction_schedule.h) must then pack the windows
// (im2col) before multiplying, which on ResNet's 3x3 layers cost a third of
// the convolution's time. Padding the input once, as its own small kernel,
//
//   %p = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
//   nn.conv2d(%p, %w, padding=[0, 0, 0, 0])
//
// leaves a convolution whose every read is a plain load at an affine index,
// which the schedule reads in place.
//
// Applies to nn.conv2d with groups = 1 (a depthwise convolution has its
// own schedule, which pads planes itself) on float32 or float64 data of
// known shape. Runs on A-normal form, before fusion: the pad binds a
// variable of its own just before the convolution. The convolution keeps
// its type; the pad's is the padded shape.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function PadConvolutionInputs(const ir::Function& function);

}  // namespace relay::passes
