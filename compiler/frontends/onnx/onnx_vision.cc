// The box operators of detection models (NonMaxSuppression and RoiAlign,
// onto Relay's vision.all_class_non_max_suppression and vision.roi_align)
// and sampling at positions a model computes (GridSample, onto
// image.grid_sample).
#include <onnx/onnx_pb.h>

#include <limits>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

// A float32 scalar operand: the input when given, else `fallback` (a
// weight: -inf has no literal).
std::string ThresholdOrDefault(ConvertContext& context, size_t index, const std::string& hint,
                               float fallback) {
  if (context.HasInput(index)) {
    if (context.Input(index).dtype != DType::kFloat32) Refuse(hint + " other than float32");
    return context.Tensor(index);
  }
  Ref<Tensor> value = Tensor::Empty(HostDevice(), {}, DType::kFloat32);
  value->data<float>()[0] = fallback;
  value->MarkImmutable();
  return context.Weight(hint, value);
}

// NonMaxSuppression: the kept (batch, class, box) rows, as many as were
// kept (a count only known at run time). Without a score threshold every
// box is a candidate; without max_output_boxes_per_class none is kept, as
// in ONNX Runtime.
std::vector<OnnxValue> ConvertNonMaxSuppression(ConvertContext& context) {
  if (context.Input(0).dtype != DType::kFloat32 || context.Input(1).dtype != DType::kFloat32)
    Refuse("boxes or scores other than float32");
  if (RankOf(context, 0) != 3 || RankOf(context, 1) != 3)
    Refuse("boxes or scores of a rank other than 3");
  std::string boxes = context.Tensor(0);
  const int64_t center = context.IntAttribute("center_point_box", 0);
  if (center != 0 && center != 1) Refuse("center_point_box other than 0 and 1");
  if (center == 1) {
    // (x center, y center, width, height) to corners (x1, y1, x2, y2):
    // overlaps are the same whichever axis comes first.
    const std::string halves =
        context.Bind(Call("split", {boxes}, {"indices_or_sections=[2]", "axis=2"}));
    const std::string half_size = context.Bind(Call("multiply", {halves + ".1", "0.5f"}));
    boxes = Call("concatenate",
                 {"(" + Call("subtract", {halves + ".0", half_size}) + ", " +
                  Call("add", {halves + ".0", half_size}) + ")"},
                 {"axis=2"});
  }
  std::string limit = "0i64";
  if (context.HasInput(2)) {
    if (context.Input(2).dtype != DType::kInt64)
      Refuse("max_output_boxes_per_class other than int64");
    limit = context.Tensor(2);
  }
  const std::string overlap = ThresholdOrDefault(context, 3, "iou_threshold", 0.0f);
  const std::string score =
      ThresholdOrDefault(context, 4, "score_threshold", -std::numeric_limits<float>::infinity());
  const std::string kept = context.Bind(Call("vision.all_class_non_max_suppression",
                                             {boxes, context.Tensor(1), limit, overlap, score},
                                             {"output_format=\"onnx\""}));
  const std::string count = Call("reshape", {kept + ".1"}, {"newshape=[]"});
  const std::string rows = Call("arange", {"0i64", count, "1i64"}, {"dtype=\"int64\""});
  OnnxValue value =
      Shaped(Call("take", {kept + ".0", rows}, {"axis=0"}), std::vector<int64_t>{-1, 3});
  value.dtype = DType::kInt64;
  return {value};
}

// RoiAlign: the batch indices joined to the regions as their first column,
// as Relay's roi_align takes them. Opset 16's half_pixel (its default)
// shifts the samples by half a pixel; opset 10 has only output_half_pixel.
std::vector<OnnxValue> ConvertRoiAlign(ConvertContext& context) {
  const DType dtype = context.Input(0).dtype;
  if (!IsFloatDType(dtype) || context.Input(1).dtype != dtype)
    Refuse("data and rois of different or non-float dtypes");
  if (RankOf(context, 0) != 4 || RankOf(context, 1) != 2 || RankOf(context, 2) != 1)
    Refuse("data other than 4-D, or rois and batch indices of other ranks");
  const std::string mode = context.StringAttribute("mode", "avg");
  if (mode != "avg" && mode != "max") Refuse("mode '" + mode + "'");
  const std::string transformation = context.StringAttribute(
      "coordinate_transformation_mode", context.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transformation != "half_pixel" && transformation != "output_half_pixel")
    Refuse("coordinate_transformation_mode '" + transformation + "'");
  const int64_t height = context.IntAttribute("output_height", 1);
  const int64_t width = context.IntAttribute("output_width", 1);
  const int64_t ratio = context.IntAttribute("sampling_ratio", 0);
  const float scale = context.FloatAttribute("spatial_scale", 1.0f);
  if (height < 1 || width < 1 || ratio < 0 || !(scale > 0))
    Refuse("output sizes below 1, a negative sampling_ratio or a spatial_scale not above 0");
  const std::string dtype_text = "dtype=\"" + std::string(DTypeName(dtype)) + "\"";
  const std::string batch =
      Call("reshape", {Call("cast", {context.Tensor(2)}, {dtype_text})}, {"newshape=[-1, 1]"});
  const std::string regions =
      Call("concatenate", {"(" + batch + ", " + context.Tensor(1) + ")"}, {"axis=1"});
  const std::vector<int64_t>& data_shape = *context.Input(0).shape;
  const int64_t count = (*context.Input(1).shape)[0];
  OnnxValue value =
      Shaped(Call("vision.roi_align", {context.Tensor(0), regions},
                  {"pooled_size=" + IntList({height, width}), "spatial_scale=" + FloatText(scale),
                   "sample_ratio=" + std::to_string(ratio), "mode=\"" + mode + "\"",
                   std::string("aligned=") + (transformation == "half_pixel" ? "True" : "False")}),
             std::vector<int64_t>{count, data_shape[1], height, width});
  value.dtype = dtype;
  return {value};
}

// GridSample (opset 16's 4-D form): the same modes and padding under
// Relay's names.
std::vector<OnnxValue> ConvertGridSample(ConvertContext& context) {
  const DType dtype = context.Input(0).dtype;
  if (!IsFloatDType(dtype) || context.Input(1).dtype != dtype)
    Refuse("data and grid of different or non-float dtypes");
  if (RankOf(context, 0) != 4 || RankOf(context, 1) != 4)
    Refuse("data or grid other than 4-D (only 2-D sampling)");
  const std::string mode = context.StringAttribute("mode", "bilinear");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") Refuse("mode '" + mode + "'");
  const std::string padding = context.StringAttribute("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    Refuse("padding_mode '" + padding + "'");
  const std::vector<int64_t>& data = *context.Input(0).shape;
  const std::vector<int64_t>& grid = *context.Input(1).shape;
  OnnxValue value =
      Shaped(Call("image.grid_sample", {context.Tensor(0), context.Tensor(1)},
                  {"method=\"" + mode + "\"", "padding_mode=\"" + padding + "\"",
                   std::string("align_corners=") +
                       (context.IntAttribute("align_corners", 0) != 0 ? "True" : "False")}),
             std::vector<int64_t>{data[0] >= 0 ? data[0] : grid[0], data[1], grid[1], grid[2]});
  value.dtype = dtype;
  return {value};
}

}  // namespace

void AddVisionConverters(std::map<std::string, Converter>& table) {
  table["NonMaxSuppression"] = ConvertNonMaxSuppression;
  table["RoiAlign"] = ConvertRoiAlign;
  table["GridSample"] = ConvertGridSample;
}

}  // namespace relay::onnx_import
