// Match compilation to decision trees (Maranget, "Compiling pattern matching
// to good decision trees", ML Workshop 2008).
//
// A `match` is compiled to a tree whose inner nodes test the constructor tag
// of one place inside the matched value (an occurrence) and whose leaves name
// the clause that runs and where its pattern variables are found. Along any
// path from the root each occurrence is tested at most once, so the code
// generated from a tree never re-tests a tag; the price is that a clause may
// be reached by several paths (its leaf appears several times, possibly with
// its variables at different occurrences). Clause bodies are referenced by
// index, never copied: the code generator emits each body once and jumps to
// it from every leaf.
//
// Semantics: following the tree on a value reaches the leaf of the first
// clause (in source order) whose pattern matches the value, with every
// variable of that pattern bound to the sub-value its pattern position
// matched, or reaches a Fail node exactly when no clause matches.
//
// Trees can grow exponentially in the number of clauses for some pattern
// sets. CompileDecisionTree therefore works within DecisionTreeLimits and
// returns null when a tree would exceed them; the caller then falls back to
// clause-by-clause code (which is linear in the size of the patterns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/expr.h"
#include "compiler/ir/module.h"

namespace relay::passes {

// A place inside the matched value: the field indices to follow from the
// root (empty: the value itself). A field of a constructor value or of a
// tuple is reached the same way (the VM's get_field serves both).
using Occurrence = std::vector<int32_t>;

// A pattern variable and the occurrence of the value it is bound to.
struct PatternBinding {
  const ir::VarNode* var = nullptr;
  Occurrence occurrence;
};

// One node of a decision tree. Which members are meaningful depends on
// `kind`; the others are left empty.
//
// The tree borrows the match's nodes (variables, constructors) and the
// modules' type definitions: it is valid while they live unchanged. It owns
// its subtrees; destroying a tree is iterative, so deep trees are safe to
// drop.
struct DecisionTree {
  enum class Kind : uint8_t {
    // Run clause `clause`'s body with `bindings` in scope.
    kLeaf,
    // Load the tag of the value at `occurrence` (always a value of the ADT
    // `type`) and continue with the case of that constructor, or with
    // `default_case` when no case names it.
    kSwitch,
    // No clause matches: only reachable when the clauses are not exhaustive.
    kFail,
  };

  // A branch of a switch. Inside `subtree` the fields of the switched value
  // are occurrence + {0}, occurrence + {1}, ... (constructor->inputs.size()
  // of them).
  struct Case {
    const ir::ConstructorNode* constructor = nullptr;  // its tag: constructor->tag
    std::unique_ptr<DecisionTree> subtree;
  };

  Kind kind = Kind::kFail;

  // kLeaf: the clause's index in MatchNode::clauses, and every variable of
  // its pattern, each once, in the order the compiler met them.
  size_t clause = 0;
  std::vector<PatternBinding> bindings;

  // kSwitch: the tested occurrence, its type's definition (whose
  // constructors, in tag order, are all the tags the value can have), the
  // cases in increasing tag order (never empty), and the subtree for every
  // other tag: null exactly when the cases name every constructor.
  Occurrence occurrence;
  const ir::TypeDefinition* type = nullptr;
  std::vector<Case> cases;
  std::unique_ptr<DecisionTree> default_case;

  DecisionTree() = default;
  explicit DecisionTree(Kind node_kind) : kind(node_kind) {}
  DecisionTree(DecisionTree&&) = default;
  DecisionTree& operator=(DecisionTree&&) = default;
  ~DecisionTree();
};

// Bounds on the work of CompileDecisionTree. The defaults accept every
// realistic match (a few dozen clauses nested a few levels deep compile to
// trees of tens of nodes) and stop pathological ones within tens of
// milliseconds.
struct DecisionTreeLimits {
  // Nodes (leaves, switches and fails) in the whole tree.
  size_t max_nodes = 10'000;
  // Switches along one path from the root: bounds the recursion depth of a
  // code generator that walks the tree recursively.
  size_t max_depth = 1'000;
  // Pattern cells in all the clause matrices built on the way: bounds the
  // compile time, which is otherwise about nodes x clauses x columns.
  size_t max_matrix_cells = 4'000'000;
};

// Compiles `match`'s clauses to a decision tree, choosing at each switch the
// leftmost column on which the first remaining clause tests a constructor
// (Maranget's "first row" heuristic). Tuple patterns are never tested (a
// tuple always has its type's shape); their fields become occurrences of
// their own.
//
// Each constructor's type definition is looked up by its ADT's name in
// `module`, then in `prelude` (may be null); both must be the modules the
// match was type-checked with. Returns null when the tree would exceed
// `limits`; the caller should then compile the match clause by clause.
// Throws Error(kCompile) for a constructor whose type definition is in
// neither module, and an internal error for patterns type inference would
// have rejected (constructors of different types, or tuples of different
// sizes, in one position).
//
// Runs without recursion on the C++ stack, so neither pattern nesting nor
// the number of clauses is limited by the stack. Occurrences are whole paths,
// so memory grows with the square of the nesting depth (which the parser
// bounds at 500).
[[nodiscard]] std::unique_ptr<DecisionTree> CompileDecisionTree(
    const ir::MatchNode& match, const ir::Module& module, const ir::Module* prelude,
    const DecisionTreeLimits& limits = {});

// The tree as indented text, one node a line, for tests and debugging:
//
//   switch [] List
//     Cons: switch [1] List
//       Cons: leaf 0 %a=[0] %b=[1,0]
//       Nil: leaf 1 %a=[0]
//     Nil: leaf 2
//
// A default case prints as `_:`, a Fail node as `fail`.
std::string DecisionTreeToString(const DecisionTree& tree);

}  // namespace relay::passes
