// Resize and Upsample: of NCHW data as image.resize2d where that samples
// the points ONNX does, or as nn.upsampling (a resize by whole-number
// factors) where the data's height or width is only known at run time;
// any other Resize of data of known shape as a sum of taps computed while
// importing (ResizedByTaps).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

// The spatial scales of 4 float32 `scales` that leave the batch and
// channels alone.
std::array<double, 2> SpatialScales(const Ref<relay::Tensor>& scales) {
  if (scales->dtype() != DType::kFloat32 || scales->element_count() != 4)
    Refuse("scales of 4 float32 values are required");
  const float* scale = scales->data<float>();
  if (scale[0] != 1.0f || scale[1] != 1.0f) Refuse("scaling the batch or channel axis");
  return {scale[2], scale[3]};
}

// The spatial size a Resize (or Upsample) of NCHW data of `shape` by
// `scales` gives: only scales that give a whole size and leave the batch
// and channels alone.
std::vector<int64_t> ScaledSize(const std::vector<int64_t>& shape,
                                const Ref<relay::Tensor>& scales) {
  const std::array<double, 2> scale = SpatialScales(scales);
  std::vector<int64_t> size(2);
  for (size_t axis = 0; axis < 2; ++axis) {
    const double exact = double(shape[2 + axis]) * scale[axis];
    if (!(exact < double(std::numeric_limits<int32_t>::max())))
      Refuse("scales that give an output too large");
    size[axis] = int64_t(std::floor(exact));
    // ONNX maps coordinates by the scale itself, image.resize2d by the
    // ratio of the extents: the same only where the scale gives an exact
    // size.
    if (double(size[axis]) != exact) Refuse("scales that do not give a whole output size");
  }
  return size;
}

// image.resize2d of input 0 (NCHW, `shape`) to `size` by `mode`.
OnnxValue Resized(ConvertContext& context, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& size, const std::string& mode,
                  const std::string& coordinates, const std::string& rounding) {
  if (coordinates == "tf_crop_and_resize") Refuse("tf_crop_and_resize is not supported");
  std::vector<std::string> attributes = {"size=" + IntList(size),
                                         "coordinate_transformation_mode=\"" + coordinates + "\""};
  if (mode == "nearest") {
    attributes.push_back("method=\"nearest_neighbor\"");
    attributes.push_back("rounding_method=\"" + rounding + "\"");
  } else if (mode == "linear" || mode == "bilinear") {
    attributes.push_back("method=\"linear\"");
  } else {
    Refuse("mode " + mode + " is not supported");
  }
  return Shaped(Call("image.resize2d", {context.Tensor(0)}, attributes),
                std::vector<int64_t>{shape[0], shape[1], size[0], size[1]});
}

// Input 0 (NCHW, height or width only known at run time) scaled by
// `scales` as nn.upsampling: whole-number scales only, where ONNX's
// coordinates (mapped by the scale) and nn.upsampling's (by the extents)
// pick the same pixels, with the coordinate modes and nearest rounding
// that agree with nn.upsampling's for such scales.
OnnxValue Upsampled(ConvertContext& context, const std::vector<int64_t>& shape,
                    std::array<double, 2> scales, const std::string& mode,
                    const std::string& coordinates, const std::string& rounding) {
  const std::string where = "for data whose height or width is only known at run time";
  for (double scale : scales) {
    if (scale < 1 || scale != std::floor(scale) || scale > 4096)
      Refuse("scales that are not whole numbers " + where);
  }
  const bool half_pixel = coordinates == "half_pixel" || coordinates == "pytorch_half_pixel";
  bool align_corners = false;
  std::string method;
  if (mode == "nearest") {
    method = "nearest_neighbor";
    const bool agrees =
        (rounding == "floor" &&
         (coordinates == "asymmetric" || coordinates == "tf_half_pixel_for_nn")) ||
        (half_pixel && (rounding == "round_prefer_floor" || rounding == "round_prefer_ceil"));
    if (!agrees)
      Refuse("nearest resizing with " + coordinates + " coordinates and " + rounding +
             " rounding " + where);
  } else if (mode == "linear" || mode == "bilinear") {
    method = "bilinear";
    align_corners = coordinates == "align_corners";
    if (!align_corners && !half_pixel)
      Refuse("linear resizing with " + coordinates + " coordinates " + where);
  } else {
    Refuse("mode " + mode + " is not supported");
  }
  std::vector<int64_t> out = shape;
  for (size_t axis = 0; axis < 2; ++axis) {
    if (out[2 + axis] >= 0) out[2 + axis] = out[2 + axis] * int64_t(scales[axis]);
  }
  return Shaped(Call("nn.upsampling", {context.Tensor(0)},
                     {"scale_h=" + FloatText(scales[0]), "scale_w=" + FloatText(scales[1]),
                      "method=\"" + method + "\"",
                      std::string("align_corners=") + (align_corners ? "True" : "False")}),
                out);
}

// How ONNX's Resize samples: its mode, coordinate transformation, nearest
// rounding and cubic parameters.
struct Sampling {
  std::string mode;         // nearest, linear, cubic
  std::string coordinates;  // half_pixel, align_corners, ...
  std::string rounding;     // round_prefer_floor, floor, ...
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
};

// The taps of one axis resized from `in` to `out` elements, as ONNX's
// reference computes them: for each output position, the input
// coordinate it maps to, its neighbours (clamped to the axis, as edge
// padding does) and their weights; `outside` marks positions that
// tf_crop_and_resize maps out of the input (they take the extrapolation
// value).
struct AxisTaps {
  std::vector<std::vector<int64_t>> index;  // [tap][output position]
  std::vector<std::vector<double>> weight;  // [tap][output position]
  std::vector<bool> outside;
};

// The input coordinate of output `position`. ONNX takes the resized
// length as the input's times the scale, before the floor that gives the
// output's extent.
double SourceCoordinate(int64_t position, int64_t in, double scale, const std::string& coordinates,
                        double roi_start, double roi_end) {
  const double x = double(position);
  const double resized = double(in) * scale;
  if (coordinates == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (coordinates == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (coordinates == "align_corners") return resized == 1 ? 0 : x * double(in - 1) / (resized - 1);
  if (coordinates == "asymmetric") return x / scale;
  if (coordinates == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (coordinates == "tf_crop_and_resize") {
    if (resized == 1) return 0.5 * (roi_start + roi_end) * double(in - 1);
    return roi_start * double(in - 1) + x * (roi_end - roi_start) * double(in - 1) / (resized - 1);
  }
  Refuse("coordinate_transformation_mode " + coordinates);
}

// The weights of a point's neighbours, the point `ratio` (in (0, 1]) past
// the last neighbour before it.
std::vector<double> Coefficients(const Sampling& sampling, double ratio) {
  if (sampling.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    const std::string& rounding = sampling.rounding;
    if (rounding == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (rounding == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (rounding == "floor") return {1, 0};
    if (rounding == "ceil") return {0, 1};
    Refuse("nearest_mode " + rounding);
  }
  if (sampling.mode == "linear") return {1 - ratio, ratio};
  if (sampling.mode != "cubic") Refuse("mode " + sampling.mode + " is not supported");
  // Keys' cubic convolution with parameter A, at distances 1 + ratio,
  // ratio, 1 - ratio and 2 - ratio.
  const double a = sampling.cubic_a;
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

AxisTaps TapsAlong(int64_t in, int64_t out, double scale, const Sampling& sampling,
                   double roi_start, double roi_end) {
  const size_t taps = sampling.mode == "cubic" ? 4 : 2;
  AxisTaps result{std::vector<std::vector<int64_t>>(taps, std::vector<int64_t>(size_t(out))),
                  std::vector<std::vector<double>>(taps, std::vector<double>(size_t(out))),
                  std::vector<bool>(size_t(out))};
  for (int64_t position = 0; position < out; ++position) {
    const double x =
        SourceCoordinate(position, in, scale, sampling.coordinates, roi_start, roi_end);
    // The neighbour before x (x itself counts as after it), and how far
    // past it x lies.
    const double before = std::ceil(x) - 1;
    const double ratio = x - before;
    std::vector<double> weights = Coefficients(sampling, ratio);
    const int64_t first = int64_t(before) - int64_t(taps / 2) + 1;
    double total = 0;
    for (size_t tap = 0; tap < taps; ++tap) {
      const int64_t at = first + int64_t(tap);
      if (sampling.exclude_outside && (at < 0 || at >= in)) weights[tap] = 0;
      total += weights[tap];
      result.index[tap][size_t(position)] = std::clamp<int64_t>(at, 0, in - 1);
    }
    for (size_t tap = 0; tap < taps; ++tap) {
      result.weight[tap][size_t(position)] =
          sampling.exclude_outside && total != 0 ? weights[tap] / total : weights[tap];
    }
    result.outside[size_t(position)] =
        sampling.coordinates == "tf_crop_and_resize" && (x < 0 || x > double(in - 1));
  }
  return result;
}

// Input 0 (of known `shape`) resized to `out` along every axis, each axis
// as a sum of its taps: the data gathered at each tap's indices, times its
// weights. Exact for every mode, coordinate transformation, scale and rank
// ONNX has; used where image.resize2d's cannot say the same.
OnnxValue ResizedByTaps(ConvertContext& context, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& out, const std::vector<double>& scales,
                        const Sampling& sampling, const std::vector<double>& roi) {
  const DType dtype = context.Input(0).dtype;
  if (!IsFloatDType(dtype) && sampling.mode != "nearest")
    Refuse(sampling.mode + " resizing of " + std::string(DTypeName(dtype)) + " data");
  std::string value = context.Tensor(0);
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (out[axis] == shape[axis] && scales[axis] == 1 &&
        sampling.coordinates != "tf_crop_and_resize")
      continue;
    if (shape[axis] < 1 || out[axis] < 1)
      Refuse("resizing an axis of " + std::to_string(shape[axis]) + " to " +
             std::to_string(out[axis]) + " elements");
    const AxisTaps taps =
        TapsAlong(shape[axis], out[axis], scales[axis], sampling, roi.empty() ? 0 : roi[axis],
                  roi.empty() ? 1 : roi[axis + shape.size()]);
    // Weights shaped to broadcast along the axis.
    std::vector<int64_t> weight_shape(shape.size(), 1);
    weight_shape[axis] = out[axis];
    auto tensor_of = [&](const std::vector<double>& values, DType type,
                         const std::vector<int64_t>& dims) {
      Ref<relay::Tensor> tensor = relay::Tensor::Empty(HostDevice(), dims, type);
      for (size_t index = 0; index < values.size(); ++index) {
        if (type == DType::kFloat64)
          tensor->data<double>()[index] = values[index];
        else
          tensor->data<float>()[index] = float(values[index]);
      }
      tensor->MarkImmutable();
      return tensor;
    };
    const DType weight_dtype = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    const std::string along = "axis=" + std::to_string(axis);
    const std::string source = context.Bind(value);
    std::string sum;
    for (size_t tap = 0; tap < taps.index.size(); ++tap) {
      const std::vector<double>& weights = taps.weight[tap];
      if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; })) continue;
      Ref<relay::Tensor> indices =
          relay::Tensor::Empty(HostDevice(), {int64_t(taps.index[tap].size())}, DType::kInt64);
      std::copy(taps.index[tap].begin(), taps.index[tap].end(), indices->data<int64_t>());
      indices->MarkImmutable();
      std::string gathered =
          Call("take", {source, context.Weight("resize_index", indices)}, {along});
      const bool all_ones =
          std::all_of(weights.begin(), weights.end(), [](double w) { return w == 1; });
      if (!all_ones) {
        if (!IsFloatDType(dtype)) Refuse("nearest resizing that mixes pixels");
        gathered = Call("multiply",
                        {gathered, context.Weight("resize_weight",
                                                  tensor_of(weights, weight_dtype, weight_shape))});
      }
      sum = sum.empty() ? gathered : Call("add", {sum, gathered});
    }
    if (sum.empty()) sum = Call("zeros_like", {Call("take", {source, "0"}, {along})});
    if (std::find(taps.outside.begin(), taps.outside.end(), true) != taps.outside.end()) {
      std::vector<double> outside(taps.outside.begin(), taps.outside.end());
      Ref<relay::Tensor> mask = relay::Tensor::Empty(HostDevice(), weight_shape, DType::kBool);
      for (size_t index = 0; index < outside.size(); ++index)
        mask->data<bool>()[index] = taps.outside[index];
      mask->MarkImmutable();
      sum = Where(context.Weight("resize_outside", mask), LiteralOf(dtype, sampling.extrapolation),
                  sum);
    }
    value = sum;
  }
  return Shaped(value, out);
}

// Resize: the output size from `sizes` or from `scales` (floor(extent *
// scale)). NCHW data resized over its height and width by nearest or
// linear sampling is image.resize2d where that samples the same pixels
// (sizes, or scales giving whole sizes), and nn.upsampling where the
// height or width is only known at run time; every other case (cubic,
// tf_crop_and_resize, fractional scales, other axes or ranks) is summed
// from taps computed while importing (ResizedByTaps).
std::vector<OnnxValue> ConvertResize(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const std::vector<int64_t> shape = *context.Input(0).shape;
  Sampling sampling;
  sampling.mode = context.StringAttribute("mode", "nearest");
  sampling.coordinates = context.StringAttribute("coordinate_transformation_mode", "half_pixel");
  sampling.rounding = context.StringAttribute("nearest_mode", "round_prefer_floor");
  sampling.cubic_a = context.FloatAttribute("cubic_coeff_a", -0.75f);
  sampling.exclude_outside = context.IntAttribute("exclude_outside", 0) != 0;
  sampling.extrapolation = context.FloatAttribute("extrapolation_value", 0.0f);
  if (context.opset() < 11) {
    // Resize-10 samples at x_out / scale and takes the floor.
    sampling.coordinates = "asymmetric";
    sampling.rounding = "floor";
  }
  if (sampling.mode == "bilinear") sampling.mode = "linear";
  const size_t scales_input = context.opset() < 11 ? 1 : 2;
  const bool sized = context.opset() >= 11 && context.HasInput(3);
  const bool spatial_known = rank == 4 && shape[2] >= 0 && shape[3] >= 0;
  const bool image_like =
      rank == 4 && sampling.mode != "cubic" && sampling.coordinates != "tf_crop_and_resize";
  if (image_like && !sized && !spatial_known) {
    return {Upsampled(context, shape, SpatialScales(context.Constant(scales_input)), sampling.mode,
                      sampling.coordinates, sampling.rounding)};
  }
  std::vector<int64_t> out(rank);
  std::vector<double> scales(rank);
  if (sized) {
    const std::vector<int64_t> sizes = IntValues(*context.Constant(3));
    if (sizes.size() != rank) Refuse("sizes of another rank");
    out = sizes;
    if (image_like && sizes[0] == shape[0] && sizes[1] == shape[1])
      return {Resized(context, shape, {sizes[2], sizes[3]}, sampling.mode, sampling.coordinates,
                      sampling.rounding)};
    for (size_t axis = 0; axis < rank; ++axis) {
      if (shape[axis] < 0) Refuse("sizes for an axis only known at run time");
      scales[axis] = double(sizes[axis]) / double(shape[axis]);
    }
  } else {
    const Ref<relay::Tensor>& given = context.Constant(scales_input);
    if (given->dtype() != DType::kFloat32 || given->element_count() != int64_t(rank))
      Refuse("scales of " + std::to_string(rank) + " float32 values are required");
    for (size_t axis = 0; axis < rank; ++axis) {
      scales[axis] = given->data<float>()[axis];
      if (!(scales[axis] > 0)) Refuse("scales that are not positive");
      if (scales[axis] == 1) {
        out[axis] = shape[axis];
        continue;
      }
      if (shape[axis] < 0) Refuse("scaling an axis only known at run time");
      const double exact = double(shape[axis]) * scales[axis];
      if (!(exact < double(std::numeric_limits<int32_t>::max())))
        Refuse("scales that give an output too large");
      out[axis] = int64_t(std::floor(exact));
    }
    const bool whole = spatial_known && double(out[2]) == double(shape[2]) * scales[2] &&
                       double(out[3]) == double(shape[3]) * scales[3];
    if (image_like && scales[0] == 1 && scales[1] == 1 && whole)
      return {Resized(context, shape, {out[2], out[3]}, sampling.mode, sampling.coordinates,
                      sampling.rounding)};
  }
  std::vector<double> roi;
  if (sampling.coordinates == "tf_crop_and_resize") {
    if (!context.HasInput(1)) Refuse("tf_crop_and_resize without a roi");
    const Ref<relay::Tensor>& region = context.Constant(1);
    if (region->element_count() != int64_t(2 * rank)) Refuse("a roi of another rank");
    for (int64_t index = 0; index < region->element_count(); ++index)
      roi.push_back(region->dtype() == DType::kFloat64 ? region->data<double>()[index]
                                                       : double(region->data<float>()[index]));
  }
  return {ResizedByTaps(context, shape, out, scales, sampling, roi)};
}

// Upsample (opsets 7-9): Resize-10's sampling, its scales an attribute
// (opset 7) or an input.
std::vector<OnnxValue> ConvertUpsample(ConvertContext& context) {
  if (RankOf(context, 0) != 4) Refuse("only 4-D (NCHW) data is supported");
  const std::vector<int64_t> shape = *context.Input(0).shape;
  Ref<relay::Tensor> scales;
  if (context.opset() < 9) {
    const onnx::AttributeProto* attribute = context.Attribute("scales");
    if (attribute == nullptr || attribute->floats_size() != 4) Refuse("scales of 4 values");
    scales = relay::Tensor::Empty(HostDevice(), {4}, DType::kFloat32);
    for (int index = 0; index < 4; ++index) scales->data<float>()[index] = attribute->floats(index);
  } else {
    scales = context.Constant(1);
  }
  const std::string mode = context.StringAttribute("mode", "nearest");
  if (shape[2] < 0 || shape[3] < 0)
    return {Upsampled(context, shape, SpatialScales(scales), mode, "asymmetric", "floor")};
  return {Resized(context, shape, ScaledSize(shape, scales), mode, "asymmetric", "floor")};
}

}  // namespace

void AddResizeConverters(std::map<std::string, Converter>& converters) {
  converters["Resize"] = ConvertResize;
  converters["Upsample"] = ConvertUpsample;
}

}  // namespace relay::onnx_import
