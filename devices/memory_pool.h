// A device-neutral pooled allocator (docs/architecture.md, "Devices").
//
// Every device (CPU, CUDA, OpenCL, XRT) gets its memory through a MemoryPool
// stacked on a RawAllocator that talks to the system or the driver. The pool
// rounds requests up to size classes, keeps freed blocks in per-class free
// lists for reuse, enforces a cap on the memory it holds, returns blocks that
// stayed idle too long, and on exhaustion releases its cache and retries once
// before reporting a clear out-of-memory error.
//
// Thread-safety: every MemoryPool method may be called from many threads at
// once. The RawAllocator is called without the pool's lock held, so it must be
// thread-safe itself.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "relay/device.h"

namespace relay::devices {

// The system or driver allocator underneath a pool: mimalloc for the host,
// cuMemAlloc for CUDA, clCreateBuffer for OpenCL. Implementations must be
// thread-safe and must return handles aligned to kAllocationAlignment.
class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  // Returns a handle to `bytes` bytes, or nullptr when the system has no
  // memory left. Must not throw for exhaustion: the pool reacts to nullptr by
  // releasing its cache and retrying.
  virtual void* AllocateRaw(size_t bytes) = 0;
  // Returns a block obtained from AllocateRaw(bytes) with the same `bytes`.
  virtual void FreeRaw(void* handle, size_t bytes) = 0;
};

// Requests of at most this many bytes round up to a multiple of
// kSmallSizeClassGranularity; larger requests use four classes per power of
// two, so the rounding wastes less than 25% of any request above this size.
inline constexpr size_t kSmallSizeClassLimit = 256;
inline constexpr size_t kSmallSizeClassGranularity = 64;
// Four small classes (64 to 256), then four per power of two from 2^8 to 2^64.
inline constexpr size_t kSizeClassCount = 4 + 4 * (64 - 8);

// The size of the class that serves `bytes` (0 bytes is served by the
// smallest class, 64). Returns 0 when no class can hold `bytes` because the
// rounded size would not fit in size_t.
size_t RoundUpToSizeClass(size_t bytes);

// "0 B", "512 B", "1.5 KiB", "3.0 GiB": binary units with one decimal.
std::string FormatByteSize(size_t bytes);

struct MemoryPoolOptions {
  // Names the device in error messages: "cpu:0", "cuda:1".
  std::string device_name = "device";
  // Cap on bytes held (in use + cached); 0 means no cap.
  size_t bytes_limit = 0;
  // Cached blocks unused for at least this long are returned to the raw
  // allocator. Checked at most once per period, opportunistically on Allocate
  // and Free, and on every TrimIdle(). Zero or less disables idle trimming.
  std::chrono::steady_clock::duration idle_period = std::chrono::seconds(10);
  // The time source for idle trimming; empty means a coarse (a few
  // milliseconds resolution) reading of steady_clock, cheap enough for every Allocate and
  // Free. Tests inject a fake clock here.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

// Blocks are cached whole, per class, and never split or merged, so a pool
// serving many distinct large sizes can hold far more than it has in use; the
// cap and idle trimming bound that (bench/memory_pool_bench.cc measures it).
//
// Owns the blocks it caches; blocks handed out by Allocate are owned by the
// caller until passed back to Free. Blocks still in use when the pool is
// destroyed are not reclaimed (their owners hold them), so a pool should
// outlive every block it hands out.
class MemoryPool {
 public:
  // `raw_allocator` is not owned and must outlive the pool.
  MemoryPool(RawAllocator& raw_allocator, MemoryPoolOptions options);
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;
  // Returns every cached block to the raw allocator.
  ~MemoryPool();

  // Returns a handle to at least `bytes` bytes, aligned to
  // kAllocationAlignment; a distinct handle even for 0 bytes. Throws
  // relay::Error of kind kDevice ("out of memory on cpu:0: cannot allocate
  // ...") when the cap or the system refuses the block even after releasing
  // the cache. Never returns nullptr. Anything else the raw allocator throws
  // (a driver error) passes through with the statistics left consistent.
  void* Allocate(size_t bytes);
  // Takes back a block. `bytes` must be the value passed to the Allocate that
  // returned `handle`. A null handle is ignored. Throws kInternal when the
  // size cannot be right (more than is in use): a bug in the caller.
  void Free(void* handle, size_t bytes);

  // Returns every cached block to the raw allocator.
  void ReleaseCached();
  // Returns cached blocks idle for at least the idle period.
  void TrimIdle();
  // Sets the cap on bytes held (in use + cached); 0 removes it. Lowering the
  // cap below what is held releases cached blocks; blocks in use stay valid.
  void SetLimit(size_t bytes);

  MemoryStatistics statistics() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  struct CachedBlock {
    void* handle;
    TimePoint freed_at;
  };
  // A block on its way back to the raw allocator, released outside the lock.
  struct ReleasedBlock {
    void* handle;
    size_t bytes;
  };

  TimePoint Now() const;
  // Moves every cached block to `released`. Requires mutex_ held.
  void TakeAllCachedLocked(std::vector<ReleasedBlock>& released);
  // Moves blocks idle since before `now - idle_period` to `released`.
  // Requires mutex_ held.
  void TakeIdleLocked(TimePoint now, std::vector<ReleasedBlock>& released);
  // Runs TakeIdleLocked when a period has passed since the last check.
  void MaybeTakeIdleLocked(TimePoint now, std::vector<ReleasedBlock>& released);
  void ReturnToRawAllocator(const std::vector<ReleasedBlock>& released);
  // Counts the failure and returns the out-of-memory message for the caller
  // to throw once blocks taken from the cache are released. Requires mutex_
  // held so the message's figures are consistent.
  std::string RecordOutOfMemoryLocked(size_t requested_bytes, bool system_refused);

  RawAllocator& raw_allocator_;
  const std::string device_name_;
  const std::chrono::steady_clock::duration idle_period_;
  const std::function<TimePoint()> clock_;

  mutable std::mutex mutex_;
  // One free list per size class, indexed by SizeClassIndex; most recently
  // freed block last so reuse takes the warmest block and idle trimming finds
  // the oldest ones first.
  std::array<std::vector<CachedBlock>, kSizeClassCount> free_lists_;
  MemoryStatistics statistics_;
  TimePoint last_idle_check_;
};

}  // namespace relay::devices
