// The front end in one call: Relay source text to a typed module.
#pragma once

#include "compiler/diagnostics.h"
#include "compiler/ir/module.h"

namespace relay::compiler {

// The built-in prelude (List, Option, Tree, map, foldl, ...), parsed and
// type-checked once, on first use. Thread-safe. Throws an internal error if
// the prelude itself fails to check (a bug in relay-vm).
const ir::Module& Prelude();

// Parses and type-checks `diagnostics.source_text()` with the prelude in
// scope. The returned module holds the program's own definitions; on errors
// (reported to `diagnostics`) it may be partial and untyped.
ir::Module ParseAndCheck(Diagnostics& diagnostics);

}  // namespace relay::compiler
