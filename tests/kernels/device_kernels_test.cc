// Kernels on devices that compile source: the OpenCL C and CUDA C printed
// from kernel IR, OpenCL runs on PoCL, and the CUDA path (NVRTC, module
// loading, launch geometry) against tests/devices/fake_cuda_driver.c. The
// per-operator conformance runs are the fixture suites registered again
// under the ctest prefixes opencl: and cuda-ptx: (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/kernel_loader.h"
#include "devices/opencl/opencl_device.h"
#include "kernels/codegen/gpu/kernel_source.h"
#include "kernels/compute/cpu_kernels.h"
#include "kernels/compute/device_kernels.h"
#include "kernels/compute/gpu_schedule.h"
#include "kernels/kir/rewrite.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

#if defined(RELAY_HAS_CUDA_DEVICE)
#include "devices/cuda/cuda_device.h"
#include "devices/cuda/nvrtc_compiler.h"
#include "tests/devices/fake_cuda_driver.h"
#endif

namespace relay::kernels {
namespace {

using namespace relay::kernels::kir;

// The kernel adding two float vectors of symbolic length d0.
kir::Kernel VectorAddKernel() {
  const Var length(new VarNode("n"));
  const Buffer a(new BufferNode("a", DType::kFloat32, {length}));
  const Buffer b(new BufferNode("b", DType::kFloat32, {length}));
  const TensorExpr sum{{length}, DType::kFloat32, [&](const std::vector<Expr>& index) {
                         return Add(Load(a, index[0]), Load(b, index[0]));
                       }};
  return BuildGpuKernel("add", {a, b}, {length}, sum);
}

TEST(KernelSourceTest, OpenClTakesEachBufferAsMemoryAndOffset) {
  const kir::Kernel kernel = VectorAddKernel();
  const gpu::KernelSource source = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC);
  EXPECT_NE(source.text.find("__kernel void relay_kernel("), std::string::npos) << source.text;
  EXPECT_NE(source.text.find("__global float* p0_base, long p0_offset"), std::string::npos)
      << source.text;
  EXPECT_NE(source.text.find("get_global_id(0)"), std::string::npos) << source.text;
  EXPECT_EQ(source.text.find("cl_khr_fp64"), std::string::npos) << "no double in this kernel";
  // One thread per element: as many as the symbolic length.
  EXPECT_EQ(source.thread_count.get(), kernel.dims[0].get());
}

TEST(KernelSourceTest, CudaTakesDevicePointersAndExternCEntry) {
  const gpu::KernelSource source =
      gpu::EmitKernelSource(VectorAddKernel(), gpu::SourceDialect::kCudaC);
  EXPECT_NE(source.text.find("extern \"C\" __global__ void relay_kernel("), std::string::npos)
      << source.text;
  EXPECT_NE(source.text.find("float* __restrict__ p0"), std::string::npos) << source.text;
  EXPECT_NE(source.text.find("blockIdx.x * blockDim.x + threadIdx.x"), std::string::npos);
}

TEST(KernelSourceTest, ThreadCountIsEvaluatedForTheDimensions) {
  const kir::Kernel kernel = VectorAddKernel();
  const gpu::KernelSource source = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC);
  const int64_t length = 1000;
  EXPECT_EQ(gpu::EvaluateIndexExpr(source.thread_count, kernel.dims, {&length, 1}), 1000);
  const Var other(new VarNode("m"));
  EXPECT_THROW(gpu::EvaluateIndexExpr(other, kernel.dims, {&length, 1}), Error);
  EXPECT_EQ(gpu::EvaluateIndexExpr(Binary(BinaryOp::kFloorDivide, Int(-7), Int(2)), {}, {}), -4);
  EXPECT_EQ(gpu::EvaluateIndexExpr(Binary(BinaryOp::kFloorMod, Int(-7), Int(2)), {}, {}), 1);
}

// ---- OpenCL (PoCL in CI) -------------------------------------------------------------

Device* OpenClDeviceOrNull(std::string& why) {
  try {
    return &GetDevice(DeviceId{DeviceKind::kOpenCL, 0});
  } catch (const Error& error) {
    why = error.what();
    return nullptr;
  }
}

#define REQUIRE_OPENCL(device)                     \
  std::string why_absent;                          \
  Device* device = OpenClDeviceOrNull(why_absent); \
  if (device == nullptr) GTEST_SKIP() << why_absent;

template <typename T>
Ref<Tensor> HostTensor(DType dtype, const std::vector<T>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {static_cast<int64_t>(values.size())}, dtype);
  std::copy(values.begin(), values.end(), static_cast<T*>(tensor->host_data()));
  return tensor;
}

template <typename T>
std::vector<T> HostValues(const Ref<Tensor>& tensor) {
  const Ref<Tensor> host = CopyTensor(*tensor, HostDevice());
  const T* data = static_cast<const T*>(host->host_data());
  return std::vector<T>(data, data + host->element_count());
}

TEST(OpenClKernelsTest, IntegerDivisionByZeroAndOverflowDoNotTrap) {
  REQUIRE_OPENCL(device);
  const int32_t lowest = std::numeric_limits<int32_t>::min();
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<int32_t>(DType::kInt32, {7, -7, 7, lowest, -7}), *device),
      CopyTensor(*HostTensor<int32_t>(DType::kInt32, {2, 2, 0, -1, -2}), *device)};
  // NumPy's floor division, with x // 0 == 0 and the smallest value // -1
  // wrapping to itself, as the CPU kernels define them.
  EXPECT_EQ(HostValues<int32_t>(RunOperator("floor_divide", inputs)),
            (std::vector<int32_t>{3, -4, 0, lowest, 3}));
  EXPECT_EQ(HostValues<int32_t>(RunOperator("floor_mod", inputs)),
            (std::vector<int32_t>{1, 1, 0, 0, -1}));
}

TEST(OpenClKernelsTest, FloatToIntegerCastsSaturateAndNaNIsZero) {
  REQUIRE_OPENCL(device);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float infinity = std::numeric_limits<float>::infinity();
  const std::vector<Ref<Tensor>> inputs{CopyTensor(
      *HostTensor<float>(DType::kFloat32, {nan, infinity, -infinity, 300.0f, -300.5f, 12.9f}),
      *device)};
  EXPECT_EQ(HostValues<int8_t>(RunOperator("cast", inputs, {{"dtype", AttrValue::String("int8")}})),
            (std::vector<int8_t>{0, 127, -128, 127, -128, 12}));
}

TEST(OpenClKernelsTest, MaximumPropagatesNaNFromEitherSide) {
  REQUIRE_OPENCL(device);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, {nan, 1.0f, 3.0f}), *device),
      CopyTensor(*HostTensor<float>(DType::kFloat32, {1.0f, nan, 2.0f}), *device)};
  const std::vector<float> result = HostValues<float>(RunOperator("maximum", inputs));
  EXPECT_TRUE(std::isnan(result[0]));
  EXPECT_TRUE(std::isnan(result[1]));
  EXPECT_EQ(result[2], 3.0f);
}

TEST(OpenClKernelsTest, ResultsStayOnTheDeviceOfTheInputs) {
  REQUIRE_OPENCL(device);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, {1, 2, 3}), *device)};
  const Ref<Tensor> result = RunOperator("negative", inputs);
  EXPECT_EQ(result->device_id().ToString(), "opencl:0");
  EXPECT_EQ(HostValues<float>(result), (std::vector<float>{-1, -2, -3}));
}

// nn.dense's result in double: x (rows x depth) times w (units x depth)
// transposed, row-major.
std::vector<double> DenseReference(const std::vector<float>& x, const std::vector<float>& w,
                                   int64_t rows, int64_t units, int64_t depth) {
  std::vector<double> result(size_t(rows * units), 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t unit = 0; unit < units; ++unit) {
      for (int64_t k = 0; k < depth; ++k)
        result[size_t(row * units + unit)] += double(x[row * depth + k]) * w[unit * depth + k];
    }
  }
  return result;
}

// Few outputs that each reduce many values take a work-group each: the
// lanes' strided shares, then a tree in shared memory.
TEST(OpenClKernelsTest, LongReductionsOfFewOutputsReduceInWorkGroups) {
  REQUIRE_OPENCL(device);
  const int64_t rows = 3, length = 5000, units = 5;
  std::vector<float> x(rows * length), w(units * length);
  for (size_t index = 0; index < x.size(); ++index) x[index] = float(index % 7) * 0.25f - 0.5f;
  for (size_t index = 0; index < w.size(); ++index) w[index] = float(index % 5) * 0.125f - 0.25f;
  Ref<Tensor> x_host = HostTensor<float>(DType::kFloat32, x)->Reshape({rows, length});
  Ref<Tensor> w_host = HostTensor<float>(DType::kFloat32, w)->Reshape({units, length});
  const std::vector<Ref<Tensor>> dense_inputs{CopyTensor(*x_host, *device),
                                              CopyTensor(*w_host, *device)};
  const std::vector<float> dense = HostValues<float>(RunOperator("nn.dense", dense_inputs));
  ASSERT_EQ(dense.size(), size_t(rows * units));
  const std::vector<double> expected = DenseReference(x, w, rows, units, length);
  for (size_t index = 0; index < expected.size(); ++index) {
    EXPECT_NEAR(dense[index], expected[index], 1e-4 * std::max(1.0, std::abs(expected[index])))
        << index / units << ", " << index % units;
  }
  // A maximum over a long axis propagates a NaN from any lane's share.
  x[length + 4321] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Ref<Tensor>> max_input{
      CopyTensor(*HostTensor<float>(DType::kFloat32, x)->Reshape({rows, length}), *device)};
  const std::vector<float> maxima =
      HostValues<float>(RunOperator("max", max_input, {{"axis", AttrValue::IntList({1})}}));
  EXPECT_EQ(maxima[0], 1.0f);
  EXPECT_TRUE(std::isnan(maxima[1]));
  EXPECT_EQ(maxima[2], 1.0f);
}

// Runs `kernel` (one float output of `outputs` elements after its inputs)
// on `device` through its KernelLoader, as PrepareOperator would.
std::vector<float> RunOnDevice(const kir::Kernel& kernel, Device& device,
                               const std::vector<Ref<Tensor>>& inputs, int64_t outputs) {
  devices::KernelLoader* loader = devices::KernelLoaderOf(device);
  const gpu::KernelSource source = gpu::EmitKernelSource(kernel, loader->dialect());
  const std::shared_ptr<const devices::LoadedKernel> loaded =
      loader->LoadKernel(source.text, gpu::kKernelEntry);
  Ref<Tensor> out = Tensor::Empty(device, {outputs}, DType::kFloat32);
  std::vector<devices::BufferArgument> buffers;
  for (const Ref<Tensor>& input : inputs)
    buffers.push_back({input->storage()->handle(), input->byte_offset()});
  buffers.push_back({out->storage()->handle(), out->byte_offset()});
  loaded->Launch(buffers, {}, gpu::EvaluateIndexExpr(source.thread_count, {}, {}));
  return HostValues<float>(out);
}

// Shorter reductions read along rows take a warp's worth of lanes each, 8
// elements to a group: 13 elements leave the second group's last segments
// empty (they meet the barriers, read and store nothing). Built with the
// GPU's options: PoCL itself (CPU cores) gets a thread per element.
TEST(OpenClKernelsTest, ShorterRowReductionsTakeASegmentOfAGroupPerElement) {
  REQUIRE_OPENCL(device);
  const int64_t rows = 13, length = 300;
  std::vector<float> x(rows * length);
  for (size_t index = 0; index < x.size(); ++index) x[index] = float(index % 11) * 0.5f - 2.0f;
  x[7 * length + 299] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Ref<Tensor>> input{
      CopyTensor(*HostTensor<float>(DType::kFloat32, x)->Reshape({rows, length}), *device)};
  const Buffer buffer(new BufferNode("x", DType::kFloat32, {Int(rows), Int(length)}));
  const Var k(new VarNode("k"));
  auto row_reduction = [&](ReduceOp op, Expr init) {
    const TensorExpr reduction{{Int(rows)}, DType::kFloat32, [&](const std::vector<Expr>& at) {
                                 return Reduce(op, {k}, {Int(length)}, init,
                                               Load(buffer, Add(Multiply(at[0], Int(length)), k)));
                               }};
    const kir::Kernel kernel = BuildGpuKernel("rows", {buffer}, {}, reduction);
    EXPECT_EQ(gpu::EvaluateIndexExpr(
                  gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC).thread_count, {}, {}),
              2 * 256)
        << "two groups of 8 segments";
    return RunOnDevice(kernel, *device, input, rows);
  };
  const std::vector<float> sums = row_reduction(ReduceOp::kSum, Float(0, DType::kFloat32));
  const std::vector<float> maxima = row_reduction(
      ReduceOp::kMaximum, Float(-std::numeric_limits<double>::infinity(), DType::kFloat32));
  ASSERT_EQ(sums.size(), size_t(rows));
  for (int64_t row = 0; row < rows; ++row) {
    double expected_sum = 0;
    float expected_max = -std::numeric_limits<float>::infinity();
    for (int64_t index = 0; index < length; ++index) {
      expected_sum += x[row * length + index];
      expected_max = std::max(expected_max, x[row * length + index]);
    }
    if (row == 7) {
      EXPECT_TRUE(std::isnan(sums[row]));
      EXPECT_TRUE(std::isnan(maxima[row])) << "a NaN in a segment's share propagates";
      continue;
    }
    EXPECT_NEAR(sums[row], expected_sum, 1e-3) << row;
    EXPECT_EQ(maxima[row], expected_max) << row;
  }
  // PoCL's own choice: a thread per element, as its work-items run on CPU
  // cores.
  EXPECT_FALSE(GpuScheduleOptionsFor(*device).split_row_reductions);
}

TEST(KernelSourceTest, ReductionsChooseLanesByLengthAndLayout) {
  const Buffer x(new BufferNode("x", DType::kFloat32, {Int(40), Int(300)}));
  const Var k(new VarNode("k"));
  // Along rows: contiguous, a segment of 32 lanes per element, 8 per group.
  const TensorExpr row_sums{{Int(40)}, DType::kFloat32, [&](const std::vector<Expr>& at) {
                              return Reduce(ReduceOp::kSum, {k}, {Int(300)},
                                            Float(0, DType::kFloat32),
                                            Load(x, Add(Multiply(at[0], Int(300)), k)));
                            }};
  const kir::Kernel rows = BuildGpuKernel("row_sums", {x}, {}, row_sums);
  EXPECT_EQ(gpu::EvaluateIndexExpr(
                gpu::EmitKernelSource(rows, gpu::SourceDialect::kCudaC).thread_count, {}, {}),
            5 * 256);
  // Across rows (a column sum): strided, a thread per element.
  const TensorExpr column_sums{{Int(300)}, DType::kFloat32, [&](const std::vector<Expr>& at) {
                                 return Reduce(ReduceOp::kSum, {k}, {Int(40)},
                                               Float(0, DType::kFloat32),
                                               Load(x, Add(Multiply(k, Int(300)), at[0])));
                               }};
  const kir::Kernel columns = BuildGpuKernel("column_sums", {x}, {}, column_sums);
  EXPECT_EQ(gpu::EvaluateIndexExpr(
                gpu::EmitKernelSource(columns, gpu::SourceDialect::kCudaC).thread_count, {}, {}),
            300);
}

TEST(KernelSourceTest, AWorkGroupReductionMeetsAtBarriersInSharedMemory) {
  const Var length(new VarNode("n"));
  const Buffer x(new BufferNode("x", DType::kFloat32, {Int(4096)}));
  const Var k(new VarNode("k"));
  const TensorExpr total{{}, DType::kFloat32, [&](const std::vector<Expr>&) {
                           return Reduce(ReduceOp::kSum, {k}, {Int(4096)},
                                         Float(0, DType::kFloat32), Load(x, k));
                         }};
  const kir::Kernel kernel = BuildGpuKernel("sum", {x}, {}, total);
  const gpu::KernelSource opencl = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC);
  EXPECT_NE(opencl.text.find("reqd_work_group_size(256, 1, 1)"), std::string::npos) << opencl.text;
  EXPECT_NE(opencl.text.find("__local float"), std::string::npos) << opencl.text;
  EXPECT_NE(opencl.text.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos);
  EXPECT_EQ(gpu::EvaluateIndexExpr(opencl.thread_count, {}, {}), 256) << "one group of 256 lanes";
  const gpu::KernelSource cuda = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kCudaC);
  EXPECT_NE(cuda.text.find("__shared__ float"), std::string::npos) << cuda.text;
  EXPECT_NE(cuda.text.find("__syncthreads();"), std::string::npos);
}

// Values in [-1, 1) that are exact in float, varying along every axis.
std::vector<float> Pattern(int64_t count, int64_t seed) {
  std::vector<float> values(count);
  for (int64_t index = 0; index < count; ++index)
    values[index] = float((index * 37 + seed * 11) % 64) / 32.0f - 1.0f;
  return values;
}

// Contractions with many rows and columns take a shared-memory tile per
// work-group; ragged edges (no side a multiple of a tile) load zeros and
// store nothing. Checked against plain loops in double.
TEST(OpenClKernelsTest, DenseAndBatchMatmulComputeInSharedMemoryTiles) {
  REQUIRE_OPENCL(device);
  const int64_t rows = 70, depth = 37, units = 50;
  const std::vector<float> x = Pattern(rows * depth, 1), w = Pattern(units * depth, 2),
                           bias = Pattern(units, 3);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, x)->Reshape({rows, depth}), *device),
      CopyTensor(*HostTensor<float>(DType::kFloat32, w)->Reshape({units, depth}), *device)};
  const std::vector<float> dense = HostValues<float>(RunOperator("nn.dense", inputs));
  ASSERT_EQ(dense.size(), size_t(rows * units));
  const std::vector<double> expected = DenseReference(x, w, rows, units, depth);
  for (size_t index = 0; index < expected.size(); ++index) {
    ASSERT_NEAR(dense[index], expected[index], 1e-4) << index / units << ", " << index % units;
  }
  // A fused epilogue (bias, relu) runs where the tile stores.
  std::vector<Ref<Tensor>> fused_inputs = inputs;
  fused_inputs.push_back(CopyTensor(*HostTensor<float>(DType::kFloat32, bias), *device));
  const std::vector<FusedOperator> chain{
      {"nn.dense", {}, {0, 1}}, {"nn.bias_add", {}, {-1, 2}}, {"nn.relu", {}, {-2}}};
  const Ref<Tensor> fused = PrepareFusedOperators(chain, fused_inputs)->Run(fused_inputs).at(0);
  const std::vector<float> activated = HostValues<float>(fused);
  for (int64_t index = 0; index < rows * units; ++index) {
    ASSERT_NEAR(activated[index], std::max(0.0f, dense[index] + bias[index % units]), 1e-5)
        << index;
  }

  const int64_t batches = 3, m = 33, n = 20, k = 45;
  const std::vector<float> a = Pattern(batches * m * k, 4), b = Pattern(batches * n * k, 5);
  const std::vector<Ref<Tensor>> batch_inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, a)->Reshape({batches, m, k}), *device),
      CopyTensor(*HostTensor<float>(DType::kFloat32, b)->Reshape({batches, n, k}), *device)};
  const std::vector<float> product =
      HostValues<float>(RunOperator("nn.batch_matmul", batch_inputs));
  ASSERT_EQ(product.size(), size_t(batches * m * n));
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double expected = 0;
        for (int64_t l = 0; l < k; ++l)
          expected += double(a[(batch * m + i) * k + l]) * b[(batch * n + j) * k + l];
        ASSERT_NEAR(product[(batch * m + i) * n + j], expected, 1e-4) << batch << i << j;
      }
    }
  }
}

// A padded, strided convolution: the window's padding and stride are in the
// operand the tile loads; its output pixels are the tile's columns.
TEST(OpenClKernelsTest, Conv2dComputesInSharedMemoryTiles) {
  REQUIRE_OPENCL(device);
  const int64_t channels = 3, height = 13, width = 11, filters = 17, window = 3;
  const int64_t out_height = (height + 2 - window) / 2 + 1,
                out_width = (width + 2 - window) / 2 + 1;
  const std::vector<float> data = Pattern(channels * height * width, 6),
                           weight = Pattern(filters * channels * window * window, 7);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, data)->Reshape({1, channels, height, width}),
                 *device),
      CopyTensor(
          *HostTensor<float>(DType::kFloat32, weight)->Reshape({filters, channels, window, window}),
          *device)};
  const std::vector<float> result = HostValues<float>(RunOperator(
      "nn.conv2d", inputs,
      {{"strides", AttrValue::IntList({2, 2})}, {"padding", AttrValue::IntList({1, 1, 1, 1})}}));
  ASSERT_EQ(result.size(), size_t(filters * out_height * out_width));
  for (int64_t f = 0; f < filters; ++f) {
    for (int64_t y = 0; y < out_height; ++y) {
      for (int64_t x = 0; x < out_width; ++x) {
        double expected = 0;
        for (int64_t c = 0; c < channels; ++c) {
          for (int64_t ry = 0; ry < window; ++ry) {
            for (int64_t rx = 0; rx < window; ++rx) {
              const int64_t iy = y * 2 + ry - 1, ix = x * 2 + rx - 1;
              if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
              expected += double(data[(c * height + iy) * width + ix]) *
                          weight[((f * channels + c) * window + ry) * window + rx];
            }
          }
        }
        ASSERT_NEAR(result[(f * out_height + y) * out_width + x], expected, 1e-4)
            << f << ", " << y << ", " << x;
      }
    }
  }

  // Unpadded at stride 1, then relu and padded by one for a next
  // convolution, in one kernel: the padding is zeros, the inside the sums.
  const std::vector<Ref<Tensor>> fused_inputs{
      inputs[0], inputs[1],
      CopyTensor(*HostTensor<float>(DType::kFloat32, {0.0f})->Reshape({}), *device)};
  const AttrValue zero = AttrValue::IntList({0, 0}), one = AttrValue::IntList({1, 1});
  const std::vector<FusedOperator> chain{
      {"nn.conv2d", {}, {0, 1}},
      {"nn.relu", {}, {-1}},
      {"nn.pad", {{"pad_width", AttrValue::List({zero, zero, one, one})}}, {-2, 2}}};
  const std::vector<float> padded =
      HostValues<float>(PrepareFusedOperators(chain, fused_inputs)->Run(fused_inputs).at(0));
  const int64_t inner_height = height - window + 1, inner_width = width - window + 1;
  ASSERT_EQ(padded.size(), size_t(filters * (inner_height + 2) * (inner_width + 2)));
  for (int64_t f = 0; f < filters; ++f) {
    for (int64_t y = 0; y < inner_height + 2; ++y) {
      for (int64_t x = 0; x < inner_width + 2; ++x) {
        double expected = 0;
        if (y >= 1 && y <= inner_height && x >= 1 && x <= inner_width) {
          for (int64_t c = 0; c < channels; ++c) {
            for (int64_t ry = 0; ry < window; ++ry) {
              for (int64_t rx = 0; rx < window; ++rx) {
                expected += double(data[(c * height + y - 1 + ry) * width + x - 1 + rx]) *
                            weight[((f * channels + c) * window + ry) * window + rx];
              }
            }
          }
          expected = std::max(0.0, expected);
        }
        ASSERT_NEAR(padded[(f * (inner_height + 2) + y) * (inner_width + 2) + x], expected, 1e-4)
            << f << ", " << y << ", " << x;
      }
    }
  }
}

// Every expression of `stmt`, for tests that look for a kind of node.
void CollectExpressions(const Stmt& stmt, std::vector<Expr>& found) {
  auto add = [&](const Expr& expr) {
    std::vector<Expr> pending{expr};
    while (!pending.empty()) {
      Expr next = pending.back();
      pending.pop_back();
      for (const Expr& operand : Operands(next)) pending.push_back(operand);
      found.push_back(std::move(next));
    }
  };
  switch (stmt->node_kind()) {
    case NodeKind::kFor:
      add(As<ForNode>(stmt)->extent);
      return CollectExpressions(As<ForNode>(stmt)->body, found);
    case NodeKind::kStore:
      add(As<StoreNode>(stmt)->index);
      return add(As<StoreNode>(stmt)->value);
    case NodeKind::kSequence:
      for (const Stmt& statement : As<SequenceNode>(stmt)->statements)
        CollectExpressions(statement, found);
      return;
    case NodeKind::kIfThenElse: {
      const auto* branch = As<IfThenElseNode>(stmt);
      add(branch->condition);
      CollectExpressions(branch->then_body, found);
      if (branch->else_body) CollectExpressions(branch->else_body, found);
      return;
    }
    case NodeKind::kAllocate:
      return CollectExpressions(As<AllocateNode>(stmt)->body, found);
    case NodeKind::kLetStmt:
      add(As<LetStmtNode>(stmt)->value);
      return CollectExpressions(As<LetStmtNode>(stmt)->body, found);
    default:
      return;
  }
}

// An output padded after a contraction computes the sum only inside the
// padding; the tile loads its operands at every position, so there the
// window would start before the input. Those loads are clamped into the
// buffer (their values are never used).
TEST(KernelSourceTest, ATiledContractionUnderASelectKeepsItsLoadsInsideTheBuffers) {
  const int64_t length = 80, units = 20, window = 9;
  const Buffer x(new BufferNode("x", DType::kFloat32, {Int(length)}));
  const Buffer w(new BufferNode("w", DType::kFloat32, {Int(units), Int(window)}));
  const Var k(new VarNode("k"));
  // out[i, u] = 1 <= i <= length - window + 1 ? sum_k x[i - 1 + k] * w[u, k] : 0
  const TensorExpr padded{
      {Int(length - window + 3), Int(units)}, DType::kFloat32, [&](const std::vector<Expr>& at) {
        const Expr inside = Binary(BinaryOp::kAnd, Binary(BinaryOp::kGreaterEqual, at[0], Int(1)),
                                   Binary(BinaryOp::kLessEqual, at[0], Int(length - window + 1)));
        const Expr sum = Reduce(ReduceOp::kSum, {k}, {Int(window)}, Float(0, DType::kFloat32),
                                Multiply(Load(x, Add(Subtract(at[0], Int(1)), k)),
                                         Load(w, Add(Multiply(at[1], Int(window)), k))));
        return Select(inside, sum, Float(0, DType::kFloat32));
      }};
  const kir::Kernel kernel = BuildGpuKernel("padded", {x, w}, {}, padded);
  const gpu::KernelSource source = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC);
  ASSERT_NE(source.text.find("__local float"), std::string::npos) << "tiled:\n" << source.text;
  std::vector<Expr> expressions;
  CollectExpressions(kernel.body, expressions);
  int x_loads = 0;
  for (const Expr& expr : expressions) {
    const auto* load = As<LoadNode>(expr);
    if (load == nullptr || load->buffer.get() != x.get()) continue;
    ++x_loads;
    const auto* clamp = As<BinaryNode>(load->index);
    EXPECT_TRUE(clamp != nullptr && clamp->op == BinaryOp::kMinimum) << source.text;
  }
  EXPECT_GT(x_loads, 0);
}

TEST(KernelSourceTest, AContractionTilesInSharedMemoryForSymbolicRows) {
  const Var rows(new VarNode("rows"));
  const Buffer x(new BufferNode("x", DType::kFloat32, {rows, Int(100)}));
  const Buffer w(new BufferNode("w", DType::kFloat32, {Int(50), Int(100)}));
  const Var k(new VarNode("k"));
  const TensorExpr dense{
      {rows, Int(50)}, DType::kFloat32, [&](const std::vector<Expr>& index) {
        const Expr at = Add(Multiply(index[0], Int(100)), k);
        return Reduce(ReduceOp::kSum, {k}, {Int(100)}, Float(0, DType::kFloat32),
                      Multiply(Load(x, at), Load(w, Add(Multiply(index[1], Int(100)), k))));
      }};
  const kir::Kernel kernel = BuildGpuKernel("dense", {x, w}, {rows}, dense);
  const gpu::KernelSource opencl = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kOpenClC);
  EXPECT_NE(opencl.text.find("reqd_work_group_size(256, 1, 1)"), std::string::npos) << opencl.text;
  EXPECT_NE(opencl.text.find("__local float"), std::string::npos) << opencl.text;
  // Tiles of 64 rows (symbolic: the largest) by 64 columns (50 rounded up):
  // 130 rows take 3 row tiles, one group each.
  const int64_t row_count = 130;
  EXPECT_EQ(gpu::EvaluateIndexExpr(opencl.thread_count, kernel.dims, {&row_count, 1}), 3 * 256)
      << opencl.text;
  const gpu::KernelSource cuda = gpu::EmitKernelSource(kernel, gpu::SourceDialect::kCudaC);
  EXPECT_NE(cuda.text.find("__shared__ float"), std::string::npos) << cuda.text;
}

TEST(OpenClKernelsTest, InputsOnTwoDevicesAreAUsageError) {
  REQUIRE_OPENCL(device);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, {1, 2}), *device),
      HostTensor<float>(DType::kFloat32, {1, 2})};
  try {
    RunOperator("add", inputs);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(error.message().find("inputs on opencl:0 and cpu:0"), std::string::npos)
        << error.message();
  }
}

TEST(OpenClKernelsTest, ABuildFailureCarriesTheCompilersLog) {
  REQUIRE_OPENCL(device);
  devices::KernelLoader* loader = devices::KernelLoaderOf(*device);
  ASSERT_NE(loader, nullptr);
  try {
    loader->LoadKernel("__kernel void relay_kernel() { undeclared_name = 1; }", "relay_kernel");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDevice);
    EXPECT_NE(error.message().find("clBuildProgram failed"), std::string::npos);
    EXPECT_NE(error.message().find("undeclared_name"), std::string::npos) << error.message();
  }
  EXPECT_EQ(devices::KernelLoaderOf(HostDevice()), nullptr);
}

// A directory of its own for the kernel disk cache, set as $RELAY_CACHE_DIR
// while it lives (devices read it when they are created).
class ScratchKernelCache {
 public:
  ScratchKernelCache() {
    path_ = std::filesystem::temp_directory_path() /
            ("relay-kernel-cache-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
    if (const char* previous = std::getenv("RELAY_CACHE_DIR")) previous_ = previous;
    ::setenv("RELAY_CACHE_DIR", path_.c_str(), 1);
  }
  ~ScratchKernelCache() {
    if (previous_) {
      ::setenv("RELAY_CACHE_DIR", previous_->c_str(), 1);
    } else {
      ::unsetenv("RELAY_CACHE_DIR");
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  // The cache's files ending in `extension`.
  std::vector<std::filesystem::path> Files(const std::string& extension) const {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      if (entry.path().extension() == extension) files.push_back(entry.path());
    }
    return files;
  }

 private:
  std::filesystem::path path_;
  std::optional<std::string> previous_;
};

TEST(OpenClKernelsTest, ProgramBinariesAreCachedOnDiskAndADamagedOneIsRebuilt) {
  REQUIRE_OPENCL(registry_device);
  (void)registry_device;
  ScratchKernelCache cache;
  const std::string source =
      "__kernel void relay_kernel(__global float* out, long offset, long n) {\n"
      "  if ((long)get_global_id(0) >= n) return;\n"
      "  out[get_global_id(0)] = 2.5f * (float)get_global_id(0);\n}\n";
  // Each device created anew: an empty cache in memory, the disk's alone.
  auto run = [&] {
    std::unique_ptr<Device> device = devices::CreateOpenClDevice(0);
    std::shared_ptr<const devices::LoadedKernel> kernel =
        devices::KernelLoaderOf(*device)->LoadKernel(source, "relay_kernel");
    void* buffer = device->Allocate(4 * sizeof(float));
    const devices::BufferArgument argument{buffer, 0};
    const int64_t count = 4;  // threads are launched in groups: the kernel stops past n
    kernel->Launch({&argument, 1}, {&count, 1}, count);
    std::vector<float> values(4);
    device->CopyToHost(buffer, 0, values.data(), sizeof(float) * values.size());
    device->Free(buffer, 4 * sizeof(float));
    return values;
  };
  const std::vector<float> expected{0.0f, 2.5f, 5.0f, 7.5f};
  EXPECT_EQ(run(), expected);
  const std::vector<std::filesystem::path> files = cache.Files(".relay-opencl");
  ASSERT_EQ(files.size(), 1u) << "the program's binary is stored";
  EXPECT_EQ(run(), expected) << "built from the stored binary";
  const std::string damage = "not a program binary";
  std::ofstream(files[0], std::ios::trunc) << damage;
  EXPECT_EQ(run(), expected) << "a damaged entry is rebuilt from source";
  EXPECT_GT(std::filesystem::file_size(files[0]), damage.size()) << "and stored again";
  EXPECT_EQ(run(), expected);
}

// ---- CUDA: NVRTC and the launch path, against the fake driver -------------------------

#if defined(RELAY_HAS_CUDA_DEVICE)

TEST(CudaKernelsTest, NvrtcCompilesKernelsToPtxWithoutAGpu) {
  std::string ptx;
  try {
    ptx = devices::CompileCudaToPtx(
        gpu::EmitKernelSource(VectorAddKernel(), gpu::SourceDialect::kCudaC).text, 8, 0);
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();  // no CUDA toolkit on this machine
  }
  EXPECT_NE(ptx.find(".entry relay_kernel("), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << ptx;
}

TEST(CudaKernelsTest, ACompileErrorCarriesNvrtcsLog) {
  try {
    devices::CompileCudaToPtx("extern \"C\" __global__ void relay_kernel() { nope(); }", 8, 0,
                              "broken.cu");
    FAIL() << "no error";
  } catch (const Error& error) {
    if (error.message().starts_with("no NVRTC")) GTEST_SKIP() << error.what();
    EXPECT_EQ(error.kind(), ErrorKind::kDevice);
    EXPECT_NE(error.message().find("broken.cu: nvrtcCompileProgram failed"), std::string::npos);
    EXPECT_NE(error.message().find("nope"), std::string::npos) << error.message();
  }
}

TEST(CudaKernelsTest, AnOperatorIsLoadedOnceAndLaunchedWithOneThreadPerElement) {
  try {
    devices::NvrtcVersion();
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  fake_cuda_reset(1, size_t{1} << 30, 0);
  std::unique_ptr<Device> device = devices::CreateCudaDevice(
      devices::LoadCudaDriverFromResolver(&fake_cuda_symbol, "fake libcuda"), 0);
  EXPECT_NE(device->description().find("compute capability 8.0"), std::string::npos);
  std::vector<float> values(1000, 1.0f);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, values), *device),
      CopyTensor(*HostTensor<float>(DType::kFloat32, values), *device)};
  const size_t modules_before = fake_cuda_live_modules();
  const size_t launches_before = fake_cuda_launches();
  const size_t stream_operations_before = fake_cuda_stream_operations();
  Ref<Tensor> result = RunOperator("add", inputs);
  EXPECT_EQ(result->device_id().ToString(), "cuda:0");
  RunOperator("add", inputs);
  EXPECT_EQ(fake_cuda_launches(), launches_before + 2);
  // On the device's stream, behind the copies of the inputs.
  EXPECT_EQ(fake_cuda_stream_operations(), stream_operations_before + 2);
  EXPECT_EQ(fake_cuda_live_modules(), modules_before + 1) << "the second call reuses the module";
  unsigned grid = 0, block = 0;
  fake_cuda_last_launch(&grid, &block);
  EXPECT_EQ(block, 256u);
  EXPECT_EQ(grid, 4u);  // 1000 threads in blocks of 256
}

// With ptxas, the fake driver assembles each module for sm_80 as a GPU's
// driver would: a kernel asking for more shared memory than a block may
// have passes NVRTC but not ptxas.
TEST(CudaKernelsTest, PtxThatPtxasRefusesDoesNotLoad) {
  try {
    devices::NvrtcVersion();
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  const char* configured = std::getenv("RELAY_FAKE_CUDA_PTXAS");
  const std::string ptxas = configured != nullptr ? configured : "/usr/local/cuda/bin/ptxas";
  if (access(ptxas.c_str(), X_OK) != 0) GTEST_SKIP() << "no ptxas at " << ptxas;
  setenv("RELAY_FAKE_CUDA_PTXAS", ptxas.c_str(), 1);
  fake_cuda_reset(1, size_t{1} << 30, 0);
  std::unique_ptr<Device> device = devices::CreateCudaDevice(
      devices::LoadCudaDriverFromResolver(&fake_cuda_symbol, "fake libcuda"), 0);
  devices::KernelLoader* loader = devices::KernelLoaderOf(*device);
  ASSERT_NE(loader, nullptr);
  // 400 KB of static shared memory; a block may have 48 KB.
  const std::string source =
      "extern \"C\" __global__ void hoard(float* out) {\n"
      "  __shared__ float big[100000];\n"
      "  big[threadIdx.x] = 1.0f;\n"
      "  __syncthreads();\n"
      "  out[threadIdx.x] = big[99999 - threadIdx.x];\n"
      "}\n";
  try {
    loader->LoadKernel(source, "hoard");
    ADD_FAILURE() << "ptxas accepted 400 KB of shared memory";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDevice);
    EXPECT_NE(std::string(error.what()).find("CUDA_ERROR_INVALID_PTX"), std::string::npos)
        << error.what();
  }
  if (configured == nullptr) unsetenv("RELAY_FAKE_CUDA_PTXAS");
}

TEST(CudaKernelsTest, PtxIsCachedOnDisk) {
  try {
    devices::NvrtcVersion();
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  ScratchKernelCache cache;
  fake_cuda_reset(1, size_t{1} << 30, 0);
  std::unique_ptr<Device> device = devices::CreateCudaDevice(
      devices::LoadCudaDriverFromResolver(&fake_cuda_symbol, "fake libcuda"), 0);
  const std::vector<Ref<Tensor>> inputs{
      CopyTensor(*HostTensor<float>(DType::kFloat32, {1, 2, 3}), *device)};
  RunOperator("negative", inputs);
  const std::vector<std::filesystem::path> files = cache.Files(".relay-ptx");
  ASSERT_EQ(files.size(), 1u);
  std::ifstream file(files[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find(".entry relay_kernel("), std::string::npos) << "the entry holds PTX";
}

#endif

}  // namespace
}  // namespace relay::kernels
