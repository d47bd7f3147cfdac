// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp.
#include <functional>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// A reduction of `before(x)` by `op`, then `after` of the result (ReduceL2
// is sqrt of a sum of squares); ONNX's axes and keepdims.
using Wrap = std::function<std::string(const std::string&)>;
std::string Same(const std::string& value) {
  return value;
}

Converter Reduce(const std::string& op, int64_t axes_input_opset, Wrap before = Same,
                 Wrap after = Same) {
  return [op, axes_input_opset, before, after](ConvertContext& context) {
    const size_t rank = RankOf(context, 0);
    std::optional<std::vector<int64_t>> axes = AxesOf(context, axes_input_opset, 1);
    const bool keepdims = context.IntAttribute("keepdims", 1) != 0;
    std::vector<std::string> attributes{std::string("keepdims=") + (keepdims ? "True" : "False")};
    if (axes && axes->empty() && context.IntAttribute("noop_with_empty_axes", 0) != 0) {
      return std::vector<OnnxValue>{Result(context.Tensor(0))};
    }
    if (axes && !axes->empty()) {
      for (int64_t& axis : *axes) axis = NormalizeAxis(axis, rank);
      attributes.insert(attributes.begin(), "axis=" + IntList(*axes));
    }
    return std::vector<OnnxValue>{Result(after(Call(op, {before(context.Tensor(0))}, attributes)))};
  };
}

}  // namespace

void AddReductionConverters(std::map<std::string, Converter>& converters) {
  // ReduceSum takes its axes as an input from opset 13, the others from 18.
  converters["ReduceSum"] = Reduce("sum", 13);
  converters["ReduceMean"] = Reduce("mean", 18);
  converters["ReduceMax"] = Reduce("max", 18);
  converters["ReduceMin"] = Reduce("min", 18);
  converters["ReduceProd"] = Reduce("prod", 18);
  auto square = [](const std::string& x) { return Call("multiply", {x, x}); };
  converters["ReduceL1"] = Reduce("sum", 18, [](const std::string& x) { return Call("abs", {x}); });
  converters["ReduceL2"] =
      Reduce("sum", 18, square, [](const std::string& x) { return Call("sqrt", {x}); });
  converters["ReduceSumSquare"] = Reduce("sum", 18, square);
  converters["ReduceLogSum"] =
      Reduce("sum", 18, Same, [](const std::string& x) { return Call("log", {x}); });
  converters["ReduceLogSumExp"] = Reduce(
      "sum", 18, [](const std::string& x) { return Call("exp", {x}); },
      [](const std::string& x) { return Call("log", {x}); });
}

}  // namespace relay::onnx_import
