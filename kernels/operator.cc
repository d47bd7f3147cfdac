#include "kernels/operator.h"

#include <algorithm>
#include <set>

#include "kernels/operator_table.h"
#include "relay/error.h"

namespace relay::kernels {

ValueType ValueType::Tensor(std::vector<int64_t> shape, DType dtype) {
  ValueType type;
  type.shape = std::move(shape);
  type.dtype = dtype;
  return type;
}

ValueType ValueType::Tuple(std::vector<ValueType> fields) {
  ValueType type;
  type.is_tuple = true;
  type.fields = std::move(fields);
  return type;
}

bool ValueType::operator==(const ValueType& other) const {
  if (is_tuple != other.is_tuple) return false;
  if (is_tuple) return fields == other.fields;
  return shape == other.shape && dtype == other.dtype;
}

std::string ValueType::ToString() const {
  if (is_tuple) {
    std::string text = "(";
    for (size_t index = 0; index < fields.size(); ++index) {
      if (index > 0) text += ", ";
      text += fields[index].ToString();
    }
    // Relay spells a one-field tuple with a trailing comma, as Python does.
    if (fields.size() == 1) text += ",";
    return text + ")";
  }
  // Spelled as the Relay printer spells types: a scalar is its dtype, and a
  // one-dimensional shape has a trailing comma.
  if (shape.empty()) return std::string(DTypeName(dtype));
  std::string text = "Tensor[(";
  for (size_t index = 0; index < shape.size(); ++index) {
    if (index > 0) text += ", ";
    text += shape[index] == kAnyDim ? std::string("?") : std::to_string(shape[index]);
  }
  if (shape.size() == 1) text += ",";
  text += "), ";
  text += DTypeName(dtype);
  return text + "]";
}

void OperatorTableBuilder::AttachComputes(
    const std::unordered_map<std::string, ComputeFunction>& computes) {
  size_t attached = 0;
  for (OperatorDefinition& definition : definitions_) {
    auto found = computes.find(definition.name);
    if (found == computes.end()) continue;
    definition.compute = found->second;
    ++attached;
  }
  RELAY_CHECK(attached == computes.size(),
              "a compute definition names an operator the table lacks");
}

void OperatorTableBuilder::AttachHostKernels(
    const std::unordered_map<std::string, HostKernel>& kernels) {
  size_t attached = 0;
  for (OperatorDefinition& definition : definitions_) {
    auto found = kernels.find(definition.name);
    if (found == kernels.end()) continue;
    RELAY_CHECK(!definition.compute,
                "operator '" + definition.name + "' has both a compute and a host kernel");
    RELAY_CHECK(definition.pattern == FusionPattern::kOpaque,
                "operator '" + definition.name + "' has a host kernel: it cannot be fused");
    definition.host_kernel = found->second;
    ++attached;
  }
  RELAY_CHECK(attached == kernels.size(), "a host kernel names an operator the table lacks");
}

void OperatorTableBuilder::Add(OperatorDefinition definition) {
  for (const OperatorDefinition& existing : definitions_) {
    RELAY_CHECK(existing.name != definition.name,
                "operator '" + definition.name + "' is defined twice");
  }
  RELAY_CHECK(static_cast<bool>(definition.relation),
              "operator '" + definition.name + "' has no type relation");
  std::set<std::string_view> attribute_names;
  for (const AttrField& field : definition.attributes) {
    RELAY_CHECK(attribute_names.insert(field.name).second,
                "operator '" + definition.name + "' declares attribute '" + field.name + "' twice");
  }
  // Arity is checked here, once, so that every relation may index its inputs
  // without checking their count.
  const size_t arity = definition.input_names.size();
  definition.relation = [arity, relation = std::move(definition.relation)](
                            std::span<const RelationInput> inputs, const Attrs& attrs) {
    if (inputs.size() != arity) {
      throw OperatorTypeError{"expects " + std::to_string(arity) +
                              (arity == 1 ? " input" : " inputs") + ", got " +
                              std::to_string(inputs.size())};
    }
    return relation(inputs, attrs);
  };
  definitions_.push_back(std::move(definition));
}

namespace {

struct OperatorTable {
  std::vector<OperatorDefinition> definitions;
  std::vector<const OperatorDefinition*> sorted;
};

const OperatorTable& Table() {
  // A function-local static is initialised exactly once, thread-safely; the
  // table is immutable afterwards.
  static const OperatorTable table = [] {
    OperatorTableBuilder builder;
    RegisterElementwiseOperators(builder);
    RegisterReductionOperators(builder);
    RegisterNeuralNetworkOperators(builder);
    RegisterTransformOperators(builder);
    RegisterImageOperators(builder);
    RegisterDeviceAnnotations(builder);
    RegisterSearchOperators(builder);
    RegisterVisionOperators(builder);
    RegisterSignalOperators(builder);
    RegisterLinearAlgebraOperators(builder);
    RegisterSelectionOperators(builder);
    AttachElementwiseComputes(builder);
    AttachReductionComputes(builder);
    AttachTransformComputes(builder);
    AttachConvolutionComputes(builder);
    AttachNeuralNetworkComputes(builder);
    AttachShapeComputes(builder);
    AttachSearchKernels(builder);
    AttachVisionKernels(builder);
    AttachImageKernels(builder);
    AttachSignalKernels(builder);
    AttachLinearAlgebraKernels(builder);
    AttachSelectionKernels(builder);
    OperatorTable result;
    result.definitions = std::move(builder.definitions());
    for (const OperatorDefinition& definition : result.definitions) {
      result.sorted.push_back(&definition);
    }
    std::sort(result.sorted.begin(), result.sorted.end(),
              [](const OperatorDefinition* left, const OperatorDefinition* right) {
                return left->name < right->name;
              });
    return result;
  }();
  return table;
}

}  // namespace

const OperatorDefinition* FindOperator(std::string_view name) {
  const auto& sorted = Table().sorted;
  auto found = std::lower_bound(sorted.begin(), sorted.end(), name,
                                [](const OperatorDefinition* definition, std::string_view key) {
                                  return definition->name < key;
                                });
  if (found == sorted.end() || (*found)->name != name) return nullptr;
  return *found;
}

std::span<const OperatorDefinition* const> AllOperators() {
  return Table().sorted;
}

}  // namespace relay::kernels
