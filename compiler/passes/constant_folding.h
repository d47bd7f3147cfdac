// Constant folding: in A-normal form, an operator call whose operands are
// all constants is run at compile time, by the same kernels the VM would
// run (0-d arithmetic by the VM's scalar operators, the rest JIT-compiled),
// and becomes a constant. Let-bound constants are propagated into their
// uses, a field of a let-bound tuple of known fields becomes that field,
// and an `if` on a constant condition becomes its branch.
//
// A call is left alone when running it fails (the error then happens at
// run time, where the program reaches it), when its result would be larger
// than kMaximumFoldedBytes (it would bloat the executable), or when it has
// `?` dimensions or tuples in or out.
#pragma once

#include <cstddef>

#include "compiler/ir/expr.h"

namespace relay::passes {

inline constexpr size_t kMaximumFoldedBytes = size_t(1) << 20;

ir::Function FoldConstants(const ir::Function& function);

}  // namespace relay::passes
