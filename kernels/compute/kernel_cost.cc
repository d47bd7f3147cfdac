#include "kernels/compute/kernel_cost.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace relay::kernels {

namespace {

double ElementCount(const std::vector<int64_t>& shape) {
  double count = 1;
  for (int64_t dim : shape) count *= double(dim);
  return count;
}

// The multiply-adds of one contraction, from its (normalised) attributes,
// its inputs' shapes and its output's; 0 for any other operator.
double MultiplyAdds(const std::string& op, const Attrs& attrs,
                    const std::vector<const ValueType*>& inputs, const ValueType& output) {
  if (output.is_tuple || inputs.size() < 2) return 0;
  for (const ValueType* input : inputs) {
    if (input->is_tuple || input->shape.empty()) return 0;
  }
  const std::vector<int64_t>& a = inputs[0]->shape;
  const std::vector<int64_t>& b = inputs[1]->shape;
  const double outputs = ElementCount(output.shape);
  if (op == "nn.dense") return outputs * double(a.back());
  if (op == "nn.matmul") {
    const bool transpose_a = GetAttr(attrs, "transpose_a").as_bool();
    return outputs * double(transpose_a ? a[a.size() < 2 ? 0 : a.size() - 2] : a.back());
  }
  if (op == "nn.batch_matmul") {
    const bool transpose_a = GetAttr(attrs, "transpose_a").as_bool();
    if (a.size() < 2) return 0;
    return outputs * double(transpose_a ? a[a.size() - 2] : a.back());
  }
  if (op == "nn.conv2d") {
    // Each output element sums input channels per group times the window:
    // the weight's elements per output channel, in any kernel layout.
    const std::string& layout = GetAttr(attrs, "kernel_layout").as_string();
    const size_t position = layout.find('O');
    if (position == std::string::npos || position >= b.size()) return 0;
    const int64_t output_channels = b[position];
    if (output_channels <= 0) return 0;
    return outputs * ElementCount(b) / double(output_channels);
  }
  if (op == "nn.conv2d_transpose") {
    // Each input element is scattered over output channels per group times
    // the window: the weight's elements per input channel.
    const std::string& layout = GetAttr(attrs, "kernel_layout").as_string();
    const size_t position = layout.find('I');
    if (position == std::string::npos || position >= b.size() || b[position] <= 0) return 0;
    return ElementCount(a) * ElementCount(b) / double(b[position]);
  }
  return 0;
}

}  // namespace

double ContractionFlops(std::span<const FusedOperator> operators,
                        std::span<const ValueType> input_types) {
  std::vector<ValueType> results;
  double multiply_adds = 0;
  for (const FusedOperator& fused : operators) {
    const OperatorDefinition* definition = FindOperator(fused.op);
    if (definition == nullptr || definition->shape_dependence != ShapeDependence::kInputShapes)
      return 0;
    Attrs attrs;
    if (NormalizeAttrs(definition->attributes, fused.attrs, attrs)) return 0;
    std::vector<const ValueType*> inputs;
    std::vector<RelationInput> relation_inputs;
    for (int32_t input : fused.inputs) {
      const size_t position = input >= 0 ? size_t(input) : size_t(-1 - input);
      const std::span<const ValueType> source =
          input >= 0 ? input_types : std::span<const ValueType>(results);
      if (position >= source.size()) return 0;
      inputs.push_back(&source[position]);
      relation_inputs.push_back({inputs.back(), nullptr});
    }
    ValueType output;
    try {
      output = definition->relation(relation_inputs, attrs);
    } catch (const OperatorTypeError&) {
      return 0;
    }
    multiply_adds += MultiplyAdds(definition->name, attrs, inputs, output);
    results.push_back(std::move(output));
  }
  return 2 * multiply_adds;
}

}  // namespace relay::kernels
