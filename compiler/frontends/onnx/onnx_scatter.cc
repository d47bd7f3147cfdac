// Scatters: ScatterElements (and its older name Scatter), ScatterND and
// MaxUnpool, over Relay's scatter_add. Replacing (reduction "none")
// scatters the updates onto zeros and their count onto zeros, and keeps the
// data where nothing landed; ONNX leaves duplicate indices undefined there,
// and here they add up (MaxUnpool's average, see there).
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// `data` with `updates` put at `indices` along `axis` (indices within the
// axis, as scatter_add reads them), as `reduction` says.
std::string Scattered(const std::string& data, const std::string& indices,
                      const std::string& updates, int64_t axis, const std::string& reduction) {
  const std::string along = "axis=" + std::to_string(axis);
  if (reduction == "add") return Call("scatter_add", {data, indices, updates}, {along});
  const std::string zeros = Call("zeros_like", {data});
  const std::string landed =
      Call("scatter_add", {zeros, indices, Call("ones_like", {updates})}, {along});
  return Where(Call("greater", {landed, Call("zeros_like", {data})}),
               Call("scatter_add", {zeros, indices, updates}, {along}), data);
}

std::string ReductionOf(ConvertContext& context, DType dtype) {
  const std::string reduction = context.StringAttribute("reduction", "none");
  if (reduction != "none" && reduction != "add") Refuse("reduction '" + reduction + "'");
  if (dtype == DType::kBool) Refuse("bool data");
  return reduction;
}

std::string Int64Indices(ConvertContext& context, size_t index) {
  const DType dtype = context.Input(index).dtype;
  if (dtype != DType::kInt64 && dtype != DType::kInt32) Refuse("indices other than int32 or int64");
  return context.Bind(AsInt64(context.Tensor(index), dtype));
}

// ScatterElements: updates[j] goes to data's position j with its `axis`
// entry replaced by indices[j] (negative counted from the axis's end).
std::vector<OnnxValue> ConvertScatterElements(ConvertContext& context) {
  const OnnxValue& data = context.Input(0);
  const size_t rank = RankOf(context, 0);
  const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
  const std::string reduction = ReductionOf(context, data.dtype);
  const std::string index = Int64Indices(context, 1);
  const std::string extent = Extent(context.Tensor(0), data.shape, size_t(axis));
  const std::string wrapped =
      context.Bind(Where(Call("less", {index, "0i64"}), Call("add", {index, extent}), index));
  OnnxValue value =
      Shaped(Scattered(context.Tensor(0), wrapped, context.Tensor(2), axis, reduction), data.shape);
  value.dtype = data.dtype;
  return {value};
}

// ScatterND: each index tuple (indices' last axis, k entries) names a
// slice data[i0, ..., ik-1]; the data is taken as rows (its first k axes
// flattened), each tuple becomes its row's number, and the updates are
// scattered onto the rows along axis 0.
std::vector<OnnxValue> ConvertScatterND(ConvertContext& context) {
  const OnnxValue& data = context.Input(0);
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  const std::vector<int64_t> index_shape = StaticShapeOf(context, 1);
  const std::string reduction = ReductionOf(context, data.dtype);
  if (index_shape.empty()) Refuse("scalar indices");
  const size_t depth = size_t(index_shape.back());
  if (depth == 0 || depth > shape.size()) Refuse("index tuples longer than the data's rank");
  const size_t tuple_axis = index_shape.size() - 1;
  const std::string row =
      TupleRows(context, Int64Indices(context, 1), shape, tuple_axis, /*batch=*/0, depth);
  const int64_t row_count = Product(std::span(shape).first(depth));
  const int64_t tuples = Product(std::span(index_shape).first(tuple_axis));
  std::vector<int64_t> rows_shape = {row_count};
  std::vector<int64_t> updates_shape = {tuples};
  std::vector<int64_t> row_index_shape = {tuples};
  for (size_t axis = depth; axis < shape.size(); ++axis) {
    rows_shape.push_back(shape[axis]);
    updates_shape.push_back(shape[axis]);
    row_index_shape.push_back(1);
  }
  const std::string rows =
      Call("reshape", {context.Tensor(0)}, {"newshape=" + IntList(rows_shape)});
  const std::string updates =
      context.Bind(Call("reshape", {context.Tensor(2)}, {"newshape=" + IntList(updates_shape)}));
  const std::string row_index =
      Call("broadcast_to_like",
           {Call("reshape", {row}, {"newshape=" + IntList(row_index_shape)}), updates});
  OnnxValue value =
      Shaped(Call("reshape", {Scattered(rows, context.Bind(row_index), updates, 0, reduction)},
                  {"newshape=" + IntList(shape)}),
             shape);
  value.dtype = data.dtype;
  return {value};
}

// The spatial attribute `name` (`count` entries, each at least `minimum`),
// or `fallback` when absent.
std::vector<int64_t> SpatialAttribute(ConvertContext& context, const std::string& name,
                                      size_t count, int64_t fallback, int64_t minimum) {
  std::vector<int64_t> values =
      context.IntsAttribute(name).value_or(std::vector<int64_t>(count, fallback));
  if (values.size() != count) Refuse(name + " of another length than the spatial axes'");
  for (int64_t value : values) {
    if (value < minimum) Refuse(name + " below " + std::to_string(minimum));
  }
  return values;
}

// MaxUnpool: zeros of the unpooled shape with X's values at their flat
// positions I over the whole output ([0, N C D1 ... Dn), as MaxPool's
// Indices output gives them), scattered along the flattened output. A
// position named twice gets the average of its values (MaxPool's
// overlapping windows name an element once per window that picked it,
// always with its one value; ONNX does not define other duplicates).
// Positions outside the output are clamped to it, as scatter_add does.
std::vector<OnnxValue> ConvertMaxUnpool(ConvertContext& context) {
  const OnnxValue& x = context.Input(0);
  if (x.dtype == DType::kBool) Refuse("bool data");
  const std::vector<int64_t> shape = StaticShapeOf(context, 0);
  if (shape.size() < 3) Refuse("data of rank below 3 (N, C and spatial axes)");
  if (StaticShapeOf(context, 1) != shape) Refuse("indices of another shape than the data's");
  const DType index_dtype = context.Input(1).dtype;
  if (index_dtype != DType::kInt64 && index_dtype != DType::kInt32)
    Refuse("indices other than int32 or int64");
  const size_t spatial = shape.size() - 2;
  if (!context.IntsAttribute("kernel_shape")) Refuse("no kernel_shape");
  const std::vector<int64_t> kernel = SpatialAttribute(context, "kernel_shape", spatial, 1, 1);
  const std::vector<int64_t> strides = SpatialAttribute(context, "strides", spatial, 1, 1);
  const std::vector<int64_t> pads = SpatialAttribute(context, "pads", 2 * spatial, 0, 0);
  // MaxPool's output extent formula, reversed.
  std::vector<int64_t> unpooled = {shape[0], shape[1]};
  for (size_t axis = 0; axis < spatial; ++axis) {
    const int64_t extent =
        (shape[axis + 2] - 1) * strides[axis] - (pads[axis] + pads[axis + spatial]) + kernel[axis];
    if (extent < 1) Refuse("pads that leave an unpooled axis empty");
    unpooled.push_back(extent);
  }
  if (context.HasInput(2) && IntValues(*context.Constant(2)) != unpooled) {
    // ONNX's definition (indices over the whole output_shape, as ONNX
    // Runtime and PyTorch read them) and ONNX's node test (indices over the
    // inferred shape, zeros appended) disagree about this form.
    Refuse(
        "an output_shape other than the one kernel_shape, strides and pads give (ONNX's "
        "definition and its node test read the indices differently there)");
  }
  const int64_t total = Product(unpooled);
  const std::string dtype = "dtype=\"" + std::string(DTypeName(x.dtype)) + "\"";
  const std::string zeros = Call("zeros", {}, {"shape=" + IntList({total}), dtype});
  const std::string values = context.Bind(Call("reshape", {context.Tensor(0)}, {"newshape=[-1]"}));
  const std::string positions =
      context.Bind(Call("reshape", {AsInt64(context.Tensor(1), index_dtype)}, {"newshape=[-1]"}));
  const std::string sums = Call("scatter_add", {zeros, positions, values}, {"axis=0"});
  const std::string counts =
      Call("scatter_add", {zeros, positions, Call("ones_like", {values})}, {"axis=0"});
  const std::string averaged =
      Call("divide", {sums, Call("maximum", {counts, Call("ones_like", {zeros})})});
  OnnxValue value =
      Shaped(Call("reshape", {averaged}, {"newshape=" + IntList(unpooled)}), unpooled);
  value.dtype = x.dtype;
  return {value};
}

}  // namespace

void AddScatterConverters(std::map<std::string, Converter>& table) {
  table["ScatterElements"] = ConvertScatterElements;
  table["Scatter"] = ConvertScatterElements;
  table["ScatterND"] = ConvertScatterND;
  table["MaxUnpool"] = ConvertMaxUnpool;
}

}  // namespace relay::onnx_import
