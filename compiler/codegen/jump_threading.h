// Jump threading and unreachable-code removal over one function's bytecode:
// a jump whose target is a `goto` jumps straight to where that goes (the
// match compiler's shared clause bodies are entered through such gotos),
// and instructions no path from the entry reaches are dropped.
#pragma once

#include "vm/bytecode/bytecode.h"

namespace relay::codegen {

void ThreadJumps(vm::Function& function);

}  // namespace relay::codegen
