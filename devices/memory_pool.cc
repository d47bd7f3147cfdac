#include "devices/memory_pool.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <ctime>
#include <limits>
#include <utility>

#include "relay/error.h"

namespace relay::devices {
namespace {

// The position of a class (a value RoundUpToSizeClass returned) among all
// classes, so free lists live in a flat array rather than a hash map.
size_t SizeClassIndex(size_t size_class) {
  if (size_class <= kSmallSizeClassLimit) return size_class / kSmallSizeClassGranularity - 1;
  // 2^k < size_class <= 2^(k+1); the class is 2^k + quarter * 2^(k-2).
  const int k = std::bit_width(size_class - 1) - 1;
  const size_t quarter = (size_class - (size_t{1} << k)) >> (k - 2);
  return 4 + static_cast<size_t>(k - 8) * 4 + (quarter - 1);
}

size_t SizeOfClass(size_t index) {
  if (index < 4) return (index + 1) * kSmallSizeClassGranularity;
  const int k = 8 + static_cast<int>((index - 4) / 4);
  const size_t quarter = (index - 4) % 4 + 1;
  return (size_t{1} << k) + (quarter << (k - 2));
}

// steady_clock reads CLOCK_MONOTONIC; its coarse variant shares the epoch, so
// the two mix freely, and costs a few nanoseconds instead of tens. Idle
// periods are seconds, so millisecond resolution is plenty.
std::chrono::steady_clock::time_point CoarseSteadyNow() {
#ifdef CLOCK_MONOTONIC_COARSE
  timespec now;
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &now) == 0) {
    return std::chrono::steady_clock::time_point(std::chrono::seconds(now.tv_sec) +
                                                 std::chrono::nanoseconds(now.tv_nsec));
  }
#endif
  return std::chrono::steady_clock::now();
}

}  // namespace

size_t RoundUpToSizeClass(size_t bytes) {
  if (bytes <= kSmallSizeClassLimit) {
    if (bytes == 0) return kSmallSizeClassGranularity;
    return (bytes + kSmallSizeClassGranularity - 1) & ~(kSmallSizeClassGranularity - 1);
  }
  // With 2^k < bytes <= 2^(k+1), the classes between the two powers are
  // 2^k/4 apart, so rounding up adds less than 2^k/4 < bytes/4.
  const int k = std::bit_width(bytes - 1) - 1;
  const size_t step = size_t{1} << (k - 2);
  if (bytes > std::numeric_limits<size_t>::max() - (step - 1)) return 0;
  return (bytes + step - 1) & ~(step - 1);
}

std::string FormatByteSize(size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  constexpr size_t kLastUnit = std::size(kUnits) - 1;
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit < kLastUnit) {
    value /= 1024.0;
    ++unit;
  }
  // One decimal would print 1023.96 as "1024.0 KiB"; say "1.0 MiB" instead.
  if (value >= 1023.95 && unit < kLastUnit) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

MemoryPool::MemoryPool(RawAllocator& raw_allocator, MemoryPoolOptions options)
    : raw_allocator_(raw_allocator),
      device_name_(std::move(options.device_name)),
      idle_period_(options.idle_period),
      clock_(options.clock ? std::move(options.clock)
                           : std::function<TimePoint()>(&CoarseSteadyNow)) {
  statistics_.bytes_limit = options.bytes_limit;
  last_idle_check_ = clock_();
}

MemoryPool::~MemoryPool() {
  ReleaseCached();
}

MemoryPool::TimePoint MemoryPool::Now() const {
  return clock_();
}

void* MemoryPool::Allocate(size_t bytes) {
  const size_t rounded = RoundUpToSizeClass(bytes);
  std::vector<ReleasedBlock> released;
  std::string failure_message;
  void* handle = nullptr;
  bool released_cache = false;
  {
    std::lock_guard lock(mutex_);
    MaybeTakeIdleLocked(Now(), released);
    std::vector<CachedBlock>* free_list =
        rounded == 0 ? nullptr : &free_lists_[SizeClassIndex(rounded)];
    if (rounded == 0) {
      failure_message = RecordOutOfMemoryLocked(bytes, /*system_refused=*/true);
    } else if (!free_list->empty()) {
      handle = free_list->back().handle;
      free_list->pop_back();
      statistics_.bytes_cached -= rounded;
      statistics_.bytes_in_use += rounded;
      statistics_.peak_bytes_in_use =
          std::max(statistics_.peak_bytes_in_use, statistics_.bytes_in_use);
      ++statistics_.allocations;
      ++statistics_.reuses;
    } else {
      const size_t limit = statistics_.bytes_limit;
      if (limit != 0 && statistics_.bytes_in_use + statistics_.bytes_cached + rounded > limit) {
        // Releasing the cache helps only if the block fits beside what is in use.
        if (statistics_.bytes_in_use + rounded > limit) {
          failure_message = RecordOutOfMemoryLocked(bytes, /*system_refused=*/false);
        } else {
          TakeAllCachedLocked(released);
          released_cache = true;
        }
      }
      // Reserve the bytes before unlocking so concurrent allocations cannot
      // together overshoot the cap while the raw allocator runs.
      if (failure_message.empty()) statistics_.bytes_in_use += rounded;
    }
  }
  ReturnToRawAllocator(released);
  if (!failure_message.empty()) throw Error(ErrorKind::kDevice, failure_message);
  if (handle != nullptr) return handle;

  auto allocate_raw = [&]() -> void* {
    try {
      return raw_allocator_.AllocateRaw(rounded);
    } catch (...) {
      std::lock_guard lock(mutex_);
      statistics_.bytes_in_use -= rounded;
      throw;
    }
  };
  handle = allocate_raw();
  if (handle == nullptr) {
    // The system is out of memory: give back what we hoard and try once more.
    released.clear();
    {
      std::lock_guard lock(mutex_);
      TakeAllCachedLocked(released);
    }
    ReturnToRawAllocator(released);
    if (!released.empty()) {
      released_cache = true;
      handle = allocate_raw();
    }
  }

  std::lock_guard lock(mutex_);
  if (handle == nullptr) {
    statistics_.bytes_in_use -= rounded;
    throw Error(ErrorKind::kDevice, RecordOutOfMemoryLocked(bytes, /*system_refused=*/true));
  }
  statistics_.peak_bytes_in_use = std::max(statistics_.peak_bytes_in_use, statistics_.bytes_in_use);
  ++statistics_.allocations;
  if (released_cache) ++statistics_.retries_after_release;
  return handle;
}

void MemoryPool::Free(void* handle, size_t bytes) {
  if (handle == nullptr) return;
  const size_t rounded = RoundUpToSizeClass(bytes);
  std::vector<ReleasedBlock> released;
  {
    std::lock_guard lock(mutex_);
    RELAY_CHECK(rounded != 0 && statistics_.bytes_in_use >= rounded,
                "MemoryPool::Free on " + device_name_ + " of " + std::to_string(bytes) +
                    " bytes with " + std::to_string(statistics_.bytes_in_use) +
                    " bytes in use: the size differs from the one passed to Allocate");
    const TimePoint now = Now();
    statistics_.bytes_in_use -= rounded;
    ++statistics_.frees;
    const size_t limit = statistics_.bytes_limit;
    if (limit != 0 && statistics_.bytes_in_use + statistics_.bytes_cached + rounded > limit) {
      // The cap was lowered below what was held; caching would keep us over it.
      released.push_back({handle, rounded});
      ++statistics_.blocks_released;
    } else {
      free_lists_[SizeClassIndex(rounded)].push_back({handle, now});
      statistics_.bytes_cached += rounded;
    }
    MaybeTakeIdleLocked(now, released);
  }
  ReturnToRawAllocator(released);
}

void MemoryPool::ReleaseCached() {
  std::vector<ReleasedBlock> released;
  {
    std::lock_guard lock(mutex_);
    TakeAllCachedLocked(released);
  }
  ReturnToRawAllocator(released);
}

void MemoryPool::TrimIdle() {
  std::vector<ReleasedBlock> released;
  {
    std::lock_guard lock(mutex_);
    TakeIdleLocked(Now(), released);
  }
  ReturnToRawAllocator(released);
}

void MemoryPool::SetLimit(size_t bytes) {
  std::vector<ReleasedBlock> released;
  {
    std::lock_guard lock(mutex_);
    statistics_.bytes_limit = bytes;
    if (bytes != 0 && statistics_.bytes_in_use + statistics_.bytes_cached > bytes) {
      TakeAllCachedLocked(released);
    }
  }
  ReturnToRawAllocator(released);
}

MemoryStatistics MemoryPool::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

void MemoryPool::TakeAllCachedLocked(std::vector<ReleasedBlock>& released) {
  if (statistics_.bytes_cached == 0) return;
  for (size_t index = 0; index < kSizeClassCount; ++index) {
    std::vector<CachedBlock>& blocks = free_lists_[index];
    const size_t block_bytes = SizeOfClass(index);
    for (const CachedBlock& block : blocks) released.push_back({block.handle, block_bytes});
    statistics_.bytes_cached -= block_bytes * blocks.size();
    statistics_.blocks_released += blocks.size();
    blocks.clear();
  }
}

void MemoryPool::TakeIdleLocked(TimePoint now, std::vector<ReleasedBlock>& released) {
  if (idle_period_ <= std::chrono::steady_clock::duration::zero()) return;
  last_idle_check_ = now;
  if (statistics_.bytes_cached == 0) return;
  const TimePoint idle_since = now - idle_period_;
  for (size_t index = 0; index < kSizeClassCount; ++index) {
    std::vector<CachedBlock>& blocks = free_lists_[index];
    const size_t block_bytes = SizeOfClass(index);
    // Blocks are appended as they are freed, under the lock, so the idle ones
    // form a prefix of the list.
    auto first_recent = std::find_if(blocks.begin(), blocks.end(), [&](const CachedBlock& block) {
      return block.freed_at > idle_since;
    });
    const size_t idle_count = static_cast<size_t>(first_recent - blocks.begin());
    for (auto block = blocks.begin(); block != first_recent; ++block) {
      released.push_back({block->handle, block_bytes});
    }
    blocks.erase(blocks.begin(), first_recent);
    statistics_.bytes_cached -= block_bytes * idle_count;
    statistics_.blocks_released += idle_count;
  }
}

void MemoryPool::MaybeTakeIdleLocked(TimePoint now, std::vector<ReleasedBlock>& released) {
  if (idle_period_ <= std::chrono::steady_clock::duration::zero()) return;
  if (now - last_idle_check_ < idle_period_) return;
  TakeIdleLocked(now, released);
}

void MemoryPool::ReturnToRawAllocator(const std::vector<ReleasedBlock>& released) {
  for (const ReleasedBlock& block : released) raw_allocator_.FreeRaw(block.handle, block.bytes);
}

std::string MemoryPool::RecordOutOfMemoryLocked(size_t requested_bytes, bool system_refused) {
  ++statistics_.failed_allocations;
  std::string message =
      "out of memory on " + device_name_ + ": cannot allocate " + FormatByteSize(requested_bytes);
  if (system_refused) message += ": " + device_name_ + " has no free memory";
  message += " (in use " + FormatByteSize(statistics_.bytes_in_use) + ", cached " +
             FormatByteSize(statistics_.bytes_cached) + ", ";
  message += statistics_.bytes_limit == 0 ? std::string("no limit")
                                          : "limit " + FormatByteSize(statistics_.bytes_limit);
  message += ")";
  return message;
}

}  // namespace relay::devices
