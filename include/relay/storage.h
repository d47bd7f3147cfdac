// Storage: a block of device memory that tensors view.
#pragma once

#include <cstddef>
#include <functional>

#include "relay/device.h"
#include "relay/object.h"

namespace relay {

class Storage;

// Watches the storages one thread allocates from device pools: a VM run
// under a memory budget (vm/interpreter/rematerializer.h) makes room before
// each allocation and accounts for each block until it is destroyed.
class StorageObserver {
 public:
  virtual ~StorageObserver() = default;
  // Before `bytes` are allocated; may evict other storages, or throw.
  virtual void BeforeAllocate(size_t bytes) = 0;
  // After: `storage` reports its destruction to this observer from now on.
  virtual void Allocated(Storage& storage) = 0;
  // From the destructor of a storage that reported to this observer.
  virtual void Destroyed(Storage& storage) = 0;
};

// While one lives, Storage::Allocate on this thread reports to `observer`.
// Scopes nest; the innermost wins.
class ScopedStorageObserver {
 public:
  explicit ScopedStorageObserver(StorageObserver* observer);
  ~ScopedStorageObserver();
  ScopedStorageObserver(const ScopedStorageObserver&) = delete;
  ScopedStorageObserver& operator=(const ScopedStorageObserver&) = delete;

 private:
  StorageObserver* previous_;
};

// Owns one block of device memory for its lifetime. The block comes either
// from a Device's pool (returned to it on destruction) or from outside, for
// example a DLPack producer, with a release callback. The contents are
// mutable. The block never changes, except for a pool storage that its
// observer evicts (its memory returned to the pool while the storage lives
// on, its contents lost) and later restores (new memory, contents to be
// recomputed): only the thread that allocated it, under a memory budget,
// does that, and tensors read the block's address through the storage.
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

  // Whether the block is present (not evicted).
  bool resident() const { return handle_ != nullptr || size_ == 0; }
  // Returns the block to the pool (a pool storage only; its observer's
  // business). handle() is null until Restore.
  void Evict();
  // Allocates a new block of the same size; its contents are undefined.
  void Restore();
  StorageObserver* observer() const { return observer_; }
  // A word the observer keeps with the storage (its bookkeeping's address).
  void* observer_data() const { return observer_data_; }
  void set_observer_data(void* data) { observer_data_ = data; }
  // Stops reporting to the observer (which is going away).
  void DetachObserver() { observer_ = nullptr; }

 private:
  Storage(DeviceId device_id, Device* device, void* handle, size_t bytes,
          std::function<void()> release);

  DeviceId device_id_;
  Device* device_;
  void* handle_;
  size_t size_;
  std::function<void()> release_;
  StorageObserver* observer_ = nullptr;
  void* observer_data_ = nullptr;
};

}  // namespace relay
