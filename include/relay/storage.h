// Storage: a block of device memory that tensors view.
#pragma once

#include <cstddef>
#include <functional>

#include "relay/device.h"
#include "relay/object.h"

namespace relay {

// Owns one block of device memory for its lifetime. The block comes either
// from a Device's pool (returned to it on destruction) or from outside, for
// example a DLPack producer, with a release callback. The contents are
// mutable; the block itself never changes.
class Storage final : public Object {
 public:
  // Allocates `bytes` from `device`'s pool. The device must outlive the
  // storage (devices are process-lifetime objects).
  static Ref<Storage> Allocate(Device& device, size_t bytes);
  // Wraps memory owned elsewhere; `release` runs exactly once, when the last
  // reference goes.
  static Ref<Storage> WrapExternal(DeviceId device_id, void* handle, size_t bytes,
                                   std::function<void()> release);

  ~Storage() override;

  void* handle() const { return handle_; }
  size_t size() const { return size_; }
  DeviceId device_id() const { return device_id_; }
  // The owning device, or nullptr for external memory.
  Device* device() const { return device_; }

 private:
  Storage(DeviceId device_id, Device* device, void* handle, size_t bytes,
          std::function<void()> release);

  DeviceId device_id_;
  Device* device_;
  void* handle_;
  size_t size_;
  std::function<void()> release_;
};

}  // namespace relay
