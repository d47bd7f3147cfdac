#include "relay/storage.h"

#include "relay/error.h"

namespace relay {

Storage::Storage(DeviceId device_id, Device* device, void* handle, size_t bytes,
                 std::function<void()> release)
    : Object(ObjectKind::kStorage),
      device_id_(device_id),
      device_(device),
      handle_(handle),
      size_(bytes),
      release_(std::move(release)) {}

Ref<Storage> Storage::Allocate(Device& device, size_t bytes) {
  void* handle = device.Allocate(bytes);
  try {
    return Ref<Storage>(new Storage(device.id(), &device, handle, bytes, nullptr));
  } catch (...) {
    device.Free(handle, bytes);
    throw;
  }
}

Ref<Storage> Storage::WrapExternal(DeviceId device_id, void* handle, size_t bytes,
                                   std::function<void()> release) {
  return Ref<Storage>(new Storage(device_id, nullptr, handle, bytes, std::move(release)));
}

Storage::~Storage() {
  if (device_) {
    device_->Free(handle_, size_);
  } else if (release_) {
    release_();
  }
}

}  // namespace relay
