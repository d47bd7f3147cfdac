// Structural equality of IR, up to renaming of bound variables (alpha
// equivalence): two programs are equal when they have the same shape, the
// same operators, attributes, constants and types, and their variables are
// bound and used in corresponding places. Global names and constructor
// names are compared by name.
//
// Iterative: programs of any depth compare without recursion.
#pragma once

#include "compiler/ir/module.h"

namespace relay::ir {

bool StructurallyEqual(const Expr& a, const Expr& b);
bool StructurallyEqual(const Type& a, const Type& b);
bool StructurallyEqual(const Module& a, const Module& b);

}  // namespace relay::ir
