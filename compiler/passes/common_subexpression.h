// Common-subexpression elimination: in A-normal form, a pure value (an
// operator call, a tuple, a field read) bound twice with the same operands
// in the same scope is computed once; the second variable becomes the
// first. A binding is visible in its own scope and every scope nested in
// it (branches, clauses, function literals), never in a sibling.
//
// Operands are compared by identity (variables), name (globals) or content
// (small constants), after earlier replacements, so chains of equal values
// collapse in one pass. Loops along let chains; recursion only over other
// nesting, which the parser bounds.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function EliminateCommonSubexpressions(const ir::Function& function);

}  // namespace relay::passes
