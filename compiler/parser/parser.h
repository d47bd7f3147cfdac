// Parses Relay's text format (version 0.0.5, as Apache TVM prints it) into
// an IR module.
//
// A file is either a module (definitions: `def @f(...) { ... }` and
// `type T[...] { ... }`) or a single expression, optionally preceded by
// `free_var %x: T;` declarations; an expression file becomes `@main`, whose
// parameters are the free variables in declaration order.
#pragma once

#include <string>
#include <string_view>

#include "compiler/diagnostics.h"
#include "compiler/ir/module.h"

namespace relay::parser {

// Expressions nest at most this deep in source text. Deeper nesting is
// reported as an error instead of exhausting the stack; long let chains and
// graph bindings (%0 = ...;) do not count, only syntactic nesting.
inline constexpr int kMaxNestingDepth = 500;

// Parses `diagnostics.source_text()`. Names the program does not define are
// looked up in `prelude` (may be null); the result holds only the program's
// own definitions. Errors go to `diagnostics`; after an error in one
// definition, parsing resumes at the next one, so the module may be partial.
ir::Module ParseModule(Diagnostics& diagnostics, const ir::Module* prelude);

}  // namespace relay::parser
