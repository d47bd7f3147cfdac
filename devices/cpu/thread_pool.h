// Worker threads for the parallel outer loops of CPU kernels.
//
// JIT-compiled kernels call relay_cpu_parallel_for (below), which runs on
// HostThreadPool(); C++ kernels and tests use ThreadPool::ParallelFor.
//
// Scheduling: ParallelFor splits [begin, end) into contiguous chunks of at
// least `grain` iterations (about four chunks per thread, so that a slow or
// preempted thread does not hold the whole loop up), and the chunks into one
// consecutive range per thread. Each thread (the calling one first, then the
// workers in order) claims the chunks of its own range in order,
// then what is left of the others'. So when nothing is preempted, a thread
// runs the same part of every loop of the same size, and its share of a
// weight read by every call can stay in its core's cache from call to call
// (a batch-one perceptron's 2.6 MB of weights on two cores with 2 MB caches:
// 15 -> 12 us a call; an LSTM-512's 4 MB recurrent weight: 5% a step). The
// loops of one body (a kernel) that ask for it (`alternate`: the small-rows
// contraction schedule's) alternate the order of each range's chunks, last
// to first and back: a share a little larger than the cache would be
// evicted line by line if swept the same way every time, and swept back it
// is mostly found there (an LSTM-512 step: 20% faster).
// Which thread runs a chunk, and in what order chunks finish, is otherwise
// unspecified. Every index lies in exactly one chunk, and each chunk runs
// once (unless a chunk throws: see Exceptions).
//
// The loop runs serially on the calling thread, as one call of the body with
// the whole range and without waking any worker, when
//   - the range has fewer than 2 * `grain` iterations, so that it makes a
//     single chunk (in particular when it has at most `grain`);
//   - the pool has no workers;
//   - the caller is already running a chunk of a ParallelFor (of any pool):
//     nested loops run serially, so a worker never waits for its own pool;
//   - another thread's loop holds the pool. A pool runs one loop at a time,
//     and a caller never waits for somebody else's loop to finish.
//
// Thread-safety: ParallelFor may be called from any number of threads at
// once, and from inside a body. Destroying a pool while one of its loops is
// running is undefined.
// Ordering: everything the caller did before ParallelFor happens-before every
// call of the body, and every call of the body happens-before ParallelFor
// returns or throws. Calls of the body for different chunks may run at the
// same time and are not ordered with each other.
// Exceptions: when a chunk throws, chunks not yet started are skipped,
// ParallelFor waits for the chunks still running and then rethrows the first
// exception caught on the calling thread. The pool stays usable.
// Costs: a parallel call allocates nothing. Idle workers spin for a few tens
// of microseconds after a loop (so back-to-back kernels do not pay for a
// wake-up) and then sleep on a condition variable.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace relay::devices {

class ThreadPool {
 public:
  // The body of a loop as generated code supplies it: called with the closure
  // and one chunk [begin, end).
  using ChunkFunction = void (*)(void* closure, int64_t begin, int64_t end);

  // The most threads HostThreadPool() accepts from RELAY_NUM_THREADS.
  static constexpr int kMaximumThreadCount = 1024;

  // Starts `worker_count` worker threads (none when it is zero or negative);
  // with the calling thread, a loop then runs on up to worker_count + 1
  // threads. If the system refuses to start a thread, the pool keeps the
  // workers it has: worker_count() says how many.
  explicit ThreadPool(int worker_count);
  // Wakes and joins the workers. No loop may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int worker_count() const { return static_cast<int>(workers_.size()); }

  // Runs body(chunk_begin, chunk_end) over the chunks of [begin, end) and
  // returns when all have finished (see the top of this file). Does nothing
  // when end <= begin; a grain below 1 counts as 1.
  void ParallelFor(int64_t begin, int64_t end, int64_t grain,
                   const std::function<void(int64_t, int64_t)>& body);
  // The same for a plain function and its closure, which is what generated
  // code passes (through relay_cpu_parallel_for). With `alternate`, loops of
  // the same body alternate the order of each range's chunks (see the top
  // of this file).
  void ParallelFor(int64_t begin, int64_t end, int64_t grain, ChunkFunction body, void* closure,
                   bool alternate = false);

  // Reads a thread count as RELAY_NUM_THREADS gives it: a decimal integer in
  // [1, kMaximumThreadCount] with nothing around it. Returns nullopt for
  // anything else, including nullptr.
  static std::optional<int> ParseThreadCount(const char* text);

 private:
  struct Loop;

  // Worker `thread_index` (the calling thread of a loop is 0, the workers
  // 1 to worker_count()).
  void WorkerMain(uint64_t thread_index);
  // Returns the first generation other than `seen_generation`, spinning
  // briefly and then sleeping until one is published.
  uint32_t WaitForGeneration(uint32_t seen_generation);
  void WakeWorkers(uint64_t chunk_count);
  void WaitForWorkersToLeave();
  void LeaveLoop();
  static void RunChunks(Loop& loop, uint64_t thread_index);
  static void RunRange(Loop& loop, uint64_t range);
  // Which way the chunks of a loop of `body` run this time: each body's
  // loops alternate.
  bool NextDirection(ChunkFunction body);

  // Loops split their chunks into at most this many ranges, one per thread
  // (threads beyond it share ranges).
  static constexpr uint64_t kAffinityRanges = 64;

  std::vector<std::thread> workers_;
  // Directions by loop body (hashed; a collision only disturbs the
  // alternation).
  std::array<std::atomic<uint8_t>, 256> directions_{};
  // Set while a thread owns the pool for its loop.
  std::atomic<bool> loop_in_flight_{false};
  // The loop workers should join; null between loops. It lives on the
  // owner's stack, which is why the owner waits for active_workers_ to reach
  // zero (after clearing this) before it returns.
  std::atomic<Loop*> current_loop_{nullptr};
  // Workers that may be looking at current_loop_.
  std::atomic<int> active_workers_{0};
  // Bumped for each published loop and for shutdown; workers wait for it to
  // change.
  std::atomic<uint32_t> generation_{0};
  std::atomic<bool> stopping_{false};

  // Sleeping, on either side, goes through this mutex. The counters let the
  // other side skip the lock and the notify when nobody sleeps.
  std::mutex sleep_mutex_;
  std::condition_variable work_published_;
  std::condition_variable workers_left_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> owner_sleeping_{false};
};

// The process-wide pool for host kernels. Its threads number RELAY_NUM_THREADS
// when that is a valid count (ThreadPool::ParseThreadCount), otherwise the
// number of CPUs the process may run on (its affinity mask), counting the calling
// thread: it has one worker fewer. Created on first use and never destroyed,
// so it may be used from static destructors; its workers sleep when idle.
ThreadPool& HostThreadPool();

}  // namespace relay::devices

// The entry point for JIT-compiled kernels: runs body(closure, chunk_begin,
// chunk_end) over [begin, end) on HostThreadPool(), as
// ThreadPool::ParallelFor does. `body` must not throw or unwind.
extern "C" void relay_cpu_parallel_for(void (*body)(void* closure, int64_t begin, int64_t end),
                                       void* closure, int64_t begin, int64_t end,
                                       int64_t grain) noexcept;
// The same with ParallelFor's `alternate` (a kir::ForKind::kParallelAlternating
// loop).
extern "C" void relay_cpu_parallel_for_alternating(void (*body)(void* closure, int64_t begin,
                                                                int64_t end),
                                                   void* closure, int64_t begin, int64_t end,
                                                   int64_t grain) noexcept;
