// A hash consistent with StructurallyEqual: alpha-equivalent programs hash
// alike. Variables hash by the order in which they are bound, not by name or
// identity. Iterative; each distinct shared node is hashed once.
#pragma once

#include <cstdint>

#include "compiler/ir/expr.h"

namespace relay::ir {

uint64_t StructuralHash(const Expr& expr);
uint64_t StructuralHash(const Type& type);

}  // namespace relay::ir
