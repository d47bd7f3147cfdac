// What the converters share: writing Relay text (calls, literals, lists),
// reading inputs and constants, and refusing what cannot be converted.
// The converters themselves are onnx_elementwise.cc (elementwise operators
// and activations), onnx_products.cc (Gemm, MatMul, convolution, pooling),
// onnx_shape_converters.cc (data movement, shapes, constants),
// onnx_slice_converters.cc (Slice, Split, Pad), onnx_reductions.cc,
// onnx_resize.cc (Resize, Upsample), onnx_recurrent.cc (LSTM, GRU, RNN),
// onnx_control_flow.cc (If, Loop, Scan), onnx_index_converters.cc
// (GatherElements, OneHot, Hardmax, Trilu, EyeLike, ReverseSequence,
// CumSum), onnx_normalization.cc, onnx_einsum.cc and onnx_losses.cc
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), onnx_signal.cc
// (windows), onnx_scatter.cc (ScatterElements, ScatterND, MaxUnpool) and
// onnx_quantization.cc (QuantizeLinear, DequantizeLinear, ...),
// onnx_fourier.cc (DFT, STFT), onnx_linear_algebra.cc (Det) and
// onnx_selection.cc (Unique);
// onnx_converters.cc holds the table they are added to.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/frontends/onnx/onnx_converters.h"

namespace relay::onnx_import {

// Throws Unsupported: the node cannot be converted, for `reason`.
[[noreturn]] void Refuse(const std::string& reason);

// Shapes tracked entry by entry while importing have at most this many
// entries (a tensor's rank); a longer 1-D tensor is data, not a shape.
constexpr int64_t kMaximumShapeEntries = 64;

// [1, 2, 3] in Relay's text.
std::string IntList(const std::vector<int64_t>& values);

// A float32 literal; an infinity becomes float32's largest magnitude (for
// clip bounds), and NaN has no literal (Unsupported).
std::string FloatText(double value);

// A float64 literal, to float64's precision (an infinity becomes its
// largest magnitude).
std::string Float64Text(double value);

// op(args..., attributes...) in Relay's text.
std::string Call(const std::string& op, const std::vector<std::string>& args,
                 const std::vector<std::string>& attributes = {});

// where(condition, yes, no).
std::string Where(const std::string& condition, const std::string& yes, const std::string& no);

// A float literal of input 0's dtype (float32 or float64).
std::string Literal(const ConvertContext& context, double value);

// A converter's output: an expression, with what is known of it.
OnnxValue Result(std::string expr);
OnnxValue ConstantValue(Ref<Tensor> tensor);
OnnxValue Shaped(std::string expr, std::optional<std::vector<int64_t>> shape);

// NumPy's broadcast of the inputs' shapes (-1 where a dimension is only
// known at run time), or nothing when a rank is unknown.
std::optional<std::vector<int64_t>> BroadcastOfInputs(const ConvertContext& context);

// The known rank of input `index`, or Unsupported.
size_t RankOf(const ConvertContext& context, size_t index);

// The known shape of input `index` (every dimension known), or Unsupported.
std::vector<int64_t> StaticShapeOf(const ConvertContext& context, size_t index);

// A constant integer tensor's values (Unsupported for other dtypes).
std::vector<int64_t> IntValues(const Tensor& tensor);

// A constant numeric scalar's value (any dtype but bool).
double FloatValue(const Tensor& tensor);

// A literal of `value` in `dtype` (a cast of an int64 literal for the
// dtypes without literals of their own; Unsupported for bool).
std::string LiteralOf(DType dtype, double value);

// The product of `dims` (known, non-negative dimensions); Unsupported where
// it overflows int64 (a malformed model's declared shape).
int64_t Product(std::span<const int64_t> dims);

// `axis` in [0, rank), counting back from the end when negative.
int64_t NormalizeAxis(int64_t axis, size_t rank);

bool IsFloatDType(DType dtype);

// The node's axes, from its `axes` attribute (before `input_opset`) or its
// input `input` (from it); nothing when absent.
std::optional<std::vector<int64_t>> AxesOf(ConvertContext& context, int64_t input_opset,
                                           size_t input);

// A Relay tensor type: Tensor[(1, ?, 3), float32] (-1 for `?`), or the
// dtype alone for rank 0.
std::string TypeText(DType dtype, const std::vector<int64_t>& shape);

// A shape whose entries may be known only at run time: each entry's int64
// scalar expression, and its value where known while importing (-1
// elsewhere).
struct ShapeEntries {
  std::vector<std::string> exprs;
  std::vector<int64_t> known;
};
bool AllKnown(const ShapeEntries& entries);

// The literal 0 of `dtype` (Unsupported for dtypes without literals).
std::string ZeroLiteral(DType dtype);

// A tensor of the shape `entries` filled with `fill` (a literal of
// `dtype`), built by broadcasting: the known extents in one tensor, and
// each run-time extent in a vector along its axis (an arange of that
// length, times 0), added to it (or'ed, for bool).
std::string Filled(const ShapeEntries& entries, const std::string& fill, DType dtype);

// The extent of axis `axis` of `tensor` (whose shape is `shape`, when
// known) as an int64 scalar: a literal when known while importing, else
// read from its shape at run time.
std::string Extent(const std::string& tensor, const std::optional<std::vector<int64_t>>& shape,
                   size_t axis);

// 0, 1, ..., extent - 1 (int64) along axis `axis` of a tensor of rank
// `rank`, every other axis of extent 1 (to broadcast against others).
std::string PositionsAlong(const std::string& extent, size_t axis, size_t rank);

// `expr` (of `dtype`) as int64.
std::string AsInt64(const std::string& expr, DType dtype);

// `data` reshaped to `entries`: a reshape when at most one entry is only
// known at run time (it is what the element count leaves), else
// reshape_like a bool tensor of that shape (Filled).
std::string ReshapedTo(const std::string& data, const ShapeEntries& entries);

// `two_dimensional`, a converter of a 2-D window operator (N, C, H, W
// data), also converting the operator's 1-D form (N, C, W data) over a
// unit height (onnx_unit_height.cc).
Converter WithOneDimensional(Converter two_dimensional);

// GatherND's and ScatterND's row numbers: each index tuple of `tuples`
// (int64, its entries along axis `tuple_rank`, `depth` of them) as the row
// of data of `shape` whose axes from `batch` to `batch + depth` are
// flattened, its negative entries counted from their axis's end, offset by
// its position along the first `batch` axes (batch_dims).
std::string TupleRows(ConvertContext& context, const std::string& tuples,
                      const std::vector<int64_t>& shape, size_t tuple_rank, size_t batch,
                      size_t depth);

// The converters of the files named above, added to the table by
// onnx_converters.cc.
void AddElementwiseConverters(std::map<std::string, Converter>& converters);
void AddProductConverters(std::map<std::string, Converter>& converters);
void AddShapeConverters(std::map<std::string, Converter>& converters);
void AddSliceConverters(std::map<std::string, Converter>& converters);
void AddReductionConverters(std::map<std::string, Converter>& converters);
void AddResizeConverters(std::map<std::string, Converter>& converters);
void AddRecurrentConverters(std::map<std::string, Converter>& table);
void AddControlFlowConverters(std::map<std::string, Converter>& table);
void AddIndexConverters(std::map<std::string, Converter>& table);
void AddNormalizationConverters(std::map<std::string, Converter>& table);
void AddEinsumConverter(std::map<std::string, Converter>& table);
void AddLossConverters(std::map<std::string, Converter>& table);
void AddSignalConverters(std::map<std::string, Converter>& table);
void AddScatterConverters(std::map<std::string, Converter>& table);
void AddQuantizationConverters(std::map<std::string, Converter>& table);
void AddVisionConverters(std::map<std::string, Converter>& table);
void AddFourierConverters(std::map<std::string, Converter>& table);
void AddLinearAlgebraConverters(std::map<std::string, Converter>& table);
void AddSelectionConverters(std::map<std::string, Converter>& table);

}  // namespace relay::onnx_import
