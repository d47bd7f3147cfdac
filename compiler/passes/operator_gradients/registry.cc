// The table of gradient rules, built once from the families' files, and the
// building blocks the rules share.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::passes {
namespace {

using RuleMap = std::unordered_map<std::string_view, GradientRule>;

const RuleMap& Rules() {
  static const RuleMap* rules = [] {
    operator_gradients::RuleTable table;
    operator_gradients::AddElementwiseGradients(table);
    operator_gradients::AddReductionGradients(table);
    operator_gradients::AddTransformGradients(table);
    operator_gradients::AddNeuralNetworkGradients(table);
    auto* map = new RuleMap;
    for (auto& [name, rule] : table) {
      RELAY_CHECK(map->emplace(name, std::move(rule)).second,
                  "two gradient rules for operator " + std::string(name));
    }
    return map;
  }();
  return *rules;
}

}  // namespace

const ir::Type& GradientContext::input_type(size_t index) const {
  return call.args.at(index)->checked_type();
}

const ir::Type& GradientContext::output_type() const {
  return call.checked_type();
}

const GradientRule* FindGradientRule(std::string_view name) {
  const RuleMap& rules = Rules();
  auto found = rules.find(name);
  return found == rules.end() ? nullptr : &found->second;
}

std::vector<std::string_view> OperatorsWithGradientRules() {
  std::vector<std::string_view> names;
  for (const auto& entry : Rules()) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

ir::Expr CallOperator(std::string_view name, std::vector<ir::Expr> args,
                      const kernels::Attrs& attrs) {
  const kernels::OperatorDefinition* definition = kernels::FindOperator(name);
  RELAY_CHECK(definition, "gradient rule uses unknown operator " + std::string(name));
  kernels::Attrs normalized;
  if (std::optional<std::string> problem =
          kernels::NormalizeAttrs(definition->attributes, attrs, normalized)) {
    RELAY_CHECK(false, "gradient rule calls " + std::string(name) + " wrongly: " + *problem);
  }
  return ir::Make<ir::CallNode>(ir::Make<ir::OpNode>(definition), std::move(args),
                                std::move(normalized));
}

ir::Expr ScalarConstant(double value, DType dtype) {
  Ref<Tensor> scalar = Tensor::Empty(HostDevice(), {}, dtype);
  switch (dtype) {
    case DType::kFloat64:
      *scalar->data<double>() = value;
      break;
    case DType::kFloat32:
      *scalar->data<float>() = static_cast<float>(value);
      break;
    case DType::kFloat16:
      *scalar->data<Float16>() = Float16(static_cast<float>(value));
      break;
    default:
      RELAY_CHECK(false, "gradient constant of non-float dtype " + std::string(DTypeName(dtype)));
  }
  return ir::Make<ir::ConstantNode>(std::move(scalar));
}

ir::Expr SumToShapeOf(const ir::Expr& gradient, const ir::Type& gradient_type, const ir::Expr& like,
                      const ir::Type& like_type) {
  const auto* from = ir::As<ir::TensorTypeNode>(gradient_type);
  const auto* to = ir::As<ir::TensorTypeNode>(like_type);
  if (from && to && from->shape == to->shape &&
      std::none_of(to->shape.begin(), to->shape.end(),
                   [](int64_t dim) { return dim == ir::kAnyDim; })) {
    return gradient;
  }
  return CallOperator("collapse_sum_like", {gradient, like});
}

}  // namespace relay::passes

namespace relay::passes::operator_gradients {

const ir::TensorTypeNode& TensorTypeOf(const ir::Type& type) {
  const auto* tensor = ir::As<ir::TensorTypeNode>(type);
  RELAY_CHECK(tensor != nullptr, "a gradient rule expects a tensor type, got " +
                                     (type ? ir::TypeToString(type) : std::string("none")));
  return *tensor;
}

}  // namespace relay::passes::operator_gradients
