#include "devices/cpu/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>

namespace relay::devices {

// One loop as its owner published it. It lives on the owner's stack for the
// duration of one ParallelFor.
struct ThreadPool::Loop {
  ChunkFunction body;
  void* closure;
  int64_t begin;
  uint64_t chunk_count;
  // Every chunk has base_chunk_size iterations, and the first longer_chunks
  // of them one more, so that chunk sizes differ by at most one.
  uint64_t base_chunk_size;
  uint64_t longer_chunks;
  // The chunks fall into `range_count` consecutive ranges, range r being
  // [range_first(r), range_first(r + 1)); next_chunk[r] is the next
  // unclaimed chunk of range r (past its end once all are claimed).
  uint64_t range_count;
  // Whether each range's chunks run from its last to its first.
  bool reversed = false;
  std::atomic<uint64_t> next_chunk[kAffinityRanges] = {};
  uint64_t range_first(uint64_t range) const { return range * chunk_count / range_count; }
  std::atomic<bool> failed{false};
  // Written once, by whichever thread sets `failed`; read by the owner after
  // every worker has left the loop.
  std::exception_ptr first_exception{};
};

namespace {

// Chunks per thread: more lets fast threads take over the work of slow or
// preempted ones, fewer costs fewer claims and better locality.
constexpr uint64_t kChunksPerThread = 4;

// How long an idle worker spins for the next loop before it sleeps, and how
// long an owner spins for its workers to finish. Both are wake-up latencies
// (tens of microseconds through the kernel) that a kernel sequence would
// otherwise pay on every call; beyond them, spinning only takes a core away
// from other work. bench/thread_pool_bench.cc measures the effect.
constexpr auto kWorkerSpinTime = std::chrono::microseconds(50);
constexpr auto kOwnerSpinTime = std::chrono::microseconds(50);
// Reading the clock costs about as much as a few pauses, so the spin loops
// read it only every this many iterations.
constexpr int kSpinIterationsPerClockRead = 16;

// True while this thread runs a chunk of some pool's loop, and always in a
// worker thread: a ParallelFor called there runs serially.
thread_local bool running_parallel_chunk = false;

class RunningParallelChunkScope {
 public:
  RunningParallelChunkScope() : previous_(running_parallel_chunk) { running_parallel_chunk = true; }
  ~RunningParallelChunkScope() { running_parallel_chunk = previous_; }
  RunningParallelChunkScope(const RunningParallelChunkScope&) = delete;
  RunningParallelChunkScope& operator=(const RunningParallelChunkScope&) = delete;

 private:
  bool previous_;
};

// Tells the core that this is a spin-wait, which saves power and lets the
// sibling hyperthread run.
inline void RelaxWhileSpinning() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `done()` holds or `limit` has passed; returns whether it holds.
template <typename Predicate>
bool SpinUntil(Predicate done, std::chrono::nanoseconds limit) {
  if (done()) return true;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    for (int iteration = 0; iteration < kSpinIterationsPerClockRead; ++iteration) {
      if (done()) return true;
      RelaxWhileSpinning();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

void CallStandardFunction(void* closure, int64_t begin, int64_t end) {
  (*static_cast<const std::function<void(int64_t, int64_t)>*>(closure))(begin, end);
}

int HostThreadCount() {
  if (std::optional<int> count = ThreadPool::ParseThreadCount(std::getenv("RELAY_NUM_THREADS"))) {
    return *count;
  }
  // The CPUs this process may run on (a container or taskset may allow
  // fewer than the machine has), falling back to the machine's count.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    return CPU_COUNT(&allowed);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

ThreadPool::ThreadPool(int worker_count) {
  if (worker_count <= 0) return;
  workers_.reserve(static_cast<size_t>(worker_count));
  for (int index = 0; index < worker_count; ++index) {
    try {
      workers_.emplace_back([this, index] { WorkerMain(uint64_t(index) + 1); });
    } catch (const std::system_error&) {
      // Out of threads: the loops run on fewer, which the contract allows.
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  stopping_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    generation_.fetch_add(1, std::memory_order_seq_cst);
  }
  work_published_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

std::optional<int> ThreadPool::ParseThreadCount(const char* text) {
  if (text == nullptr) return std::nullopt;
  const char* text_end = text + std::strlen(text);
  int count = 0;
  const auto [parsed_end, error] = std::from_chars(text, text_end, count);
  if (error != std::errc() || parsed_end != text_end) return std::nullopt;
  if (count < 1 || count > kMaximumThreadCount) return std::nullopt;
  return count;
}

void ThreadPool::ParallelFor(int64_t begin, int64_t end, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& body) {
  // The closure parameter is void* because generated code passes mutable
  // state; CallStandardFunction only reads through it.
  ParallelFor(begin, end, grain, &CallStandardFunction,
              const_cast<std::function<void(int64_t, int64_t)>*>(&body));
}

void ThreadPool::ParallelFor(int64_t begin, int64_t end, int64_t grain, ChunkFunction body,
                             void* closure, bool alternate) {
  if (end <= begin) return;
  const uint64_t chunk_grain = static_cast<uint64_t>(std::max<int64_t>(grain, 1));
  // Unsigned, because end - begin may not fit in int64_t.
  const uint64_t iteration_count = static_cast<uint64_t>(end) - static_cast<uint64_t>(begin);
  const uint64_t thread_count = workers_.size() + 1;
  const uint64_t chunk_count =
      std::min(iteration_count / chunk_grain, thread_count * kChunksPerThread);
  if (chunk_count < 2 || workers_.empty() || running_parallel_chunk ||
      loop_in_flight_.exchange(true, std::memory_order_acquire)) {
    body(closure, begin, end);
    return;
  }

  Loop loop{.body = body,
            .closure = closure,
            .begin = begin,
            .chunk_count = chunk_count,
            .base_chunk_size = iteration_count / chunk_count,
            .longer_chunks = iteration_count % chunk_count,
            .range_count = std::min<uint64_t>(thread_count, kAffinityRanges),
            .reversed = alternate && NextDirection(body)};
  for (uint64_t range = 0; range < loop.range_count; ++range)
    loop.next_chunk[range].store(loop.range_first(range), std::memory_order_relaxed);
  current_loop_.store(&loop, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  WakeWorkers(chunk_count - 1);
  {
    RunningParallelChunkScope scope;
    RunChunks(loop, 0);
  }
  // No worker can find the loop after this store; the ones that already did
  // are counted in active_workers_.
  current_loop_.store(nullptr, std::memory_order_seq_cst);
  WaitForWorkersToLeave();
  loop_in_flight_.store(false, std::memory_order_release);
  if (loop.first_exception) std::rethrow_exception(loop.first_exception);
}

void ThreadPool::RunChunks(Loop& loop, uint64_t thread_index) {
  // The thread's own range first, then what is left of the others'.
  const uint64_t home = thread_index % loop.range_count;
  for (uint64_t visited = 0; visited < loop.range_count; ++visited) {
    const uint64_t range = (home + visited) % loop.range_count;
    RunRange(loop, range);
  }
}

bool ThreadPool::NextDirection(ChunkFunction body) {
  const auto key = reinterpret_cast<uintptr_t>(body);
  std::atomic<uint8_t>& direction = directions_[(key >> 4) % directions_.size()];
  return direction.fetch_xor(1, std::memory_order_relaxed) != 0;
}

void ThreadPool::RunRange(Loop& loop, uint64_t range) {
  const uint64_t range_begin = loop.range_first(range), range_end = loop.range_first(range + 1);
  for (;;) {
    if (loop.failed.load(std::memory_order_relaxed)) return;
    const uint64_t claimed = loop.next_chunk[range].fetch_add(1, std::memory_order_relaxed);
    if (claimed >= range_end) return;
    const uint64_t chunk = loop.reversed ? range_begin + range_end - 1 - claimed : claimed;
    const uint64_t offset = chunk * loop.base_chunk_size + std::min(chunk, loop.longer_chunks);
    const uint64_t size = loop.base_chunk_size + (chunk < loop.longer_chunks ? 1 : 0);
    const uint64_t chunk_begin = static_cast<uint64_t>(loop.begin) + offset;
    try {
      loop.body(loop.closure, static_cast<int64_t>(chunk_begin),
                static_cast<int64_t>(chunk_begin + size));
    } catch (...) {
      if (!loop.failed.exchange(true, std::memory_order_relaxed)) {
        loop.first_exception = std::current_exception();
      }
    }
  }
}

void ThreadPool::WakeWorkers(uint64_t helpers_wanted) {
  // Pairs with the increment in WaitForGeneration: either this load sees the
  // sleeper, or the sleeper sees the new generation and does not sleep.
  if (sleeping_workers_.load(std::memory_order_seq_cst) == 0) return;
  // A sleeper checks the generation under the mutex; taking it here means
  // each one has either seen the new generation or is waiting to be told.
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  if (helpers_wanted >= workers_.size()) {
    work_published_.notify_all();
  } else {
    for (uint64_t helper = 0; helper < helpers_wanted; ++helper) work_published_.notify_one();
  }
}

uint32_t ThreadPool::WaitForGeneration(uint32_t seen_generation) {
  uint32_t generation = seen_generation;
  const bool published = SpinUntil(
      [&] {
        generation = generation_.load(std::memory_order_acquire);
        return generation != seen_generation;
      },
      kWorkerSpinTime);
  if (published) return generation;
  std::unique_lock<std::mutex> lock(sleep_mutex_);
  sleeping_workers_.fetch_add(1, std::memory_order_seq_cst);
  while ((generation = generation_.load(std::memory_order_seq_cst)) == seen_generation) {
    work_published_.wait(lock);
  }
  sleeping_workers_.fetch_sub(1, std::memory_order_relaxed);
  return generation;
}

void ThreadPool::WorkerMain(uint64_t thread_index) {
  running_parallel_chunk = true;
  uint32_t seen_generation = 0;
  for (;;) {
    seen_generation = WaitForGeneration(seen_generation);
    if (stopping_.load(std::memory_order_seq_cst)) return;
    // Counted before looking, so that the owner, which clears current_loop_
    // before it reads the count, cannot miss a worker that found its loop.
    active_workers_.fetch_add(1, std::memory_order_seq_cst);
    if (Loop* loop = current_loop_.load(std::memory_order_seq_cst)) RunChunks(*loop, thread_index);
    LeaveLoop();
  }
}

void ThreadPool::LeaveLoop() {
  // Pairs with the store of owner_sleeping_ in WaitForWorkersToLeave, as the
  // sleeping_workers_ counter does for the workers.
  if (active_workers_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
      owner_sleeping_.load(std::memory_order_seq_cst)) {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    workers_left_.notify_one();
  }
}

void ThreadPool::WaitForWorkersToLeave() {
  const bool left = SpinUntil(
      [this] { return active_workers_.load(std::memory_order_acquire) == 0; }, kOwnerSpinTime);
  if (left) return;
  std::unique_lock<std::mutex> lock(sleep_mutex_);
  owner_sleeping_.store(true, std::memory_order_seq_cst);
  while (active_workers_.load(std::memory_order_seq_cst) != 0) workers_left_.wait(lock);
  owner_sleeping_.store(false, std::memory_order_relaxed);
}

ThreadPool& HostThreadPool() {
  // Never destroyed, so that kernels run from static destructors and atexit
  // handlers still find it; the pointer keeps it reachable for leak checkers.
  static ThreadPool* const pool = new ThreadPool(HostThreadCount() - 1);
  return *pool;
}

}  // namespace relay::devices

extern "C" void relay_cpu_parallel_for(void (*body)(void* closure, int64_t begin, int64_t end),
                                       void* closure, int64_t begin, int64_t end,
                                       int64_t grain) noexcept {
  relay::devices::HostThreadPool().ParallelFor(begin, end, grain, body, closure);
}

extern "C" void relay_cpu_parallel_for_alternating(void (*body)(void* closure, int64_t begin,
                                                                int64_t end),
                                                   void* closure, int64_t begin, int64_t end,
                                                   int64_t grain) noexcept {
  relay::devices::HostThreadPool().ParallelFor(begin, end, grain, body, closure,
                                               /*alternate=*/true);
}
