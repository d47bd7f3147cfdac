// What the external codegens' tests share: building an ExternalGraph call by
// call, random float32 inputs, the graph run operator by operator with
// relay-vm's own kernels (RunOperator, tested against NumPy in
// tests/kernels: the oracle each codegen is compared with), and catching
// errors.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/external/external_graph.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::kernels::external::testing {

inline constexpr DType kF32 = DType::kFloat32;

inline ValueType F32(std::vector<int64_t> shape) {
  return ValueType::Tensor(std::move(shape), kF32);
}

inline AttrValue Ints(std::vector<int64_t> values) {
  return AttrValue::IntList(values);
}

// `given` normalised by `op`'s schema, as a graph's operators are.
inline Attrs Normalized(const std::string& op, const Attrs& given) {
  const OperatorDefinition* definition = FindOperator(op);
  Attrs attrs;
  if (definition == nullptr) {
    ADD_FAILURE() << "no operator " << op;
  } else if (std::optional<std::string> problem =
                 NormalizeAttrs(definition->attributes, given, attrs)) {
    ADD_FAILURE() << op << ": " << *problem;
  }
  return attrs;
}

// Builds a graph call by call, typing each by its operator's relation.
// Consecutive calls of one composite name share its index, as consecutive
// instances of a pattern may.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::vector<ValueType> params) { graph_.params = std::move(params); }

  // Adds `op` on `inputs` (parameter indices, or values Add returned) in the
  // composite named `composite` (empty: none); returns its value.
  int32_t Add(const std::string& op, std::vector<int32_t> inputs, const Attrs& given = {},
              const std::string& composite = "") {
    FusedOperator call{op, Normalized(op, given), std::move(inputs)};
    std::vector<ValueType> types;
    for (int32_t input : call.inputs)
      types.push_back(input >= 0 ? graph_.params[size_t(input)] : graph_.types[size_t(-1 - input)]);
    std::vector<RelationInput> relation_inputs;
    for (const ValueType& type : types) relation_inputs.push_back({&type, nullptr});
    graph_.types.push_back(FindOperator(op)->relation(relation_inputs, call.attrs));
    graph_.operators.push_back(std::move(call));
    int32_t composite_index = -1;
    if (!composite.empty()) {
      if (graph_.composite_names.empty() || graph_.composite_names.back() != composite)
        graph_.composite_names.push_back(composite);
      composite_index = int32_t(graph_.composite_names.size()) - 1;
    }
    graph_.composites.push_back(composite_index);
    return -int32_t(graph_.operators.size());
  }

  const ExternalGraph& graph() const { return graph_; }

 private:
  ExternalGraph graph_;
};

// A float32 tensor of `shape` with values uniform in [-1, 1).
inline Ref<Tensor> Random(const Shape& shape, uint32_t seed) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, kF32);
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t index = 0; index < tensor->element_count(); ++index)
    tensor->data<float>()[index] = uniform(generator);
  return tensor;
}

inline std::vector<Ref<Tensor>> RandomInputs(const std::vector<Shape>& shapes, uint32_t seed) {
  std::vector<Ref<Tensor>> inputs;
  for (const Shape& shape : shapes) inputs.push_back(Random(shape, seed++));
  return inputs;
}

// The graph run operator by operator with relay-vm's kernels.
inline Ref<Tensor> Reference(const ExternalGraph& graph, const std::vector<Ref<Tensor>>& inputs) {
  std::vector<Ref<Tensor>> results;
  for (const FusedOperator& call : graph.operators) {
    std::vector<Ref<Tensor>> operands;
    for (int32_t input : call.inputs)
      operands.push_back(input >= 0 ? inputs[size_t(input)] : results[size_t(-1 - input)]);
    results.push_back(RunOperator(call.op, operands, call.attrs));
  }
  return results.back();
}

// The error `action` throws (a test failure when it throws none).
inline Error ErrorFrom(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no error";
  return Error(ErrorKind::kInternal, "no error");
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace relay::kernels::external::testing
