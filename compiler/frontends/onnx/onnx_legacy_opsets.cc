#include "compiler/frontends/onnx/onnx_legacy_opsets.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace relay::onnx_import {

namespace {

// The first opset whose form of the operator the converters read, for
// those that changed it before opset 7.
const std::map<std::string, int64_t>& FirstReadableOpset() {
  static const std::map<std::string, int64_t> first = {
      {"Cast", 6},      // `to` was a string
      {"Concat", 4},    // `axis` was optional
      {"GRU", 7},       // output_sequence, and other defaults
      {"LSTM", 7},      //
      {"RNN", 7},       //
      {"Pad", 2},       // `paddings`
      {"Reshape", 5},   // the shape was an attribute
      {"Split", 2},     // the split sizes could be an input
      {"Tile", 6},      // `tiles` and `axis` inputs
      {"Upsample", 7},  // experimental: width_scale and height_scale
  };
  return first;
}

// Operators whose legacy `broadcast` attribute (before opset 7) could
// align the second operand at `axis` rather than at the end, as NumPy
// (and opset 7) does.
const std::set<std::string>& LegacyBroadcasting() {
  static const std::set<std::string> operators = {"Add",     "Sub",  "Mul",  "Div",   "Pow",
                                                  "And",     "Or",   "Xor",  "Equal", "Less",
                                                  "Greater", "Gemm", "PRelu"};
  return operators;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> LegacyFormProblem(const onnx::NodeProto& node, int64_t opset) {
  const std::string& op = node.op_type();
  auto first = FirstReadableOpset().find(op);
  if (first != FirstReadableOpset().end() && opset < first->second) {
    return op + " of opset " + std::to_string(opset) + " (its form before opset " +
           std::to_string(first->second) + ") is not supported";
  }
  if (LegacyBroadcasting().count(op) > 0) {
    const onnx::AttributeProto* broadcast = FindAttribute(node, "broadcast");
    if (broadcast != nullptr && broadcast->i() != 0 && FindAttribute(node, "axis") != nullptr)
      return "legacy broadcasting along an axis (opset " + std::to_string(opset) +
             "'s broadcast and axis attributes) is not supported";
  }
  if (op == "BatchNormalization") {
    const onnx::AttributeProto* spatial = FindAttribute(node, "spatial");
    if (spatial != nullptr && spatial->i() == 0)
      return "BatchNormalization with spatial=0 (statistics per element) is not supported";
  }
  return std::nullopt;
}

}  // namespace relay::onnx_import
