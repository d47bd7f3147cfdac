// The C++ kernels of the vision operators (definitions in
// kernels/operators/vision.cc), computed as ONNX Runtime computes
// NonMaxSuppression and RoiAlign, so that detection models keep the same
// boxes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

using host::VisitElementType;

// The one value of a one-element tensor, as a double.
double OnlyValue(const Tensor& tensor) {
  RELAY_CHECK(tensor.element_count() == 1, "an operand of one value holds another count");
  return VisitElementType(tensor.dtype(), [&](auto zero) {
    return static_cast<double>(host::Numeric(tensor.data<decltype(zero)>()[0]));
  });
}

struct Box {
  float y_min, x_min, y_max, x_max;
  float Area() const { return (y_max - y_min) * (x_max - x_min); }
};

// Either diagonal's corners, (y1, x1, y2, x2) in any order.
Box BoxAt(const float* coordinates) {
  return {std::min(coordinates[0], coordinates[2]), std::min(coordinates[1], coordinates[3]),
          std::max(coordinates[0], coordinates[2]), std::max(coordinates[1], coordinates[3])};
}

// Whether b overlaps a by more than `threshold` (intersection over union);
// boxes without area never do.
bool Suppresses(const Box& a, const Box& b, float threshold) {
  const float height = std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min);
  const float width = std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min);
  if (height <= 0 || width <= 0) return false;
  const float intersection = height * width;
  const float area_a = a.Area(), area_b = b.Area();
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// Result 0: the kept (batch, class, box) rows, then zeros; result 1: their
// count.
void NonMaxSuppression(std::span<const Tensor* const> inputs, const Attrs&, size_t result,
                       const Tensor& output) {
  const Tensor& boxes = *inputs[0];
  const Tensor& scores = *inputs[1];
  RELAY_CHECK(boxes.dtype() == DType::kFloat32,
              "non-maximum suppression reads float32 boxes (the importer casts)");
  const int64_t batches = scores.shape()[0], classes = scores.shape()[1];
  const int64_t count = scores.shape()[2];
  const int64_t limit = std::max<int64_t>(0, static_cast<int64_t>(OnlyValue(*inputs[2])));
  const float iou_threshold = static_cast<float>(OnlyValue(*inputs[3]));
  const float score_threshold = static_cast<float>(OnlyValue(*inputs[4]));
  std::vector<int64_t> kept;  // (batch, class, box) triples
  std::vector<int64_t> candidates;
  std::vector<Box> selected;
  for (int64_t batch = 0; batch < batches; ++batch) {
    const float* batch_boxes = boxes.data<float>() + batch * count * 4;
    for (int64_t klass = 0; klass < classes; ++klass) {
      const float* class_scores = scores.data<float>() + (batch * classes + klass) * count;
      candidates.clear();
      for (int64_t box = 0; box < count; ++box) {
        if (class_scores[box] > score_threshold) candidates.push_back(box);
      }
      // Highest score first; equal scores keep the lower box first.
      std::sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
        return class_scores[a] > class_scores[b] || (class_scores[a] == class_scores[b] && a < b);
      });
      selected.clear();
      for (int64_t box : candidates) {
        if (int64_t(selected.size()) >= limit) break;
        const Box candidate = BoxAt(batch_boxes + box * 4);
        const bool suppressed = std::any_of(
            selected.begin(), selected.end(),
            [&](const Box& kept_box) { return Suppresses(kept_box, candidate, iou_threshold); });
        if (suppressed) continue;
        selected.push_back(candidate);
        kept.insert(kept.end(), {batch, klass, box});
      }
    }
  }
  int64_t* values = output.data<int64_t>();
  if (result == 1) {
    values[0] = int64_t(kept.size() / 3);
    return;
  }
  std::fill(values, values + output.element_count(), 0);
  std::copy(kept.begin(), kept.end(), values);
}

// One bilinear sample's four neighbours and their weights (ONNX Runtime's
// rule: samples more than a pixel outside contribute nothing; those within
// it read the edge).
struct Sample {
  int64_t y_low = 0, y_high = 0, x_low = 0, x_high = 0;
  float weights[4] = {0, 0, 0, 0};
};

Sample SampleAt(float y, float x, int64_t height, int64_t width) {
  Sample sample;
  if (y < -1.0f || y > float(height) || x < -1.0f || x > float(width)) return sample;
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  sample.y_low = int64_t(y);
  sample.x_low = int64_t(x);
  if (sample.y_low >= height - 1) {
    sample.y_low = sample.y_high = height - 1;
    y = float(sample.y_low);
  } else {
    sample.y_high = sample.y_low + 1;
  }
  if (sample.x_low >= width - 1) {
    sample.x_low = sample.x_high = width - 1;
    x = float(sample.x_low);
  } else {
    sample.x_high = sample.x_low + 1;
  }
  const float ly = y - float(sample.y_low), lx = x - float(sample.x_low);
  const float hy = 1 - ly, hx = 1 - lx;
  sample.weights[0] = hy * hx;
  sample.weights[1] = hy * lx;
  sample.weights[2] = ly * hx;
  sample.weights[3] = ly * lx;
  return sample;
}

template <typename T>
void RoiAlignTyped(const Tensor& data, const Tensor& rois, const Attrs& attrs,
                   const Tensor& output) {
  const bool channels_first = StringAttr(attrs, "layout") == "NCHW";
  const Shape& shape = data.shape();
  const int64_t batches = shape[0];
  const int64_t channels = channels_first ? shape[1] : shape[3];
  const int64_t height = channels_first ? shape[2] : shape[1];
  const int64_t width = channels_first ? shape[3] : shape[2];
  const std::vector<int64_t> pooled = IntListAttr(attrs, "pooled_size");
  const int64_t pooled_h = pooled[0], pooled_w = pooled[1];
  const float scale = static_cast<float>(FloatAttr(attrs, "spatial_scale"));
  const int64_t ratio = IntAttr(attrs, "sample_ratio");
  const bool average = StringAttr(attrs, "mode") == "avg";
  const bool aligned = BoolAttr(attrs, "aligned");
  const T* in = data.data<T>();
  const T* regions = rois.data<T>();
  T* out = output.data<T>();
  auto at = [&](int64_t n, int64_t c, int64_t y, int64_t x) {
    return channels_first ? ((n * channels + c) * height + y) * width + x
                          : ((n * height + y) * width + x) * channels + c;
  };
  auto out_at = [&](int64_t r, int64_t c, int64_t y, int64_t x) {
    return channels_first ? ((r * channels + c) * pooled_h + y) * pooled_w + x
                          : ((r * pooled_h + y) * pooled_w + x) * channels + c;
  };
  std::vector<Sample> samples;
  for (int64_t r = 0; r < rois.shape()[0]; ++r) {
    const T* roi = regions + r * 5;
    const auto batch = static_cast<int64_t>(host::Numeric(roi[0]));
    if (batch < 0 || batch >= batches) {
      throw Error(ErrorKind::kRuntime, "roi_align: region " + std::to_string(r) + " names batch " +
                                           std::to_string(batch) + " of data with " +
                                           std::to_string(batches));
    }
    const float offset = aligned ? 0.5f : 0.0f;
    const float start_x = float(host::Numeric(roi[1])) * scale - offset;
    const float start_y = float(host::Numeric(roi[2])) * scale - offset;
    float roi_width = float(host::Numeric(roi[3])) * scale - offset - start_x;
    float roi_height = float(host::Numeric(roi[4])) * scale - offset - start_y;
    if (!aligned) {
      roi_width = std::max(roi_width, 1.0f);
      roi_height = std::max(roi_height, 1.0f);
    }
    const float bin_h = roi_height / float(pooled_h), bin_w = roi_width / float(pooled_w);
    const int64_t grid_h = ratio > 0 ? ratio : int64_t(std::ceil(roi_height / float(pooled_h)));
    const int64_t grid_w = ratio > 0 ? ratio : int64_t(std::ceil(roi_width / float(pooled_w)));
    const float samples_per_bin = float(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t py = 0; py < pooled_h; ++py) {
      for (int64_t px = 0; px < pooled_w; ++px) {
        // The bin's samples, shared by every channel.
        samples.clear();
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float y = start_y + float(py) * bin_h + (float(iy) + 0.5f) * bin_h / float(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float x =
                start_x + float(px) * bin_w + (float(ix) + 0.5f) * bin_w / float(grid_w);
            samples.push_back(SampleAt(y, x, height, width));
          }
        }
        for (int64_t c = 0; c < channels; ++c) {
          float value = 0;
          bool first = true;
          for (const Sample& s : samples) {
            const float v[4] = {float(host::Numeric(in[at(batch, c, s.y_low, s.x_low)])),
                                float(host::Numeric(in[at(batch, c, s.y_low, s.x_high)])),
                                float(host::Numeric(in[at(batch, c, s.y_high, s.x_low)])),
                                float(host::Numeric(in[at(batch, c, s.y_high, s.x_high)]))};
            if (average) {
              for (int corner = 0; corner < 4; ++corner) value += s.weights[corner] * v[corner];
            } else {
              // ONNX Runtime's max: the largest weighted neighbour.
              float largest = s.weights[0] * v[0];
              for (int corner = 1; corner < 4; ++corner)
                largest = std::max(largest, s.weights[corner] * v[corner]);
              value = first ? largest : std::max(value, largest);
              first = false;
            }
          }
          if (average) value /= samples_per_bin;
          out[out_at(r, c, py, px)] = host::StoreAs<T>(value);
        }
      }
    }
  }
}

void RoiAlign(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t,
              const Tensor& output) {
  host::VisitFloatType(inputs[0]->dtype(), "roi_align", [&](auto zero) {
    using T = decltype(zero);
    RoiAlignTyped<T>(*inputs[0], *inputs[1], attrs, output);
  });
}

}  // namespace

void AttachVisionKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"vision.all_class_non_max_suppression", NonMaxSuppression},
                           {"vision.roi_align", RoiAlign}});
}

}  // namespace relay::kernels
