// ONNX tensors and types as relay-vm's: a TensorProto's values as a host
// tensor (raw, typed or external data), and an element type as a dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "relay/dtype.h"
#include "relay/tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace relay::onnx_import {

// The dtype of ONNX element type `element_type` (TensorProto::DataType),
// or nothing for types relay-vm lacks (string, bfloat16, uint16/32/64,
// complex).
std::optional<DType> DTypeOfElementType(int32_t element_type);

// ONNX's name of `element_type`, for errors ("FLOAT", "STRING", ...).
std::string ElementTypeName(int32_t element_type);

// `proto`'s values as an immutable host tensor. External data is read from
// `folder` (the model's), and must stay inside it. Throws relay::Error
// (kLoad) naming `what` for an unsupported type, data that does not match
// the shape, or an external file that cannot be read.
Ref<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& folder,
                            const std::string& what);

}  // namespace relay::onnx_import
