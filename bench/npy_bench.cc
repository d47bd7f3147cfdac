// Throughput of reading NumPy files: .npy of 1 MiB and 64 MiB of float32, and
// a deflate-compressed .npz. Files are written once to a temporary directory.
//
//   ninja -C build npy_bench && build/bench/npy_bench --benchmark_filter=Npy
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "relay/devices.h"
#include "relay/npy.h"

namespace relay {
namespace {

// A directory holding the benchmark files for the life of the process.
class BenchmarkFiles {
 public:
  static BenchmarkFiles& Get() {
    static BenchmarkFiles files;
    return files;
  }
  ~BenchmarkFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }

  // Path of a float32 .npy of `bytes` bytes, written on first request.
  std::string Npy(size_t bytes) {
    const std::string path = directory_ + "/f32_" + std::to_string(bytes) + ".npy";
    if (!std::filesystem::exists(path)) WriteNpy(path, *Ramp(bytes));
    return path;
  }

  // Path of a compressed .npz holding one float32 array of `bytes` bytes.
  std::string CompressedNpz(size_t bytes) {
    const std::string path = directory_ + "/f32_" + std::to_string(bytes) + ".npz";
    if (!std::filesystem::exists(path)) {
      WriteNpz(path, {{"values", Ramp(bytes)}}, NpzCompression::kDeflate);
    }
    return path;
  }

 private:
  BenchmarkFiles() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/relay_npy_bench_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    directory_ = pattern;
  }

  // A repeating ramp plus a little noise in the low mantissa bits, so that
  // deflate finds some structure but not a trivially compressible stream.
  static Ref<Tensor> Ramp(size_t bytes) {
    const int64_t count = static_cast<int64_t>(bytes / sizeof(float));
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {count}, DType::kFloat32);
    float* values = tensor->data<float>();
    uint32_t state = 12345;
    for (int64_t index = 0; index < count; ++index) {
      state = state * 1664525u + 1013904223u;
      values[index] =
          static_cast<float>(index % 1000) * 0.001f + static_cast<float>(state >> 24) * 1e-6f;
    }
    return tensor;
  }

  std::string directory_;
};

void BM_ReadNpyFloat32(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const std::string path = BenchmarkFiles::Get().Npy(bytes);
  for (auto _ : state) {
    Ref<Tensor> tensor = ReadNpy(path, HostDevice());
    benchmark::DoNotOptimize(tensor->host_data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReadNpyFloat32)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMicrosecond);

void BM_ReadNpzCompressedFloat32(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const std::string path = BenchmarkFiles::Get().CompressedNpz(bytes);
  for (auto _ : state) {
    std::vector<NamedTensor> arrays = ReadNpz(path, HostDevice());
    benchmark::DoNotOptimize(arrays.front().tensor->host_data());
  }
  // Uncompressed bytes delivered, so the figure compares with the .npy read.
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReadNpzCompressedFloat32)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace relay
