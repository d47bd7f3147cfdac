#include "compiler/passes/plan_devices.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/operator.h"
#include "kernels/operators/device_annotations.h"
#include "relay/error.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

// Union-find over values (let-bound variables, and the kernel calls in tail
// position that no let binds), each class optionally fixed to a device.
class DeviceDomains {
 public:
  // Iterative, with path compression: a class may be as long as a let
  // chain (100,000 bindings and more).
  const ExprNode* Find(const ExprNode* var) {
    const ExprNode* root = var;
    for (auto found = parent_.find(root); found != parent_.end() && found->second != root;
         found = parent_.find(root)) {
      root = found->second;
    }
    while (var != root) {
      auto found = parent_.find(var);
      const ExprNode* next = found->second;
      found->second = root;
      var = next;
    }
    return root;
  }

  std::optional<DeviceId> DeviceOf(const ExprNode* var) {
    auto found = fixed_.find(Find(var));
    return found == fixed_.end() ? std::nullopt : std::optional<DeviceId>(found->second);
  }

  // Fixes the class of `var` to `device`; false when it is fixed to
  // another device already.
  bool Fix(const ExprNode* var, DeviceId device) {
    const ExprNode* root = Find(var);
    auto [position, inserted] = fixed_.try_emplace(root, device);
    return inserted || position->second == device;
  }

  // Joins the classes of `a` and `b`; false (and nothing joined) when they
  // are fixed to different devices.
  bool Join(const ExprNode* a, const ExprNode* b) {
    const ExprNode* root_a = Find(a);
    const ExprNode* root_b = Find(b);
    if (root_a == root_b) return true;
    const std::optional<DeviceId> device_a = DeviceOf(root_a), device_b = DeviceOf(root_b);
    if (device_a && device_b && *device_a != *device_b) return false;
    parent_[root_a] = root_b;
    if (device_a) fixed_[root_b] = *device_a;
    return true;
  }

 private:
  std::unordered_map<const ExprNode*, const ExprNode*> parent_;
  std::unordered_map<const ExprNode*, DeviceId> fixed_;
};

const OpNode* OperatorOf(const CallNode& call) {
  return As<OpNode>(call.callee);
}

bool IsKernelCall(const CallNode& call) {
  if (const OpNode* op = OperatorOf(call)) {
    return op->name() != kernels::kOnDevice && op->name() != kernels::kDeviceCopy;
  }
  const auto* function = As<FunctionNode>(call.callee);
  return function != nullptr && IsPrimitive(*function);
}

// A tensor of at least one dimension: what placement follows. Scalars are
// left to the run time.
bool IsPlacedTensor(const Expr& expr) {
  const auto* type = As<TensorTypeNode>(expr->checked_type());
  return type != nullptr && !type->shape.empty();
}

// A value device planning places: a let binding a call, or a kernel call
// in tail position (what a function or branch returns), which no let binds.
struct Site {
  const ExprNode* value;  // the let's variable, or the tail call itself
  const CallNode* call;
  const LetNode* let;  // null for a tail call
};

bool IsAnnotation(const CallNode& call) {
  const OpNode* op = OperatorOf(call);
  return op != nullptr && (op->name() == kernels::kOnDevice || op->name() == kernels::kDeviceCopy);
}

void CollectSites(const Expr& body, std::vector<Site>& sites);

// The site of `call` (bound to `value`), after those inside its arguments.
// An annotation's call written inside it is not a site of its own: the
// annotation places it.
void CollectCallSite(const CallNode* call, const ExprNode* value, const LetNode* let,
                     std::vector<Site>& sites) {
  for (const Expr& arg : call->args) {
    const auto* inner = As<CallNode>(arg);
    if (IsAnnotation(*call) && inner != nullptr) {
      for (const Expr& inner_arg : inner->args) CollectSites(inner_arg, sites);
    } else {
      CollectSites(arg, sites);
    }
  }
  sites.push_back({value, call, let});
}

// Every site of `body` in evaluation order, but those inside primitive
// functions (one kernel each).
void CollectSites(const Expr& body, std::vector<Site>& sites) {
  Expr current = body;
  while (const auto* let = As<LetNode>(current)) {
    if (const auto* call = As<CallNode>(let->value)) {
      CollectCallSite(call, let->var.get(), let, sites);
    } else {
      CollectSites(let->value, sites);
    }
    current = let->body;
  }
  if (const auto* function = As<FunctionNode>(current); function && IsPrimitive(*function)) return;
  if (const auto* call = As<CallNode>(current);
      call && (IsKernelCall(*call) || IsAnnotation(*call))) {
    CollectCallSite(call, call, nullptr, sites);
    return;
  }
  for (const Expr& child : ExprChildren(current)) CollectSites(child, sites);
}

Expr TypedCall(const char* op_name, const Expr& argument, const kernels::Attrs& given) {
  const kernels::OperatorDefinition* definition = kernels::FindOperator(op_name);
  kernels::Attrs attrs;
  const std::optional<std::string> problem =
      kernels::NormalizeAttrs(definition->attributes, given, attrs);
  RELAY_CHECK(!problem,
              std::string(op_name) + " refused planned attributes: " + problem.value_or(""));
  Expr call =
      Make<CallNode>(Make<OpNode>(definition, argument->span()), std::vector<Expr>{argument},
                     std::move(attrs), std::vector<Type>{}, argument->span());
  call->set_checked_type(argument->checked_type());
  return call;
}

Expr DeviceCopy(const Expr& value, DeviceId from, DeviceId to) {
  kernels::Attrs attrs = kernels::DeviceAttrs(from, "src_device_type", "src_device_id");
  for (auto& attribute : kernels::DeviceAttrs(to, "dst_device_type", "dst_device_id"))
    attrs.push_back(std::move(attribute));
  return TypedCall(kernels::kDeviceCopy, value, attrs);
}

// What planning does to one let.
struct LetPlan {
  enum class Action { kPlace, kAlias, kCopy } action = Action::kPlace;
  DeviceId device;  // kPlace: where the call runs; kCopy: the destination
  DeviceId source;  // kCopy
  // kPlace: arguments (by position) that come from another device.
  std::map<size_t, DeviceId> copied_arguments;
};

class Planner : public TypedExprMutator {
 public:
  explicit Planner(const Expr& body) {
    std::vector<Site> sites;
    CollectSites(body, sites);
    std::unordered_set<const ExprNode*> computed;  // values this function computes
    for (const Site& site : sites) computed.insert(site.value);
    DeviceDomains domains;
    // First the annotations, so that a call the program places is placed
    // there whatever its inputs are (they are copied to it).
    std::vector<std::pair<const Site*, DeviceId>> annotations;  // on_device of a value
    for (const Site& site : sites) {
      const OpNode* op = OperatorOf(*site.call);
      if (op == nullptr) continue;
      const CallNode* call = site.call;
      if (op->name() == kernels::kOnDevice) {
        const DeviceId device =
            *kernels::DeviceFromAttrs(call->attrs, "device_type", "device_id").device;
        domains.Fix(site.value, device);
        const auto* argument = As<VarNode>(call->args[0]);
        // A call written inside it is placed by the code generator; a
        // constant or an input is moved at run time.
        if (argument == nullptr || !computed.count(argument)) continue;
        if (!domains.Fix(argument, device)) {
          // Placed elsewhere by an earlier annotation: copied from there.
          plans_[call] = {LetPlan::Action::kCopy, device, *domains.DeviceOf(argument), {}};
          continue;
        }
        domains.Join(site.value, argument);
        annotations.emplace_back(&site, device);
      } else if (op->name() == kernels::kDeviceCopy) {
        const auto* argument = As<VarNode>(call->args[0]);
        if (argument != nullptr && computed.count(argument)) {
          domains.Fix(
              argument,
              *kernels::DeviceFromAttrs(call->attrs, "src_device_type", "src_device_id").device);
        }
        domains.Fix(
            site.value,
            *kernels::DeviceFromAttrs(call->attrs, "dst_device_type", "dst_device_id").device);
      }
    }
    // Then dataflow: a kernel call joins the domains of the tensors it
    // reads that this function computes (its inputs are moved at run time).
    std::vector<std::pair<const Site*, std::map<size_t, std::optional<DeviceId>>>> calls;
    for (const Site& site : sites) {
      if (!IsKernelCall(*site.call)) continue;
      std::map<size_t, std::optional<DeviceId>> conflicts;
      for (size_t position = 0; position < site.call->args.size(); ++position) {
        const auto* argument = As<VarNode>(site.call->args[position]);
        if (argument == nullptr || !computed.count(argument) ||
            !IsPlacedTensor(site.call->args[position])) {
          continue;
        }
        if (!domains.Join(site.value, argument)) {
          conflicts[position] = domains.DeviceOf(argument);
        }
      }
      calls.emplace_back(&site, std::move(conflicts));
    }
    for (const auto& [site, device] : annotations) {
      plans_[site->call] = {LetPlan::Action::kAlias, device, device, {}};
    }
    for (const auto& [site, conflicts] : calls) {
      const std::optional<DeviceId> device = domains.DeviceOf(site->value);
      if (!device) continue;  // the VM's device
      LetPlan plan{LetPlan::Action::kPlace, *device, *device, {}};
      for (const auto& [position, source] : conflicts) plan.copied_arguments[position] = *source;
      plans_[site->call] = std::move(plan);
    }
  }

 protected:
  Expr RewriteTyped(const Expr& original, const Expr& rebuilt) override {
    // Calls are planned where they stand; a let of an alias loses its
    // call, so lets are rewritten from the call the mutator rebuilt.
    if (const auto* let = As<LetNode>(original)) {
      auto found = plans_.find(As<CallNode>(let->value));
      if (found == plans_.end() || found->second.action != LetPlan::Action::kAlias) return rebuilt;
      const auto* rebuilt_let = As<LetNode>(rebuilt);
      const auto* call = As<CallNode>(rebuilt_let->value);
      RELAY_CHECK(call != nullptr, "an annotation's let binds a call");
      return TypedLet(rebuilt_let->var, call->args[0], rebuilt_let->body);
    }
    const auto* original_call = As<CallNode>(original);
    auto found = original_call != nullptr ? plans_.find(original_call) : plans_.end();
    if (found == plans_.end()) return rebuilt;
    const LetPlan& plan = found->second;
    const auto* call = As<CallNode>(rebuilt);
    switch (plan.action) {
      case LetPlan::Action::kAlias:
        return rebuilt;  // its let becomes the alias
      case LetPlan::Action::kCopy:
        return DeviceCopy(call->args[0], plan.source, plan.device);
      case LetPlan::Action::kPlace: {
        Bindings copies;
        std::vector<Expr> args = call->args;
        for (const auto& [position, source] : plan.copied_arguments) {
          Var copy = FreshVar("copy", args[position]);
          copies.emplace_back(copy, DeviceCopy(args[position], source, plan.device));
          args[position] = copy;
        }
        Expr placed_call = Make<CallNode>(call->callee, std::move(args), call->attrs,
                                          call->type_args, call->span());
        placed_call->set_checked_type(call->checked_type());
        Expr placed = TypedCall(kernels::kOnDevice, placed_call, kernels::DeviceAttrs(plan.device));
        return WrapInLets(copies, placed);
      }
    }
    RELAY_UNREACHABLE("unknown plan");
  }

 private:
  std::unordered_map<const CallNode*, LetPlan> plans_;
};

// Whether `body` mentions a device annotation at all (most programs do not,
// and are left untouched).
bool MentionsDevices(const Expr& body) {
  bool found = false;
  PostOrderVisit(body, [&](const Expr& expr) {
    if (const auto* op = As<OpNode>(expr)) {
      found |= op->name() == kernels::kOnDevice || op->name() == kernels::kDeviceCopy;
    }
  });
  return found;
}

}  // namespace

Function PlanDevices(const Function& function) {
  if (!MentionsDevices(function->body)) return function;
  Planner planner(function->body);
  return WithBody(function, planner.Mutate(function->body));
}

}  // namespace relay::passes
