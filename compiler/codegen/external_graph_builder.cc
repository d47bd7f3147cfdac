#include "compiler/codegen/external_graph_builder.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/ir/type.h"
#include "compiler/passes/pass_util.h"
#include "compiler/typing/type_inference.h"
#include "relay/error.h"

namespace relay::codegen {
namespace {

using namespace relay::ir;
using kernels::external::ExternalGraph;

// The Composite attribute of a local function, or empty.
std::string CompositeName(const FunctionNode& function) {
  for (const auto& [name, value] : function.attrs) {
    if (name == "Composite" && value.kind() == kernels::AttrValue::Kind::kString)
      return value.as_string();
  }
  return "";
}

class GraphBuilder {
 public:
  GraphBuilder(const std::string& name, const std::string& source) : name_(name), source_(source) {}

  ExternalGraph Build(const FunctionNode& function) {
    for (size_t index = 0; index < function.params.size(); ++index) {
      const Var& param = function.params[index];
      graph_.params.push_back(TensorType(*param, "parameter %" + param->name_hint));
      value_of_[param.get()] = int32_t(index);
    }
    const int32_t result = Value(function.body, -1);
    if (graph_.operators.empty() || result != -int32_t(graph_.operators.size())) {
      Reject(*function.body, "an external function returns its last operator call's result");
    }
    return std::move(graph_);
  }

 private:
  [[noreturn]] void Reject(const ExprNode& where, const std::string& problem) const {
    throw Error(ErrorKind::kCompile, name_ + ": " + problem, where.span().In(source_));
  }

  kernels::ValueType TensorType(const ExprNode& expr, const std::string& what) const {
    std::optional<kernels::ValueType> type = typing::ToValueType(expr.checked_type());
    if (!type || type->is_tuple)
      Reject(expr, "an external function's " + what + " is not a tensor");
    return *type;
  }

  // The graph value `expr` computes (a parameter's index, or -1 - an
  // operator's position), adding its operator calls; `composite` labels them.
  // Let chains are walked in a loop; nested calls recurse (a composite's
  // body nests a few calls at most).
  int32_t Value(const Expr& expr, int32_t composite) {
    const ExprNode* node = expr.get();
    while (const auto* let = As<LetNode>(node)) {
      if (const auto* literal = As<FunctionNode>(let->value)) {
        if (CompositeName(*literal).empty())
          Reject(*let->value,
                 "an external function's local functions are composites (Composite=\"NAME\")");
        composite_of_[let->var.get()] = literal;
      } else {
        value_of_[let->var.get()] = Value(let->value, composite);
      }
      node = let->body.get();
    }
    if (auto found = value_of_.find(node); found != value_of_.end()) return found->second;
    const auto* call = As<CallNode>(node);
    if (call == nullptr) {
      Reject(*node, As<ConstantNode>(node) != nullptr
                        ? "an external function takes its constants as parameters"
                        : "an external function computes operator calls only");
    }
    std::vector<int32_t> operands;
    for (const Expr& arg : call->args) operands.push_back(Value(arg, composite));
    if (const auto* op = As<OpNode>(call->callee)) {
      kernels::FusedOperator fused{op->name(), call->attrs, std::move(operands)};
      graph_.operators.push_back(std::move(fused));
      graph_.composites.push_back(composite);
      graph_.types.push_back(TensorType(*call, "call of " + op->name() + "'s result"));
      const int32_t value = -int32_t(graph_.operators.size());
      value_of_[node] = value;
      return value;
    }
    const FunctionNode* literal = As<FunctionNode>(call->callee);
    if (const auto* var = As<VarNode>(call->callee)) {
      auto found = composite_of_.find(var);
      if (found != composite_of_.end()) literal = found->second;
    }
    if (literal == nullptr || CompositeName(*literal).empty() ||
        literal->params.size() != operands.size()) {
      Reject(*call, "an external function calls operators and its composite functions only");
    }
    graph_.composite_names.push_back(CompositeName(*literal));
    for (size_t index = 0; index < operands.size(); ++index)
      value_of_[literal->params[index].get()] = operands[index];
    const int32_t value = Value(literal->body, int32_t(graph_.composite_names.size() - 1));
    value_of_[node] = value;
    return value;
  }

  const std::string& name_;
  const std::string& source_;
  ExternalGraph graph_;
  std::unordered_map<const ExprNode*, int32_t> value_of_;
  std::unordered_map<const ExprNode*, const FunctionNode*> composite_of_;
};

}  // namespace

ExternalGraph BuildExternalGraph(const FunctionNode& function, const std::string& name,
                                 const std::string& source) {
  return GraphBuilder(name, source).Build(function);
}

}  // namespace relay::codegen
