// LSTM and GRU: each a global function holding a recursive loop over the
// sequence's steps, whose length is only known at run time.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// What LSTM and GRU share: one forward layer over X (seq, batch, input) of
// any length, with the default activations; the rest is Unsupported.
struct RecurrentLayer {
  int64_t batch = 0, input = 0, hidden = 0;
  std::string tensor_type;  // Tensor[(batch, hidden), dtype]
};

RecurrentLayer CheckRecurrent(ConvertContext& context, int64_t gates) {
  if (context.StringAttribute("direction", "forward") != "forward")
    Refuse("only the forward direction is supported");
  if (context.IntAttribute("layout", 0) != 0) Refuse("layout 1 (batch first) is not supported");
  if (context.Attribute("activations") != nullptr) Refuse("activations other than the defaults");
  if (context.Attribute("clip") != nullptr) Refuse("clip is not supported");
  if (context.HasInput(4)) Refuse("sequence_lens is not supported");
  if (context.OutputUsed(0)) Refuse("its Y output (every step's state) is not supported yet");
  const OnnxValue& x = context.Input(0);
  if (!x.shape || x.shape->size() != 3) Refuse("X of rank 3 is required");
  if (x.dtype != DType::kFloat32) Refuse("only float32 is supported");
  const std::vector<int64_t> w = StaticShapeOf(context, 1);
  RecurrentLayer layer;
  layer.hidden = context.IntAttribute("hidden_size", 0);
  layer.batch = (*x.shape)[1];
  layer.input = (*x.shape)[2];
  if (layer.batch < 0 || layer.input < 0) Refuse("X's batch and input sizes must be known");
  if (layer.hidden <= 0 || w.size() != 3 || w[0] != 1 || w[1] != gates * layer.hidden ||
      w[2] != layer.input) {
    Refuse("W does not match hidden_size and X");
  }
  layer.tensor_type = "Tensor[(" + std::to_string(layer.batch) + ", " +
                      std::to_string(layer.hidden) + "), float32]";
  return layer;
}

// Input `index` without its leading direction axis (of extent 1): a
// constant weight is reshaped while importing, so that no run copies it.
std::string WithoutDirection(ConvertContext& context, size_t index) {
  const OnnxValue& value = context.Input(index);
  if (value.constant) {
    Shape shape = value.constant->shape();
    shape.erase(shape.begin());
    return context.Weight(context.node().input(int(index)), value.constant->Reshape(shape));
  }
  return Call("squeeze", {context.Tensor(index)}, {"axis=[0]"});
}

// Input `index` (a [1, batch, hidden] state) without its direction axis, or
// zeros.
std::string InitialState(ConvertContext& context, size_t index, const RecurrentLayer& layer) {
  if (context.HasInput(index)) return WithoutDirection(context, index);
  return Call("zeros", {}, {"shape=" + IntList({layer.batch, layer.hidden}), "dtype=\"float32\""});
}

// B ([1, 2 * gates * hidden]) as its input and recurrent halves, or zeros.
std::pair<std::string, std::string> Biases(ConvertContext& context, int64_t size) {
  if (!context.HasInput(3)) {
    const std::string zeros = Call("zeros", {}, {"shape=" + IntList({size}), "dtype=\"float32\""});
    return {zeros, zeros};
  }
  const std::string b = WithoutDirection(context, 3);
  return {Call("strided_slice", {b}, {"begin=[0]", "end=" + IntList({size})}),
          Call("strided_slice", {b}, {"begin=" + IntList({size}), "end=" + IntList({2 * size})})};
}

// The states after the loop, as the node's Y_h (and Y_c) outputs.
std::vector<OnnxValue> RecurrentOutputs(ConvertContext& context, const std::string& states,
                                        int outputs) {
  // Y: unread (refused above otherwise), so never bound.
  std::vector<OnnxValue> results{Result("")};
  for (int index = 0; index < outputs; ++index) {
    results.push_back(
        Result(context.OutputUsed(size_t(index) + 1)
                   ? Call("expand_dims", {states + "." + std::to_string(index)}, {"axis=0"})
                   : ""));
  }
  return results;
}

// LSTM (gates i, o, f, c in ONNX's order): a recursive loop over the
// sequence's steps, its length only known at run time.
std::vector<OnnxValue> ConvertLSTM(ConvertContext& context) {
  const RecurrentLayer layer = CheckRecurrent(context, 4);
  if (context.HasInput(7)) Refuse("peepholes (P) are not supported");
  if (context.IntAttribute("input_forget", 0) != 0) Refuse("input_forget is not supported");
  const std::string t = layer.tensor_type;
  const std::string definition =
      "def @NAME(%x: Tensor[(?, " + std::to_string(layer.batch) + ", " +
      std::to_string(layer.input) + "), float32], %w: Tensor[(" + std::to_string(4 * layer.hidden) +
      ", " + std::to_string(layer.input) + "), float32], %r: Tensor[(" +
      std::to_string(4 * layer.hidden) + ", " + std::to_string(layer.hidden) +
      "), float32], %b: Tensor[(" + std::to_string(4 * layer.hidden) + ",), float32], %h0: " + t +
      ", %c0: " + t + ") -> (" + t + ", " + t +
      ") {\n"
      "  let %length = take(shape_of(%x), 0, axis=0);\n"
      "  let %loop = fn (%step: int32, %h: " +
      t + ", %c: " + t + ") -> (" + t + ", " + t +
      ") {\n"
      "    if (less(%step, %length)) {\n"
      "      let %gates = add(add(nn.dense(take(%x, %step, axis=0), %w), nn.dense(%h, %r)), %b);\n"
      "      let %parts = split(%gates, indices_or_sections=4, axis=1);\n"
      "      let %cell = add(multiply(sigmoid(%parts.2), %c), multiply(sigmoid(%parts.0), "
      "tanh(%parts.3)));\n"
      "      %loop(add(%step, 1), multiply(sigmoid(%parts.1), tanh(%cell)), %cell)\n"
      "    } else {\n"
      "      (%h, %c)\n"
      "    }\n"
      "  };\n"
      "  %loop(0, %h0, %c0)\n"
      "}\n";
  const std::string function = context.AddGlobal("lstm", definition);
  const auto [input_bias, recurrent_bias] = Biases(context, 4 * layer.hidden);
  const std::string states = context.Bind(
      Call(function, {context.Tensor(0), WithoutDirection(context, 1), WithoutDirection(context, 2),
                      Call("add", {input_bias, recurrent_bias}), InitialState(context, 5, layer),
                      InitialState(context, 6, layer)}));
  return RecurrentOutputs(context, states, 2);
}

// GRU (gates z, r, h in ONNX's order), as LSTM's loop.
std::vector<OnnxValue> ConvertGRU(ConvertContext& context) {
  const RecurrentLayer layer = CheckRecurrent(context, 3);
  const bool linear_before_reset = context.IntAttribute("linear_before_reset", 0) != 0;
  const std::string t = layer.tensor_type;
  const std::string h3 = std::to_string(3 * layer.hidden), h = std::to_string(layer.hidden);
  // The candidate: tanh(x_h + r * (h R_h + Rb_h)) with linear_before_reset,
  // else tanh(x_h + (r * h) R_h + Rb_h).
  const std::string candidate =
      linear_before_reset
          ? "tanh(add(%xs.2, multiply(%reset, %hs.2)))"
          : "tanh(add(%xs.2, add(nn.dense(multiply(%reset, %h), strided_slice(%r, begin=[" +
                std::to_string(2 * layer.hidden) + "], end=[" + h3 +
                "])), strided_slice(%rb, begin=[" + std::to_string(2 * layer.hidden) + "], end=[" +
                h3 + "]))))";
  const std::string definition =
      "def @NAME(%x: Tensor[(?, " + std::to_string(layer.batch) + ", " +
      std::to_string(layer.input) + "), float32], %w: Tensor[(" + h3 + ", " +
      std::to_string(layer.input) + "), float32], %r: Tensor[(" + h3 + ", " + h +
      "), float32], %wb: Tensor[(" + h3 + ",), float32], %rb: Tensor[(" + h3 +
      ",), float32], %h0: " + t + ") -> (" + t +
      ",) {\n"
      "  let %length = take(shape_of(%x), 0, axis=0);\n"
      "  let %loop = fn (%step: int32, %h: " +
      t + ") -> (" + t +
      ",) {\n"
      "    if (less(%step, %length)) {\n"
      "      let %xs = split(add(nn.dense(take(%x, %step, axis=0), %w), %wb), "
      "indices_or_sections=3, axis=1);\n"
      "      let %hs = split(add(nn.dense(%h, %r), %rb), indices_or_sections=3, axis=1);\n"
      "      let %update = sigmoid(add(%xs.0, %hs.0));\n"
      "      let %reset = sigmoid(add(%xs.1, %hs.1));\n"
      "      let %candidate = " +
      candidate +
      ";\n"
      "      %loop(add(%step, 1), add(multiply(subtract(1f, %update), %candidate), "
      "multiply(%update, %h)))\n"
      "    } else {\n"
      "      (%h,)\n"
      "    }\n"
      "  };\n"
      "  %loop(0, %h0)\n"
      "}\n";
  const std::string function = context.AddGlobal("gru", definition);
  const auto [input_bias, recurrent_bias] = Biases(context, 3 * layer.hidden);
  const std::string states = context.Bind(
      Call(function, {context.Tensor(0), WithoutDirection(context, 1), WithoutDirection(context, 2),
                      input_bias, recurrent_bias, InitialState(context, 5, layer)}));
  return RecurrentOutputs(context, states, 1);
}
}  // namespace

void AddRecurrentConverters(std::map<std::string, Converter>& table) {
  table["LSTM"] = ConvertLSTM;
  table["GRU"] = ConvertGRU;
}

}  // namespace relay::onnx_import
