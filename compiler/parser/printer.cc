#include "compiler/parser/printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/expr_functor.h"
#include "kernels/operator.h"

namespace relay::parser {

namespace {

using namespace relay::ir;

// Where an expression is printed: a statement of a sequence scope. A scope
// is a function body, an if branch, a match clause body or a braced block;
// its statements are its let lines and its final expression, in order.
struct Place {
  int scope = 0;
  int statement = 0;
};

struct ScopeInfo {
  int parent = -1;
  int statement_in_parent = 0;
  int depth = 0;
};

// How a parent uses a child, which decides whether the child may be printed
// in place or must be bound to a graph variable first.
enum class Slot {
  kOperand,  // argument, field, condition...: must be an atom or a %N
  kValue,    // a let's value: printed in place
  kTail,     // the result of a scope: printed in place, a let continues the scope
};

std::string ScalarLiteral(const ConstantNode* constant) {
  const Tensor& tensor = *constant->value;
  if (!tensor.shape().empty()) {
    throw Error(ErrorKind::kUsage,
                "a tensor constant of shape " + ShapeToString(tensor.shape()) +
                    " cannot be written as Relay text; pass it as a parameter instead");
  }
  auto float_text = [](auto value, const char* suffix) {
    if (!std::isfinite(static_cast<double>(value))) {
      throw Error(ErrorKind::kUsage, "a non-finite constant cannot be written as Relay text");
    }
    char buffer[64];
    auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr) + suffix;
  };
  switch (tensor.dtype()) {
    case DType::kBool:
      return *tensor.data<bool>() ? "True" : "False";
    case DType::kInt8:
      return std::to_string(*tensor.data<int8_t>()) + "i8";
    case DType::kInt16:
      return std::to_string(*tensor.data<int16_t>()) + "i16";
    case DType::kInt32:
      return std::to_string(*tensor.data<int32_t>());
    case DType::kInt64:
      return std::to_string(*tensor.data<int64_t>()) + "i64";
    case DType::kUInt8:
      return std::to_string(*tensor.data<uint8_t>()) + "u8";
    case DType::kUInt16:
      return std::to_string(*tensor.data<uint16_t>()) + "u16";
    case DType::kUInt32:
      return std::to_string(*tensor.data<uint32_t>()) + "u32";
    case DType::kUInt64:
      return std::to_string(*tensor.data<uint64_t>()) + "u64";
    case DType::kFloat16:
      return float_text(static_cast<float>(*tensor.data<Float16>()), "f16");
    case DType::kFloat32:
      return float_text(*tensor.data<float>(), "f");
    case DType::kFloat64:
      return float_text(*tensor.data<double>(), "f64");
  }
  return "?";
}

class FunctionPrinter {
 public:
  explicit FunctionPrinter(std::unordered_set<std::string> reserved_names,
                           int* meta_constants = nullptr)
      : reserved_names_(std::move(reserved_names)), meta_constants_(meta_constants) {}

  // Prints `function` as `def @name...` (or, with an empty name, as the body
  // of an expression file).
  std::string PrintDefinition(const std::string& name, const Function& function) {
    scopes_.push_back({});
    for (const Var& param : function->params) NameVar(param.get());
    Plan(function->body, Place{0, 0}, Slot::kTail);
    std::string out = "def @" + name + Signature(function.get()) + " {\n";
    PrintScope(0, function->body, 1, out);
    out += "}\n";
    return out;
  }

  std::string PrintExpressionBody(const Expr& expr) {
    scopes_.push_back({});
    Plan(expr, Place{0, 0}, Slot::kTail);
    std::string out;
    for (const VarNode* var : free_vars_) {
      out += "free_var " + VarName(var) +
             (var->type_annotation ? ": " + TypeToString(var->type_annotation) : "") + ";\n";
    }
    PrintScope(0, expr, 0, out);
    return out;
  }

 private:
  // ---- planning: where each expression is printed -------------------------------

  struct Edge {
    const ExprNode* child;
    Slot slot;
    Place place;
  };

  // Opens a scope inside `parent` on behalf of `owner` (a function body, an
  // if branch, a clause body, a braced let), remembered in order so printing
  // finds each one again.
  int NewScope(const ExprNode* owner, const Place& parent) {
    scopes_.push_back({parent.scope, parent.statement, scopes_[parent.scope].depth + 1});
    int scope = static_cast<int>(scopes_.size()) - 1;
    opened_scopes_[owner].push_back(scope);
    return scope;
  }

  Place CommonPlace(Place a, Place b) const {
    while (scopes_[a.scope].depth > scopes_[b.scope].depth) a = Up(a);
    while (scopes_[b.scope].depth > scopes_[a.scope].depth) b = Up(b);
    while (a.scope != b.scope) {
      a = Up(a);
      b = Up(b);
    }
    return Place{a.scope, std::min(a.statement, b.statement)};
  }
  Place Up(const Place& place) const {
    const ScopeInfo& scope = scopes_[place.scope];
    return Place{scope.parent, scope.statement_in_parent};
  }

  // The children of `expr` with their slots; `place` is where `expr` prints.
  // Scopes it opens are created here, once per node.
  std::vector<Edge> EdgesOf(const ExprNode* expr, const Place& place, bool continues_sequence) {
    std::vector<Edge> edges;
    auto operand = [&](const Expr& child) {
      edges.push_back({child.get(), Slot::kOperand, place});
    };
    switch (expr->kind()) {
      case NodeKind::kTuple:
        for (const Expr& field : static_cast<const TupleNode*>(expr)->fields) operand(field);
        break;
      case NodeKind::kTupleGetItem:
        operand(static_cast<const TupleGetItemNode*>(expr)->tuple);
        break;
      case NodeKind::kCall: {
        const auto* call = static_cast<const CallNode*>(expr);
        operand(call->callee);
        for (const Expr& arg : call->args) operand(arg);
        break;
      }
      case NodeKind::kRefCreate:
        operand(static_cast<const RefCreateNode*>(expr)->value);
        break;
      case NodeKind::kRefRead:
        operand(static_cast<const RefReadNode*>(expr)->ref);
        break;
      case NodeKind::kRefWrite:
        operand(static_cast<const RefWriteNode*>(expr)->ref);
        operand(static_cast<const RefWriteNode*>(expr)->value);
        break;
      case NodeKind::kFunction: {
        int body = NewScope(expr, place);
        edges.push_back(
            {static_cast<const FunctionNode*>(expr)->body.get(), Slot::kTail, Place{body, 0}});
        break;
      }
      case NodeKind::kIf: {
        const auto* branch = static_cast<const IfNode*>(expr);
        operand(branch->condition);
        edges.push_back({branch->then_branch.get(), Slot::kTail, Place{NewScope(expr, place), 0}});
        edges.push_back({branch->else_branch.get(), Slot::kTail, Place{NewScope(expr, place), 0}});
        break;
      }
      case NodeKind::kMatch: {
        const auto* match = static_cast<const MatchNode*>(expr);
        operand(match->data);
        for (const Clause& clause : match->clauses) {
          edges.push_back({clause.body.get(), Slot::kTail, Place{NewScope(expr, place), 0}});
        }
        break;
      }
      case NodeKind::kLet: {
        const auto* let = static_cast<const LetNode*>(expr);
        // A let printed in place of a scope's result continues that scope;
        // anywhere else it opens a braced block of its own.
        Place start = continues_sequence ? place : Place{NewScope(expr, place), 0};
        edges.push_back({let->value.get(), Slot::kValue, start});
        edges.push_back({let->body.get(), Slot::kTail, Place{start.scope, start.statement + 1}});
        break;
      }
      default:
        break;
    }
    return edges;
  }

  // Decides, for every expression under `root`, whether it is printed in
  // place or bound to a graph variable, and where. Parents are planned before
  // children (reverse post-order), so a child's uses are all known when its
  // own place is decided.
  void Plan(const Expr& root, const Place& root_place, Slot root_slot) {
    std::vector<const ExprNode*> post_order = PostOrder(root.get());
    for (size_t index = 0; index < post_order.size(); ++index)
      post_order_index_[post_order[index]] = index;
    uses_[root.get()].push_back({root_place, root_slot});
    for (size_t index = post_order.size(); index-- > 0;) {
      const ExprNode* expr = post_order[index];
      const std::vector<Use>& uses = uses_[expr];
      bool has_operand_use = std::any_of(uses.begin(), uses.end(),
                                         [](const Use& use) { return use.slot == Slot::kOperand; });
      Place place = uses.front().place;
      bool bound = !IsAtomic(*expr) && (has_operand_use || uses.size() > 1);
      if (bound) {
        for (const Use& use : uses) place = CommonPlace(place, use.place);
        bound_[expr] = place;
        bindings_[{place.scope, place.statement}].push_back(expr);
      }
      bool continues_sequence = !bound && uses.front().slot == Slot::kTail;
      for (const Edge& edge : EdgesOf(expr, place, continues_sequence)) {
        uses_[edge.child].push_back({edge.place, edge.slot});
      }
    }
    for (auto& [key, list] : bindings_) {
      std::sort(list.begin(), list.end(), [&](const ExprNode* a, const ExprNode* b) {
        return post_order_index_.at(a) < post_order_index_.at(b);
      });
    }
  }

  std::vector<const ExprNode*> PostOrder(const ExprNode* root) {
    std::vector<const ExprNode*> order;
    std::unordered_set<const ExprNode*> seen;
    std::vector<std::pair<const ExprNode*, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [expr, expanded] = stack.back();
      if (expanded) {
        stack.pop_back();
        order.push_back(expr);
        continue;
      }
      if (!seen.insert(expr).second) {
        stack.pop_back();
        continue;
      }
      stack.back().second = true;
      NoteBinders(expr);
      std::vector<Expr> children = ExprChildren(Share(expr));
      for (size_t index = children.size(); index-- > 0;) {
        if (!seen.count(children[index].get())) stack.emplace_back(children[index].get(), false);
      }
    }
    return order;
  }

  // Names binders in the order they appear, so names are stable.
  void NoteBinders(const ExprNode* expr) {
    switch (expr->kind()) {
      case NodeKind::kFunction:
        for (const Var& param : static_cast<const FunctionNode*>(expr)->params)
          NameVar(param.get());
        break;
      case NodeKind::kLet:
        NameVar(static_cast<const LetNode*>(expr)->var.get());
        break;
      case NodeKind::kMatch:
        for (const Clause& clause : static_cast<const MatchNode*>(expr)->clauses)
          NamePatternVars(clause.pattern);
        break;
      case NodeKind::kVar: {
        const auto* var = static_cast<const VarNode*>(expr);
        if (!var_names_.count(var)) {  // used but bound nowhere inside: free
          NameVar(var);
          free_vars_.push_back(var);
        }
        break;
      }
      default:
        break;
    }
  }

  void NamePatternVars(const Pattern& pattern) {
    if (const auto* var = As<PatternVarNode>(pattern)) NameVar(var->var.get());
    if (const auto* constructor = As<PatternConstructorNode>(pattern)) {
      for (const Pattern& field : constructor->patterns) NamePatternVars(field);
    }
    if (const auto* tuple = As<PatternTupleNode>(pattern)) {
      for (const Pattern& field : tuple->patterns) NamePatternVars(field);
    }
  }

  void NameVar(const VarNode* var) {
    if (var_names_.count(var)) return;
    std::string base = var->name_hint.empty() ? "v" : var->name_hint;
    // All-digit names belong to graph variables.
    if (std::all_of(base.begin(), base.end(), [](char c) { return c >= '0' && c <= '9'; }))
      base = "v" + base;
    std::string name = base;
    for (int suffix = 1; taken_names_.count(name) || reserved_names_.count(name); ++suffix) {
      name = base + "_" + std::to_string(suffix);
    }
    taken_names_.insert(name);
    var_names_[var] = "%" + name;
  }

  std::string VarName(const VarNode* var) {
    NameVar(var);
    return var_names_.at(var);
  }

  // ---- printing ------------------------------------------------------------------

  static void Indent(int level, std::string& out) {
    out.append(static_cast<size_t>(level) * 2, ' ');
  }

  std::string Signature(const FunctionNode* function) {
    std::string out;
    if (!function->type_params.empty()) {
      out += "[";
      for (size_t index = 0; index < function->type_params.size(); ++index) {
        out += (index ? ", " : "") + function->type_params[index]->name;
      }
      out += "]";
    }
    out += "(";
    bool first = true;
    for (const Var& param : function->params) {
      out += (first ? "" : ", ") + VarName(param.get());
      if (param->type_annotation) out += ": " + TypeToString(param->type_annotation);
      first = false;
    }
    for (const auto& [name, value] : function->attrs) {
      out += (first ? "" : ", ") + name + "=" + value.ToString();
      first = false;
    }
    out += ")";
    if (function->ret_type) out += " -> " + TypeToString(function->ret_type);
    return out;
  }

  void PrintBindings(int scope, int statement, int level, std::string& out) {
    auto found = bindings_.find({scope, statement});
    if (found == bindings_.end()) return;
    for (const ExprNode* expr : found->second) {
      std::string name = "%" + std::to_string(next_graph_number_++);
      Indent(level, out);
      out += name + " = ";
      PrintInPlace(expr, level, /*braced_let=*/true, out);
      out += ";\n";
      graph_names_[expr] = name;
    }
  }

  // A scope: its let lines and graph bindings, then its result.
  void PrintScope(int scope, const Expr& tail, int level, std::string& out) {
    const ExprNode* current = tail.get();
    int statement = 0;
    while (true) {
      PrintBindings(scope, statement, level, out);
      const auto* let = As<LetNode>(current);
      if (let != nullptr && !bound_.count(let)) {
        Indent(level, out);
        out += "let " + VarName(let->var.get());
        if (let->var->type_annotation) out += ": " + TypeToString(let->var->type_annotation);
        out += " = ";
        PrintUse(let->value.get(), level, out);
        out += ";\n";
        current = let->body.get();
        ++statement;
        continue;
      }
      Indent(level, out);
      PrintUse(current, level, out);
      out += "\n";
      return;
    }
  }

  // An expression where it is used: its graph variable if it has one.
  void PrintUse(const ExprNode* expr, int level, std::string& out) {
    if (auto found = graph_names_.find(expr); found != graph_names_.end()) {
      out += found->second;
      return;
    }
    PrintInPlace(expr, level, /*braced_let=*/true, out);
  }

  void PrintOperand(const Expr& expr, int level, std::string& out) {
    PrintUse(expr.get(), level, out);
  }

  void PrintInPlace(const ExprNode* expr, int level, bool braced_let, std::string& out) {
    switch (expr->kind()) {
      case NodeKind::kVar:
        out += VarName(static_cast<const VarNode*>(expr));
        return;
      case NodeKind::kGlobalVar:
        out += "@" + static_cast<const GlobalVarNode*>(expr)->name;
        return;
      case NodeKind::kConstant: {
        const auto* constant = static_cast<const ConstantNode*>(expr);
        if (meta_constants_ != nullptr && !constant->value->shape().empty()) {
          out += "meta[relay.Constant][" + std::to_string((*meta_constants_)++) + "]";
        } else {
          out += ScalarLiteral(constant);
        }
        return;
      }
      case NodeKind::kOp:
        out += static_cast<const OpNode*>(expr)->name();
        return;
      case NodeKind::kConstructor:
        out += static_cast<const ConstructorNode*>(expr)->name;
        return;
      case NodeKind::kTuple: {
        const auto* tuple = static_cast<const TupleNode*>(expr);
        out += "(";
        for (size_t index = 0; index < tuple->fields.size(); ++index) {
          if (index > 0) out += ", ";
          PrintOperand(tuple->fields[index], level, out);
        }
        if (tuple->fields.size() == 1) out += ",";
        out += ")";
        return;
      }
      case NodeKind::kTupleGetItem: {
        const auto* item = static_cast<const TupleGetItemNode*>(expr);
        PrintOperand(item->tuple, level, out);
        out += "." + std::to_string(item->index);
        return;
      }
      case NodeKind::kCall:
        PrintCall(static_cast<const CallNode*>(expr), level, out);
        return;
      case NodeKind::kRefCreate:
        out += "ref(";
        PrintOperand(static_cast<const RefCreateNode*>(expr)->value, level, out);
        out += ")";
        return;
      case NodeKind::kRefRead:
        out += "ref_read(";
        PrintOperand(static_cast<const RefReadNode*>(expr)->ref, level, out);
        out += ")";
        return;
      case NodeKind::kRefWrite:
        out += "ref_write(";
        PrintOperand(static_cast<const RefWriteNode*>(expr)->ref, level, out);
        out += ", ";
        PrintOperand(static_cast<const RefWriteNode*>(expr)->value, level, out);
        out += ")";
        return;
      case NodeKind::kFunction: {
        const auto* function = static_cast<const FunctionNode*>(expr);
        out += "fn " + Signature(function) + " {\n";
        PrintScope(opened_scopes_.at(expr)[0], function->body, level + 1, out);
        Indent(level, out);
        out += "}";
        return;
      }
      case NodeKind::kIf: {
        const auto* branch = static_cast<const IfNode*>(expr);
        out += "if (";
        PrintOperand(branch->condition, level, out);
        out += ") {\n";
        PrintScope(opened_scopes_.at(expr)[0], branch->then_branch, level + 1, out);
        Indent(level, out);
        out += "} else {\n";
        PrintScope(opened_scopes_.at(expr)[1], branch->else_branch, level + 1, out);
        Indent(level, out);
        out += "}";
        return;
      }
      case NodeKind::kMatch: {
        const auto* match = static_cast<const MatchNode*>(expr);
        out += match->complete ? "match (" : "match? (";
        PrintOperand(match->data, level, out);
        out += ") {\n";
        for (size_t index = 0; index < match->clauses.size(); ++index) {
          const Clause& clause = match->clauses[index];
          Indent(level + 1, out);
          out += PatternText(clause.pattern) + " => {\n";
          PrintScope(opened_scopes_.at(expr)[index], clause.body, level + 2, out);
          Indent(level + 1, out);
          out += "},\n";
        }
        Indent(level, out);
        out += "}";
        return;
      }
      case NodeKind::kLet: {
        // A let outside a sequence (a let's value, a bound let): a block.
        const auto* let = static_cast<const LetNode*>(expr);
        RELAY_CHECK(braced_let, "let printed outside a block");
        out += "{\n";
        bound_.erase(let);  // inside its own block it is a sequence again
        PrintScope(opened_scopes_.at(expr)[0], Share(let), level + 1, out);
        Indent(level, out);
        out += "}";
        return;
      }
      default:
        RELAY_UNREACHABLE("printing a non-expression");
    }
  }

  void PrintCall(const CallNode* call, int level, std::string& out) {
    if (const auto* constructor = As<ConstructorNode>(call->callee);
        constructor && call->args.empty()) {
      out += constructor->name;  // `Nil`, which parses back to Nil()
      return;
    }
    PrintOperand(call->callee, level, out);
    out += "(";
    bool first = true;
    for (const Expr& arg : call->args) {
      if (!first) out += ", ";
      PrintOperand(arg, level, out);
      first = false;
    }
    if (const auto* op = As<OpNode>(call->callee)) {
      for (const auto& [name, value] : call->attrs) {
        if (IsDefault(*op->definition, name, value)) continue;
        out += (first ? "" : ", ") + name + "=" + value.ToString();
        first = false;
      }
    }
    out += ")";
  }

  static bool IsDefault(const kernels::OperatorDefinition& definition, const std::string& name,
                        const kernels::AttrValue& value) {
    for (const kernels::AttrField& field : definition.attributes) {
      if (field.name == name) return field.default_value && *field.default_value == value;
    }
    return false;
  }

  std::string PatternText(const Pattern& pattern) {
    switch (pattern->kind()) {
      case NodeKind::kPatternWildcard:
        return "_";
      case NodeKind::kPatternVar: {
        const Var& var = As<PatternVarNode>(pattern)->var;
        return VarName(var.get()) +
               (var->type_annotation ? ": " + TypeToString(var->type_annotation) : "");
      }
      case NodeKind::kPatternConstructor: {
        const auto* constructor = As<PatternConstructorNode>(pattern);
        std::string text = constructor->constructor->name;
        if (constructor->patterns.empty()) return text;
        text += "(";
        for (size_t index = 0; index < constructor->patterns.size(); ++index) {
          text += (index ? ", " : "") + PatternText(constructor->patterns[index]);
        }
        return text + ")";
      }
      case NodeKind::kPatternTuple: {
        const auto* tuple = As<PatternTupleNode>(pattern);
        std::string text = "(";
        for (size_t index = 0; index < tuple->patterns.size(); ++index) {
          text += (index ? ", " : "") + PatternText(tuple->patterns[index]);
        }
        if (tuple->patterns.size() == 1) text += ",";
        return text + ")";
      }
      default:
        RELAY_UNREACHABLE("printing a non-pattern");
    }
  }

  struct Use {
    Place place;
    Slot slot;
  };
  struct PlaceHash {
    size_t operator()(const std::pair<int, int>& key) const {
      return std::hash<int64_t>()((int64_t(key.first) << 32) ^ key.second);
    }
  };

  std::unordered_set<std::string> reserved_names_;
  int* meta_constants_;  // counts meta[...] references when tensors print as them
  std::vector<ScopeInfo> scopes_;
  std::unordered_map<const ExprNode*, std::vector<Use>> uses_;
  std::unordered_map<const ExprNode*, size_t> post_order_index_;
  std::unordered_map<const ExprNode*, Place> bound_;
  std::unordered_map<const ExprNode*, std::vector<int>> opened_scopes_;
  std::unordered_map<std::pair<int, int>, std::vector<const ExprNode*>, PlaceHash> bindings_;
  std::unordered_map<const ExprNode*, std::string> graph_names_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_set<std::string> taken_names_;
  std::vector<const VarNode*> free_vars_;
  int next_graph_number_ = 0;
};

std::string TypeDefinitionText(const TypeDefinition& definition) {
  std::string out = "type " + definition.name->name;
  if (!definition.type_params.empty()) {
    out += "[";
    for (size_t index = 0; index < definition.type_params.size(); ++index) {
      out += (index ? ", " : "") + definition.type_params[index]->name;
    }
    out += "]";
  }
  out += " {\n";
  for (const Constructor& constructor : definition.constructors) {
    out += "  " + constructor->name;
    if (!constructor->inputs.empty()) {
      out += "(";
      for (size_t index = 0; index < constructor->inputs.size(); ++index) {
        out += (index ? ", " : "") + TypeToString(constructor->inputs[index]);
      }
      out += ")";
    }
    out += ",\n";
  }
  return out + "}\n";
}

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out = "#[version = \"0.0.5\"]\n";
  for (const TypeDefinition& definition : module.type_definitions()) {
    out += "\n" + TypeDefinitionText(definition);
  }
  int meta_constants = 0;
  for (const GlobalFunction& global : module.functions()) {
    // Parameters' names are kept; the function's own names never clash with
    // graph variables because those are all digits.
    out += "\n" + FunctionPrinter({}, options.tensor_constants_as_meta ? &meta_constants : nullptr)
                      .PrintDefinition(global.name->name, global.function);
  }
  return out;
}

std::string PrintExpression(const Expr& expr) {
  return "#[version = \"0.0.5\"]\n" + FunctionPrinter({}).PrintExpressionBody(expr);
}

}  // namespace relay::parser
