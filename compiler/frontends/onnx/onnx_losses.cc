// The losses that exports of training graphs still hold:
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (its log-softmax,
// then the same loss).
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// The negative log-likelihood of `log_prob` (N, C, d1, ..., dk) at the
// classes `target` (input 1: N, d1, ..., dk), each weighted by its class's
// weight (input 2, when given), reduced as the node's `reduction` says.
// A target equal to `ignore_index` counts for nothing, not even in the
// mean's denominator, and is never read as a class (it may be out of
// range).
OnnxValue ClassLoss(ConvertContext& context, const std::string& log_prob) {
  const OnnxValue& target = context.Input(1);
  if (target.dtype != DType::kInt64 && target.dtype != DType::kInt32)
    Refuse("the target must be int32 or int64");
  const std::string reduction = context.StringAttribute("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    Refuse("unknown reduction '" + reduction + "'");
  const std::string float_type = "dtype=\"" + std::string(DTypeName(context.Input(0).dtype)) + "\"";

  std::string classes = context.Bind(AsInt64(context.Tensor(1), target.dtype));
  std::string counted;  // bool: the targets that are not ignored
  if (context.Attribute("ignore_index") != nullptr) {
    const int64_t ignored = context.IntAttribute("ignore_index", 0);
    counted = context.Bind(Call("not_equal", {classes, std::to_string(ignored) + "i64"}));
    classes = context.Bind(Where(counted, classes, "0i64"));
  }
  const std::string picked =
      Call("squeeze",
           {Call("gather", {log_prob, Call("expand_dims", {classes}, {"axis=1"})}, {"axis=1"})},
           {"axis=[1]"});
  std::string weights;  // each target's weight, 0 where ignored; empty: all 1
  if (context.HasInput(2)) {
    weights = Call("take", {context.Tensor(2), classes}, {"axis=0"});
    if (!counted.empty()) weights = Where(counted, weights, Literal(context, 0));
  } else if (!counted.empty()) {
    weights = Call("cast", {counted}, {float_type});
  }
  if (!weights.empty()) weights = context.Bind(weights);
  const std::string loss =
      context.Bind(weights.empty() ? Call("negative", {picked})
                                   : Call("multiply", {Call("negative", {picked}), weights}));
  if (reduction == "none") return Shaped(loss, target.shape);
  if (reduction == "sum") return Shaped(Call("sum", {loss}), std::vector<int64_t>{});
  // The mean over the weights given: ONNX divides by their sum.
  if (weights.empty()) return Shaped(Call("mean", {loss}), std::vector<int64_t>{});
  return Shaped(Call("divide", {Call("sum", {loss}), Call("sum", {weights})}),
                std::vector<int64_t>{});
}

void RequireClassAxis(const ConvertContext& context) {
  if (!IsFloatDType(context.Input(0).dtype)) Refuse("the input must be float32 or float64");
  if (RankOf(context, 0) < 2) Refuse("the input must have a class axis (rank 2 or more)");
  if (context.Input(1).shape && RankOf(context, 1) + 1 != RankOf(context, 0))
    Refuse("the target must have one axis fewer than the input");
}

std::vector<OnnxValue> ConvertNegativeLogLikelihoodLoss(ConvertContext& context) {
  RequireClassAxis(context);
  return {ClassLoss(context, context.Tensor(0))};
}

// Its second output, when asked for, is the log-softmax itself.
std::vector<OnnxValue> ConvertSoftmaxCrossEntropyLoss(ConvertContext& context) {
  RequireClassAxis(context);
  const std::string log_prob =
      context.Bind(Call("nn.log_softmax", {context.Tensor(0)}, {"axis=1"}));
  std::vector<OnnxValue> outputs = {ClassLoss(context, log_prob)};
  if (context.node().output_size() > 1) outputs.push_back(Shaped(log_prob, context.Input(0).shape));
  return outputs;
}

}  // namespace

void AddLossConverters(std::map<std::string, Converter>& table) {
  table["NegativeLogLikelihoodLoss"] = ConvertNegativeLogLikelihoodLoss;
  table["SoftmaxCrossEntropyLoss"] = ConvertSoftmaxCrossEntropyLoss;
}

}  // namespace relay::onnx_import
