// Decision trees for `match`: the shapes of small trees, pinned by hand from
// Maranget's algorithm with the first-row heuristic, and their meaning,
// checked against an independent oracle: a naive first-match matcher run on
// every value of bounded depth of the scrutinee's type, for fixed and for
// randomly generated (fixed seed) pattern sets.
#include "compiler/passes/decision_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/ir/expr_functor.h"
#include "relay/error.h"

namespace relay::passes {
namespace {

using ir::As;

constexpr const char* kHeader = "#[version = \"0.0.5\"]\n";

ir::Module Check(const std::string& source) {
  Diagnostics diagnostics("test.relay", std::make_shared<const std::string>(kHeader + source));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) ADD_FAILURE() << diagnostics.FormatAll() << "\nin:\n" << source;
  return module;
}

// The outermost match in the body of @name.
const ir::MatchNode& MatchOf(const ir::Module& module, const std::string& name) {
  const ir::GlobalFunction* global = module.FindFunction(name);
  RELAY_CHECK(global != nullptr, "test program without @" + name);
  const ir::MatchNode* found = nullptr;
  // Post order: the last match seen encloses the others.
  ir::PostOrderVisit(global->function->body, [&found](const ir::Expr& expr) {
    if (const auto* match = As<ir::MatchNode>(expr)) found = match;
  });
  RELAY_CHECK(found != nullptr, "@" + name + " has no match");
  return *found;
}

std::unique_ptr<DecisionTree> TreeOf(const ir::Module& module, const std::string& name,
                                     const DecisionTreeLimits& limits = {}) {
  return CompileDecisionTree(MatchOf(module, name), module, &compiler::Prelude(), limits);
}

std::string TreeText(const std::string& source, const std::string& name = "f") {
  ir::Module module = Check(source);
  std::unique_ptr<DecisionTree> tree = TreeOf(module, name);
  if (tree == nullptr) return "(over the limits)";
  return DecisionTreeToString(*tree);
}

// ---- structural properties ---------------------------------------------------

struct TreeStatistics {
  size_t nodes = 0;
  size_t fails = 0;
  size_t depth = 0;  // switches on the longest path
};

// Walks every path, checking the invariants the header promises: no
// occurrence tested twice on a path, cases in increasing tag order, a
// default exactly when the cases miss a constructor, and a switched
// occurrence's parent switched (to a constructor with that field) or a tuple.
TreeStatistics CheckStructure(const DecisionTree& tree) {
  TreeStatistics statistics;
  struct Pending {
    const DecisionTree* node;
    size_t depth;
  };
  std::vector<Pending> pending{{&tree, 0}};
  // Depth first: the occurrences tested by the switches above the node.
  std::vector<const Occurrence*> path;
  while (!pending.empty()) {
    Pending next = pending.back();
    pending.pop_back();
    const DecisionTree& node = *next.node;
    ++statistics.nodes;
    statistics.depth = std::max(statistics.depth, next.depth);
    path.resize(next.depth);
    switch (node.kind) {
      case DecisionTree::Kind::kFail:
        ++statistics.fails;
        EXPECT_TRUE(node.cases.empty() && !node.default_case && node.bindings.empty());
        break;
      case DecisionTree::Kind::kLeaf: {
        EXPECT_TRUE(node.cases.empty() && !node.default_case);
        std::set<const ir::VarNode*> bound;
        for (const PatternBinding& binding : node.bindings)
          EXPECT_TRUE(bound.insert(binding.var).second) << binding.var->name_hint << " twice";
        break;
      }
      case DecisionTree::Kind::kSwitch: {
        for (const Occurrence* tested : path) {
          if (*tested == node.occurrence) {
            ADD_FAILURE() << "occurrence re-tested on a path:\n" << DecisionTreeToString(tree);
            break;
          }
        }
        path.push_back(&node.occurrence);
        if (node.type == nullptr || node.cases.empty()) {
          ADD_FAILURE() << "a switch without a type or without cases";
          break;
        }
        int previous_tag = -1;
        for (const DecisionTree::Case& branch : node.cases) {
          EXPECT_GT(branch.constructor->tag, previous_tag);
          previous_tag = branch.constructor->tag;
          EXPECT_EQ(node.type->constructors[branch.constructor->tag].get(), branch.constructor);
          if (branch.subtree == nullptr) {
            ADD_FAILURE() << "a case without a subtree";
            continue;
          }
          pending.push_back({branch.subtree.get(), next.depth + 1});
        }
        EXPECT_EQ(node.default_case == nullptr,
                  node.cases.size() == node.type->constructors.size());
        if (node.default_case) pending.push_back({node.default_case.get(), next.depth + 1});
        break;
      }
    }
  }
  return statistics;
}

// ---- shapes ----------------------------------------------------------------

TEST(DecisionTreeShape, ListPatternsTestTheRootOnceAndTheTailOnce) {
  const std::string source = R"(
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%a, Cons(%b, _)) => %a + %b,
    Cons(%a, Nil) => %a,
    Nil => 0,
  }
}
)";
  EXPECT_EQ(TreeText(source),
            "switch [] List\n"
            "  Cons: switch [1] List\n"
            "    Cons: leaf 0 %a=[0] %b=[1,0]\n"
            "    Nil: leaf 1 %a=[0]\n"
            "  Nil: leaf 2\n");
  ir::Module module = Check(source);
  TreeStatistics statistics = CheckStructure(*TreeOf(module, "f"));
  EXPECT_EQ(statistics.fails, 0u);
  EXPECT_EQ(statistics.nodes, 5u);
}

TEST(DecisionTreeShape, NestedOptionAndTupleFollowsTheFirstRow) {
  // tests/programs/run/nested_match.relay's classifier.
  EXPECT_EQ(TreeText(R"(
def @f(%x: Option[(Option[int32], List[int32])]) -> int32 {
  match (%x) {
    None => 4,
    Some((None, _)) => 1,
    Some((_, Cons(_, Cons(_, _)))) => 3,
    Some((_, _)) => 2,
  }
}
)"),
            "switch [] Option\n"
            "  Some: switch [0,0] Option\n"
            "    None: leaf 1\n"
            "    _: switch [0,1] List\n"
            "      Cons: switch [0,1,1] List\n"
            "        Cons: leaf 2\n"
            "        _: leaf 3\n"
            "      _: leaf 3\n"
            "  None: leaf 0\n");
}

TEST(DecisionTreeShape, NonExhaustiveMatchFailsInTheDefault) {
  EXPECT_EQ(TreeText(R"(
def @f(%o: Option[int32]) -> int32 {
  match? (%o) {
    Some(%v) => %v,
  }
}
)"),
            "switch [] Option\n"
            "  Some: leaf 0 %v=[0]\n"
            "  _: fail\n");
}

TEST(DecisionTreeShape, TuplesAndVariablesNeedNoTest) {
  EXPECT_EQ(TreeText(R"(
def @f(%p: (int32, (int32, List[int32]))) -> int32 {
  match (%p) {
    (%a, (%b, _)) => %a + %b,
  }
}
)"),
            "leaf 0 %a=[0] %b=[1,0]\n");
  EXPECT_EQ(TreeText(R"(
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    %whole => 0,
    Nil => 1,
  }
}
)"),
            "leaf 0 %whole=[]\n");
  EXPECT_EQ(TreeText(R"(
def @f(%u: ()) -> int32 {
  match (%u) {
    () => 0,
  }
}
)"),
            "leaf 0\n");
}

TEST(DecisionTreeShape, VariableRowsReachEveryCaseWithTheirBindings) {
  // The clause with a variable at the root is reached under both Circle and
  // the default, binding the whole value each time.
  EXPECT_EQ(TreeText(R"(
type Shape {
  Circle(int32),
  Rect(Shape, Shape),
  Empty,
}
def @f(%s: (Shape, Shape)) -> int32 {
  match (%s) {
    (Circle(%r), Empty) => %r,
    (%any, Rect(_, %inner)) => 1,
    _ => 2,
  }
}
)"),
            "switch [0] Shape\n"
            "  Circle: switch [1] Shape\n"
            "    Rect: leaf 1 %any=[0] %inner=[1,1]\n"
            "    Empty: leaf 0 %r=[0,0]\n"
            "    _: leaf 2\n"
            "  _: switch [1] Shape\n"
            "    Rect: leaf 1 %any=[0] %inner=[1,1]\n"
            "    _: leaf 2\n");
}

TEST(DecisionTreeShape, ExhaustiveMatchesHaveNoFail) {
  ir::Module module = Check(R"(
type Shape {
  Circle(int32),
  Rect(Shape, Shape),
  Empty,
}
def @shapes(%s: Shape) -> int32 {
  match (%s) {
    Rect(Empty, _) => 0,
    Rect(Circle(_), Rect(_, _)) => 1,
    Rect(_, _) => 2,
    Circle(_) => 3,
    Empty => 4,
  }
}
def @lists(%xs: List[Option[int32]]) -> int32 {
  match (%xs) {
    Cons(Some(_), Cons(None, _)) => 0,
    Cons(None, _) => 1,
    Cons(Some(%x), %rest) => %x,
    Nil => 3,
  }
}
def @pairs(%p: (Option[int32], Option[int32])) -> int32 {
  match (%p) {
    (Some(_), Some(_)) => 0,
    (None, _) => 1,
    (_, None) => 2,
  }
}
)");
  for (const char* name : {"shapes", "lists", "pairs"}) {
    std::unique_ptr<DecisionTree> tree = TreeOf(module, name);
    ASSERT_NE(tree, nullptr) << name;
    EXPECT_EQ(CheckStructure(*tree).fails, 0u) << name << ":\n" << DecisionTreeToString(*tree);
  }
}

TEST(DecisionTreeErrors, ConstructorOfAnUnknownTypeIsACompileError) {
  ir::Constructor ghost = ir::Make<ir::ConstructorNode>(
      "Ghost", std::vector<ir::Type>{}, ir::Make<ir::GlobalTypeVarNode>("Phantom"), 0);
  ir::Var data = ir::Make<ir::VarNode>("x", ir::Type());
  ir::Expr body = ir::Make<ir::TupleNode>(std::vector<ir::Expr>{});
  ir::MatchNode match(
      data, {{ir::Make<ir::PatternConstructorNode>(ghost, std::vector<ir::Pattern>{}), body}},
      true);
  ir::Module empty;
  try {
    std::unique_ptr<DecisionTree> tree = CompileDecisionTree(match, empty, &compiler::Prelude());
    ADD_FAILURE() << "expected an error, got\n" << DecisionTreeToString(*tree);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kCompile);
    EXPECT_EQ(error.message(), "constructor Ghost of an unknown type");
  }
}

// ---- limits -------------------------------------------------------------------

// 2n columns of Option; clause i needs Some in columns i and n + i. The first
// row heuristic tests column i, then column n + i, and every later clause is
// still possible after either outcome of either test, so the tree doubles
// with each clause.
std::string DiagonalSource(int n) {
  std::string type = "(";
  for (int column = 0; column < 2 * n; ++column) type += "Option[int32], ";
  type += ")";
  std::string source = "def @f(%x: " + type + ") -> int32 {\n  match? (%x) {\n";
  for (int clause = 0; clause < n; ++clause) {
    std::string pattern = "(";
    for (int column = 0; column < 2 * n; ++column)
      pattern += (column == clause || column == n + clause) ? "Some(_), " : "_, ";
    source += "    " + pattern + ") => " + std::to_string(clause) + ",\n";
  }
  return source + "  }\n}\n";
}

TEST(DecisionTreeBudget, DiagonalPatternsGrowExponentially) {
  DecisionTreeLimits unlimited{1'000'000, 1'000'000, 1'000'000'000};
  size_t previous = 0;
  for (int n = 1; n <= 8; ++n) {
    ir::Module module = Check(DiagonalSource(n));
    std::unique_ptr<DecisionTree> tree = TreeOf(module, "f", unlimited);
    ASSERT_NE(tree, nullptr);
    const size_t nodes = CheckStructure(*tree).nodes;
    // T(n) = 2 T(n-1) + 3 (two switches and the leaf of clause 0), T(0) = 1.
    EXPECT_EQ(nodes, (size_t{1} << (n + 2)) - 3) << "n = " << n;
    EXPECT_GT(nodes, 2 * previous);
    previous = nodes;
  }
}

TEST(DecisionTreeBudget, OversizedTreesAreRefusedQuickly) {
  ir::Module module = Check(DiagonalSource(24));  // 2^26 nodes without the limit
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(TreeOf(module, "f"), nullptr);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // A loose bound (debug builds, shared machines): the point is that the
  // limit stops the work long before the 2^26 nodes.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 10);

  ir::Module small = Check(DiagonalSource(4));
  EXPECT_NE(TreeOf(small, "f"), nullptr);
  EXPECT_EQ(TreeOf(small, "f", {60, 1'000, 1'000'000}), nullptr);  // 61 nodes needed
  EXPECT_NE(TreeOf(small, "f", {61, 1'000, 1'000'000}), nullptr);
  EXPECT_EQ(TreeOf(small, "f", {1'000, 7, 1'000'000}), nullptr);  // 8 switches deep
  EXPECT_NE(TreeOf(small, "f", {1'000, 8, 1'000'000}), nullptr);
  EXPECT_EQ(TreeOf(small, "f", {1'000, 1'000, 100}), nullptr);
}

// Patterns ten times deeper than the parser allows (built directly as IR):
// the compiler keeps its work on the heap, refuses them under the default
// depth limit and compiles them under a larger one. (Occurrences are whole
// paths, so memory grows with the square of the depth; the limits keep that
// small.)
TEST(DecisionTreeBudget, DeepPatternsCompileUnderALargerDepthLimit) {
  const ir::Module& prelude = compiler::Prelude();
  const ir::Constructor some = prelude.FindConstructor("Some");
  const ir::Constructor none = prelude.FindConstructor("None");
  ASSERT_TRUE(some && none);
  constexpr size_t kDepth = 5'000;
  ir::Pattern deep = ir::Make<ir::PatternConstructorNode>(none, std::vector<ir::Pattern>{});
  for (size_t level = 0; level < kDepth; ++level)
    deep = ir::Make<ir::PatternConstructorNode>(some, std::vector<ir::Pattern>{deep});
  ir::Var data = ir::Make<ir::VarNode>("x", ir::Type());
  ir::Expr body = ir::Make<ir::TupleNode>(std::vector<ir::Expr>{});
  ir::MatchNode match(data, {{deep, body}, {ir::Make<ir::PatternWildcardNode>(), body}}, true);
  ir::Module empty;

  EXPECT_EQ(CompileDecisionTree(match, empty, &prelude), nullptr);  // past max_depth
  std::unique_ptr<DecisionTree> tree =
      CompileDecisionTree(match, empty, &prelude, {100'000, 10'000, 100'000'000});
  ASSERT_NE(tree, nullptr);
  // A chain of switches on [], [0], [0,0], ... each with a default leaf.
  TreeStatistics statistics = CheckStructure(*tree);
  EXPECT_EQ(statistics.depth, kDepth + 1);
  EXPECT_EQ(statistics.nodes, 2 * kDepth + 3);
  EXPECT_EQ(statistics.fails, 0u);
}

// Dropping a tree uses no stack per level.
TEST(DecisionTreeBudget, DeepTreesAreDestroyedIteratively) {
  constexpr size_t kDepth = 1'000'000;
  const ir::TypeDefinition* option = compiler::Prelude().FindTypeDefinition("Option");
  ASSERT_NE(option, nullptr);
  auto root = std::make_unique<DecisionTree>(DecisionTree::Kind::kFail);
  DecisionTree* bottom = root.get();
  for (size_t level = 0; level < kDepth; ++level) {
    bottom->kind = DecisionTree::Kind::kSwitch;
    bottom->type = option;
    bottom->cases.push_back(
        {option->constructors[0].get(), std::make_unique<DecisionTree>(DecisionTree::Kind::kFail)});
    bottom->default_case = std::make_unique<DecisionTree>(DecisionTree::Kind::kFail);
    bottom = bottom->cases.back().subtree.get();
  }
  root.reset();  // a recursive destructor would need a million frames
}

// ---- meaning: the naive matcher as oracle -----------------------------------

// A concrete value: a constructor value (tag and fields), a tuple, or an
// opaque leaf (a tensor, a function: nothing a pattern can look inside).
struct TestValue {
  enum class Kind { kAdt, kTuple, kOpaque } kind = Kind::kOpaque;
  int tag = -1;
  std::vector<TestValue> fields;
};

std::string ValueToString(const TestValue& value) {
  if (value.kind == TestValue::Kind::kOpaque) return "#";
  std::string text = value.kind == TestValue::Kind::kAdt ? "C" + std::to_string(value.tag) : "";
  text += "(";
  for (size_t index = 0; index < value.fields.size(); ++index)
    text += (index > 0 ? ", " : "") + ValueToString(value.fields[index]);
  return text + ")";
}

// The ADT definition a type names, the program's first.
const ir::TypeDefinition* DefinitionNamed(const ir::Module& module, const std::string& name) {
  const ir::TypeDefinition* definition = module.FindTypeDefinition(name);
  if (definition == nullptr) definition = compiler::Prelude().FindTypeDefinition(name);
  RELAY_CHECK(definition != nullptr, "no type " + name);
  return definition;
}

using Substitution = std::unordered_map<const ir::TypeVarNode*, ir::Type>;

ir::Type Substitute(const ir::Type& type, const Substitution& substitution) {
  if (const auto* var = As<ir::TypeVarNode>(type)) {
    auto found = substitution.find(var);
    return found == substitution.end() ? type : found->second;
  }
  if (const auto* call = As<ir::TypeCallNode>(type)) {
    std::vector<ir::Type> args;
    for (const ir::Type& arg : call->args) args.push_back(Substitute(arg, substitution));
    return ir::Make<ir::TypeCallNode>(call->adt, std::move(args));
  }
  if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
    std::vector<ir::Type> fields;
    for (const ir::Type& field : tuple->fields) fields.push_back(Substitute(field, substitution));
    return ir::TupleType(std::move(fields));
  }
  return type;
}

// An ADT type's definition and its constructors' field types, instantiated.
struct AdtView {
  const ir::TypeDefinition* definition = nullptr;
  std::vector<std::vector<ir::Type>> field_types;  // by tag
};

std::optional<AdtView> ViewAdt(const ir::Module& module, const ir::Type& type) {
  ir::GlobalTypeVar name;
  std::vector<ir::Type> args;
  if (const auto* call = As<ir::TypeCallNode>(type)) {
    name = call->adt;
    args = call->args;
  } else if (const auto* global = As<ir::GlobalTypeVarNode>(type)) {
    name = ir::Share(global);
  } else {
    return std::nullopt;
  }
  AdtView view;
  view.definition = DefinitionNamed(module, name->name);
  Substitution substitution;
  for (size_t index = 0; index < args.size(); ++index)
    substitution[view.definition->type_params[index].get()] = args[index];
  for (const ir::Constructor& constructor : view.definition->constructors) {
    std::vector<ir::Type> fields;
    for (const ir::Type& input : constructor->inputs)
      fields.push_back(Substitute(input, substitution));
    view.field_types.push_back(std::move(fields));
  }
  return view;
}

// Every value of `type` with at most `depth` nested constructors, capped at
// `limit` values (the cap only guards against a mistaken test).
std::vector<TestValue> AllValues(const ir::Module& module, const ir::Type& type, int depth,
                                 size_t limit = 200'000) {
  std::vector<ir::Type> field_types;
  std::vector<TestValue> result;
  auto product = [&](const std::vector<ir::Type>& types, int field_depth, const TestValue& shape) {
    std::vector<TestValue> partial{shape};
    for (const ir::Type& field_type : types) {
      std::vector<TestValue> choices = AllValues(module, field_type, field_depth, limit);
      std::vector<TestValue> extended;
      for (const TestValue& prefix : partial) {
        for (const TestValue& choice : choices) {
          TestValue value = prefix;
          value.fields.push_back(choice);
          extended.push_back(std::move(value));
          RELAY_CHECK(extended.size() <= limit, "too many test values");
        }
      }
      partial = std::move(extended);
    }
    result.insert(result.end(), partial.begin(), partial.end());
  };
  if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
    product(tuple->fields, depth, TestValue{TestValue::Kind::kTuple, -1, {}});
  } else if (std::optional<AdtView> adt = ViewAdt(module, type)) {
    if (depth == 0) return {};
    for (size_t tag = 0; tag < adt->field_types.size(); ++tag)
      product(adt->field_types[tag], depth - 1,
              TestValue{TestValue::Kind::kAdt, static_cast<int>(tag), {}});
  } else {
    result.push_back(TestValue{});
  }
  return result;
}

const TestValue* ValueAt(const TestValue& root, const Occurrence& occurrence) {
  const TestValue* value = &root;
  for (int32_t field : occurrence) {
    if (field < 0 || static_cast<size_t>(field) >= value->fields.size()) return nullptr;
    value = &value->fields[field];
  }
  return value;
}

struct MatchOutcome {
  bool matched = false;
  size_t clause = 0;
  std::map<const ir::VarNode*, Occurrence> bindings;
  bool operator==(const MatchOutcome&) const = default;
};

bool NaiveMatches(const ir::PatternNode* pattern, const TestValue& value, Occurrence& occurrence,
                  std::map<const ir::VarNode*, Occurrence>& bindings) {
  if (As<ir::PatternWildcardNode>(pattern) != nullptr) return true;
  if (const auto* var = As<ir::PatternVarNode>(pattern)) {
    bindings[var->var.get()] = occurrence;
    return true;
  }
  const std::vector<ir::Pattern>* fields = nullptr;
  if (const auto* constructor = As<ir::PatternConstructorNode>(pattern)) {
    RELAY_CHECK(value.kind == TestValue::Kind::kAdt, "constructor pattern on a non-ADT value");
    if (constructor->constructor->tag != value.tag) return false;
    fields = &constructor->patterns;
  } else {
    const auto* tuple = As<ir::PatternTupleNode>(pattern);
    RELAY_CHECK(tuple != nullptr && value.kind == TestValue::Kind::kTuple, "bad tuple pattern");
    fields = &tuple->patterns;
  }
  RELAY_CHECK(fields->size() == value.fields.size(), "pattern and value of different sizes");
  for (size_t index = 0; index < fields->size(); ++index) {
    occurrence.push_back(static_cast<int32_t>(index));
    const bool matched =
        NaiveMatches((*fields)[index].get(), value.fields[index], occurrence, bindings);
    occurrence.pop_back();
    if (!matched) return false;
  }
  return true;
}

// The first clause whose pattern matches, tried one after another.
MatchOutcome NaiveMatch(const ir::MatchNode& match, const TestValue& value) {
  for (size_t clause = 0; clause < match.clauses.size(); ++clause) {
    Occurrence occurrence;
    std::map<const ir::VarNode*, Occurrence> bindings;
    if (NaiveMatches(match.clauses[clause].pattern.get(), value, occurrence, bindings))
      return {true, clause, std::move(bindings)};
  }
  return {};
}

// Runs the tree on `value`, as generated code would: every switched and every
// bound occurrence must exist in the value.
MatchOutcome FollowTree(const DecisionTree& tree, const TestValue& value) {
  const DecisionTree* node = &tree;
  while (node->kind == DecisionTree::Kind::kSwitch) {
    const TestValue* tested = ValueAt(value, node->occurrence);
    RELAY_CHECK(tested != nullptr && tested->kind == TestValue::Kind::kAdt,
                "switch on a missing or non-ADT occurrence");
    const DecisionTree* next = node->default_case.get();
    for (const DecisionTree::Case& branch : node->cases) {
      if (branch.constructor->tag == tested->tag) next = branch.subtree.get();
    }
    RELAY_CHECK(next != nullptr, "no case for tag " + std::to_string(tested->tag));
    node = next;
  }
  MatchOutcome outcome;
  if (node->kind == DecisionTree::Kind::kFail) return outcome;
  outcome.matched = true;
  outcome.clause = node->clause;
  for (const PatternBinding& binding : node->bindings) {
    RELAY_CHECK(ValueAt(value, binding.occurrence) != nullptr, "binding to a missing occurrence");
    outcome.bindings[binding.var] = binding.occurrence;
  }
  return outcome;
}

std::string OutcomeToString(const MatchOutcome& outcome) {
  if (!outcome.matched) return "no match";
  std::string text = "clause " + std::to_string(outcome.clause);
  for (const auto& [var, occurrence] : outcome.bindings) {
    text += " %" + var->name_hint + "=[";
    for (int32_t field : occurrence) text += std::to_string(field) + ".";
    text += "]";
  }
  return text;
}

struct OracleCounts {
  size_t values = 0;
  size_t unmatched = 0;  // values no clause matches
};

// Checks @name's tree against the naive matcher on every value of its
// scrutinee's type up to `depth`.
OracleCounts CheckAgainstOracle(const ir::Module& module, const std::string& name, int depth) {
  const ir::MatchNode& match = MatchOf(module, name);
  std::unique_ptr<DecisionTree> tree = TreeOf(module, name);
  RELAY_CHECK(tree != nullptr, "@" + name + "'s tree is over the limits");
  CheckStructure(*tree);
  const ir::Type& type = match.data->checked_type();
  RELAY_CHECK(type && As<ir::IncompleteTypeNode>(type) == nullptr, "untyped scrutinee");
  std::vector<TestValue> values = AllValues(module, type, depth);
  EXPECT_FALSE(values.empty());
  OracleCounts counts;
  counts.values = values.size();
  for (const TestValue& value : values) {
    MatchOutcome expected = NaiveMatch(match, value);
    MatchOutcome actual = FollowTree(*tree, value);
    if (!expected.matched) ++counts.unmatched;
    if (!(actual == expected)) {
      ADD_FAILURE() << "@" << name << " on " << ValueToString(value) << ": tree gives "
                    << OutcomeToString(actual) << ", first match gives "
                    << OutcomeToString(expected) << "\n"
                    << DecisionTreeToString(*tree);
      break;
    }
  }
  return counts;
}

const char* kShapeType = R"(
type Shape {
  Circle(int32),
  Rect(Shape, Shape),
  Empty,
}
)";

TEST(DecisionTreeOracle, FixedPatternSetsAgreeWithFirstMatch) {
  ir::Module module = Check(std::string(kShapeType) + R"(
def @list_of_option(%xs: List[Option[int32]]) -> int32 {
  match? (%xs) {
    Cons(Some(%x), Cons(Some(%y), _)) => %x + %y,
    Cons(None, Cons(%second, Nil)) => 1,
    Cons(_, Cons(_, Cons(%third, _))) => 2,
    Cons(%first, Nil) => 3,
  }
}
def @list_exhaustive(%xs: List[Option[int32]]) -> int32 {
  match (%xs) {
    Cons(Some(_), Cons(None, %rest)) => 0,
    Cons(None, _) => 1,
    Cons(Some(%x), %rest) => %x,
    Nil => 3,
  }
}
def @nested_tuples(%t: ((Option[int32], List[int32]), (Option[int32], (int32, Option[int32])))) -> int32 {
  match? (%t) {
    ((Some(%a), Cons(%b, _)), (_, (%c, None))) => 0,
    ((None, _), (Some(%d), _)) => 1,
    (%left, (None, (_, Some(%e)))) => 2,
    ((_, Nil), %right) => 3,
  }
}
def @shapes(%s: Shape) -> int32 {
  match? (%s) {
    Rect(Circle(%r), Rect(Empty, %inner)) => 0,
    Rect(%a, Circle(_)) => 1,
    Circle(%r) => 2,
    Rect(Rect(_, _), %b) => 3,
    Empty => 4,
  }
}
def @shape_pairs(%p: (Shape, Option[Shape])) -> int32 {
  match (%p) {
    (Empty, None) => 0,
    (Circle(_), Some(Circle(%r))) => 1,
    (%s, Some(Empty)) => 2,
    (Rect(%x, %y), _) => 3,
    (_, Some(_)) => 4,
    (_, None) => 5,
  }
}
)");
  // Value counts: lists of at most n elements, each None or Some, number
  // 2^(n+1) - 1; shapes of depth d number S(d) = 2 + S(d-1)^2, S(1) = 2.
  OracleCounts list_of_option = CheckAgainstOracle(module, "list_of_option", 7);
  EXPECT_EQ(list_of_option.values, 127u);
  EXPECT_GT(list_of_option.unmatched, 0u);
  OracleCounts list_exhaustive = CheckAgainstOracle(module, "list_exhaustive", 7);
  EXPECT_EQ(list_exhaustive.values, 127u);
  EXPECT_EQ(list_exhaustive.unmatched, 0u);
  // (2 options x 4 lists of at most 3 elements) x (2 options x 2 options).
  OracleCounts nested_tuples = CheckAgainstOracle(module, "nested_tuples", 4);
  EXPECT_EQ(nested_tuples.values, 32u);
  EXPECT_GT(nested_tuples.unmatched, 0u);
  OracleCounts shapes = CheckAgainstOracle(module, "shapes", 4);
  EXPECT_EQ(shapes.values, 1446u);
  EXPECT_GT(shapes.unmatched, 0u);
  // 1446 shapes x (None + 38 shapes of depth 3).
  OracleCounts shape_pairs = CheckAgainstOracle(module, "shape_pairs", 4);
  EXPECT_EQ(shape_pairs.values, 1446u * 39u);
  EXPECT_EQ(shape_pairs.unmatched, 0u);
}

// ---- random pattern sets --------------------------------------------------------

class RandomPatterns {
 public:
  RandomPatterns(const ir::Module& module, uint32_t seed) : module_(module), random_(seed) {}

  // A pattern of `type` as Relay text, constructors nested at most `depth`.
  std::string Pattern(const ir::Type& type, int depth) {
    const int roll = Roll(100);
    if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      if (roll < 10) return "_";
      if (roll < 20) return Var();
      std::string text = "(";
      for (const ir::Type& field : tuple->fields) text += Pattern(field, depth) + ", ";
      return text + ")";
    }
    std::optional<AdtView> adt = ViewAdt(module_, type);
    if (!adt || depth == 0 || roll < 25) return roll % 2 == 0 ? "_" : Var();
    if (roll < 35) return Var();
    const size_t tag = Roll(static_cast<int>(adt->field_types.size()));
    std::string text = adt->definition->constructors[tag]->name;
    if (adt->field_types[tag].empty()) return text;
    text += "(";
    for (size_t field = 0; field < adt->field_types[tag].size(); ++field)
      text += (field > 0 ? ", " : "") + Pattern(adt->field_types[tag][field], depth - 1);
    return text + ")";
  }

  void StartClause() { var_count_ = 0; }
  int Roll(int bound) { return std::uniform_int_distribution<int>(0, bound - 1)(random_); }

 private:
  std::string Var() { return "%v" + std::to_string(var_count_++); }

  const ir::Module& module_;
  std::mt19937 random_;
  int var_count_ = 0;
};

struct RandomCase {
  const char* type;
  int pattern_depth;
  int value_depth;
};

TEST(DecisionTreeOracle, RandomPatternSetsAgreeWithFirstMatch) {
  const RandomCase cases[] = {
      {"List[Option[int32]]", 5, 7},
      {"(Shape, Option[int32])", 3, 4},
      {"(List[int32], (Option[Shape], int32))", 3, 4},
      {"Option[(Option[int32], Option[int32], List[int32])]", 4, 6},
  };
  constexpr int kFunctionsPerType = 100;
  // Each type's probe gives the IR type the patterns are generated for.
  std::string probe_source = kShapeType;
  for (size_t index = 0; index < std::size(cases); ++index) {
    probe_source +=
        "def @probe" + std::to_string(index) + "(%x: " + cases[index].type + ") -> int32 { 0 }\n";
  }
  ir::Module probe = Check(probe_source);
  ASSERT_FALSE(probe.functions().empty());
  RandomPatterns random(probe, 20240611);
  std::string source = kShapeType;
  std::vector<std::pair<std::string, int>> functions;  // name, value depth
  for (size_t index = 0; index < std::size(cases); ++index) {
    const ir::Function& probe_function =
        probe.FindFunction("probe" + std::to_string(index))->function;
    const ir::Type type = probe_function->params[0]->type_annotation;
    ASSERT_TRUE(type);
    for (int function = 0; function < kFunctionsPerType; ++function) {
      std::string name = "f" + std::to_string(index) + "_" + std::to_string(function);
      source += "def @" + name + "(%x: " + cases[index].type + ") -> int32 {\n  match? (%x) {\n";
      const int clause_count = 1 + random.Roll(7);
      for (int clause = 0; clause < clause_count; ++clause) {
        random.StartClause();
        source += "    " + random.Pattern(type, cases[index].pattern_depth) + " => " +
                  std::to_string(clause) + ",\n";
      }
      source += "  }\n}\n";
      functions.push_back({name, cases[index].value_depth});
    }
  }
  ir::Module module = Check(source);
  size_t nontrivial = 0;
  for (const auto& [name, depth] : functions) {
    SCOPED_TRACE(name);
    std::unique_ptr<DecisionTree> tree = TreeOf(module, name);
    ASSERT_NE(tree, nullptr);
    if (tree->kind == DecisionTree::Kind::kSwitch) ++nontrivial;
    CheckAgainstOracle(module, name, depth);
  }
  // The generator must produce real tests, not just wildcards.
  EXPECT_GT(nontrivial, functions.size() / 2);
}

}  // namespace
}  // namespace relay::passes
