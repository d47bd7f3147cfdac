// Tail-call marking: the calls a function makes in tail position, those
// whose value is the function's result (its body's last expression, through
// lets, both branches of an if and every clause of a match). The code
// generator compiles them as tail calls, which reuse the caller's frame, or
// as a jump back to the start when the function calls itself. Operator,
// constructor and fused-kernel calls are not calls of functions and are
// never marked.
#pragma once

#include <unordered_set>

#include "compiler/ir/expr.h"

namespace relay::passes {

std::unordered_set<const ir::CallNode*> MarkTailCalls(const ir::FunctionNode& function);

}  // namespace relay::passes
