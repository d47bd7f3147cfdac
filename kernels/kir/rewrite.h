// Queries and rewrites over kernel-IR expressions that schedules need:
// which variables an expression mentions, where its reductions are, and
// the same expression with some of its nodes replaced.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/kir/kir.h"

namespace relay::kernels::kir {

// The direct subexpressions of `expr` (a reduction's extents, init and body).
std::vector<Expr> Operands(const Expr& expr);

// Whether `expr` mentions any of `vars`.
bool MentionsAny(const Expr& expr, const std::unordered_set<const VarNode*>& vars);

// The variables `expr` mentions that no reduction inside it binds.
std::unordered_set<const VarNode*> FreeVariables(const Expr& expr);

// Every reduction inside `expr`, outermost first (nested reductions too).
std::vector<const ReduceNode*> FindReductions(const Expr& expr);

// Whether `a` and `b` compute the same thing node for node: equal
// constants, the same variables and buffers (by identity), the same
// operators over operands that are the same. Reductions are the same only
// as one node (their axes bind variables of their own).
bool SameExpr(const Expr& a, const Expr& b);

// The first subexpression of `expr` (outermost first) that is the same as
// `pattern` (SameExpr), or null.
const ExprNode* FindSame(const Expr& expr, const Expr& pattern);

// Appends to `loads` every load inside `expr` (outermost first), leaving out
// the subexpression `skip` (may be null).
void CollectLoads(const Expr& expr, const ExprNode* skip, std::vector<Expr>& loads);

// How far apart (in elements) `operand`, a plain load, reads at `along` = 0
// and 1 with every variable of `others` at 0; nothing when that is not a
// constant (or `operand` is not a load).
std::optional<int64_t> StrideAlong(const Expr& operand, const Var& along,
                                   const std::vector<Var>& others);

// `expr` with each node that is a key of `replacements` (compared by
// identity: a variable, a reduction, any subexpression) replaced by its
// value. Index arithmetic is folded again as the builders do.
using Replacements = std::unordered_map<const ExprNode*, Expr>;
Expr Substitute(const Expr& expr, const Replacements& replacements);

}  // namespace relay::kernels::kir
