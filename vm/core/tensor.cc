#include "relay/tensor.h"

#include <cstring>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

namespace relay {

std::string ShapeToString(const Shape& shape) {
  std::string text = "(";
  for (size_t index = 0; index < shape.size(); ++index) {
    if (index > 0) text += ", ";
    text += std::to_string(shape[index]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

int64_t CheckedElementCount(const Shape& shape, size_t element_bytes) {
  int64_t count = 1;
  for (int64_t dimension : shape) {
    if (dimension < 0) {
      throw Error(ErrorKind::kUsage, "shape " + ShapeToString(shape) + " has a negative dimension");
    }
    if (__builtin_mul_overflow(count, dimension, &count)) {
      throw Error(ErrorKind::kUsage, "shape " + ShapeToString(shape) + " has too many elements");
    }
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(element_bytes), &bytes)) {
    throw Error(ErrorKind::kUsage, "shape " + ShapeToString(shape) + " is too large to store");
  }
  return count;
}

Tensor::Tensor(Ref<Storage> storage, size_t byte_offset, Shape shape, DType dtype, int64_t count)
    : Object(ObjectKind::kTensor),
      storage_(std::move(storage)),
      byte_offset_(byte_offset),
      shape_(std::move(shape)),
      dtype_(dtype),
      element_count_(count) {
  on_host_ = storage_->device_id().kind == DeviceKind::kCPU;
}

Ref<Tensor> Tensor::Empty(Device& device, Shape shape, DType dtype) {
  int64_t count = CheckedElementCount(shape, DTypeSize(dtype));
  Ref<Storage> storage = Storage::Allocate(device, static_cast<size_t>(count) * DTypeSize(dtype));
  return Ref<Tensor>(new Tensor(std::move(storage), 0, std::move(shape), dtype, count));
}

Ref<Tensor> Tensor::View(Ref<Storage> storage, size_t byte_offset, Shape shape, DType dtype) {
  if (!storage) throw Error(ErrorKind::kUsage, "Tensor::View of a null storage");
  int64_t count = CheckedElementCount(shape, DTypeSize(dtype));
  size_t bytes = static_cast<size_t>(count) * DTypeSize(dtype);
  if (byte_offset > storage->size() || bytes > storage->size() - byte_offset) {
    throw Error(ErrorKind::kUsage,
                "a " + std::string(DTypeName(dtype)) + " view of shape " + ShapeToString(shape) +
                    " at byte offset " + std::to_string(byte_offset) +
                    " does not fit in a storage of " + std::to_string(storage->size()) + " bytes");
  }
  return Ref<Tensor>(new Tensor(std::move(storage), byte_offset, std::move(shape), dtype, count));
}

Ref<Tensor> CopyTensor(const Tensor& source, Device& destination) {
  Ref<Tensor> copy = Tensor::Empty(destination, source.shape(), source.dtype());
  const size_t bytes = source.byte_size();
  if (bytes == 0) return copy;
  Device* const origin = source.storage()->device();
  if (source.on_host()) {
    if (copy->on_host()) {
      std::memcpy(copy->host_data(), source.host_data(), bytes);
    } else {
      destination.CopyFromHost(source.host_data(), copy->storage()->handle(), 0, bytes);
    }
    return copy;
  }
  if (origin == nullptr) {
    throw Error(ErrorKind::kUsage, "cannot copy a tensor from " + source.device_id().ToString() +
                                       " memory that relay-vm did not allocate");
  }
  if (copy->on_host()) {
    origin->CopyToHost(source.storage()->handle(), source.byte_offset(), copy->host_data(), bytes);
  } else if (origin == &destination) {
    destination.CopyWithinDevice(source.storage()->handle(), source.byte_offset(),
                                 copy->storage()->handle(), 0, bytes);
  } else {
    std::vector<uint8_t> staging(bytes);
    origin->CopyToHost(source.storage()->handle(), source.byte_offset(), staging.data(), bytes);
    destination.CopyFromHost(staging.data(), copy->storage()->handle(), 0, bytes);
  }
  return copy;
}

Ref<Tensor> Tensor::Reshape(Shape shape) const {
  int64_t count = CheckedElementCount(shape, DTypeSize(dtype_));
  if (count != element_count_) {
    throw Error(ErrorKind::kUsage, "cannot reshape a tensor of shape " + ShapeToString(shape_) +
                                       " (" + std::to_string(element_count_) +
                                       " elements) to shape " + ShapeToString(shape) + " (" +
                                       std::to_string(count) + " elements)");
  }
  Ref<Tensor> view(new Tensor(storage_, byte_offset_, std::move(shape), dtype_, count));
  // A view of final contents is final too, and what was derived from the
  // bytes (keyed by what computed it) holds for it as well.
  view->derived_ = derived_;
  return view;
}

struct Tensor::DerivedValues {
  std::mutex mutex;
  std::vector<std::pair<const void*, Ref<Object>>> values;  // few: one per kernel reading it
};

void Tensor::MarkImmutable() {
  if (!derived_) derived_ = std::make_shared<DerivedValues>();
}

Ref<Object> Tensor::Derived(const void* key, const std::function<Ref<Object>()>& compute) const {
  if (!derived_) return compute();
  {
    std::lock_guard<std::mutex> lock(derived_->mutex);
    for (const auto& [known, value] : derived_->values) {
      if (known == key) return value;
    }
  }
  // Computed outside the lock: computing may take long and run kernels.
  Ref<Object> value = compute();
  std::lock_guard<std::mutex> lock(derived_->mutex);
  for (const auto& [known, kept] : derived_->values) {
    if (known == key) return kept;
  }
  derived_->values.emplace_back(key, value);
  return value;
}

void Tensor::ThrowNotOnHost() const {
  throw Error(ErrorKind::kUsage, "tensor is on " + device_id().ToString() +
                                     ", not on the host; copy it to cpu:0 first");
}

void Tensor::ThrowDTypeMismatch(std::string_view requested) const {
  throw Error(ErrorKind::kUsage, "tensor holds " + std::string(DTypeName(dtype_)) +
                                     ", but was read as " + std::string(requested));
}

Ref<Tensor> TensorOn(const Ref<Tensor>& tensor, Device& device) {
  if (tensor->storage()->device() == &device || (device.host_accessible() && tensor->on_host()))
    return tensor;
  if (!tensor->immutable()) return CopyTensor(*tensor, device);
  // Kept under the device's address; a reshaped view of the same bytes
  // shares what was kept, so it is seen in the view's own shape.
  Ref<Object> kept = tensor->Derived(&device, [&]() -> Ref<Object> {
    Ref<Tensor> copy = CopyTensor(*tensor, device);
    copy->MarkImmutable();
    return copy;
  });
  return static_cast<const Tensor*>(kept.get())->Reshape(tensor->shape());
}

}  // namespace relay
