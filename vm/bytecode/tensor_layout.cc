#include "vm/bytecode/tensor_layout.h"

#include <limits>
#include <string>

#include "relay/device.h"
#include "relay/devices.h"
#include "relay/error.h"

namespace relay::vm {

namespace {

constexpr int64_t kMaximumRank = 64;

[[noreturn]] void Malformed(const std::string& what) {
  throw Error(ErrorKind::kLoad, "invalid bytecode: " + what);
}

}  // namespace

size_t TensorLayout::ByteSize() const {
  size_t bytes = DTypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim < 0) Malformed("a tensor layout with a negative dimension");
    if (dim != 0 && bytes > std::numeric_limits<size_t>::max() / size_t(dim))
      Malformed("a tensor layout too large to address");
    bytes *= size_t(dim);
  }
  return bytes;
}

Ref<Tensor> EncodeTensorLayout(const TensorLayout& layout) {
  Ref<Tensor> encoded =
      Tensor::Empty(HostDevice(), {int64_t(2 + layout.shape.size())}, DType::kInt64);
  int64_t* data = encoded->data<int64_t>();
  data[0] = int64_t(layout.byte_offset);
  data[1] = int64_t(layout.dtype);
  for (size_t index = 0; index < layout.shape.size(); ++index)
    data[2 + index] = layout.shape[index];
  return encoded;
}

TensorLayout DecodeTensorLayout(const Tensor& encoded) {
  if (encoded.dtype() != DType::kInt64 || encoded.ndim() != 1 || encoded.shape()[0] < 2 ||
      encoded.shape()[0] > 2 + kMaximumRank) {
    Malformed("an alloc_tensor layout is not [offset, dtype, dims...] of int64");
  }
  const int64_t* data = encoded.data<int64_t>();
  if (data[0] < 0) Malformed("a tensor layout with a negative offset");
  if (data[1] < 0 || data[1] >= kDTypeCount) Malformed("a tensor layout with an unknown dtype");
  TensorLayout layout;
  layout.byte_offset = size_t(data[0]);
  layout.dtype = static_cast<DType>(data[1]);
  layout.shape.assign(data + 2, data + encoded.shape()[0]);
  const size_t bytes = layout.ByteSize();  // checks the dimensions
  if (layout.byte_offset > std::numeric_limits<size_t>::max() - bytes)
    Malformed("a tensor layout too large to address");
  return layout;
}

Ref<Tensor> EncodeByteSize(size_t bytes) {
  Ref<Tensor> encoded = Tensor::Empty(HostDevice(), {}, DType::kInt64);
  *encoded->data<int64_t>() = int64_t(bytes);
  return encoded;
}

size_t DecodeByteSize(const Tensor& encoded) {
  if (encoded.dtype() != DType::kInt64 || encoded.ndim() != 0 || *encoded.data<int64_t>() < 0)
    Malformed("an alloc_storage size is not a non-negative int64 scalar");
  return size_t(*encoded.data<int64_t>());
}

Shape ShapeFromTensor(const Tensor& tensor) {
  if (tensor.dtype() != DType::kInt64 || tensor.ndim() != 1 || tensor.shape()[0] > kMaximumRank) {
    throw Error(ErrorKind::kRuntime, "a shape register does not hold a 1-d int64 tensor");
  }
  const int64_t* data = tensor.data<int64_t>();
  Shape shape(data, data + tensor.shape()[0]);
  for (int64_t dim : shape) {
    if (dim < 0) throw Error(ErrorKind::kRuntime, "a shape with a negative dimension");
  }
  return shape;
}

Ref<Tensor> ShapeToTensor(const Shape& shape) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {int64_t(shape.size())}, DType::kInt64);
  int64_t* data = tensor->data<int64_t>();
  for (size_t index = 0; index < shape.size(); ++index) data[index] = shape[index];
  return tensor;
}

}  // namespace relay::vm
