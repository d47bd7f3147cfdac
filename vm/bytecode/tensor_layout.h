// How the explicit-memory instructions describe what they allocate, as
// constants of the executable (so they serialise with the constants):
//   alloc_storage's size: a 0-d int64 tensor, the byte count;
//   alloc_tensor's layout: a 1-d int64 tensor [byte offset, dtype, dims...].
// Decoding checks everything, because the constants may come from a file.
#pragma once

#include <cstddef>

#include "relay/dtype.h"
#include "relay/tensor.h"

namespace relay::vm {

struct TensorLayout {
  size_t byte_offset = 0;
  DType dtype = DType::kFloat32;
  Shape shape;

  // Bytes the tensor covers; throws Error(kLoad) on overflow.
  size_t ByteSize() const;
};

Ref<Tensor> EncodeTensorLayout(const TensorLayout& layout);
// Throws Error(kLoad) unless `encoded` is a well-formed layout.
TensorLayout DecodeTensorLayout(const Tensor& encoded);

Ref<Tensor> EncodeByteSize(size_t bytes);
// Throws Error(kLoad) unless `encoded` is a 0-d int64 tensor >= 0.
size_t DecodeByteSize(const Tensor& encoded);

// The shape held by a 1-d int64 tensor (what invoke_shape_func produces),
// and back. Throws Error(kRuntime) for anything else or negative sizes.
Shape ShapeFromTensor(const Tensor& tensor);
Ref<Tensor> ShapeToTensor(const Shape& shape);

}  // namespace relay::vm
