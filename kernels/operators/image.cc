// Image operators: image.resize2d, nn.upsampling (a resize by scale
// factors, so that its output follows inputs whose size is only known at
// run time), and image.grid_sample (its kernel is C++:
// kernels/host/image_kernels.cc).
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// roi: None or four numbers (start_h, start_w, end_h, end_w), used only by the
// tf_crop_and_resize coordinate mode.
void ExpectRegionOfInterest(const Attrs& attrs) {
  const AttrValue& roi = GetAttr(attrs, "roi");
  if (roi.is_none()) return;
  bool valid = roi.kind() == AttrValue::Kind::kList && roi.as_list().size() == 4;
  if (valid) {
    for (const AttrValue& item : roi.as_list()) {
      valid =
          valid && (item.kind() == AttrValue::Kind::kFloat || item.kind() == AttrValue::Kind::kInt);
    }
  }
  if (!valid) {
    FailRelation("attribute 'roi' expects a list of 4 numbers, got " + roi.ToString());
  }
}

// The height and width axes of `layout`, which must arrange N, C, H, W.
std::pair<size_t, size_t> SpatialAxes(const Attrs& attrs) {
  const std::string& layout = StringAttr(attrs, "layout");
  const size_t height_axis = layout.find('H');
  const size_t width_axis = layout.find('W');
  if (layout.size() != 4 || height_axis == std::string::npos || width_axis == std::string::npos ||
      layout.find('N') == std::string::npos || layout.find('C') == std::string::npos) {
    FailRelation("attribute 'layout' is \"" + layout +
                 "\": expected an arrangement of N, C, H, W such as \"NCHW\"");
  }
  return {height_axis, width_axis};
}

ValueType Resize2DRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(data, 4, "data");
  const auto [height_axis, width_axis] = SpatialAxes(attrs);
  // "bilinear" is the name older Relay versions gave to "linear".
  ChoiceAttr(attrs, "method", {"nearest_neighbor", "linear", "bilinear"});
  ChoiceAttr(attrs, "coordinate_transformation_mode",
             {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
              "tf_half_pixel_for_nn", "tf_crop_and_resize"});
  ChoiceAttr(attrs, "rounding_method",
             {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"});
  ExpectRegionOfInterest(attrs);
  const std::vector<int64_t> size = IntListAttr(attrs, "size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) {
    FailRelation("attribute 'size' expects [height, width] with both >= 1, got " +
                 GetAttr(attrs, "size").ToString());
  }
  Dims shape = data.shape;
  shape[height_axis] = size[0];
  shape[width_axis] = size[1];
  return ValueType::Tensor(std::move(shape), DTypeAttr(attrs, "out_dtype", data.dtype));
}

// nn.upsampling, as TVM's: height and width times scale_h and scale_w,
// rounded (unknown where the input's is).
ValueType UpsamplingRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(data, 4, "data");
  const auto [height_axis, width_axis] = SpatialAxes(attrs);
  ChoiceAttr(attrs, "method", {"nearest_neighbor", "bilinear"});
  Dims shape = data.shape;
  for (const auto& [axis, name] : {std::pair{height_axis, "scale_h"}, {width_axis, "scale_w"}}) {
    const double scale = FloatAttr(attrs, name);
    if (!(scale > 0) || !std::isfinite(scale))
      FailRelation("attribute '" + std::string(name) + "' must be positive, got " +
                   std::to_string(scale));
    if (shape[axis] == kAnyDim) continue;
    const double extent = std::round(static_cast<double>(shape[axis]) * scale);
    if (extent > static_cast<double>(std::numeric_limits<int32_t>::max()))
      FailRelation("attribute '" + std::string(name) + "' gives an extent of " +
                   std::to_string(extent) + " from " + std::to_string(shape[axis]));
    shape[axis] = static_cast<int64_t>(extent);
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

// grid_sample: data (N, C, H, W) read at grid (N, H_out, W_out, 2), whose
// last axis is an (x, y) position scaled to [-1, 1]: (N, C, H_out, W_out).
ValueType GridSampleRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& grid = ExpectTensor(inputs, 1, "grid");
  ExpectRank(data, 4, "data");
  ExpectRank(grid, 4, "grid");
  ExpectFloatDType(data, "data");
  ExpectSameDType(data, grid);
  ChoiceAttr(attrs, "method", {"nearest", "bilinear", "bicubic"});
  ChoiceAttr(attrs, "layout", {"NCHW"});
  ChoiceAttr(attrs, "padding_mode", {"zeros", "border", "reflection"});
  if (IsKnownDim(grid.shape[3]) && grid.shape[3] != 2) {
    FailRelation("input 'grid' must end in (x, y) pairs, got " + grid.ToString());
  }
  const int64_t batch = UnifyDims(data.shape[0], grid.shape[0], "the batch of data and grid");
  return ValueType::Tensor({batch, data.shape[1], grid.shape[1], grid.shape[2]}, data.dtype);
}

}  // namespace

void RegisterImageOperators(OperatorTableBuilder& table) {
  table.Add(
      {.name = "image.grid_sample",
       .input_names = {"data", "grid"},
       .attributes = {DefaultAttr("method", AttrKind::kString, AttrValue::String("bilinear")),
                      DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
                      DefaultAttr("padding_mode", AttrKind::kString, AttrValue::String("zeros")),
                      DefaultAttr("align_corners", AttrKind::kBool, AttrValue::Bool(true))},
       .pattern = FusionPattern::kOpaque,
       .relation = GridSampleRelation,
       .summary = "Data sampled at a grid of positions scaled to [-1, 1] (nearest, "
                  "bilinear or bicubic)."});
  table.Add({.name = "nn.upsampling",
             .input_names = {"data"},
             .attributes = {RequiredAttr("scale_h", AttrKind::kFloat),
                            RequiredAttr("scale_w", AttrKind::kFloat),
                            DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
                            DefaultAttr("method", AttrKind::kString,
                                        AttrValue::String("nearest_neighbor")),
                            DefaultAttr("align_corners", AttrKind::kBool, AttrValue::Bool(false))},
             .pattern = FusionPattern::kInjective,
             .relation = UpsamplingRelation,
             .summary = "Scales height and width by factors (nearest_neighbor or bilinear).",
             .differentiability = Differentiability::kNotDifferentiable});
  table.Add(
      {.name = "image.resize2d",
       .input_names = {"data"},
       .attributes = {RequiredAttr("size", AttrKind::kIntList),
                      DefaultAttr("roi", AttrKind::kAny,
                                  AttrValue::List({AttrValue::Float(0), AttrValue::Float(0),
                                                   AttrValue::Float(0), AttrValue::Float(0)})),
                      DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
                      DefaultAttr("method", AttrKind::kString, AttrValue::String("linear")),
                      DefaultAttr("coordinate_transformation_mode", AttrKind::kString,
                                  AttrValue::String("half_pixel")),
                      DefaultAttr("rounding_method", AttrKind::kString, AttrValue::String("")),
                      DefaultAttr("cubic_alpha", AttrKind::kFloat, AttrValue::Float(-0.5)),
                      DefaultAttr("cubic_exclude", AttrKind::kInt, AttrValue::Int(0)),
                      DefaultAttr("extrapolation_value", AttrKind::kFloat, AttrValue::Float(0.0)),
                      DefaultAttr("out_dtype", AttrKind::kString, AttrValue::String(""))},
       .pattern = FusionPattern::kInjective,
       .relation = Resize2DRelation,
       .summary = "Resizes height and width (nearest_neighbor or linear interpolation).",
       .differentiability = Differentiability::kGradient});
}

}  // namespace relay::kernels
