// The host CPU as a relay::Device.
//
// Host memory comes from mimalloc, aligned to kAllocationAlignment, through a
// MemoryPool (pooled_device.h). Handles are host pointers, so copies are plain
// memory moves and there is no queued work to wait for.
//
// Thread-safety: every method may be called from many threads at once.
// Errors: Allocate throws relay::Error of kind kDevice when the memory limit
// or the system refuses a block; the other methods do not fail.
#pragma once

#include "devices/memory_pool.h"
#include "devices/pooled_device.h"

namespace relay::devices {

// Host memory from mimalloc, 64-byte aligned. Thread-safe, as mimalloc is.
class MimallocAllocator final : public RawAllocator {
 public:
  void* AllocateRaw(size_t bytes) override;
  void FreeRaw(void* handle, size_t bytes) override;
};

class CpuDevice final : public PooledDevice {
 public:
  // The pool's device name is always "cpu:0"; the other options (limit, idle
  // period, clock) are taken as given. The process-wide instance is
  // HostDevice(); tests and benchmarks may build private ones.
  explicit CpuDevice(MemoryPoolOptions pool_options = {});

  // Handles are host pointers; the byte ranges may overlap.
  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override;
  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override;
  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override;
  // Copies finish before they return, so there is nothing to wait for.
  void Synchronize() override {}
};

}  // namespace relay::devices
