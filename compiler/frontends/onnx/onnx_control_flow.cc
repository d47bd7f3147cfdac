// If, Loop and Scan: Relay's if, and recursive local functions.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// If: Relay's if over the two branches, on the condition's one element.
std::vector<OnnxValue> ConvertIf(ConvertContext& context) {
  const OnnxValue& condition = context.Input(0);
  if (condition.dtype != DType::kBool) Refuse("a condition other than bool");
  std::string test = context.Tensor(0);
  if (!condition.shape || !condition.shape->empty()) {
    test = Call("reshape", {test}, {"newshape=[]"});
  }
  std::vector<OnnxValue> then_outputs, else_outputs;
  const std::string then_block = context.Branch("then_branch", then_outputs);
  const std::string else_block = context.Branch("else_branch", else_outputs);
  const size_t outputs = size_t(context.node().output_size());
  if (then_outputs.size() != outputs || else_outputs.size() != outputs)
    Refuse("branches with another number of outputs than the node");
  const std::string choice = "if (" + test + ") " + then_block + " else " + else_block;
  // Each output keeps what both branches agree on of its shape.
  auto agreed = [&](size_t index) {
    OnnxValue value;
    const OnnxValue &a = then_outputs[index], &b = else_outputs[index];
    value.dtype = a.dtype;
    if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
      value.shape = *a.shape;
      for (size_t axis = 0; axis < a.shape->size(); ++axis) {
        if ((*a.shape)[axis] != (*b.shape)[axis]) (*value.shape)[axis] = -1;
      }
    }
    return value;
  };
  if (outputs == 1) {
    OnnxValue value = agreed(0);
    value.expr = choice;
    return {value};
  }
  const std::string both = context.Bind(choice);
  std::vector<OnnxValue> results;
  for (size_t index = 0; index < outputs; ++index) {
    OnnxValue value = agreed(index);
    value.expr = both + "." + std::to_string(index);
    results.push_back(value);
  }
  return results;
}
}  // namespace

void AddControlFlowConverters(std::map<std::string, Converter>& table) {
  table["If"] = ConvertIf;
}

}  // namespace relay::onnx_import
