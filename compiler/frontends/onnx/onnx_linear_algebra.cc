// Linear algebra: Det, onto Relay's det (LU with partial pivoting in
// double precision, kernels/host/linear_algebra_kernels.cc).
#include <onnx/onnx_pb.h>

#include "compiler/frontends/onnx/onnx_converter_helpers.h"

namespace relay::onnx_import {

namespace {

// Det: the determinants of the square matrices on the last two axes.
std::vector<OnnxValue> ConvertDet(ConvertContext& context) {
  const OnnxValue& input = context.Input(0);
  if (!IsFloatDType(input.dtype)) Refuse("matrices other than float16, float32 or float64");
  const size_t rank = RankOf(context, 0);
  if (rank < 2) Refuse("data of rank below 2 (square matrices on the last two axes)");
  const std::vector<int64_t>& shape = *input.shape;
  if (shape[rank - 1] >= 0 && shape[rank - 2] >= 0 && shape[rank - 1] != shape[rank - 2])
    Refuse("matrices that are not square");
  OnnxValue value = Shaped(Call("det", {context.Tensor(0)}),
                           std::vector<int64_t>(shape.begin(), shape.end() - 2));
  value.dtype = input.dtype;
  return {value};
}

}  // namespace

void AddLinearAlgebraConverters(std::map<std::string, Converter>& table) {
  table["Det"] = ConvertDet;
}

}  // namespace relay::onnx_import
