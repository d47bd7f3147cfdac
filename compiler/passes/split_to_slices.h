// Splits become slices. `split` makes a tuple, and a tuple cannot join a
// fused kernel, so each
//
//   let %parts = split(%x, indices_or_sections=3, axis=1);
//   ... %parts.0 ... %parts.2 ...
//
// costs a kernel of its own that copies %x into new tensors, and every gate
// of an LSTM or GRU step reads its part from memory again. When a split's
// tuple is used only through projections and every part's extent along the
// axis is known, each projection becomes the slice it is,
//
//   ... strided_slice(%x, begin=[0], end=[256], axes=[1]) ...
//             strided_slice(%x, begin=[512], end=[768], axes=[1]) ...
//
// an injective operator that fusion (fuse_operators.h) moves into the
// kernel that reads it: the parts are never materialised. A split whose
// tuple is used whole (returned, passed to a function) stays.
//
// Runs on A-normal form, before fusion; the slices' types are the parts'.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function SplitsToSlices(const ir::Function& function);

}  // namespace relay::passes
