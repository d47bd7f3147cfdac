#include "devices/memory_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "relay/error.h"
#include "tests/devices/device_test_support.h"

namespace relay::devices {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;

// Hands out fake, never-dereferenced handles and records every call, so tests
// can check exactly what the pool asked of the system. It can simulate a
// device of limited capacity (AllocateRaw returns nullptr past it) and a
// driver that throws.
class CountingRawAllocator final : public RawAllocator {
 public:
  void* AllocateRaw(size_t bytes) override {
    std::lock_guard lock(mutex_);
    ++allocate_calls_;
    if (throw_on_allocate_) throw std::runtime_error("driver failure");
    if (capacity_bytes_ != 0 && bytes_held_ + bytes > capacity_bytes_) return nullptr;
    next_address_ += kAllocationAlignment;  // Keep even 0-byte requests distinct.
    const uintptr_t address = next_address_;
    next_address_ +=
        (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
    void* handle = reinterpret_cast<void*>(address);
    live_blocks_[handle] = bytes;
    bytes_held_ += bytes;
    return handle;
  }

  void FreeRaw(void* handle, size_t bytes) override {
    std::lock_guard lock(mutex_);
    ++free_calls_;
    auto block = live_blocks_.find(handle);
    ASSERT_NE(block, live_blocks_.end()) << "FreeRaw of a handle AllocateRaw never returned";
    EXPECT_EQ(block->second, bytes) << "FreeRaw with a size other than AllocateRaw's";
    bytes_held_ -= block->second;
    live_blocks_.erase(block);
  }

  void set_capacity_bytes(size_t bytes) {
    std::lock_guard lock(mutex_);
    capacity_bytes_ = bytes;
  }
  void set_throw_on_allocate(bool value) {
    std::lock_guard lock(mutex_);
    throw_on_allocate_ = value;
  }
  uint64_t allocate_calls() const {
    std::lock_guard lock(mutex_);
    return allocate_calls_;
  }
  uint64_t free_calls() const {
    std::lock_guard lock(mutex_);
    return free_calls_;
  }
  size_t live_block_count() const {
    std::lock_guard lock(mutex_);
    return live_blocks_.size();
  }
  size_t bytes_held() const {
    std::lock_guard lock(mutex_);
    return bytes_held_;
  }

 private:
  mutable std::mutex mutex_;
  uintptr_t next_address_ = 0x100000;
  std::unordered_map<void*, size_t> live_blocks_;
  size_t bytes_held_ = 0;
  size_t capacity_bytes_ = 0;
  bool throw_on_allocate_ = false;
  uint64_t allocate_calls_ = 0;
  uint64_t free_calls_ = 0;
};

// A clock that moves only when told to.
class FakeClock {
 public:
  std::chrono::steady_clock::time_point now() const { return now_; }
  void Advance(std::chrono::steady_clock::duration duration) { now_ += duration; }

 private:
  std::chrono::steady_clock::time_point now_{seconds(1000)};
};

class MemoryPoolTest : public ::testing::Test {
 protected:
  MemoryPoolOptions Options(size_t bytes_limit = 0) {
    MemoryPoolOptions options;
    options.device_name = "test:0";
    options.bytes_limit = bytes_limit;
    options.clock = [this] { return clock_.now(); };
    return options;
  }

  FakeClock clock_;
  // Declared before any pool a test creates, so it outlives them.
  CountingRawAllocator raw_;
};

// ---- size classes ------------------------------------------------------------

TEST(SizeClassTest, SmallSizesRoundUpToMultiplesOf64) {
  EXPECT_EQ(RoundUpToSizeClass(0), 64u);
  EXPECT_EQ(RoundUpToSizeClass(1), 64u);
  EXPECT_EQ(RoundUpToSizeClass(64), 64u);
  EXPECT_EQ(RoundUpToSizeClass(65), 128u);
  EXPECT_EQ(RoundUpToSizeClass(129), 192u);
  EXPECT_EQ(RoundUpToSizeClass(200), 256u);
  EXPECT_EQ(RoundUpToSizeClass(256), 256u);
}

TEST(SizeClassTest, FourClassesPerPowerOfTwoAboveTheSmallSizes) {
  // Between 1024 and 2048 the classes are 1280, 1536, 1792 and 2048.
  EXPECT_EQ(RoundUpToSizeClass(1025), 1280u);
  EXPECT_EQ(RoundUpToSizeClass(1280), 1280u);
  EXPECT_EQ(RoundUpToSizeClass(1281), 1536u);
  EXPECT_EQ(RoundUpToSizeClass(1537), 1792u);
  EXPECT_EQ(RoundUpToSizeClass(1793), 2048u);
  EXPECT_EQ(RoundUpToSizeClass(2048), 2048u);
  EXPECT_EQ(RoundUpToSizeClass(257), 320u);
  EXPECT_EQ(RoundUpToSizeClass(3 * kGiB / 2), 3 * kGiB / 2);
  EXPECT_EQ(RoundUpToSizeClass(kGiB + 1), kGiB + kGiB / 4);

  for (int exponent = 9; exponent < 40; ++exponent) {
    const size_t power = size_t{1} << exponent;
    std::set<size_t> classes;
    for (size_t bytes = power + 1; bytes <= 2 * power; bytes += power / 64) {
      classes.insert(RoundUpToSizeClass(bytes));
    }
    classes.insert(RoundUpToSizeClass(power + 1));
    EXPECT_EQ(classes.size(), 4u) << "between 2^" << exponent << " and 2^" << exponent + 1;
  }
}

TEST(SizeClassTest, RoundingWastesAtMostAQuarterAboveTheSmallSizes) {
  std::vector<size_t> sizes;
  for (size_t bytes = kSmallSizeClassLimit; bytes <= 64 * kKiB; ++bytes) sizes.push_back(bytes);
  for (int exponent = 16; exponent < 63; ++exponent) {
    const size_t power = size_t{1} << exponent;
    for (size_t bytes : {power - 1, power, power + 1, power + power / 3, power + power / 4 + 1}) {
      sizes.push_back(bytes);
    }
  }
  std::mt19937_64 random(7);
  for (int draw = 0; draw < 100000; ++draw) {
    sizes.push_back(kSmallSizeClassLimit + random() % (size_t{1} << (8 + draw % 40)));
  }
  size_t previous_bytes = 0;
  size_t previous_class = 0;
  for (size_t bytes : sizes) {
    const size_t size_class = RoundUpToSizeClass(bytes);
    ASSERT_GE(size_class, bytes);
    ASSERT_LE((size_class - bytes) * 4, bytes) << "waste over 25% for " << bytes << " bytes";
    ASSERT_EQ(size_class % kAllocationAlignment, 0u) << bytes;
    if (bytes > previous_bytes) {
      ASSERT_GE(size_class, previous_class) << "not monotonic";
    }
    previous_bytes = bytes;
    previous_class = size_class;
  }
}

TEST(SizeClassTest, SizesPastTheLargestClassHaveNone) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  EXPECT_EQ(RoundUpToSizeClass(kMax), 0u);
  // Would round to 2^64.
  EXPECT_EQ(RoundUpToSizeClass(7 * (size_t{1} << 61) + 1), 0u);
  EXPECT_EQ(RoundUpToSizeClass(size_t{1} << 63), size_t{1} << 63);
}

TEST(FormatByteSizeTest, UsesBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(FormatByteSize(0), "0 B");
  EXPECT_EQ(FormatByteSize(1023), "1023 B");
  EXPECT_EQ(FormatByteSize(1024), "1.0 KiB");
  EXPECT_EQ(FormatByteSize(1536), "1.5 KiB");
  EXPECT_EQ(FormatByteSize(kMiB - 1), "1.0 MiB");
  EXPECT_EQ(FormatByteSize(3 * kGiB), "3.0 GiB");
  EXPECT_EQ(FormatByteSize(std::numeric_limits<size_t>::max()), "16.0 EiB");
}

// ---- reuse and statistics ---------------------------------------------------------

TEST_F(MemoryPoolTest, FreedBlockIsReusedForTheSameClass) {
  MemoryPool pool(raw_, Options());
  void* first = pool.Allocate(100);
  pool.Free(first, 100);
  void* second = pool.Allocate(120);  // Same 128-byte class.
  EXPECT_EQ(second, first);
  EXPECT_EQ(raw_.allocate_calls(), 1u);

  const MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.allocations, 2u);
  EXPECT_EQ(statistics.reuses, 1u);
  EXPECT_EQ(statistics.frees, 1u);
  EXPECT_EQ(statistics.bytes_in_use, 128u);
  EXPECT_EQ(statistics.bytes_cached, 0u);
  pool.Free(second, 120);
}

TEST_F(MemoryPoolTest, EveryClassHasItsOwnFreeList) {
  std::vector<size_t> classes = {64, 128, 192, 256};
  for (int k = 8; k < 56; ++k) {
    for (size_t quarter = 1; quarter <= 4; ++quarter) {
      classes.push_back((size_t{1} << k) + (quarter << (k - 2)));
    }
  }
  MemoryPool pool(raw_, Options());
  for (int round = 0; round < 2; ++round) {
    std::vector<void*> handles;
    for (size_t bytes : classes) handles.push_back(pool.Allocate(bytes));
    for (size_t i = 0; i < classes.size(); ++i) pool.Free(handles[i], classes[i]);
  }
  EXPECT_EQ(raw_.allocate_calls(), classes.size());
  EXPECT_EQ(pool.statistics().reuses, classes.size());
  // The fake allocator checks that each block goes back with its own size.
  pool.ReleaseCached();
  EXPECT_EQ(raw_.live_block_count(), 0u);
  EXPECT_EQ(pool.statistics().blocks_released, classes.size());
}

TEST_F(MemoryPoolTest, OtherClassesDoNotReuseAFreedBlock) {
  MemoryPool pool(raw_, Options());
  void* small = pool.Allocate(100);
  pool.Free(small, 100);
  void* larger = pool.Allocate(200);
  EXPECT_NE(larger, small);
  EXPECT_EQ(raw_.allocate_calls(), 2u);
  EXPECT_EQ(pool.statistics().reuses, 0u);
  EXPECT_EQ(pool.statistics().bytes_cached, 128u);
  pool.Free(larger, 200);
}

TEST_F(MemoryPoolTest, StatisticsFollowASequence) {
  MemoryPool pool(raw_, Options(/*bytes_limit=*/kMiB));
  void* a = pool.Allocate(100);   // 128
  void* b = pool.Allocate(1000);  // 1024
  void* c = pool.Allocate(3000);  // 3072
  MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_in_use, 128u + 1024u + 3072u);
  EXPECT_EQ(statistics.peak_bytes_in_use, 4224u);
  EXPECT_EQ(statistics.bytes_limit, kMiB);

  pool.Free(b, 1000);
  statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_in_use, 3200u);
  EXPECT_EQ(statistics.bytes_cached, 1024u);
  EXPECT_EQ(statistics.peak_bytes_in_use, 4224u);

  b = pool.Allocate(1000);
  pool.Free(a, 100);
  pool.Free(b, 1000);
  pool.Free(c, 3000);
  statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_in_use, 0u);
  EXPECT_EQ(statistics.bytes_cached, 4224u);
  EXPECT_EQ(statistics.allocations, 4u);
  EXPECT_EQ(statistics.reuses, 1u);
  EXPECT_EQ(statistics.frees, 4u);
  EXPECT_EQ(statistics.blocks_released, 0u);
  EXPECT_EQ(statistics.retries_after_release, 0u);
  EXPECT_EQ(statistics.failed_allocations, 0u);
  EXPECT_EQ(raw_.bytes_held(), 4224u);

  pool.ReleaseCached();
  statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.blocks_released, 3u);
  EXPECT_EQ(raw_.live_block_count(), 0u);
}

TEST_F(MemoryPoolTest, PeakIsTheHighestBytesInUse) {
  MemoryPool pool(raw_, Options());
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(pool.Allocate(kKiB));
  for (int i = 0; i < 4; ++i) pool.Free(blocks[i], kKiB);
  void* other = pool.Allocate(kKiB);
  pool.Free(other, kKiB);
  pool.Free(blocks[4], kKiB);
  EXPECT_EQ(pool.statistics().peak_bytes_in_use, 5 * kKiB);
  EXPECT_EQ(pool.statistics().bytes_in_use, 0u);
}

TEST_F(MemoryPoolTest, ZeroByteAllocationsAreDistinctBlocksOfTheSmallestClass) {
  MemoryPool pool(raw_, Options());
  void* first = pool.Allocate(0);
  void* second = pool.Allocate(0);
  EXPECT_NE(first, nullptr);
  EXPECT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(pool.statistics().bytes_in_use, 2 * kSmallSizeClassGranularity);
  pool.Free(first, 0);
  EXPECT_EQ(pool.Allocate(1), first);  // 1 byte shares the smallest class.
  pool.Free(first, 1);
  pool.Free(second, 0);
}

TEST_F(MemoryPoolTest, FreeOfNullIsIgnored) {
  MemoryPool pool(raw_, Options());
  pool.Free(nullptr, 100);
  EXPECT_EQ(pool.statistics().frees, 0u);
}

TEST_F(MemoryPoolTest, DestructorReturnsCachedBlocks) {
  {
    MemoryPool pool(raw_, Options());
    void* a = pool.Allocate(100);
    void* b = pool.Allocate(5000);
    pool.Free(a, 100);
    pool.Free(b, 5000);
    EXPECT_EQ(raw_.live_block_count(), 2u);
  }
  EXPECT_EQ(raw_.live_block_count(), 0u);
}

// ---- the cap and running out -------------------------------------------------------

TEST_F(MemoryPoolTest, CapReleasesTheCacheAndRetries) {
  MemoryPool pool(raw_, Options(/*bytes_limit=*/1024));
  void* small = pool.Allocate(512);
  pool.Free(small, 512);
  void* large = pool.Allocate(768);  // 512 cached + 768 > 1024.
  EXPECT_NE(large, nullptr);

  const MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.retries_after_release, 1u);
  EXPECT_EQ(statistics.blocks_released, 1u);
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.bytes_in_use, 768u);
  EXPECT_EQ(statistics.failed_allocations, 0u);
  EXPECT_EQ(raw_.free_calls(), 1u);
  pool.Free(large, 768);
}

TEST_F(MemoryPoolTest, CapExceededWithNothingCachedIsADeviceError) {
  MemoryPool pool(raw_, Options(/*bytes_limit=*/1024));
  void* held = pool.Allocate(768);
  const std::string message = DeviceErrorMessage([&] { pool.Allocate(512); });
  EXPECT_EQ(message,
            "out of memory on test:0: cannot allocate 512 B (in use 768 B, cached 0 B, limit "
            "1.0 KiB)");
  MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.failed_allocations, 1u);
  EXPECT_EQ(statistics.bytes_in_use, 768u);
  EXPECT_EQ(statistics.allocations, 1u);
  EXPECT_EQ(raw_.allocate_calls(), 1u);

  // The failure leaves the pool usable.
  pool.Free(held, 768);
  void* fits = pool.Allocate(512);
  pool.Free(fits, 512);
}

TEST_F(MemoryPoolTest, OutOfMemoryMessageUsesHumanReadableSizes) {
  MemoryPool pool(raw_, Options(/*bytes_limit=*/4 * kGiB));
  void* held = pool.Allocate(3 * kGiB);
  const std::string message = DeviceErrorMessage([&] { pool.Allocate(3 * kGiB / 2); });
  EXPECT_EQ(message,
            "out of memory on test:0: cannot allocate 1.5 GiB (in use 3.0 GiB, cached 0 B, limit "
            "4.0 GiB)");
  pool.Free(held, 3 * kGiB);
}

TEST_F(MemoryPoolTest, RequestLargerThanAnyClassIsADeviceError) {
  MemoryPool pool(raw_, Options());
  const std::string message =
      DeviceErrorMessage([&] { pool.Allocate(std::numeric_limits<size_t>::max()); });
  EXPECT_NE(message.find("out of memory on test:0: cannot allocate 16.0 EiB"), std::string::npos)
      << message;
  EXPECT_EQ(pool.statistics().failed_allocations, 1u);
  EXPECT_EQ(raw_.allocate_calls(), 0u);
}

TEST_F(MemoryPoolTest, SystemRefusalReleasesTheCacheAndRetries) {
  raw_.set_capacity_bytes(1024);
  MemoryPool pool(raw_, Options());
  void* small = pool.Allocate(512);
  pool.Free(small, 512);
  void* large = pool.Allocate(600);  // 640: the device refuses until the 512 go back.
  EXPECT_NE(large, nullptr);

  const MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.retries_after_release, 1u);
  EXPECT_EQ(statistics.blocks_released, 1u);
  EXPECT_EQ(statistics.bytes_in_use, 640u);
  EXPECT_EQ(raw_.allocate_calls(), 3u);  // 512, refused 640, retried 640.
  pool.Free(large, 600);
}

TEST_F(MemoryPoolTest, SystemRefusalAfterReleaseIsADeviceError) {
  raw_.set_capacity_bytes(1024);
  MemoryPool pool(raw_, Options());
  void* small = pool.Allocate(512);
  pool.Free(small, 512);
  const std::string message = DeviceErrorMessage([&] { pool.Allocate(2048); });
  EXPECT_EQ(message,
            "out of memory on test:0: cannot allocate 2.0 KiB: test:0 has no free memory (in use "
            "0 B, cached 0 B, no limit)");
  const MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.failed_allocations, 1u);
  EXPECT_EQ(statistics.retries_after_release, 0u);
  EXPECT_EQ(statistics.blocks_released, 1u);
  EXPECT_EQ(statistics.bytes_in_use, 0u);
  EXPECT_EQ(raw_.allocate_calls(), 3u);
}

TEST_F(MemoryPoolTest, SystemRefusalWithNothingCachedFailsWithoutARetry) {
  raw_.set_capacity_bytes(1024);
  MemoryPool pool(raw_, Options());
  DeviceErrorMessage([&] { pool.Allocate(2048); });
  EXPECT_EQ(raw_.allocate_calls(), 1u);
  EXPECT_EQ(pool.statistics().failed_allocations, 1u);
}

TEST_F(MemoryPoolTest, RawAllocatorExceptionLeavesStatisticsConsistent) {
  MemoryPool pool(raw_, Options());
  raw_.set_throw_on_allocate(true);
  EXPECT_THROW(pool.Allocate(100), std::runtime_error);
  raw_.set_throw_on_allocate(false);
  EXPECT_EQ(pool.statistics().bytes_in_use, 0u);
  EXPECT_EQ(pool.statistics().allocations, 0u);
}

TEST_F(MemoryPoolTest, LoweringTheLimitReleasesCacheAndStopsCaching) {
  MemoryPool pool(raw_, Options());
  void* a = pool.Allocate(512);
  void* b = pool.Allocate(512);
  void* c = pool.Allocate(512);
  pool.Free(c, 512);
  pool.SetLimit(512);
  MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_limit, 512u);
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.blocks_released, 1u);

  // Still over the cap: a freed block goes straight back to the system.
  pool.Free(a, 512);
  statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.blocks_released, 2u);
  EXPECT_EQ(raw_.live_block_count(), 1u);

  pool.SetLimit(0);
  EXPECT_EQ(pool.statistics().bytes_limit, 0u);
  pool.Free(b, 512);
  EXPECT_EQ(pool.statistics().bytes_cached, 512u);
}

// ---- idle trimming -----------------------------------------------------------

TEST_F(MemoryPoolTest, TrimIdleReleasesOnlyBlocksIdleForAPeriod) {
  MemoryPool pool(raw_, Options());  // Default period: 10 s.
  void* old_block = pool.Allocate(100);
  void* recent_block = pool.Allocate(1000);
  clock_.Advance(seconds(1));
  pool.Free(old_block, 100);
  clock_.Advance(seconds(7));
  pool.Free(recent_block, 1000);
  clock_.Advance(seconds(4));  // old: idle 11 s; recent: idle 4 s.

  pool.TrimIdle();
  MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.blocks_released, 1u);
  EXPECT_EQ(statistics.bytes_cached, 1024u);
  EXPECT_EQ(pool.Allocate(1000), recent_block);
  pool.Free(recent_block, 1000);

  clock_.Advance(seconds(10));
  pool.TrimIdle();
  EXPECT_EQ(pool.statistics().bytes_cached, 0u);
  EXPECT_EQ(raw_.live_block_count(), 0u);
}

TEST_F(MemoryPoolTest, IdleBlocksAreTrimmedOpportunisticallyAtMostOncePerPeriod) {
  MemoryPoolOptions options = Options();
  options.idle_period = seconds(10);
  MemoryPool pool(raw_, options);  // Created at t = 0 s, the first check.
  void* first = pool.Allocate(100);
  pool.Free(first, 100);

  clock_.Advance(seconds(5));
  void* second = pool.Allocate(5000);
  pool.Free(second, 5000);
  EXPECT_EQ(pool.statistics().blocks_released, 0u);

  clock_.Advance(seconds(6));
  // t = 11 s: a period since the last check, so this Allocate checks:
  // `first` has been idle 11 s, `second` only 6 s.
  void* third = pool.Allocate(200);
  EXPECT_EQ(pool.statistics().blocks_released, 1u);
  EXPECT_EQ(pool.statistics().bytes_cached, 5120u);
  pool.Free(third, 200);

  clock_.Advance(seconds(5));
  // t = 16 s: `second` has been idle 11 s, but the last check was 5 s ago.
  void* fourth = pool.Allocate(300);
  pool.Free(fourth, 300);
  EXPECT_EQ(pool.statistics().blocks_released, 1u);

  clock_.Advance(seconds(5));
  // t = 21 s: checks again; `second` (idle 16 s) and `third` (10 s) go,
  // `fourth` (5 s) stays.
  void* fifth = pool.Allocate(1000);
  EXPECT_EQ(pool.statistics().blocks_released, 3u);
  EXPECT_EQ(pool.statistics().bytes_cached, 320u);
  pool.Free(fifth, 1000);
}

TEST_F(MemoryPoolTest, ZeroIdlePeriodDisablesTrimming) {
  MemoryPoolOptions options = Options();
  options.idle_period = std::chrono::steady_clock::duration::zero();
  MemoryPool pool(raw_, options);
  void* block = pool.Allocate(100);
  pool.Free(block, 100);
  clock_.Advance(std::chrono::hours(24));
  pool.TrimIdle();
  void* again = pool.Allocate(100);
  EXPECT_EQ(again, block);
  EXPECT_EQ(pool.statistics().blocks_released, 0u);
  pool.Free(again, 100);
}

// ---- threads ----------------------------------------------------------------

TEST_F(MemoryPoolTest, ConcurrentAllocateAndFreeKeepStatisticsConsistent) {
  constexpr int kThreadCount = 4;
  constexpr int kIterations = 20000;
  constexpr size_t kLiveBlocksPerThread = 8;
  static constexpr size_t kSizes[] = {0, 1, 64, 100, 300, 1000, 1500, 4096};
  // Low enough that the cap forces releases, high enough that nothing fails:
  // at most 4 threads x 8 blocks x 4 KiB are in use at once.
  constexpr size_t kLimit = 160 * kKiB;
  MemoryPool pool(raw_, Options(kLimit));

  std::vector<std::thread> threads;
  for (int thread_index = 0; thread_index < kThreadCount; ++thread_index) {
    threads.emplace_back([&pool, thread_index] {
      std::mt19937 random(thread_index + 1);
      struct Live {
        void* handle;
        size_t bytes;
      };
      std::vector<Live> live;
      for (int iteration = 0; iteration < kIterations; ++iteration) {
        if (live.size() == kLiveBlocksPerThread || (!live.empty() && random() % 3 == 0)) {
          const size_t victim = random() % live.size();
          pool.Free(live[victim].handle, live[victim].bytes);
          live[victim] = live.back();
          live.pop_back();
        }
        const size_t bytes = kSizes[random() % std::size(kSizes)];
        live.push_back({pool.Allocate(bytes), bytes});
      }
      for (const Live& block : live) pool.Free(block.handle, block.bytes);
    });
  }
  for (std::thread& thread : threads) thread.join();

  const MemoryStatistics statistics = pool.statistics();
  EXPECT_EQ(statistics.bytes_in_use, 0u);
  EXPECT_EQ(statistics.allocations, uint64_t{kThreadCount} * kIterations);
  EXPECT_EQ(statistics.frees, statistics.allocations);
  EXPECT_EQ(statistics.failed_allocations, 0u);
  EXPECT_LE(statistics.peak_bytes_in_use, kLimit);
  EXPECT_EQ(statistics.allocations - statistics.reuses, raw_.allocate_calls());
  EXPECT_EQ(statistics.blocks_released, raw_.free_calls());
  EXPECT_EQ(statistics.bytes_cached, raw_.bytes_held());
  pool.ReleaseCached();
  EXPECT_EQ(raw_.live_block_count(), 0u);
}

}  // namespace
}  // namespace relay::devices
