// Operators of positions: those written out over index arithmetic (arange
// along an axis, compared with indices or with another axis's arange, then
// `where`, a cast or a masked sum: GatherElements, OneHot, Hardmax, Trilu,
// EyeLike, ReverseSequence, GatherND), and those Relay's search operators
// compute (CumSum, TopK, NonZero, Compress).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"
#include "compiler/frontends/onnx/onnx_tensors.h"

namespace relay::onnx_import {

namespace {

// The extent of input `index`'s axis `axis` as an int64 scalar.
std::string Extent(ConvertContext& context, size_t index, size_t axis) {
  return relay::onnx_import::Extent(context.Tensor(index), context.Input(index).shape, axis);
}

std::string DTypeText(DType dtype) {
  return "\"" + std::string(DTypeName(dtype)) + "\"";
}

// GatherElements: gather, its negative indices counted from the axis's end.
std::vector<OnnxValue> ConvertGatherElements(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const size_t axis = size_t(NormalizeAxis(context.IntAttribute("axis", 0), rank));
  const OnnxValue& indices = context.Input(1);
  if (indices.dtype != DType::kInt64 && indices.dtype != DType::kInt32)
    Refuse("indices other than int32 or int64");
  const std::string index = context.Bind(AsInt64(context.Tensor(1), indices.dtype));
  const std::string wrapped =
      Where(Call("less", {index, "0i64"}), Call("add", {index, Extent(context, 0, axis)}), index);
  OnnxValue value =
      Shaped(Call("gather", {context.Tensor(0), wrapped}, {"axis=" + std::to_string(axis)}),
             indices.shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// OneHot: indices (negative ones counted from depth) compared with the
// positions 0..depth-1 along the new axis, choosing on or off values.
std::vector<OnnxValue> ConvertOneHot(ConvertContext& context) {
  const size_t rank = RankOf(context, 0) + 1;
  const size_t axis = size_t(NormalizeAxis(context.IntAttribute("axis", -1), rank));
  const OnnxValue& depth = context.Input(1);
  if (depth.shape && depth.shape->size() > 1) Refuse("a depth of more than one element");
  // Indices and depth of any numeric dtype; fractions are dropped.
  std::string depth_expr = AsInt64(context.Tensor(1), depth.dtype);
  if (!depth.shape || !depth.shape->empty())
    depth_expr = Call("reshape", {depth_expr}, {"newshape=[]"});
  const std::string count = context.Bind(depth_expr);
  const std::string index = context.Bind(AsInt64(context.Tensor(0), context.Input(0).dtype));
  const std::string wrapped =
      Where(Call("less", {index, "0i64"}), Call("add", {index, count}), index);
  const std::string values = context.Tensor(2);
  const std::string off = Call("take", {values, "0"}, {"axis=0"});
  const std::string on = Call("take", {values, "1"}, {"axis=0"});
  std::optional<std::vector<int64_t>> shape;
  if (context.Input(0).shape) {
    shape = *context.Input(0).shape;
    int64_t known = -1;
    if (depth.constant) {
      const double count = FloatValue(*depth.constant);
      if (!(count >= 1 && count < double(std::numeric_limits<int32_t>::max())))
        Refuse("a depth outside 1 to 2^31");
      known = int64_t(count);
    }
    shape->insert(shape->begin() + int64_t(axis), known);
  }
  OnnxValue value =
      Shaped(Where(Call("equal", {Call("expand_dims", {wrapped}, {"axis=" + std::to_string(axis)}),
                                  PositionsAlong(count, axis, rank)}),
                   on, off),
             shape);
  value.dtype = context.Input(2).dtype;
  return {value};
}

// Hardmax: 1 at the first largest element along the axis, 0 elsewhere.
// Before opset 13 the data is taken as 2-D, axes from `axis` on flattened.
std::vector<OnnxValue> ConvertHardmax(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  const int64_t default_axis = context.opset() < 13 ? 1 : -1;
  const size_t axis = size_t(NormalizeAxis(context.IntAttribute("axis", default_axis), rank));
  std::string data = context.Tensor(0);
  size_t along = axis, data_rank = rank;
  std::string extent = Extent(context, 0, axis);
  if (context.opset() < 13) {
    const std::vector<int64_t> shape = StaticShapeOf(context, 0);
    const int64_t rows = Product(std::span(shape).first(axis));
    const int64_t columns = Product(std::span(shape).subspan(axis));
    data = Call("reshape", {data}, {"newshape=" + IntList({rows, columns})});
    along = 1;
    data_rank = 2;
    extent = std::to_string(columns) + "i64";
  }
  const std::string largest =
      Call("cast", {Call("argmax", {data}, {"axis=" + IntList({int64_t(along)}), "keepdims=True"})},
           {"dtype=\"int64\""});
  std::string result =
      Call("cast", {Call("equal", {PositionsAlong(extent, along, data_rank), largest})},
           {"dtype=" + DTypeText(context.Input(0).dtype)});
  if (context.opset() < 13)
    result = Call("reshape", {result}, {"newshape=" + IntList(*context.Input(0).shape)});
  OnnxValue value = Shaped(result, context.Input(0).shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// Whether element (row, column) of the last two axes is on the diagonal
// `k` (column - row == k) or on its side (>= for an upper, <= for a
// lower triangle), as a bool tensor of shape (rows, columns).
std::string DiagonalMask(const std::string& rows, const std::string& columns, const std::string& k,
                         const std::string& comparison) {
  const std::string offset =
      Call("subtract", {PositionsAlong(columns, 1, 2), PositionsAlong(rows, 0, 2)});
  return Call(comparison, {offset, k});
}

// Trilu: the elements on and above (upper) or below (lower) diagonal k of
// the last two axes, zeros elsewhere.
std::vector<OnnxValue> ConvertTrilu(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank < 2) Refuse("data of rank below 2");
  std::string k = "0i64";
  if (context.HasInput(1)) {
    const OnnxValue& offset = context.Input(1);
    if (offset.dtype != DType::kInt64) Refuse("k other than int64");
    k = context.Tensor(1);
    if (!offset.shape || !offset.shape->empty()) k = Call("reshape", {k}, {"newshape=[]"});
  }
  const bool upper = context.IntAttribute("upper", 1) != 0;
  const std::string x = context.Tensor(0);
  const std::string mask = DiagonalMask(Extent(context, 0, rank - 2), Extent(context, 0, rank - 1),
                                        k, upper ? "greater_equal" : "less_equal");
  OnnxValue value = Shaped(Where(mask, x, Call("zeros_like", {x})), context.Input(0).shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// EyeLike: ones on diagonal k of a 2-D tensor of the input's shape.
std::vector<OnnxValue> ConvertEyeLike(ConvertContext& context) {
  if (RankOf(context, 0) != 2) Refuse("data of rank other than 2");
  DType dtype = context.Input(0).dtype;
  if (const onnx::AttributeProto* attribute = context.Attribute("dtype")) {
    const std::optional<DType> chosen = DTypeOfElementType(int32_t(attribute->i()));
    if (!chosen) Refuse("a dtype relay-vm does not support");
    dtype = *chosen;
  }
  const std::string k = std::to_string(context.IntAttribute("k", 0)) + "i64";
  OnnxValue value =
      Shaped(Call("cast", {DiagonalMask(Extent(context, 0, 0), Extent(context, 0, 1), k, "equal")},
                  {"dtype=" + DTypeText(dtype)}),
             context.Input(0).shape);
  value.dtype = dtype;
  return {value};
}

// ReverseSequence: each batch row's first `length` steps along the time
// axis reversed, the rest kept: a gather of the computed source steps.
std::vector<OnnxValue> ConvertReverseSequence(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank < 2) Refuse("data of rank below 2");
  const size_t time = size_t(NormalizeAxis(context.IntAttribute("time_axis", 0), rank));
  const size_t batch = size_t(NormalizeAxis(context.IntAttribute("batch_axis", 1), rank));
  if (time == batch || time > 1 || batch > 1) Refuse("time and batch axes other than 0 and 1");
  const std::string steps = PositionsAlong(Extent(context, 0, time), time, 2);
  std::string lengths = AsInt64(context.Tensor(1), context.Input(1).dtype);
  lengths = Call("reshape", {lengths},
                 {"newshape=" +
                  IntList(time == 0 ? std::vector<int64_t>{1, -1} : std::vector<int64_t>{-1, 1})});
  lengths = context.Bind(lengths);
  std::string source = Where(Call("less", {steps, lengths}),
                             Call("subtract", {Call("subtract", {lengths, "1i64"}), steps}), steps);
  for (size_t axis = 2; axis < rank; ++axis)
    source = Call("expand_dims", {source}, {"axis=" + std::to_string(axis)});
  const std::string data = context.Tensor(0);
  OnnxValue value = Shaped(Call("gather", {data, Call("broadcast_to_like", {source, data})},
                                {"axis=" + std::to_string(time)}),
                           context.Input(0).shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// CumSum: Relay's cumsum along the axis; in reverse, the scan of the
// reversed data, reversed back.
std::vector<OnnxValue> ConvertCumSum(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank == 0) Refuse("a scalar input (CumSum runs along an axis)");
  const std::vector<int64_t> axes = IntValues(*context.Constant(1));
  if (axes.size() != 1) Refuse("an axis of more than one value");
  const std::string axis = "axis=" + std::to_string(NormalizeAxis(axes[0], rank));
  const bool reverse = context.IntAttribute("reverse", 0) != 0;
  std::string data = context.Tensor(0);
  if (reverse) data = Call("reverse", {data}, {axis});
  std::string sums = Call("cumsum", {data},
                          {axis, std::string("exclusive=") +
                                     (context.IntAttribute("exclusive", 0) ? "True" : "False")});
  if (reverse) sums = Call("reverse", {sums}, {axis});
  OnnxValue value = Shaped(sums, context.Input(0).shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// TopK: Relay's topk, both results (int64 positions); ties keep the lower
// position first, as ONNX asks. Unsorted results come sorted, as ONNX
// Runtime gives them.
std::vector<OnnxValue> ConvertTopK(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank == 0) Refuse("a scalar input (TopK runs along an axis)");
  const size_t axis = size_t(NormalizeAxis(context.IntAttribute("axis", -1), rank));
  int64_t k = 0;
  if (context.opset() < 10) {
    k = context.IntAttribute("k", 0);
  } else {
    const std::vector<int64_t> values = IntValues(*context.Constant(1));
    if (values.size() != 1) Refuse("k of more than one value");
    k = values[0];
  }
  const int64_t extent = (*context.Input(0).shape)[axis];
  // (Relay's topk reads k < 1 as the whole axis.)
  if (k < 1 || (extent >= 0 && k > extent)) Refuse("k outside 1 to the axis's extent");
  const bool largest = context.IntAttribute("largest", 1) != 0;
  const std::string both = context.Bind(
      Call("topk", {context.Tensor(0)},
           {"k=" + std::to_string(k), "axis=" + std::to_string(axis),
            std::string("is_ascend=") + (largest ? "False" : "True"), "dtype=\"int64\""}));
  std::vector<int64_t> shape = *context.Input(0).shape;
  shape[axis] = k;
  OnnxValue value = Shaped(both + ".0", shape);
  value.dtype = context.Input(0).dtype;
  OnnxValue index = Shaped(both + ".1", shape);
  index.dtype = DType::kInt64;
  return {value, index};
}

// The positions of the nonzero elements of `condition` (a Relay
// expression), one row each, as int64.
std::string NonzeroRows(const std::string& condition) {
  return Call("cast", {Call("argwhere", {condition})}, {"dtype=\"int64\""});
}

// NonZero: argwhere's rows, transposed to one row per axis.
std::vector<OnnxValue> ConvertNonZero(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (rank == 0) Refuse("a scalar input");
  OnnxValue value = Shaped(Call("transpose", {NonzeroRows(context.Tensor(0))}, {"axes=[1, 0]"}),
                           std::vector<int64_t>{int64_t(rank), -1});
  value.dtype = DType::kInt64;
  return {value};
}

// Compress: the slices along the axis (of the flattened input without one)
// whose condition is true, taken at the condition's nonzero positions.
std::vector<OnnxValue> ConvertCompress(ConvertContext& context) {
  const size_t rank = RankOf(context, 0);
  if (RankOf(context, 1) != 1) Refuse("a condition that is not 1-D");
  const std::optional<int64_t> axis =
      context.Attribute("axis") != nullptr
          ? std::optional<int64_t>(NormalizeAxis(context.IntAttribute("axis", 0), rank))
          : std::nullopt;
  std::string data = context.Tensor(0);
  std::vector<int64_t> shape = *context.Input(0).shape;
  if (!axis) {
    data = Call("reshape", {data}, {"newshape=[-1]"});
    const bool known =
        std::all_of(shape.begin(), shape.end(), [](int64_t dim) { return dim >= 0; });
    shape = {known ? Product(shape) : -1};
  }
  const size_t along = axis ? size_t(*axis) : 0;
  const int64_t length = (*context.Input(1).shape)[0];
  if (length >= 0 && shape[along] >= 0 && length > shape[along]) {
    Refuse("a condition longer than the axis it selects from");
  }
  const std::string positions =
      Call("reshape", {NonzeroRows(context.Tensor(1))}, {"newshape=[-1]"});
  shape[along] = -1;
  OnnxValue value =
      Shaped(Call("take", {data, positions}, {"axis=" + std::to_string(along)}), shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

// GatherND: each index tuple (the last axis of `indices`, of length k)
// flattened to a row number of the data's k axes after the batch_dims
// leading ones (negative entries counted from their axis's end), offset by
// its batch position, then a `take` of those rows of the data reshaped to
// (rows, the rest...).
std::vector<OnnxValue> ConvertGatherND(ConvertContext& context) {
  const std::vector<int64_t> data_shape = StaticShapeOf(context, 0);
  const OnnxValue& indices = context.Input(1);
  if (indices.dtype != DType::kInt64) Refuse("indices other than int64");
  if (!indices.shape || indices.shape->empty() || indices.shape->back() < 0)
    Refuse("indices whose last axis is only known at run time");
  const size_t batch = size_t(context.IntAttribute("batch_dims", 0));
  const size_t depth = size_t(indices.shape->back());
  const size_t tuple_rank = indices.shape->size() - 1;
  if (batch > tuple_rank || batch + depth > data_shape.size() || depth < 1)
    Refuse("batch_dims and index tuples that do not fit the data");
  for (size_t axis = 0; axis < batch; ++axis) {
    if ((*indices.shape)[axis] != data_shape[axis]) Refuse("batch axes of different extents");
  }
  const std::string row =
      TupleRows(context, context.Bind(context.Tensor(1)), data_shape, tuple_rank, batch, depth);
  std::vector<int64_t> rows_shape{Product(std::span(data_shape).first(batch + depth))};
  rows_shape.insert(rows_shape.end(), data_shape.begin() + int64_t(batch + depth),
                    data_shape.end());
  const std::string rows =
      Call("reshape", {context.Tensor(0)}, {"newshape=" + IntList(rows_shape)});
  std::vector<int64_t> shape(indices.shape->begin(), indices.shape->end() - 1);
  shape.insert(shape.end(), data_shape.begin() + int64_t(batch + depth), data_shape.end());
  OnnxValue value = Shaped(Call("take", {rows, row}, {"axis=0"}), shape);
  value.dtype = context.Input(0).dtype;
  return {value};
}

}  // namespace

void AddIndexConverters(std::map<std::string, Converter>& table) {
  table["GatherElements"] = ConvertGatherElements;
  table["OneHot"] = ConvertOneHot;
  table["Hardmax"] = ConvertHardmax;
  table["Trilu"] = ConvertTrilu;
  table["EyeLike"] = ConvertEyeLike;
  table["ReverseSequence"] = ConvertReverseSequence;
  table["CumSum"] = ConvertCumSum;
  table["TopK"] = ConvertTopK;
  table["NonZero"] = ConvertNonZero;
  table["Compress"] = ConvertCompress;
  table["GatherND"] = ConvertGatherND;
}

}  // namespace relay::onnx_import
