// Eta-expansion: a constructor or a global function used as a value (passed
// to @map, stored in a tuple) becomes a function literal that calls it:
// `Cons` -> `fn (%x0, %x1) { Cons(%x0, %x1) }`. Afterwards only calls name
// constructors and globals, and every function value is a function
// literal, which lambda lifting turns into a closure. (The code generator
// recognises a literal that only forwards to a global, and uses the
// global's own function for it.)
#pragma once

#include "compiler/ir/module.h"

namespace relay::passes {

// `scope` is the module `function` belongs to, `fallback` where names it
// does not define resolve (the prelude for a program; may be null).
ir::Function EtaExpand(const ir::Function& function, const ir::Module& scope,
                       const ir::Module* fallback);

}  // namespace relay::passes
