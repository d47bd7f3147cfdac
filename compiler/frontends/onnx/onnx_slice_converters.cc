// Slicing and padding: Slice (folded, static or with run-time bounds),
// Split and Pad.
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "relay/devices.h"

namespace relay::onnx_import {

namespace {

// Slice with bounds known only at run time, or along axes whose extent
// is: each sliced axis is a `take` of the indices `arange` gives between
// the bounds, clamped as ONNX clamps them. Axes and steps must be known.
std::vector<OnnxValue> RunTimeSlice(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  std::optional<std::vector<int64_t>> axes;
  if (context.HasInput(3)) axes = IntValues(*context.Constant(3));
  const std::optional<std::vector<int64_t>>& bounds_shape = context.Input(1).shape;
  if (!bounds_shape || bounds_shape->size() != 1 || (*bounds_shape)[0] < 0)
    Refuse("starts of unknown length");
  const size_t count = size_t((*bounds_shape)[0]);
  if (!axes) {
    axes.emplace();
    for (size_t axis = 0; axis < count; ++axis) axes->push_back(int64_t(axis));
  }
  std::vector<int64_t> steps(count, 1);
  if (context.HasInput(4)) steps = IntValues(*context.Constant(4));
  if (axes->size() != count || steps.size() != count)
    Refuse("starts, ends, axes and steps of different lengths");
  const DType bounds_dtype = context.Input(1).dtype;
  if ((bounds_dtype != DType::kInt64 && bounds_dtype != DType::kInt32) ||
      context.Input(2).dtype != bounds_dtype)
    Refuse("starts and ends must be int32 or int64");
  const std::string starts = AsInt64(context.Tensor(1), bounds_dtype);
  const std::string ends = AsInt64(context.Tensor(2), bounds_dtype);
  const std::string input = context.Tensor(0);
  std::string data = input;
  std::vector<int64_t> shape = *context.Input(0).shape;
  for (size_t index = 0; index < count; ++index) {
    const int64_t axis = NormalizeAxis((*axes)[index], rank);
    const int64_t step = steps[index];
    if (step == 0) Refuse("a step of 0");
    const std::string extent = Extent(input, shape, size_t(axis));
    // A negative bound counts from the end; then it is clamped to [0, extent]
    // for a positive step, and for a negative one the start to
    // [0, extent - 1] and the end to [-1, extent - 1].
    auto bound = [&](const std::string& bounds, bool is_end) {
      const std::string value =
          context.Bind(Call("take", {bounds, std::to_string(index)}, {"axis=0"}));
      const std::string from_end =
          Where(Call("less", {value, "0i64"}), Call("add", {value, extent}), value);
      const std::string low = step > 0 || !is_end ? "0i64" : "-1i64";
      const std::string high = step > 0 ? extent : Call("subtract", {extent, "1i64"});
      return Call("minimum", {Call("maximum", {from_end, low}), high});
    };
    const std::string indices =
        Call("arange", {bound(starts, false), bound(ends, true), std::to_string(step) + "i64"},
             {"dtype=\"int64\""});
    data = context.Bind(Call("take", {data, indices}, {"axis=" + std::to_string(axis)}));
    shape[size_t(axis)] = -1;
  }
  OnnxValue value = Shaped(data, shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// Slice of a short constant int64 vector (a shape) with constant bounds:
// folded, as NumPy slices it (the bounds clamped as ONNX clamps them).
std::optional<OnnxValue> FoldSlice(ConvertContext& context) {
  const OnnxValue& data = context.Input(0);
  if (context.opset() < 10 || !data.constant || data.constant->dtype() != DType::kInt64 ||
      data.constant->ndim() != 1 || data.constant->element_count() > kMaximumShapeEntries ||
      !context.Input(1).constant || !context.Input(2).constant ||
      (context.HasInput(3) && !context.Input(3).constant) ||
      (context.HasInput(4) && !context.Input(4).constant)) {
    return std::nullopt;
  }
  const std::vector<int64_t> starts = IntValues(*context.Constant(1));
  const std::vector<int64_t> ends = IntValues(*context.Constant(2));
  if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
  if (context.HasInput(3) && NormalizeAxis(IntValues(*context.Constant(3)).at(0), 1) != 0)
    return std::nullopt;
  const int64_t step = context.HasInput(4) ? IntValues(*context.Constant(4)).at(0) : 1;
  if (step == 0) Refuse("a step of 0");
  const int64_t extent = data.constant->element_count();
  auto clamp = [&](int64_t value, bool is_end) {
    if (value < 0) value += extent;
    if (step > 0) return std::clamp<int64_t>(value, 0, extent);
    return std::min<int64_t>(std::max<int64_t>(value, is_end ? -1 : 0), extent - 1);
  };
  std::vector<int64_t> picked;
  for (int64_t at = clamp(starts[0], false), end = clamp(ends[0], true);
       step > 0 ? at < end : at > end; at += step) {
    picked.push_back(data.constant->data<int64_t>()[at]);
  }
  Ref<Tensor> result = Tensor::Empty(HostDevice(), {int64_t(picked.size())}, DType::kInt64);
  std::copy(picked.begin(), picked.end(), result->data<int64_t>());
  result->MarkImmutable();
  return ConstantValue(result);
}

std::vector<OnnxValue> ConvertSlice(ConvertContext& context) {
  if (std::optional<OnnxValue> folded = FoldSlice(context)) return {*folded};
  std::vector<int64_t> starts, ends, axes, steps;
  if (context.opset() >= 10) {
    bool run_time = !context.Input(1).constant || !context.Input(2).constant;
    const std::optional<std::vector<int64_t>>& shape = context.Input(0).shape;
    if (!run_time && shape) {
      // Bounds known, but an axis they slice is `?`.
      const size_t count = size_t(context.Input(1).constant->element_count());
      std::vector<int64_t> sliced;
      if (context.HasInput(3)) sliced = IntValues(*context.Constant(3));
      for (size_t axis = 0; axis < count && sliced.size() < count; ++axis)
        sliced.push_back(int64_t(axis));
      for (int64_t axis : sliced)
        run_time |= (*shape)[size_t(NormalizeAxis(axis, shape->size()))] < 0;
    }
    if (run_time) return RunTimeSlice(context);
  }
  if (context.opset() < 10) {
    starts = context.IntsAttribute("starts").value_or(std::vector<int64_t>{});
    ends = context.IntsAttribute("ends").value_or(std::vector<int64_t>{});
    axes = context.IntsAttribute("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = IntValues(*context.Constant(1));
    ends = IntValues(*context.Constant(2));
    if (context.HasInput(3)) axes = IntValues(*context.Constant(3));
    if (context.HasInput(4)) steps = IntValues(*context.Constant(4));
  }
  const size_t rank = RankOf(context, 0);
  if (axes.empty()) {
    for (size_t axis = 0; axis < starts.size(); ++axis) axes.push_back(int64_t(axis));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    Refuse("starts, ends, axes and steps of different lengths");
  std::vector<int64_t> shape = *context.Input(0).shape;
  // Clamped as ONNX clamps them (a huge end means "to the end").
  for (size_t index = 0; index < axes.size(); ++index) {
    axes[index] = NormalizeAxis(axes[index], rank);
    const int64_t extent = shape[size_t(axes[index])];
    if (extent < 0) Refuse("slicing an axis only known at run time (before opset 10)");
    // A negative step reads from a start in [0, extent - 1] down to an end in
    // [-1, extent - 1] (an empty axis gives an empty range).
    auto clamp = [&](int64_t value, bool is_end) {
      if (value < 0) value += extent;
      if (steps[index] > 0) return std::clamp<int64_t>(value, 0, extent);
      return std::min<int64_t>(std::max<int64_t>(value, is_end ? -1 : 0), extent - 1);
    };
    if (steps[index] == 0) Refuse("a step of 0");
    starts[index] = clamp(starts[index], false);
    ends[index] = clamp(ends[index], true);
  }
  // Positive steps slice in one strided_slice; an axis read backwards
  // takes the indices an arange of the (clamped) bounds gives.
  std::string data = context.Tensor(0);
  std::vector<int64_t> forward_starts, forward_ends, forward_steps, forward_axes;
  for (size_t index = 0; index < axes.size(); ++index) {
    const int64_t step = steps[index];
    shape[size_t(axes[index])] =
        step > 0 ? std::max<int64_t>(0, (ends[index] - starts[index] + step - 1) / step)
                 : std::max<int64_t>(0, (starts[index] - ends[index] - step - 1) / -step);
    if (step > 0) {
      forward_starts.push_back(starts[index]);
      forward_ends.push_back(std::max(ends[index], starts[index]));  // an empty slice
      forward_steps.push_back(step);
      forward_axes.push_back(axes[index]);
      continue;
    }
    const std::string indices =
        Call("arange",
             {std::to_string(starts[index]) + "i64", std::to_string(ends[index]) + "i64",
              std::to_string(step) + "i64"},
             {"dtype=\"int64\""});
    data = Call("take", {data, indices}, {"axis=" + std::to_string(axes[index])});
  }
  if (!forward_axes.empty()) {
    data = Call("strided_slice", {data},
                {"begin=" + IntList(forward_starts), "end=" + IntList(forward_ends),
                 "strides=" + IntList(forward_steps), "axes=" + IntList(forward_axes)});
  }
  return {Shaped(data, shape)};
}

std::vector<OnnxValue> ConvertSplit(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
  std::vector<int64_t> sizes;
  if (context.opset() < 13) {
    sizes = context.IntsAttribute("split").value_or(std::vector<int64_t>{});
  } else if (context.HasInput(1)) {
    sizes = IntValues(*context.Constant(1));
  }
  const size_t outputs = size_t(context.node().output_size());
  std::string sections;
  if (sizes.empty()) {
    const int64_t extent = StaticShapeOf(context, 0)[size_t(axis)];
    if (extent % int64_t(outputs) != 0) Refuse("an axis the outputs do not divide evenly");
    sections = std::to_string(outputs);
  } else {
    if (sizes.size() != outputs) Refuse("split sizes for another number of outputs");
    for (int64_t part : sizes) {
      if (part < 0) Refuse("negative split sizes");
    }
    if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) {
      // Empty parts: a slice per output (split takes no empty section).
      std::vector<OnnxValue> results;
      int64_t position = 0;
      for (int64_t part : sizes) {
        results.push_back(
            Result(Call("strided_slice", {context.Tensor(0)},
                        {"begin=" + IntList({position}), "end=" + IntList({position + part}),
                         "strides=[1]", "axes=" + IntList({axis})})));
        position += part;
      }
      return results;
    }
    std::vector<int64_t> indices;
    int64_t position = 0;
    for (size_t index = 0; index + 1 < sizes.size(); ++index)
      indices.push_back(position += sizes[index]);
    sections = IntList(indices);
  }
  const std::string parts =
      context.Bind(Call("split", {context.Tensor(0)},
                        {"indices_or_sections=" + sections, "axis=" + std::to_string(axis)}));
  std::vector<OnnxValue> results;
  for (size_t index = 0; index < outputs; ++index)
    results.push_back(Result(parts + "." + std::to_string(index)));
  return results;
}

std::vector<OnnxValue> ConvertPad(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  std::vector<int64_t> pads = context.opset() < 11
                                  ? context.IntsAttribute("pads").value_or(std::vector<int64_t>{})
                                  : IntValues(*context.Constant(1));
  if (pads.size() != 2 * rank) Refuse("pads for another rank");
  for (int64_t pad : pads) {
    if (pad < 0) Refuse("negative pads (cropping) are not supported");
  }
  std::string widths = "[";
  for (size_t axis = 0; axis < rank; ++axis)
    widths += (axis ? ", " : "") + IntList({pads[axis], pads[axis + rank]});
  widths += "]";
  const std::string mode = context.StringAttribute("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") Refuse("mode " + mode);
  const DType dtype = context.Input(0).dtype;
  std::string value = LiteralOf(dtype, 0);
  if (context.opset() < 11) {
    value = LiteralOf(dtype, context.FloatAttribute("value", 0.0f));
  } else if (context.HasInput(2)) {
    value = context.Tensor(2);
  }
  return {Result(Call("nn.pad", {context.Tensor(0), value},
                      {"pad_width=" + widths, "pad_mode=\"" + mode + "\""}))};
}

}  // namespace

void AddSliceConverters(std::map<std::string, Converter>& converters) {
  converters["Slice"] = ConvertSlice;
  converters["Split"] = ConvertSplit;
  converters["Pad"] = ConvertPad;
}

}  // namespace relay::onnx_import
