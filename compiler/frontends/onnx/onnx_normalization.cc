// Normalisations: BatchNormalization (inference), LayerNormalization,
// InstanceNormalization, MeanVarianceNormalization and LRN.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

std::string AxesText(const std::vector<int64_t>& axes) {
  return "axis=" + IntList(axes);
}

// BatchNormalization in training mode (opset 14 on): normalised by the
// batch's own mean and (population) variance over every axis but 1, and
// the running statistics updated by `momentum`.
std::vector<OnnxValue> TrainingBatchNormalization(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank < 2) Refuse("data of rank " + std::to_string(rank));
  std::vector<int64_t> axes = {0};
  for (size_t axis = 2; axis < rank; ++axis) axes.push_back(int64_t(axis));
  std::vector<int64_t> channels(rank, 1);
  channels[1] = -1;
  const std::string over = "axis=" + IntList(axes);
  const std::string x = context.Tensor(0);
  const std::string mean = context.Bind(Call("mean", {x}, {over, "keepdims=True"}));
  const std::string centered = context.Bind(Call("subtract", {x, mean}));
  const std::string variance =
      context.Bind(Call("mean", {Call("multiply", {centered, centered})}, {over, "keepdims=True"}));
  auto along_channels = [&](size_t input) {
    return Call("reshape", {context.Tensor(input)}, {"newshape=" + IntList(channels)});
  };
  const std::string epsilon = Literal(context, context.FloatAttribute("epsilon", 1e-5f));
  std::vector<OnnxValue> outputs = {Shaped(
      Call("add",
           {Call("multiply",
                 {Call("divide", {centered, Call("sqrt", {Call("add", {variance, epsilon})})}),
                  along_channels(1)}),
            along_channels(2)}),
      context.Input(0).shape)};
  const double momentum = context.FloatAttribute("momentum", 0.9f);
  for (const auto& [input, batch] : {std::pair<size_t, std::string>{3, mean}, {4, variance}}) {
    // running * momentum + batch * (1 - momentum)
    outputs.push_back(Result(Call(
        "add",
        {Call("multiply", {context.Tensor(input), Literal(context, momentum)}),
         Call("multiply", {Call("squeeze", {batch}, {over}), Literal(context, 1 - momentum)})})));
  }
  return outputs;
}

std::vector<OnnxValue> ConvertBatchNormalization(ConvertContext& context) {
  if (context.opset() >= 14 && context.IntAttribute("training_mode", 0) != 0)
    return TrainingBatchNormalization(context);
  if (context.node().output_size() > 1)
    Refuse("training mode (running statistics) is not supported");
  if (context.IntAttribute("training_mode", 0) != 0) Refuse("training mode is not supported");
  const std::string epsilon = FloatText(context.FloatAttribute("epsilon", 1e-5f));
  return {Result(Call("nn.batch_norm",
                      {context.Tensor(0), context.Tensor(1), context.Tensor(2), context.Tensor(3),
                       context.Tensor(4)},
                      {"axis=1", "epsilon=" + epsilon}) +
                 ".0")};
}

// LayerNormalization over the axes from `axis` on: nn.layer_norm for the
// last axis alone, else written out (mean, variance), which also gives
// the Mean and InvStdDev outputs.
std::vector<OnnxValue> ConvertLayerNormalization(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", -1), rank);
  const float epsilon = context.FloatAttribute("epsilon", 1e-5f);
  const bool statistics = context.OutputUsed(1) || context.OutputUsed(2);
  const std::string x = context.Tensor(0);
  if (axis == int64_t(rank) - 1 && !statistics) {
    const std::string bias =
        context.HasInput(2) ? context.Tensor(2) : Call("zeros_like", {context.Tensor(1)});
    return {Shaped(Call("nn.layer_norm", {x, context.Tensor(1), bias},
                        {"axis=-1", "epsilon=" + FloatText(epsilon)}),
                   context.Input(0).shape)};
  }
  std::vector<int64_t> axes;
  for (int64_t dim = axis; dim < int64_t(rank); ++dim) axes.push_back(dim);
  const std::string mean = context.Bind(Call("mean", {x}, {AxesText(axes), "keepdims=True"}));
  const std::string centred = context.Bind(Call("subtract", {x, mean}));
  const std::string variance =
      Call("mean", {Call("multiply", {centred, centred})}, {AxesText(axes), "keepdims=True"});
  const std::string inverse_deviation =
      context.Bind(Call("rsqrt", {Call("add", {variance, Literal(context, epsilon)})}));
  std::string y =
      Call("multiply", {Call("multiply", {centred, inverse_deviation}), context.Tensor(1)});
  if (context.HasInput(2)) y = Call("add", {y, context.Tensor(2)});
  std::optional<std::vector<int64_t>> reduced = context.Input(0).shape;
  if (reduced) {
    for (int64_t dim : axes) (*reduced)[size_t(dim)] = 1;
  }
  return {Shaped(y, context.Input(0).shape), Shaped(mean, reduced),
          Shaped(inverse_deviation, reduced)};
}

std::vector<OnnxValue> ConvertInstanceNormalization(ConvertContext& context) {
  if (RankOf(context, 0) < 3) Refuse("data of rank below 3");
  const std::string epsilon = FloatText(context.FloatAttribute("epsilon", 1e-5f));
  return {Shaped(Call("nn.instance_norm", {context.Tensor(0), context.Tensor(1), context.Tensor(2)},
                      {"axis=1", "epsilon=" + epsilon}),
                 context.Input(0).shape)};
}

// MeanVarianceNormalization: (x - mean) / sqrt(variance + 1e-9) over
// `axes` (N, H, W by default), as ONNX's function body writes it.
std::vector<OnnxValue> ConvertMeanVarianceNormalization(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  std::vector<int64_t> axes = context.IntsAttribute("axes").value_or(std::vector<int64_t>{0, 2, 3});
  for (int64_t& axis : axes) axis = NormalizeAxis(axis, rank);
  const std::string x = context.Tensor(0);
  const std::string centred =
      context.Bind(Call("subtract", {x, Call("mean", {x}, {AxesText(axes), "keepdims=True"})}));
  const std::string variance =
      Call("mean", {Call("multiply", {centred, centred})}, {AxesText(axes), "keepdims=True"});
  return {Shaped(
      Call("divide", {centred, Call("sqrt", {Call("add", {variance, Literal(context, 1e-9)})})}),
      context.Input(0).shape)};
}

// LRN: x / (bias + alpha / size * (sum of squares over the `size`
// channels around each))^beta, the window sum written as `size` slices of
// the squares padded along the channels.
std::vector<OnnxValue> ConvertLRN(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank < 3) Refuse("data of rank below 3");
  const int64_t channels = (*context.Input(0).shape)[1];
  if (channels < 0) Refuse("a channel count only known at run time");
  const int64_t size = context.IntAttribute("size", 0);
  if (size <= 0 || size > 64) Refuse("a size outside 1-64");
  const double alpha = context.FloatAttribute("alpha", 1e-4f);
  const double beta = context.FloatAttribute("beta", 0.75f);
  const double bias = context.FloatAttribute("bias", 1.0f);
  const std::string x = context.Tensor(0);
  std::string pads = "[[0, 0], [" + std::to_string((size - 1) / 2) + ", " +
                     std::to_string(size - 1 - (size - 1) / 2) + "]";
  for (size_t axis = 2; axis < rank; ++axis) pads += ", [0, 0]";
  const std::string squares = context.Bind(
      Call("nn.pad", {Call("multiply", {x, x}), Literal(context, 0)}, {"pad_width=" + pads + "]"}));
  std::string sum;
  for (int64_t offset = 0; offset < size; ++offset) {
    const std::string slice =
        Call("strided_slice", {squares},
             {"begin=" + IntList({offset}), "end=" + IntList({offset + channels}), "axes=[1]"});
    sum = sum.empty() ? slice : Call("add", {sum, slice});
  }
  const std::string scale = Call(
      "add",
      {Literal(context, bias), Call("multiply", {Literal(context, alpha / double(size)), sum})});
  return {Shaped(Call("divide", {x, Call("power", {scale, Literal(context, beta)})}),
                 context.Input(0).shape)};
}

}  // namespace

void AddNormalizationConverters(std::map<std::string, Converter>& table) {
  table["BatchNormalization"] = ConvertBatchNormalization;
  table["LayerNormalization"] = ConvertLayerNormalization;
  table["InstanceNormalization"] = ConvertInstanceNormalization;
  table["MeanVarianceNormalization"] = ConvertMeanVarianceNormalization;
  table["LRN"] = ConvertLRN;
}

}  // namespace relay::onnx_import
