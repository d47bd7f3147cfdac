// Resize and Upsample of NCHW data, as image.resize2d.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

// The spatial size a Resize (or Upsample) of NCHW data of `shape` by
// `scales` gives: only scales that give a whole size and leave the batch
// and channels alone.
std::vector<int64_t> ScaledSize(const std::vector<int64_t>& shape,
                                const Ref<relay::Tensor>& scales) {
  if (scales->dtype() != DType::kFloat32 || scales->element_count() != 4)
    Refuse("scales of 4 float32 values are required");
  const float* scale = scales->data<float>();
  if (scale[0] != 1.0f || scale[1] != 1.0f) Refuse("scaling the batch or channel axis");
  for (int axis = 2; axis < 4; ++axis) {
    if (!(double(shape[size_t(axis)]) * scale[axis] < double(std::numeric_limits<int32_t>::max())))
      Refuse("scales that give an output too large");
  }
  const std::vector<int64_t> size = {int64_t(std::floor(double(shape[2]) * scale[2])),
                                     int64_t(std::floor(double(shape[3]) * scale[3]))};
  // ONNX maps coordinates by the scale itself, image.resize2d by the ratio
  // of the extents: the same only where the scale gives an exact size.
  if (double(size[0]) != double(shape[2]) * scale[2] ||
      double(size[1]) != double(shape[3]) * scale[3]) {
    Refuse("scales that do not give a whole output size");
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

// Resize of 4-D NCHW data over its spatial axes, as image.resize2d: the
// output size from `sizes` or from `scales` (floor(extent * scale)).
std::vector<OnnxValue> ConvertResize(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("only 4-D (NCHW) data is supported");
  const size_t scales_input = context.opset() < 11 ? 1 : 2;
  std::vector<int64_t> size;
  if (context.opset() >= 11 && context.HasInput(3)) {
    const std::vector<int64_t> sizes = IntValues(*context.Constant(3));
    if (sizes.size() != 4 || sizes[0] != shape[0] || sizes[1] != shape[1])
      Refuse("sizes other than the spatial ones");
    size = {sizes[2], sizes[3]};
  } else {
    size = ScaledSize(shape, context.Constant(scales_input));
  }
  std::string coordinates = context.StringAttribute("coordinate_transformation_mode", "half_pixel");
  std::string rounding = context.StringAttribute("nearest_mode", "round_prefer_floor");
  if (context.opset() < 11) {
    // Resize-10 samples at x_out / scale and takes the floor.
    coordinates = "asymmetric";
    rounding = "floor";
  }
  return {Resized(context, shape, size, context.StringAttribute("mode", "nearest"), coordinates,
                  rounding)};
}

// Upsample (opsets 7-9): Resize-10's sampling, its scales an attribute
// (opset 7) or an input.
std::vector<OnnxValue> ConvertUpsample(ConvertContext& context) {
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() != 4) Refuse("only 4-D (NCHW) data is supported");
  Ref<relay::Tensor> scales;
  if (context.opset() < 9) {
    const onnx::AttributeProto* attribute = context.Attribute("scales");
    if (attribute == nullptr || attribute->floats_size() != 4) Refuse("scales of 4 values");
    scales = relay::Tensor::Empty(HostDevice(), {4}, DType::kFloat32);
    for (int index = 0; index < 4; ++index) scales->data<float>()[index] = attribute->floats(index);
  } else {
    scales = context.Constant(1);
  }
  return {Resized(context, shape, ScaledSize(shape, scales),
                  context.StringAttribute("mode", "nearest"), "asymmetric", "floor")};
}

}  // namespace

void AddResizeConverters(std::map<std::string, Converter>& converters) {
  converters["Resize"] = ConvertResize;
  converters["Upsample"] = ConvertUpsample;
}

}  // namespace relay::onnx_import
