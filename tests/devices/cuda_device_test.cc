#include "devices/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "relay/error.h"
#include "tests/devices/device_test_support.h"
#include "tests/devices/fake_cuda_driver.h"

namespace relay::devices {
namespace {

constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNoDevice = 100;
constexpr int kCudaErrorIllegalAddress = 700;
constexpr int kCudaErrorUnknown = 999;

bool HostHasCudaDriver() {
  return HostCanLoadAnyOf({"libcuda.so.1", "libcuda.so"});
}

// ---- the machine's own driver --------------------------------------------

TEST(CudaDeviceTest, MissingDriverIsReportedAsNoCudaDriver) {
  if (HostHasCudaDriver()) GTEST_SKIP() << "this machine has a CUDA driver";
  const Error error = ErrorFrom([] { CreateCudaDevice(0); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_TRUE(StartsWith(error.message(),
                         "no CUDA driver: libcuda.so.1 could not be loaded (libcuda.so.1: "))
      << error.message();
  // The failure is remembered and reported the same way every time.
  EXPECT_EQ(ErrorFrom([] { CudaDeviceCount(); }).message(), error.message());
}

TEST(CudaDeviceTest, RealDeviceRoundTripsBytesWithOffsets) {
  if (!HostHasCudaDriver()) GTEST_SKIP() << "no CUDA driver on this machine";
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "the CUDA driver reports no device";
  std::unique_ptr<Device> device = CreateCudaDevice(0);
  EXPECT_EQ(device->id(), (DeviceId{DeviceKind::kCUDA, 0}));
  const std::vector<uint8_t> input = Pattern(4096, 3);
  void* first = device->Allocate(8192);
  void* second = device->Allocate(8192);
  device->CopyFromHost(input.data(), first, 100, input.size());
  device->CopyWithinDevice(first, 100, second, 4000, input.size());
  device->Synchronize();
  std::vector<uint8_t> output(input.size());
  device->CopyToHost(second, 4000, output.data(), output.size());
  EXPECT_EQ(output, input);
  device->Free(first, 8192);
  device->Free(second, 8192);
  EXPECT_EQ(device->memory_statistics().bytes_in_use, 0u);
}

TEST(CudaDeviceTest, RealDriverReportsAnIndexPastTheDevices) {
  if (!HostHasCudaDriver()) GTEST_SKIP() << "no CUDA driver on this machine";
  const int32_t count = CudaDeviceCount();
  if (count == 0) GTEST_SKIP() << "the CUDA driver reports no device";
  const Error error = ErrorFrom([&] { CreateCudaDevice(count); });
  EXPECT_EQ(error.message(), "no device cuda:" + std::to_string(count) + ": " +
                                 std::to_string(count) +
                                 (count == 1 ? " CUDA device present" : " CUDA devices present"));
}

// ---- a stand-in driver ---------------------------------------------------
//
// fake_cuda_driver.c keeps device memory on the host and checks what the
// real driver checks (cuInit first, a current context, addresses inside live
// allocations), so these tests pin the device's logic without a GPU.

class FakeCudaDriverTest : public ::testing::Test {
 protected:
  static constexpr size_t kDeviceMemory = size_t{1} << 20;

  void SetUp() override { fake_cuda_reset(1, kDeviceMemory, kCudaSuccess); }

  std::shared_ptr<const CudaDriver> Driver() {
    return LoadCudaDriverFromResolver(&fake_cuda_symbol, "fake libcuda");
  }
};

TEST_F(FakeCudaDriverTest, CopiesRoundTripWithOffsets) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  const std::vector<uint8_t> input = Pattern(1000, 7);
  void* first = device->Allocate(2048);
  void* second = device->Allocate(3000);
  device->CopyFromHost(input.data(), first, 48, input.size());
  device->CopyWithinDevice(first, 48, second, 1999, input.size());
  device->Synchronize();
  std::vector<uint8_t> output(input.size());
  device->CopyToHost(second, 1999, output.data(), output.size());
  EXPECT_EQ(output, input);
  // Every call restored the thread's context stack.
  EXPECT_EQ(fake_cuda_context_stack_depth(), 0);
  device->Free(first, 2048);
  device->Free(second, 3000);
}

TEST_F(FakeCudaDriverTest, OverlappingCopyWithinOneBlockMovesLikeMemmove) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  const std::vector<uint8_t> input = Pattern(512, 1);
  void* block = device->Allocate(input.size());
  device->CopyFromHost(input.data(), block, 0, input.size());
  // Bytes [0, 400) move to [100, 500): the ranges share [100, 400).
  device->CopyWithinDevice(block, 0, block, 100, 400);
  std::vector<uint8_t> expected = input;
  std::memmove(expected.data() + 100, expected.data(), 400);
  std::vector<uint8_t> output(input.size());
  device->CopyToHost(block, 0, output.data(), output.size());
  EXPECT_EQ(output, expected);
  device->Free(block, input.size());
  EXPECT_EQ(fake_cuda_context_stack_depth(), 0);
}

TEST_F(FakeCudaDriverTest, OtherThreadsGetTheContextToo) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  const std::vector<uint8_t> input = Pattern(256, 9);
  std::vector<uint8_t> output(input.size());
  int worker_depth = -1;
  std::thread worker([&] {
    void* block = device->Allocate(input.size());
    device->CopyFromHost(input.data(), block, 0, input.size());
    device->CopyToHost(block, 0, output.data(), output.size());
    device->Free(block, input.size());
    worker_depth = fake_cuda_context_stack_depth();
  });
  worker.join();
  EXPECT_EQ(output, input);
  EXPECT_EQ(worker_depth, 0);
}

TEST_F(FakeCudaDriverTest, PoolReusesFreedBlocksAndReleasesThemOnDestruction) {
  {
    std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
    EXPECT_EQ(fake_cuda_primary_context_references(0), 1);
    void* block = device->Allocate(1000);
    device->Free(block, 1000);
    EXPECT_EQ(device->Allocate(1000), block);
    const MemoryStatistics statistics = device->memory_statistics();
    EXPECT_EQ(statistics.allocations, 2u);
    EXPECT_EQ(statistics.reuses, 1u);
    device->Free(block, 1000);
    EXPECT_EQ(fake_cuda_live_allocations(), 1u);
  }
  EXPECT_EQ(fake_cuda_live_allocations(), 0u);
  EXPECT_EQ(fake_cuda_primary_context_references(0), 0);
}

TEST_F(FakeCudaDriverTest, ExhaustedMemoryReleasesTheCacheThenReportsOutOfMemory) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  // 600 KiB cached plus 700 KiB new exceed the 1 MiB device: the driver
  // refuses, the pool releases its cache and the retry succeeds.
  void* cached = device->Allocate(600 << 10);
  device->Free(cached, 600 << 10);
  void* large = device->Allocate(700 << 10);
  EXPECT_EQ(fake_cuda_refused_allocations(), 1u);
  EXPECT_EQ(device->memory_statistics().retries_after_release, 1u);
  const Error error = ErrorFrom([&] { device->Allocate(700 << 10); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_TRUE(StartsWith(error.message(), "out of memory on cuda:0: cannot allocate 700.0 KiB"))
      << error.message();
  device->Free(large, 700 << 10);
}

TEST_F(FakeCudaDriverTest, MemoryLimitIsEnforcedByThePool) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  device->SetMemoryLimit(64 << 10);
  const Error error = ErrorFrom([&] { device->Allocate(100 << 10); });
  EXPECT_TRUE(StartsWith(error.message(), "out of memory on cuda:0")) << error.message();
  EXPECT_EQ(fake_cuda_refused_allocations(), 0u);
}

TEST_F(FakeCudaDriverTest, DriverErrorsNameTheDeviceAndTheOperation) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  void* block = device->Allocate(64);
  const uint8_t value = 1;
  fake_cuda_fail_next_call("cuMemcpyHtoDAsync_v2", kCudaErrorIllegalAddress);
  Error error = ErrorFrom([&] { device->CopyFromHost(&value, block, 0, 1); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "cuda:0: cuMemcpyHtoDAsync failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
            "access was encountered)");
  // A code the driver cannot name, yet one a CUresult can hold: cuda.h's
  // codes run up to 999, so its enumeration holds 0 to 1023 and no more.
  fake_cuda_fail_next_call("cuStreamSynchronize", 1000);
  error = ErrorFrom([&] { device->Synchronize(); });
  EXPECT_EQ(error.message(),
            "cuda:0: cuStreamSynchronize failed: CUresult 1000 (unknown to the driver)");
  fake_cuda_fail_next_call("cuMemAlloc_v2", kCudaErrorUnknown);
  error = ErrorFrom([&] { device->Allocate(4096); });
  EXPECT_EQ(error.message(), "cuda:0: cuMemAlloc failed: CUDA_ERROR_UNKNOWN (unknown error)");
  // The failed allocation was not counted as in use.
  EXPECT_EQ(device->memory_statistics().bytes_in_use, 64u);
  EXPECT_EQ(fake_cuda_context_stack_depth(), 0);
  device->Free(block, 64);
}

// Copies `bytes` of a pattern into a new block of `device`, overwrites the
// source as soon as the copy returns (the caller may reuse its memory), and
// checks that reading the block back gives the pattern.
void ExpectCopiesKeepTheirBytes(Device& device, size_t bytes) {
  std::vector<uint8_t> input = Pattern(bytes, 5);
  const std::vector<uint8_t> expected = input;
  void* block = device.Allocate(bytes);
  device.CopyFromHost(input.data(), block, 0, bytes);
  std::fill(input.begin(), input.end(), uint8_t{0});
  std::vector<uint8_t> output(bytes);
  device.CopyToHost(block, 0, output.data(), bytes);
  EXPECT_TRUE(output == expected);
  device.Free(block, bytes);
}

// The fake runs queued copies only when the host waits, so a staging buffer
// refilled before its transfer ran, or a read that did not wait, would show
// here as wrong bytes.
TEST_F(FakeCudaDriverTest, CopiesPassThroughPinnedStagingOnTheDevicesOwnStream) {
  fake_cuda_reset(1, size_t{64} << 20, kCudaSuccess);
  const size_t copies_before = fake_cuda_pinned_copies();
  {
    std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
    EXPECT_EQ(fake_cuda_live_streams(), 1u);
    // 10 MiB: three chunks through two staging buffers each way.
    ExpectCopiesKeepTheirBytes(*device, size_t{10} << 20);
    EXPECT_EQ(fake_cuda_pinned_copies(), copies_before + 6);
    EXPECT_EQ(fake_cuda_live_pinned_blocks(), 2u);
    EXPECT_EQ(fake_cuda_live_events(), 2u);
    // Many small copies in a row reuse the two buffers, each once its
    // transfer has run.
    std::vector<void*> blocks;
    for (uint8_t index = 0; index < 9; ++index) {
      blocks.push_back(device->Allocate(64));
      const std::vector<uint8_t> small(64, index);
      device->CopyFromHost(small.data(), blocks.back(), 0, small.size());
    }
    for (uint8_t index = 0; index < 9; ++index) {
      std::vector<uint8_t> small(64);
      device->CopyToHost(blocks[index], 0, small.data(), small.size());
      EXPECT_EQ(small, std::vector<uint8_t>(64, index)) << int(index);
      device->Free(blocks[index], 64);
    }
  }
  // The device returned its stream, events and page-locked buffers.
  EXPECT_EQ(fake_cuda_live_streams(), 0u);
  EXPECT_EQ(fake_cuda_live_events(), 0u);
  EXPECT_EQ(fake_cuda_live_pinned_blocks(), 0u);
  EXPECT_EQ(fake_cuda_live_allocations(), 0u);
}

TEST_F(FakeCudaDriverTest, CopiesStillWorkWhereHostMemoryCannotBeLocked) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  constexpr int kCudaErrorOutOfMemory = 2;
  fake_cuda_fail_next_call("cuMemHostAlloc", kCudaErrorOutOfMemory);
  const size_t copies_before = fake_cuda_pinned_copies();
  ExpectCopiesKeepTheirBytes(*device, 5000);
  EXPECT_EQ(fake_cuda_pinned_copies(), copies_before) << "straight from the caller's memory";
  EXPECT_EQ(fake_cuda_live_pinned_blocks(), 0u);
}

TEST_F(FakeCudaDriverTest, DescriptionNamesTheModelMemoryAndDriver) {
  std::unique_ptr<Device> device = CreateCudaDevice(Driver(), 0);
  EXPECT_EQ(
      device->description(),
      "cuda:0 (Fake CUDA Device, compute capability 8.0, 108 multiprocessors, 1.0 MiB, CUDA driver "
      "12.4, pooled)");
}

TEST_F(FakeCudaDriverTest, IndexPastTheDevicesIsReported) {
  EXPECT_EQ(ErrorFrom([&] { CreateCudaDevice(Driver(), 3); }).message(),
            "no device cuda:3: 1 CUDA device present");
  fake_cuda_reset(2, kDeviceMemory, kCudaSuccess);
  EXPECT_EQ(ErrorFrom([&] { CreateCudaDevice(Driver(), 2); }).message(),
            "no device cuda:2: 2 CUDA devices present");
  EXPECT_EQ(ErrorFrom([&] { CreateCudaDevice(Driver(), -1); }).message(),
            "no device cuda:-1: 2 CUDA devices present");
}

TEST_F(FakeCudaDriverTest, DriverWithoutDevicesIsReported) {
  fake_cuda_reset(0, kDeviceMemory, kCudaErrorNoDevice);
  EXPECT_EQ(CudaDeviceCount(*Driver()), 0);
  const Error error = ErrorFrom([&] { CreateCudaDevice(Driver(), 0); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "no device cuda:0: the CUDA driver (fake libcuda) reports no CUDA device");
}

TEST_F(FakeCudaDriverTest, FailedInitialisationIsReported) {
  fake_cuda_reset(1, kDeviceMemory, kCudaErrorUnknown);
  EXPECT_EQ(ErrorFrom([&] { CreateCudaDevice(Driver(), 0); }).message(),
            "CUDA driver: cuInit failed: CUDA_ERROR_UNKNOWN (unknown error)");
}

TEST_F(FakeCudaDriverTest, ToolkitStubLibraryIsNotTakenForADriver) {
  constexpr int kCudaErrorStubLibrary = 34;
  fake_cuda_reset(1, kDeviceMemory, kCudaErrorStubLibrary);
  const Error error = ErrorFrom([&] { CreateCudaDevice(Driver(), 0); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "no CUDA driver: fake libcuda is the CUDA toolkit's stub library, not a driver "
            "(cuInit: CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver or take the stubs "
            "directory off the library path");
}

TEST_F(FakeCudaDriverTest, DriverLackingEntryPointsIsRefused) {
  auto resolver = [](const char* name) -> void* {
    const std::string symbol = name;
    if (symbol == "cuMemFree_v2" || symbol == "cuDevicePrimaryCtxRelease_v2") return nullptr;
    return fake_cuda_symbol(name);
  };
  const Error error = ErrorFrom([&] { LoadCudaDriverFromResolver(resolver, "old libcuda"); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "unusable CUDA driver: old libcuda lacks cuDevicePrimaryCtxRelease_v2, cuMemFree_v2 "
            "(relay-vm needs a driver for CUDA 11 or newer)");
}

}  // namespace
}  // namespace relay::devices
