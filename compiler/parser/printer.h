// Prints IR as canonical Relay text (version 0.0.5) that parses back to a
// structurally equal module.
//
// The style is Apache TVM's: every call, tuple and projection is bound to a
// numbered graph variable (%0 = add(%x, %y);) placed just before its first
// use in the innermost scope that encloses all its uses, so shared nodes
// print once and nesting depth never grows with program length. Attributes
// equal to their defaults are left out. Variables keep their names; two
// distinct variables of one function with the same name are told apart by a
// suffix (%x, %x_1).
#pragma once

#include <string>

#include "compiler/ir/module.h"

namespace relay::parser {

struct PrintOptions {
  // Tensor constants of rank > 0 (which Relay text cannot spell) print as
  // TVM's `meta[relay.Constant][N]`, numbered in print order, instead of
  // being an error: for looking at compiled programs, not for parsing back.
  bool tensor_constants_as_meta = false;
};

// Throws relay::Error (kUsage) for what Relay text cannot express: tensor
// constants of rank > 0 (unless `options` says otherwise) and non-finite
// scalar constants.
std::string PrintModule(const ir::Module& module, const PrintOptions& options = {});

// One expression, as the body of a file that is a single expression (free
// variables are declared with free_var).
std::string PrintExpression(const ir::Expr& expr);

}  // namespace relay::parser
