// Operator fusion: groups of operator calls become primitive functions
// (attribute Primitive=1), each of which the code generator compiles to
// one kernel.
//
// In A-normal form, each let chain is grouped from its end backwards. A
// let-bound operator call joins the group of its users when every use of
// its value is an operand of an operator call in that one group, and each
// of those users may take it, by the operator table's pattern classes:
//   - elementwise and broadcast operators take elementwise, broadcast and
//     injective producers, and one anchor (a dense, matmul, convolution or
//     reduction: the group then computes the anchor with an epilogue);
//   - injective operators and reductions take elementwise, broadcast and
//     injective producers;
//   - anchors take nothing, and a group holds at most one anchor.
// Otherwise it starts a group of its own. A value used twice inside a
// group is evaluated twice per element the kernel stores (an RNN gate used
// by two products, a split's source read through three slices): allowed
// for tensors of at most kMaximumRepeatedElements elements evaluated at
// most kMaximumEvaluations times, where it costs less than the kernel call
// it saves, and never for an anchor, which each kernel computes once.
// Groups hold at most kMaximumGroup operators and are computed where their
// last operator was bound; an operator never moves past a binding that
// could keep its inputs alive longer (a function call, a tuple, a match:
// anything but another operator call, a tuple's field, a variable or a
// constant). Operators with tuples in or out, without a
// compute definition, or whose output shape depends on input values stay
// alone; a value used in a nested scope, or by anything but an operator
// call, is computed as a tensor of its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compiler/ir/expr.h"

namespace relay::passes {

inline constexpr size_t kMaximumGroup = 64;
// A value a kernel evaluates more than once per element it stores is a
// tensor (not a scalar) of at most this many elements, evaluated at most
// this many times.
inline constexpr int64_t kMaximumRepeatedElements = 1024;
inline constexpr int kMaximumEvaluations = 4;

ir::Function FuseOperators(const ir::Function& function);

}  // namespace relay::passes
