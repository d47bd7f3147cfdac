// Vision operators: vision.all_class_non_max_suppression and
// vision.roi_align, the box operators of detection models. Names, inputs
// and attributes are TVM Relay's; their kernels are C++
// (kernels/host/vision_kernels.cc).
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

// A scalar operand given as a tensor of one element (a scalar or shape (1,)).
void ExpectOneElement(const ValueType& type, std::string_view name, bool integer) {
  int64_t count = 1;
  for (int64_t dim : type.shape)
    count = IsKnownDim(dim) && IsKnownDim(count) ? count * dim : kAnyDim;
  if (type.shape.size() > 1 || (IsKnownDim(count) && count != 1)) {
    FailRelation("input '" + std::string(name) + "' must hold one value, got " + type.ToString());
  }
  if (integer ? !IsIntegerDType(type.dtype) || type.dtype == DType::kBool : !IsFloat(type.dtype)) {
    FailRelation("input '" + std::string(name) + "' must be " +
                 (integer ? "an integer" : "a floating-point number") + ", got " + type.ToString());
  }
}

// all_class_non_max_suppression in ONNX's output format: for each batch and
// class, the boxes greedily kept by score (at most
// max_output_boxes_per_class, scores above score_threshold, overlapping a
// kept box by at most iou_threshold), as rows (batch, class, box) int64 in
// the first num_total_detections rows of a result sized for every box.
ValueType NonMaxSuppressionRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& boxes = ExpectTensor(inputs, 0, "boxes");
  const ValueType& scores = ExpectTensor(inputs, 1, "scores");
  ExpectRank(boxes, 3, "boxes");
  ExpectRank(scores, 3, "scores");
  if (boxes.dtype != DType::kFloat32 || scores.dtype != DType::kFloat32) {
    FailRelation("boxes and scores must be float32, got " + boxes.ToString() + " and " +
                 scores.ToString());
  }
  if (IsKnownDim(boxes.shape[2]) && boxes.shape[2] != 4) {
    FailRelation("input 'boxes' must hold 4 coordinates per box, got " + boxes.ToString());
  }
  const int64_t batch = UnifyDims(boxes.shape[0], scores.shape[0], "the batch of boxes and scores");
  const int64_t count = UnifyDims(boxes.shape[1], scores.shape[2], "the boxes of boxes and scores");
  ExpectOneElement(ExpectTensor(inputs, 2, "max_output_boxes_per_class"),
                   "max_output_boxes_per_class", true);
  ExpectOneElement(ExpectTensor(inputs, 3, "iou_threshold"), "iou_threshold", false);
  ExpectOneElement(ExpectTensor(inputs, 4, "score_threshold"), "score_threshold", false);
  const std::string& format = StringAttr(attrs, "output_format");
  if (format != "onnx") {
    FailRelation("attribute 'output_format' is \"" + format +
                 "\": only \"onnx\" (rows of batch, class, box) is supported");
  }
  const int64_t rows = MultiplyDims(MultiplyDims(batch, scores.shape[1]), count);
  return ValueType::Tuple(
      {ValueType::Tensor({rows, 3}, DType::kInt64), ValueType::Tensor({1}, DType::kInt64)});
}

// roi_align: each region of interest (batch index, x1, y1, x2, y2, in the
// input's coordinates before spatial_scale) pooled to pooled_size by
// averaging (or taking the largest of) bilinear samples. aligned shifts
// the sample grid by half a pixel (ONNX's half_pixel, torchvision's
// aligned=True).
ValueType RoiAlignRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& rois = ExpectTensor(inputs, 1, "rois");
  ExpectRank(data, 4, "data");
  ExpectRank(rois, 2, "rois");
  ExpectFloatDType(data, "data");
  ExpectSameDType(data, rois);
  if (IsKnownDim(rois.shape[1]) && rois.shape[1] != 5) {
    FailRelation("input 'rois' must be rows of (batch index, x1, y1, x2, y2), got " +
                 rois.ToString());
  }
  const std::vector<int64_t> pooled = IntListAttr(attrs, "pooled_size");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
    FailRelation("attribute 'pooled_size' must be two positive sizes, got " + DimsToString(pooled));
  }
  if (!(FloatAttr(attrs, "spatial_scale") > 0)) {
    FailRelation("attribute 'spatial_scale' must be positive");
  }
  ChoiceAttr(attrs, "mode", {"avg", "max"});
  const std::string& layout = ChoiceAttr(attrs, "layout", {"NCHW", "NHWC"});
  const int64_t channels = layout == "NCHW" ? data.shape[1] : data.shape[3];
  if (layout == "NCHW")
    return ValueType::Tensor({rois.shape[0], channels, pooled[0], pooled[1]}, data.dtype);
  return ValueType::Tensor({rois.shape[0], pooled[0], pooled[1], channels}, data.dtype);
}

}  // namespace

void RegisterVisionOperators(OperatorTableBuilder& table) {
  table.Add(
      {.name = "vision.all_class_non_max_suppression",
       .input_names = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                       "score_threshold"},
       .attributes = {DefaultAttr("output_format", AttrKind::kString, AttrValue::String("onnx"))},
       .pattern = FusionPattern::kOpaque,
       .relation = NonMaxSuppressionRelation,
       .summary = "Greedy non-maximum suppression per batch and class: kept (batch, class, "
                  "box) rows and their count."});
  table.Add({.name = "vision.roi_align",
             .input_names = {"data", "rois"},
             .attributes = {RequiredAttr("pooled_size", AttrKind::kIntList),
                            RequiredAttr("spatial_scale", AttrKind::kFloat),
                            DefaultAttr("sample_ratio", AttrKind::kInt, AttrValue::Int(-1)),
                            DefaultAttr("layout", AttrKind::kString, AttrValue::String("NCHW")),
                            DefaultAttr("mode", AttrKind::kString, AttrValue::String("avg")),
                            DefaultAttr("aligned", AttrKind::kBool, AttrValue::Bool(false))},
             .pattern = FusionPattern::kOpaque,
             .relation = RoiAlignRelation,
             .summary = "Regions of interest pooled to a fixed size by bilinear sampling."});
}

}  // namespace relay::kernels
