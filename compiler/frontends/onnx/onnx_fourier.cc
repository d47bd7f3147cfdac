// Fourier transforms: DFT and STFT (opset 17), onto Relay's dft. ONNX keeps
// a complex tensor as a last axis of (real, imaginary), or of (real,) for a
// real signal; Relay's dft takes the two parts as tensors and transforms
// along their last axis, so the converters split the parts, bring the
// signal axis last (DFT) or gather the frames (STFT), and stack the parts
// of the result back. dft's inverse divides by N, as ONNX's does.
#include <onnx/onnx_pb.h>

#include <numeric>
#include <tuple>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// The real and imaginary parts of `x` (rank `rank`, its last axis of
// `components` entries, 1 or 2), each without that axis; a real signal's
// imaginary part is zeros.
std::pair<std::string, std::string> ComplexParts(ConvertContext& context, const std::string& x,
                                                 size_t rank, int64_t components) {
  const std::string last = "axis=" + std::to_string(rank - 1);
  const std::string real = context.Bind(Call("take", {x, "0"}, {last}));
  if (components == 1) return {real, Call("zeros_like", {real})};
  return {real, Call("take", {x, "1"}, {last})};
}

// The number of components of a complex tensor's last axis: 1 or 2.
int64_t ComponentsOf(const std::vector<int64_t>& shape) {
  const int64_t components = shape.empty() ? -1 : shape.back();
  if (components != 1 && components != 2)
    Refuse("a last axis other than 1 (real) or 2 (real, imaginary) entries");
  return components;
}

// A constant integer scalar (or one-element tensor) input.
int64_t ScalarInput(ConvertContext& context, size_t index, const std::string& what) {
  const std::vector<int64_t> values = IntValues(*context.Constant(index));
  if (values.size() != 1) Refuse(what + " of more than one value");
  return values[0];
}

// `part` (rank `rank`) with its axis `axis` cut to its first `length`
// entries.
std::string Truncated(const std::string& part, size_t axis, int64_t length) {
  return Call("strided_slice", {part},
              {"begin=[0]", "end=" + IntList({length}), "axes=" + IntList({int64_t(axis)})});
}

// `part` (rank `rank`, of `dtype`) with zeros after axis `axis`'s end, `extra`
// of them.
std::string ZeroPadded(const std::string& part, size_t rank, size_t axis, int64_t extra,
                       DType dtype) {
  std::string pads = "[";
  for (size_t index = 0; index < rank; ++index) {
    pads +=
        std::string(index ? ", " : "") + "[0, " + std::to_string(index == axis ? extra : 0) + "]";
  }
  return Call("nn.pad", {part, LiteralOf(dtype, 0)}, {"pad_width=" + pads + "]"});
}

// dft of (real, imaginary) along their last axis (of rank `rank`), the
// first `bins` of its results kept where fewer than the transform's
// `length` (both known while importing; -1 for both keeps every result);
// the two parts of the result.
std::pair<std::string, std::string> Transformed(ConvertContext& context, const std::string& real,
                                                const std::string& imaginary, size_t rank,
                                                int64_t length, int64_t bins, bool inverse) {
  const std::string both = context.Bind(
      Call("dft", {real, imaginary}, {std::string("inverse=") + (inverse ? "True" : "False")}));
  std::string re = both + ".0", im = both + ".1";
  if (bins < length) {
    re = Truncated(re, rank - 1, bins);
    im = Truncated(im, rank - 1, bins);
  }
  return {re, im};
}

// The parts stacked as a new last axis of a tensor of rank `rank` + 1.
std::string Stacked(const std::string& real, const std::string& imaginary, size_t rank) {
  return Call("stack", {"(" + real + ", " + imaginary + ")"}, {"axis=" + std::to_string(rank)});
}

// DFT: along `axis` of the signal (..., N, ..., 1|2), over its first
// dft_length entries (zeros after its end where dft_length is the
// longer), the first dft_length / 2 + 1 frequencies with `onesided` (a real
// signal's others are their conjugates).
std::vector<OnnxValue> ConvertDFT(ConvertContext& context) {
  const OnnxValue& input = context.Input(0);
  if (!IsFloatDType(input.dtype)) Refuse("a signal other than float16, float32 or float64");
  const size_t rank = RankOf(context, 0);
  if (rank < 2) Refuse("a signal of rank below 2 (a signal axis and the complex axis)");
  std::vector<int64_t> shape = *input.shape;
  const int64_t components = ComponentsOf(shape);
  // Opset 20 moved the axis to an input, counted from the back when
  // negative (default -2, the last signal axis); opset 17's attribute
  // defines no negative axis.
  int64_t axis = 0;
  if (context.opset() >= 20) {
    axis = context.HasInput(2) ? ScalarInput(context, 2, "an axis") : -2;
    if (axis < 0) axis += int64_t(rank);
  } else {
    axis = context.IntAttribute("axis", 1);
    if (axis < 0) Refuse("a negative axis (opset 17 defines none)");
  }
  if (axis < 0 || axis > int64_t(rank) - 2) Refuse("an axis outside the signal's axes");
  const size_t along = size_t(axis);
  const int64_t extent = shape[along];
  if (extent < 0) Refuse("a signal axis whose length is only known at run time");
  int64_t length = extent;
  if (context.HasInput(1)) {
    length = ScalarInput(context, 1, "dft_length");
    if (length < 1) Refuse("a dft_length below 1");
  }
  const bool inverse = context.IntAttribute("inverse", 0) != 0;
  const bool onesided = context.IntAttribute("onesided", 0) != 0;
  if (onesided && (inverse || components == 2))
    Refuse("onesided with inverse or with a complex signal (defined for real signals only)");
  const int64_t bins = onesided ? length / 2 + 1 : length;

  // The parts, of rank `rank` - 1, their signal axis moved last.
  const size_t part_rank = rank - 1;
  std::vector<int64_t> order(part_rank);
  std::iota(order.begin(), order.end(), int64_t(0));
  order.erase(order.begin() + int64_t(along));
  order.push_back(int64_t(along));
  std::vector<int64_t> back(part_rank);
  for (size_t index = 0; index < part_rank; ++index) back[size_t(order[index])] = int64_t(index);
  const bool moved = along != part_rank - 1;
  auto [real, imaginary] = ComplexParts(context, context.Tensor(0), rank, components);
  auto prepare = [&](std::string part) {
    if (moved) part = Call("transpose", {part}, {"axes=" + IntList(order)});
    if (length < extent) part = Truncated(part, part_rank - 1, length);
    if (length > extent)
      part = ZeroPadded(part, part_rank, part_rank - 1, length - extent, input.dtype);
    return part;
  };
  auto [re, im] =
      Transformed(context, prepare(real), prepare(imaginary), part_rank, length, bins, inverse);
  if (moved) {
    re = Call("transpose", {re}, {"axes=" + IntList(back)});
    im = Call("transpose", {im}, {"axes=" + IntList(back)});
  }
  shape[along] = bins;
  shape.back() = 2;
  OnnxValue value = Shaped(Stacked(re, im, part_rank), shape);
  value.dtype = input.dtype;
  return {value};
}

// An int64 scalar known while importing (`known`, its literal) or only at
// run time (known -1).
struct Count {
  std::string expr;
  int64_t known = -1;
};

Count KnownCount(int64_t value) {
  return {std::to_string(value) + "i64", value};
}

// Input `index`, an integer scalar (or one-element tensor): its value when
// a constant, else its int64 value at run time.
Count CountInput(ConvertContext& context, size_t index, const std::string& what) {
  const OnnxValue& input = context.Input(index);
  if (input.dtype != DType::kInt64 && input.dtype != DType::kInt32)
    Refuse(what + " other than int32 or int64");
  if (input.constant) return KnownCount(ScalarInput(context, index, what));
  if (input.shape && input.shape->size() > 1) Refuse(what + " of rank above 1");
  return {
      context.Bind(Call("reshape", {AsInt64(context.Tensor(index), input.dtype)}, {"newshape=[]"})),
      -1};
}

// STFT: frames of frame_length samples every frame_step samples of each
// signal (batch, length, 1|2), each times the window where one is given,
// transformed: (batch, frames, frequencies, 2), the first
// frame_length / 2 + 1 frequencies with onesided (the default). frame_step
// and frame_length may be known only at run time (then so are the frame
// and frequency counts).
std::vector<OnnxValue> ConvertSTFT(ConvertContext& context) {
  const OnnxValue& signal = context.Input(0);
  if (!IsFloatDType(signal.dtype)) Refuse("a signal other than float16, float32 or float64");
  if (RankOf(context, 0) != 3) Refuse("a signal of rank other than 3 (batch, length, 1|2)");
  const std::vector<int64_t>& shape = *signal.shape;
  const int64_t components = ComponentsOf(shape);
  const Count samples =
      shape[1] >= 0 ? KnownCount(shape[1]) : Count{Extent(context.Tensor(0), signal.shape, 1), -1};
  Count step = CountInput(context, 1, "frame_step");
  if (step.known >= 0 && step.known < 1) Refuse("a frame_step below 1");
  // An invalid step below 1 seen only at run time counts as 1, so that
  // nothing divides by zero.
  if (step.known < 0) step.expr = context.Bind(Call("maximum", {step.expr, "1i64"}));
  const bool windowed = context.HasInput(2);
  Count length;
  if (windowed) {
    if (RankOf(context, 2) != 1) Refuse("a window of rank other than 1");
    if (context.Input(2).dtype != signal.dtype) Refuse("a window of another dtype than the signal");
    const int64_t known = (*context.Input(2).shape)[0];
    length = known >= 0 ? KnownCount(known) : Count{Extent(context.Tensor(2), std::nullopt, 0), -1};
  }
  if (context.HasInput(3)) {
    const Count given = CountInput(context, 3, "frame_length");
    if (given.known >= 0 && length.known >= 0 && given.known != length.known)
      Refuse("a frame_length other than the window's length");
    // Where the window's length is known, it is the frame length (a
    // frame_length that disagrees at run time fails the window's multiply).
    if (!windowed || (length.known < 0 && given.known >= 0)) length = given;
  }
  if (length.expr.empty()) Refuse("neither a frame_length nor a window");
  if (length.known >= 0 &&
      (length.known < 1 || (samples.known >= 0 && length.known > samples.known)))
    Refuse("a frame length outside 1 to the signal's length");
  const bool onesided = context.IntAttribute("onesided", 1) != 0;
  if (onesided && components == 2)
    Refuse("onesided (the default) with a complex signal (defined for real signals only)");
  const bool all_known = samples.known >= 0 && step.known >= 0 && length.known >= 0;
  const int64_t frames = all_known ? (samples.known - length.known) / step.known + 1 : -1;
  const int64_t bins = length.known < 0 ? -1 : (onesided ? length.known / 2 + 1 : length.known);

  // Sample f * step + k of frame f, position k: (frames, length) int64.
  auto positions = [](const std::string& count) {
    return Call("arange", {"0i64", count, "1i64"}, {"dtype=\"int64\""});
  };
  const std::string frame_count =
      all_known
          ? std::to_string(frames) + "i64"
          : Call("add", {Call("divide", {Call("subtract", {samples.expr, length.expr}), step.expr}),
                         "1i64"});
  const std::string starts =
      Call("expand_dims", {Call("multiply", {positions(frame_count), step.expr})}, {"axis=1"});
  const std::string samples_of_frames = context.Bind(Call("add", {starts, positions(length.expr)}));
  auto [real, imaginary] = ComplexParts(context, context.Tensor(0), 3, components);
  const std::string window = windowed ? context.Tensor(2) : "";
  // (batch, frames, length), windowed.
  auto framed = [&](const std::string& part) {
    std::string frames_of_part = Call("take", {part, samples_of_frames}, {"axis=1"});
    if (windowed) frames_of_part = Call("multiply", {frames_of_part, window});
    return frames_of_part;
  };
  std::string re, im;
  if (length.known >= 0) {
    std::tie(re, im) =
        Transformed(context, framed(real), framed(imaginary), 3, length.known, bins, false);
  } else {
    std::tie(re, im) = Transformed(context, framed(real), framed(imaginary), 3, -1, -1, false);
    if (onesided) {
      // The first length / 2 + 1 frequencies, a count known at run time.
      const std::string kept =
          context.Bind(positions(Call("add", {Call("divide", {length.expr, "2i64"}), "1i64"})));
      re = Call("take", {re, kept}, {"axis=2"});
      im = Call("take", {im, kept}, {"axis=2"});
    }
  }
  OnnxValue value = Shaped(Stacked(re, im, 3), std::vector<int64_t>{shape[0], frames, bins, 2});
  value.dtype = signal.dtype;
  return {value};
}

}  // namespace

void AddFourierConverters(std::map<std::string, Converter>& table) {
  table["DFT"] = ConvertDFT;
  table["STFT"] = ConvertSTFT;
}

}  // namespace relay::onnx_import
