// Operator fusion: chains of operator calls become primitive functions
// (attribute Primitive=1), each of which the code generator compiles to
// one kernel.
//
// In A-normal form, a let-bound operator call whose value is used once, by
// another operator call later in the same scope with only such single-use
// operator bindings between them, is moved into that call's group (so no
// value lives longer than it did), following the operator table's pattern
// classes:
//   - elementwise and broadcast operators take elementwise, broadcast and
//     injective producers, and one anchor (a dense, matmul, convolution or
//     reduction: the group then computes the anchor with an epilogue);
//   - injective operators and reductions take elementwise, broadcast and
//     injective producers;
//   - anchors take nothing, and a group holds at most one anchor.
// Groups hold at most kMaximumGroup operators. Operators with tuples in or
// out, without a compute definition, or whose output shape depends on input
// values stay alone. A value used twice ends its group (it is computed
// once, not once per user); a value used in a nested scope is not moved
// into it.
#pragma once

#include <cstddef>

#include "compiler/ir/expr.h"

namespace relay::passes {

inline constexpr size_t kMaximumGroup = 64;

ir::Function FuseOperators(const ir::Function& function);

}  // namespace relay::passes
