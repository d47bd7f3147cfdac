#include "compiler/typing/type_inference.h"

#include <unordered_map>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/typing/unifier.h"
#include "kernels/operator.h"

namespace relay::typing {

namespace {

using namespace relay::ir;

// Thrown to abandon the current global after its error has been reported.
struct TypeAbandoned {};

Type BoolScalar() {
  return ScalarType(DType::kBool);
}

// Where to report a problem with `child` as used by an expression spanning
// `parent`. Variables, globals and constructors are shared nodes whose own
// spans are their definitions, so a problem with a use of one is reported
// at the expression that uses it.
Span UseSpan(const Expr& child, const Span& parent) {
  switch (child->kind()) {
    case NodeKind::kVar:
    case NodeKind::kGlobalVar:
    case NodeKind::kConstructor:
      return parent;
    default:
      return child->span().known() ? child->span() : parent;
  }
}

// "fn (%lhs, %rhs) { add(%lhs, %rhs) }": how to pass an operator as a value.
std::string WrapOperatorHint(const kernels::OperatorDefinition& definition) {
  std::string params;
  for (size_t index = 0; index < definition.input_names.size(); ++index) {
    params += (index ? ", %" : "%") + definition.input_names[index];
  }
  return "fn (" + params + ") { " + definition.name + "(" + params + ") }";
}

Type FromValueType(const kernels::ValueType& value) {
  if (!value.is_tuple) return TensorType(value.shape, value.dtype);
  std::vector<Type> fields;
  for (const kernels::ValueType& field : value.fields) fields.push_back(FromValueType(field));
  return TupleType(std::move(fields));
}

std::string Ordinal(size_t index) {
  return std::to_string(index + 1);
}

class TypeInferencer {
 public:
  TypeInferencer(const Module& module, Diagnostics& diagnostics, const Module* prelude)
      : module_(module), diagnostics_(diagnostics), prelude_(prelude) {}

  bool Run() {
    size_t errors_before = diagnostics_.errors().size();
    IndexTypeDefinitions();
    for (const GlobalFunction& global : module_.functions()) {
      global_types_[global.name.get()] = DeclaredType(global.function);
    }
    std::vector<const GlobalFunction*> checked;
    for (const GlobalFunction* global_pointer : CheckingOrder()) {
      const GlobalFunction& global = *global_pointer;
      try {
        current_global_ = global.name->name;
        Type type = Infer(global.function);
        Unify(global_types_.at(global.name.get()), type, global.function->span(),
              [&](const Type& declared, const Type& found) {
                return "@" + global.name->name + " has type " + TypeToString(found) +
                       ", which differs from its use elsewhere as " + TypeToString(declared);
              });
        checked.push_back(&global);
      } catch (const TypeAbandoned&) {
        // Its pending operator calls would only repeat errors about it.
        std::erase_if(pending_,
                      [&](const Pending& pending) { return pending.global == global.name->name; });
      }
    }
    SolvePending(/*final=*/true);
    for (const GlobalFunction* global : checked) CheckFullyInferred(*global);
    if (diagnostics_.errors().size() != errors_before) return false;
    WriteCheckedTypes();
    return true;
  }

 private:
  // Polymorphic globals whose signatures have gaps are checked first, so
  // that their inferred types are complete before other globals instantiate
  // them; otherwise definition order.
  std::vector<const GlobalFunction*> CheckingOrder() const {
    std::vector<const GlobalFunction*> order;
    for (const GlobalFunction& global : module_.functions()) {
      if (!global.function->type_params.empty() && !FullyAnnotated(global.function))
        order.push_back(&global);
    }
    for (const GlobalFunction& global : module_.functions()) {
      if (global.function->type_params.empty() || FullyAnnotated(global.function))
        order.push_back(&global);
    }
    return order;
  }

  static bool FullyAnnotated(const Function& function) {
    if (!function->ret_type) return false;
    for (const Var& param : function->params) {
      if (!param->type_annotation) return false;
    }
    return true;
  }

  // ---- reporting -------------------------------------------------------------

  [[noreturn]] void Fail(const Span& span, std::string message) {
    diagnostics_.Report(ErrorKind::kType, span, std::move(message));
    throw TypeAbandoned{};
  }

  template <typename Describe>
  Type Unify(const Type& expected, const Type& found, const Span& span, Describe describe) {
    std::optional<Type> unified = unifier_.Unify(expected, found);
    if (!unified) {
      Fail(span, describe(unifier_.FullyResolve(expected), unifier_.FullyResolve(found)));
    }
    return *unified;
  }

  std::string Describe(const Expr& callee) const {
    if (const auto* global = As<GlobalVarNode>(callee)) return "@" + global->name;
    if (const auto* var = As<VarNode>(callee)) return "%" + var->name_hint;
    if (const auto* constructor = As<ConstructorNode>(callee))
      return "constructor " + constructor->name;
    return "the function";
  }

  // ---- globals, constructors, instantiation ----------------------------------

  void IndexTypeDefinitions() {
    auto index = [&](const Module& source) {
      for (const TypeDefinition& definition : source.type_definitions()) {
        type_definitions_[definition.name.get()] = &definition;
      }
    };
    if (prelude_ != nullptr) index(*prelude_);
    index(module_);
  }

  // A global's type as far as its annotations say; the gaps are holes that
  // checking the global (or its uses) fills.
  Type DeclaredType(const Function& function) {
    std::vector<Type> params;
    for (const Var& param : function->params) {
      params.push_back(param->type_annotation ? param->type_annotation : IncompleteType());
    }
    Type ret = function->ret_type ? function->ret_type : IncompleteType();
    return FuncType(std::move(params), ret, function->type_params);
  }

  Type GlobalType(const GlobalVarNode* global, const Span& span) {
    if (auto found = global_types_.find(global); found != global_types_.end()) return found->second;
    if (prelude_ != nullptr) {
      if (const GlobalFunction* function = prelude_->FindFunction(global->name)) {
        if (function->name.get() == global) return GlobalFunctionType(function->function);
      }
    }
    Fail(span, "undefined global @" + global->name);
  }

  Type ConstructorType(const ConstructorNode* constructor) {
    auto found = type_definitions_.find(constructor->adt.get());
    RELAY_CHECK(found != type_definitions_.end(), "constructor of an unknown type definition");
    const TypeDefinition& definition = *found->second;
    std::vector<Type> args(definition.type_params.begin(), definition.type_params.end());
    return FuncType(constructor->inputs, Make<TypeCallNode>(definition.name, std::move(args)),
                    definition.type_params);
  }

  // Replaces a polymorphic function type's parameters by fresh holes (or by
  // explicit type arguments).
  Type Instantiate(const Type& declared, const std::vector<Type>& type_args, const Span& span) {
    // Solved holes may stand for the type parameters: resolve them first, so
    // substitution reaches them.
    Type type = unifier_.FullyResolve(declared);
    const auto* function = As<FuncTypeNode>(type);
    if (function == nullptr || function->type_params.empty()) {
      if (!type_args.empty())
        Fail(span, "type arguments given to a function that has no type parameters");
      return type;
    }
    if (!type_args.empty() && type_args.size() != function->type_params.size()) {
      Fail(span, "expected " + std::to_string(function->type_params.size()) +
                     " type arguments, got " + std::to_string(type_args.size()));
    }
    std::unordered_map<const TypeVarNode*, Type> substitution;
    for (size_t index = 0; index < function->type_params.size(); ++index) {
      substitution[function->type_params[index].get()] =
          type_args.empty() ? IncompleteType() : type_args[index];
    }
    std::vector<Type> params;
    for (const Type& param : function->params)
      params.push_back(Unifier::Substitute(param, substitution));
    return FuncType(std::move(params), Unifier::Substitute(function->ret, substitution));
  }

  // ---- the traversal -----------------------------------------------------------

  // The type of an expression that is a leaf for the traversal: variables,
  // globals and constructors are typed at each use (globals and
  // constructors may be polymorphic, so each use instantiates afresh).
  bool IsLeaf(const Expr& expr) const {
    switch (expr->kind()) {
      case NodeKind::kVar:
      case NodeKind::kGlobalVar:
      case NodeKind::kConstructor:
      case NodeKind::kOp:
        return true;
      default:
        return false;
    }
  }

  Type TypeOf(const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kVar: {
        const auto* var = As<VarNode>(expr);
        auto found = var_types_.find(var);
        if (found != var_types_.end()) return found->second;
        // A variable no binder introduced (a free variable built by a pass).
        Type type = var->type_annotation ? var->type_annotation : IncompleteType();
        var_types_[var] = type;
        return type;
      }
      case NodeKind::kGlobalVar:
        return Instantiate(GlobalType(As<GlobalVarNode>(expr), expr->span()), {}, expr->span());
      case NodeKind::kConstructor:
        return Instantiate(ConstructorType(As<ConstructorNode>(expr)), {}, expr->span());
      case NodeKind::kOp:
        Fail(expr->span(), "operator " + As<OpNode>(expr)->name() +
                               " cannot be used as a value; wrap it in a function: " +
                               WrapOperatorHint(*As<OpNode>(expr)->definition));
      default:
        return expr_types_.at(expr.get());
    }
  }

  enum class Stage { kEnter, kBodies, kExit };
  struct Frame {
    const ExprNode* node;
    Stage stage;
  };

  void Push(std::vector<Frame>& stack, const Expr& child) {
    if (!IsLeaf(child) && !expr_types_.count(child.get()))
      stack.push_back({child.get(), Stage::kEnter});
  }

  // Post-order over the expression DAG with an explicit stack, so deeply
  // nested programs (long graph-binding chains) cannot overflow the C++
  // stack. Binders get their types on the way down, so uses below them see
  // them.
  //
  // Lets and matches are visited in three stages: first the value (or the
  // matched data); then, with the let's variable (or the patterns' types)
  // unified with it so that the body sees precise types, the body (or the
  // clause bodies); then the node itself.
  Type Infer(const Expr& root) {
    if (IsLeaf(root)) return TypeOf(root);
    std::vector<Frame> stack;
    stack.push_back({root.get(), Stage::kEnter});
    while (!stack.empty()) {
      Frame frame = stack.back();
      if (expr_types_.count(frame.node)) {
        stack.pop_back();
        continue;
      }
      Expr expr = Share(frame.node);
      const auto* let = As<LetNode>(expr);
      const auto* match = As<MatchNode>(expr);
      if (frame.stage == Stage::kEnter) {
        EnterBinders(expr);
        if (let != nullptr || match != nullptr) {
          stack.back().stage = Stage::kBodies;
          Push(stack, let != nullptr ? let->value : match->data);
          continue;
        }
        stack.back().stage = Stage::kExit;
        std::vector<Expr> children = ExprChildren(expr);
        for (size_t index = children.size(); index-- > 0;) Push(stack, children[index]);
        continue;
      }
      if (frame.stage == Stage::kBodies) {
        stack.back().stage = Stage::kExit;
        if (let != nullptr) {
          UnifyLetVariable(let);
          Push(stack, let->body);
        } else {
          UnifyScrutinee(match);
          for (size_t index = match->clauses.size(); index-- > 0;)
            Push(stack, match->clauses[index].body);
        }
        continue;
      }
      stack.pop_back();
      expr_types_[frame.node] = Exit(expr);
    }
    return expr_types_.at(root.get());
  }

  void UnifyScrutinee(const MatchNode* match) {
    Unify(match_scrutinee_types_.at(match), TypeOf(match->data),
          UseSpan(match->data, match->span()), [](const Type& patterns, const Type& found) {
            return "match: the patterns match values of type " + TypeToString(patterns) +
                   ", but the matched value has type " + TypeToString(found);
          });
  }

  void UnifyLetVariable(const LetNode* let) {
    Unify(var_types_.at(let->var.get()), TypeOf(let->value), UseSpan(let->value, let->span()),
          [&](const Type& declared, const Type& found) {
            return "let %" + let->var->name_hint + " is annotated " + TypeToString(declared) +
                   ", but its value has type " + TypeToString(found);
          });
  }

  void BindVar(const Var& var) {
    if (!var_types_.count(var.get())) {
      var_types_[var.get()] =
          var->type_annotation ? var->type_annotation : IncompleteType(var->span());
    }
  }

  void EnterBinders(const Expr& expr) {
    if (const auto* function = As<FunctionNode>(expr)) {
      for (const Var& param : function->params) BindVar(param);
    } else if (const auto* let = As<LetNode>(expr)) {
      BindVar(let->var);
    } else if (const auto* match = As<MatchNode>(expr)) {
      Type scrutinee = IncompleteType();
      match_scrutinee_types_[match] = scrutinee;
      for (const Clause& clause : match->clauses) TypePattern(clause.pattern, scrutinee);
    }
  }

  void TypePattern(const Pattern& pattern, const Type& expected) {
    switch (pattern->kind()) {
      case NodeKind::kPatternWildcard:
        return;
      case NodeKind::kPatternVar: {
        const Var& var = As<PatternVarNode>(pattern)->var;
        BindVar(var);
        Unify(expected, var_types_.at(var.get()), pattern->span(),
              [&](const Type& want, const Type& got) {
                return "pattern %" + var->name_hint + " is annotated " + TypeToString(got) +
                       ", but it matches a value of type " + TypeToString(want);
              });
        return;
      }
      case NodeKind::kPatternConstructor: {
        const auto* constructor_pattern = As<PatternConstructorNode>(pattern);
        Type instantiated = Instantiate(ConstructorType(constructor_pattern->constructor.get()), {},
                                        pattern->span());
        const auto* function = As<FuncTypeNode>(instantiated);
        Unify(expected, function->ret, pattern->span(), [&](const Type& want, const Type& got) {
          return "pattern " + constructor_pattern->constructor->name +
                 "(...) matches values of type " + TypeToString(got) +
                 ", but the matched value has type " + TypeToString(want);
        });
        for (size_t index = 0; index < constructor_pattern->patterns.size(); ++index) {
          TypePattern(constructor_pattern->patterns[index], function->params[index]);
        }
        return;
      }
      case NodeKind::kPatternTuple: {
        const auto* tuple = As<PatternTupleNode>(pattern);
        std::vector<Type> fields;
        for (size_t index = 0; index < tuple->patterns.size(); ++index)
          fields.push_back(IncompleteType());
        Unify(expected, TupleType(fields), pattern->span(), [&](const Type& want, const Type&) {
          return "a tuple pattern of " + std::to_string(fields.size()) +
                 " fields cannot match a value of type " + TypeToString(want);
        });
        for (size_t index = 0; index < tuple->patterns.size(); ++index) {
          TypePattern(tuple->patterns[index], fields[index]);
        }
        return;
      }
      default:
        RELAY_UNREACHABLE("TypePattern of a non-pattern");
    }
  }

  Type Exit(const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kConstant: {
        const Ref<Tensor>& value = As<ConstantNode>(expr)->value;
        return TensorType(value->shape(), value->dtype());
      }
      case NodeKind::kTuple: {
        std::vector<Type> fields;
        for (const Expr& field : As<TupleNode>(expr)->fields) fields.push_back(TypeOf(field));
        return TupleType(std::move(fields));
      }
      case NodeKind::kTupleGetItem:
        return ExitTupleGetItem(As<TupleGetItemNode>(expr));
      case NodeKind::kCall:
        return ExitCall(As<CallNode>(expr));
      case NodeKind::kFunction:
        return ExitFunction(As<FunctionNode>(expr));
      case NodeKind::kLet:
        return TypeOf(As<LetNode>(expr)->body);
      case NodeKind::kIf: {
        const auto* branch = As<IfNode>(expr);
        Unify(BoolScalar(), TypeOf(branch->condition), UseSpan(branch->condition, branch->span()),
              [](const Type&, const Type& found) {
                return "the condition of if must be a bool scalar, but it has type " +
                       TypeToString(found);
              });
        return Unify(TypeOf(branch->then_branch), TypeOf(branch->else_branch),
                     UseSpan(branch->else_branch, branch->span()),
                     [](const Type& then_type, const Type& else_type) {
                       return "the branches of if have different types: the then-branch has type " +
                              TypeToString(then_type) + ", the else-branch " +
                              TypeToString(else_type);
                     });
      }
      case NodeKind::kMatch:
        return ExitMatch(As<MatchNode>(expr));
      case NodeKind::kRefCreate:
        return RefType(TypeOf(As<RefCreateNode>(expr)->value));
      case NodeKind::kRefRead: {
        const auto* read = As<RefReadNode>(expr);
        Type value = IncompleteType();
        Unify(RefType(value), TypeOf(read->ref), UseSpan(read->ref, read->span()),
              [](const Type&, const Type& found) {
                return "ref_read expects a reference, but its argument has type " +
                       TypeToString(found);
              });
        return value;
      }
      case NodeKind::kRefWrite: {
        const auto* write = As<RefWriteNode>(expr);
        Type value = IncompleteType();
        Unify(RefType(value), TypeOf(write->ref), UseSpan(write->ref, write->span()),
              [](const Type&, const Type& found) {
                return "ref_write expects a reference, but its first argument has type " +
                       TypeToString(found);
              });
        Unify(value, TypeOf(write->value), UseSpan(write->value, write->span()),
              [](const Type& want, const Type& found) {
                return "ref_write stores a value of type " + TypeToString(found) +
                       " into a reference to " + TypeToString(want);
              });
        return UnitType();
      }
      default:
        RELAY_UNREACHABLE("type inference reached an unexpected node");
    }
  }

  // A projection of a tuple whose type is not known yet waits, like an
  // operator call, until it is.
  Type ExitTupleGetItem(const TupleGetItemNode* item) {
    Type result = IncompleteType();
    Pending pending{nullptr, item, result, current_global_};
    if (!TrySolve(pending)) pending_.push_back(pending);
    return result;
  }

  // The field type `item` projects, or null while the tuple's type is a hole.
  Type ProjectedType(const TupleGetItemNode* item) {
    Type tuple_type = unifier_.Resolve(TypeOf(item->tuple));
    if (As<IncompleteTypeNode>(tuple_type)) return Type();
    const auto* tuple = As<TupleTypeNode>(tuple_type);
    if (tuple == nullptr) {
      Fail(item->span(), "projection ." + std::to_string(item->index) + " of a value of type " +
                             TypeToString(unifier_.FullyResolve(tuple_type)) +
                             ", which is not a tuple");
    }
    if (static_cast<size_t>(item->index) >= tuple->fields.size()) {
      Fail(item->span(), "tuple index " + std::to_string(item->index) +
                             " is out of range for a tuple of type " +
                             TypeToString(unifier_.FullyResolve(tuple_type)));
    }
    return tuple->fields[item->index];
  }

  Type ExitFunction(const FunctionNode* function) {
    std::vector<Type> params;
    for (const Var& param : function->params) params.push_back(var_types_.at(param.get()));
    Type body = TypeOf(function->body);
    Type ret = body;
    if (function->ret_type) {
      ret = Unify(function->ret_type, body, UseSpan(function->body, function->span()),
                  [&](const Type& declared, const Type& found) {
                    std::string who =
                        function == current_function_root_ ? "@" + current_global_ : "the function";
                    return "return type mismatch: " + who + " is declared to return " +
                           TypeToString(declared) + ", but its body has type " +
                           TypeToString(found);
                  });
    }
    return FuncType(std::move(params), ret, function->type_params);
  }

  Type ExitMatch(const MatchNode* match) {
    Type result = TypeOf(match->clauses.front().body);
    for (size_t index = 1; index < match->clauses.size(); ++index) {
      const Expr& body = match->clauses[index].body;
      result = Unify(result, TypeOf(body), UseSpan(body, match->span()),
                     [&](const Type& first, const Type& found) {
                       return "the clauses of match have different types: clause 1 has type " +
                              TypeToString(first) + ", clause " + Ordinal(index) + " has type " +
                              TypeToString(found);
                     });
    }
    return result;
  }

  Type ExitCall(const CallNode* call) {
    if (const auto* op = As<OpNode>(call->callee)) return ExitOperatorCall(call, op->definition);
    Type callee_type;
    if (const auto* constructor = As<ConstructorNode>(call->callee)) {
      callee_type = Instantiate(ConstructorType(constructor), call->type_args, call->span());
    } else if (const auto* global = As<GlobalVarNode>(call->callee)) {
      callee_type = Instantiate(GlobalType(global, call->span()), call->type_args, call->span());
    } else {
      callee_type =
          Instantiate(unifier_.Resolve(TypeOf(call->callee)), call->type_args, call->span());
    }
    callee_type = unifier_.Resolve(callee_type);
    if (As<IncompleteTypeNode>(callee_type)) {
      std::vector<Type> params;
      for (size_t index = 0; index < call->args.size(); ++index) params.push_back(IncompleteType());
      Type function = FuncType(std::move(params), IncompleteType());
      unifier_.Unify(callee_type, function);
      callee_type = function;
    }
    const auto* function = As<FuncTypeNode>(callee_type);
    if (function == nullptr) {
      Fail(UseSpan(call->callee, call->span()),
           "calling a non-function: " + Describe(call->callee) + " has type " +
               TypeToString(unifier_.FullyResolve(callee_type)));
    }
    if (function->params.size() != call->args.size()) {
      Fail(call->span(), Describe(call->callee) + " expects " +
                             std::to_string(function->params.size()) + " argument" +
                             (function->params.size() == 1 ? "" : "s") + ", got " +
                             std::to_string(call->args.size()));
    }
    for (size_t index = 0; index < call->args.size(); ++index) {
      const Expr& arg = call->args[index];
      Unify(function->params[index], TypeOf(arg), UseSpan(arg, call->span()),
            [&](const Type& expected, const Type& found) {
              return "type mismatch in argument " + Ordinal(index) + " of " +
                     Describe(call->callee) + ": expected " + TypeToString(expected) + ", found " +
                     TypeToString(found);
            });
    }
    return function->ret;
  }

  // ---- operator calls and their relations -----------------------------------------

  // An operator call or a tuple projection waiting for argument types.
  struct Pending {
    const CallNode* call;          // an operator call, or
    const TupleGetItemNode* item;  // a projection
    Type result;
    std::string global;
  };

  Type ExitOperatorCall(const CallNode* call, const kernels::OperatorDefinition* definition) {
    size_t arity = definition->input_names.size();
    if (call->args.size() != arity) {
      std::string names;
      for (size_t index = 0; index < arity; ++index)
        names += (index ? ", " : "") + definition->input_names[index];
      Fail(call->span(), "operator " + definition->name + " expects " + std::to_string(arity) +
                             " argument" + (arity == 1 ? "" : "s") + " (" + names + "), got " +
                             std::to_string(call->args.size()));
    }
    for (const Expr& arg : call->args) TypeOf(arg);  // reports operators used as values
    Type result = IncompleteType();
    Pending pending{call, nullptr, result, current_global_};
    if (!TrySolve(pending)) pending_.push_back(pending);
    return result;
  }

  // Applies the relation (or projects the tuple type) once the argument
  // types are known. Returns false while some argument type has holes.
  bool TrySolve(const Pending& pending) {
    if (pending.item != nullptr) {
      Type field = ProjectedType(pending.item);
      if (!field) return false;
      Unify(pending.result, field, pending.item->span(),
            [](const Type& expected, const Type& found) {
              return "the projected field has type " + TypeToString(found) + ", but " +
                     TypeToString(expected) + " is expected here";
            });
      return true;
    }
    const CallNode* call = pending.call;
    const auto* op = As<OpNode>(call->callee);
    std::vector<kernels::ValueType> arg_types;
    for (size_t index = 0; index < call->args.size(); ++index) {
      Type type = unifier_.FullyResolve(TypeOf(call->args[index]));
      if (unifier_.HasIncomplete(type)) return false;
      std::optional<kernels::ValueType> value = ToValueType(type);
      if (!value) {
        Fail(UseSpan(call->args[index], call->span()),
             "operator " + op->name() + ": argument " + Ordinal(index) + " (" +
                 op->definition->input_names[index] + ") must be a tensor, but has type " +
                 TypeToString(type));
      }
      arg_types.push_back(std::move(*value));
    }
    std::vector<kernels::RelationInput> inputs;
    for (size_t index = 0; index < call->args.size(); ++index) {
      const auto* constant = As<ConstantNode>(call->args[index]);
      inputs.push_back({&arg_types[index], constant ? constant->value.get() : nullptr});
    }
    Type output;
    try {
      output = FromValueType(op->definition->relation(inputs, call->attrs));
    } catch (const kernels::OperatorTypeError& error) {
      Fail(call->span(), "operator " + op->name() + ": " + error.message);
    } catch (const Error& error) {
      Fail(call->span(), "operator " + op->name() + ": " + error.message());
    }
    Unify(pending.result, output, call->span(), [&](const Type& expected, const Type& found) {
      return "operator " + op->name() + " returns " + TypeToString(found) + ", but " +
             TypeToString(expected) + " is expected here";
    });
    return true;
  }

  void SolvePending(bool final) {
    bool progress = true;
    while (progress && !pending_.empty()) {
      progress = false;
      std::vector<Pending> waiting;
      for (const Pending& pending : pending_) {
        current_global_ = pending.global;
        try {
          if (TrySolve(pending)) {
            progress = true;
          } else {
            waiting.push_back(pending);
          }
        } catch (const TypeAbandoned&) {
          progress = true;
        }
      }
      pending_ = std::move(waiting);
    }
    if (!final) return;
    for (const Pending& pending : pending_) {
      if (pending.item != nullptr) {
        diagnostics_.Report(ErrorKind::kType, pending.item->span(),
                            "cannot infer the type of the tuple projected by ." +
                                std::to_string(pending.item->index) + "; annotate it");
        continue;
      }
      diagnostics_.Report(ErrorKind::kType, pending.call->span(),
                          "cannot infer the argument types of operator " +
                              As<OpNode>(pending.call->callee)->name() +
                              "; annotate the parameters it uses");
    }
    pending_.clear();
  }

  void CheckFullyInferred(const GlobalFunction& global) {
    Type type = unifier_.FullyResolve(global_types_.at(global.name.get()));
    if (!unifier_.HasIncomplete(type)) return;
    const Function& function = global.function;
    for (const Var& param : function->params) {
      if (unifier_.HasIncomplete(var_types_.at(param.get()))) {
        diagnostics_.Report(ErrorKind::kType, param->span(),
                            "cannot infer the type of parameter %" + param->name_hint + " of @" +
                                global.name->name + "; annotate it");
        return;
      }
    }
    diagnostics_.Report(ErrorKind::kType, function->span(),
                        "cannot infer the return type of @" + global.name->name + "; annotate it");
  }

  void WriteCheckedTypes() {
    for (const auto& [node, type] : expr_types_)
      node->set_checked_type(unifier_.FullyResolve(type));
    for (const auto& [var, type] : var_types_) var->set_checked_type(unifier_.FullyResolve(type));
    for (const GlobalFunction& global : module_.functions()) {
      global.name->set_checked_type(unifier_.FullyResolve(global_types_.at(global.name.get())));
    }
  }

  // Infers a global's function, remembering which node is the global's own
  // function so messages can name the global.
  Type Infer(const Function& function) {
    current_function_root_ = function.get();
    return Infer(Expr(function));
  }

  const Module& module_;
  Diagnostics& diagnostics_;
  const Module* prelude_;
  Unifier unifier_;
  std::unordered_map<const GlobalVarNode*, Type> global_types_;
  std::unordered_map<const GlobalTypeVarNode*, const TypeDefinition*> type_definitions_;
  std::unordered_map<const ExprNode*, Type> expr_types_;
  std::unordered_map<const VarNode*, Type> var_types_;
  std::unordered_map<const MatchNode*, Type> match_scrutinee_types_;
  std::vector<Pending> pending_;
  std::string current_global_;
  const FunctionNode* current_function_root_ = nullptr;
};

}  // namespace

bool InferTypes(const Module& module, Diagnostics& diagnostics, const Module* prelude) {
  return TypeInferencer(module, diagnostics, prelude).Run();
}

Type GlobalFunctionType(const Function& function) {
  if (function->checked_type()) return function->checked_type();
  std::vector<Type> params;
  for (const Var& param : function->params) {
    params.push_back(param->type_annotation ? param->type_annotation : IncompleteType());
  }
  return FuncType(std::move(params), function->ret_type ? function->ret_type : IncompleteType(),
                  function->type_params);
}

std::optional<kernels::ValueType> ToValueType(const ir::Type& type) {
  using namespace relay::ir;
  if (const auto* tensor = As<TensorTypeNode>(type)) {
    return kernels::ValueType::Tensor(tensor->shape, tensor->dtype);
  }
  if (const auto* tuple = As<TupleTypeNode>(type)) {
    std::vector<kernels::ValueType> fields;
    for (const Type& field : tuple->fields) {
      std::optional<kernels::ValueType> converted = ToValueType(field);
      if (!converted) return std::nullopt;
      fields.push_back(std::move(*converted));
    }
    return kernels::ValueType::Tuple(std::move(fields));
  }
  return std::nullopt;
}

}  // namespace relay::typing
