// Sequence projections out of loops. A recursive let-bound function that
// walks a sequence (an RNN's step loop) often multiplies each step's slice
// by a weight the loop never changes:
//
//   let %loop = fn (%step, ...) { ... let %x = take(%seq, %step, axis=0);
//                                     ... let %y = nn.dense(%x, %w); ... };
//
// where %seq and %w are defined outside the loop (free in the function, or
// constants). Then `%y` is row %step of `nn.dense(%seq, %w)` (dense acts on
// the last axis only), so the projection of every step is computed once,
// as one matrix product, before the function is made, and the loop takes
// its row:
//
//   let %projected = nn.dense(%seq, %w);
//   let %loop = fn (%step, ...) { ... let %y = take(%projected, %step, axis=0); ... };
//
// This is ONNX Runtime's and cuDNN's treatment of an LSTM's input weights,
// found here in the program rather than in a fused LSTM operator. The two
// are equal for every index, in range or not (both takes clip, wrap or fail
// alike: %projected has %seq's first axis); what changes is the cost, one
// product of all rows in place of one matrix-vector product per step, which
// is why the index must be a parameter of the loop (its step counter) and
// the function recursive: a loop that visits few rows of a long sequence
// would pay for all of them.
//
// Runs after A-normal form and inlining (loop_inlining.h brings a cell's
// `nn.dense` into the loop's body); dead-code elimination then drops the
// takes of %seq that nothing reads. Let chains are loops; recursion only
// over other nesting, which the parser bounds.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function HoistLoopInvariantProjections(const ir::Function& function);

}  // namespace relay::passes
