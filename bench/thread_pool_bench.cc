// Cost of the CPU thread pool that runs kernels' parallel outer loops.
//
//   ninja -C build thread_pool_bench && build/bench/thread_pool_bench
//
// EmptyLoop/iterations:N/threads:T runs ParallelFor with grain 1 and an empty
// body on a private pool of T threads (T - 1 workers plus the caller), back to
// back, so the workers are still spinning: the per-kernel overhead of a
// sequence of kernels. One iteration always runs inline.
// EmptyLoopAfterIdle/threads:T sleeps 1 ms before each timed loop, so the
// workers have gone to sleep and the loop pays for waking them.
// Sum64MiB/serial and Sum64MiB/parallel/threads:T add up 64 MiB of uint64_t
// in chunks of 64 Ki elements: a memory-bound loop, which gains from threads
// only as far as one core cannot use the memory bandwidth alone.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "devices/cpu/thread_pool.h"

namespace relay::devices {
namespace {

void ThreadCountArguments(benchmark::internal::Benchmark* benchmark, int64_t iterations) {
  for (int64_t threads : {1, 2, 4}) benchmark->Args({iterations, threads});
}

void EmptyLoopArguments(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgNames({"iterations", "threads"});
  for (int64_t iterations : {int64_t{1}, int64_t{1000}, int64_t{1000000}}) {
    ThreadCountArguments(benchmark, iterations);
  }
}

void EmptyLoop(benchmark::State& state) {
  const int64_t iterations = state.range(0);
  ThreadPool pool(static_cast<int>(state.range(1)) - 1);
  const auto empty_body = [](void*, int64_t, int64_t) {};
  for (auto _ : state) pool.ParallelFor(0, iterations, 1, empty_body, nullptr);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(EmptyLoop)->Apply(EmptyLoopArguments)->UseRealTime();

void EmptyLoopAfterIdle(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)) - 1);
  const auto empty_body = [](void*, int64_t, int64_t) {};
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(0, 1000, 1, empty_body, nullptr);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}
// A fixed count, because each iteration sleeps 1 ms that the timer does not see.
BENCHMARK(EmptyLoopAfterIdle)->ArgName("threads")->Arg(2)->Arg(4)->Iterations(300)->UseManualTime();

constexpr size_t kSumElements = (size_t{64} << 20) / sizeof(uint64_t);
constexpr int64_t kSumGrain = int64_t{1} << 16;

const std::vector<uint64_t>& SumInput() {
  static const std::vector<uint64_t> input = [] {
    std::vector<uint64_t> values(kSumElements);
    std::iota(values.begin(), values.end(), uint64_t{0});
    return values;
  }();
  return input;
}

// Eight independent sums keep the adds ahead of memory on one core.
uint64_t SumRange(const uint64_t* values, int64_t begin, int64_t end) {
  uint64_t partial[8] = {};
  int64_t index = begin;
  for (; index + 8 <= end; index += 8) {
    for (int lane = 0; lane < 8; ++lane) partial[lane] += values[index + lane];
  }
  for (; index < end; ++index) partial[0] += values[index];
  return std::accumulate(std::begin(partial), std::end(partial), uint64_t{0});
}

void CheckSum(benchmark::State& state, uint64_t sum) {
  const uint64_t expected = uint64_t{kSumElements} * (kSumElements - 1) / 2;
  if (sum != expected) state.SkipWithError("wrong sum");
}

void Sum64MiBSerial(benchmark::State& state) {
  const std::vector<uint64_t>& input = SumInput();
  for (auto _ : state) {
    const uint64_t sum = SumRange(input.data(), 0, static_cast<int64_t>(input.size()));
    benchmark::DoNotOptimize(sum);
    CheckSum(state, sum);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(kSumElements * sizeof(uint64_t)));
}
BENCHMARK(Sum64MiBSerial)->Name("Sum64MiB/serial")->Unit(benchmark::kMillisecond)->UseRealTime();

void Sum64MiBParallel(benchmark::State& state) {
  const std::vector<uint64_t>& input = SumInput();
  ThreadPool pool(static_cast<int>(state.range(0)) - 1);
  for (auto _ : state) {
    std::atomic<uint64_t> sum{0};
    pool.ParallelFor(0, static_cast<int64_t>(input.size()), kSumGrain,
                     [&](int64_t begin, int64_t end) {
                       sum.fetch_add(SumRange(input.data(), begin, end), std::memory_order_relaxed);
                     });
    benchmark::DoNotOptimize(sum.load());
    CheckSum(state, sum.load());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(kSumElements * sizeof(uint64_t)));
}
BENCHMARK(Sum64MiBParallel)
    ->Name("Sum64MiB/parallel")
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace relay::devices
