#include "kernels/external/external_graph.h"

#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "relay/error.h"
#include "vm/core/zip_archive.h"

namespace relay::kernels::external {
namespace {

// Whether two types agree, a `?` agreeing with any extent.
bool Agree(const ValueType& recorded, const ValueType& inferred) {
  if (recorded.is_tuple || inferred.is_tuple || recorded.dtype != inferred.dtype ||
      recorded.shape.size() != inferred.shape.size()) {
    return false;
  }
  for (size_t axis = 0; axis < recorded.shape.size(); ++axis) {
    const int64_t a = recorded.shape[axis], b = inferred.shape[axis];
    if (a != b && a != kAnyDim && b != kAnyDim) return false;
  }
  return true;
}

// The operands' types of operator `position`, from the parameters' and the
// earlier operators' types.
std::vector<ValueType> OperandTypes(const ExternalGraph& graph, size_t position,
                                    const std::vector<ValueType>& param_types,
                                    const std::vector<ValueType>& results) {
  std::vector<ValueType> types;
  for (int32_t input : graph.operators[position].inputs)
    types.push_back(input >= 0 ? param_types[size_t(input)] : results[size_t(-(input + 1))]);
  return types;
}

// Operator `position`'s result for operand types `types`, by its relation.
ValueType Relate(const ExternalGraph& graph, size_t position, const std::vector<ValueType>& types) {
  const FusedOperator& call = graph.operators[position];
  const OperatorDefinition* definition = FindOperator(call.op);
  std::vector<RelationInput> inputs;
  for (const ValueType& type : types) inputs.push_back({&type, nullptr});
  return definition->relation(inputs, call.attrs);
}

}  // namespace

std::string_view ExternalGraph::CompositeOf(size_t index) const {
  const int32_t composite = composites.at(index);
  return composite < 0 ? std::string_view()
                       : std::string_view(composite_names.at(size_t(composite)));
}

void ValidateGraph(ExternalGraph& graph, ErrorKind kind, const std::string& subject) {
  auto fail = [&](const std::string& problem) { throw Error(kind, subject + ": " + problem); };
  if (graph.operators.empty()) fail("an external function computes at least one operator");
  if (graph.composites.size() != graph.operators.size() ||
      graph.types.size() != graph.operators.size()) {
    fail("the operators' composites and types do not match the operators");
  }
  for (const ValueType& param : graph.params) {
    if (param.is_tuple) fail("an external function's parameters are tensors");
  }
  std::vector<ValueType> results;
  for (size_t position = 0; position < graph.operators.size(); ++position) {
    FusedOperator& call = graph.operators[position];
    const std::string label =
        "operator " + std::to_string(position) + " (" + detail::PrintableExcerpt(call.op) + ")";
    const OperatorDefinition* definition = FindOperator(call.op);
    if (definition == nullptr) fail(label + " is not an operator");
    if (definition->shape_dependence != ShapeDependence::kInputShapes)
      fail(label + "'s shape depends on its inputs' values");
    Attrs normalized;
    if (std::optional<std::string> problem =
            NormalizeAttrs(definition->attributes, call.attrs, normalized)) {
      fail(label + ": " + detail::PrintableExcerpt(*problem, 400));
    }
    call.attrs = std::move(normalized);
    if (call.inputs.size() != definition->input_names.size())
      fail(label + " takes " + std::to_string(definition->input_names.size()) + " inputs");
    for (int32_t input : call.inputs) {
      const bool known = input >= 0 ? size_t(input) < graph.params.size()
                                    : size_t(-(int64_t(input) + 1)) < position;
      if (!known) fail(label + "'s input " + std::to_string(input) + " is not a known value");
    }
    const int32_t composite = graph.composites[position];
    if (composite < -1 || (composite >= 0 && size_t(composite) >= graph.composite_names.size()))
      fail(label + " names composite " + std::to_string(composite) + ", which is not listed");
    ValueType inferred;
    try {
      inferred = Relate(graph, position, OperandTypes(graph, position, graph.params, results));
    } catch (const OperatorTypeError& error) {
      fail(label + ": " + error.message);
    } catch (const Error& error) {
      fail(label + ": " + error.message());
    }
    if (!Agree(graph.types[position], inferred)) {
      fail(label + " is recorded as " + graph.types[position].ToString() + " but computes " +
           inferred.ToString());
    }
    results.push_back(graph.types[position]);
  }
}

std::vector<Shape> InferShapes(const ExternalGraph& graph, std::span<const Shape> input_shapes) {
  if (input_shapes.size() != graph.params.size()) {
    throw Error(ErrorKind::kUsage, "the external function takes " +
                                       std::to_string(graph.params.size()) + " tensors, given " +
                                       std::to_string(input_shapes.size()));
  }
  std::vector<ValueType> params;
  for (size_t index = 0; index < input_shapes.size(); ++index) {
    const ValueType& declared = graph.params[index];
    ValueType given = ValueType::Tensor(input_shapes[index], declared.dtype);
    if (!Agree(declared, given)) {
      throw Error(ErrorKind::kUsage, "the external function's input " + std::to_string(index) +
                                         " is " + declared.ToString() + ", given shape " +
                                         ShapeToString(input_shapes[index]));
    }
    params.push_back(std::move(given));
  }
  std::vector<ValueType> results;
  std::vector<Shape> shapes;
  for (size_t position = 0; position < graph.operators.size(); ++position) {
    try {
      results.push_back(Relate(graph, position, OperandTypes(graph, position, params, results)));
    } catch (const OperatorTypeError& error) {
      throw Error(ErrorKind::kUsage, graph.operators[position].op + ": " + error.message);
    }
    shapes.push_back(results.back().shape);
  }
  return shapes;
}

}  // namespace relay::kernels::external
