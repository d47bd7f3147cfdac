// Throughput of the JIT-compiled CPU kernels for the operators that
// dominate a network's time: fp32 nn.dense (data (M, K), weight (N, K)) and
// nn.matmul (a (M, K), b (K, N)) at M = N = K = 256, 512, 1024, an LSTM
// step's matrix-vector product against the machine's read bandwidth for the
// same bytes, and nn.conv2d for two ResNet-style 3x3 layers.
// Each case compiles its kernel with one untimed warm-up call, so the timings
// are of running the kernel (plus RunOperator's cache look-up and the output
// allocation), never of compiling it. The kernels run on the host thread pool
// (RELAY_NUM_THREADS threads, default the hardware concurrency), so times and
// GFLOP/s are wall-clock (UseRealTime): the CPU column is the calling thread's
// alone.
//
//   ninja -C build dense_bench && build/bench/dense_bench
//
// bench/numpy_matmul.py times the same dense and matmul shapes with NumPy
// (OpenBLAS) for comparison.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "devices/cpu/thread_pool.h"
#include "kernels/attributes.h"
#include "kernels/compute/cpu_kernels.h"
#include "relay/devices.h"
#include "relay/tensor.h"

namespace relay::kernels {
namespace {

// A host float32 tensor of `shape` filled with uniform values in [-1, 1).
Ref<Tensor> RandomTensor(const Shape& shape, uint32_t seed) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat32);
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  float* data = tensor->data<float>();
  for (int64_t i = 0; i < tensor->element_count(); ++i) data[i] = distribution(generator);
  return tensor;
}

// Times `name` on `inputs` after one warm-up call that compiles the kernel;
// `flops` is the floating-point operation count of one call.
void RunTimed(benchmark::State& state, const char* name, const std::vector<Ref<Tensor>>& inputs,
              const Attrs& attrs, double flops) {
  benchmark::DoNotOptimize(RunOperator(name, inputs, attrs));
  for (auto _ : state) {
    Ref<Tensor> result = RunOperator(name, inputs, attrs);
    benchmark::DoNotOptimize(result);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// nn.dense with M = N = K = state.range(0).
void BM_Dense(benchmark::State& state) {
  const int64_t size = state.range(0);
  const std::vector<Ref<Tensor>> inputs = {RandomTensor({size, size}, 1),
                                           RandomTensor({size, size}, 2)};
  RunTimed(state, "nn.dense", inputs, {}, 2.0 * double(size) * double(size) * double(size));
}
// The default minimum time still ends a case after its first iteration when
// that one iteration is longer (the 1024 case can take seconds per call).
BENCHMARK(BM_Dense)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// The matrix-vector product of a recurrent step: 1 x K by an N x K weight,
// as (K, N). LSTM 512: (512, 2048), 4 MiB, beyond the per-core L2 and inside
// the shared L3; GRU 256: (256, 768), 768 KiB, whose halves fit two cores'
// L2s when each thread reads the same half every call; LSTM 128: (128, 512).
// It is bound by reading the weight, so its rate is also reported in GB/s
// of weight read, beside BM_ReadBandwidth's for the 4 MiB case.
void BM_DenseMatrixVector(benchmark::State& state) {
  const int64_t reduced = state.range(0);
  const int64_t columns = state.range(1);
  const std::vector<Ref<Tensor>> inputs = {RandomTensor({1, reduced}, 1),
                                           RandomTensor({columns, reduced}, 2)};
  // Prepared once, as a VM call site is: RunOperator's per-call kernel
  // building and cache look-up would cost as much as this small kernel.
  const std::shared_ptr<const PreparedOperator> prepared =
      PrepareOperator("nn.dense", inputs, {}, InputForm::kTensors);
  benchmark::DoNotOptimize(prepared->Run(inputs));
  for (auto _ : state) {
    std::vector<Ref<Tensor>> result = prepared->Run(inputs);
    benchmark::DoNotOptimize(result);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(columns * reduced) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(double(inputs[1]->byte_size()) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DenseMatrixVector)
    ->Args({512, 2048})
    ->Args({256, 768})
    ->Args({128, 512})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// What the machine can read: a 4 MiB float32 array summed by every thread
// of the host pool at once, each its own contiguous share, with the plain
// vectorised loop a compiler makes of it. The reference for
// BM_DenseMatrixVector's bandwidth.
void BM_ReadBandwidth(benchmark::State& state) {
  const Ref<Tensor> array = RandomTensor({2048 * 512}, 3);
  const float* data = array->data<float>();
  const int64_t count = array->element_count();
  std::vector<float> sums(64);
  auto read = [&] {
    devices::HostThreadPool().ParallelFor(0, count, 1, [&](int64_t begin, int64_t end) {
      // 32 independent partial sums (four AVX vectors), so the loop is
      // bound by loads rather than by the latency of additions.
      float partial[32] = {};
      int64_t index = begin;
      for (; index + 32 <= end; index += 32) {
        for (int lane = 0; lane < 32; ++lane) partial[lane] += data[index + lane];
      }
      for (; index < end; ++index) partial[0] += data[index];
      float total = 0;
      for (float value : partial) total += value;
      sums[size_t(begin * 63 / std::max<int64_t>(count, 1))] = total;
    });
  };
  read();
  for (auto _ : state) {
    read();
    benchmark::DoNotOptimize(sums.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(double(array->byte_size()) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReadBandwidth)->UseRealTime()->Unit(benchmark::kMicrosecond);

// nn.matmul (a (M, K) times b (K, N)) with M = N = K = state.range(0).
void BM_Matmul(benchmark::State& state) {
  const int64_t size = state.range(0);
  const std::vector<Ref<Tensor>> inputs = {RandomTensor({size, size}, 1),
                                           RandomTensor({size, size}, 2)};
  RunTimed(state, "nn.matmul", inputs, {}, 2.0 * double(size) * double(size) * double(size));
}
BENCHMARK(BM_Matmul)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// nn.conv2d, NCHW / OIHW, batch 1, "same" padding (kernel / 2), with
// state.range(0) channels in and state.range(1) out over a state.range(2)
// square image, a state.range(3) square kernel and stride state.range(4):
// the layer shapes where ResNet-18 and MobileNetV2 spend their time.
void BM_Conv2D(benchmark::State& state) {
  const int64_t in_channels = state.range(0), out_channels = state.range(1);
  const int64_t size = state.range(2), kernel = state.range(3), stride = state.range(4);
  const int64_t padding = kernel / 2;
  const std::vector<Ref<Tensor>> inputs = {
      RandomTensor({1, in_channels, size, size}, 1),
      RandomTensor({out_channels, in_channels, kernel, kernel}, 2)};
  const Attrs attrs = {{"padding", AttrValue::IntList({padding, padding})},
                       {"strides", AttrValue::IntList({stride, stride})}};
  const int64_t out_size = (size + 2 * padding - kernel) / stride + 1;
  const double flops = 2.0 * double(out_channels) * double(out_size * out_size) *
                       double(in_channels * kernel * kernel);
  RunTimed(state, "nn.conv2d", inputs, attrs, flops);
}
BENCHMARK(BM_Conv2D)
    ->ArgNames({"in", "out", "hw", "k", "stride"})
    ->Args({3, 64, 224, 7, 2})    // ResNet's stem
    ->Args({64, 64, 56, 3, 1})    // ResNet's first stage
    ->Args({128, 128, 28, 3, 1})  // ResNet's second stage
    ->Args({512, 512, 7, 3, 1})   // ResNet's last stage
    ->Args({16, 96, 112, 1, 1})   // MobileNetV2's first expansion
    ->Args({144, 24, 56, 1, 1})   // MobileNetV2's projection
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace relay::kernels
