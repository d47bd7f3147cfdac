// Resize and Upsample of NCHW data, as image.resize2d, or as nn.upsampling
// (a resize by whole-number factors) where the data's height or width is
// only known at run time.
#include <onnx/onnx_pb.h>

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

// Resize of 4-D NCHW data over its spatial axes: the output size from
// `sizes` or from `scales` (floor(extent * scale)), as image.resize2d, or
// nn.upsampling where the data's height or width is only known at run
// time.
std::vector<OnnxValue> ConvertResize(ConvertContext& context) {
  if (RankOf(context, 0) != 4) Refuse("only 4-D (NCHW) data is supported");
  const std::vector<int64_t> shape = *context.Input(0).shape;
  const bool spatial_known = shape[2] >= 0 && shape[3] >= 0;
  std::string coordinates = context.StringAttribute("coordinate_transformation_mode", "half_pixel");
  std::string rounding = context.StringAttribute("nearest_mode", "round_prefer_floor");
  if (context.opset() < 11) {
    // Resize-10 samples at x_out / scale and takes the floor.
    coordinates = "asymmetric";
    rounding = "floor";
  }
  const std::string mode = context.StringAttribute("mode", "nearest");
  const size_t scales_input = context.opset() < 11 ? 1 : 2;
  std::vector<int64_t> size;
  if (context.opset() >= 11 && context.HasInput(3)) {
    const std::vector<int64_t> sizes = IntValues(*context.Constant(3));
    if (sizes.size() != 4 || sizes[0] != shape[0] || sizes[1] != shape[1])
      Refuse("sizes other than the spatial ones");
    size = {sizes[2], sizes[3]};
  } else if (!spatial_known) {
    return {Upsampled(context, shape, SpatialScales(context.Constant(scales_input)), mode,
                      coordinates, rounding)};
  } else {
    size = ScaledSize(shape, context.Constant(scales_input));
  }
  return {Resized(context, shape, size, mode, coordinates, rounding)};
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
