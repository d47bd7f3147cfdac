#include "devices/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace relay::devices {
namespace {

using Chunk = std::pair<int64_t, int64_t>;

// Waits for `done` to hold, for at most ten seconds, so that a broken pool
// fails the test instead of hanging it.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

// Runs one loop and checks that its chunks tile [begin, end): each index is
// visited once, chunks are non-empty, and each has at least min(grain, size)
// iterations. The visit counts are plain ints so that ThreadSanitizer checks
// the ordering ParallelFor promises between the body and its caller.
void ExpectEachIndexVisitedOnce(ThreadPool& pool, int64_t begin, int64_t end, int64_t grain) {
  SCOPED_TRACE("workers " + std::to_string(pool.worker_count()) + ", range [" +
               std::to_string(begin) + ", " + std::to_string(end) + "), grain " +
               std::to_string(grain));
  const int64_t size = std::max<int64_t>(end - begin, 0);
  std::vector<int> visits(static_cast<size_t>(size), 0);
  std::mutex chunks_mutex;
  std::vector<Chunk> chunks;
  pool.ParallelFor(begin, end, grain, [&](int64_t chunk_begin, int64_t chunk_end) {
    {
      std::lock_guard<std::mutex> lock(chunks_mutex);
      chunks.emplace_back(chunk_begin, chunk_end);
    }
    for (int64_t index = chunk_begin; index < chunk_end; ++index) {
      if (index >= begin && index < end) ++visits[static_cast<size_t>(index - begin)];
    }
  });
  for (int64_t index = 0; index < size; ++index) {
    ASSERT_EQ(visits[static_cast<size_t>(index)], 1) << "index " << begin + index;
  }
  const int64_t minimum_chunk = std::min(std::max<int64_t>(grain, 1), size);
  int64_t covered = 0;
  for (const auto& [chunk_begin, chunk_end] : chunks) {
    EXPECT_GE(chunk_begin, begin);
    EXPECT_LE(chunk_end, end);
    EXPECT_GE(chunk_end - chunk_begin, minimum_chunk);
    covered += chunk_end - chunk_begin;
  }
  EXPECT_EQ(covered, size);
  if (size == 0) {
    EXPECT_TRUE(chunks.empty());
  }
}

TEST(ThreadPoolTest, ParseThreadCountAcceptsPositiveCountsUpToTheLimit) {
  EXPECT_EQ(ThreadPool::ParseThreadCount("1"), 1);
  EXPECT_EQ(ThreadPool::ParseThreadCount("8"), 8);
  EXPECT_EQ(ThreadPool::ParseThreadCount("1024"), 1024);
  EXPECT_EQ(ThreadPool::kMaximumThreadCount, 1024);
}

TEST(ThreadPoolTest, ParseThreadCountRejectsEverythingElse) {
  for (const char* text : {"0", "-3", "abc", "", "99999", "4x", "1025", " 4", "4 ", "+4", "2.5",
                           "99999999999999999999"}) {
    EXPECT_EQ(ThreadPool::ParseThreadCount(text), std::nullopt) << '"' << text << '"';
  }
  EXPECT_EQ(ThreadPool::ParseThreadCount(nullptr), std::nullopt);
}

TEST(ThreadPoolTest, VisitsEachIndexOnceForManyRangesGrainsAndPoolSizes) {
  const std::vector<Chunk> ranges = {{0, 0},      {5, 5},    {10, 3},   {0, 1},
                                     {0, 2},      {0, 7},    {3, 17},   {-50, 50},
                                     {100, 1100}, {0, 4096}, {7, 1031}, {1, 100001}};
  const std::vector<int64_t> grains = {-5, 0, 1, 2, 3, 16, 100, 1000, 200000};
  for (int worker_count : {0, 1, 2, 3, 7}) {
    ThreadPool pool(worker_count);
    ASSERT_EQ(pool.worker_count(), worker_count);
    for (const auto& [begin, end] : ranges) {
      for (int64_t grain : grains) ExpectEachIndexVisitedOnce(pool, begin, end, grain);
    }
  }
}

TEST(ThreadPoolTest, ChunksTileRangesWiderThanInt64) {
  ThreadPool pool(3);
  const int64_t begin = std::numeric_limits<int64_t>::min();
  const int64_t end = std::numeric_limits<int64_t>::max();
  const int64_t grain = int64_t{1} << 60;
  std::mutex chunks_mutex;
  std::vector<Chunk> chunks;
  pool.ParallelFor(begin, end, grain, [&](int64_t chunk_begin, int64_t chunk_end) {
    std::lock_guard<std::mutex> lock(chunks_mutex);
    chunks.emplace_back(chunk_begin, chunk_end);
  });
  std::sort(chunks.begin(), chunks.end());
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks.front().first, begin);
  EXPECT_EQ(chunks.back().second, end);
  for (size_t index = 0; index < chunks.size(); ++index) {
    EXPECT_LT(chunks[index].first, chunks[index].second);
    if (index > 0) {
      EXPECT_EQ(chunks[index - 1].second, chunks[index].first);
    }
  }
}

// With `alternate`, the calling thread's own range comes first, in one
// order on one loop of a body and in the other on the next; without, always
// in increasing order. The worker's first chunk (in the other range) waits
// until the caller has claimed all of its own, so that the caller runs its
// whole range; the caller never waits.
struct RangeOrderLoop {
  std::thread::id caller;
  std::mutex mutex;
  std::vector<int64_t> caller_chunks;
  std::atomic<bool> caller_left_its_range{false};

  static void Body(void* closure, int64_t begin, int64_t) {
    auto& loop = *static_cast<RangeOrderLoop*>(closure);
    const bool on_caller = std::this_thread::get_id() == loop.caller;
    if (begin >= 40) {
      if (on_caller) loop.caller_left_its_range = true;
      if (!on_caller) WaitUntil([&] { return loop.caller_left_its_range.load(); });
      return;
    }
    std::lock_guard<std::mutex> lock(loop.mutex);
    if (on_caller) loop.caller_chunks.push_back(begin);
  }
};

TEST(ThreadPoolTest, CallerRunsItsOwnRangeInAlternatingOrdersWhenAsked) {
  ThreadPool pool(1);
  // 8 chunks of 10: the caller's range is chunks 0-3 ([0, 40)).
  auto run = [&](bool alternate) {
    RangeOrderLoop loop;
    loop.caller = std::this_thread::get_id();
    pool.ParallelFor(0, 80, 10, &RangeOrderLoop::Body, &loop, alternate);
    return loop.caller_chunks;
  };
  const std::vector<int64_t> ascending = {0, 10, 20, 30}, descending = {30, 20, 10, 0};
  const std::vector<int64_t> first = run(true), second = run(true);
  EXPECT_TRUE((first == ascending && second == descending) ||
              (first == descending && second == ascending))
      << ::testing::PrintToString(first) << " then " << ::testing::PrintToString(second);
  EXPECT_EQ(run(false), ascending);
  EXPECT_EQ(run(false), ascending);
}

TEST(ThreadPoolTest, RangeOfOneChunkRunsInlineOnTheCaller) {
  ThreadPool pool(3);
  std::vector<Chunk> chunks;
  std::vector<std::thread::id> threads;
  for (const auto& [begin, end, grain] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 1, 1}, {4, 14, 10}, {0, 5, 64}, {0, 19, 10}}) {
    pool.ParallelFor(begin, end, grain, [&](int64_t chunk_begin, int64_t chunk_end) {
      chunks.emplace_back(chunk_begin, chunk_end);
      threads.push_back(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(chunks, (std::vector<Chunk>{{0, 1}, {4, 14}, {0, 5}, {0, 19}}));
  for (std::thread::id thread : threads) EXPECT_EQ(thread, std::this_thread::get_id());
}

TEST(ThreadPoolTest, WorkRunsOnMoreThanOneThread) {
  ThreadPool pool(3);
  std::mutex threads_mutex;
  std::set<std::thread::id> threads;
  // Every chunk waits until two threads have joined in, so the loop cannot
  // finish on the caller alone before a worker wakes up.
  pool.ParallelFor(0, 16, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(threads_mutex);
      threads.insert(std::this_thread::get_id());
    }
    WaitUntil([&] {
      std::lock_guard<std::mutex> lock(threads_mutex);
      return threads.size() >= 2;
    });
  });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_LE(threads.size(), 4u);
}

TEST(ThreadPoolTest, PoolWithoutWorkersRunsEverythingOnTheCaller) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.worker_count(), 0);
  std::vector<Chunk> chunks;
  std::vector<std::thread::id> threads;
  pool.ParallelFor(0, 1000, 1, [&](int64_t chunk_begin, int64_t chunk_end) {
    chunks.emplace_back(chunk_begin, chunk_end);
    threads.push_back(std::this_thread::get_id());
  });
  EXPECT_EQ(chunks, (std::vector<Chunk>{{0, 1000}}));
  EXPECT_EQ(threads, std::vector<std::thread::id>{std::this_thread::get_id()});
}

TEST(ThreadPoolTest, FirstExceptionIsRethrownAfterOtherChunksStop) {
  ThreadPool pool(3);
  std::atomic<int> chunks_started{0};
  std::atomic<int> chunks_running{0};
  std::atomic<bool> overlapped_return{false};
  // Every chunk throws, so each thread starts at most one chunk before it
  // sees the failure: 64 iterations make 16 chunks for 4 threads.
  try {
    pool.ParallelFor(0, 64, 1, [&](int64_t chunk_begin, int64_t) {
      chunks_started.fetch_add(1);
      chunks_running.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      chunks_running.fetch_sub(1);
      throw std::runtime_error("chunk at " + std::to_string(chunk_begin));
    });
    ADD_FAILURE() << "ParallelFor did not throw";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("chunk at ", 0), 0u) << error.what();
    overlapped_return = chunks_running.load() != 0;
  }
  EXPECT_FALSE(overlapped_return.load()) << "ParallelFor returned while chunks still ran";
  EXPECT_GE(chunks_started.load(), 1);
  EXPECT_LE(chunks_started.load(), 4);

  // One failing chunk among many: its exception is the one that comes back.
  EXPECT_THROW(
      {
        try {
          pool.ParallelFor(0, 1000, 10, [](int64_t chunk_begin, int64_t chunk_end) {
            if (chunk_begin <= 500 && 500 < chunk_end) throw std::out_of_range("index 500");
          });
        } catch (const std::out_of_range& error) {
          EXPECT_STREQ(error.what(), "index 500");
          throw;
        }
      },
      std::out_of_range);

  // The pool is still usable afterwards.
  ExpectEachIndexVisitedOnce(pool, 0, 10000, 7);
}

TEST(ThreadPoolTest, ExceptionFromAnInlineRunPropagates) {
  ThreadPool pool(2);
  EXPECT_THROW(
      pool.ParallelFor(0, 3, 10, [](int64_t, int64_t) { throw std::logic_error("small"); }),
      std::logic_error);
  ExpectEachIndexVisitedOnce(pool, 0, 100, 1);
}

TEST(ThreadPoolTest, NestedLoopsRunSeriallyInsideTheOuterChunk) {
  ThreadPool pool(3);
  constexpr int64_t kOuter = 32;
  constexpr int64_t kInner = 100;
  std::vector<int> visits(kOuter * kInner, 0);
  std::vector<int> inner_calls(kOuter, 0);
  std::atomic<bool> inner_left_its_thread{false};
  pool.ParallelFor(0, kOuter, 1, [&](int64_t outer_begin, int64_t outer_end) {
    const std::thread::id outer_thread = std::this_thread::get_id();
    for (int64_t outer = outer_begin; outer < outer_end; ++outer) {
      pool.ParallelFor(0, kInner, 1, [&](int64_t inner_begin, int64_t inner_end) {
        if (std::this_thread::get_id() != outer_thread) inner_left_its_thread = true;
        ++inner_calls[static_cast<size_t>(outer)];
        for (int64_t inner = inner_begin; inner < inner_end; ++inner) {
          ++visits[static_cast<size_t>(outer * kInner + inner)];
        }
      });
    }
  });
  EXPECT_FALSE(inner_left_its_thread.load());
  for (int calls : inner_calls) EXPECT_EQ(calls, 1);
  for (int count : visits) ASSERT_EQ(count, 1);
}

TEST(ThreadPoolTest, NestedLoopOnAnotherPoolRunsSerially) {
  ThreadPool outer_pool(2);
  ThreadPool inner_pool(2);
  std::atomic<int> inner_calls{0};
  std::atomic<int64_t> inner_iterations{0};
  outer_pool.ParallelFor(0, 12, 1, [&](int64_t outer_begin, int64_t outer_end) {
    for (int64_t outer = outer_begin; outer < outer_end; ++outer) {
      inner_pool.ParallelFor(0, 50, 1, [&](int64_t inner_begin, int64_t inner_end) {
        inner_calls.fetch_add(1);
        inner_iterations.fetch_add(inner_end - inner_begin);
      });
    }
  });
  EXPECT_EQ(inner_calls.load(), 12);
  EXPECT_EQ(inner_iterations.load(), 12 * 50);
}

TEST(ThreadPoolTest, CallerFindingThePoolBusyRunsItsLoopInline) {
  ThreadPool pool(1);
  std::atomic<bool> other_loop_done{false};
  std::vector<Chunk> other_chunks;
  std::thread::id other_body_thread;
  std::thread::id other_caller_thread;
  std::thread other_caller;
  std::once_flag start_other_caller;
  pool.ParallelFor(0, 8, 1, [&](int64_t, int64_t) {
    std::call_once(start_other_caller, [&] {
      other_caller = std::thread([&] {
        other_caller_thread = std::this_thread::get_id();
        pool.ParallelFor(0, 100, 1, [&](int64_t chunk_begin, int64_t chunk_end) {
          other_chunks.emplace_back(chunk_begin, chunk_end);
          other_body_thread = std::this_thread::get_id();
        });
        other_loop_done = true;
      });
    });
    // Hold the pool until the other caller has finished.
    EXPECT_TRUE(WaitUntil([&] { return other_loop_done.load(); }));
  });
  other_caller.join();
  EXPECT_EQ(other_chunks, (std::vector<Chunk>{{0, 100}}));
  EXPECT_EQ(other_body_thread, other_caller_thread);
}

TEST(ThreadPoolTest, ConcurrentCallsFromFourThreads) {
  ThreadPool pool(3);
  constexpr int kCallers = 4;
  constexpr int kLoopsPerCaller = 200;
  std::vector<std::thread> callers;
  std::vector<int> failures(kCallers, 0);
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&, caller] {
      for (int loop = 0; loop < kLoopsPerCaller; ++loop) {
        const int64_t size = 1 + (loop * 37 + caller * 11) % 3000;
        std::vector<int> visits(static_cast<size_t>(size), 0);
        pool.ParallelFor(0, size, 1 + loop % 5, [&](int64_t chunk_begin, int64_t chunk_end) {
          for (int64_t index = chunk_begin; index < chunk_end; ++index) {
            ++visits[static_cast<size_t>(index)];
          }
        });
        if (std::any_of(visits.begin(), visits.end(), [](int count) { return count != 1; })) {
          ++failures[static_cast<size_t>(caller)];
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(failures, std::vector<int>(kCallers, 0));
}

TEST(ThreadPoolTest, ManyBackToBackLoopsAcrossSleepAndWake) {
  ThreadPool pool(2);
  int64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    // Now and then let the workers fall asleep, so both wake-up paths run.
    if (round % 500 == 499) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::atomic<int64_t> sum{0};
    pool.ParallelFor(0, 64, 1, [&](int64_t chunk_begin, int64_t chunk_end) {
      int64_t partial = 0;
      for (int64_t index = chunk_begin; index < chunk_end; ++index) partial += index;
      sum.fetch_add(partial);
    });
    total += sum.load();
  }
  EXPECT_EQ(total, int64_t{2000} * (63 * 64 / 2));
}

TEST(ThreadPoolTest, PoolsStartAndStopWhetherWorkersSpinOrSleep) {
  for (int round = 0; round < 20; ++round) {
    ThreadPool pool(3);
    if (round % 2 == 0) ExpectEachIndexVisitedOnce(pool, 0, 500, 1);
    if (round % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

struct CClosure {
  std::vector<std::atomic<int>>* visits;
  std::atomic<int>* calls;
};

void CountVisitsThroughCClosure(void* closure, int64_t begin, int64_t end) {
  auto* state = static_cast<CClosure*>(closure);
  state->calls->fetch_add(1);
  for (int64_t index = begin; index < end; ++index) (*state->visits)[static_cast<size_t>(index)]++;
}

TEST(ThreadPoolTest, CEntryPointRunsOnTheHostPool) {
  for (const auto& [size, grain] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 1}, {1, 1}, {10, 100}, {1000, 1}, {100000, 0}}) {
    std::vector<std::atomic<int>> visits(static_cast<size_t>(size));
    std::atomic<int> calls{0};
    CClosure closure{&visits, &calls};
    relay_cpu_parallel_for(&CountVisitsThroughCClosure, &closure, 0, size, grain);
    for (int64_t index = 0; index < size; ++index) {
      ASSERT_EQ(visits[static_cast<size_t>(index)].load(), 1)
          << "size " << size << " index " << index;
    }
    if (size == 0) {
      EXPECT_EQ(calls.load(), 0);
    }
    if (size > 0 && size <= grain) {
      EXPECT_EQ(calls.load(), 1);
    }
  }
}

TEST(ThreadPoolTest, HostPoolIsSizedFromTheEnvironmentOrTheCores) {
  ThreadPool& pool = HostThreadPool();
  EXPECT_EQ(&pool, &HostThreadPool());
  const std::optional<int> requested =
      ThreadPool::ParseThreadCount(std::getenv("RELAY_NUM_THREADS"));
  const int expected_threads =
      requested ? *requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(pool.worker_count() + 1, expected_threads);
}

}  // namespace
}  // namespace relay::devices
