// If, Loop and Scan: Relay's if, and recursive local functions.
#include <onnx/onnx_pb.h>

#include <functional>

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
  const std::string then_block = context.Subgraph("then_branch", {}, then_outputs);
  const std::string else_block = context.Subgraph("else_branch", {}, else_outputs);
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

// A scalar of input `index` (a tensor of one element, as ONNX allows for
// trip counts and conditions), bound once outside the loop.
std::string ScalarInput(ConvertContext& context, size_t index) {
  const OnnxValue& value = context.Input(index);
  const std::string expr = context.Tensor(index);
  if (value.shape && value.shape->empty()) return expr;
  return context.Bind(Call("reshape", {expr}, {"newshape=[]"}));
}

OnnxValue Variable(const std::string& expr, DType dtype, std::vector<int64_t> shape) {
  OnnxValue value = Shaped(expr, std::move(shape));
  value.dtype = dtype;
  return value;
}

// What a loop's body hands from one step to the next: its initial value
// and the type its parameter is given.
struct Carried {
  std::string initial;
  std::string parameter;
  DType dtype;
  std::vector<int64_t> shape;  // -1 where a step may change the dimension
};

// A scan output: each step's value stacked along a new leading axis, in
// an accumulator that starts empty.
struct Stacked {
  std::string parameter;
  DType dtype;
  std::vector<int64_t> step_shape;
  bool prepend = false;  // a reverse scan output
  std::string Initial() const {
    std::vector<int64_t> shape = step_shape;
    shape.insert(shape.begin(), 0);
    return Call("zeros", {},
                {"shape=" + IntList(shape), "dtype=\"" + std::string(DTypeName(dtype)) + "\""});
  }
  std::string Type() const {
    std::vector<int64_t> shape = step_shape;
    shape.insert(shape.begin(), -1);
    return TypeText(dtype, shape);
  }
  std::string Append(const std::string& step) const {
    const std::string row = Call("expand_dims", {step}, {"axis=0"});
    return Call("concatenate",
                {"(" + (prepend ? row + ", " + parameter : parameter + ", " + row) + ")"},
                {"axis=0"});
  }
};

// Converts the body `attribute` until the carried values' types hold: a
// dimension a step changes becomes `?` and the body is converted again
// (at most once per dimension). `inputs` makes the body's inputs from the
// carried values; `carried_output` is where the carried values start among
// the body's outputs; the stacked outputs follow them, and their per-step
// shapes are taken from the body.
std::string ConvertBody(ConvertContext& context, std::vector<Carried>& carried,
                        size_t stacked_count, size_t carried_output,
                        const std::function<std::vector<OnnxValue>()>& inputs,
                        const ConvertContext::BlockResult& result,
                        std::vector<OnnxValue>& outputs) {
  for (;;) {
    std::function<void()> undo = context.Checkpoint();
    outputs.clear();
    const std::string block = context.Subgraph("body", inputs(), outputs, result);
    if (outputs.size() != carried_output + carried.size() + stacked_count) {
      Refuse("its body has " + std::to_string(outputs.size()) + " outputs, not " +
             std::to_string(carried_output + carried.size() + stacked_count));
    }
    bool changed = false;
    for (size_t index = 0; index < carried.size(); ++index) {
      const OnnxValue& output = outputs[carried_output + index];
      Carried& value = carried[index];
      if (output.dtype != value.dtype) Refuse("a loop-carried value changes its dtype");
      if (!output.shape || output.shape->size() != value.shape.size())
        Refuse("a loop-carried value whose rank changes or is unknown");
      for (size_t axis = 0; axis < value.shape.size(); ++axis) {
        if (value.shape[axis] >= 0 && (*output.shape)[axis] != value.shape[axis]) {
          value.shape[axis] = -1;
          changed = true;
        }
      }
    }
    if (!changed) return block;
    undo();
  }
}

// The loop function's text: its parameters (the step counter and what
// `extra` adds, the carried values, the accumulators), a test, and the
// body's block, which calls the function again.
std::string LoopFunction(const std::vector<std::string>& leading,
                         const std::vector<Carried>& carried, const std::vector<Stacked>& stacked,
                         const std::string& test, const std::string& block) {
  std::string parameters, types, finals;
  for (const std::string& parameter : leading)
    parameters += (parameters.empty() ? "" : ", ") + parameter;
  auto add = [&](const std::string& parameter, const std::string& type) {
    parameters += ", " + parameter + ": " + type;
    types += (types.empty() ? "" : ", ") + type;
    finals += (finals.empty() ? "" : ", ") + parameter;
  };
  for (const Carried& value : carried) add(value.parameter, TypeText(value.dtype, value.shape));
  for (const Stacked& value : stacked) add(value.parameter, value.Type());
  const bool single = carried.size() + stacked.size() == 1;
  // The block is written for its scope's depth; the function and its `if`
  // nest it one level deeper.
  std::string nested;
  for (char c : block) nested += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return "fn (" + parameters + ") -> (" + types + (single ? ",)" : ")") + " {\n    if (" + test +
         ") " + nested + " else {\n      (" + finals + (single ? ",)" : ")") + "\n    }\n  }";
}

// The loop's results: the carried values' last values, then the stacked
// outputs (moved to `axes` when given).
std::vector<OnnxValue> LoopResults(ConvertContext& context, const std::string& call,
                                   const std::vector<Carried>& carried,
                                   const std::vector<Stacked>& stacked,
                                   const std::vector<int64_t>& axes = {}) {
  const std::string results = context.Bind(call);
  std::vector<OnnxValue> values;
  size_t index = 0;
  for (const Carried& value : carried)
    values.push_back(Variable(results + "." + std::to_string(index++), value.dtype, value.shape));
  for (size_t scan = 0; scan < stacked.size(); ++scan) {
    const Stacked& value = stacked[scan];
    std::vector<int64_t> shape = value.step_shape;
    shape.insert(shape.begin(), -1);
    std::string expr = results + "." + std::to_string(index++);
    const int64_t axis = axes.empty() ? 0 : NormalizeAxis(axes[scan], shape.size());
    if (axis != 0) {
      std::vector<int64_t> order;
      for (int64_t dim = 1; dim < int64_t(shape.size()); ++dim) order.push_back(dim);
      order.insert(order.begin() + axis, 0);
      std::vector<int64_t> moved;
      for (int64_t dim : order) moved.push_back(shape[size_t(dim)]);
      expr = Call("transpose", {expr}, {"axes=" + IntList(order)});
      shape = moved;
    }
    values.push_back(Variable(expr, value.dtype, shape));
  }
  return values;
}

// Input `index` as a carried value's initial value, its parameter named
// from `hint`.
Carried CarriedInput(ConvertContext& context, size_t index, const std::string& hint) {
  const OnnxValue& value = context.Input(index);
  if (!value.shape) Refuse("input " + std::to_string(index) + " has an unknown rank");
  return Carried{context.Tensor(index), context.Fresh(hint), value.dtype, *value.shape};
}

// Each stacked output's per-step shape and dtype, from a conversion of the
// body; the shape must be known while importing (the accumulator starts as
// zeros of it).
void StackedShapes(std::vector<Stacked>& stacked, const std::vector<OnnxValue>& outputs,
                   size_t first) {
  for (size_t index = 0; index < stacked.size(); ++index) {
    const OnnxValue& output = outputs[first + index];
    if (!output.shape) Refuse("a scan output of unknown rank");
    for (int64_t dim : *output.shape) {
      if (dim < 0) Refuse("a scan output whose shape is only known at run time");
    }
    stacked[index].dtype = output.dtype;
    stacked[index].step_shape = *output.shape;
  }
}

// Loop: a recursive local function over (iteration, condition, carried
// values..., scan accumulators...), which runs the body while the trip
// count and the condition allow, and otherwise returns.
std::vector<OnnxValue> ConvertLoop(ConvertContext& context) {
  const size_t outputs = size_t(context.node().output_size());
  if (context.input_count() < 2) Refuse("a Loop needs its trip count and condition inputs");
  const size_t carried_count = context.input_count() - 2;
  if (outputs < carried_count) Refuse("fewer outputs than loop-carried values");
  std::string trip_count;
  if (context.HasInput(0)) {
    if (context.Input(0).dtype != DType::kInt64) Refuse("a trip count other than int64");
    trip_count = ScalarInput(context, 0);
  }
  const bool has_condition = context.HasInput(1);
  std::string condition_initial = "True";
  if (has_condition) {
    if (context.Input(1).dtype != DType::kBool) Refuse("a condition other than bool");
    condition_initial = ScalarInput(context, 1);
  }
  std::vector<Carried> carried;
  for (size_t index = 0; index < carried_count; ++index)
    carried.push_back(CarriedInput(context, 2 + index, "state"));
  std::vector<Stacked> stacked(outputs - carried_count);
  for (Stacked& value : stacked) value.parameter = context.Fresh("scan");
  const std::string loop = context.Fresh("loop");
  const std::string iteration = context.Fresh("iteration");
  const std::string condition = context.Fresh("condition");

  auto inputs = [&]() {
    std::vector<OnnxValue> values{Variable(iteration, DType::kInt64, {}),
                                  Variable(condition, DType::kBool, {})};
    for (const Carried& value : carried)
      values.push_back(Variable(value.parameter, value.dtype, value.shape));
    return values;
  };
  std::vector<OnnxValue> body_outputs;
  auto next = [&](const std::vector<std::string>& results) {
    if (results.size() != 1 + carried.size() + stacked.size())
      Refuse("its body has " + std::to_string(results.size()) + " outputs, not " +
             std::to_string(1 + carried.size() + stacked.size()));
    // Without a condition input, the body's condition output is ignored.
    std::string next_condition = "True";
    if (has_condition) {
      const OnnxValue& output = body_outputs[0];
      if (output.dtype != DType::kBool) Refuse("a body condition other than bool");
      next_condition = output.shape && output.shape->empty()
                           ? results[0]
                           : Call("reshape", {results[0]}, {"newshape=[]"});
    }
    std::vector<std::string> arguments{Call("add", {iteration, "1i64"}), next_condition};
    for (size_t index = 0; index < carried.size(); ++index) arguments.push_back(results[1 + index]);
    for (size_t index = 0; index < stacked.size(); ++index)
      arguments.push_back(stacked[index].Append(results[1 + carried.size() + index]));
    return Call(loop, arguments);
  };
  // The stacked outputs' shapes come from a first conversion of the body.
  if (!stacked.empty()) {
    std::function<void()> undo = context.Checkpoint();
    ConvertBody(context, carried, stacked.size(), 1, inputs, {}, body_outputs);
    StackedShapes(stacked, body_outputs, 1 + carried.size());
    undo();
  }
  const std::string block =
      ConvertBody(context, carried, stacked.size(), 1, inputs, next, body_outputs);

  std::string test = "True";
  if (!trip_count.empty()) test = Call("less", {iteration, trip_count});
  if (has_condition) test = test == "True" ? condition : Call("logical_and", {condition, test});
  context.Let(loop, LoopFunction({iteration + ": int64", condition + ": bool"}, carried, stacked,
                                 test, block));
  std::vector<std::string> arguments{"0i64", condition_initial};
  for (const Carried& value : carried) arguments.push_back(value.initial);
  for (const Stacked& value : stacked) arguments.push_back(value.Initial());
  return LoopResults(context, Call(loop, arguments), carried, stacked);
}

// Scan (opset 9 on): a recursive local function over the scanned axis of
// its scan inputs, each step reading one slice of each (from the end for
// a reverse direction) and stacking its scan outputs.
std::vector<OnnxValue> ConvertScan(ConvertContext& context) {
  if (context.opset() < 9) Refuse("Scan before opset 9 (with a batch axis) is not supported");
  const int64_t scan_inputs = context.IntAttribute("num_scan_inputs", 0);
  if (scan_inputs <= 0 || size_t(scan_inputs) > context.input_count())
    Refuse("num_scan_inputs does not match the inputs");
  const size_t state_count = context.input_count() - size_t(scan_inputs);
  const size_t outputs = size_t(context.node().output_size());
  if (outputs < state_count) Refuse("fewer outputs than states");
  auto list = [&](const std::string& name, size_t count) {
    std::vector<int64_t> values = context.IntsAttribute(name).value_or(std::vector<int64_t>{});
    if (values.empty()) values.assign(count, 0);
    if (values.size() != count) Refuse(name + " does not match the scan inputs or outputs");
    return values;
  };
  const std::vector<int64_t> input_axes = list("scan_input_axes", size_t(scan_inputs));
  const std::vector<int64_t> input_directions = list("scan_input_directions", size_t(scan_inputs));
  const std::vector<int64_t> output_axes = list("scan_output_axes", outputs - state_count);
  const std::vector<int64_t> output_directions =
      list("scan_output_directions", outputs - state_count);

  std::vector<Carried> carried;
  for (size_t index = 0; index < state_count; ++index)
    carried.push_back(CarriedInput(context, index, "state"));
  // The scanned tensors, and the length of their scanned axis.
  std::vector<std::string> scanned;
  std::vector<size_t> axes;
  std::string length;
  for (size_t index = 0; index < size_t(scan_inputs); ++index) {
    const size_t input = state_count + index;
    const size_t rank = RankOf(context, input);
    axes.push_back(size_t(NormalizeAxis(input_axes[index], rank)));
    scanned.push_back(context.Tensor(input));
    if (index == 0) {
      length = Extent(scanned[0], context.Input(input).shape, axes[0]);
      if (length.find('(') != std::string::npos) length = context.Bind(length);
    }
  }
  std::vector<Stacked> stacked(outputs - state_count);
  for (size_t index = 0; index < stacked.size(); ++index) {
    stacked[index].parameter = context.Fresh("scan");
    stacked[index].prepend = output_directions[index] != 0;
  }
  const std::string loop = context.Fresh("loop");
  const std::string step = context.Fresh("step");

  auto inputs = [&]() {
    std::vector<OnnxValue> values;
    for (const Carried& value : carried)
      values.push_back(Variable(value.parameter, value.dtype, value.shape));
    for (size_t index = 0; index < scanned.size(); ++index) {
      const OnnxValue& input = context.Input(state_count + index);
      const std::string position =
          input_directions[index] == 0
              ? step
              : Call("subtract", {Call("subtract", {length, "1i64"}), step});
      std::vector<int64_t> shape = *input.shape;
      shape.erase(shape.begin() + int64_t(axes[index]));
      values.push_back(Variable(
          Call("take", {scanned[index], position}, {"axis=" + std::to_string(axes[index])}),
          input.dtype, shape));
    }
    return values;
  };
  std::vector<OnnxValue> body_outputs;
  auto next = [&](const std::vector<std::string>& results) {
    if (results.size() != carried.size() + stacked.size())
      Refuse("its body has " + std::to_string(results.size()) + " outputs, not " +
             std::to_string(carried.size() + stacked.size()));
    std::vector<std::string> arguments{Call("add", {step, "1i64"})};
    for (size_t index = 0; index < carried.size(); ++index) arguments.push_back(results[index]);
    for (size_t index = 0; index < stacked.size(); ++index)
      arguments.push_back(stacked[index].Append(results[carried.size() + index]));
    return Call(loop, arguments);
  };
  if (!stacked.empty()) {
    std::function<void()> undo = context.Checkpoint();
    ConvertBody(context, carried, stacked.size(), 0, inputs, {}, body_outputs);
    StackedShapes(stacked, body_outputs, carried.size());
    undo();
  }
  const std::string block =
      ConvertBody(context, carried, stacked.size(), 0, inputs, next, body_outputs);
  context.Let(loop, LoopFunction({step + ": int64"}, carried, stacked, Call("less", {step, length}),
                                 block));
  std::vector<std::string> arguments{"0i64"};
  for (const Carried& value : carried) arguments.push_back(value.initial);
  for (const Stacked& value : stacked) arguments.push_back(value.Initial());
  return LoopResults(context, Call(loop, arguments), carried, stacked, output_axes);
}

}  // namespace

void AddControlFlowConverters(std::map<std::string, Converter>& table) {
  table["If"] = ConvertIf;
  table["Loop"] = ConvertLoop;
  table["Scan"] = ConvertScan;
}

}  // namespace relay::onnx_import
