// What the IR passes share: rebuilding nodes with their types kept, making
// typed bindings, and applying a per-function rewrite to a whole module.
//
// Passes run after type inference, and the code generator reads types
// (whether a value is a tensor, a tuple, its shape), so every node a pass
// builds carries the checked type of the node it replaces.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/ir/expr.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/module.h"

namespace relay::passes {

// `expr` with new children (ir::WithChildren), the rebuilt node typed like
// `expr`.
ir::Expr WithTypedChildren(const ir::Expr& expr, const std::vector<ir::Expr>& children);

// `function` with `body` (itself when the body is the same), typed alike.
ir::Function WithBody(const ir::Function& function, const ir::Expr& body);

// The ExprMutator passes use: every node it rebuilds (with new children)
// keeps the checked type of the node it replaces, before RewriteTyped sees
// it, so no rewrite can forget to.
class TypedExprMutator : public ir::ExprMutator {
 protected:
  // As ExprMutator::Rewrite, with `rebuilt` typed like `original`.
  virtual ir::Expr RewriteTyped(const ir::Expr& original, const ir::Expr& rebuilt) = 0;

 private:
  ir::Expr Rewrite(const ir::Expr& original, const ir::Expr& rebuilt) final {
    if (rebuilt.get() != original.get()) rebuilt->set_checked_type(original->checked_type());
    return RewriteTyped(original, rebuilt);
  }
};

// A fresh variable for `value`, typed like it.
ir::Var FreshVar(const std::string& name_hint, const ir::Expr& value);

// `let var = value; body`, typed like `body`, located at `value`.
ir::Expr TypedLet(const ir::Var& var, const ir::Expr& value, const ir::Expr& body);

// `expr` with the variables of `replacements` replaced (types kept).
ir::Expr Substitute(const ir::Expr& expr,
                    const std::unordered_map<const ir::VarNode*, ir::Expr>& replacements);

// A call of operator `op` on `args` (typed) with `attrs` (normalised here),
// typed by the operator's type relation, located at `span`. For calls a
// pass builds from operands it has checked: a refusal is an internal error.
ir::Expr OperatorCall(std::string_view op, std::vector<ir::Expr> args, const kernels::Attrs& attrs,
                      const ir::Span& span);

// Let bindings, in evaluation order, around a body.
using Bindings = std::vector<std::pair<ir::Var, ir::Expr>>;
// `let b0 = ...; let b1 = ...; ... body`, typed like `body`.
ir::Expr WrapInLets(const Bindings& bindings, ir::Expr body);

// Operator fusion marks the functions it builds (one kernel each) with
// this attribute, as TVM does.
inline constexpr const char* kPrimitiveAttr = "Primitive";
// A function that an external codegen compiles (BYOC,
// kernels/external/external_codegen.h): Compiler names the codegen and
// global_symbol the function ("dnnl_0" from the partitioner; for XRT, the
// kernel of a loaded .xclbin). Its body states what it computes: the
// reference evaluator runs it, and it types the function; the VM calls what
// the codegen made of it instead.
inline constexpr const char* kCompilerAttr = "Compiler";
inline constexpr const char* kGlobalSymbolAttr = "global_symbol";
// A kernel as a whole: fusion's groups and external functions. Passes leave
// their bodies as they are.
bool IsPrimitive(const ir::FunctionNode& function);
// The Compiler attribute's value, or empty when there is none.
std::string ExternalCompiler(const ir::FunctionNode& function);

// Whether evaluating `expr` can have no effect but its value: no calls of
// functions (which may write references or fail), no reference writes, no
// match (which may fail); creating and reading references is pure. Operator calls count as pure; a
// failing one (a shape error) then goes unreported when its value is unused.
bool IsPure(const ir::Expr& expr);

using FunctionRewrite = std::function<ir::Function(const ir::Function&)>;

// `module` with `rewrite` applied to each global function; types, names and
// the source are kept.
ir::Module RewriteFunctions(const ir::Module& module, const FunctionRewrite& rewrite);
// The same, for a rewrite that needs each global's name.
ir::Module RewriteGlobals(const ir::Module& module,
                          const std::function<ir::Function(const ir::GlobalFunction&)>& rewrite);

}  // namespace relay::passes
