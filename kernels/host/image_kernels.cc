// The C++ kernel of image.grid_sample (definition in
// kernels/operators/image.cc), computed as ONNX Runtime and PyTorch compute
// GridSample: positions scaled back from [-1, 1], out-of-range positions
// clamped or reflected by the padding mode, then nearest, bilinear or
// bicubic (A = -0.75) interpolation of pixels read with that padding.
// (Bicubic with border padding thus clamps the position before taking its
// 4x4 taps, as ONNX Runtime does; PyTorch clamps each tap instead.)
#include <algorithm>
#include <cmath>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

enum class Padding { kZeros, kBorder, kReflection };

// `position` reflected into [low, high] as often as it takes.
double Reflect(double position, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (position < low) {
    const double distance = low - position;
    const double folds = std::floor(distance / range);
    const double rest = distance - folds * range;
    return std::fmod(folds, 2.0) == 0 ? low + rest : high - rest;
  }
  if (position > high) {
    const double distance = position - high;
    const double folds = std::floor(distance / range);
    const double rest = distance - folds * range;
    return std::fmod(folds, 2.0) == 0 ? high - rest : low + rest;
  }
  return position;
}

// One (batch, channel) plane and how positions outside it read.
struct Plane {
  const double* pixels;  // the plane, widened
  int64_t height, width;
  Padding padding;
  double low_x, high_x, low_y, high_y;  // the reflection bounds

  double At(int64_t y, int64_t x) const {
    switch (padding) {
      case Padding::kZeros:
        if (x < 0 || x >= width || y < 0 || y >= height) return 0;
        break;
      case Padding::kBorder:
        x = std::clamp<int64_t>(x, 0, width - 1);
        y = std::clamp<int64_t>(y, 0, height - 1);
        break;
      case Padding::kReflection:
        x = std::clamp<int64_t>(int64_t(Reflect(double(x), low_x, high_x)), 0, width - 1);
        y = std::clamp<int64_t>(int64_t(Reflect(double(y), low_y, high_y)), 0, height - 1);
        break;
    }
    return pixels[y * width + x];
  }
};

// The four cubic convolution weights (A = -0.75) of taps at -1, 0, 1, 2
// from a position `t` in [0, 1) past the second tap.
void CubicWeights(double t, double weights[4]) {
  constexpr double a = -0.75;
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  weights[0] = far(t + 1);
  weights[1] = near(t);
  weights[2] = near(1 - t);
  weights[3] = far(2 - t);
}

template <typename T>
void GridSampleTyped(const Tensor& data, const Tensor& grid, const Attrs& attrs,
                     const Tensor& output) {
  const std::string& method = StringAttr(attrs, "method");
  const std::string& padding_name = StringAttr(attrs, "padding_mode");
  const Padding padding = padding_name == "zeros"    ? Padding::kZeros
                          : padding_name == "border" ? Padding::kBorder
                                                     : Padding::kReflection;
  const bool align_corners = BoolAttr(attrs, "align_corners");
  const int64_t batches = data.shape()[0], channels = data.shape()[1];
  const int64_t height = data.shape()[2], width = data.shape()[3];
  const int64_t out_height = grid.shape()[1], out_width = grid.shape()[2];
  // Positions scaled to [-1, 1] mean pixel centres (align_corners: the
  // outermost pixels' centres; else their outer edges).
  auto unscale = [&](double position, int64_t extent) {
    return align_corners ? (position + 1) / 2 * double(extent - 1)
                         : ((position + 1) * double(extent) - 1) / 2;
  };
  const double low_x = align_corners ? 0 : -0.5,
               high_x = align_corners ? double(width - 1) : double(width) - 0.5;
  const double low_y = align_corners ? 0 : -0.5,
               high_y = align_corners ? double(height - 1) : double(height) - 0.5;
  std::vector<double> widened(size_t(height * width));
  const T* in = data.data<T>();
  const T* positions = grid.data<T>();
  T* out = output.data<T>();
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const T* plane_in = in + (n * channels + c) * height * width;
      for (size_t index = 0; index < widened.size(); ++index)
        widened[index] = double(host::Numeric(plane_in[index]));
      const Plane plane{widened.data(), height, width, padding, low_x, high_x, low_y, high_y};
      T* plane_out = out + (n * channels + c) * out_height * out_width;
      for (int64_t row = 0; row < out_height; ++row) {
        for (int64_t column = 0; column < out_width; ++column) {
          const T* pair = positions + ((n * out_height + row) * out_width + column) * 2;
          double x = unscale(double(host::Numeric(pair[0])), width);
          double y = unscale(double(host::Numeric(pair[1])), height);
          if (method == "nearest") {
            x = std::nearbyint(x);
            y = std::nearbyint(y);
          }
          // Positions outside move inside first, except with zeros.
          if (padding == Padding::kBorder) {
            x = std::clamp(x, 0.0, double(width - 1));
            y = std::clamp(y, 0.0, double(height - 1));
          } else if (padding == Padding::kReflection) {
            x = Reflect(x, low_x, high_x);
            y = Reflect(y, low_y, high_y);
          }
          double value = 0;
          // NaN, or so far outside that no pixel is near: nothing to read
          // (and no integer holds the position).
          constexpr double kFar = 1e15;
          if (!(std::abs(x) < kFar && std::abs(y) < kFar)) {
            value = padding == Padding::kZeros && !std::isnan(x + y) ? 0 : NAN;
          } else if (method == "nearest") {
            value = plane.At(int64_t(y), int64_t(x));
          } else if (method == "bilinear") {
            const auto x0 = int64_t(std::floor(x)), y0 = int64_t(std::floor(y));
            const double dx = x - double(x0), dy = y - double(y0);
            value = (1 - dy) * ((1 - dx) * plane.At(y0, x0) + dx * plane.At(y0, x0 + 1)) +
                    dy * ((1 - dx) * plane.At(y0 + 1, x0) + dx * plane.At(y0 + 1, x0 + 1));
          } else {
            const auto x0 = int64_t(std::floor(x)), y0 = int64_t(std::floor(y));
            double wx[4], wy[4];
            CubicWeights(x - double(x0), wx);
            CubicWeights(y - double(y0), wy);
            for (int64_t i = 0; i < 4; ++i) {
              double across = 0;
              for (int64_t j = 0; j < 4; ++j) across += wx[j] * plane.At(y0 - 1 + i, x0 - 1 + j);
              value += wy[i] * across;
            }
          }
          plane_out[row * out_width + column] = host::StoreAs<T>(value);
        }
      }
    }
  }
}

void GridSample(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t,
                const Tensor& output) {
  host::VisitFloatType(inputs[0]->dtype(), "grid_sample", [&](auto zero) {
    using T = decltype(zero);
    GridSampleTyped<T>(*inputs[0], *inputs[1], attrs, output);
  });
}

}  // namespace

void AttachImageKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"image.grid_sample", GridSample}});
}

}  // namespace relay::kernels
