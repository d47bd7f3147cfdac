// The reference evaluator: a simple interpreter of typed Relay IR, the oracle
// against which the bytecode compiler and VM are tested (docs/architecture.md,
// "Bytecode and the VM").
//
// Semantics (Relay's reference semantics):
// - call by value; every expression evaluates its parts left to right (a
//   call: the callee, then the arguments; a tuple: its fields in order);
// - a function literal makes a closure that captures, by value, the
//   variables it uses from its surroundings; a let-bound literal that calls
//   itself (`let %f = fn ... %f(...)`) sees its own closure;
// - globals, constructors with fields and function literals are values
//   (closures); a constructor without fields is a constructed value;
// - `ref(v)` makes a mutable cell, `!r` reads it, `r := v` writes it and
//   gives `()`;
// - `if` takes a bool scalar tensor; `match` tries its clauses in order
//   (constructor, tuple, variable and wildcard patterns); when none matches,
//   `match?` and `match` alike fail at run time;
// - an operator call runs the operator's CPU kernel (kernels/compute/
//   cpu_kernels.h) with the call's attributes; an operator with a tuple
//   result gives a Tuple of tensors;
// - an expression that is shared (a graph binding `%0 = ...` used more than
//   once) is evaluated once per activation of the function it is in, at its
//   first use, and its value reused.
//
// Evaluation is iterative: Relay calls and nested expressions use an
// explicit continuation stack on the heap, never the C++ stack, so a
// million-deep non-tail recursion evaluates (memory permitting).
//
// Values are those of relay/value.h and relay/tensor.h (host tensors).
// Constructed tags and closure function indices follow the numbering
// documented in compiler/evaluator/program_tables.h; it depends only on the
// module, so PrintOptionsFor(module) names the values of every evaluation.
//
// Thread-safety: Evaluate keeps all its state per call; concurrent calls on
// the same module are safe as long as they share no Reference values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/module.h"
#include "relay/tensor.h"
#include "relay/value.h"

namespace relay::evaluator {

struct EvaluationOptions {
  // The most expressions evaluated before giving up with a kRuntime error
  // ("step limit of N exceeded"); 0 for no limit.
  uint64_t step_limit = 0;
};

// Evaluates the global function `entry` of `module` (type-checked, as
// compiler::ParseAndCheck returns it; the prelude's definitions are
// available) on `arguments`, one per parameter, and returns its value.
//
// Throws relay::Error:
// - kUsage when `entry` does not exist, the argument count is wrong, or an
//   argument tensor's dtype or known dimensions disagree with the
//   parameter's type (tensor parameters only);
// - kRuntime, with the Relay source location of the failing expression and
//   a backtrace of Relay functions (innermost first, in the message and in
//   Error::backtrace()), for a match without a matching clause, an operator
//   that fails on its inputs (a shape mismatch on `?` dimensions), or the
//   step limit;
// - kInternal when the module is not well-typed in a way the evaluator
//   relies on (an unbound variable, `if` on a non-bool).
Value Evaluate(const ir::Module& module, const std::string& entry, std::span<const Value> arguments,
               const EvaluationOptions& options = {});

// Names for FormatValue: constructor tags print as their constructor's name
// ("Cons"), closures as their function's ("@main", "@main.%loop",
// "@main.fn:4:7" for an anonymous literal at line 4, column 7, or a
// constructor's name). Valid for the values of any Evaluate on `module`;
// `module` must outlive the returned options.
ValuePrintOptions PrintOptionsFor(const ir::Module& module);

// The constructor of each tag, by name, for `module` (with the prelude's
// after the module's own).
std::vector<std::string> ConstructorNames(const ir::Module& module);

}  // namespace relay::evaluator
