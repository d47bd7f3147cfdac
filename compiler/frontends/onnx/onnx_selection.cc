// Selections sized by the data's values: Unique, onto Relay's unique_along
// (kernels/operators/selection.cc), which returns numpy.unique's four
// results at once, sorted or in order of first occurrence.
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// Unique: the distinct slices along `axis` (the distinct elements of the
// flattened input without one), their first positions, each position's
// slice, and their counts, positions int64.
std::vector<OnnxValue> ConvertUnique(ConvertContext& context) {
  const OnnxValue& input = context.Input(0);
  const size_t rank = RankOf(context, 0);
  const int64_t sorted = context.IntAttribute("sorted", 1);
  if (sorted != 0 && sorted != 1) Refuse("sorted other than 0 and 1");
  std::vector<std::string> attributes = {std::string("sorted=") + (sorted ? "True" : "False")};
  std::vector<int64_t> values_shape = {-1};
  int64_t positions = -1;
  if (context.Attribute("axis") != nullptr) {
    if (rank == 0) Refuse("an axis of a scalar");
    const int64_t axis = NormalizeAxis(context.IntAttribute("axis", 0), rank);
    attributes.push_back("axis=" + std::to_string(axis));
    values_shape = *input.shape;
    positions = values_shape[size_t(axis)];
    values_shape[size_t(axis)] = -1;
  } else {
    const std::vector<int64_t>& shape = *input.shape;
    bool known = true;
    for (int64_t dim : shape) known = known && dim >= 0;
    if (known) positions = Product(shape);
  }
  const std::string unique = context.Bind(Call("unique_along", {context.Tensor(0)}, attributes));
  OnnxValue values = Shaped(unique + ".0", values_shape);
  values.dtype = input.dtype;
  std::vector<OnnxValue> results = {values};
  const std::vector<std::vector<int64_t>> shapes = {{-1}, {positions}, {-1}};
  for (size_t field = 1; field <= 3; ++field) {
    OnnxValue indices = Shaped(unique + "." + std::to_string(field), shapes[field - 1]);
    indices.dtype = DType::kInt64;
    results.push_back(indices);
  }
  return results;
}

}  // namespace

void AddSelectionConverters(std::map<std::string, Converter>& table) {
  table["Unique"] = ConvertUnique;
}

}  // namespace relay::onnx_import
