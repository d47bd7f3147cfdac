// Type inference for a Relay module (docs/architecture.md, "The front end").
//
// Every expression of every function gets its checked_type(). Polymorphic
// globals and constructors are instantiated at each use; operator calls are
// typed by the operator table's type relations, deferred until their
// argument types are known. Errors name the construct and both disagreeing
// types; checking resumes with the next global after an error, so
// independent errors in different functions are all reported.
#pragma once

#include <optional>

#include "compiler/diagnostics.h"
#include "compiler/ir/module.h"
#include "kernels/operator.h"

namespace relay::typing {

// Infers the types of `module`'s functions. Globals, types and constructors
// not defined in `module` come from `prelude` (may be null), whose functions
// must already have been inferred. Returns false if any error was reported.
bool InferTypes(const ir::Module& module, Diagnostics& diagnostics,
                const ir::Module* prelude = nullptr);

// The type of a global function after InferTypes: fn [T...](params) -> ret.
ir::Type GlobalFunctionType(const ir::Function& function);

// A tensor type or a tuple of them in the operator table's neutral terms
// (what type relations see), or nullopt for any other type.
std::optional<kernels::ValueType> ToValueType(const ir::Type& type);

}  // namespace relay::typing
