// Inlining of a loop's step function: inside a loop (a global function that
// calls itself, or a let-bound function literal that does), a call of a
// small global that receives the step's slice of a sequence
// (`take(%seq, %counter, axis=0)`, %counter a parameter of the loop) is
// replaced by that global's body, its parameters by the call's arguments
// and its let variables by fresh ones.
//
// That is an RNN written as a loop calling its cell (`@lstm_cell(take(
// %sequence, %step, axis=0), %state, ...)`): inlined, the cell's
// `nn.dense` of the step's input is in the loop's own body, where
// loop_invariant_projection.h moves it out of the loop. Other calls keep
// their frames, in run-time backtraces, traces and the debugger.
//
// A callee qualifies when it is in the same module, is not generic, is not
// a fused kernel, and its body (in A-normal form) holds nothing but let
// bindings, ifs, operator and constructor calls, tuples and references, at
// most kMaxInlinedNodes nodes: no calls of globals (so it cannot recurse),
// no function literals and no matches (whose binders would need renaming
// beyond let variables). The inlined nodes keep the callee's source spans,
// so errors still point into the callee's text.
//
// Runs after A-normal form on every function of the module (arguments are
// atoms, so substituting them keeps the form). Let chains are loops;
// recursion only over other nesting, which the parser bounds.
#pragma once

#include "compiler/ir/module.h"

namespace relay::passes {

inline constexpr int kMaxInlinedNodes = 256;

ir::Module InlineCallsInLoops(const ir::Module& module);

}  // namespace relay::passes
