// The part of a relay::Device that every device kind shares
// (docs/architecture.md, "Devices"): its id and description, and a MemoryPool over the kind's
// RawAllocator that serves Allocate and Free and answers the memory methods.
// A device kind derives from PooledDevice, hands it its raw allocator, and
// implements the copies and Synchronize.
//
// Ownership: a PooledDevice owns its raw allocator and its pool, and destroys
// the pool first, so that the pool returns its cache through a live
// allocator. Members of a derived class are constructed after both and
// destroyed before both, so whatever the allocator calls into (a driver
// context, an open card) must be owned or shared by the allocator itself; a
// derived class that also needs it shares it (std::shared_ptr).
//
// Thread-safety: every method may be called from many threads at once, as the
// pool's may; the raw allocator must be thread-safe (memory_pool.h).
// Errors: Allocate throws relay::Error of kind kDevice when the memory limit
// or the allocator refuses a block ("out of memory on cuda:0: ..."); what the
// allocator throws otherwise (a driver error) passes through. Free throws
// kInternal only for a size that cannot be right. The other methods here do
// not fail.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "devices/memory_pool.h"
#include "relay/device.h"

namespace relay::devices {

class PooledDevice : public Device {
 public:
  DeviceId id() const final { return id_; }
  std::string description() const final { return description_; }

  void* Allocate(size_t bytes) final { return pool_.Allocate(bytes); }
  void Free(void* handle, size_t bytes) final { pool_.Free(handle, bytes); }

  MemoryStatistics memory_statistics() const final { return pool_.statistics(); }
  void ReleaseCachedMemory() final { pool_.ReleaseCached(); }
  void SetMemoryLimit(size_t bytes) final { pool_.SetLimit(bytes); }

 protected:
  // The pool's device name is always id.ToString() ("cuda:1"); the other
  // options (limit, idle period, clock) are taken as given. `raw_allocator`
  // must not be null.
  PooledDevice(DeviceId id, std::string description, std::unique_ptr<RawAllocator> raw_allocator,
               MemoryPoolOptions pool_options);

  // The device as messages name it: "cuda:0".
  const std::string& name() const { return name_; }

  // Calls `use(staging_handle)` with a block of `bytes` bytes from the pool,
  // for a copy within the device whose ranges overlap, and returns the block
  // to the pool when `use` returns or throws. The block may go back while
  // copies that `use` queued still run, so only a device whose queue orders
  // any later use of the block after them may queue copies here. Throws what
  // Allocate and `use` throw.
  template <typename Use>
  void WithStagingBlock(size_t bytes, Use&& use) {
    void* staging_handle = pool_.Allocate(bytes);
    try {
      use(staging_handle);
    } catch (...) {
      pool_.Free(staging_handle, bytes);
      throw;
    }
    pool_.Free(staging_handle, bytes);
  }

 private:
  const DeviceId id_;
  const std::string name_;
  const std::string description_;
  // Declared before pool_: the pool returns its cache through it on
  // destruction.
  const std::unique_ptr<RawAllocator> raw_allocator_;
  MemoryPool pool_;
};

}  // namespace relay::devices
