// LSTM, GRU and RNN: each direction a global function holding a recursive
// loop over the sequence's steps, whose length is only known at run time.
// The step reads `nn.dense(take(%x, %step, axis=0), %w)`, the form whose
// input projection the compiler's loop passes hoist out of the loop (as
// for the hand-written bench/models/lstm_*.relay).
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

enum class Kind { kLSTM, kGRU, kRNN };

// What the three layers share: X (seq, batch, input) of any length, static
// batch and input sizes, and the attributes that shape the loop.
struct RecurrentLayer {
  Kind kind;
  int64_t gates = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool reverse_only = false;             // direction "reverse"
  bool batch_first = false;              // layout 1
  std::vector<std::string> activations;  // Relay operators, per direction
  std::optional<float> clip;
  bool peepholes = false;
  bool with_outputs = false;      // Y (every step's state) is read
  bool sequence_lengths = false;  // sequence_lens: each batch row's length
  std::string StateType() const { return TypeText(DType::kFloat32, {batch, hidden}); }
};

std::string ActivationOperator(const std::string& name) {
  if (name == "Sigmoid") return "sigmoid";
  if (name == "Tanh") return "tanh";
  if (name == "Relu") return "nn.relu";
  Refuse("activation " + name + " is not supported");
}

RecurrentLayer CheckRecurrent(ConvertContext& context, Kind kind) {
  RecurrentLayer layer;
  layer.kind = kind;
  layer.gates = kind == Kind::kLSTM ? 4 : kind == Kind::kGRU ? 3 : 1;
  const std::string direction = context.StringAttribute("direction", "forward");
  if (direction == "bidirectional") {
    layer.directions = 2;
  } else if (direction == "reverse") {
    layer.reverse_only = true;
  } else if (direction != "forward") {
    Refuse("direction " + direction);
  }
  layer.batch_first = context.IntAttribute("layout", 0) != 0;
  layer.sequence_lengths = context.HasInput(4);
  if (layer.sequence_lengths && context.Input(4).dtype != DType::kInt32)
    Refuse("sequence_lens other than int32");
  if (context.Attribute("activation_alpha") || context.Attribute("activation_beta"))
    Refuse("activation_alpha and activation_beta are not supported");
  if (const onnx::AttributeProto* clip = context.Attribute("clip")) {
    if (!(clip->f() > 0)) Refuse("a clip that is not positive");
    layer.clip = clip->f();
  }
  const std::vector<std::string> defaults =
      kind == Kind::kLSTM  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : kind == Kind::kGRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                           : std::vector<std::string>{"Tanh"};
  if (const onnx::AttributeProto* activations = context.Attribute("activations")) {
    if (size_t(activations->strings_size()) != defaults.size() * size_t(layer.directions))
      Refuse("activations for another number of gates or directions");
    for (const std::string& name : activations->strings())
      layer.activations.push_back(ActivationOperator(name));
  } else {
    for (int64_t direction = 0; direction < layer.directions; ++direction) {
      for (const std::string& name : defaults)
        layer.activations.push_back(ActivationOperator(name));
    }
  }
  layer.with_outputs = context.OutputUsed(0);
  const OnnxValue& x = context.Input(0);
  if (!x.shape || x.shape->size() != 3) Refuse("X of rank 3 is required");
  if (x.dtype != DType::kFloat32) Refuse("only float32 is supported");
  const std::vector<int64_t> w = StaticShapeOf(context, 1);
  layer.hidden = context.IntAttribute("hidden_size", 0);
  layer.batch = (*x.shape)[layer.batch_first ? 0 : 1];
  layer.input = (*x.shape)[2];
  if (layer.input < 0) Refuse("X's input size must be known");
  if (layer.hidden <= 0 || w.size() != 3 || w[0] != layer.directions || w[1] % layer.gates != 0 ||
      w[1] / layer.gates != layer.hidden || w[2] != layer.input) {
    Refuse("W does not match hidden_size, direction and X");
  }
  layer.peepholes = kind == Kind::kLSTM && context.HasInput(7);
  return layer;
}

// Direction `direction`'s part of input `index` (its leading axis is the
// direction): a constant is sliced while importing, so no run copies it.
std::string OfDirection(ConvertContext& context, size_t index, int64_t direction) {
  const OnnxValue& value = context.Input(index);
  if (value.constant) {
    Shape shape = value.constant->shape();
    if (shape.empty() || shape[0] <= direction) Refuse("an input without a direction axis");
    shape.erase(shape.begin());
    const int64_t size = Product(std::vector<int64_t>(shape.begin(), shape.end()));
    Ref<relay::Tensor> part =
        relay::Tensor::View(value.constant->storage(),
                            value.constant->byte_offset() +
                                size_t(direction * size) * DTypeSize(value.constant->dtype()),
                            shape, value.constant->dtype());
    return context.Weight(context.node().input(int(index)), part);
  }
  return Call("take", {context.Tensor(index), std::to_string(direction)}, {"axis=0"});
}

// Zeros of shape `leading` + (batch, hidden), the batch read from the
// sequence `x` (seq, batch, input) when only known at run time.
std::string Zeros(const RecurrentLayer& layer, const std::string& x, std::vector<int64_t> leading) {
  ShapeEntries entries;
  for (int64_t dim : leading) {
    entries.known.push_back(dim);
    entries.exprs.push_back(std::to_string(dim) + "i64");
  }
  entries.known.insert(entries.known.end(), {layer.batch, layer.hidden});
  entries.exprs.push_back(Extent(x, std::vector<int64_t>{-1, layer.batch}, 1));
  entries.exprs.push_back(std::to_string(layer.hidden) + "i64");
  if (AllKnown(entries))
    return Call("zeros", {}, {"shape=" + IntList(entries.known), "dtype=\"float32\""});
  return Filled(entries, "0f", DType::kFloat32);
}

// The initial state of input `index` ([directions, batch, hidden], or
// [batch, directions, hidden] batch first) for `direction`, or zeros.
std::string InitialState(ConvertContext& context, size_t index, const RecurrentLayer& layer,
                         int64_t direction, const std::string& x) {
  if (!context.HasInput(index)) return Zeros(layer, x, {});
  if (!layer.batch_first) return OfDirection(context, index, direction);
  return Call("take", {context.Tensor(index), std::to_string(direction)}, {"axis=1"});
}

// B ([directions, 2 * gates * hidden]) for `direction`, as its input and
// recurrent halves, or zeros.
std::pair<std::string, std::string> Biases(ConvertContext& context, const RecurrentLayer& layer,
                                           int64_t direction) {
  const int64_t size = layer.gates * layer.hidden;
  if (!context.HasInput(3)) {
    const std::string zeros = Call("zeros", {}, {"shape=" + IntList({size}), "dtype=\"float32\""});
    return {zeros, zeros};
  }
  const std::string b = context.Bind(OfDirection(context, 3, direction));
  return {Call("strided_slice", {b}, {"begin=[0]", "end=" + IntList({size})}),
          Call("strided_slice", {b}, {"begin=" + IntList({size}), "end=" + IntList({2 * size})})};
}

// One step of the layer: bindings over %x, %step, the weights and the
// states, and the next states' expressions.
struct Step {
  std::string bindings;
  std::vector<std::string> next;
};

Step CellStep(const RecurrentLayer& layer, int64_t direction) {
  const std::string* f =
      &layer.activations[size_t(direction) * layer.activations.size() / size_t(layer.directions)];
  auto clipped = [&](const std::string& x) {
    if (!layer.clip) return x;
    return Call("clip", {x},
                {"a_min=" + FloatText(-*layer.clip), "a_max=" + FloatText(*layer.clip)});
  };
  const std::string input = "nn.dense(take(%x, %step, axis=0), %w)";
  Step step;
  switch (layer.kind) {
    case Kind::kLSTM: {
      // Gates i, o, f, c in ONNX's order; peepholes add P_i * c, P_f * c and
      // P_o * (the new cell) to the i, f and o gates.
      auto gate = [&](int part, const std::string& peephole) {
        std::string pre = "%parts." + std::to_string(part);
        if (layer.peepholes)
          pre = Call("add", {pre, Call("multiply",
                                       {peephole, "%" + std::string(part == 1 ? "cell" : "c")})});
        return Call(f[0], {clipped(pre)});
      };
      step.bindings = "      let %gates = add(add(" + input +
                      ", nn.dense(%h, %r)), %b);\n"
                      "      let %parts = split(%gates, indices_or_sections=4, axis=1);\n"
                      "      let %cell = add(multiply(" +
                      gate(2, "%pf") + ", %c), multiply(" + gate(0, "%pi") + ", " +
                      Call(f[1], {clipped("%parts.3")}) + "));\n";
      step.next = {Call("multiply", {gate(1, "%po"), Call(f[2], {"%cell"})}), "%cell"};
      break;
    }
    case Kind::kGRU: {
      // Gates z, r, h in ONNX's order; the candidate's pre-activation is
      // %linear_before_reset, which LayerFunction fills in (GruCandidate).
      step.bindings =
          "      let %xs = split(add(" + input +
          ", %wb), indices_or_sections=3, axis=1);\n"
          "      let %hs = split(add(nn.dense(%h, %r), %rb), indices_or_sections=3, axis=1);\n"
          "      let %update = " +
          Call(f[0], {clipped("add(%xs.0, %hs.0)")}) +
          ";\n"
          "      let %reset = " +
          Call(f[0], {clipped("add(%xs.1, %hs.1)")}) +
          ";\n"
          "      let %candidate = " +
          Call(f[1], {clipped("%linear_before_reset")}) + ";\n";
      step.next = {"add(multiply(subtract(1f, %update), %candidate), multiply(%update, %h))"};
      break;
    }
    case Kind::kRNN:
      step.bindings = "";
      step.next = {Call(f[0], {clipped("add(add(" + input + ", nn.dense(%h, %r)), %b)")})};
      break;
  }
  return step;
}

// The global function of one direction:
//   @NAME(%x, weights..., initial states...) -> (states... [, Y])
// with Y (every step's first state, stacked) when the node's Y is read.
std::string LayerFunction(const RecurrentLayer& layer, int64_t direction,
                          const std::string& linear_before_reset) {
  const std::string t = layer.StateType();
  const std::string gh = std::to_string(layer.gates * layer.hidden);
  const std::string vector = "Tensor[(" + gh + ",), float32]";
  std::string parameters = "%x: " + TypeText(DType::kFloat32, {-1, layer.batch, layer.input}) +
                           ", %w: Tensor[(" + gh + ", " + std::to_string(layer.input) +
                           "), float32], %r: Tensor[(" + gh + ", " + std::to_string(layer.hidden) +
                           "), float32]";
  parameters +=
      layer.kind == Kind::kGRU ? ", %wb: " + vector + ", %rb: " + vector : ", %b: " + vector;
  if (layer.peepholes) {
    const std::string p = TypeText(DType::kFloat32, {layer.hidden});
    parameters += ", %pi: " + p + ", %po: " + p + ", %pf: " + p;
  }
  if (layer.sequence_lengths) parameters += ", %lengths: " + TypeText(DType::kInt32, {layer.batch});
  std::vector<std::string> states = {"%h"};
  if (layer.kind == Kind::kLSTM) states.push_back("%c");
  std::string state_parameters, state_types, state_values;
  for (const std::string& state : states) {
    parameters += ", " + state + "0: " + t;
    state_parameters += ", " + state + ": " + t;
    state_types += (state_types.empty() ? "" : ", ") + t;
    state_values += (state_values.empty() ? "" : ", ") + state;
  }
  const std::string outputs_type = TypeText(DType::kFloat32, {-1, layer.batch, layer.hidden});
  if (layer.with_outputs) {
    state_parameters += ", %y: " + outputs_type;
    state_types += ", " + outputs_type;
    state_values += ", %y";
  }
  if (!layer.with_outputs && states.size() == 1) {
    state_types += ",";
    state_values += ",";
  }
  Step step = CellStep(layer, direction);
  // GRU's candidate names its pre-activation %linear_before_reset.
  for (size_t at = step.bindings.find("%linear_before_reset"); at != std::string::npos;
       at = step.bindings.find("%linear_before_reset", at))
    step.bindings.replace(at, 20, linear_before_reset);
  std::string next = "add(%step, 1)";
  std::string output = "%state";
  if (layer.sequence_lengths) {
    // A row past its length keeps its states, and its outputs are zeros.
    step.bindings += "      let %live = expand_dims(less(%step, %lengths), axis=1);\n";
    for (size_t index = 0; index < states.size(); ++index) {
      const std::string name = "%next_" + std::to_string(index);
      step.bindings += "      let " + name + " = " + step.next[index] + ";\n";
      step.next[index] = Where("%live", name, states[index]);
    }
    output = Where("%live", "%next_0", "zeros_like(%next_0)");
  }
  if (layer.with_outputs) {
    // The new state is read twice: bound once.
    step.bindings += "      let %state = " + step.next[0] + ";\n";
    step.next[0] = "%state";
  }
  for (const std::string& state : step.next) next += ", " + state;
  if (layer.with_outputs)
    next += ", concatenate((%y, expand_dims(" + output + ", axis=0)), axis=0)";
  std::string initial = "0";
  for (const std::string& state : states) initial += ", " + state + "0";
  if (layer.with_outputs) {
    initial += ", " + Zeros(layer, "%x", {0});
  }
  return "def @NAME(" + parameters + ") -> (" + state_types +
         ") {\n"
         "  let %length = take(shape_of(%x), 0, axis=0);\n"
         "  let %loop = fn (%step: int32" +
         state_parameters + ") -> (" + state_types +
         ") {\n"
         "    if (less(%step, %length)) {\n" +
         step.bindings + "      %loop(" + next +
         ")\n"
         "    } else {\n"
         "      (" +
         state_values +
         ")\n"
         "    }\n"
         "  };\n"
         "  %loop(" +
         initial +
         ")\n"
         "}\n";
}

// The GRU candidate's pre-activation (see CellStep).
std::string GruCandidate(ConvertContext& context, const RecurrentLayer& layer) {
  if (layer.kind != Kind::kGRU) return "";
  const std::string h2 = std::to_string(2 * layer.hidden);
  const std::string h3 = std::to_string(3 * layer.hidden);
  if (context.IntAttribute("linear_before_reset", 0) != 0)
    return "add(%xs.2, multiply(%reset, %hs.2))";
  return "add(%xs.2, add(nn.dense(multiply(%reset, %h), strided_slice(%r, begin=[" + h2 +
         "], end=[" + h3 + "])), strided_slice(%rb, begin=[" + h2 + "], end=[" + h3 + "])))";
}

// `sequence` (seq, batch, features) in reverse step order: each batch
// row's first `length` steps reversed (the rest, past its sequence_lens
// length, stay), or all of them without sequence_lens.
std::string Reversed(ConvertContext& context, const RecurrentLayer& layer,
                     const std::string& sequence) {
  if (!layer.sequence_lengths) return Call("reverse", {sequence}, {"axis=0"});
  // Step t of row b reads step length_b - 1 - t where t < length_b.
  const std::string steps = Call(
      "reshape",
      {Call("arange", {"0", Call("take", {Call("shape_of", {sequence}), "0"}, {"axis=0"}), "1"},
            {"dtype=\"int32\""})},
      {"newshape=[-1, 1]"});
  const std::string lengths = Call("expand_dims", {context.Tensor(4)}, {"axis=0"});
  const std::string source =
      Where(Call("less", {steps, lengths}),
            Call("subtract", {Call("subtract", {lengths, "1"}), steps}), steps);
  const std::string indices =
      Call("broadcast_to_like", {Call("expand_dims", {source}, {"axis=2"}), sequence});
  return Call("gather", {sequence, indices}, {"axis=0"});
}

// The layer: one loop per direction (the reverse one over the sequence
// reversed), then the node's Y, Y_h (and Y_c) from their results.
std::vector<OnnxValue> ConvertRecurrent(ConvertContext& context, Kind kind) {
  const RecurrentLayer layer = CheckRecurrent(context, kind);
  if (kind == Kind::kLSTM && context.IntAttribute("input_forget", 0) != 0)
    Refuse("input_forget is not supported");
  std::string x = context.Tensor(0);
  if (layer.batch_first) x = context.Bind(Call("transpose", {x}, {"axes=[1, 0, 2]"}));
  const std::string names[] = {"lstm", "gru", "rnn"};
  const std::string function =
      context.AddGlobal(names[int(kind)], LayerFunction(layer, 0, GruCandidate(context, layer)));
  // The backward direction shares the function unless its activations differ.
  const size_t half = layer.activations.size() / 2;
  const bool same = layer.directions == 1 ||
                    std::equal(layer.activations.begin(), layer.activations.begin() + half,
                               layer.activations.begin() + half);
  const std::string reverse_function =
      same ? function
           : context.AddGlobal(names[int(kind)],
                               LayerFunction(layer, 1, GruCandidate(context, layer)));
  const size_t state_count = kind == Kind::kLSTM ? 2 : 1;
  // Per direction, the bound tuple of its loop's results.
  std::vector<std::string> results;
  for (int64_t direction = 0; direction < layer.directions; ++direction) {
    const bool backwards = layer.reverse_only || direction == 1;
    std::vector<std::string> arguments{backwards ? context.Bind(Reversed(context, layer, x)) : x,
                                       OfDirection(context, 1, direction),
                                       OfDirection(context, 2, direction)};
    const auto [input_bias, recurrent_bias] = Biases(context, layer, direction);
    if (kind == Kind::kGRU) {
      arguments.push_back(input_bias);
      arguments.push_back(recurrent_bias);
    } else {
      arguments.push_back(Call("add", {input_bias, recurrent_bias}));
    }
    if (layer.peepholes) {
      const std::string p = context.Bind(OfDirection(context, 7, direction));
      for (int part = 0; part < 3; ++part) {
        arguments.push_back(Call("strided_slice", {p},
                                 {"begin=" + IntList({part * layer.hidden}),
                                  "end=" + IntList({(part + 1) * layer.hidden})}));
      }
    }
    if (layer.sequence_lengths) arguments.push_back(context.Tensor(4));
    arguments.push_back(InitialState(context, 5, layer, direction, x));
    if (kind == Kind::kLSTM) arguments.push_back(InitialState(context, 6, layer, direction, x));
    results.push_back(context.Bind(Call(direction == 1 ? reverse_function : function, arguments)));
  }
  // Y: (seq, directions, batch, hidden), or (batch, seq, directions, hidden)
  // batch first; each direction's steps in the sequence's order.
  std::vector<OnnxValue> values;
  if (layer.with_outputs) {
    std::string parts;
    for (int64_t direction = 0; direction < layer.directions; ++direction) {
      std::string steps = results[size_t(direction)] + "." + std::to_string(state_count);
      if (layer.reverse_only || direction == 1) steps = Reversed(context, layer, steps);
      parts += (direction ? ", " : "") + steps;
    }
    std::string y = Call("stack", {"(" + parts + (layer.directions == 1 ? ",)" : ")")}, {"axis=1"});
    if (layer.batch_first) y = Call("transpose", {y}, {"axes=[2, 0, 1, 3]"});
    values.push_back(Result(y));
  } else {
    values.push_back(Result(""));
  }
  // Y_h and Y_c: (directions, batch, hidden), or (batch, directions, hidden).
  for (size_t state = 0; state < state_count; ++state) {
    if (!context.OutputUsed(state + 1)) {
      values.push_back(Result(""));
      continue;
    }
    std::string parts;
    for (int64_t direction = 0; direction < layer.directions; ++direction)
      parts += (direction ? ", " : "") + results[size_t(direction)] + "." + std::to_string(state);
    values.push_back(Result(Call("stack", {"(" + parts + (layer.directions == 1 ? ",)" : ")")},
                                 {"axis=" + std::string(layer.batch_first ? "1" : "0")})));
  }
  return values;
}

}  // namespace

void AddRecurrentConverters(std::map<std::string, Converter>& table) {
  table["LSTM"] = [](ConvertContext& context) { return ConvertRecurrent(context, Kind::kLSTM); };
  table["GRU"] = [](ConvertContext& context) { return ConvertRecurrent(context, Kind::kGRU); };
  table["RNN"] = [](ConvertContext& context) { return ConvertRecurrent(context, Kind::kRNN); };
}

}  // namespace relay::onnx_import
