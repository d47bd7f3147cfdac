// A-normal form: every operand is atomic (a variable, global, constant,
// operator or constructor) and every intermediate value is let-bound, in
// evaluation order.
//
// An expression shared in the graph (the text format's `%0 = ...` used
// twice) is bound once, in the innermost scope that encloses all its uses:
// `if` branches and `match` clauses are scopes. A nested function is an
// activation of its own: what it shares with its surroundings is bound
// inside it again, as the reference evaluator evaluates a shared
// expression once per activation. The last expression of each scope stays
// unbound, so a call in tail position stays in tail position.
//
// Iterative over expression depth; recursion only over the nesting of
// function literals, which the parser bounds.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function ToANormalForm(const ir::Function& function);

}  // namespace relay::passes
