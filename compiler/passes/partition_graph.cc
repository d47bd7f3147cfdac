#include "compiler/passes/partition_graph.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "compiler/typing/type_inference.h"
#include "kernels/operator.h"

namespace relay::passes {

namespace {

using namespace relay::ir;
using kernels::ValueType;
using kernels::external::CallView;
using kernels::external::CompositeRule;
using kernels::external::ExternalCodegen;
using kernels::external::PatternStep;
using Codegens = std::span<const std::shared_ptr<const ExternalCodegen>>;

// `type` as the codegens' rules see it, when it is a tensor's.
std::optional<ValueType> TensorValueType(const Type& type) {
  std::optional<ValueType> value = typing::ToValueType(type);
  if (!value || value->is_tuple) return std::nullopt;
  return value;
}

// A variable for `value` inside a built function: typed, without an
// annotation (the printer would spell out each binding's type).
Var LocalVar(const std::string& name_hint, const Expr& value) {
  Var var = Make<VarNode>(name_hint, Type(), value->span());
  var->set_checked_type(value->checked_type());
  return var;
}

// A function's parameter for an operand: annotated, as parameters are.
Var Parameter(const std::string& name_hint, const Expr& operand) {
  Var var = Make<VarNode>(name_hint, operand->checked_type(), operand->span());
  var->set_checked_type(operand->checked_type());
  return var;
}

Type FunctionType(const std::vector<Var>& params, const Type& result) {
  std::vector<Type> param_types;
  for (const Var& param : params) param_types.push_back(param->checked_type());
  return FuncType(std::move(param_types), result);
}

Expr TypedCall(const Expr& callee, std::vector<Expr> args, const Type& type, const Span& span) {
  Expr call = Make<CallNode>(callee, std::move(args), kernels::Attrs{}, std::vector<Type>{}, span);
  call->set_checked_type(type);
  return call;
}

// One binding of a let chain; the chain's result is the last, without a
// variable.
struct Binding {
  Var var;
  Expr value;
  // For an operator call with tensors in and out (what rules may see): the
  // call, its operator's name and its types.
  const CallNode* call = nullptr;
  std::string_view op;
  std::vector<ValueType> inputs;
  ValueType result;
  // Operator calls only: the positions of the bindings of this chain the
  // call takes as operands, once per operand.
  std::vector<size_t> producers;
  // The operator calls of this chain taking this value, once per operand.
  std::vector<size_t> users;
  int unit = -1;  // the match this call belongs to; -1 for none
  bool pure = true;

  CallView View() const { return CallView{op, call->attrs, inputs, result}; }
};

// Calls a codegen takes as a whole: one call of an operator rule, or the
// calls of a composite pattern (positions ascending; the last is the
// pattern's result).
struct Unit {
  size_t codegen = 0;
  const CompositeRule* composite = nullptr;
  std::vector<size_t> members;
};

// Units outlined together, as a union-find tree over units: a region is
// named by its root unit.
struct Region {
  size_t parent = 0;
  std::vector<size_t> members;  // positions, in no particular order
  size_t first = 0, last = 0;   // the least and greatest positions
  // Members whose value is used outside the region: at most the last.
  int escaping = 0;
};

class Partitioner;

// Partitions one let chain; nested scopes go back to the Partitioner.
class ChainPartitioner {
 public:
  ChainPartitioner(Partitioner& partitioner, Codegens codegens,
                   const std::unordered_map<const VarNode*, int>& uses)
      : partitioner_(partitioner), codegens_(codegens), uses_(uses) {}

  Expr Rewrite(const Expr& root);

 private:
  void Collect(const Expr& root);
  void Annotate();
  std::optional<std::vector<size_t>> MatchComposite(size_t anchor, const CompositeRule& rule) const;
  static bool StepAccepts(const PatternStep& step, const Binding& binding);
  std::optional<size_t> SoleUser(size_t position) const;
  bool CrossesImpure(size_t first, size_t last) const {
    return impure_before_[last] - impure_before_[first + 1] > 0;
  }
  void AddUnit(size_t codegen, const CompositeRule* composite, std::vector<size_t> members);

  void MergeRegions();
  size_t Find(size_t unit);
  bool TryMerge(size_t a, size_t b);

  Expr Outline(size_t region);
  Expr Composite(const Unit& unit, const std::function<Var(const Expr&)>& operand,
                 Bindings& bindings);
  Expr Build(const Expr& root);

  Partitioner& partitioner_;
  Codegens codegens_;
  const std::unordered_map<const VarNode*, int>& uses_;

  std::vector<Binding> chain_;
  std::unordered_map<const VarNode*, size_t> position_;  // of each bound variable
  // impure_before_[k]: how many of the first k bindings are not pure.
  std::vector<size_t> impure_before_;
  std::vector<Unit> units_;
  std::vector<Region> regions_;  // one per unit, indexed alike
  // For members of units: uses of their value not by a call of their own
  // region (the chain's result counts as one).
  std::vector<int> outside_;
};

class Partitioner {
 public:
  Partitioner(Codegens codegens, const Module& module) : codegens_(codegens) {
    for (const GlobalFunction& global : module.functions()) taken_.insert(global.name->name);
  }

  // `function` partitioned; the functions made for it are appended to `made`.
  Function Partition(const Function& function, std::vector<GlobalFunction>& made) {
    uses_.clear();
    PostOrderVisit(function, [&](const Expr& expr) {
      for (const Expr& child : ExprChildren(expr)) {
        if (const auto* var = As<VarNode>(child)) ++uses_[var];
      }
    });
    made_ = &made;
    return WithBody(function, RewriteChain(function->body));
  }

  Expr RewriteChain(const Expr& root) {
    return ChainPartitioner(*this, codegens_, uses_).Rewrite(root);
  }

  // `expr` (a binding's value or a chain's result) with the chains nested
  // in it partitioned.
  Expr RewriteNested(const Expr& expr) {
    switch (expr->kind()) {
      case NodeKind::kFunction: {
        Function function(As<FunctionNode>(expr));
        if (IsPrimitive(*function)) return expr;
        return WithBody(function, RewriteChain(function->body));
      }
      case NodeKind::kLet:
        return RewriteChain(expr);
      case NodeKind::kIf:
      case NodeKind::kMatch: {
        // Every child but the first (the condition, the data) is a scope.
        std::vector<Expr> children = ExprChildren(expr);
        for (size_t index = 1; index < children.size(); ++index)
          children[index] = RewriteChain(children[index]);
        return WithTypedChildren(expr, children);
      }
      default: {
        // Operands are atomic in A-normal form; a literal among them (if
        // any) still has chains of its own.
        std::vector<Expr> children = ExprChildren(expr);
        for (Expr& child : children) {
          if (!IsAtomic(*child)) child = RewriteNested(child);
        }
        return WithTypedChildren(expr, children);
      }
    }
  }

  // A fresh global name for codegen `name`: NAME_K for the least K not
  // taken.
  GlobalVar NextGlobal(std::string_view codegen, const Span& span) {
    int& next = next_index_[std::string(codegen)];
    std::string name;
    do {
      name = std::string(codegen) + "_" + std::to_string(next++);
    } while (!taken_.insert(name).second);
    return Make<GlobalVarNode>(name, span);
  }

  void AddFunction(GlobalVar name, Function function) {
    made_->push_back({std::move(name), std::move(function)});
  }

 private:
  Codegens codegens_;
  std::unordered_map<const VarNode*, int> uses_;  // in the function being partitioned
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, int> next_index_;
  std::vector<GlobalFunction>* made_ = nullptr;
};

Expr ChainPartitioner::Rewrite(const Expr& root) {
  Collect(root);
  Annotate();
  MergeRegions();
  return Build(root);
}

void ChainPartitioner::Collect(const Expr& root) {
  Expr expr = root;
  auto add = [&](const Var& var, const Expr& value) {
    Binding binding;
    binding.var = var;
    binding.value = value;
    binding.pure = IsPure(value);
    const auto* call = As<CallNode>(value);
    const auto* op = call ? As<OpNode>(call->callee) : nullptr;
    std::optional<ValueType> result = op ? TensorValueType(call->checked_type()) : std::nullopt;
    if (result) {
      bool tensors = true;
      for (const Expr& arg : call->args) {
        std::optional<ValueType> input = TensorValueType(arg->checked_type());
        if (!input) {
          tensors = false;
          break;
        }
        binding.inputs.push_back(std::move(*input));
      }
      if (tensors) {
        binding.call = call;
        binding.op = op->name();
        binding.result = std::move(*result);
      } else {
        binding.inputs.clear();
      }
    }
    chain_.push_back(std::move(binding));
  };
  while (const auto* let = As<LetNode>(expr)) {
    add(let->var, let->value);
    expr = let->body;
  }
  add(Var(), expr);

  std::unordered_map<const VarNode*, size_t>& position = position_;
  impure_before_.assign(chain_.size() + 1, 0);
  for (size_t index = 0; index < chain_.size(); ++index) {
    Binding& binding = chain_[index];
    impure_before_[index + 1] = impure_before_[index] + (binding.pure ? 0 : 1);
    if (binding.call != nullptr) {
      for (const Expr& arg : binding.call->args) {
        const auto* var = As<VarNode>(arg);
        auto producer = var ? position.find(var) : position.end();
        if (producer == position.end()) continue;
        binding.producers.push_back(producer->second);
        chain_[producer->second].users.push_back(index);
      }
    }
    if (binding.var) position[binding.var.get()] = index;
  }
}

bool ChainPartitioner::StepAccepts(const PatternStep& step, const Binding& binding) {
  if (binding.call == nullptr || binding.unit >= 0) return false;
  if (std::find(step.ops.begin(), step.ops.end(), binding.op) == step.ops.end()) return false;
  return !step.accepts || step.accepts(binding.View());
}

// The one call taking the value bound at `position`, when that is its only
// use in the whole function (a nested scope's use counts).
std::optional<size_t> ChainPartitioner::SoleUser(size_t position) const {
  const Binding& binding = chain_[position];
  if (!binding.var || binding.users.size() != 1) return std::nullopt;
  auto uses = uses_.find(binding.var.get());
  if (uses == uses_.end() || uses->second != 1) return std::nullopt;
  return binding.users.front();
}

// The calls of `rule` starting at `anchor`, or nothing. The first step is
// the anchor itself, even if marked optional.
std::optional<std::vector<size_t>> ChainPartitioner::MatchComposite(
    size_t anchor, const CompositeRule& rule) const {
  if (rule.steps.empty() || !StepAccepts(rule.steps.front(), chain_[anchor])) return std::nullopt;
  std::vector<size_t> members{anchor};
  for (size_t step = 1; step < rule.steps.size(); ++step) {
    std::optional<size_t> next = SoleUser(members.back());
    // The pattern's calls are computed where its last one was: never
    // across a binding with effects.
    if (next && !CrossesImpure(anchor, *next) && StepAccepts(rule.steps[step], chain_[*next])) {
      members.push_back(*next);
    } else if (!rule.steps[step].optional) {
      return std::nullopt;
    }
  }
  return members;
}

void ChainPartitioner::AddUnit(size_t codegen, const CompositeRule* composite,
                               std::vector<size_t> members) {
  const int unit = static_cast<int>(units_.size());
  for (size_t member : members) chain_[member].unit = unit;
  units_.push_back(Unit{codegen, composite, std::move(members)});
}

void ChainPartitioner::Annotate() {
  for (size_t index = 0; index < chain_.size(); ++index) {
    const Binding& binding = chain_[index];
    if (binding.call == nullptr || binding.unit >= 0) continue;
    for (size_t codegen = 0; codegen < codegens_.size(); ++codegen) {
      const kernels::external::RuleTable& rules = codegens_[codegen]->rules();
      bool taken = false;
      for (const CompositeRule& rule : rules.composites) {
        if (std::optional<std::vector<size_t>> members = MatchComposite(index, rule)) {
          AddUnit(codegen, &rule, std::move(*members));
          taken = true;
          break;
        }
      }
      for (size_t rule = 0; !taken && rule < rules.operators.size(); ++rule) {
        const kernels::external::OperatorRule& candidate = rules.operators[rule];
        if (candidate.op == binding.op &&
            (!candidate.accepts || candidate.accepts(binding.View()))) {
          AddUnit(codegen, nullptr, {index});
          taken = true;
        }
      }
      if (taken) break;
    }
  }
}

size_t ChainPartitioner::Find(size_t unit) {
  size_t root = unit;
  while (regions_[root].parent != root) root = regions_[root].parent;
  while (regions_[unit].parent != root) unit = std::exchange(regions_[unit].parent, root);
  return root;
}

void ChainPartitioner::MergeRegions() {
  outside_.assign(chain_.size(), 0);
  regions_.resize(units_.size());
  for (size_t unit = 0; unit < units_.size(); ++unit) {
    const std::vector<size_t>& members = units_[unit].members;
    for (size_t member : members) {
      const Binding& binding = chain_[member];
      auto uses = binding.var ? uses_.find(binding.var.get()) : uses_.end();
      // The chain's result is used by whatever encloses the chain.
      outside_[member] += binding.var ? (uses == uses_.end() ? 0 : uses->second) : 1;
      for (size_t producer : binding.producers) {
        if (chain_[producer].unit == static_cast<int>(unit)) --outside_[producer];
      }
    }
    Region& region = regions_[unit];
    region.parent = unit;
    region.members = members;
    region.first = members.front();
    region.last = members.back();
    for (size_t member : members) region.escaping += outside_[member] > 0 ? 1 : 0;
  }

  // Consumers after their producers: by the position of each unit's result.
  std::vector<size_t> order(units_.size());
  for (size_t unit = 0; unit < units_.size(); ++unit) order[unit] = unit;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return units_[a].members.back() < units_[b].members.back();
  });
  // Until nothing merges: a merge refused because a value would leave the
  // region may be accepted once the value's other users have joined too (a
  // ResNet stage's first block reads its input in two branches, which join
  // each other first, and then the stage before).
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t unit : order) {
      const size_t codegen = units_[unit].codegen;
      if (!codegens_[codegen]->merges_regions()) continue;
      for (size_t member : units_[unit].members) {
        for (size_t producer : chain_[member].producers) {
          const int other = chain_[producer].unit;
          if (other < 0 || units_[other].codegen != codegen) continue;
          const size_t mine = Find(unit), theirs = Find(static_cast<size_t>(other));
          if (mine != theirs && TryMerge(mine, theirs)) merged = true;
        }
      }
    }
  }
}

// Merges regions `a` and `b` (roots) when the result has one output and
// spans no impure binding; says whether it did. Costs the size of the
// smaller region, so that growing one region call by call stays linear.
bool ChainPartitioner::TryMerge(size_t a, size_t b) {
  if (regions_[a].members.size() < regions_[b].members.size()) std::swap(a, b);
  Region& large = regions_[a];
  Region& small = regions_[b];
  const size_t first = std::min(large.first, small.first);
  const size_t last = std::max(large.last, small.last);
  if (CrossesImpure(first, last)) return false;
  // Uses between the two regions, which become uses inside, by the
  // position of the value used.
  std::unordered_map<size_t, int> joined;
  for (size_t member : small.members) {
    for (size_t producer : chain_[member].producers) {
      const int unit = chain_[producer].unit;
      if (unit >= 0 && Find(static_cast<size_t>(unit)) == a) ++joined[producer];
    }
    for (size_t user : chain_[member].users) {
      const int unit = chain_[user].unit;
      if (unit >= 0 && Find(static_cast<size_t>(unit)) == a) ++joined[member];
    }
  }
  int escaping = large.escaping + small.escaping;
  for (const auto& [position, count] : joined) {
    if (outside_[position] > 0 && outside_[position] - count <= 0) --escaping;
  }
  auto last_joined = joined.find(last);
  const int last_outside = outside_[last] - (last_joined == joined.end() ? 0 : last_joined->second);
  // One output, and it is the last call: any other value leaving the
  // region would be needed before the region's call computes it.
  if (escaping > 1 || (escaping == 1 && last_outside <= 0)) return false;

  for (const auto& [position, count] : joined) outside_[position] -= count;
  small.parent = a;
  large.members.insert(large.members.end(), small.members.begin(), small.members.end());
  small.members.clear();
  small.members.shrink_to_fit();
  large.first = first;
  large.last = last;
  large.escaping = escaping;
  return true;
}

// The region's global function, added to the module; returns its call.
Expr ChainPartitioner::Outline(size_t region_index) {
  const Region& region = regions_[region_index];
  std::vector<size_t> members = region.members;
  std::sort(members.begin(), members.end());
  const Binding& output = chain_[region.last];
  const ExternalCodegen& codegen = *codegens_[units_[region_index].codegen];

  std::vector<Var> params;
  std::vector<Expr> args;
  std::unordered_map<const ExprNode*, Var> param_of;  // by operand
  std::unordered_map<size_t, Var> computed;           // by member position
  // What an operand of a member's call is inside the function: a value it
  // computed, or a parameter (one per distinct operand, variables and
  // constants alike: an external graph's operands are of no other kind).
  auto operand = [&](const Expr& arg) -> Var {
    if (const auto* var = As<VarNode>(arg)) {
      auto position = position_.find(var);
      if (position != position_.end()) {
        auto inside = computed.find(position->second);
        if (inside != computed.end()) return inside->second;
      }
    }
    auto [param, inserted] = param_of.try_emplace(arg.get());
    if (inserted) {
      const auto* var = As<VarNode>(arg);
      param->second = Parameter(var ? var->name_hint : "constant", arg);
      params.push_back(param->second);
      args.push_back(arg);
    }
    return param->second;
  };

  Bindings bindings;
  Expr body;
  for (size_t member : members) {
    const Unit& unit = units_[chain_[member].unit];
    // A composite's calls are computed together, where its last one was.
    if (member != unit.members.back()) continue;
    Expr value;
    if (unit.composite == nullptr) {
      const CallNode& call = *chain_[member].call;
      std::vector<Expr> children{call.callee};
      for (const Expr& arg : call.args) children.push_back(operand(arg));
      value = WithTypedChildren(chain_[member].value, children);
    } else {
      value = Composite(unit, operand, bindings);
    }
    if (member == region.last) {
      body = value;
    } else {
      Var var = LocalVar(chain_[member].var->name_hint, value);
      computed[member] = var;
      bindings.emplace_back(var, value);
    }
  }

  const Type& result_type = output.value->checked_type();
  const Type type = FunctionType(params, result_type);
  GlobalVar global = partitioner_.NextGlobal(codegen.name(), output.value->span());
  global->set_checked_type(type);
  Function function = Make<FunctionNode>(
      params, WrapInLets(bindings, body), result_type, std::vector<TypeVar>{},
      kernels::Attrs{{kPrimitiveAttr, kernels::AttrValue::Int(1)},
                     {kCompilerAttr, kernels::AttrValue::String(std::string(codegen.name()))},
                     {kGlobalSymbolAttr, kernels::AttrValue::String(global->name)}},
      output.value->span());
  function->set_checked_type(type);
  partitioner_.AddFunction(global, function);
  return TypedCall(global, std::move(args), result_type, output.value->span());
}

// A composite's calls as a function literal marked Composite="RULE", as
// TVM builds it: appends `let %composite = fn (...) {...}` to `bindings`
// and returns its call. `operand` gives what the region's function has for
// an operand the pattern does not compute.
Expr ChainPartitioner::Composite(const Unit& unit, const std::function<Var(const Expr&)>& operand,
                                 Bindings& bindings) {
  std::vector<Var> params;
  std::vector<Expr> args;
  std::unordered_map<const ExprNode*, Var> param_of;  // by the value outside
  std::unordered_map<size_t, Var> computed;           // by member position
  Bindings inner;
  Expr body;
  for (size_t member : unit.members) {
    const CallNode& call = *chain_[member].call;
    std::vector<Expr> children{call.callee};
    for (const Expr& arg : call.args) {
      const auto* var = As<VarNode>(arg);
      auto position = var ? position_.find(var) : position_.end();
      auto inside = position != position_.end() ? computed.find(position->second) : computed.end();
      if (inside != computed.end()) {
        children.push_back(inside->second);
        continue;
      }
      Var outer = operand(arg);
      auto [param, inserted] = param_of.try_emplace(outer.get());
      if (inserted) {
        param->second = Parameter(outer->name_hint, outer);
        params.push_back(param->second);
        args.push_back(outer);
      }
      children.push_back(param->second);
    }
    Expr value = WithTypedChildren(chain_[member].value, children);
    if (member == unit.members.back()) {
      body = value;
    } else {
      Var var = LocalVar(chain_[member].var->name_hint, value);
      computed[member] = var;
      inner.emplace_back(var, value);
    }
  }
  const Type& result_type = body->checked_type();
  Function function = Make<FunctionNode>(
      params, WrapInLets(inner, body), result_type, std::vector<TypeVar>{},
      kernels::Attrs{{kCompositeAttr, kernels::AttrValue::String(unit.composite->name)}},
      body->span());
  function->set_checked_type(FunctionType(params, result_type));
  Var var = LocalVar("composite", function);
  bindings.emplace_back(var, function);
  return TypedCall(var, std::move(args), result_type, body->span());
}

// The chain with each region's calls replaced by one call of its function,
// and nested scopes partitioned; `root` itself when nothing changed.
Expr ChainPartitioner::Build(const Expr& root) {
  Bindings bindings;
  Expr body;
  bool changed = false;
  for (size_t index = 0; index < chain_.size(); ++index) {
    const Binding& binding = chain_[index];
    Expr value;
    if (binding.unit >= 0) {
      const size_t region = Find(static_cast<size_t>(binding.unit));
      changed = true;
      if (regions_[region].last != index) continue;
      value = Outline(region);
    } else {
      value = partitioner_.RewriteNested(binding.value);
      changed = changed || value.get() != binding.value.get();
    }
    if (binding.var) {
      bindings.emplace_back(binding.var, std::move(value));
    } else {
      body = std::move(value);
    }
  }
  if (!changed) return root;
  return WrapInLets(bindings, body);
}

}  // namespace

ir::Module PartitionGraph(const ir::Module& module, Codegens codegens) {
  Module result;
  result.set_source(module.source_name(),
                    std::make_shared<const std::string>(module.source_text()));
  for (const TypeDefinition& definition : module.type_definitions())
    result.AddTypeDefinition(definition);
  for (const GlobalVar& request : module.gradient_requests()) result.AddGradientRequest(request);
  Partitioner partitioner(codegens, module);
  for (const GlobalFunction& global : module.functions()) {
    if (codegens.empty() || IsPrimitive(*global.function)) {
      result.AddFunction(global.name, global.function);
      continue;
    }
    std::vector<GlobalFunction> made;
    result.AddFunction(global.name, partitioner.Partition(global.function, made));
    for (GlobalFunction& function : made) result.AddFunction(function.name, function.function);
  }
  return result;
}

}  // namespace relay::passes
