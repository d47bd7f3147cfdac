#include "compiler/passes/decision_tree.h"

#include <unordered_map>
#include <utility>

#include "relay/error.h"

namespace relay::passes {

using ir::As;

DecisionTree::~DecisionTree() {
  // Subtrees are detached and destroyed one by one, so that a deep tree does
  // not destroy itself through one nested destructor call per level.
  std::vector<std::unique_ptr<DecisionTree>> pending;
  auto detach_children = [&pending](DecisionTree& node) {
    for (Case& branch : node.cases) {
      if (branch.subtree) pending.push_back(std::move(branch.subtree));
    }
    if (node.default_case) pending.push_back(std::move(node.default_case));
  };
  detach_children(*this);
  while (!pending.empty()) {
    std::unique_ptr<DecisionTree> node = std::move(pending.back());
    pending.pop_back();
    detach_children(*node);
  }
}

namespace {

// A cell of the clause matrix. After normalisation a cell is either null
// (matches anything: a wildcard, or a variable whose binding was recorded)
// or a constructor pattern; tuples have been spread over columns of their own.
using Cell = const ir::PatternNode*;
using OccurrenceId = uint32_t;

struct RowBinding {
  const ir::VarNode* var;
  OccurrenceId occurrence;
};

struct Row {
  size_t clause;
  std::vector<Cell> cells;
  std::vector<RowBinding> bindings;  // variables met so far in this clause's pattern
};

struct Matrix {
  std::vector<OccurrenceId> columns;  // the occurrence each column's cells match
  std::vector<Row> rows;              // in clause order
};

class TreeBuilder {
 public:
  TreeBuilder(const ir::Module& module, const ir::Module* prelude, const DecisionTreeLimits& limits)
      : module_(module), prelude_(prelude), limits_(limits) {
    occurrences_.emplace_back();  // the root
  }

  std::unique_ptr<DecisionTree> Build(const ir::MatchNode& match) {
    Matrix initial;
    initial.columns.push_back(0);
    for (size_t index = 0; index < match.clauses.size(); ++index)
      initial.rows.push_back({index, {match.clauses[index].pattern.get()}, {}});
    Normalize(initial, 0, 1);

    // Depth-first with an explicit stack: each task fills one empty slot of
    // the tree (a case's subtree, a default, or the root).
    struct Task {
      Matrix matrix;
      std::unique_ptr<DecisionTree>* slot;
      size_t depth;  // switches above the slot
    };
    std::unique_ptr<DecisionTree> root;
    std::vector<Task> tasks;
    tasks.push_back({std::move(initial), &root, 0});
    size_t node_count = 0;
    while (!tasks.empty()) {
      Task task = std::move(tasks.back());
      tasks.pop_back();
      if (++node_count > limits_.max_nodes || cells_built_ > limits_.max_matrix_cells)
        return nullptr;
      Matrix& matrix = task.matrix;
      if (matrix.rows.empty()) {
        *task.slot = std::make_unique<DecisionTree>(DecisionTree::Kind::kFail);
        continue;
      }
      const Row& first = matrix.rows.front();
      size_t column = 0;
      while (column < first.cells.size() && first.cells[column] == nullptr) ++column;
      if (column == first.cells.size()) {
        *task.slot = Leaf(first);
        continue;
      }
      if (task.depth >= limits_.max_depth) return nullptr;

      auto node = std::make_unique<DecisionTree>(DecisionTree::Kind::kSwitch);
      node->occurrence = occurrences_[matrix.columns[column]];
      const ir::TypeDefinition* type =
          DefinitionOf(*As<ir::PatternConstructorNode>(first.cells[column])->constructor);
      node->type = type;
      // The constructors this column names, by tag; each gets a case.
      std::vector<const ir::ConstructorNode*> named(type->constructors.size(), nullptr);
      for (const Row& row : matrix.rows) {
        const auto* pattern = As<ir::PatternConstructorNode>(row.cells[column]);
        if (pattern == nullptr) continue;
        const ir::ConstructorNode* constructor = pattern->constructor.get();
        RELAY_CHECK(
            constructor->tag >= 0 && static_cast<size_t>(constructor->tag) < named.size() &&
                type->constructors[constructor->tag].get() == constructor,
            "constructor " + constructor->name + " in a column of type " + type->name->name);
        named[constructor->tag] = constructor;
      }
      std::vector<Matrix> children;
      for (const ir::ConstructorNode* constructor : named) {
        if (constructor == nullptr) continue;
        node->cases.push_back({constructor, nullptr});
        children.push_back(Specialize(matrix, column, *constructor));
      }
      // Without a row that has a wildcard here, the default is a Fail.
      const bool needs_default = node->cases.size() < type->constructors.size();
      if (needs_default) children.push_back(Default(matrix, column));

      // Pushed in reverse so that the cases are built in tag order.
      if (needs_default) {
        tasks.push_back({std::move(children.back()), &node->default_case, task.depth + 1});
        children.pop_back();
      }
      for (size_t index = node->cases.size(); index-- > 0;)
        tasks.push_back({std::move(children[index]), &node->cases[index].subtree, task.depth + 1});
      *task.slot = std::move(node);
    }
    return root;
  }

 private:
  // The occurrence of field `field` of the value at `parent`, interned so
  // that rows and columns carry small ids.
  OccurrenceId Child(OccurrenceId parent, int32_t field) {
    const uint64_t key = (uint64_t{parent} << 32) | static_cast<uint32_t>(field);
    auto [position, inserted] =
        children_.emplace(key, static_cast<OccurrenceId>(occurrences_.size()));
    if (inserted) {
      Occurrence occurrence = occurrences_[parent];
      occurrence.push_back(field);
      occurrences_.push_back(std::move(occurrence));
    }
    return position->second;
  }

  std::unique_ptr<DecisionTree> Leaf(const Row& row) const {
    auto leaf = std::make_unique<DecisionTree>(DecisionTree::Kind::kLeaf);
    leaf->clause = row.clause;
    for (const RowBinding& binding : row.bindings)
      leaf->bindings.push_back({binding.var, occurrences_[binding.occurrence]});
    return leaf;
  }

  // Brings columns [begin, end) into normal form: variables are recorded as
  // bindings and become wildcards, and a column holding a tuple pattern is
  // replaced, in place, by one column per tuple field (rows with a wildcard
  // there get wildcards in every field).
  void Normalize(Matrix& matrix, size_t begin, size_t end) {
    size_t column = begin;
    while (column < end) {
      const ir::PatternTupleNode* tuple = nullptr;
      bool has_constructor = false;
      for (Row& row : matrix.rows) {
        Cell& cell = row.cells[column];
        if (const auto* var = As<ir::PatternVarNode>(cell)) {
          row.bindings.push_back({var->var.get(), matrix.columns[column]});
          cell = nullptr;
        } else if (As<ir::PatternWildcardNode>(cell) != nullptr) {
          cell = nullptr;
        } else if (const auto* found = As<ir::PatternTupleNode>(cell)) {
          if (tuple == nullptr) tuple = found;
          RELAY_CHECK(found->patterns.size() == tuple->patterns.size(),
                      "tuple patterns of different sizes in one position");
        } else if (cell != nullptr) {
          has_constructor = true;
        }
      }
      if (tuple == nullptr) {
        ++column;
        continue;
      }
      RELAY_CHECK(!has_constructor, "tuple and constructor patterns in one position");
      const size_t arity = tuple->patterns.size();
      std::vector<OccurrenceId> fields;
      for (size_t field = 0; field < arity; ++field)
        fields.push_back(Child(matrix.columns[column], static_cast<int32_t>(field)));
      Replace(matrix.columns, column, fields);
      for (Row& row : matrix.rows) {
        std::vector<Cell> expanded(arity, nullptr);
        if (const auto* found = As<ir::PatternTupleNode>(row.cells[column])) {
          for (size_t field = 0; field < arity; ++field)
            expanded[field] = found->patterns[field].get();
        }
        Replace(row.cells, column, expanded);
      }
      cells_built_ += matrix.rows.size() * matrix.columns.size();
      end = end + arity - 1;  // the new columns are scanned next
    }
  }

  // Replaces element `position` of `items` by `replacement`'s elements.
  template <typename T>
  static void Replace(std::vector<T>& items, size_t position, const std::vector<T>& replacement) {
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(position));
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(position), replacement.begin(),
                 replacement.end());
  }

  // The rows that can still match once the value at `column` is known to be
  // built by `constructor`, with that column replaced by one per field.
  Matrix Specialize(const Matrix& matrix, size_t column, const ir::ConstructorNode& constructor) {
    const size_t arity = constructor.inputs.size();
    Matrix result;
    result.columns = matrix.columns;
    std::vector<OccurrenceId> fields;
    for (size_t field = 0; field < arity; ++field)
      fields.push_back(Child(matrix.columns[column], static_cast<int32_t>(field)));
    Replace(result.columns, column, fields);
    for (const Row& row : matrix.rows) {
      const auto* pattern = As<ir::PatternConstructorNode>(row.cells[column]);
      if (pattern != nullptr && pattern->constructor->tag != constructor.tag) continue;
      std::vector<Cell> expanded(arity, nullptr);
      if (pattern != nullptr) {
        for (size_t field = 0; field < arity; ++field)
          expanded[field] = pattern->patterns[field].get();
      }
      Row specialized{row.clause, row.cells, row.bindings};
      Replace(specialized.cells, column, expanded);
      result.rows.push_back(std::move(specialized));
    }
    cells_built_ += result.rows.size() * result.columns.size();
    Normalize(result, column, column + arity);
    return result;
  }

  // The rows that can still match when the value at `column` is built by a
  // constructor no row names there: those with a wildcard, without the column.
  Matrix Default(const Matrix& matrix, size_t column) {
    Matrix result;
    result.columns = matrix.columns;
    result.columns.erase(result.columns.begin() + static_cast<std::ptrdiff_t>(column));
    for (const Row& row : matrix.rows) {
      if (row.cells[column] != nullptr) continue;
      Row kept{row.clause, row.cells, row.bindings};
      kept.cells.erase(kept.cells.begin() + static_cast<std::ptrdiff_t>(column));
      result.rows.push_back(std::move(kept));
    }
    cells_built_ += result.rows.size() * result.columns.size();
    return result;
  }

  // The definition listing every constructor of `constructor`'s type: the
  // program's own types shadow the prelude's, so each scope is asked in turn
  // and must hold this very constructor node.
  const ir::TypeDefinition* DefinitionOf(const ir::ConstructorNode& constructor) {
    auto cached = definitions_.find(&constructor);
    if (cached != definitions_.end()) return cached->second;
    for (const ir::Module* scope : {&module_, prelude_}) {
      if (scope == nullptr) continue;
      const ir::TypeDefinition* definition = scope->FindTypeDefinition(constructor.adt->name);
      if (definition != nullptr && constructor.tag >= 0 &&
          static_cast<size_t>(constructor.tag) < definition->constructors.size() &&
          definition->constructors[constructor.tag].get() == &constructor) {
        definitions_.emplace(&constructor, definition);
        return definition;
      }
    }
    throw Error(ErrorKind::kCompile, "constructor " + constructor.name + " of an unknown type");
  }

  const ir::Module& module_;
  const ir::Module* prelude_;
  const DecisionTreeLimits limits_;
  std::vector<Occurrence> occurrences_;  // by id; id 0 is the root
  std::unordered_map<uint64_t, OccurrenceId> children_;
  std::unordered_map<const ir::ConstructorNode*, const ir::TypeDefinition*> definitions_;
  size_t cells_built_ = 0;
};

std::string OccurrenceToString(const Occurrence& occurrence) {
  std::string text = "[";
  for (size_t index = 0; index < occurrence.size(); ++index) {
    if (index > 0) text += ",";
    text += std::to_string(occurrence[index]);
  }
  return text + "]";
}

}  // namespace

std::unique_ptr<DecisionTree> CompileDecisionTree(const ir::MatchNode& match,
                                                  const ir::Module& module,
                                                  const ir::Module* prelude,
                                                  const DecisionTreeLimits& limits) {
  return TreeBuilder(module, prelude, limits).Build(match);
}

std::string DecisionTreeToString(const DecisionTree& tree) {
  struct Pending {
    const DecisionTree* node;
    size_t indent;
    std::string label;
  };
  std::string text;
  std::vector<Pending> pending{{&tree, 0, ""}};
  while (!pending.empty()) {
    Pending next = std::move(pending.back());
    pending.pop_back();
    const DecisionTree& node = *next.node;
    text.append(next.indent * 2, ' ');
    text += next.label;
    switch (node.kind) {
      case DecisionTree::Kind::kFail:
        text += "fail\n";
        break;
      case DecisionTree::Kind::kLeaf:
        text += "leaf " + std::to_string(node.clause);
        for (const PatternBinding& binding : node.bindings)
          text += " %" + binding.var->name_hint + "=" + OccurrenceToString(binding.occurrence);
        text += "\n";
        break;
      case DecisionTree::Kind::kSwitch:
        text +=
            "switch " + OccurrenceToString(node.occurrence) + " " + node.type->name->name + "\n";
        // Pushed in reverse so that they print in order.
        if (node.default_case) pending.push_back({node.default_case.get(), next.indent + 1, "_: "});
        for (size_t index = node.cases.size(); index-- > 0;) {
          const DecisionTree::Case& branch = node.cases[index];
          pending.push_back(
              {branch.subtree.get(), next.indent + 1, branch.constructor->name + ": "});
        }
        break;
    }
  }
  return text;
}

}  // namespace relay::passes
