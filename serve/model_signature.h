// What a served model takes and returns, in the Open Inference Protocol's
// (KServe v2) terms: tensors with a name, a datatype ("FP32") and a shape
// (-1 for a `?` dimension). Derived once from the executable's @main.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relay/dtype.h"
#include "relay/runtime.h"

namespace relay::serve {

struct TensorSpec {
  std::string name;  // as clients name it: an ONNX model's own input names
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // -1 for `?`
};

struct ModelSignature {
  std::string name;
  std::vector<TensorSpec> inputs;   // in @main's parameter order
  std::vector<TensorSpec> outputs;  // out0, out1, ... or an ONNX model's output names
  // Every input and output has a leading `?` dimension, so requests can be
  // concatenated along it and the results split (dynamic batching).
  bool batchable = false;
};

// The signature of `executable`'s @main served as `name`. Throws
// relay::Error (kUsage) when @main cannot be served over the protocol: a
// parameter or result that is not a tensor.
ModelSignature DescribeModel(const Executable& executable, std::string name);

// The protocol's datatype names: FP32, INT64, BOOL, ...
std::string_view ProtocolDatatype(DType dtype);
std::optional<DType> ParseProtocolDatatype(std::string_view name);

}  // namespace relay::serve
