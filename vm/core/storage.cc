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

namespace {
thread_local StorageObserver* current_observer = nullptr;
}  // namespace

ScopedStorageObserver::ScopedStorageObserver(StorageObserver* observer)
    : previous_(current_observer) {
  current_observer = observer;
}

ScopedStorageObserver::~ScopedStorageObserver() {
  current_observer = previous_;
}

Ref<Storage> Storage::Allocate(Device& device, size_t bytes) {
  StorageObserver* observer = current_observer;
  if (observer != nullptr) observer->BeforeAllocate(bytes);
  void* handle = device.Allocate(bytes);
  Ref<Storage> storage;
  try {
    storage = Ref<Storage>(new Storage(device.id(), &device, handle, bytes, nullptr));
  } catch (...) {
    device.Free(handle, bytes);
    throw;
  }
  if (observer != nullptr) {
    storage->observer_ = observer;
    observer->Allocated(*storage);
  }
  return storage;
}

void Storage::Evict() {
  RELAY_CHECK(device_ != nullptr && handle_ != nullptr, "evicting a storage that cannot be");
  device_->Free(handle_, size_);
  handle_ = nullptr;
}

void Storage::Restore() {
  RELAY_CHECK(device_ != nullptr && handle_ == nullptr, "restoring a resident storage");
  handle_ = device_->Allocate(size_);
}

Ref<Storage> Storage::WrapExternal(DeviceId device_id, void* handle, size_t bytes,
                                   std::function<void()> release) {
  return Ref<Storage>(new Storage(device_id, nullptr, handle, bytes, std::move(release)));
}

Storage::~Storage() {
  if (observer_ != nullptr) observer_->Destroyed(*this);
  if (device_) {
    if (handle_ != nullptr) device_->Free(handle_, size_);
  } else if (release_) {
    release_();
  }
}

}  // namespace relay
