// Zero-copy exchange of tensors with other frameworks through DLPack.
#pragma once

#include <dlpack/dlpack.h>

#include "relay/tensor.h"

namespace relay {

// DLPack dtype mapping. Only scalar lanes (lanes == 1) are accepted. Bool
// travels as kDLBool with 8 bits; an 8-bit kDLUInt is uint8, never bool.
DLDataType ToDLDataType(DType dtype);
std::optional<DType> FromDLDataType(const DLDataType& type);

// Exports `tensor` without copying. The returned DLManagedTensor keeps the
// tensor's storage alive until the consumer calls its deleter.
DLManagedTensor* ToDLPack(const Ref<Tensor>& tensor);

// Imports a DLPack tensor without copying. On success the returned tensor
// owns `managed` and calls its deleter when the last reference goes. Throws
// kUsage (leaving ownership with the caller) for a null tensor, an
// unsupported dtype or device, or a non-compact layout (strides that are not
// row-major: make the producer's tensor contiguous first).
Ref<Tensor> FromDLPack(DLManagedTensor* managed);

}  // namespace relay
