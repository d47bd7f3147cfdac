// Scatters: ScatterElements (and its older name Scatter) and ScatterND,
// over Relay's scatter_add. Replacing (reduction "none") scatters the
// updates onto zeros and their count onto zeros, and keeps the data where
// nothing landed; ONNX leaves duplicate indices undefined there, and here
// they add up.
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

}  // namespace

void AddScatterConverters(std::map<std::string, Converter>& table) {
  table["ScatterElements"] = ConvertScatterElements;
  table["Scatter"] = ConvertScatterElements;
  table["ScatterND"] = ConvertScatterND;
}

}  // namespace relay::onnx_import
