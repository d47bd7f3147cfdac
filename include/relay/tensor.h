// Tensor: a typed, shaped, row-major view into a Storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "relay/device.h"
#include "relay/dtype.h"
#include "relay/error.h"
#include "relay/object.h"
#include "relay/storage.h"

namespace relay {

using Shape = std::vector<int64_t>;

// "(2, 3)", "()" for a scalar, "(5,)" for one dimension, as NumPy prints.
std::string ShapeToString(const Shape& shape);

// Product of the dimensions. Throws kUsage for a negative dimension and for a
// product whose byte size (at `element_bytes` each) would not fit in memory.
int64_t CheckedElementCount(const Shape& shape, size_t element_bytes = 1);

class Tensor;

// A new tensor on `destination` with the contents of `source`: host to
// device, device to host, within one device, or between two devices
// through the host. A copy from a device waits for the work queued there
// that writes `source`. Throws kUsage for memory of a device relay-vm does
// not own (an external import) that is not on the host, and the devices'
// kDevice errors.
Ref<Tensor> CopyTensor(const Tensor& source, Device& destination);

// Immutable view metadata over mutable storage contents. Tensors are always
// compact and row-major; `byte_offset` locates the first element.
class Tensor final : public Object {
 public:
  // A new tensor on `device` with uninitialised contents.
  static Ref<Tensor> Empty(Device& device, Shape shape, DType dtype);
  // A view of `storage`; throws kUsage if the view does not fit inside it.
  static Ref<Tensor> View(Ref<Storage> storage, size_t byte_offset, Shape shape, DType dtype);

  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return dtype_; }
  DeviceId device_id() const { return storage_->device_id(); }
  size_t byte_offset() const { return byte_offset_; }
  const Ref<Storage>& storage() const { return storage_; }
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return static_cast<size_t>(element_count_) * DTypeSize(dtype_); }

  // The same storage seen with another shape of equal element count.
  Ref<Tensor> Reshape(Shape shape) const;

  // Host address of the first element. Throws kUsage if the tensor is not on
  // a host-accessible device.
  void* host_data() const {
    // Inline: the VM's scalar arithmetic reads and writes 0-d tensors at
    // every step. Read through the storage, whose block an eviction under a
    // memory budget may replace.
    if (!on_host_) ThrowNotOnHost();
    return static_cast<char*>(storage_->handle()) + byte_offset_;
  }
  // Whether host_data() may be called.
  bool on_host() const { return on_host_; }

  // Declares the contents final: nothing writes them again (an executable's
  // constants, a model's weights). Kernels may then keep values computed
  // from them with the tensor, such as a weight's packed copy, and find
  // them again on later calls instead of computing them anew. Call it
  // before the tensor is shared between threads; writing the contents
  // afterwards leaves those values stale.
  void MarkImmutable();
  bool immutable() const { return derived_ != nullptr; }
  // For an immutable tensor: the value kept under `key`, or else the one
  // `compute` returns, kept under `key` for as long as the tensor lives.
  // For any other tensor: `compute()`, kept nowhere. Thread-safe; two
  // threads missing at once may both compute, and one result is kept.
  Ref<Object> Derived(const void* key, const std::function<Ref<Object>()>& compute) const;
  // Typed host access; throws kUsage if T does not store this dtype.
  template <typename T>
  T* data() const {
    if (DTypeOf<T>() != dtype_)
      ThrowDTypeMismatch(DTypeOf<T>().has_value() ? DTypeName(*DTypeOf<T>())
                                                  : "an unsupported C++ type");
    return static_cast<T*>(host_data());
  }

 private:
  Tensor(Ref<Storage> storage, size_t byte_offset, Shape shape, DType dtype, int64_t count);
  [[noreturn]] void ThrowNotOnHost() const;
  [[noreturn]] void ThrowDTypeMismatch(std::string_view requested) const;

  Ref<Storage> storage_;
  size_t byte_offset_;
  // Whether the storage is host memory at all.
  bool on_host_ = false;
  Shape shape_;
  DType dtype_;
  int64_t element_count_;
  // Values derived from the contents; present exactly when immutable.
  struct DerivedValues;
  std::shared_ptr<DerivedValues> derived_;
};

// `tensor` on `device`: itself when it is there already (for the host:
// when its bytes are host memory), else a copy (CopyTensor). An immutable
// tensor's copy is immutable and kept with it (Tensor::Derived), so that a
// weight crosses to a device once, and a reshaped view of it shares the
// copy. Errors as CopyTensor's.
Ref<Tensor> TensorOn(const Ref<Tensor>& tensor, Device& device);

}  // namespace relay
