// The bytecode compiler: typed Relay IR to a VM executable (DESIGN.md
// section 2).
//
// Every function of the module, and every prelude function and type it may
// use, becomes a bytecode function. Nested functions are lambda-lifted:
// their free variables become captured values of a closure (a let-bound
// function that calls itself reaches itself through `load_self`).
// Constructors and globals used as values become closures. Operator calls
// become kernel invocations. `match` compiles clause by clause to tag tests
// and field loads, ending in `fatal` with the match's source location when
// no clause applies. Calls in tail position become tail calls, so tail
// recursion runs in constant space.
//
// Compilation recurses over nested expressions (bounded by the parser's
// nesting limit) but not along let chains, which may be arbitrarily long.
#pragma once

#include "compiler/ir/module.h"
#include "vm/bytecode/bytecode.h"

namespace relay::codegen {

// Compiles `module` (type-checked, e.g. by compiler::ParseAndCheck) with
// `prelude` (the module its names fall back to; may be null). Throws
// Error(kCompile) for what the VM cannot run yet (an operator used as a
// value). The result has passed vm::Verify.
vm::Executable CompileToBytecode(const ir::Module& module, const ir::Module* prelude);

}  // namespace relay::codegen
