#include "compiler/passes/gradient.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "compiler/typing/type_inference.h"
#include "kernels/operator.h"
#include "relay/error.h"

namespace relay::passes {
namespace {

using ir::As;
using ir::Expr;
using ir::Make;
using ir::Type;
using ir::Var;

// ---- types ---------------------------------------------------------------------------------

bool IsFloatTensor(const Type& type) {
  const auto* tensor = As<ir::TensorTypeNode>(type);
  return tensor != nullptr && IsFloat(tensor->dtype);
}

// A floating-point tensor, or a tuple holding one: what carries a gradient
// through an operator call.
bool CarriesGradient(const Type& type) {
  if (IsFloatTensor(type)) return true;
  if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
    for (const Type& field : tuple->fields) {
      if (CarriesGradient(field)) return true;
    }
  }
  return false;
}

// Zeros shaped like `value`, of tensor type `type`: zeros(shape=...) when
// every dimension is known, so the zeros depend on nothing (constant
// folding makes them a constant, and a memory budget can recompute them
// without `value`), else zeros_like(value).
Expr ZerosLike(const Expr& value, const Type& type) {
  const auto* tensor = As<ir::TensorTypeNode>(type);
  if (tensor == nullptr || std::any_of(tensor->shape.begin(), tensor->shape.end(),
                                       [](int64_t dim) { return dim == ir::kAnyDim; })) {
    return CallOperator("zeros_like", {value});
  }
  return CallOperator(
      "zeros", {},
      {{"shape", kernels::AttrValue::IntList(tensor->shape)},
       {"dtype", kernels::AttrValue::String(std::string(DTypeName(tensor->dtype)))}});
}

Expr Project(const Expr& tuple, int index) {
  return Make<ir::TupleGetItemNode>(tuple, index);
}

Expr CallOf(const Expr& callee, std::vector<Expr> args) {
  return Make<ir::CallNode>(callee, std::move(args));
}

// Let bindings built in order, then closed around a body.
class LetBuilder {
 public:
  // Binds `value` to a fresh variable (typed `type` when given) and returns it.
  Var Bind(const std::string& name, Expr value, Type type = nullptr) {
    Var var = Make<ir::VarNode>(name, std::move(type));
    bindings_.emplace_back(var, std::move(value));
    return var;
  }
  void Bind(const Var& var, Expr value) { bindings_.emplace_back(var, std::move(value)); }
  // Evaluates `value` for its effect.
  void Do(Expr value) { Bind("_", std::move(value)); }
  Expr Close(Expr body) const {
    for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
      body = Make<ir::LetNode>(it->first, it->second, std::move(body));
    }
    return body;
  }
  bool empty() const { return bindings_.empty(); }

 private:
  std::vector<std::pair<Var, Expr>> bindings_;
};

[[noreturn]] void FailType(const ir::Module& module, const ir::Span& span, std::string message) {
  throw Error(ErrorKind::kType, std::move(message), span.In(module.source_name()));
}

// The gradients of a call's inputs given its output's, by the operator's
// rule: one entry per input, null where none flows back. Empty when the
// operator's gradient is zero.
std::vector<Expr> OperatorGradients(const ir::Module& module, const ir::CallNode& call,
                                    std::vector<Expr> inputs, Expr output, Expr output_gradient) {
  const auto* op = As<ir::OpNode>(call.callee);
  switch (op->definition->differentiability) {
    case kernels::Differentiability::kZeroGradient:
      return {};
    case kernels::Differentiability::kNotDifferentiable:
      FailType(module, call.span(),
               "operator " + op->name() +
                   " is not differentiable, and the gradient would have to go through it");
    case kernels::Differentiability::kGradient:
      break;
  }
  const GradientRule* rule = FindGradientRule(op->name());
  RELAY_CHECK(rule, "operator " + op->name() + " is marked differentiable but has no rule");
  GradientContext context{call, std::move(inputs), std::move(output), std::move(output_gradient)};
  std::vector<Expr> gradients;
  try {
    gradients = (*rule)(context);
  } catch (const Error& error) {
    // A rule refusing the call (a ? extent it needs to know) cannot see
    // the file: the error goes where the call is.
    if (error.span() || error.kind() != ErrorKind::kType) throw;
    FailType(module, call.span(), error.message());
  }
  RELAY_CHECK(gradients.size() == call.args.size(),
              "gradient rule of " + op->name() + " returned the wrong number of gradients");
  return gradients;
}

// Whether a call needs differentiating: an operator call with a
// floating-point result and a floating-point input.
bool NeedsGradient(const ir::CallNode& call) {
  if (As<ir::OpNode>(call.callee) == nullptr || !CarriesGradient(call.checked_type())) return false;
  for (const Expr& arg : call.args) {
    if (CarriesGradient(arg->checked_type())) return true;
  }
  return false;
}

// The floating-point tensor parameters of `function`: those with a slot in
// the gradient tuple.
std::vector<size_t> GradientSlots(const ir::FunctionNode& function) {
  std::vector<size_t> slots;
  for (size_t index = 0; index < function.params.size(); ++index) {
    if (IsFloatTensor(function.params[index]->checked_type())) slots.push_back(index);
  }
  return slots;
}

void CheckResultType(const ir::Module& module, const ir::FunctionNode& function,
                     const std::string& entry) {
  std::function<bool(const Type&)> tensors_only = [&](const Type& type) {
    if (As<ir::TensorTypeNode>(type)) return true;
    const auto* tuple = As<ir::TupleTypeNode>(type);
    if (tuple == nullptr) return false;
    for (const Type& field : tuple->fields) {
      if (!tensors_only(field)) return false;
    }
    return true;
  };
  const Type& result = function.body->checked_type();
  if (!tensors_only(result)) {
    FailType(module, function.span(),
             "the gradient of @" + entry + " needs a result that is a tensor or a tuple of " +
                 "tensors, not " + ir::TypeToString(result));
  }
}

// ---- first order ---------------------------------------------------------------------------

// Whether `function`'s body is plain dataflow: lets, tuples, projections,
// constants, variables and operator calls.
bool IsDataflow(const ir::FunctionNode& function) {
  bool dataflow = true;
  ir::PostOrderVisit(function.body, [&](const Expr& expr) {
    switch (expr->kind()) {
      case ir::NodeKind::kVar:
      case ir::NodeKind::kConstant:
      case ir::NodeKind::kTuple:
      case ir::NodeKind::kTupleGetItem:
      case ir::NodeKind::kLet:
      case ir::NodeKind::kOp:
        return;
      case ir::NodeKind::kCall:
        if (!As<ir::OpNode>(As<ir::CallNode>(expr)->callee)) dataflow = false;
        return;
      default:
        dataflow = false;
    }
  });
  return dataflow;
}

// The symbolic gradient of one value: terms to sum for a tensor, one
// gradient per field for a tuple.
struct Adjoint {
  std::vector<Expr> terms;
  std::map<int, Adjoint> fields;
};

// Differentiates a dataflow function: its forward bindings, then, in
// reverse, each binding's contribution to the adjoints of its operands.
class FirstOrderGradient {
 public:
  FirstOrderGradient(const ir::Module& module, const ir::FunctionNode& function)
      : module_(module), function_(function) {}

  ir::Function Build() {
    std::vector<Var> params;
    for (const Var& param : function_.params) {
      Var fresh = Make<ir::VarNode>(param->name_hint, param->checked_type());
      params.push_back(fresh);
      atoms_[param.get()] = fresh;
    }
    Expr result = Forward(function_.body);

    // Seed: d(sum of the result)/d(result) is one everywhere.
    Seed(result, function_.body->checked_type());
    for (auto step = steps_.rbegin(); step != steps_.rend(); ++step) Backward(*step);

    std::vector<Expr> gradients;
    for (size_t slot : GradientSlots(function_)) {
      const Var& param = params[slot];
      gradients.push_back(Materialize(TakeAdjoint(param.get()), param->type_annotation, param));
    }
    Expr body = builder_.Close(
        Make<ir::TupleNode>(std::vector<Expr>{result, Make<ir::TupleNode>(gradients)}));
    return Make<ir::FunctionNode>(params, body, nullptr);
  }

 private:
  // One forward binding: `var` = `original` (a call, tuple or projection)
  // with `operands` as its parts.
  struct Step {
    Var var;
    Expr original;
    std::vector<Expr> operands;
  };

  Expr Forward(const Expr& root) {
    Expr expr = root;
    while (const auto* let = As<ir::LetNode>(expr)) {
      atoms_[let->var.get()] = Forward(let->value);
      expr = let->body;
    }
    if (auto found = atoms_.find(expr.get()); found != atoms_.end()) return found->second;
    Expr atom;
    switch (expr->kind()) {
      case ir::NodeKind::kVar:
        RELAY_CHECK(false, "unbound variable in a dataflow function");
      case ir::NodeKind::kConstant:
        atom = expr;
        break;
      case ir::NodeKind::kTuple: {
        std::vector<Expr> fields;
        for (const Expr& field : As<ir::TupleNode>(expr)->fields) fields.push_back(Forward(field));
        atom = Record(expr, Make<ir::TupleNode>(fields), fields);
        break;
      }
      case ir::NodeKind::kTupleGetItem: {
        const auto* get = As<ir::TupleGetItemNode>(expr);
        Expr tuple = Forward(get->tuple);
        atom = Record(expr, Project(tuple, get->index), {tuple});
        break;
      }
      case ir::NodeKind::kCall: {
        const auto* call = As<ir::CallNode>(expr);
        std::vector<Expr> args;
        for (const Expr& arg : call->args) args.push_back(Forward(arg));
        atom = Record(expr, Make<ir::CallNode>(call->callee, args, call->attrs), args);
        break;
      }
      default:
        RELAY_CHECK(false, "non-dataflow expression in a dataflow function");
    }
    atoms_[expr.get()] = atom;
    return atom;
  }

  Var Record(const Expr& original, Expr value, std::vector<Expr> operands) {
    Var var = builder_.Bind("v", std::move(value));
    types_[var.get()] = original->checked_type();
    steps_.push_back({var, original, std::move(operands)});
    return var;
  }

  const Type& TypeOf(const Expr& atom) const {
    if (const auto* var = As<ir::VarNode>(atom)) {
      if (auto found = types_.find(var); found != types_.end()) return found->second;
      if (var->type_annotation) return var->type_annotation;
    }
    return atom->checked_type();
  }

  // d(sum of the result)/d(result): one for every floating-point element.
  void Seed(const Expr& result, const Type& type) { Contribute(result, type, Ones(result, type)); }

  Expr Ones(const Expr& value, const Type& type) {
    const auto* tuple = As<ir::TupleTypeNode>(type);
    if (tuple == nullptr) return CallOperator("ones_like", {value});
    std::vector<Expr> fields;
    for (size_t index = 0; index < tuple->fields.size(); ++index) {
      Expr field = Project(value, int(index));
      // A field that carries no gradient is skipped by AddTo; any
      // expression holds its place.
      fields.push_back(CarriesGradient(tuple->fields[index]) ? Ones(field, tuple->fields[index])
                                                             : field);
    }
    return Make<ir::TupleNode>(fields);
  }

  // Adds `gradient` (with `type`'s structure) to the adjoint of `atom`.
  void Contribute(const Expr& atom, const Type& type, const Expr& gradient) {
    const auto* var = As<ir::VarNode>(atom);
    if (var == nullptr || !CarriesGradient(type)) return;  // constants need no gradient
    AddTo(adjoints_[var], type, gradient);
  }

  void AddTo(Adjoint& adjoint, const Type& type, const Expr& gradient) {
    if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      const auto* literal = As<ir::TupleNode>(gradient);
      Expr whole = literal ? gradient : BindUnlessVar(gradient);
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        if (!CarriesGradient(tuple->fields[index])) continue;
        Expr field = literal ? literal->fields[index] : Project(whole, int(index));
        AddTo(adjoint.fields[int(index)], tuple->fields[index], field);
      }
      return;
    }
    adjoint.terms.push_back(gradient);
  }

  // `value` bound to a fresh variable, so that using it twice computes it
  // once; a variable as it is.
  Expr BindUnlessVar(const Expr& value) {
    if (As<ir::VarNode>(value)) return value;
    return builder_.Bind("g", value);
  }

  Adjoint TakeAdjoint(const ir::VarNode* var) {
    auto found = adjoints_.find(var);
    if (found == adjoints_.end()) return {};
    Adjoint adjoint = std::move(found->second);
    adjoints_.erase(found);
    return adjoint;
  }

  static bool IsEmpty(const Adjoint& adjoint) {
    if (!adjoint.terms.empty()) return false;
    for (const auto& [index, field] : adjoint.fields) {
      if (!IsEmpty(field)) return false;
    }
    return true;
  }

  // The adjoint as one expression of `type`, zeros where nothing flowed.
  Expr Materialize(const Adjoint& adjoint, const Type& type, const Expr& primal) {
    if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      std::vector<Expr> fields;
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        auto found = adjoint.fields.find(int(index));
        Adjoint empty;
        fields.push_back(Materialize(found == adjoint.fields.end() ? empty : found->second,
                                     tuple->fields[index], Project(primal, int(index))));
      }
      return Make<ir::TupleNode>(fields);
    }
    if (adjoint.terms.empty()) return ZerosLike(primal, type);
    Expr sum = adjoint.terms.front();
    for (size_t index = 1; index < adjoint.terms.size(); ++index) {
      sum = CallOperator("add", {sum, adjoint.terms[index]});
    }
    return sum;
  }

  void Backward(const Step& step) {
    Adjoint adjoint = TakeAdjoint(step.var.get());
    if (IsEmpty(adjoint)) return;
    const Type& type = step.original->checked_type();
    switch (step.original->kind()) {
      case ir::NodeKind::kTuple: {
        const auto* tuple_type = As<ir::TupleTypeNode>(type);
        for (auto& [index, field] : adjoint.fields) {
          if (IsEmpty(field)) continue;
          const Expr& operand = step.operands[index];
          Contribute(operand, tuple_type->fields[index],
                     Materialize(field, tuple_type->fields[index], operand));
        }
        return;
      }
      case ir::NodeKind::kTupleGetItem: {
        const auto* get = As<ir::TupleGetItemNode>(step.original);
        const auto* var = As<ir::VarNode>(step.operands[0]);
        if (var == nullptr) return;
        AddTo(adjoints_[var].fields[get->index], type, Materialize(adjoint, type, step.var));
        return;
      }
      case ir::NodeKind::kCall: {
        const auto* call = As<ir::CallNode>(step.original);
        if (!NeedsGradient(*call)) return;
        Expr output_gradient = BindUnlessVar(Materialize(adjoint, type, step.var));
        std::vector<Expr> gradients =
            OperatorGradients(module_, *call, step.operands, step.var, output_gradient);
        for (size_t index = 0; index < gradients.size(); ++index) {
          if (!gradients[index]) continue;
          const Type& input_type = call->args[index]->checked_type();
          Contribute(step.operands[index], input_type, BindUnlessVar(gradients[index]));
        }
        return;
      }
      default:
        RELAY_CHECK(false, "unexpected step in a dataflow gradient");
    }
  }

  const ir::Module& module_;
  const ir::FunctionNode& function_;
  LetBuilder builder_;
  std::unordered_map<const ir::ExprNode*, Expr> atoms_;
  std::unordered_map<const ir::VarNode*, Type> types_;
  std::vector<Step> steps_;
  std::unordered_map<const ir::VarNode*, Adjoint> adjoints_;
};

// ---- higher order --------------------------------------------------------------------------

// Where the definitions of globals, types and constructors are: the
// program, then the prelude.
class Definitions {
 public:
  Definitions(const ir::Module& program, const ir::Module* prelude)
      : program_(program), prelude_(prelude) {}
  const ir::GlobalFunction* FindFunction(const std::string& name) const {
    if (const ir::GlobalFunction* found = program_.FindFunction(name)) return found;
    return prelude_ ? prelude_->FindFunction(name) : nullptr;
  }
  const ir::TypeDefinition* FindType(const std::string& name) const {
    if (const ir::TypeDefinition* found = program_.FindTypeDefinition(name)) return found;
    return prelude_ ? prelude_->FindTypeDefinition(name) : nullptr;
  }
  bool Taken(const std::string& name) const { return FindFunction(name) != nullptr; }

 private:
  const ir::Module& program_;
  const ir::Module* prelude_;
};

// The transformation of the Relay paper: floating-point tensors become
// (value, ref(gradient)) pairs, and each differentiable operator call
// extends the backpropagator %bp (a ref(fn () -> ())).
class HigherOrderGradient {
 public:
  HigherOrderGradient(const ir::Module& module, const Definitions& definitions)
      : module_(module), definitions_(definitions) {}

  // The gradient function of `function`.
  ir::Function Build(const ir::FunctionNode& function) {
    LetBuilder builder;
    std::vector<Var> params;
    std::vector<Expr> lifted;
    for (const Var& param : function.params) {
      Var fresh = Make<ir::VarNode>(param->name_hint, param->checked_type());
      params.push_back(fresh);
      if (As<ir::FuncTypeNode>(param->checked_type()) ||
          As<ir::RefTypeNode>(param->checked_type())) {
        FailType(module_, param->span(),
                 "the gradient cannot take parameter %" + param->name_hint + " of type " +
                     ir::TypeToString(param->checked_type()) +
                     ": parameters must be tensors, tuples or ADT values");
      }
      lifted.push_back(Lift(builder, fresh, param->checked_type()));
    }
    Var backpropagator =
        builder.Bind("bp",
                     Make<ir::RefCreateNode>(Make<ir::FunctionNode>(
                         std::vector<Var>{}, Make<ir::TupleNode>(std::vector<Expr>{}), nullptr)),
                     BackpropagatorType());
    Scope scope{backpropagator, {}};
    for (size_t index = 0; index < params.size(); ++index) {
      scope.vars[function.params[index].get()] = lifted[index];
    }
    Var result = builder.Bind("result", Transform(scope, function.body));
    SeedResult(builder, result, function.body->checked_type());
    builder.Do(CallOf(Make<ir::RefReadNode>(backpropagator), {}));

    std::vector<Expr> gradients;
    for (size_t slot : GradientSlots(function)) {
      gradients.push_back(Make<ir::RefReadNode>(Project(lifted[slot], 1)));
    }
    Expr body = builder.Close(Make<ir::TupleNode>(std::vector<Expr>{
        Primal(builder, result, function.body->checked_type()), Make<ir::TupleNode>(gradients)}));
    return Make<ir::FunctionNode>(params, body, nullptr);
  }

  // The reverse globals made, in the order made (callees before callers is
  // not needed: globals may refer to each other in any order).
  const std::vector<ir::GlobalFunction>& reverse_globals() const { return reverse_globals_; }

 private:
  struct Scope {
    Var backpropagator;
    std::unordered_map<const ir::VarNode*, Expr> vars;
  };

  static Type BackpropagatorType() { return ir::RefType(ir::FuncType({}, ir::UnitType())); }

  // ---- types ----

  // The type a value of `type` has after the transformation.
  Type Reverse(const Type& type) {
    switch (type->kind()) {
      case ir::NodeKind::kTensorType:
        return IsFloatTensor(type) ? ir::TupleType({type, ir::RefType(type)}) : type;
      case ir::NodeKind::kTupleType: {
        std::vector<Type> fields;
        for (const Type& field : As<ir::TupleTypeNode>(type)->fields)
          fields.push_back(Reverse(field));
        return ir::TupleType(std::move(fields));
      }
      case ir::NodeKind::kFuncType: {
        const auto* func = As<ir::FuncTypeNode>(type);
        std::vector<Type> params;
        for (const Type& param : func->params) params.push_back(Reverse(param));
        return ir::FuncType(std::move(params), Reverse(func->ret), func->type_params);
      }
      case ir::NodeKind::kRefType:
        return ir::RefType(Reverse(As<ir::RefTypeNode>(type)->value));
      case ir::NodeKind::kTypeCall: {
        const auto* call = As<ir::TypeCallNode>(type);
        CheckParametric(call->adt);
        std::vector<Type> args;
        for (const Type& arg : call->args) args.push_back(Reverse(arg));
        return Make<ir::TypeCallNode>(call->adt, std::move(args));
      }
      case ir::NodeKind::kGlobalTypeVar:  // an ADT without type parameters
        CheckParametric(ir::Share(As<ir::GlobalTypeVarNode>(type)));
        return type;
      default:
        return type;
    }
  }

  // An ADT whose constructors hold floating-point tensors directly would
  // need a second definition for its transformed values; ours hold them
  // through type parameters (List[A], Tree[A]), which transform freely.
  void CheckParametric(const ir::GlobalTypeVar& adt) {
    if (!checked_adts_.insert(adt->name).second) return;
    const ir::TypeDefinition* definition = definitions_.FindType(adt->name);
    RELAY_CHECK(definition, "type call of an unknown ADT " + adt->name);
    std::function<bool(const Type&)> holds_float = [&](const Type& type) -> bool {
      switch (type->kind()) {
        case ir::NodeKind::kTensorType:
          return IsFloatTensor(type);
        case ir::NodeKind::kTupleType:
          for (const Type& field : As<ir::TupleTypeNode>(type)->fields) {
            if (holds_float(field)) return true;
          }
          return false;
        case ir::NodeKind::kFuncType: {
          const auto* func = As<ir::FuncTypeNode>(type);
          for (const Type& param : func->params) {
            if (holds_float(param)) return true;
          }
          return holds_float(func->ret);
        }
        case ir::NodeKind::kRefType:
          return holds_float(As<ir::RefTypeNode>(type)->value);
        case ir::NodeKind::kTypeCall:
          for (const Type& arg : As<ir::TypeCallNode>(type)->args) {
            if (holds_float(arg)) return true;
          }
          CheckParametric(As<ir::TypeCallNode>(type)->adt);
          return false;
        case ir::NodeKind::kGlobalTypeVar:
          CheckParametric(ir::Share(As<ir::GlobalTypeVarNode>(type)));
          return false;
        default:
          return false;
      }
    };
    for (const ir::Constructor& constructor : definition->constructors) {
      for (const Type& input : constructor->inputs) {
        if (holds_float(input)) {
          FailType(module_, definition->span,
                   "the gradient cannot go through ADT " + adt->name + ": constructor " +
                       constructor->name + " holds a floating-point tensor directly; make the " +
                       "tensor a type parameter (type " + adt->name + "[A] { ... })");
        }
      }
    }
  }

  // Whether values of `type` can hold a floating-point tensor: the
  // signature test for calling a global as it is.
  bool MayCarryGradient(const Type& type) {
    switch (type->kind()) {
      case ir::NodeKind::kTensorType:
        return IsFloatTensor(type);
      case ir::NodeKind::kTypeVar:
        return true;
      case ir::NodeKind::kTupleType:
        for (const Type& field : As<ir::TupleTypeNode>(type)->fields) {
          if (MayCarryGradient(field)) return true;
        }
        return false;
      case ir::NodeKind::kFuncType: {
        const auto* func = As<ir::FuncTypeNode>(type);
        if (!func->type_params.empty()) return true;
        for (const Type& param : func->params) {
          if (MayCarryGradient(param)) return true;
        }
        return MayCarryGradient(func->ret);
      }
      case ir::NodeKind::kRefType:
        return MayCarryGradient(As<ir::RefTypeNode>(type)->value);
      case ir::NodeKind::kTypeCall:
        CheckParametric(As<ir::TypeCallNode>(type)->adt);
        for (const Type& arg : As<ir::TypeCallNode>(type)->args) {
          if (MayCarryGradient(arg)) return true;
        }
        return false;
      case ir::NodeKind::kGlobalTypeVar:  // holds no float tensor, or this throws
        CheckParametric(ir::Share(As<ir::GlobalTypeVarNode>(type)));
        return false;
      default:
        return false;
    }
  }

  // ---- values at the boundary ----

  // `value` (of primal `type`) as a transformed value: each floating-point
  // tensor paired with a fresh zero gradient.
  Expr Lift(LetBuilder& builder, const Expr& value, const Type& type) {
    if (IsFloatTensor(type)) {
      return builder.Bind("lifted", Make<ir::TupleNode>(std::vector<Expr>{
                                        value, Make<ir::RefCreateNode>(ZerosLike(value, type))}));
    }
    if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      std::vector<Expr> fields;
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        fields.push_back(Lift(builder, Project(value, int(index)), tuple->fields[index]));
      }
      return builder.Bind("lifted", Make<ir::TupleNode>(fields));
    }
    if (As<ir::TypeCallNode>(type)) {
      if (!MayCarryGradient(type)) return value;
      return builder.Bind("lifted", CallOf(LiftFunction(type), {value}));
    }
    return value;
  }

  // A closure lifting a value of ADT instance `type` (List[Tensor[...]]),
  // made from the ADT's definition: each constructor rebuilt with its fields
  // lifted.
  Expr LiftFunction(const Type& type) {
    std::string key = ir::TypeToString(type);
    if (auto found = lift_functions_.find(key); found != lift_functions_.end()) {
      return found->second;
    }
    const auto* call = As<ir::TypeCallNode>(type);
    const ir::TypeDefinition* definition = definitions_.FindType(call->adt->name);
    Reverse(type);  // checks the ADT is parametric
    std::unordered_map<const ir::TypeVarNode*, Type> bindings;
    for (size_t index = 0; index < definition->type_params.size(); ++index) {
      bindings[definition->type_params[index].get()] = call->args[index];
    }
    // A global per instance: recursive ADTs lift recursively.
    std::string name = FreshGlobalName("lift_" + call->adt->name);
    ir::GlobalVar global = Make<ir::GlobalVarNode>(name);
    lift_functions_[key] = global;
    Var value = Make<ir::VarNode>("value", type);
    std::vector<ir::Clause> clauses;
    for (const ir::Constructor& constructor : definition->constructors) {
      std::vector<ir::Pattern> patterns;
      LetBuilder builder;
      std::vector<Expr> fields;
      for (const Type& input : constructor->inputs) {
        Type field_type = Substitute(input, bindings);
        Var field = Make<ir::VarNode>("field", field_type);
        patterns.push_back(Make<ir::PatternVarNode>(field));
        fields.push_back(Lift(builder, field, field_type));
      }
      Expr rebuilt = CallOf(constructor, fields);
      clauses.push_back({Make<ir::PatternConstructorNode>(constructor, std::move(patterns)),
                         builder.Close(rebuilt)});
    }
    Expr body = Make<ir::MatchNode>(value, std::move(clauses), /*complete=*/true);
    reverse_globals_.push_back(
        {global, Make<ir::FunctionNode>(std::vector<Var>{value}, body, Reverse(type))});
    return global;
  }

  static Type Substitute(const Type& type,
                         const std::unordered_map<const ir::TypeVarNode*, Type>& bindings) {
    switch (type->kind()) {
      case ir::NodeKind::kTypeVar: {
        auto found = bindings.find(As<ir::TypeVarNode>(type));
        return found == bindings.end() ? type : found->second;
      }
      case ir::NodeKind::kTupleType: {
        std::vector<Type> fields;
        for (const Type& field : As<ir::TupleTypeNode>(type)->fields) {
          fields.push_back(Substitute(field, bindings));
        }
        return ir::TupleType(std::move(fields));
      }
      case ir::NodeKind::kFuncType: {
        const auto* func = As<ir::FuncTypeNode>(type);
        std::vector<Type> params;
        for (const Type& param : func->params) params.push_back(Substitute(param, bindings));
        return ir::FuncType(std::move(params), Substitute(func->ret, bindings), func->type_params);
      }
      case ir::NodeKind::kRefType:
        return ir::RefType(Substitute(As<ir::RefTypeNode>(type)->value, bindings));
      case ir::NodeKind::kTypeCall: {
        const auto* call = As<ir::TypeCallNode>(type);
        std::vector<Type> args;
        for (const Type& arg : call->args) args.push_back(Substitute(arg, bindings));
        return Make<ir::TypeCallNode>(call->adt, std::move(args));
      }
      default:
        return type;
    }
  }

  // The primal value of transformed `value` (a tensor or tuple of them).
  Expr Primal(LetBuilder& builder, const Expr& value, const Type& type) {
    if (IsFloatTensor(type)) return Project(value, 0);
    if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      if (!CarriesGradient(type)) return value;
      Expr bound = As<ir::VarNode>(value) ? value : Expr(builder.Bind("value", value));
      std::vector<Expr> fields;
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        fields.push_back(Primal(builder, Project(bound, int(index)), tuple->fields[index]));
      }
      return Make<ir::TupleNode>(fields);
    }
    return value;
  }

  // Writes one into the gradient of every floating-point element of the
  // transformed result.
  void SeedResult(LetBuilder& builder, const Expr& result, const Type& type) {
    if (IsFloatTensor(type)) {
      builder.Do(Make<ir::RefWriteNode>(Project(result, 1),
                                        CallOperator("ones_like", {Project(result, 0)})));
    } else if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        SeedResult(builder, Project(result, int(index)), tuple->fields[index]);
      }
    }
  }

  // ---- expressions ----

  Expr Transform(Scope& scope, const Expr& root) {
    // Let chains iteratively: they may be very long.
    LetBuilder builder;
    Expr expr = root;
    while (const auto* let = As<ir::LetNode>(expr)) {
      Var var = Make<ir::VarNode>(let->var->name_hint, Reverse(let->var->checked_type()));
      scope.vars[let->var.get()] = var;  // before the value: recursive closures
      builder.Bind(var, Transform(scope, let->value));
      expr = let->body;
    }
    return builder.Close(TransformNonLet(scope, expr));
  }

  Expr TransformNonLet(Scope& scope, const Expr& expr) {
    switch (expr->kind()) {
      case ir::NodeKind::kVar: {
        auto found = scope.vars.find(As<ir::VarNode>(expr));
        RELAY_CHECK(found != scope.vars.end(), "unbound variable in the gradient transformation");
        return found->second;
      }
      case ir::NodeKind::kGlobalVar:
        return GlobalAsValue(scope, expr);
      case ir::NodeKind::kConstant: {
        if (!IsFloatTensor(expr->checked_type())) return expr;
        return Make<ir::TupleNode>(std::vector<Expr>{
            expr, Make<ir::RefCreateNode>(ZerosLike(expr, expr->checked_type()))});
      }
      case ir::NodeKind::kConstructor:
      case ir::NodeKind::kOp:
        return expr;
      case ir::NodeKind::kTuple: {
        std::vector<Expr> fields;
        for (const Expr& field : As<ir::TupleNode>(expr)->fields) {
          fields.push_back(Transform(scope, field));
        }
        return Make<ir::TupleNode>(fields);
      }
      case ir::NodeKind::kTupleGetItem: {
        const auto* get = As<ir::TupleGetItemNode>(expr);
        return Project(Transform(scope, get->tuple), get->index);
      }
      case ir::NodeKind::kFunction:
        return TransformFunction(scope, *As<ir::FunctionNode>(expr));
      case ir::NodeKind::kCall:
        return TransformCall(scope, *As<ir::CallNode>(expr));
      case ir::NodeKind::kIf: {
        const auto* branch = As<ir::IfNode>(expr);
        return Make<ir::IfNode>(Transform(scope, branch->condition),
                                Transform(scope, branch->then_branch),
                                Transform(scope, branch->else_branch));
      }
      case ir::NodeKind::kMatch: {
        const auto* match = As<ir::MatchNode>(expr);
        std::vector<ir::Clause> clauses;
        for (const ir::Clause& clause : match->clauses) {
          ir::Pattern pattern = TransformPattern(scope, clause.pattern);
          clauses.push_back({pattern, Transform(scope, clause.body)});
        }
        return Make<ir::MatchNode>(Transform(scope, match->data), std::move(clauses),
                                   match->complete);
      }
      case ir::NodeKind::kRefCreate:
        return Make<ir::RefCreateNode>(Transform(scope, As<ir::RefCreateNode>(expr)->value));
      case ir::NodeKind::kRefRead:
        return Make<ir::RefReadNode>(Transform(scope, As<ir::RefReadNode>(expr)->ref));
      case ir::NodeKind::kRefWrite: {
        const auto* write = As<ir::RefWriteNode>(expr);
        return Make<ir::RefWriteNode>(Transform(scope, write->ref), Transform(scope, write->value));
      }
      default:
        RELAY_CHECK(false, "unexpected expression in the gradient transformation");
    }
  }

  ir::Pattern TransformPattern(Scope& scope, const ir::Pattern& pattern) {
    switch (pattern->kind()) {
      case ir::NodeKind::kPatternVar: {
        const Var& old = As<ir::PatternVarNode>(pattern)->var;
        Var var = Make<ir::VarNode>(old->name_hint, Reverse(old->checked_type()));
        scope.vars[old.get()] = var;
        return Make<ir::PatternVarNode>(var);
      }
      case ir::NodeKind::kPatternConstructor: {
        const auto* constructor = As<ir::PatternConstructorNode>(pattern);
        std::vector<ir::Pattern> patterns;
        for (const ir::Pattern& inner : constructor->patterns) {
          patterns.push_back(TransformPattern(scope, inner));
        }
        return Make<ir::PatternConstructorNode>(constructor->constructor, std::move(patterns));
      }
      case ir::NodeKind::kPatternTuple: {
        std::vector<ir::Pattern> patterns;
        for (const ir::Pattern& inner : As<ir::PatternTupleNode>(pattern)->patterns) {
          patterns.push_back(TransformPattern(scope, inner));
        }
        return Make<ir::PatternTupleNode>(std::move(patterns));
      }
      default:
        return pattern;
    }
  }

  Expr TransformFunction(Scope& scope, const ir::FunctionNode& function) {
    std::vector<Var> params;
    for (const Var& param : function.params) {
      Var var = Make<ir::VarNode>(param->name_hint, Reverse(param->checked_type()));
      scope.vars[param.get()] = var;
      params.push_back(var);
    }
    Type ret = Reverse(function.body->checked_type());
    return Make<ir::FunctionNode>(params, Transform(scope, function.body), ret,
                                  function.type_params, function.attrs);
  }

  // A global used as a value: itself when its type carries no gradient,
  // else a closure calling its reverse version with this scope's
  // backpropagator.
  Expr GlobalAsValue(Scope& scope, const Expr& expr) {
    const auto* global = As<ir::GlobalVarNode>(expr);
    const ir::GlobalFunction* definition = definitions_.FindFunction(global->name);
    if (!NeedsReverse(*definition)) return expr;
    const auto* type = As<ir::FuncTypeNode>(expr->checked_type());
    RELAY_CHECK(type, "a global of non-function type");
    std::vector<Var> params;
    std::vector<Expr> args{scope.backpropagator};
    for (const Type& param : type->params) {
      Var var = Make<ir::VarNode>("arg", Reverse(param));
      params.push_back(var);
      args.push_back(var);
    }
    return Make<ir::FunctionNode>(params, CallOf(ReverseGlobal(*definition), args),
                                  Reverse(type->ret));
  }

  bool NeedsReverse(const ir::GlobalFunction& global) {
    return MayCarryGradient(typing::GlobalFunctionType(global.function));
  }

  // @NAME_reverse, made on first use.
  ir::GlobalVar ReverseGlobal(const ir::GlobalFunction& global) {
    const std::string& name = global.name->name;
    if (auto found = reverse_names_.find(name); found != reverse_names_.end()) {
      return found->second;
    }
    ir::GlobalVar reverse = Make<ir::GlobalVarNode>(FreshGlobalName(name + "_reverse"));
    reverse_names_[name] = reverse;
    const ir::FunctionNode& function = *global.function;
    Var backpropagator = Make<ir::VarNode>("bp", BackpropagatorType());
    Scope scope{backpropagator, {}};
    std::vector<Var> params{backpropagator};
    for (const Var& param : function.params) {
      Var var = Make<ir::VarNode>(param->name_hint, Reverse(param->checked_type()));
      scope.vars[param.get()] = var;
      params.push_back(var);
    }
    size_t slot = reverse_globals_.size();
    reverse_globals_.push_back({reverse, nullptr});
    Expr body = Transform(scope, function.body);
    reverse_globals_[slot].function = Make<ir::FunctionNode>(
        params, body, Reverse(function.body->checked_type()), function.type_params);
    return reverse;
  }

  std::string FreshGlobalName(const std::string& base) {
    std::string name = base;
    for (int suffix = 2; definitions_.Taken(name) || !used_names_.insert(name).second; ++suffix) {
      name = base + std::to_string(suffix);
    }
    return name;
  }

  Expr TransformCall(Scope& scope, const ir::CallNode& call) {
    if (const auto* global = As<ir::GlobalVarNode>(call.callee)) {
      const ir::GlobalFunction* definition = definitions_.FindFunction(global->name);
      RELAY_CHECK(definition, "call of an unknown global @" + global->name);
      std::vector<Expr> args;
      if (!NeedsReverse(*definition)) {
        // Nothing it takes or gives can carry a gradient: call it as it is.
        for (const Expr& arg : call.args) args.push_back(Transform(scope, arg));
        return Make<ir::CallNode>(call.callee, args, call.attrs);
      }
      args.push_back(scope.backpropagator);
      for (const Expr& arg : call.args) args.push_back(Transform(scope, arg));
      return CallOf(ReverseGlobal(*definition), args);
    }
    if (As<ir::OpNode>(call.callee)) return TransformOperatorCall(scope, call);
    if (As<ir::ConstructorNode>(call.callee)) Reverse(call.checked_type());  // checks the ADT
    std::vector<Expr> args;
    Expr callee = Transform(scope, call.callee);
    for (const Expr& arg : call.args) args.push_back(Transform(scope, arg));
    return Make<ir::CallNode>(callee, args, call.attrs);
  }

  // op(args): computed on the primal values; when it needs a gradient, its
  // result gets fresh gradient references and the backpropagator a step
  // that reads them and adds the inputs' gradients to theirs.
  Expr TransformOperatorCall(Scope& scope, const ir::CallNode& call) {
    LetBuilder builder;
    std::vector<Expr> transformed;
    std::vector<Expr> primals;
    for (const Expr& arg : call.args) {
      Expr value = Transform(scope, arg);
      if (CarriesGradient(arg->checked_type())) {
        Var bound = builder.Bind("arg", value);
        transformed.push_back(bound);
        primals.push_back(builder.Bind("value", Primal(builder, bound, arg->checked_type())));
      } else {
        // Bound too: the rule may use it twice, and the backward step
        // reads it; its expression may have effects (a gradient's own
        // steps pushed onto the backpropagator) that must run once, here.
        Var bound = builder.Bind("arg", value);
        transformed.push_back(bound);
        primals.push_back(bound);
      }
    }
    Expr primal_call = Make<ir::CallNode>(call.callee, primals, call.attrs);
    const Type& output_type = call.checked_type();
    if (!CarriesGradient(output_type)) return builder.Close(primal_call);
    Var output = builder.Bind("out", primal_call);
    Expr result = Lift(builder, output, output_type);
    if (NeedsGradient(call)) {
      std::vector<Expr> gradients;
      LetBuilder step;
      Expr output_gradient = step.Bind("g", ReadGradient(result, output_type));
      gradients = OperatorGradients(module_, call, primals, output, output_gradient);
      for (size_t index = 0; index < gradients.size(); ++index) {
        if (!gradients[index]) continue;
        Var gradient = step.Bind("g", gradients[index]);
        Accumulate(step, transformed[index], call.args[index]->checked_type(), gradient);
      }
      if (!gradients.empty()) {
        Var previous = builder.Bind("previous", Make<ir::RefReadNode>(scope.backpropagator));
        Expr body = step.Close(CallOf(previous, {}));
        builder.Do(Make<ir::RefWriteNode>(
            scope.backpropagator,
            Make<ir::FunctionNode>(std::vector<Var>{}, body, ir::UnitType())));
      }
    }
    return builder.Close(result);
  }

  // The gradient held for transformed `value`: a tensor, or a tuple of them.
  Expr ReadGradient(const Expr& value, const Type& type) {
    if (IsFloatTensor(type)) return Make<ir::RefReadNode>(Project(value, 1));
    const auto* tuple = As<ir::TupleTypeNode>(type);
    std::vector<Expr> fields;
    for (size_t index = 0; index < tuple->fields.size(); ++index) {
      const Type& field = tuple->fields[index];
      fields.push_back(CarriesGradient(field)
                           ? ReadGradient(Project(value, int(index)), field)
                           : CallOperator("zeros_like", {Project(value, int(index))}));
    }
    return Make<ir::TupleNode>(fields);
  }

  // Adds `gradient` into the references of transformed `value`.
  void Accumulate(LetBuilder& builder, const Expr& value, const Type& type, const Expr& gradient) {
    if (IsFloatTensor(type)) {
      Expr reference = Project(value, 1);
      builder.Do(Make<ir::RefWriteNode>(
          reference, CallOperator("add", {Make<ir::RefReadNode>(reference), gradient})));
    } else if (const auto* tuple = As<ir::TupleTypeNode>(type)) {
      for (size_t index = 0; index < tuple->fields.size(); ++index) {
        if (!CarriesGradient(tuple->fields[index])) continue;
        Accumulate(builder, Project(value, int(index)), tuple->fields[index],
                   Project(gradient, int(index)));
      }
    }
  }

  const ir::Module& module_;
  const Definitions& definitions_;
  std::vector<ir::GlobalFunction> reverse_globals_;
  std::unordered_map<std::string, ir::GlobalVar> reverse_names_;
  std::unordered_map<std::string, Expr> lift_functions_;
  std::unordered_set<std::string> checked_adts_;
  std::unordered_set<std::string> used_names_;
};

}  // namespace

std::string GradientName(std::string_view entry) {
  return std::string(entry) + "_grad";
}

ir::Module AddGradient(const ir::Module& program, const ir::Module* prelude, std::string_view entry,
                       ir::GlobalVar gradient_global) {
  const std::string entry_name(entry);
  const ir::GlobalFunction* global = program.FindFunction(entry_name);
  if (global == nullptr) {
    throw Error(ErrorKind::kUsage, "no global @" + entry_name + " to differentiate");
  }
  const std::string gradient_name = GradientName(entry);
  Definitions definitions(program, prelude);
  if (definitions.Taken(gradient_name)) {
    throw Error(ErrorKind::kUsage, "the program already has a global @" + gradient_name);
  }
  const ir::FunctionNode& function = *global->function;
  if (!function.type_params.empty()) {
    FailType(program, function.span(),
             "the gradient of @" + entry_name + " needs a function without type parameters");
  }
  CheckResultType(program, function, entry_name);

  if (!gradient_global) gradient_global = Make<ir::GlobalVarNode>(gradient_name);
  ir::Module result = program;
  if (IsDataflow(function)) {
    result.AddFunction(gradient_global, FirstOrderGradient(program, function).Build());
  } else {
    HigherOrderGradient transform(program, definitions);
    ir::Function gradient = transform.Build(function);
    for (const ir::GlobalFunction& reverse : transform.reverse_globals()) {
      result.AddFunction(reverse.name, reverse.function);
    }
    result.AddFunction(gradient_global, gradient);
  }
  Diagnostics diagnostics(program.source_name(),
                          std::make_shared<const std::string>(program.source_text()));
  if (!typing::InferTypes(result, diagnostics, prelude)) {
    RELAY_CHECK(false, "the gradient of @" + entry_name +
                           " does not type-check: " + diagnostics.FormatAll());
  }
  return result;
}

}  // namespace relay::passes
