// 1-D window operators (Conv, ConvTranspose, the pools over N, C, W data)
// as their 2-D converters over a unit height: the data and weight get an
// axis of extent 1 before their last, the window attributes a leading 1
// (0 for pads and output padding), and the result loses the axis again.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// The node as its 2-D form would be written.
onnx::NodeProto TwoDimensionalNode(const onnx::NodeProto& node) {
  onnx::NodeProto lifted = node;
  for (onnx::AttributeProto& attribute : *lifted.mutable_attribute()) {
    const std::string& name = attribute.name();
    if (attribute.type() != onnx::AttributeProto::INTS) continue;
    auto& values = *attribute.mutable_ints();
    if (name == "kernel_shape" || name == "strides" || name == "dilations") {
      if (values.size() != 1) Refuse(name + " of " + std::to_string(values.size()) + " values");
      values.Add(values.Get(0));
      values.Set(0, 1);
    } else if (name == "output_padding") {
      if (values.size() != 1) Refuse(name + " of " + std::to_string(values.size()) + " values");
      values.Add(values.Get(0));
      values.Set(0, 0);
    } else if (name == "pads") {
      if (values.size() != 2) Refuse("pads of " + std::to_string(values.size()) + " values");
      const int64_t begin = values.Get(0), end = values.Get(1);
      values.Clear();
      for (int64_t pad : {int64_t{0}, begin, int64_t{0}, end}) values.Add(pad);
    } else if (name == "output_shape") {
      if (values.empty()) Refuse("an empty output_shape");
      values.Add(values.Get(values.size() - 1));
      values.Set(values.size() - 2, 1);
    }
  }
  return lifted;
}

// A node's context seen as its 2-D form: inputs 0 (the data) and 1 (a
// convolution's weight) with the unit axis, everything else as it is.
class UnitHeightContext : public ConvertContext {
 public:
  explicit UnitHeightContext(ConvertContext& inner)
      : inner_(inner), node_(TwoDimensionalNode(inner.node())) {
    for (size_t index = 0; index < std::min<size_t>(inner.input_count(), 2); ++index) {
      if (!inner.HasInput(index)) continue;
      OnnxValue value = inner.Input(index);
      if (!value.shape || value.shape->size() != 3)
        Refuse("input " + std::to_string(index) + " of rank 3 is required");
      value.expr = inner.Bind(Call("expand_dims", {inner.Tensor(index)}, {"axis=2"}));
      value.shape->insert(value.shape->begin() + 2, 1);
      value.constant = nullptr;
      value.known_entries.reset();
      lifted_[index] = std::move(value);
    }
  }

  const onnx::NodeProto& node() const override { return node_; }
  int64_t opset() const override { return inner_.opset(); }
  const std::string& model_folder() const override { return inner_.model_folder(); }
  size_t input_count() const override { return inner_.input_count(); }
  bool HasInput(size_t index) const override { return inner_.HasInput(index); }
  const OnnxValue& Input(size_t index) const override {
    return index < 2 && lifted_[index] ? *lifted_[index] : inner_.Input(index);
  }
  std::string Tensor(size_t index) override {
    return index < 2 && lifted_[index] ? lifted_[index]->expr : inner_.Tensor(index);
  }
  std::string Weight(const std::string& hint, Ref<relay::Tensor> value) override {
    return inner_.Weight(hint, std::move(value));
  }
  std::string Subgraph(const std::string& attribute, const std::vector<OnnxValue>& inputs,
                       std::vector<OnnxValue>& outputs, const BlockResult& result) override {
    return inner_.Subgraph(attribute, inputs, outputs, result);
  }
  std::string Fresh(const std::string& hint) override { return inner_.Fresh(hint); }
  void Let(const std::string& variable, const std::string& expr) override {
    inner_.Let(variable, expr);
  }
  std::function<void()> Checkpoint() override { return inner_.Checkpoint(); }
  std::string AddGlobal(const std::string& hint, const std::string& definition) override {
    return inner_.AddGlobal(hint, definition);
  }
  bool OutputUsed(size_t index) const override { return inner_.OutputUsed(index); }

 private:
  ConvertContext& inner_;
  onnx::NodeProto node_;
  std::optional<OnnxValue> lifted_[2];
};

}  // namespace

Converter WithOneDimensional(Converter two_dimensional) {
  return [two_dimensional](ConvertContext& context) {
    if (!context.Input(0).shape || context.Input(0).shape->size() != 3)
      return two_dimensional(context);
    UnitHeightContext lifted(context);
    std::vector<OnnxValue> outputs = two_dimensional(lifted);
    for (OnnxValue& output : outputs) {
      output.expr = Call("squeeze", {output.expr}, {"axis=[2]"});
      if (output.shape && output.shape->size() == 4)
        output.shape->erase(output.shape->begin() + 2);
      else
        output.shape.reset();
    }
    return outputs;
  };
}

}  // namespace relay::onnx_import
