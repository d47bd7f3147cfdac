#include "compiler/parser/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/parser/lexer.h"
#include "kernels/operator.h"
#include "relay/devices.h"

namespace relay::parser {

namespace {

using namespace relay::ir;
using kernels::Attrs;
using kernels::AttrValue;

// Thrown inside the parser to abandon the current definition; the error
// itself has already been reported.
struct ParseAbandoned {};

// The local names in scope (variables and graph bindings, %0 = e;). One
// map from name to its bindings, innermost last, plus an undo log: lookups
// cost the same however many scopes enclose them, so long let chains that
// refer to a function parameter stay linear.
class ScopeStack {
 public:
  size_t Mark() const { return log_.size(); }
  void Bind(const std::string& name, Expr value) {
    visible_[name].push_back(std::move(value));
    log_.push_back(name);
  }
  void PopTo(size_t mark) {
    while (log_.size() > mark) {
      visible_[log_.back()].pop_back();
      log_.pop_back();
    }
  }
  Expr Lookup(const std::string& name) const {
    auto found = visible_.find(name);
    return found == visible_.end() || found->second.empty() ? Expr() : found->second.back();
  }

 private:
  std::unordered_map<std::string, std::vector<Expr>> visible_;
  std::vector<std::string> log_;
};

class Parser {
 public:
  Parser(Diagnostics& diagnostics, const Module* prelude)
      : diagnostics_(diagnostics), prelude_(prelude) {}

  Module Run() {
    tokens_ = Tokenize(*diagnostics_.source_text(), diagnostics_, strings_);
    Module module;
    module.set_source(diagnostics_.file(), diagnostics_.source_text());
    // Parsing around skipped characters would mostly report consequences of
    // them, so lexical errors are reported on their own.
    if (diagnostics_.has_errors()) return module;
    if (!ParseVersionHeader()) return module;
    CollectDefinitionNames();
    if (definition_starts_.empty()) {
      ParseExpressionProgram(module);
    } else {
      ParseDefinitions(module);
    }
    for (GlobalVar& requested : gradient_requests_) module.AddGradientRequest(requested);
    return module;
  }

 private:
  // ---- token access ---------------------------------------------------------

  const Token& Peek(size_t ahead = 0) const {
    size_t index = std::min(position_ + ahead, tokens_.size() - 1);
    return tokens_[index];
  }
  bool At(TokenKind kind) const { return Peek().kind == kind; }
  bool AtKeyword(std::string_view word, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kIdentifier && Peek(ahead).text == word;
  }
  const Token& Advance() {
    const Token& token = tokens_[position_];
    if (position_ + 1 < tokens_.size()) ++position_;
    return token;
  }
  bool Accept(TokenKind kind) {
    if (!At(kind)) return false;
    Advance();
    return true;
  }

  [[noreturn]] void Fail(const Span& span, std::string message) {
    diagnostics_.Report(ErrorKind::kParse, span, std::move(message));
    throw ParseAbandoned{};
  }
  [[noreturn]] void FailExpected(std::string_view what) {
    const Token& token = Peek();
    std::string found = token.kind == TokenKind::kEndOfFile
                            ? std::string("end of file")
                            : "'" + std::string(TokenText(token)) + "'";
    Fail(token.span, "expected " + std::string(what) + ", found " + found);
  }
  std::string TokenText(const Token& token) const {
    switch (token.kind) {
      case TokenKind::kLocal:
        return "%" + std::string(token.text);
      case TokenKind::kGlobal:
        return "@" + std::string(token.text);
      case TokenKind::kString:
        return "\"" + std::string(token.text) + "\"";
      default:
        return std::string(token.text);
    }
  }
  // After an item of a list closed by `closer`: consumes a comma and returns
  // true, returns false at the closer, and otherwise reports what was
  // expected ("',' or ')'").
  bool AcceptSeparator(TokenKind closer) {
    if (Accept(TokenKind::kComma)) return true;
    if (!At(closer)) FailExpected("',' or " + std::string(TokenKindDescription(closer)));
    return false;
  }

  const Token& Expect(TokenKind kind) {
    if (!At(kind)) FailExpected(TokenKindDescription(kind));
    return Advance();
  }
  void ExpectKeyword(std::string_view word) {
    if (!AtKeyword(word)) FailExpected("'" + std::string(word) + "'");
    Advance();
  }

  static Span Join(const Span& first, const Span& last) {
    return Span{first.line, first.column, last.end_line, last.end_column};
  }
  Span PreviousEnd(const Span& start) const {
    return Join(start, tokens_[position_ > 0 ? position_ - 1 : 0].span);
  }

  // Guards syntactic recursion so hostile input cannot exhaust the stack.
  class DepthGuard {
   public:
    DepthGuard(Parser& parser, const Span& span) : parser_(parser) {
      if (++parser_.depth_ > kMaxNestingDepth) {
        --parser_.depth_;
        parser_.Fail(span, "expression nested too deeply (more than " +
                               std::to_string(kMaxNestingDepth) +
                               " levels); bind intermediate results with let");
      }
    }
    ~DepthGuard() { --parser_.depth_; }

   private:
    Parser& parser_;
  };

  // ---- header and top level -------------------------------------------------

  bool ParseVersionHeader() {
    if (!(At(TokenKind::kHash) && Peek(1).kind == TokenKind::kLeftBracket &&
          AtKeyword("version", 2))) {
      return true;  // no header: accepted, as Relay's own parser does
    }
    try {
      Advance();
      Advance();
      Advance();
      Expect(TokenKind::kEqual);
      const Token& version = Expect(TokenKind::kString);
      if (version.text != "0.0.5") {
        Fail(version.span, "unsupported Relay text format version \"" + std::string(version.text) +
                               "\" (relay-vm reads version \"0.0.5\")");
      }
      Expect(TokenKind::kRightBracket);
      return true;
    } catch (const ParseAbandoned&) {
      return false;
    }
  }

  // Finds every top-level `def @name` and `type Name` first, so definitions
  // may refer to each other in any order.
  void CollectDefinitionNames() {
    int depth = 0;
    for (size_t index = position_; index < tokens_.size(); ++index) {
      const Token& token = tokens_[index];
      switch (token.kind) {
        case TokenKind::kLeftBrace:
        case TokenKind::kLeftParen:
        case TokenKind::kLeftBracket:
          ++depth;
          break;
        case TokenKind::kRightBrace:
        case TokenKind::kRightParen:
        case TokenKind::kRightBracket:
          depth = std::max(0, depth - 1);
          break;
        case TokenKind::kIdentifier: {
          if (depth != 0 || index + 1 >= tokens_.size()) break;
          const Token& name = tokens_[index + 1];
          if (token.text == "def" && name.kind == TokenKind::kGlobal) {
            definition_starts_.push_back(index);
            std::string key(name.text);
            if (globals_.count(key)) {
              diagnostics_.Report(ErrorKind::kParse, name.span,
                                  "@" + key + " is defined more than once");
            } else {
              globals_[key] = Make<GlobalVarNode>(key, name.span);
            }
          } else if (token.text == "type" && name.kind == TokenKind::kIdentifier) {
            definition_starts_.push_back(index);
            std::string key(name.text);
            if (type_names_.count(key)) {
              diagnostics_.Report(ErrorKind::kParse, name.span,
                                  "type " + key + " is defined more than once");
            } else {
              type_names_[key] = Make<GlobalTypeVarNode>(key, name.span);
            }
          }
          break;
        }
        default:
          break;
      }
    }
  }

  void ParseDefinitions(Module& module) {
    if (position_ != definition_starts_.front()) {
      const Token& stray = Peek();
      diagnostics_.Report(
          ErrorKind::kParse, stray.span,
          "expected 'def' or 'type' at the top level, found '" + TokenText(stray) + "'");
    }
    // Types first: function signatures mention their constructors.
    for (size_t start : definition_starts_) {
      if (tokens_[start].text != "type") continue;
      StartDefinitionAt(start);
      try {
        module.AddTypeDefinition(ParseTypeDefinition());
        CheckDefinitionEnd(start);
      } catch (const ParseAbandoned&) {
      }
    }
    for (size_t start : definition_starts_) {
      if (tokens_[start].text != "def") continue;
      StartDefinitionAt(start);
      try {
        auto [name, function] = ParseFunctionDefinition();
        module.AddFunction(std::move(name), std::move(function));
        CheckDefinitionEnd(start);
      } catch (const ParseAbandoned&) {
      }
    }
  }

  // An abandoned definition may leave scopes behind; each starts afresh.
  void StartDefinitionAt(size_t start) {
    position_ = start;
    scopes_.PopTo(0);
    type_scopes_.clear();
  }

  // After a definition, the next token must start another one (or end the
  // file, or be the metadata section TVM appends).
  void CheckDefinitionEnd(size_t start) {
    size_t next_index = tokens_.size() - 1;
    for (size_t candidate : definition_starts_) {
      if (candidate > start) {
        next_index = candidate;
        break;
      }
    }
    if (position_ == next_index) return;
    if (At(TokenKind::kHash)) RejectMetadata(Peek().span);
    Fail(Peek().span, "unexpected '" + TokenText(Peek()) + "' after the definition");
  }

  [[noreturn]] void RejectMetadata(const Span& span) {
    Fail(span,
         "Relay metadata sections (meta[...]) are not supported: pass weights as an .npz "
         "file with --params and declare them as parameters of @main");
  }

  void ParseExpressionProgram(Module& module) {
    try {
      Span start = Peek().span;
      std::vector<Var> free_vars;
      while (AtKeyword("free_var")) {
        Advance();
        const Token& name = Expect(TokenKind::kLocal);
        Type annotation;
        if (Accept(TokenKind::kColon)) annotation = ParseType();
        Expect(TokenKind::kSemicolon);
        Var var = Make<VarNode>(std::string(name.text), annotation, name.span);
        scopes_.Bind(std::string(name.text), var);
        free_vars.push_back(var);
      }
      if (At(TokenKind::kEndOfFile))
        Fail(Peek().span, "the program is empty: expected a definition or an expression");
      Expr body = ParseSequence();
      if (At(TokenKind::kHash)) RejectMetadata(Peek().span);
      if (!At(TokenKind::kEndOfFile))
        Fail(Peek().span, "unexpected '" + TokenText(Peek()) + "' after the expression");
      module.AddFunction(Make<GlobalVarNode>("main", start),
                         Make<FunctionNode>(std::move(free_vars), body, Type(),
                                            std::vector<TypeVar>{}, Attrs{}, PreviousEnd(start)));
    } catch (const ParseAbandoned&) {
    }
  }

  // ---- definitions ----------------------------------------------------------

  TypeDefinition ParseTypeDefinition() {
    const Token& keyword = Advance();  // 'type'
    const Token& name = Expect(TokenKind::kIdentifier);
    GlobalTypeVar adt = type_names_.at(std::string(name.text));
    type_scopes_.emplace_back();
    std::vector<TypeVar> type_params = ParseTypeParams();
    TypeDefinition definition{adt, type_params, {}, {}};
    Expect(TokenKind::kLeftBrace);
    while (!At(TokenKind::kRightBrace)) {
      const Token& constructor_name = Expect(TokenKind::kIdentifier);
      std::vector<Type> inputs;
      if (Accept(TokenKind::kLeftParen)) {
        while (!At(TokenKind::kRightParen)) {
          inputs.push_back(ParseType());
          if (!Accept(TokenKind::kComma)) break;
        }
        Expect(TokenKind::kRightParen);
      }
      std::string key(constructor_name.text);
      if (constructors_.count(key)) {
        Fail(constructor_name.span, "constructor " + key + " is defined more than once");
      }
      auto constructor = Make<ConstructorNode>(key, std::move(inputs), adt,
                                               static_cast<int>(definition.constructors.size()),
                                               constructor_name.span);
      constructors_[key] = constructor;
      definition.constructors.push_back(constructor);
      if (!Accept(TokenKind::kComma)) break;
    }
    Expect(TokenKind::kRightBrace);
    type_scopes_.pop_back();
    definition.span = PreviousEnd(keyword.span);
    return definition;
  }

  std::pair<GlobalVar, Function> ParseFunctionDefinition() {
    const Token& keyword = Advance();  // 'def'
    const Token& name = Expect(TokenKind::kGlobal);
    GlobalVar global = globals_.at(std::string(name.text));
    Function function = ParseFunctionRest(keyword.span);
    return {global, function};
  }

  std::vector<TypeVar> ParseTypeParams() {
    std::vector<TypeVar> params;
    if (!Accept(TokenKind::kLeftBracket)) return params;
    while (!At(TokenKind::kRightBracket)) {
      const Token& name = Expect(TokenKind::kIdentifier);
      TypeVar var = MakeTypeVar(std::string(name.text), name.span);
      type_scopes_.back()[std::string(name.text)] = var;
      params.push_back(var);
      if (!Accept(TokenKind::kComma)) break;
    }
    Expect(TokenKind::kRightBracket);
    return params;
  }

  // `[T, ...](%x: T, ..., Attr=v) -> R { body }`, after `fn` or `def @name`.
  Function ParseFunctionRest(const Span& start) {
    type_scopes_.emplace_back();
    size_t mark = scopes_.Mark();
    std::vector<TypeVar> type_params = ParseTypeParams();
    Expect(TokenKind::kLeftParen);
    std::vector<Var> params;
    std::unordered_set<std::string> param_names;
    Attrs attrs;
    while (!At(TokenKind::kRightParen)) {
      if (At(TokenKind::kIdentifier) && Peek(1).kind == TokenKind::kEqual) {
        const Token& attr_name = Advance();
        Advance();
        attrs.emplace_back(std::string(attr_name.text), ParseAttrValue());
      } else {
        const Token& name = Expect(TokenKind::kLocal);
        Type annotation;
        if (Accept(TokenKind::kColon)) annotation = ParseType();
        Var var = Make<VarNode>(std::string(name.text), annotation, name.span);
        if (!param_names.insert(std::string(name.text)).second) {
          Fail(name.span, "parameter %" + std::string(name.text) + " is declared twice");
        }
        scopes_.Bind(std::string(name.text), var);
        params.push_back(var);
      }
      if (!AcceptSeparator(TokenKind::kRightParen)) break;
    }
    Expect(TokenKind::kRightParen);
    Type ret_type;
    if (Accept(TokenKind::kArrow)) ret_type = ParseType();
    Expect(TokenKind::kLeftBrace);
    Expr body = ParseSequence();
    Expect(TokenKind::kRightBrace);
    scopes_.PopTo(mark);
    type_scopes_.pop_back();
    return Make<FunctionNode>(std::move(params), body, ret_type, std::move(type_params),
                              std::move(attrs), PreviousEnd(start));
  }

  // ---- expressions ----------------------------------------------------------

  // Let bindings and graph bindings, then the result expression. Handled
  // with a loop, so a 100,000-binding chain costs no stack.
  Expr ParseSequence() {
    struct Binding {
      Var var;  // null for a graph binding
      Expr value;
      Span span;
    };
    std::vector<Binding> bindings;
    size_t mark = scopes_.Mark();
    while (true) {
      if (AtKeyword("let")) {
        const Token& keyword = Advance();
        const Token& name = Expect(TokenKind::kLocal);
        Type annotation;
        if (Accept(TokenKind::kColon)) annotation = ParseType();
        Expect(TokenKind::kEqual);
        Var var = Make<VarNode>(std::string(name.text), annotation, name.span);
        // A let-bound function may call itself; any other value sees the
        // enclosing binding of the same name.
        bool recursive = AtKeyword("fn");
        if (recursive) scopes_.Bind(std::string(name.text), var);
        Expr value = ParseExpr();
        if (!recursive) scopes_.Bind(std::string(name.text), var);
        Expect(TokenKind::kSemicolon);
        bindings.push_back({var, value, PreviousEnd(keyword.span)});
      } else if (At(TokenKind::kLocal) && Peek(1).kind == TokenKind::kEqual) {
        const Token& name = Advance();
        Advance();
        if (!std::all_of(name.text.begin(), name.text.end(),
                         [](char c) { return c >= '0' && c <= '9'; })) {
          Fail(name.span, "'%" + std::string(name.text) +
                              " = ...;' binds a graph node, which must have a numeric name; use "
                              "'let %" +
                              std::string(name.text) + " = ...;'");
        }
        Expr value = ParseExpr();
        Expect(TokenKind::kSemicolon);
        scopes_.Bind(std::string(name.text), value);
      } else {
        break;
      }
    }
    Expr body = ParseExpr();
    scopes_.PopTo(mark);
    for (size_t index = bindings.size(); index-- > 0;) {
      Binding& binding = bindings[index];
      body = Make<LetNode>(binding.var, binding.value, body, binding.span);
    }
    return body;
  }

  Expr ParseExpr() {
    DepthGuard guard(*this, Peek().span);
    if (AtKeyword("let")) return ParseSequence();
    return ParseBinary(0);
  }

  struct BinaryOperator {
    TokenKind token;
    int precedence;
    const char* op_name;
  };
  static const BinaryOperator* FindBinary(TokenKind kind) {
    // Relay's precedence: * / bind tighter than + -, then comparisons, then
    // equality; all left-associative.
    static constexpr BinaryOperator kOperators[] = {
        {TokenKind::kStar, 4, "multiply"},    {TokenKind::kSlash, 4, "divide"},
        {TokenKind::kPlus, 3, "add"},         {TokenKind::kMinus, 3, "subtract"},
        {TokenKind::kLess, 2, "less"},        {TokenKind::kLessEqual, 2, "less_equal"},
        {TokenKind::kGreater, 2, "greater"},  {TokenKind::kGreaterEqual, 2, "greater_equal"},
        {TokenKind::kEqualEqual, 1, "equal"}, {TokenKind::kNotEqual, 1, "not_equal"},
    };
    for (const BinaryOperator& op : kOperators) {
      if (op.token == kind) return &op;
    }
    return nullptr;
  }

  Expr ParseBinary(int min_precedence) {
    Span start = Peek().span;
    Expr lhs = ParseUnary();
    while (const BinaryOperator* op = FindBinary(Peek().kind)) {
      if (op->precedence < min_precedence) break;
      const Token& op_token = Advance();
      Expr rhs;
      {
        DepthGuard guard(*this, op_token.span);
        rhs = ParseBinary(op->precedence + 1);
      }
      lhs = Make<CallNode>(MakeOp(op->op_name, op_token.span), std::vector<Expr>{lhs, rhs}, Attrs{},
                           std::vector<Type>{}, PreviousEnd(start));
    }
    return lhs;
  }

  Expr ParseUnary() {
    if (At(TokenKind::kMinus)) {
      const Token& minus = Advance();
      if (At(TokenKind::kInteger) || At(TokenKind::kFloat)) {
        if (!Peek().preceded_by_space)
          return ParsePostfix(ParseNumber(/*negative=*/true, minus.span), minus.span);
      }
      DepthGuard guard(*this, minus.span);
      Expr operand = ParseUnary();
      return Make<CallNode>(MakeOp("negative", minus.span), std::vector<Expr>{operand}, Attrs{},
                            std::vector<Type>{}, PreviousEnd(minus.span));
    }
    Span start = Peek().span;
    return ParsePostfix(ParsePrimary(), start);
  }

  // `start` is where the primary's text began: variables, globals and
  // constructors are shared nodes whose own spans are their definitions.
  Expr ParsePostfix(Expr expr, const Span& start) {
    while (true) {
      if (At(TokenKind::kLeftParen)) {
        expr = ParseCall(expr, start);
      } else if (At(TokenKind::kDot) && Peek(1).kind == TokenKind::kInteger) {
        Advance();
        const Token& index_token = Advance();
        int index = 0;
        auto [end, error] = std::from_chars(
            index_token.text.data(), index_token.text.data() + index_token.text.size(), index);
        if (error != std::errc() || end != index_token.text.data() + index_token.text.size()) {
          Fail(index_token.span, "tuple index '" + std::string(index_token.text) +
                                     "' is not a small non-negative integer");
        }
        expr = Make<TupleGetItemNode>(expr, index, PreviousEnd(start));
      } else {
        return expr;
      }
    }
  }

  Expr ParseCall(const Expr& callee, const Span& start) {
    Expect(TokenKind::kLeftParen);
    std::vector<Expr> args;
    Attrs attrs;
    std::vector<Span> attr_spans;
    while (!At(TokenKind::kRightParen)) {
      if (At(TokenKind::kIdentifier) && Peek(1).kind == TokenKind::kEqual) {
        const Token& name = Advance();
        Advance();
        for (const auto& [existing, value] : attrs) {
          if (existing == name.text) Fail(name.span, "attribute '" + existing + "' is given twice");
        }
        attrs.emplace_back(std::string(name.text), ParseAttrValue());
        attr_spans.push_back(name.span);
      } else {
        if (!attrs.empty()) Fail(Peek().span, "positional argument after keyword attributes");
        args.push_back(ParseExpr());
      }
      if (!AcceptSeparator(TokenKind::kRightParen)) break;
    }
    Expect(TokenKind::kRightParen);
    Span span = PreviousEnd(start);
    if (const auto* op = As<OpNode>(callee)) {
      Attrs normalized;
      if (std::optional<std::string> problem =
              kernels::NormalizeAttrs(op->definition->attributes, attrs, normalized)) {
        // Point at the attribute the message names, when it names one.
        Span where = span;
        for (size_t index = 0; index < attrs.size(); ++index) {
          if (problem->find("'" + attrs[index].first + "'") != std::string::npos)
            where = attr_spans[index];
        }
        Fail(where, "operator " + op->name() + ": " + *problem);
      }
      return Make<CallNode>(callee, std::move(args), std::move(normalized), std::vector<Type>{},
                            span);
    }
    if (!attrs.empty()) {
      Fail(attr_spans.front(), "keyword attributes are only accepted by operators, not by " +
                                   std::string(NodeKindDescription(callee)));
    }
    return Make<CallNode>(callee, std::move(args), Attrs{}, std::vector<Type>{}, span);
  }

  static std::string_view NodeKindDescription(const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kGlobalVar:
        return "global functions";
      case NodeKind::kConstructor:
        return "constructors";
      case NodeKind::kFunction:
        return "function literals";
      default:
        return "this callee";
    }
  }

  Expr MakeOp(std::string_view name, const Span& span) {
    const kernels::OperatorDefinition* definition = kernels::FindOperator(name);
    if (definition == nullptr) Fail(span, "unknown operator '" + std::string(name) + "'");
    return Make<OpNode>(definition, span);
  }

  Expr ParsePrimary() {
    const Token& token = Peek();
    switch (token.kind) {
      case TokenKind::kLocal: {
        Advance();
        std::string name(token.text);
        if (Expr bound = scopes_.Lookup(name)) return bound;
        Fail(token.span, "unbound variable %" + name);
      }
      case TokenKind::kGlobal: {
        Advance();
        std::string name(token.text);
        if (auto found = globals_.find(name); found != globals_.end()) return found->second;
        if (GlobalVar requested = GradientRequest(name, token.span)) return requested;
        if (prelude_ != nullptr) {
          if (const GlobalFunction* function = prelude_->FindFunction(name)) return function->name;
        }
        Fail(token.span, "undefined global @" + name);
      }
      case TokenKind::kInteger:
      case TokenKind::kFloat:
        return ParseNumber(false, token.span);
      case TokenKind::kLeftParen:
        return ParseParenthesized();
      case TokenKind::kLeftBrace: {
        Advance();
        Expr inner = ParseSequence();
        Expect(TokenKind::kRightBrace);
        return inner;
      }
      case TokenKind::kIdentifier:
        return ParseIdentifierExpr();
      default:
        FailExpected("an expression");
    }
  }

  Expr ParseParenthesized() {
    const Token& open = Advance();
    if (Accept(TokenKind::kRightParen)) {
      return Make<TupleNode>(std::vector<Expr>{}, PreviousEnd(open.span));
    }
    Expr first = ParseExpr();
    if (Accept(TokenKind::kRightParen)) return first;
    std::vector<Expr> fields{first};
    while (Accept(TokenKind::kComma)) {
      if (At(TokenKind::kRightParen)) break;
      fields.push_back(ParseExpr());
    }
    Expect(TokenKind::kRightParen);
    return Make<TupleNode>(std::move(fields), PreviousEnd(open.span));
  }

  Expr ParseIdentifierExpr() {
    const Token& token = Advance();
    std::string_view word = token.text;
    if (word == "True" || word == "False") return BoolConstant(word == "True", token.span);
    if (word == "fn") return ParseFunctionRest(token.span);
    if (word == "if") return ParseIf(token.span);
    if (word == "match") return ParseMatch(token.span);
    if (word == "ref") {
      Expect(TokenKind::kLeftParen);
      Expr value = ParseExpr();
      Expect(TokenKind::kRightParen);
      return Make<RefCreateNode>(value, PreviousEnd(token.span));
    }
    if (word == "ref_read") {
      Expect(TokenKind::kLeftParen);
      Expr ref = ParseExpr();
      Expect(TokenKind::kRightParen);
      return Make<RefReadNode>(ref, PreviousEnd(token.span));
    }
    if (word == "ref_write") {
      Expect(TokenKind::kLeftParen);
      Expr ref = ParseExpr();
      Expect(TokenKind::kComma);
      Expr value = ParseExpr();
      Expect(TokenKind::kRightParen);
      return Make<RefWriteNode>(ref, value, PreviousEnd(token.span));
    }
    if (word == "meta") RejectMetadata(token.span);
    if (word == "free_var")
      Fail(token.span,
           "free_var declarations must come first in a file that is a single expression");
    if (word == "def" && !At(TokenKind::kGlobal)) {
      Fail(Peek().span,
           "expected a global name such as @main after 'def', found '" + TokenText(Peek()) + "'");
    }
    if (word == "def" || word == "type")
      Fail(token.span, "'" + std::string(word) + "' is only allowed at the top level");
    if (Constructor constructor = FindConstructor(word)) {
      // A constructor without fields is a value on its own: `Nil` means
      // `Nil()`, as in Relay.
      if (constructor->inputs.empty() && !At(TokenKind::kLeftParen)) {
        return Make<CallNode>(constructor, std::vector<Expr>{}, Attrs{}, std::vector<Type>{},
                              token.span);
      }
      return constructor;
    }
    if (kernels::FindOperator(word) != nullptr) return MakeOp(word, token.span);
    Fail(token.span, "unknown operator or constructor '" + std::string(word) + "'");
  }

  Constructor FindConstructor(std::string_view name) const {
    if (auto found = constructors_.find(std::string(name)); found != constructors_.end())
      return found->second;
    if (prelude_ != nullptr) return prelude_->FindConstructor(name);
    return Constructor();
  }

  Expr ParseIf(const Span& start) {
    Expect(TokenKind::kLeftParen);
    Expr condition = ParseExpr();
    Expect(TokenKind::kRightParen);
    Expr then_branch = ParseBracedSequence();
    ExpectKeyword("else");
    Expr else_branch;
    if (AtKeyword("if")) {
      const Token& nested = Advance();
      DepthGuard guard(*this, nested.span);
      else_branch = ParseIf(nested.span);
    } else {
      else_branch = ParseBracedSequence();
    }
    return Make<IfNode>(condition, then_branch, else_branch, PreviousEnd(start));
  }

  Expr ParseBracedSequence() {
    Expect(TokenKind::kLeftBrace);
    Expr body = ParseSequence();
    Expect(TokenKind::kRightBrace);
    return body;
  }

  Expr ParseMatch(const Span& start) {
    bool complete = !Accept(TokenKind::kQuestion);
    Expect(TokenKind::kLeftParen);
    Expr data = ParseExpr();
    Expect(TokenKind::kRightParen);
    Expect(TokenKind::kLeftBrace);
    std::vector<Clause> clauses;
    while (!At(TokenKind::kRightBrace)) {
      Accept(TokenKind::kBar);
      size_t mark = scopes_.Mark();
      std::unordered_set<std::string> bound_names;
      Pattern pattern = ParsePattern(bound_names);
      Expect(TokenKind::kFatArrow);
      Expr body = ParseExpr();
      scopes_.PopTo(mark);
      clauses.push_back({pattern, body});
      if (!Accept(TokenKind::kComma)) break;
    }
    Expect(TokenKind::kRightBrace);
    if (clauses.empty()) Fail(start, "match has no clauses");
    return Make<MatchNode>(data, std::move(clauses), complete, PreviousEnd(start));
  }

  Pattern ParsePattern(std::unordered_set<std::string>& bound_names) {
    const Token& token = Peek();
    DepthGuard guard(*this, token.span);
    if (token.kind == TokenKind::kIdentifier && token.text == "_") {
      Advance();
      return Make<PatternWildcardNode>(token.span);
    }
    if (token.kind == TokenKind::kLocal) {
      Advance();
      Type annotation;
      if (Accept(TokenKind::kColon)) annotation = ParseType();
      std::string name(token.text);
      if (!bound_names.insert(name).second)
        Fail(token.span, "%" + name + " is bound twice in one pattern");
      Var var = Make<VarNode>(name, annotation, token.span);
      scopes_.Bind(name, var);
      return Make<PatternVarNode>(var, token.span);
    }
    if (token.kind == TokenKind::kLeftParen) {
      Advance();
      std::vector<Pattern> fields;
      while (!At(TokenKind::kRightParen)) {
        fields.push_back(ParsePattern(bound_names));
        if (!Accept(TokenKind::kComma)) break;
      }
      Expect(TokenKind::kRightParen);
      if (fields.size() == 1 && tokens_[position_ - 2].kind != TokenKind::kComma)
        return fields.front();
      return Make<PatternTupleNode>(std::move(fields), PreviousEnd(token.span));
    }
    if (token.kind == TokenKind::kIdentifier) {
      Advance();
      Constructor constructor = FindConstructor(token.text);
      if (!constructor)
        Fail(token.span, "unknown constructor '" + std::string(token.text) + "' in pattern");
      std::vector<Pattern> fields;
      if (Accept(TokenKind::kLeftParen)) {
        while (!At(TokenKind::kRightParen)) {
          fields.push_back(ParsePattern(bound_names));
          if (!Accept(TokenKind::kComma)) break;
        }
        Expect(TokenKind::kRightParen);
      }
      if (fields.size() != constructor->inputs.size()) {
        Fail(PreviousEnd(token.span), "constructor " + constructor->name + " has " +
                                          std::to_string(constructor->inputs.size()) + " field" +
                                          (constructor->inputs.size() == 1 ? "" : "s") +
                                          ", but the pattern gives " +
                                          std::to_string(fields.size()));
      }
      return Make<PatternConstructorNode>(constructor, std::move(fields), PreviousEnd(token.span));
    }
    FailExpected("a pattern");
  }

  // ---- literals -------------------------------------------------------------

  Expr BoolConstant(bool value, const Span& span) {
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, DType::kBool);
    *tensor->data<bool>() = value;
    return Make<ConstantNode>(tensor, span);
  }

  // A number token, possibly negated: 1, -2i64, 1.5f, 2f16, 3u8.
  Expr ParseNumber(bool negative, const Span& minus_span) {
    const Token& token = Advance();
    Span span = negative ? Join(minus_span, token.span) : token.span;
    std::string_view text = token.text;
    size_t suffix_at = text.find_first_of("fiu", 0);
    // An exponent's 'e' never matches, and hex is not part of Relay.
    std::string_view digits = text.substr(0, suffix_at);
    std::string_view suffix = suffix_at == std::string_view::npos ? "" : text.substr(suffix_at);
    bool is_float_text = digits.find_first_of(".eE") != std::string_view::npos;
    DType dtype = DType::kInt32;
    if (suffix.empty()) {
      dtype = is_float_text ? DType::kFloat32 : DType::kInt32;
    } else if (suffix == "f" || suffix == "f32") {
      dtype = DType::kFloat32;
    } else if (suffix == "f16") {
      dtype = DType::kFloat16;
    } else if (suffix == "f64") {
      dtype = DType::kFloat64;
    } else if (suffix == "i8" || suffix == "i16" || suffix == "i32" || suffix == "i64" ||
               suffix == "u8" || suffix == "u16" || suffix == "u32" || suffix == "u64") {
      if (is_float_text)
        Fail(span, "'" + std::string(text) + "': an integer suffix on a fractional number");
      dtype = *ParseDType((suffix[0] == 'u' ? "uint" : "int") + std::string(suffix.substr(1)));
    } else {
      Fail(span, "'" + std::string(text) + "': unknown literal suffix '" + std::string(suffix) +
                     "' (expected f, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32 or u64)");
    }
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
    if (IsFloat(dtype)) {
      double value = std::strtod(std::string(digits).c_str(), nullptr);
      if (negative) value = -value;
      // In range when the value rounds to a finite number of its dtype.
      bool finite = dtype == DType::kFloat16   ? std::isfinite(float(Float16(float(value))))
                    : dtype == DType::kFloat32 ? std::isfinite(float(value))
                                               : std::isfinite(value);
      if (!finite) {
        Fail(span,
             "'" + std::string(text) + "' is out of range for " + std::string(DTypeName(dtype)));
      }
      switch (dtype) {
        case DType::kFloat16:
          *tensor->data<Float16>() = Float16(static_cast<float>(value));
          break;
        case DType::kFloat32:
          *tensor->data<float>() = static_cast<float>(value);
          break;
        default:
          *tensor->data<double>() = value;
          break;
      }
    } else {
      uint64_t magnitude = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
      bool parsed = error == std::errc() && end == digits.data() + digits.size();
      __int128 value =
          negative ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
      auto fits = [&](__int128 low, __int128 high) {
        return parsed && value >= low && value <= high;
      };
      bool in_range = false;
      switch (dtype) {
        case DType::kInt8:
          in_range = fits(INT8_MIN, INT8_MAX);
          if (in_range) *tensor->data<int8_t>() = int8_t(value);
          break;
        case DType::kInt16:
          in_range = fits(INT16_MIN, INT16_MAX);
          if (in_range) *tensor->data<int16_t>() = int16_t(value);
          break;
        case DType::kInt32:
          in_range = fits(INT32_MIN, INT32_MAX);
          if (in_range) *tensor->data<int32_t>() = int32_t(value);
          break;
        case DType::kInt64:
          in_range = fits(INT64_MIN, INT64_MAX);
          if (in_range) *tensor->data<int64_t>() = int64_t(value);
          break;
        case DType::kUInt8:
          in_range = fits(0, UINT8_MAX);
          if (in_range) *tensor->data<uint8_t>() = uint8_t(value);
          break;
        case DType::kUInt16:
          in_range = fits(0, UINT16_MAX);
          if (in_range) *tensor->data<uint16_t>() = uint16_t(value);
          break;
        case DType::kUInt32:
          in_range = fits(0, UINT32_MAX);
          if (in_range) *tensor->data<uint32_t>() = uint32_t(value);
          break;
        case DType::kUInt64:
          in_range = fits(0, UINT64_MAX);
          if (in_range) *tensor->data<uint64_t>() = uint64_t(value);
          break;
        default:
          break;
      }
      if (!in_range) {
        std::string shown = (negative ? "-" : "") + std::string(text);
        Fail(span, "integer literal " + shown + " does not fit in " +
                       std::string(DTypeName(dtype)) +
                       (suffix.empty() ? " (add a suffix such as i64)" : ""));
      }
    }
    return Make<ConstantNode>(tensor, span);
  }

  AttrValue ParseAttrValue() {
    const Token& token = Peek();
    DepthGuard guard(*this, token.span);
    switch (token.kind) {
      case TokenKind::kString:
        Advance();
        return AttrValue::String(std::string(token.text));
      case TokenKind::kInteger:
      case TokenKind::kFloat:
      case TokenKind::kMinus: {
        bool negative = Accept(TokenKind::kMinus);
        const Token& number = Peek();
        if (number.kind == TokenKind::kInteger) {
          Advance();
          std::string_view text = number.text;
          size_t suffix_at = text.find_first_of("iu");
          std::string_view digits = text.substr(0, suffix_at);
          int64_t value = 0;
          auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
          if (error != std::errc() || end != digits.data() + digits.size()) {
            Fail(number.span, "attribute value '" + std::string(text) + "' is not a valid integer");
          }
          return AttrValue::Int(negative ? -value : value);
        }
        if (number.kind == TokenKind::kFloat) {
          Advance();
          std::string digits(number.text.substr(0, number.text.find('f')));
          double value = std::strtod(digits.c_str(), nullptr);
          return AttrValue::Float(negative ? -value : value);
        }
        FailExpected("a number");
      }
      case TokenKind::kLeftBracket:
      case TokenKind::kLeftParen: {
        TokenKind close = token.kind == TokenKind::kLeftBracket ? TokenKind::kRightBracket
                                                                : TokenKind::kRightParen;
        Advance();
        std::vector<AttrValue> items;
        while (!At(close)) {
          items.push_back(ParseAttrValue());
          if (!Accept(TokenKind::kComma)) break;
        }
        Expect(close);
        return AttrValue::List(std::move(items));
      }
      case TokenKind::kIdentifier:
        if (token.text == "True" || token.text == "False") {
          Advance();
          return AttrValue::Bool(token.text == "True");
        }
        if (token.text == "None") {
          Advance();
          return AttrValue();
        }
        if (ParseDType(token.text)) {  // dtype=float32 without quotes, as some printers write
          Advance();
          return AttrValue::String(std::string(token.text));
        }
        break;
      default:
        break;
    }
    FailExpected("an attribute value (number, string, True, False, None or a list)");
  }

  // ---- types ----------------------------------------------------------------

  Type ParseType() {
    const Token& token = Peek();
    DepthGuard guard(*this, token.span);
    if (token.kind == TokenKind::kLeftParen) {
      Advance();
      std::vector<Type> fields;
      bool trailing_comma = false;
      while (!At(TokenKind::kRightParen)) {
        fields.push_back(ParseType());
        trailing_comma = Accept(TokenKind::kComma);
        if (!trailing_comma) break;
      }
      Expect(TokenKind::kRightParen);
      if (fields.size() == 1 && !trailing_comma) return fields.front();
      return TupleType(std::move(fields), PreviousEnd(token.span));
    }
    if (token.kind != TokenKind::kIdentifier) FailExpected("a type");
    Advance();
    std::string_view word = token.text;
    if (word == "Tensor") return ParseTensorType(token.span);
    if (std::optional<DType> dtype = ParseDType(word)) return ScalarType(*dtype, token.span);
    if (word == "_") return IncompleteType(token.span);
    if (word == "fn") {
      type_scopes_.emplace_back();
      std::vector<TypeVar> type_params = ParseTypeParams();
      Expect(TokenKind::kLeftParen);
      std::vector<Type> params;
      while (!At(TokenKind::kRightParen)) {
        params.push_back(ParseType());
        if (!Accept(TokenKind::kComma)) break;
      }
      Expect(TokenKind::kRightParen);
      Expect(TokenKind::kArrow);
      Type ret = ParseType();
      type_scopes_.pop_back();
      return FuncType(std::move(params), ret, std::move(type_params), PreviousEnd(token.span));
    }
    if (word == "ref") {
      Expect(TokenKind::kLeftParen);
      Type value = ParseType();
      Expect(TokenKind::kRightParen);
      return RefType(value, PreviousEnd(token.span));
    }
    std::string name(word);
    for (size_t index = type_scopes_.size(); index-- > 0;) {
      if (auto found = type_scopes_[index].find(name); found != type_scopes_[index].end())
        return found->second;
    }
    GlobalTypeVar adt;
    size_t expected_arity = 0;
    if (auto found = type_names_.find(name); found != type_names_.end()) {
      adt = found->second;
      expected_arity = DeclaredTypeArity(name);
    } else if (prelude_ != nullptr) {
      if (const TypeDefinition* definition = prelude_->FindTypeDefinition(name)) {
        adt = definition->name;
        expected_arity = definition->type_params.size();
      }
    }
    if (!adt) Fail(token.span, "unknown type '" + name + "'");
    std::vector<Type> args;
    if (Accept(TokenKind::kLeftBracket)) {
      while (!At(TokenKind::kRightBracket)) {
        args.push_back(ParseType());
        if (!Accept(TokenKind::kComma)) break;
      }
      Expect(TokenKind::kRightBracket);
    }
    Span span = PreviousEnd(token.span);
    if (args.size() != expected_arity) {
      Fail(span, "type " + name + " expects " + std::to_string(expected_arity) + " type argument" +
                     (expected_arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    }
    return Make<TypeCallNode>(adt, std::move(args), span);
  }

  // The number of type parameters of a type defined in this file, read from
  // its declaration's tokens (the definition may not be parsed yet).
  size_t DeclaredTypeArity(const std::string& name) const {
    for (size_t start : definition_starts_) {
      if (tokens_[start].text != "type" || tokens_[start + 1].text != name) continue;
      size_t index = start + 2;
      if (tokens_[index].kind != TokenKind::kLeftBracket) return 0;
      size_t arity = 0;
      for (++index; index < tokens_.size() && tokens_[index].kind != TokenKind::kRightBracket;
           ++index) {
        if (tokens_[index].kind == TokenKind::kIdentifier) ++arity;
      }
      return arity;
    }
    return 0;
  }

  Type ParseTensorType(const Span& start) {
    Expect(TokenKind::kLeftBracket);
    std::vector<int64_t> shape;
    if (At(TokenKind::kLeftParen)) {
      Advance();
      while (!At(TokenKind::kRightParen)) {
        if (Accept(TokenKind::kQuestion)) {
          shape.push_back(kAnyDim);
        } else {
          const Token& dimension = Expect(TokenKind::kInteger);
          int64_t value = 0;
          std::string_view digits = dimension.text.substr(0, dimension.text.find_first_of("iu"));
          auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
          if (error != std::errc() || end != digits.data() + digits.size()) {
            Fail(dimension.span,
                 "dimension '" + std::string(dimension.text) + "' is not a valid size");
          }
          shape.push_back(value);
        }
        if (!Accept(TokenKind::kComma)) break;
      }
      Expect(TokenKind::kRightParen);
    } else {
      FailExpected("a shape such as (1, 3, ?)");
    }
    Expect(TokenKind::kComma);
    const Token& dtype_token = Expect(TokenKind::kIdentifier);
    std::optional<DType> dtype = ParseDType(dtype_token.text);
    if (!dtype) {
      Fail(dtype_token.span, "unknown dtype '" + std::string(dtype_token.text) +
                                 "' (expected bool, int8, int16, int32, int64, uint8, float16, "
                                 "float32 or float64)");
    }
    Expect(TokenKind::kRightBracket);
    return TensorType(std::move(shape), *dtype, PreviousEnd(start));
  }

  Diagnostics& diagnostics_;
  const Module* prelude_;
  std::deque<std::string> strings_;
  std::vector<Token> tokens_;
  size_t position_ = 0;
  int depth_ = 0;
  std::vector<size_t> definition_starts_;
  GlobalVar GradientRequest(const std::string& name, const Span& span) {
    constexpr std::string_view kSuffix = "_grad";
    if (!name.ends_with(kSuffix)) return nullptr;
    std::string base = name.substr(0, name.size() - kSuffix.size());
    if (!globals_.count(base)) return nullptr;
    GlobalVar requested = Make<GlobalVarNode>(name, span);
    globals_[name] = requested;
    gradient_requests_.push_back(requested);
    return requested;
  }

  std::unordered_map<std::string, GlobalVar> globals_;
  // @f_grad used but not defined, where the program defines @f: the front
  // end derives it (Module::gradient_requests).
  std::vector<GlobalVar> gradient_requests_;
  std::unordered_map<std::string, GlobalTypeVar> type_names_;
  std::unordered_map<std::string, Constructor> constructors_;
  ScopeStack scopes_;
  std::vector<std::unordered_map<std::string, TypeVar>> type_scopes_;
};

}  // namespace

ir::Module ParseModule(Diagnostics& diagnostics, const ir::Module* prelude) {
  return Parser(diagnostics, prelude).Run();
}

}  // namespace relay::parser
