// Reverse-mode automatic differentiation as a program transformation
// (Relay's `gradient`, after Roesch et al., "Relay: A High-Level Compiler
// for Deep Learning", section 4.1).
//
// AddGradient(program, prelude, "main") returns the program with a new
// global @main_grad: the same parameters as @main, returning
//
//   (result, (d_param1, ..., d_paramN))
//
// where result is @main's and d_paramK the gradient, with respect to the
// K-th floating-point tensor parameter, of the sum of every element of the
// result (a tensor, or a tuple of them: each element is seeded with one, as
// TVM's gradient does). Parameters of other types (integer or bool tensors,
// tuples, ADTs) get no slot: the tuple lists the floating-point tensor
// parameters only, in order.
//
// Two strategies:
// - first order, where @main is plain dataflow (lets, tuples, projections
//   and operator calls): the backward pass is more dataflow after the
//   forward one, the adjoints summed symbolically, so every later pass
//   (fusion, planned memory) applies to it;
// - higher order, for everything else (if, match, closures, references,
//   recursion, calls of globals): each floating-point tensor becomes a pair
//   (value, ref(gradient)), and each differentiable operator call pushes a
//   closure onto a backpropagator held in a reference, which the gradient
//   function runs backwards once the result is known. Globals that @main
//   reaches are transformed alike into @NAME_reverse, which take the
//   backpropagator first; globals whose types hold no floating-point tensor
//   (and no type variable) are called as they are.
//
// Operator gradients come from compiler/passes/operator_gradients/.
#pragma once

#include <string>
#include <string_view>

#include "compiler/ir/module.h"

namespace relay::passes {

// The name AddGradient gives the gradient of `entry`: "main" -> "main_grad".
std::string GradientName(std::string_view entry);

// `program` (type-checked, with `prelude`, which may be null) plus the
// gradient of global `entry` and the globals it needs, type-checked.
// Throws relay::Error:
// - kUsage when `entry` is not a global of `program`, or already has a
//   gradient global by that name;
// - kType, at the call, when the gradient must go through an operator that
//   has none (the message names it), and at the parameter when one of
//   `entry`'s parameters is a function or a reference, or `entry`'s result
//   is not a tensor or a tuple of tensors.
// `gradient_global`, when given, names the new global (the parser's node
// for a requested @f_grad, which the program's calls refer to).
ir::Module AddGradient(const ir::Module& program, const ir::Module* prelude, std::string_view entry,
                       ir::GlobalVar gradient_global = nullptr);

}  // namespace relay::passes
