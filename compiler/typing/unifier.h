// Type unification with incomplete types (Relay's `_`) and unknown
// dimensions (`?`).
//
// Incomplete types are solved by binding them; a static dimension unifies
// with `?` (yielding the static one), so a tensor of known shape is accepted
// where `?` is declared, as Relay's gradual shape rules require.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/type.h"

namespace relay::typing {

class Unifier {
 public:
  // Unifies `a` and `b`, binding incomplete types as needed. Returns the
  // unified type, or nullopt if they cannot agree (nothing is reported: the
  // caller knows the context and words the message).
  std::optional<ir::Type> Unify(const ir::Type& a, const ir::Type& b);

  // Follows bindings at the top level only.
  ir::Type Resolve(const ir::Type& type) const;
  // Replaces every solved incomplete type inside `type`.
  ir::Type FullyResolve(const ir::Type& type) const;
  // Whether `type` (fully resolved) still contains an incomplete type.
  bool HasIncomplete(const ir::Type& type) const;

  // Replaces type variables by the types `substitution` maps them to.
  static ir::Type Substitute(
      const ir::Type& type,
      const std::unordered_map<const ir::TypeVarNode*, ir::Type>& substitution);

 private:
  std::optional<ir::Type> UnifyResolved(const ir::Type& a, const ir::Type& b);
  bool Occurs(const ir::IncompleteTypeNode* hole, const ir::Type& type) const;

  std::unordered_map<const ir::IncompleteTypeNode*, ir::Type> solutions_;
  // Keeps solved holes alive: solutions are keyed by address, which must not
  // be reused by a new hole while the solution is recorded.
  std::vector<ir::Type> solved_holes_;
  // Type variables of two function types being unified, matched pairwise.
  std::unordered_map<const ir::TypeVarNode*, const ir::TypeVarNode*> bound_type_vars_;
};

}  // namespace relay::typing
