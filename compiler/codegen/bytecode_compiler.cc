#include "compiler/codegen/bytecode_compiler.h"

#include <algorithm>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/codegen/external_graph_builder.h"
#include "compiler/codegen/jump_threading.h"
#include "compiler/codegen/liveness.h"
#include "compiler/codegen/memory_plan.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/passes/decision_tree.h"
#include "compiler/passes/lambda_lifting.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/tail_calls.h"
#include "kernels/external/external_codegen.h"
#include "kernels/operator.h"
#include "kernels/operators/device_annotations.h"
#include "relay/error.h"
#include "vm/bytecode/tensor_layout.h"

namespace relay::codegen {

namespace {

using namespace relay::ir;

vm::ParamInfo InfoOfType(const Type& type, std::string name) {
  vm::ParamInfo info;
  info.name = std::move(name);
  info.type_text = TypeToString(type);
  if (const auto* tensor = As<TensorTypeNode>(type)) {
    info.is_tensor = true;
    info.dtype = tensor->dtype;
    info.shape = tensor->shape;
  }
  return info;
}

vm::ParamInfo ParamInfoOf(const VarNode& param) {
  return InfoOfType(param.checked_type() ? param.checked_type() : param.type_annotation,
                    param.name_hint);
}

// An entry point's results (vm::Function::results): a tuple of tensors
// field by field, anything else whole.
std::vector<vm::ParamInfo> ResultInfoOf(const FunctionNode& function) {
  Type type = function.ret_type;
  if (const auto* signature = As<FuncTypeNode>(function.checked_type())) type = signature->ret;
  if (!type) return {};
  if (const auto* tuple = As<TupleTypeNode>(type)) {
    const bool all_tensors =
        !tuple->fields.empty() &&
        std::all_of(tuple->fields.begin(), tuple->fields.end(),
                    [](const Type& field) { return As<TensorTypeNode>(field) != nullptr; });
    if (all_tensors) {
      std::vector<vm::ParamInfo> fields;
      for (const Type& field : tuple->fields) fields.push_back(InfoOfType(field, ""));
      return fields;
    }
  }
  return {InfoOfType(type, "")};
}

vm::SourceLocation LocationOf(const Node& node) {
  return {node.span().line, node.span().column};
}

bool IsTupleType(const Type& type) {
  return type && type->kind() == NodeKind::kTupleType;
}

class ModuleCompiler;

// A global to compile (lambda lifting made every function literal one).
struct PendingFunction {
  int32_t index;
  const FunctionNode* function;
  const Module* scope;  // where its global names resolve first
  int captured;         // a closure body's captured parameters; -1 for others
};

class FunctionCompiler {
 public:
  FunctionCompiler(ModuleCompiler& module, const PendingFunction& pending, vm::Function& out)
      : module_(module), pending_(pending), out_(out) {}

  void Compile();

 private:
  int32_t NewRegister() { return static_cast<int32_t>(out_.register_count++); }

  size_t Emit(vm::Opcode opcode, std::initializer_list<int32_t> operands,
              const std::vector<int32_t>& list, const Node& origin) {
    vm::Instruction instruction;
    instruction.opcode = opcode;
    size_t position = 0;
    for (int32_t operand : operands) instruction.operands[position++] = operand;
    instruction.list_begin = static_cast<uint32_t>(out_.lists.size());
    instruction.list_size = static_cast<uint32_t>(list.size());
    out_.lists.insert(out_.lists.end(), list.begin(), list.end());
    instruction.location = LocationOf(origin);
    out_.code.push_back(instruction);
    return out_.code.size() - 1;
  }
  size_t Emit(vm::Opcode opcode, std::initializer_list<int32_t> operands, const Node& origin) {
    return Emit(opcode, operands, {}, origin);
  }
  // Points the jump target operand `operand` of instruction `at` here.
  void PatchHere(size_t at, size_t operand) {
    out_.code[at].operands[operand] = static_cast<int32_t>(out_.code.size());
  }

  // The register holding `expr`'s value. The passes leave the program in
  // A-normal form, so each non-atomic expression is compiled once.
  int32_t Value(const Expr& expr) {
    int32_t result = CompileExpr(expr, false);
    MarkWorthKilling(result, expr->checked_type());
    return result;
  }
  // Whether freeing a value of `type` early is worth a kill instruction:
  // not for scalars, which cost nothing to keep.
  void MarkWorthKilling(int32_t reg, const Type& type) {
    bool worth = true;
    if (const auto* tensor = As<TensorTypeNode>(type)) worth = !tensor->shape.empty();
    if (const auto* tuple = As<TupleTypeNode>(type)) worth = !tuple->fields.empty();
    if (worth_killing_.size() <= size_t(reg)) worth_killing_.resize(size_t(reg) + 1, false);
    worth_killing_[size_t(reg)] = worth;
  }
  // Compiles `expr` in tail position: it ends by returning or tail-calling.
  void Tail(const Expr& expr) {
    int32_t result = CompileExpr(expr, true);
    // The return is located at the scope's last expression, not at its lets.
    const ExprNode* last = expr.get();
    while (const auto* let = As<LetNode>(last)) last = let->body.get();
    if (result >= 0) {
      const uint32_t at = static_cast<uint32_t>(Emit(vm::Opcode::kRet, {result}, *last));
      // The scopes that just closed still hold at their return.
      for (vm::VariableRange& variable : out_.variables) {
        if (variable.end == at && variable.begin <= at) variable.end = at + 1;
      }
    }
  }

  // Debug information (vm::Function::variables): `var` is held in `reg`
  // from here to the end of the innermost open scope. Variables the passes
  // made up (A-normal form's, say) are left out: they carry the span of the
  // value they name, where the programmer's carry their own.
  void Bind(const VarNode& var, int32_t reg, const ExprNode* value = nullptr) {
    variables_[&var] = reg;
    const Span& own = var.span();
    const bool made_up =
        value != nullptr && own.line == value->span().line && own.column == value->span().column &&
        own.end_line == value->span().end_line && own.end_column == value->span().end_column;
    if (made_up || var.name_hint.empty()) return;
    const auto here = static_cast<uint32_t>(out_.code.size());
    open_variables_.push_back(out_.variables.size());
    out_.variables.push_back({var.name_hint, reg, here, here});
  }
  // Scopes of the debug information: the variables bound after OpenScope
  // end where CloseScope is called.
  size_t OpenScope() const { return open_variables_.size(); }
  void CloseScope(size_t scope) {
    for (size_t index = scope; index < open_variables_.size(); ++index)
      out_.variables[open_variables_[index]].end = static_cast<uint32_t>(out_.code.size());
    open_variables_.resize(scope);
  }
  std::vector<size_t> open_variables_;  // indices into out_.variables

  // The register holding `expr`'s value; with `tail`, may instead emit the
  // function's exit itself and return -1. The variables it binds are in
  // scope until it ends.
  int32_t CompileExpr(const Expr& root, bool tail) {
    const size_t scope = OpenScope();
    const int32_t result = CompileScoped(root, tail);
    CloseScope(scope);
    return result;
  }
  int32_t CompileScoped(const Expr& root, bool tail);
  int32_t CompileCall(const CallNode& call);
  std::unordered_set<const CallNode*> tail_calls_;  // passes::MarkTailCalls
  int32_t CompileMatch(const MatchNode& match, bool tail);
  // The fallback for a match whose decision tree would be too large.
  int32_t CompileMatchByClauses(const MatchNode& match, int32_t data, bool tail);
  struct MatchEmission;
  void EmitDecision(const passes::DecisionTree& tree, MatchEmission& emission);
  int32_t LoadOccurrence(const passes::Occurrence& occurrence, MatchEmission& emission,
                         const Node& origin);
  int32_t CompileIf(const IfNode& branch, bool tail);
  // Emits the tests of `pattern` against register `value`; failing tests
  // jump to the instructions recorded in `failures` (patched later).
  void CompilePattern(const Pattern& pattern, int32_t value, std::vector<size_t>& failures);
  std::vector<int32_t> Values(const std::vector<Expr>& exprs) {
    std::vector<int32_t> registers;
    for (const Expr& expr : exprs) registers.push_back(Value(expr));
    return registers;
  }
  bool IsSelfClosure(const Expr& expr) const;
  void CompileExternalFunction(const FunctionNode& function);
  int32_t SelfRegister(const Node& origin);
  int32_t MakeClosure(const CallNode& call, const PendingFunction& body);
  std::unordered_set<const VarNode*> self_vars_;  // bound to IsSelfClosure calls
  int32_t self_register_ = -1;

  ModuleCompiler& module_;
  const PendingFunction& pending_;
  vm::Function& out_;
  std::unordered_map<const VarNode*, int32_t> variables_;
  const ExprNode* site_ = nullptr;  // the innermost located expression being compiled

  // `device`: where the program placed the call (on_device); unset, the
  // VM's device.
  int32_t CompileOperatorCall(const CallNode& call, const OpNode& op,
                              std::optional<DeviceId> device = std::nullopt);
  int32_t CompilePrimitiveCall(const CallNode& call, const FunctionNode& primitive,
                               std::optional<DeviceId> device = std::nullopt);
  // Emits kernel `kernel` on `args` for `call`, with explicit memory for its
  // result where the result is a tensor shaped by its inputs' shapes; returns
  // the result's register.
  int32_t EmitKernelCall(vm::KernelCall kernel, const std::vector<int32_t>& args,
                         const CallNode& call, bool shaped_by_values);
  // The register of the function's storage block (memory_plan.h).
  int32_t BlockRegister() {
    if (block_ < 0) {
      block_ = NewRegister();
      MarkWorthKilling(block_, nullptr);
    }
    return block_;
  }
  int32_t block_ = -1;

  // Constants are loaded once, at the function's entry (before the loop
  // head), into registers of their own.
  int32_t ConstantRegister(const Ref<Tensor>& value, const Node& origin);
  std::unordered_map<int32_t, int32_t> constant_registers_;
  std::vector<vm::Instruction> prologue_;
  // A call of the function itself in tail position is a jump back here,
  // after moving its arguments into the parameters' registers.
  void EmitLoopBack(std::vector<int32_t> args, int32_t first_param, const Node& origin);
  size_t loop_head_ = 0;
  std::vector<bool> worth_killing_;  // by register, for the liveness pass
};

class ModuleCompiler {
 public:
  ModuleCompiler(const Module& module, const Module* prelude, passes::ExternalCodegens codegens)
      : module_(module), prelude_(prelude), codegens_(codegens) {}

  // The codegen that compiles functions marked Compiler=`name`: the one the
  // program was partitioned for (an XRT manifest's, which knows its
  // kernels), else this build's of that name; null when there is none.
  const kernels::external::ExternalCodegen* Codegen(std::string_view name) const {
    for (const auto& codegen : codegens_) {
      if (codegen->name() == name) return codegen.get();
    }
    return kernels::external::FindCodegen(name);
  }

  vm::Executable Run() {
    // Constructors: the prelude's types, then the program's.
    for (const Module* scope : Scopes()) {
      for (const TypeDefinition& definition : scope->type_definitions()) {
        for (const Constructor& constructor : definition.constructors) {
          tags_[constructor.get()] = static_cast<int32_t>(executable_.constructors.size());
          executable_.constructors.push_back(
              {constructor->name, static_cast<uint32_t>(constructor->inputs.size())});
        }
      }
    }
    // Globals: the program's first (so @main is easy to find), then the
    // prelude's. Each scope resolves its own names first.
    for (const Module* scope : {&module_, prelude_}) {
      if (scope == nullptr) continue;
      for (const GlobalFunction& global : scope->functions()) {
        const int captured = passes::CapturedCount(*global.function);
        const size_t captured_count = captured < 0 ? 0 : size_t(captured);
        int32_t index =
            AddFunction("@" + global.name->name, global.function->params.size() - captured_count,
                        captured_count, scope->source_name());
        if (captured < 0) {  // an entry point; closure bodies are not called by name
          for (const Var& param : global.function->params)
            executable_.functions[index].params.push_back(ParamInfoOf(*param));
          executable_.functions[index].results = ResultInfoOf(*global.function);
        }
        globals_[scope][global.name->name] = index;
        pending_.push_back({index, global.function.get(), scope, captured});
      }
    }
    for (const PendingFunction& next : pending_) {
      FunctionCompiler(*this, next, executable_.functions[next.index]).Compile();
    }
    vm::Verify(executable_);
    return std::move(executable_);
  }

  int32_t AddFunction(std::string name, size_t params, size_t captured, std::string source) {
    vm::Function function;
    function.name = std::move(name);
    function.source = std::move(source);
    function.param_count = static_cast<uint32_t>(params + captured);
    function.captured_count = static_cast<uint32_t>(captured);
    executable_.functions.push_back(std::move(function));
    return static_cast<int32_t>(executable_.functions.size() - 1);
  }

  const PendingFunction& Global(int32_t index) const { return pending_[size_t(index)]; }

  const Module& program() const { return module_; }
  const Module* prelude() const { return prelude_; }

  int32_t GlobalIndex(const Module* scope, const std::string& name) const {
    for (const Module* candidate : {scope, &module_, prelude_}) {
      if (candidate == nullptr) continue;
      auto found = globals_.find(candidate);
      if (found == globals_.end()) continue;
      auto index = found->second.find(name);
      if (index != found->second.end()) return index->second;
    }
    throw Error(ErrorKind::kCompile, "no definition of @" + name);
  }

  int32_t Tag(const ConstructorNode& constructor) const {
    auto found = tags_.find(&constructor);
    if (found == tags_.end()) {
      throw Error(ErrorKind::kCompile, "constructor " + constructor.name + " of an unknown type");
    }
    return found->second;
  }

  int32_t Constant(const Ref<Tensor>& value) {
    auto [position, inserted] = constants_.emplace(value.get(), executable_.constants.size());
    if (inserted) {
      // A program's constants are never written: kernels may keep what they
      // derive from them (a weight's packed copy).
      value->MarkImmutable();
      executable_.constants.push_back(value);
    }
    return static_cast<int32_t>(position->second);
  }

  // A small constant (a literal, a layout, a size), shared with any equal
  // one already in the table.
  int32_t MetadataConstant(const Ref<Tensor>& value) {
    std::string key(DTypeName(value->dtype()));
    for (int64_t dim : value->shape()) key += "," + std::to_string(dim);
    key += ":";
    key.append(static_cast<const char*>(value->host_data()), value->byte_size());
    auto [position, inserted] = metadata_constants_.emplace(std::move(key), 0);
    if (inserted) position->second = Constant(value);
    return position->second;
  }

  const Tensor& ConstantAt(int32_t index) const {
    return static_cast<const Tensor&>(*executable_.constants[size_t(index)]);
  }

  int32_t Kernel(vm::KernelCall call) {
    executable_.kernels.push_back(std::move(call));
    return static_cast<int32_t>(executable_.kernels.size() - 1);
  }

  int32_t String(std::string text) {
    executable_.strings.push_back(std::move(text));
    return static_cast<int32_t>(executable_.strings.size() - 1);
  }

 private:
  std::vector<const Module*> Scopes() const {
    std::vector<const Module*> scopes;
    if (prelude_ != nullptr) scopes.push_back(prelude_);
    scopes.push_back(&module_);
    return scopes;
  }

  const Module& module_;
  const Module* prelude_;
  passes::ExternalCodegens codegens_;
  vm::Executable executable_;
  std::vector<PendingFunction> pending_;  // by function index
  std::unordered_map<const Module*, std::unordered_map<std::string, int32_t>> globals_;
  std::unordered_map<const ConstructorNode*, int32_t> tags_;
  std::unordered_map<const Tensor*, size_t> constants_;
  std::unordered_map<std::string, int32_t> metadata_constants_;
};

void FunctionCompiler::Compile() {
  const FunctionNode& function = *pending_.function;
  out_.register_count = out_.param_count;
  // Parameters in order: a closure body's captured values come first.
  int32_t next = 0;
  const size_t scope = OpenScope();
  for (const Var& param : function.params) {
    MarkWorthKilling(next, param->checked_type());
    Bind(*param, next++);
  }
  if (!passes::ExternalCompiler(function).empty()) {
    CompileExternalFunction(function);
  } else {
    tail_calls_ = passes::MarkTailCalls(function);
    loop_head_ = out_.code.size();
    Tail(function.body);
  }
  CloseScope(scope);
  if (!prologue_.empty()) {
    // The constants go first; everything else moves down.
    std::vector<int32_t> new_position(out_.code.size() + 1);
    for (size_t pc = 0; pc < new_position.size(); ++pc)
      new_position[pc] = int32_t(pc + prologue_.size());
    out_.code.insert(out_.code.begin(), prologue_.begin(), prologue_.end());
    vm::RemapJumpTargets(out_.code, new_position);
    vm::RemapVariableRanges(out_.variables, new_position, out_.code.size());
  }
  ThreadJumps(out_);
  if (block_ >= 0) {
    PlanMemory(out_, block_,
               {[this](int32_t index) -> const Tensor& { return module_.ConstantAt(index); },
                [this](Ref<Tensor> value) { return module_.MetadataConstant(value); }});
  }
  KillDeadRegisters(out_, worth_killing_);
}

// An external function (Compiler="dnnl", global_symbol="dnnl_0") is one
// call of what its codegen compiled from its body.
void FunctionCompiler::CompileExternalFunction(const FunctionNode& function) {
  auto reject = [&](const std::string& problem) {
    throw Error(ErrorKind::kCompile, out_.name + ": " + problem, function.span().In(out_.source));
  };
  vm::KernelCall::External external;
  external.compiler = passes::ExternalCompiler(function);
  const kernels::external::ExternalCodegen* codegen = module_.Codegen(external.compiler);
  if (codegen == nullptr) {
    std::string names;
    for (const std::string& name : kernels::external::CodegenNames())
      names += (names.empty() ? "\"" : ", \"") + name + "\"";
    reject("Compiler=\"" + external.compiler +
           "\" names no external codegen this build has (it has " + names + ")");
  }
  for (const auto& [attribute, value] : function.attrs) {
    if (attribute == passes::kGlobalSymbolAttr && value.kind() == kernels::AttrValue::Kind::kString)
      external.symbol = value.as_string();
  }
  if (external.symbol.empty())
    reject("an external function names its kernel with global_symbol=\"NAME\"");
  if (pending_.captured >= 0 || !function.type_params.empty())
    reject("an external function is a global function of concrete types");
  external.graph = BuildExternalGraph(function, out_.name, out_.source);
  kernels::external::ValidateGraph(external.graph, ErrorKind::kCompile, out_.name);
  external.state = codegen->Compile(external.graph, external.symbol);
  external.function = codegen->Load(external.graph, external.state, external.symbol);
  vm::KernelCall kernel;
  kernel.op = external.compiler + ":" + external.symbol;
  kernel.external = std::move(external);
  std::vector<int32_t> params;
  for (int32_t index = 0; index < int32_t(function.params.size()); ++index) params.push_back(index);
  const int32_t value = NewRegister();
  Emit(vm::Opcode::kInvokeKernel, {value, module_.Kernel(std::move(kernel))}, params, function);
  Emit(vm::Opcode::kRet, {value}, function);
}

// Whether `call` makes the closure this function is the body of, from its
// own captured parameters: a recursive literal naming itself.
bool FunctionCompiler::IsSelfClosure(const Expr& expr) const {
  if (pending_.captured < 0) return false;
  if (const auto* var = As<VarNode>(expr)) return self_vars_.count(var) != 0;
  const auto* call = As<CallNode>(expr);
  const auto* global = call ? As<GlobalVarNode>(call->callee) : nullptr;
  if (global == nullptr || module_.GlobalIndex(pending_.scope, global->name) != pending_.index ||
      call->args.size() != size_t(pending_.captured)) {
    return false;
  }
  for (size_t index = 0; index < call->args.size(); ++index) {
    if (call->args[index].get() != pending_.function->params[index].get()) return false;
  }
  return true;
}

int32_t FunctionCompiler::SelfRegister(const Node& origin) {
  if (self_register_ < 0) {
    self_register_ = NewRegister();
    vm::Instruction load;
    load.opcode = vm::Opcode::kLoadSelf;
    load.operands = {self_register_, 0, 0};
    load.location = LocationOf(origin);
    prologue_.push_back(load);
  }
  return self_register_;
}

// A call of a lifted function with its captured values makes a closure.
int32_t FunctionCompiler::MakeClosure(const CallNode& call, const PendingFunction& body) {
  if (IsSelfClosure(Expr(&call))) return SelfRegister(call);
  std::vector<int32_t> captured = Values(call.args);
  int32_t result = NewRegister();
  Emit(vm::Opcode::kAllocClosure, {result, body.index}, captured, call);
  return result;
}

int32_t FunctionCompiler::CompileScoped(const Expr& root, bool tail) {
  Expr expr = root;
  // Let chains in a loop: they may be very long.
  while (const auto* let = As<LetNode>(expr)) {
    if (IsSelfClosure(let->value)) self_vars_.insert(let->var.get());
    Bind(*let->var, Value(let->value), let->value.get());
    expr = let->body;
  }
  // Globals, constructors and variables carry the span of their
  // definition; an instruction that uses one is located at the enclosing
  // expression instead.
  const bool defined_elsewhere = expr->kind() == NodeKind::kGlobalVar ||
                                 expr->kind() == NodeKind::kConstructor ||
                                 expr->kind() == NodeKind::kVar;
  if (!defined_elsewhere && expr->span().known()) site_ = expr.get();
  const Node& origin = defined_elsewhere && site_ != nullptr ? *site_ : *expr;
  switch (expr->kind()) {
    case NodeKind::kVar: {
      auto found = variables_.find(As<VarNode>(expr));
      RELAY_CHECK(found != variables_.end(),
                  "variable %" + As<VarNode>(expr)->name_hint + " not in scope");
      return found->second;
    }
    case NodeKind::kGlobalVar: {
      int32_t result = NewRegister();
      Emit(vm::Opcode::kAllocClosure,
           {result, module_.GlobalIndex(pending_.scope, As<GlobalVarNode>(expr)->name)}, origin);
      return result;
    }
    case NodeKind::kConstant:
      return ConstantRegister(As<ConstantNode>(expr)->value, origin);
    case NodeKind::kTuple: {
      std::vector<int32_t> fields = Values(As<TupleNode>(expr)->fields);
      int32_t result = NewRegister();
      Emit(vm::Opcode::kAllocTuple, {result}, fields, origin);
      return result;
    }
    case NodeKind::kTupleGetItem: {
      const auto* item = As<TupleGetItemNode>(expr);
      int32_t tuple = Value(item->tuple);
      int32_t result = NewRegister();
      Emit(vm::Opcode::kGetField, {result, tuple, item->index}, origin);
      return result;
    }
    case NodeKind::kCall:
      return CompileCall(*As<CallNode>(expr));
    case NodeKind::kFunction:
      RELAY_UNREACHABLE("a function literal after lambda lifting");
    case NodeKind::kIf:
      return CompileIf(*As<IfNode>(expr), tail);
    case NodeKind::kMatch:
      return CompileMatch(*As<MatchNode>(expr), tail);
    case NodeKind::kConstructor:
      RELAY_UNREACHABLE("a constructor used as a value after eta-expansion");
    case NodeKind::kRefCreate: {
      int32_t value = Value(As<RefCreateNode>(expr)->value);
      int32_t result = NewRegister();
      Emit(vm::Opcode::kAllocRef, {result, value}, origin);
      return result;
    }
    case NodeKind::kRefRead: {
      int32_t reference = Value(As<RefReadNode>(expr)->ref);
      int32_t result = NewRegister();
      Emit(vm::Opcode::kRefRead, {result, reference}, origin);
      return result;
    }
    case NodeKind::kRefWrite: {
      const auto* write = As<RefWriteNode>(expr);
      int32_t reference = Value(write->ref);
      int32_t value = Value(write->value);
      Emit(vm::Opcode::kRefWrite, {reference, value}, origin);
      int32_t unit = NewRegister();  // r := v is ()
      Emit(vm::Opcode::kAllocTuple, {unit}, origin);
      return unit;
    }
    case NodeKind::kOp:
      throw Error(ErrorKind::kCompile,
                  "operator " + As<OpNode>(expr)->name() + " used as a value: call it instead");
    default:
      RELAY_UNREACHABLE("an expression kind the bytecode compiler does not know");
  }
}

int32_t FunctionCompiler::CompileCall(const CallNode& call) {
  const bool tail = tail_calls_.count(&call) != 0;
  const Expr& callee = call.callee;
  if (const auto* op = As<OpNode>(callee)) return CompileOperatorCall(call, *op);
  if (const auto* function = As<FunctionNode>(callee); function && passes::IsPrimitive(*function))
    return CompilePrimitiveCall(call, *function);
  if (const auto* constructor = As<ConstructorNode>(callee)) {
    std::vector<int32_t> args = Values(call.args);
    int32_t result = NewRegister();
    Emit(vm::Opcode::kAllocAdt, {result, module_.Tag(*constructor)}, args, call);
    return result;
  }
  if (const auto* global = As<GlobalVarNode>(callee)) {
    const int32_t index = module_.GlobalIndex(pending_.scope, global->name);
    const PendingFunction& target = module_.Global(index);
    if (target.captured >= 0) return MakeClosure(call, target);
    std::vector<int32_t> args = Values(call.args);
    if (tail && index == pending_.index) {
      EmitLoopBack(std::move(args), 0, call);
      return -1;
    }
    if (tail) {
      Emit(vm::Opcode::kTailInvoke, {index}, args, call);
      return -1;
    }
    int32_t result = NewRegister();
    Emit(vm::Opcode::kInvoke, {result, index}, args, call);
    return result;
  }
  if (tail && IsSelfClosure(callee)) {
    // A let-bound function calling itself: its captured values stay.
    EmitLoopBack(Values(call.args), pending_.captured, call);
    return -1;
  }
  int32_t closure = Value(callee);
  std::vector<int32_t> args = Values(call.args);
  if (tail) {
    Emit(vm::Opcode::kTailInvokeClosure, {closure}, args, call);
    return -1;
  }
  int32_t result = NewRegister();
  Emit(vm::Opcode::kInvokeClosure, {result, closure}, args, call);
  return result;
}

int32_t FunctionCompiler::ConstantRegister(const Ref<Tensor>& value, const Node& origin) {
  // Small constants are shared by content: two literals `1` are one.
  const int32_t index =
      value->byte_size() <= 64 ? module_.MetadataConstant(value) : module_.Constant(value);
  auto [position, inserted] = constant_registers_.try_emplace(index, 0);
  if (inserted) {
    position->second = NewRegister();
    vm::Instruction load;
    load.opcode = vm::Opcode::kLoadConst;
    load.operands = {position->second, index, 0};
    load.location = LocationOf(origin);
    prologue_.push_back(load);
  }
  return position->second;
}

void FunctionCompiler::EmitLoopBack(std::vector<int32_t> args, int32_t first_param,
                                    const Node& origin) {
  // A parallel move: an argument that is another parameter's register is
  // copied aside first (`@f(%b, %a)`).
  const int32_t count = int32_t(args.size());
  bool crossing = false;
  for (int32_t index = 0; index < count; ++index) {
    const int32_t arg = args[size_t(index)];
    crossing =
        crossing || (arg >= first_param && arg < first_param + count && arg != first_param + index);
  }
  if (crossing) {
    for (int32_t& arg : args) {
      const int32_t copy = NewRegister();
      MarkWorthKilling(copy, nullptr);
      Emit(vm::Opcode::kMove, {copy, arg}, origin);
      arg = copy;
    }
  }
  for (int32_t index = 0; index < count; ++index) {
    if (args[size_t(index)] != first_param + index)
      Emit(vm::Opcode::kMove, {first_param + index, args[size_t(index)]}, origin);
  }
  Emit(vm::Opcode::kGoto, {int32_t(loop_head_)}, origin);
}

int32_t FunctionCompiler::CompileOperatorCall(const CallNode& call, const OpNode& op,
                                              std::optional<DeviceId> device) {
  // on_device around a kernel call (as device planning leaves them): that
  // call, placed on the device.
  if (op.name() == kernels::kOnDevice && call.args.size() == 1) {
    if (const auto* inner = As<CallNode>(call.args[0])) {
      const auto* inner_op = As<OpNode>(inner->callee);
      const auto* primitive = As<FunctionNode>(inner->callee);
      if (inner_op != nullptr || (primitive != nullptr && passes::IsPrimitive(*primitive))) {
        const std::optional<DeviceId> device =
            kernels::DeviceFromAttrs(call.attrs, "device_type", "device_id").device;
        RELAY_CHECK(device.has_value(), "on_device without a device passed type checking");
        return inner_op != nullptr ? CompileOperatorCall(*inner, *inner_op, device)
                                   : CompilePrimitiveCall(*inner, *primitive, device);
      }
    }
  }
  vm::KernelCall kernel;
  kernel.op = op.name();
  kernel.attrs = call.attrs;
  kernel.device = device;
  kernel.tuple_input = call.args.size() == 1 && IsTupleType(call.args[0]->checked_type());
  kernel.tuple_result = IsTupleType(call.checked_type());
  const bool shaped_by_values =
      op.definition->shape_dependence != kernels::ShapeDependence::kInputShapes;
  return EmitKernelCall(std::move(kernel), Values(call.args), call, shaped_by_values);
}

int32_t FunctionCompiler::EmitKernelCall(vm::KernelCall kernel, const std::vector<int32_t>& args,
                                         const CallNode& call, bool shaped_by_values) {
  const auto* type = As<TensorTypeNode>(call.checked_type());
  // A call placed on a device, and a copy between devices, allocate their
  // results where they run: the function's planned block is on the VM's
  // device.
  const bool moves = kernel.op == kernels::kDeviceCopy || kernel.op == kernels::kOnDevice;
  // A shape (shape_of) is the VM's to give: on the host, where it is read,
  // kept from the last call with an input of the same shape.
  const bool shape = kernel.op == "shape_of" || kernel.op == "ndarray_size";
  const bool explicit_memory = type != nullptr && !type->shape.empty() && !kernel.tuple_result &&
                               !shaped_by_values && !kernel.device && !moves && !shape;
  const int32_t index = module_.Kernel(std::move(kernel));
  int32_t result = NewRegister();
  if (!explicit_memory) {
    // The kernel allocates: 0-d results (the VM's recycled scalars), tuple
    // results, results shaped by input values.
    Emit(vm::Opcode::kInvokeKernel, {result, index}, args, call);
    return result;
  }
  const bool static_shape =
      std::all_of(type->shape.begin(), type->shape.end(), [](int64_t dim) { return dim >= 0; });
  if (static_shape) {
    vm::TensorLayout layout{0, type->dtype, type->shape};  // memory_plan places it
    Emit(vm::Opcode::kAllocTensor,
         {result, BlockRegister(), module_.MetadataConstant(vm::EncodeTensorLayout(layout))}, call);
  } else {
    // `?` dimensions: the operator's shape function runs on the inputs.
    int32_t shape = NewRegister();
    Emit(vm::Opcode::kInvokeShapeFunc, {shape, index}, args, call);
    Emit(vm::Opcode::kAllocTensorReg, {result, shape, int32_t(type->dtype)}, call);
  }
  std::vector<int32_t> operands = args;
  operands.push_back(result);
  Emit(vm::Opcode::kInvokeKernelOut, {index}, operands, call);
  return result;
}

// A primitive function (operator fusion's group) is one kernel: its body's
// operator calls in evaluation order, each reading the group's inputs (the
// function's parameters) or earlier operators' results.
int32_t FunctionCompiler::CompilePrimitiveCall(const CallNode& call, const FunctionNode& primitive,
                                               std::optional<DeviceId> device) {
  std::unordered_map<const ExprNode*, int32_t> operand_of;  // parameter -> input index
  for (size_t index = 0; index < primitive.params.size(); ++index)
    operand_of[primitive.params[index].get()] = static_cast<int32_t>(index);
  vm::KernelCall kernel;
  PostOrderVisit(primitive.body, [&](const Expr& expr) {
    const auto* inner = As<CallNode>(expr);
    if (inner == nullptr) return;
    const auto* op = As<OpNode>(inner->callee);
    RELAY_CHECK(op != nullptr, "a primitive function calls something other than an operator");
    kernels::FusedOperator fused;
    fused.op = op->name();
    fused.attrs = inner->attrs;
    for (const Expr& arg : inner->args) fused.inputs.push_back(operand_of.at(arg.get()));
    operand_of[expr.get()] = -1 - static_cast<int32_t>(kernel.fused.size());
    kernel.fused.push_back(std::move(fused));
  });
  kernel.op = "fused(";
  for (size_t index = 0; index < kernel.fused.size(); ++index)
    kernel.op += (index ? "+" : "") + kernel.fused[index].op;
  kernel.op += ")";
  kernel.device = device;
  return EmitKernelCall(std::move(kernel), Values(call.args), call, false);
}

int32_t FunctionCompiler::CompileIf(const IfNode& branch, bool tail) {
  int32_t condition = Value(branch.condition);
  size_t test = Emit(vm::Opcode::kIfFalse, {condition, 0}, branch);
  if (tail) {
    Tail(branch.then_branch);
    PatchHere(test, 1);
    Tail(branch.else_branch);
    return -1;
  }
  int32_t result = NewRegister();
  Emit(vm::Opcode::kMove, {result, Value(branch.then_branch)}, *branch.then_branch);
  size_t skip = Emit(vm::Opcode::kGoto, {0}, branch);
  PatchHere(test, 1);
  Emit(vm::Opcode::kMove, {result, Value(branch.else_branch)}, *branch.else_branch);
  PatchHere(skip, 0);
  return result;
}

void FunctionCompiler::CompilePattern(const Pattern& pattern, int32_t value,
                                      std::vector<size_t>& failures) {
  if (const auto* var = As<PatternVarNode>(pattern)) {
    Bind(*var->var, value);  // registers are written once: an alias will do
    return;
  }
  const std::vector<Pattern>* fields = nullptr;
  if (const auto* constructor = As<PatternConstructorNode>(pattern)) {
    failures.push_back(
        Emit(vm::Opcode::kIfTagNot, {value, module_.Tag(*constructor->constructor), 0}, *pattern));
    fields = &constructor->patterns;
  } else if (const auto* tuple = As<PatternTupleNode>(pattern)) {
    fields = &tuple->patterns;
  }
  if (fields == nullptr) return;  // a wildcard
  for (size_t index = 0; index < fields->size(); ++index) {
    const Pattern& field = (*fields)[index];
    if (As<PatternWildcardNode>(field) != nullptr) continue;
    int32_t loaded = NewRegister();
    MarkWorthKilling(loaded, nullptr);
    Emit(vm::Opcode::kGetField, {loaded, value, static_cast<int32_t>(index)}, *field);
    CompilePattern(field, loaded, failures);
  }
}

// What emitting one match's decision tree keeps track of.
struct FunctionCompiler::MatchEmission {
  const MatchNode& match;
  bool tail;
  int32_t result;  // -1 in tail position
  // Fields loaded on the path being emitted (a sibling branch cannot use
  // them): occurrence -> register, the root first.
  std::vector<std::pair<passes::Occurrence, int32_t>> loaded;
  // Per clause: how many leaves reach it; where a shared body starts (its
  // entry jumps, patched when it is emitted) and its variables' registers.
  std::vector<int> leaves;
  std::vector<std::vector<size_t>> entries;
  std::vector<std::unordered_map<const VarNode*, int32_t>> shared_registers;
  std::vector<size_t> exits;  // gotos to after the match
};

int32_t FunctionCompiler::CompileMatch(const MatchNode& match, bool tail) {
  int32_t data = Value(match.data);
  std::unique_ptr<passes::DecisionTree> tree =
      passes::CompileDecisionTree(match, module_.program(), module_.prelude());
  if (!tree) return CompileMatchByClauses(match, data, tail);
  MatchEmission emission{match, tail, tail ? -1 : NewRegister(), {{{}, data}}, {}, {}, {}, {}};
  emission.leaves.assign(match.clauses.size(), 0);
  emission.entries.resize(match.clauses.size());
  emission.shared_registers.resize(match.clauses.size());
  std::vector<const passes::DecisionTree*> pending{tree.get()};
  while (!pending.empty()) {
    const passes::DecisionTree* node = pending.back();
    pending.pop_back();
    if (node->kind == passes::DecisionTree::Kind::kLeaf) ++emission.leaves[node->clause];
    for (const auto& branch : node->cases) pending.push_back(branch.subtree.get());
    if (node->default_case) pending.push_back(node->default_case.get());
  }
  EmitDecision(*tree, emission);
  // Bodies reached by several leaves, once each.
  for (size_t clause = 0; clause < match.clauses.size(); ++clause) {
    if (emission.entries[clause].empty()) continue;
    for (size_t entry : emission.entries[clause]) PatchHere(entry, 0);
    const size_t scope = OpenScope();
    for (const auto& [var, reg] : emission.shared_registers[clause]) Bind(*var, reg);
    const Expr& body = match.clauses[clause].body;
    if (tail) {
      Tail(body);
    } else {
      Emit(vm::Opcode::kMove, {emission.result, Value(body)}, *body);
      emission.exits.push_back(Emit(vm::Opcode::kGoto, {0}, match));
    }
    CloseScope(scope);
  }
  for (size_t exit : emission.exits) PatchHere(exit, 0);
  return emission.result;
}

int32_t FunctionCompiler::LoadOccurrence(const passes::Occurrence& occurrence,
                                         MatchEmission& emission, const Node& origin) {
  for (const auto& [known, reg] : emission.loaded) {
    if (known == occurrence) return reg;
  }
  passes::Occurrence parent(occurrence.begin(), occurrence.end() - 1);
  const int32_t from = LoadOccurrence(parent, emission, origin);
  const int32_t loaded = NewRegister();
  MarkWorthKilling(loaded, nullptr);
  Emit(vm::Opcode::kGetField, {loaded, from, occurrence.back()}, origin);
  emission.loaded.emplace_back(occurrence, loaded);
  return loaded;
}

// Recursion is bounded by the tree's depth (DecisionTreeLimits::max_depth).
void FunctionCompiler::EmitDecision(const passes::DecisionTree& tree, MatchEmission& emission) {
  const MatchNode& match = emission.match;
  switch (tree.kind) {
    case passes::DecisionTree::Kind::kFail:
      // The instruction carries the match's location; the VM reports it.
      Emit(vm::Opcode::kFatal, {module_.String("no clause of the match matches the value")}, match);
      return;
    case passes::DecisionTree::Kind::kLeaf: {
      const Clause& clause = match.clauses[tree.clause];
      if (emission.leaves[tree.clause] == 1) {
        // The only way in: the body goes here, its variables aliasing the
        // loaded fields.
        const size_t scope = OpenScope();
        for (const passes::PatternBinding& binding : tree.bindings)
          Bind(*binding.var, LoadOccurrence(binding.occurrence, emission, *clause.pattern));
        if (emission.tail) {
          Tail(clause.body);
        } else {
          Emit(vm::Opcode::kMove, {emission.result, Value(clause.body)}, *clause.body);
          emission.exits.push_back(Emit(vm::Opcode::kGoto, {0}, match));
        }
        CloseScope(scope);
        return;
      }
      // One of several ways in: the variables move to the body's registers.
      auto& registers = emission.shared_registers[tree.clause];
      for (const passes::PatternBinding& binding : tree.bindings) {
        auto [reg, inserted] = registers.try_emplace(binding.var, 0);
        if (inserted) {
          reg->second = NewRegister();
          MarkWorthKilling(reg->second, binding.var->checked_type());
        }
        Emit(vm::Opcode::kMove,
             {reg->second, LoadOccurrence(binding.occurrence, emission, *clause.pattern)},
             *clause.pattern);
      }
      emission.entries[tree.clause].push_back(Emit(vm::Opcode::kGoto, {0}, match));
      return;
    }
    case passes::DecisionTree::Kind::kSwitch: {
      const int32_t value = LoadOccurrence(tree.occurrence, emission, match);
      const size_t loaded = emission.loaded.size();
      for (size_t index = 0; index < tree.cases.size(); ++index) {
        const auto& branch = tree.cases[index];
        // With no default the last case needs no test: nothing else is left.
        const bool test = tree.default_case != nullptr || index + 1 < tree.cases.size();
        size_t skip = 0;
        if (test) {
          skip = Emit(vm::Opcode::kIfTagNot, {value, module_.Tag(*branch.constructor), 0}, match);
        }
        EmitDecision(*branch.subtree, emission);
        emission.loaded.resize(loaded);  // what the branch loaded is not loaded here
        if (test) PatchHere(skip, 2);
      }
      if (tree.default_case) EmitDecision(*tree.default_case, emission);
      emission.loaded.resize(loaded);
      return;
    }
  }
}

int32_t FunctionCompiler::CompileMatchByClauses(const MatchNode& match, int32_t data, bool tail) {
  int32_t result = tail ? -1 : NewRegister();
  std::vector<size_t> exits;
  for (const Clause& clause : match.clauses) {
    std::vector<size_t> failures;
    const size_t scope = OpenScope();
    CompilePattern(clause.pattern, data, failures);
    if (tail) {
      Tail(clause.body);
    } else {
      Emit(vm::Opcode::kMove, {result, Value(clause.body)}, *clause.body);
      exits.push_back(Emit(vm::Opcode::kGoto, {0}, match));
    }
    CloseScope(scope);
    for (size_t failure : failures) PatchHere(failure, 2);
  }
  // After a clause that matches everything, nothing can reach the end.
  const Pattern& last = match.clauses.back().pattern;
  const bool irrefutable =
      As<PatternWildcardNode>(last) != nullptr || As<PatternVarNode>(last) != nullptr;
  if (!irrefutable) {
    Emit(vm::Opcode::kFatal, {module_.String("no clause of the match matches the value")}, match);
  }
  for (size_t exit : exits) PatchHere(exit, 0);
  return result;
}

}  // namespace

vm::Executable CompileToBytecode(const ir::Module& module, const ir::Module* prelude,
                                 passes::ExternalCodegens codegens) {
  passes::OptimizedProgram optimized = passes::OptimizeForVm(module, prelude, codegens);
  return ModuleCompiler(optimized.program, optimized.prelude ? &*optimized.prelude : nullptr,
                        codegens)
      .Run();
}

}  // namespace relay::codegen
