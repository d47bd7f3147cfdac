// The host CPU as a relay::Device.
//
// Host memory comes from mimalloc, aligned to kAllocationAlignment, through a
// MemoryPool. Handles are host pointers, so copies are plain memory moves and
// there is no queued work to wait for.
//
// Thread-safety: every method may be called from many threads at once.
// Errors: Allocate throws relay::Error of kind kDevice when the memory limit
// or the system refuses a block; the other methods do not fail.
#pragma once

#include <string>

#include "devices/memory_pool.h"
#include "relay/device.h"

namespace relay::devices {

// Host memory from mimalloc, 64-byte aligned. Thread-safe, as mimalloc is.
class MimallocAllocator final : public RawAllocator {
 public:
  void* AllocateRaw(size_t bytes) override;
  void FreeRaw(void* handle, size_t bytes) override;
};

class CpuDevice final : public Device {
 public:
  // The pool's device name is always "cpu:0"; the other options (limit, idle
  // period, clock) are taken as given. The process-wide instance is
  // HostDevice(); tests and benchmarks may build private ones.
  explicit CpuDevice(MemoryPoolOptions pool_options = {});

  DeviceId id() const override { return DeviceId{DeviceKind::kCPU, 0}; }
  std::string description() const override;

  void* Allocate(size_t bytes) override { return pool_.Allocate(bytes); }
  void Free(void* handle, size_t bytes) override { pool_.Free(handle, bytes); }

  // Handles are host pointers; the byte ranges may overlap.
  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override;
  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override;
  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override;
  // Copies finish before they return, so there is nothing to wait for.
  void Synchronize() override {}

  MemoryStatistics memory_statistics() const override { return pool_.statistics(); }
  void ReleaseCachedMemory() override { pool_.ReleaseCached(); }
  void SetMemoryLimit(size_t bytes) override { pool_.SetLimit(bytes); }

 private:
  // Declared before pool_: the pool returns its cache to it on destruction.
  MimallocAllocator raw_allocator_;
  MemoryPool pool_;
};

}  // namespace relay::devices
