// A CEK-style machine: the control is either an expression to evaluate or a
// value to hand to the innermost continuation frame; the environment belongs
// to the current function activation; continuations are frames on a vector.
// A Relay call turns its frame into a return frame holding the caller's
// activation, so the C++ stack never grows with Relay's.
#include "compiler/evaluator/reference_evaluator.h"

#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "compiler/evaluator/program_tables.h"
#include "compiler/frontend.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/operator.h"

namespace relay::evaluator {
namespace {

using ir::As;
using ir::NodeKind;

// Variable bindings of one activation. Each variable node is bound at one
// place, so bindings are only ever added; lookups search the few bindings of
// a small function linearly and switch to a hash index for long let chains.
class Environment {
 public:
  void Bind(const ir::VarNode* variable, Value value) {
    if (index_) (*index_)[variable] = bindings_.size();
    bindings_.emplace_back(variable, std::move(value));
    if (!index_ && bindings_.size() > kLinearLimit) {
      index_ = std::make_unique<std::unordered_map<const ir::VarNode*, size_t>>();
      for (size_t position = 0; position < bindings_.size(); ++position) {
        (*index_)[bindings_[position].first] = position;
      }
    }
  }

  const Value* Find(const ir::VarNode* variable) const {
    if (index_) {
      auto found = index_->find(variable);
      return found == index_->end() ? nullptr : &bindings_[found->second].second;
    }
    for (auto binding = bindings_.rbegin(); binding != bindings_.rend(); ++binding) {
      if (binding->first == variable) return &binding->second;
    }
    return nullptr;
  }

 private:
  static constexpr size_t kLinearLimit = 16;
  std::vector<std::pair<const ir::VarNode*, Value>> bindings_;
  std::unique_ptr<std::unordered_map<const ir::VarNode*, size_t>> index_;
};

struct Activation {
  int32_t function = -1;  // entry in ProgramTables::functions()
  Environment environment;
  // Values of shared expressions already evaluated in this activation.
  std::unordered_map<const ir::ExprNode*, Value> memo;
};

enum class FrameKind : uint8_t {
  kMemoize,         // store the value as the node's in the activation's memo
  kTuple,           // values: the fields so far
  kTupleGetItem,    // project the value
  kCall,            // values: callee (unless an operator or constructor) and arguments so far
  kLet,             // bind the value, then evaluate the body
  kIf,              // choose a branch
  kMatch,           // match the value against the clauses
  kRefCreate,       // wrap the value in a new reference
  kRefRead,         // read the reference
  kRefWriteTarget,  // values: none yet; evaluate the value to write next
  kRefWriteValue,   // values: the reference; write the value
  kReturn,          // restore the caller's activation; node: the call
};

struct Frame {
  FrameKind kind;
  const ir::ExprNode* node;
  std::vector<Value> values = {};
  std::unique_ptr<Activation> caller = {};
};

// Operators and constructors in callee position are not evaluated as values.
bool HasStaticCallee(const ir::CallNode* call) {
  NodeKind kind = call->callee->kind();
  return kind == NodeKind::kOp || kind == NodeKind::kConstructor;
}

// The next expression a call frame evaluates, after `done` values.
const ir::ExprNode* CallPart(const ir::CallNode* call, size_t done) {
  if (HasStaticCallee(call)) return call->args[done].get();
  return done == 0 ? call->callee.get() : call->args[done - 1].get();
}

size_t CallPartCount(const ir::CallNode* call) {
  return call->args.size() + (HasStaticCallee(call) ? 0 : 1);
}

std::string LocationText(const std::string& file, const ir::Span& span) {
  if (!span.known()) return file;
  return file + ":" + std::to_string(span.line) + ":" + std::to_string(span.column);
}

// A short rendering of a value for error messages.
std::string Describe(const Value& value, const ValuePrintOptions& print_options) {
  constexpr size_t kLimit = 80;
  std::string text = FormatValue(value, print_options);
  if (text.size() > kLimit) text = text.substr(0, kLimit) + "...";
  return text;
}

class Machine {
 public:
  Machine(const ir::Module& module, const EvaluationOptions& options)
      : module_(module),
        prelude_(&compiler::Prelude()),
        tables_(module, prelude_),
        options_(options) {
    print_options_.constructor_name = [this](int32_t tag) {
      const auto& names = tables_.constructor_names();
      return tag >= 0 && static_cast<size_t>(tag) < names.size()
                 ? names[tag]
                 : "Constructor#" + std::to_string(tag);
    };
    print_options_.function_name = [this](int32_t index) {
      return index >= 0 && static_cast<size_t>(index) < tables_.functions().size()
                 ? tables_.function(index).name
                 : "#" + std::to_string(index);
    };
  }

  Value Run(const std::string& entry, std::span<const Value> arguments);

 private:
  void Evaluate(const ir::ExprNode* expr);
  void Continue();
  void FinishCall(Frame& frame);
  void EnterClosure(const Value& callee, std::span<Value> arguments);
  Value RunOperatorCall(const ir::CallNode* call, const ir::OpNode* op,
                        std::span<const Value> arguments);
  void MatchClauses(const ir::MatchNode* match, const Value& data);
  bool MatchPattern(const ir::PatternNode* pattern, const Value& value,
                    std::vector<std::pair<const ir::VarNode*, Value>>& bindings) const;
  int32_t ConstructorTagOf(const ir::ConstructorNode* constructor) const;
  void SetValue(Value value) {
    value_ = std::move(value);
    evaluating_ = false;
  }
  void SetExpr(const ir::ExprNode* expr) {
    expr_ = expr;
    evaluating_ = true;
  }
  const FunctionEntry& CurrentFunction() const { return tables_.function(current_->function); }
  [[noreturn]] void Fail(const ir::ExprNode* at, const std::string& message) const;
  [[noreturn]] void Internal(const std::string& message) const;

  const ir::Module& module_;
  const ir::Module* prelude_;
  ProgramTables tables_;
  EvaluationOptions options_;
  ValuePrintOptions print_options_;

  std::vector<Frame> frames_;
  std::unique_ptr<Activation> current_;
  bool evaluating_ = true;
  const ir::ExprNode* expr_ = nullptr;
  Value value_;
  uint64_t steps_ = 0;

  // The operator each call node last ran, prepared for its inputs' shapes
  // and dtypes: evaluating the same call again on the same shapes (a loop)
  // only launches the kernel.
  std::unordered_map<const ir::CallNode*, kernels::PreparedCallSite> prepared_calls_;
  std::vector<Ref<Tensor>> RunPrepared(const ir::CallNode* call, const std::string& op,
                                       const std::vector<Ref<Tensor>>& inputs,
                                       kernels::InputForm form) {
    return prepared_calls_[call]
        .For(inputs, [&] { return kernels::PrepareOperator(op, inputs, call->attrs, form); })
        .Run(inputs);
  }
};

void Machine::Fail(const ir::ExprNode* at, const std::string& message) const {
  // Backtrace: the current activation at `at`, then each caller at its call.
  constexpr size_t kShownFrames = 32;
  std::vector<std::string> backtrace;
  std::string names;
  size_t total = 0;
  auto add = [&](const Activation& activation, const ir::ExprNode* where) {
    ++total;
    if (backtrace.size() >= kShownFrames) return;
    const FunctionEntry& function = tables_.function(activation.function);
    backtrace.push_back(function.name + " (" +
                        LocationText(function.home->source_name(), where->span()) + ")");
    names += (names.empty() ? "" : ", ") + function.name;
  };
  add(*current_, at);
  const ir::ExprNode* call_site = nullptr;
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
    if (frame->kind != FrameKind::kReturn) continue;
    call_site = frame->node;
    add(*frame->caller, call_site);
  }
  if (total > backtrace.size()) {
    std::string more = "... " + std::to_string(total - backtrace.size()) + " more frames";
    backtrace.push_back(more);
    names += ", " + more;
  }
  const std::string& file = CurrentFunction().home->source_name();
  throw Error(ErrorKind::kRuntime, message + " (backtrace, innermost first: " + names + ")",
              at->span().In(file), std::move(backtrace));
}

void Machine::Internal(const std::string& message) const {
  RELAY_UNREACHABLE("reference evaluator: " + message + " in " + CurrentFunction().name +
                    " (is the module type-checked?)");
}

int32_t Machine::ConstructorTagOf(const ir::ConstructorNode* constructor) const {
  int32_t tag = tables_.ConstructorTag(constructor);
  if (tag < 0) Internal("constructor " + constructor->name + " of no type definition");
  return tag;
}

Value Machine::Run(const std::string& entry, std::span<const Value> arguments) {
  const int32_t index = tables_.GlobalIndex(&module_, entry);
  if (index < 0) throw Error(ErrorKind::kUsage, "no function @" + entry + " to evaluate");
  const FunctionEntry& function = tables_.function(index);
  const auto& params = function.function->params;
  if (arguments.size() != params.size()) {
    throw Error(ErrorKind::kUsage, "@" + entry + " takes " + std::to_string(params.size()) +
                                       " arguments, got " + std::to_string(arguments.size()));
  }
  current_ = std::make_unique<Activation>();
  current_->function = index;
  for (size_t position = 0; position < params.size(); ++position) {
    const Value& argument = arguments[position];
    const ir::Var& param = params[position];
    if (!argument) {
      throw Error(ErrorKind::kUsage,
                  "argument %" + param->name_hint + " of @" + entry + " is null");
    }
    const ir::Type& type = param->checked_type() ? param->checked_type() : param->type_annotation;
    if (const auto* tensor_type = As<ir::TensorTypeNode>(type)) {
      const auto* tensor = argument->kind() == ObjectKind::kTensor
                               ? static_cast<const Tensor*>(argument.get())
                               : nullptr;
      bool fits = tensor != nullptr && tensor->dtype() == tensor_type->dtype &&
                  tensor->shape().size() == tensor_type->shape.size() &&
                  tensor->device_id().kind == DeviceKind::kCPU;
      for (size_t axis = 0; fits && axis < tensor_type->shape.size(); ++axis) {
        fits = tensor_type->shape[axis] == ir::kAnyDim ||
               tensor_type->shape[axis] == tensor->shape()[axis];
      }
      if (!fits) {
        throw Error(ErrorKind::kUsage,
                    "argument %" + param->name_hint + " of @" + entry +
                        " must be a host tensor of type " +
                        std::string(DTypeName(tensor_type->dtype)) + " and shape " +
                        ShapeToString(tensor_type->shape) +
                        (tensor != nullptr ? ", got " + std::string(DTypeName(tensor->dtype())) +
                                                 " " + ShapeToString(tensor->shape())
                                           : ", got a non-tensor value"));
      }
    }
    current_->environment.Bind(param.get(), argument);
  }
  SetExpr(function.function->body.get());
  while (true) {
    if (evaluating_) {
      Evaluate(expr_);
    } else if (frames_.empty()) {
      return std::move(value_);
    } else {
      Continue();
    }
  }
}

void Machine::Evaluate(const ir::ExprNode* expr) {
  ++steps_;
  if (options_.step_limit != 0 && steps_ > options_.step_limit) {
    Fail(expr, "step limit of " + std::to_string(options_.step_limit) + " exceeded");
  }
  if (tables_.IsShared(expr)) {
    auto found = current_->memo.find(expr);
    if (found != current_->memo.end()) return SetValue(found->second);
    frames_.push_back(Frame{FrameKind::kMemoize, expr});
  }
  switch (expr->kind()) {
    case NodeKind::kVar: {
      const auto* variable = static_cast<const ir::VarNode*>(expr);
      const Value* value = current_->environment.Find(variable);
      if (value == nullptr) Internal("unbound variable %" + variable->name_hint);
      return SetValue(*value);
    }
    case NodeKind::kGlobalVar: {
      const auto* global = static_cast<const ir::GlobalVarNode*>(expr);
      int32_t index = tables_.GlobalIndex(CurrentFunction().home, global->name);
      if (index < 0) Internal("undefined global @" + global->name);
      return SetValue(MakeRef<Closure>(index, std::vector<Value>{}));
    }
    case NodeKind::kConstant:
      return SetValue(static_cast<const ir::ConstantNode*>(expr)->value);
    case NodeKind::kTuple: {
      const auto* tuple = static_cast<const ir::TupleNode*>(expr);
      if (tuple->fields.empty()) return SetValue(MakeRef<Tuple>(std::vector<Value>{}));
      frames_.push_back(Frame{FrameKind::kTuple, expr});
      frames_.back().values.reserve(tuple->fields.size());
      return SetExpr(tuple->fields[0].get());
    }
    case NodeKind::kTupleGetItem:
      frames_.push_back(Frame{FrameKind::kTupleGetItem, expr});
      return SetExpr(static_cast<const ir::TupleGetItemNode*>(expr)->tuple.get());
    case NodeKind::kOp:
      Internal("operator " + static_cast<const ir::OpNode*>(expr)->name() + " used as a value");
    case NodeKind::kCall: {
      const auto* call = static_cast<const ir::CallNode*>(expr);
      frames_.push_back(Frame{FrameKind::kCall, expr});
      if (CallPartCount(call) == 0) return FinishCall(frames_.back());
      frames_.back().values.reserve(CallPartCount(call));
      return SetExpr(CallPart(call, 0));
    }
    case NodeKind::kFunction: {
      const auto* function = static_cast<const ir::FunctionNode*>(expr);
      int32_t index = tables_.FunctionIndex(function);
      if (index < 0) Internal("function literal outside the module's definitions");
      const FunctionEntry& entry = tables_.function(index);
      std::vector<Value> captured;
      captured.reserve(entry.captured.size());
      for (const ir::VarNode* variable : entry.captured) {
        const Value* value = current_->environment.Find(variable);
        if (value == nullptr) {
          // `let %f = fn ... (...)`: a call of a literal that names the
          // variable being defined, before it is bound.
          Fail(expr, "the function uses %" + variable->name_hint + " before it is defined");
        }
        captured.push_back(*value);
      }
      return SetValue(MakeRef<Closure>(index, std::move(captured)));
    }
    case NodeKind::kLet:
      frames_.push_back(Frame{FrameKind::kLet, expr});
      return SetExpr(static_cast<const ir::LetNode*>(expr)->value.get());
    case NodeKind::kIf:
      frames_.push_back(Frame{FrameKind::kIf, expr});
      return SetExpr(static_cast<const ir::IfNode*>(expr)->condition.get());
    case NodeKind::kMatch:
      frames_.push_back(Frame{FrameKind::kMatch, expr});
      return SetExpr(static_cast<const ir::MatchNode*>(expr)->data.get());
    case NodeKind::kConstructor: {
      const auto* constructor = static_cast<const ir::ConstructorNode*>(expr);
      int32_t tag = ConstructorTagOf(constructor);
      if (constructor->inputs.empty()) {
        return SetValue(MakeRef<Constructed>(tag, std::vector<Value>{}));
      }
      return SetValue(MakeRef<Closure>(tables_.ConstructorFunction(tag), std::vector<Value>{}));
    }
    case NodeKind::kRefCreate:
      frames_.push_back(Frame{FrameKind::kRefCreate, expr});
      return SetExpr(static_cast<const ir::RefCreateNode*>(expr)->value.get());
    case NodeKind::kRefRead:
      frames_.push_back(Frame{FrameKind::kRefRead, expr});
      return SetExpr(static_cast<const ir::RefReadNode*>(expr)->ref.get());
    case NodeKind::kRefWrite:
      frames_.push_back(Frame{FrameKind::kRefWriteTarget, expr});
      return SetExpr(static_cast<const ir::RefWriteNode*>(expr)->ref.get());
    default:
      Internal("an expression of kind " + std::string(ir::NodeKindName(expr->kind())));
  }
}

void Machine::Continue() {
  Frame& frame = frames_.back();
  switch (frame.kind) {
    case FrameKind::kMemoize:
      current_->memo.emplace(frame.node, value_);
      frames_.pop_back();
      return;
    case FrameKind::kTuple: {
      const auto* tuple = static_cast<const ir::TupleNode*>(frame.node);
      frame.values.push_back(std::move(value_));
      if (frame.values.size() < tuple->fields.size()) {
        return SetExpr(tuple->fields[frame.values.size()].get());
      }
      Value result = MakeRef<Tuple>(std::move(frame.values));
      frames_.pop_back();
      return SetValue(std::move(result));
    }
    case FrameKind::kTupleGetItem: {
      const auto* item = static_cast<const ir::TupleGetItemNode*>(frame.node);
      if (!value_ || value_->kind() != ObjectKind::kTuple) Internal("projection of a non-tuple");
      const auto& fields = static_cast<const Tuple*>(value_.get())->fields();
      if (item->index < 0 || static_cast<size_t>(item->index) >= fields.size()) {
        Internal("projection ." + std::to_string(item->index) + " out of range");
      }
      Value field = fields[item->index];
      frames_.pop_back();
      return SetValue(std::move(field));
    }
    case FrameKind::kCall: {
      const auto* call = static_cast<const ir::CallNode*>(frame.node);
      frame.values.push_back(std::move(value_));
      if (frame.values.size() < CallPartCount(call)) {
        return SetExpr(CallPart(call, frame.values.size()));
      }
      return FinishCall(frame);
    }
    case FrameKind::kLet: {
      const auto* let = static_cast<const ir::LetNode*>(frame.node);
      current_->environment.Bind(let->var.get(), std::move(value_));
      frames_.pop_back();
      return SetExpr(let->body.get());
    }
    case FrameKind::kIf: {
      const auto* branch = static_cast<const ir::IfNode*>(frame.node);
      const auto* condition = value_ && value_->kind() == ObjectKind::kTensor
                                  ? static_cast<const Tensor*>(value_.get())
                                  : nullptr;
      if (condition == nullptr || condition->dtype() != DType::kBool ||
          condition->element_count() != 1) {
        Internal("if on a value that is not a bool scalar");
      }
      const bool taken = *condition->data<bool>();
      frames_.pop_back();
      return SetExpr(taken ? branch->then_branch.get() : branch->else_branch.get());
    }
    case FrameKind::kMatch: {
      const auto* match = static_cast<const ir::MatchNode*>(frame.node);
      Value data = std::move(value_);
      frames_.pop_back();
      return MatchClauses(match, data);
    }
    case FrameKind::kRefCreate:
      frames_.pop_back();
      return SetValue(MakeRef<Reference>(std::move(value_)));
    case FrameKind::kRefRead: {
      if (!value_ || value_->kind() != ObjectKind::kReference) Internal("! on a non-reference");
      Value content = static_cast<const Reference*>(value_.get())->Read();
      frames_.pop_back();
      return SetValue(std::move(content));
    }
    case FrameKind::kRefWriteTarget: {
      if (!value_ || value_->kind() != ObjectKind::kReference) Internal(":= on a non-reference");
      frame.values.push_back(std::move(value_));
      frame.kind = FrameKind::kRefWriteValue;
      return SetExpr(static_cast<const ir::RefWriteNode*>(frame.node)->value.get());
    }
    case FrameKind::kRefWriteValue: {
      static_cast<Reference*>(frame.values[0].get())->Write(std::move(value_));
      frames_.pop_back();
      return SetValue(MakeRef<Tuple>(std::vector<Value>{}));
    }
    case FrameKind::kReturn:
      current_ = std::move(frame.caller);
      frames_.pop_back();
      return;
  }
}

void Machine::FinishCall(Frame& frame) {
  const auto* call = static_cast<const ir::CallNode*>(frame.node);
  if (const auto* op = As<ir::OpNode>(call->callee)) {
    Value result = RunOperatorCall(call, op, frame.values);
    frames_.pop_back();
    return SetValue(std::move(result));
  }
  if (const auto* constructor = As<ir::ConstructorNode>(call->callee)) {
    if (frame.values.size() != constructor->inputs.size()) {
      Internal("constructor " + constructor->name + " called with the wrong number of fields");
    }
    Value result = MakeRef<Constructed>(ConstructorTagOf(constructor), std::move(frame.values));
    frames_.pop_back();
    return SetValue(std::move(result));
  }
  Value callee = std::move(frame.values[0]);
  EnterClosure(callee, std::span<Value>(frame.values).subspan(1));
}

void Machine::EnterClosure(const Value& callee, std::span<Value> arguments) {
  if (!callee || callee->kind() != ObjectKind::kClosure) Internal("call of a non-function");
  const auto* closure = static_cast<const Closure*>(callee.get());
  const FunctionEntry& entry = tables_.function(closure->function());
  if (entry.constructor != nullptr) {
    if (arguments.size() != entry.constructor->inputs.size()) {
      Internal("constructor " + entry.name + " called with the wrong number of fields");
    }
    Value result = MakeRef<Constructed>(
        entry.constructor_tag, std::vector<Value>(std::make_move_iterator(arguments.begin()),
                                                  std::make_move_iterator(arguments.end())));
    frames_.pop_back();
    return SetValue(std::move(result));
  }
  const ir::FunctionNode* function = entry.function;
  if (arguments.size() != function->params.size()) {
    Internal(entry.name + " called with the wrong number of arguments");
  }
  if (closure->captured().size() != entry.captured.size()) {
    Internal(entry.name + ": closure of the wrong shape");
  }
  auto activation = std::make_unique<Activation>();
  activation->function = closure->function();
  for (size_t position = 0; position < entry.captured.size(); ++position) {
    activation->environment.Bind(entry.captured[position], closure->captured()[position]);
  }
  if (entry.self != nullptr) activation->environment.Bind(entry.self, callee);
  for (size_t position = 0; position < arguments.size(); ++position) {
    activation->environment.Bind(function->params[position].get(), std::move(arguments[position]));
  }
  // The call frame becomes the return frame; its node stays the call site.
  Frame& frame = frames_.back();
  frame.kind = FrameKind::kReturn;
  frame.values.clear();
  frame.caller = std::move(current_);
  current_ = std::move(activation);
  SetExpr(function->body.get());
}

Value Machine::RunOperatorCall(const ir::CallNode* call, const ir::OpNode* op,
                               std::span<const Value> arguments) {
  auto tensor_of = [&](const Value& value) {
    if (!value || value->kind() != ObjectKind::kTensor) {
      Internal("operator " + op->name() + " applied to a non-tensor");
    }
    return Ref<Tensor>(static_cast<Tensor*>(value.get()));
  };
  const bool tuple_result = As<ir::TupleTypeNode>(call->checked_type()) != nullptr;
  try {
    if (arguments.size() == 1 && arguments[0] && arguments[0]->kind() == ObjectKind::kTuple) {
      std::vector<Ref<Tensor>> fields;
      for (const Value& field : static_cast<const Tuple*>(arguments[0].get())->fields()) {
        fields.push_back(tensor_of(field));
      }
      return RunPrepared(call, op->name(), fields, kernels::InputForm::kTuple)[0];
    }
    std::vector<Ref<Tensor>> inputs;
    inputs.reserve(arguments.size());
    for (const Value& argument : arguments) inputs.push_back(tensor_of(argument));
    std::vector<Ref<Tensor>> results =
        RunPrepared(call, op->name(), inputs, kernels::InputForm::kTensors);
    if (tuple_result) return MakeRef<Tuple>(std::vector<Value>(results.begin(), results.end()));
    return results[0];
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::kInternal) throw;
    // The kernels name the operator already ("operator add: ...").
    Fail(call, error.message());
  }
}

bool Machine::MatchPattern(const ir::PatternNode* pattern, const Value& value,
                           std::vector<std::pair<const ir::VarNode*, Value>>& bindings) const {
  std::vector<std::pair<const ir::PatternNode*, const Value*>> pending = {{pattern, &value}};
  while (!pending.empty()) {
    auto [current, subject] = pending.back();
    pending.pop_back();
    switch (current->kind()) {
      case NodeKind::kPatternWildcard:
        break;
      case NodeKind::kPatternVar:
        bindings.emplace_back(static_cast<const ir::PatternVarNode*>(current)->var.get(), *subject);
        break;
      case NodeKind::kPatternConstructor: {
        const auto* constructor = static_cast<const ir::PatternConstructorNode*>(current);
        if (!*subject || (*subject)->kind() != ObjectKind::kConstructed) {
          Internal("constructor pattern against a value that is not constructed");
        }
        const auto* constructed = static_cast<const Constructed*>(subject->get());
        if (constructed->tag() != ConstructorTagOf(constructor->constructor.get())) return false;
        if (constructed->fields().size() != constructor->patterns.size()) {
          Internal("constructor pattern " + constructor->constructor->name + " of the wrong arity");
        }
        for (size_t field = constructor->patterns.size(); field-- > 0;) {
          pending.emplace_back(constructor->patterns[field].get(), &constructed->fields()[field]);
        }
        break;
      }
      case NodeKind::kPatternTuple: {
        const auto* tuple = static_cast<const ir::PatternTupleNode*>(current);
        if (!*subject || (*subject)->kind() != ObjectKind::kTuple) {
          Internal("tuple pattern against a non-tuple");
        }
        const auto& fields = static_cast<const Tuple*>(subject->get())->fields();
        if (fields.size() != tuple->patterns.size()) Internal("tuple pattern of the wrong arity");
        for (size_t field = tuple->patterns.size(); field-- > 0;) {
          pending.emplace_back(tuple->patterns[field].get(), &fields[field]);
        }
        break;
      }
      default:
        Internal("a pattern of kind " + std::string(ir::NodeKindName(current->kind())));
    }
  }
  return true;
}

void Machine::MatchClauses(const ir::MatchNode* match, const Value& data) {
  std::vector<std::pair<const ir::VarNode*, Value>> bindings;
  for (const ir::Clause& clause : match->clauses) {
    bindings.clear();
    if (!MatchPattern(clause.pattern.get(), data, bindings)) continue;
    for (auto& [variable, value] : bindings) {
      current_->environment.Bind(variable, std::move(value));
    }
    return SetExpr(clause.body.get());
  }
  Fail(match, std::string(match->complete ? "match" : "match?") + " has no clause for the value " +
                  Describe(data, print_options_));
}

}  // namespace

Value Evaluate(const ir::Module& module, const std::string& entry, std::span<const Value> arguments,
               const EvaluationOptions& options) {
  Machine machine(module, options);
  return machine.Run(entry, arguments);
}

ValuePrintOptions PrintOptionsFor(const ir::Module& module) {
  auto tables = std::make_shared<const ProgramTables>(module, &compiler::Prelude());
  ValuePrintOptions options;
  options.constructor_name = [tables](int32_t tag) {
    const auto& names = tables->constructor_names();
    return tag >= 0 && static_cast<size_t>(tag) < names.size()
               ? names[tag]
               : "Constructor#" + std::to_string(tag);
  };
  options.function_name = [tables](int32_t index) {
    return index >= 0 && static_cast<size_t>(index) < tables->functions().size()
               ? tables->function(index).name
               : "#" + std::to_string(index);
  };
  return options;
}

std::vector<std::string> ConstructorNames(const ir::Module& module) {
  return ProgramTables(module, &compiler::Prelude()).constructor_names();
}

}  // namespace relay::evaluator
