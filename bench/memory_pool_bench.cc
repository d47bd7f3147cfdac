// Allocation cost: the CPU device's pool against the allocators under it.
//
//   ninja -C build memory_pool_bench && build/bench/memory_pool_bench
//
// AllocateFree/* repeats one allocate/free pair of a fixed size; the second
// argument says whether each cycle also writes one byte per 4 KiB page, which
// shows the page faults a fresh block costs and a reused one does not.
// MixedLifetimes/* keeps many tensors of varied sizes alive and frees them in
// shuffled order, as a VM running a dynamic model does.
#include <benchmark/benchmark.h>
#include <mimalloc.h>

#include <cstddef>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#include "devices/cpu/cpu_device.h"

namespace relay::devices {
namespace {

constexpr size_t kPageBytes = 4096;

void TouchPages(void* block, size_t bytes) {
  auto* bytes_pointer = static_cast<volatile unsigned char*>(block);
  for (size_t offset = 0; offset < bytes; offset += kPageBytes) bytes_pointer[offset] = 1;
}

struct PoolAllocator {
  CpuDevice device;
  void* Allocate(size_t bytes) { return device.Allocate(bytes); }
  void Free(void* block, size_t bytes) { device.Free(block, bytes); }
};

struct MimallocAlignedAllocator {
  void* Allocate(size_t bytes) { return mi_malloc_aligned(bytes, kAllocationAlignment); }
  void Free(void* block, size_t /*bytes*/) { mi_free(block); }
};

struct StdMallocAllocator {
  void* Allocate(size_t bytes) { return std::malloc(bytes); }
  void Free(void* block, size_t /*bytes*/) { std::free(block); }
};

template <typename Allocator>
void AllocateFree(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const bool touch = state.range(1) != 0;
  Allocator allocator;
  for (auto _ : state) {
    void* block = allocator.Allocate(bytes);
    if (touch) TouchPages(block, bytes);
    benchmark::DoNotOptimize(block);
    allocator.Free(block, bytes);
  }
  state.SetItemsProcessed(state.iterations());
}

void AllocateFreeArguments(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgNames({"bytes", "touch"});
  for (int64_t bytes : {int64_t{64}, int64_t{4} << 10, int64_t{1} << 20, int64_t{64} << 20}) {
    benchmark->Args({bytes, 0});
    benchmark->Args({bytes, 1});
  }
}

BENCHMARK(AllocateFree<PoolAllocator>)->Name("AllocateFree/pool")->Apply(AllocateFreeArguments);
BENCHMARK(AllocateFree<MimallocAlignedAllocator>)
    ->Name("AllocateFree/mi_malloc_aligned")
    ->Apply(AllocateFreeArguments);
BENCHMARK(AllocateFree<StdMallocAllocator>)
    ->Name("AllocateFree/std_malloc")
    ->Apply(AllocateFreeArguments);

// One step of the mixed workload: free the tensor in `slot`, allocate `bytes`.
struct MixedStep {
  size_t slot;
  size_t bytes;
};

// Sizes skewed the way a VM's are: most allocations are shape-function
// scalars and small tensors, fewer are activations, a few are large weights
// or batched sequences.
std::vector<MixedStep> MakeMixedSteps(size_t live_count, size_t step_count) {
  std::mt19937_64 random(42);
  std::vector<MixedStep> steps;
  steps.reserve(step_count);
  for (size_t step = 0; step < step_count; ++step) {
    const unsigned bucket = random() % 100;
    size_t bytes;
    if (bucket < 50) {
      bytes = 8 + random() % 248;  // Scalars and shapes.
    } else if (bucket < 85) {
      bytes = 256 + random() % (64 << 10);  // Small tensors.
    } else if (bucket < 98) {
      bytes = (64 << 10) + random() % (4 << 20);  // Activations.
    } else {
      bytes = (4 << 20) + random() % (28 << 20);  // Large tensors.
    }
    steps.push_back({static_cast<size_t>(random() % live_count), bytes});
  }
  return steps;
}

template <typename Allocator>
void MixedLifetimes(benchmark::State& state) {
  const size_t live_count = static_cast<size_t>(state.range(0));
  const std::vector<MixedStep> steps = MakeMixedSteps(live_count, 1 << 14);
  Allocator allocator;
  struct Live {
    void* block = nullptr;
    size_t bytes = 0;
  };
  std::vector<Live> live(live_count);
  size_t next_step = 0;
  auto run_step = [&] {
    const MixedStep& step = steps[next_step];
    next_step = (next_step + 1) % steps.size();
    Live& slot = live[step.slot];
    if (slot.block != nullptr) allocator.Free(slot.block, slot.bytes);
    slot.block = allocator.Allocate(step.bytes);
    slot.bytes = step.bytes;
    // Kernels write their outputs; a write per page makes fresh memory pay
    // for its page faults as it would in a real run.
    TouchPages(slot.block, slot.bytes);
    benchmark::DoNotOptimize(slot.block);
  };
  // Time the steady state, not the start-up: one untimed pass fills every
  // slot and lets the pool (or the allocator's own caches) warm up.
  for (size_t step = 0; step < steps.size(); ++step) run_step();
  MemoryStatistics before{};
  if constexpr (std::is_same_v<Allocator, PoolAllocator>) {
    before = allocator.device.memory_statistics();
  }

  for (auto _ : state) run_step();

  if constexpr (std::is_same_v<Allocator, PoolAllocator>) {
    const MemoryStatistics after = allocator.device.memory_statistics();
    state.counters["reuse_fraction"] = static_cast<double>(after.reuses - before.reuses) /
                                       static_cast<double>(after.allocations - before.allocations);
    state.counters["in_use_MiB"] = static_cast<double>(after.bytes_in_use) / (1 << 20);
    state.counters["cached_MiB"] = static_cast<double>(after.bytes_cached) / (1 << 20);
  }
  for (Live& slot : live) {
    if (slot.block != nullptr) allocator.Free(slot.block, slot.bytes);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(MixedLifetimes<PoolAllocator>)->Name("MixedLifetimes/pool")->Arg(64)->Arg(512);
BENCHMARK(MixedLifetimes<MimallocAlignedAllocator>)
    ->Name("MixedLifetimes/mi_malloc_aligned")
    ->Arg(64)
    ->Arg(512);
BENCHMARK(MixedLifetimes<StdMallocAllocator>)->Name("MixedLifetimes/std_malloc")->Arg(64)->Arg(512);

}  // namespace
}  // namespace relay::devices
