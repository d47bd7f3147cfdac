// Inference batch normalisation becomes a per-channel scale and shift:
//
//   let %bn = nn.batch_norm(%x, %gamma, %beta, %mean, %var, axis=1, epsilon=e);
//   ... %bn.0 ...
//
// becomes (the channel axis expanded to broadcast against %x)
//
//   let %scale = multiply(%gamma, rsqrt(add(%var, e)));
//   let %shift = subtract(%beta, multiply(%mean, %scale));
//   let %normalized = add(multiply(%x, expand_dims(%scale, ...)), expand_dims(%shift, ...));
//   ... %normalized ...
//
// as TVM's SimplifyInference does. A batch_norm's tuple is a kernel of its
// own that cannot fuse; the scale and shift are elementwise operators that
// fuse into the convolution before them (its epilogue), constant folding
// computes them once when the statistics are constants (a model's weights
// bound with --params), and an external codegen sees a convolution followed
// by a per-channel multiply and add, which oneDNN folds into its post-ops.
//
// Only batch_norms whose tuple is used through `.0` alone change (the moving
// statistics it also returns are its inputs, unchanged in inference), of
// float32 or float64 data. Runs on A-normal form, before constant folding.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function SimplifyBatchNorm(const ir::Function& function);

}  // namespace relay::passes
