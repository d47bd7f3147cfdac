// Lambda lifting with closure conversion: every function literal (but a
// fused kernel's primitive function where it is called) becomes a global
// of its module,
// `@outer.lambdaN`, whose first parameters receive the literal's free
// variables (what its closure captures) and whose attribute Closure says
// how many there are. Where the literal was, `@outer.lambdaN(captured...)`,
// a call with just the captured values, makes the closure. A let-bound
// literal that names itself (recursion) refers to itself as
// `@outer.lambdaN(its captured parameters...)` — the closure it is running
// in, which the code generator loads with `load_self`, or loops on when
// the call is in tail position. A literal that only forwards its
// parameters to a global (eta-expansion's) becomes that global.
//
// The last pass before code generation (it leaves the self-references of
// recursive literals as non-atomic operands). Recursion is over the
// nesting of literals, which the parser bounds; let chains are loops.
#pragma once

#include <vector>

#include "compiler/ir/module.h"

namespace relay::passes {

inline constexpr const char* kClosureAttr = "Closure";

// `module` with its literals lifted; the lifted globals follow the
// module's own, in the order they were met.
ir::Module LiftLambdas(const ir::Module& module);

// How many captured parameters a lifted function has; -1 for a function
// that is not a closure body.
int CapturedCount(const ir::FunctionNode& function);

// The variables `function` uses but does not bind, in order of first use.
std::vector<const ir::VarNode*> FreeVariables(const ir::FunctionNode& function);

}  // namespace relay::passes
