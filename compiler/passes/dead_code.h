// Dead-code elimination: drops `let x = v` where nothing reads x and
// evaluating v has no effect (pass_util's IsPure). Dropping a binding may
// make earlier ones dead; they go too, in the same pass, because each let
// chain is processed from its end.
//
// Loops along let chains; recursion only over other nesting (if, match,
// function literals, operands), which the parser bounds.
#pragma once

#include "compiler/ir/expr.h"

namespace relay::passes {

ir::Function EliminateDeadCode(const ir::Function& function);

}  // namespace relay::passes
