// The bytecode compiler: typed Relay IR to a VM executable
// (docs/architecture.md, "Bytecode and the VM").
//
// It runs the IR passes (compiler/passes/pipeline.h: eta-expansion, A-normal
// form, constant folding, CSE, dead code, fusion, lambda lifting), then
// emits every global of the program and of the prelude it may use: lifted
// closure bodies take their captured values first; a call of one with just
// those values is alloc_closure (load_self for the running closure itself);
// a fused primitive function is one kernel, its static-shaped result in the
// function's planned storage block (memory_plan.h) or, with `?` dimensions,
// allocated after its shape function; a match is emitted from its decision
// tree, ending in `fatal` with the match's location where no clause applies;
// calls that passes::MarkTailCalls marks are tail calls, or loops when they
// call the function itself. Then per function: jump threading, memory
// planning and liveness (kills, exchanges).
//
// Emission recurses over nested expressions (bounded by the parser's
// nesting limit) but not along let chains, which may be arbitrarily long.
#pragma once

#include "compiler/ir/module.h"
#include "compiler/passes/pipeline.h"
#include "vm/bytecode/bytecode.h"

namespace relay::codegen {

// Compiles `module` (type-checked, e.g. by compiler::ParseAndCheck) with
// `prelude` (the module its names fall back to; may be null). Throws
// Error(kCompile) for what the VM cannot run yet (an operator used as a
// value). With `codegens` (BYOC), what they run is partitioned off to them
// (pipeline.h), and each function marked Compiler="NAME" is compiled by its
// codegen. The result has passed vm::Verify.
vm::Executable CompileToBytecode(const ir::Module& module, const ir::Module* prelude,
                                 passes::ExternalCodegens codegens = {});

}  // namespace relay::codegen
