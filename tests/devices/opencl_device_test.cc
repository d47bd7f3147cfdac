#include "devices/opencl/opencl_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "devices/kernel_loader.h"
#include "relay/error.h"
#include "tests/devices/device_test_support.h"

// These tests run against the machine's OpenCL platforms: with Debian's
// pocl-opencl-icd (installed by tools/install-deps.sh) opencl:0 is pocl's CPU
// device. Without any platform they skip, so a machine without OpenCL passes.

namespace relay::devices {
namespace {

// The number of OpenCL devices, or 0 when there is no loader at all.
int32_t AvailableDeviceCount() {
  try {
    return OpenClDeviceCount();
  } catch (const Error&) {
    return 0;
  }
}

class OpenClDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (AvailableDeviceCount() == 0) GTEST_SKIP() << "no OpenCL device on this machine";
    device_ = CreateOpenClDevice(0);
  }

  std::unique_ptr<Device> device_;
};

// Guards against the tests above skipping on a machine that should run them:
// pocl's ICD registration means the loader must find at least its device.
TEST(OpenClInventoryTest, InstalledPoclProvidesADevice) {
  if (!std::filesystem::exists("/etc/OpenCL/vendors/pocl.icd")) {
    GTEST_SKIP() << "pocl-opencl-icd is not installed";
  }
  // The loader reads its platform list from here instead when it is set.
  if (std::getenv("OCL_ICD_VENDORS") != nullptr) GTEST_SKIP() << "OCL_ICD_VENDORS is set";
  EXPECT_GE(OpenClDeviceCount(), 1);
}

TEST(OpenClInventoryTest, IndexPastTheDevicesIsReported) {
  const int32_t count = AvailableDeviceCount();
  if (count == 0) GTEST_SKIP() << "no OpenCL device on this machine";
  const Error error = ErrorFrom([&] { CreateOpenClDevice(count + 2); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "no device opencl:" + std::to_string(count + 2) + ": " + std::to_string(count) +
                (count == 1 ? " OpenCL device present" : " OpenCL devices present"));
}

TEST_F(OpenClDeviceTest, IdentityAndDescription) {
  EXPECT_EQ(device_->id(), (DeviceId{DeviceKind::kOpenCL, 0}));
  const std::string description = device_->description();
  EXPECT_TRUE(StartsWith(description, "opencl:0 (")) << description;
  EXPECT_NE(description.find(" on "), std::string::npos) << description;
  EXPECT_EQ(description.substr(description.size() - 9), ", pooled)") << description;
}

TEST_F(OpenClDeviceTest, CopiesRoundTripThroughTheDeviceWithOffsets) {
  const std::vector<uint8_t> input = Pattern(3000, 5);
  void* first = device_->Allocate(4096);
  void* second = device_->Allocate(5000);
  device_->CopyFromHost(input.data(), first, 1000, input.size());
  device_->CopyWithinDevice(first, 1000, second, 1999, input.size());
  std::vector<uint8_t> output(input.size());
  device_->CopyToHost(second, 1999, output.data(), output.size());
  EXPECT_EQ(output, input);
  // A partial read from the middle sees the matching slice.
  std::vector<uint8_t> slice(10);
  device_->CopyToHost(first, 1000 + 255, slice.data(), slice.size());
  EXPECT_EQ(slice, std::vector<uint8_t>(input.begin() + 255, input.begin() + 265));
  device_->Synchronize();
  device_->Free(first, 4096);
  device_->Free(second, 5000);
}

// A copy from the host returns once queued, behind a kernel still running;
// the caller's memory is free for reuse at once, and the bytes arrive as
// they were when it was called.
TEST_F(OpenClDeviceTest, CopiesFromTheHostQueueBehindKernelsAndKeepTheirBytes) {
  KernelLoader* loader = KernelLoaderOf(*device_);
  ASSERT_NE(loader, nullptr);
  // Long enough to still be running when the copies are queued.
  const std::shared_ptr<const LoadedKernel> busy = loader->LoadKernel(
      "__kernel void spin(__global float* base, long offset, long rounds) {\n"
      "  __global float* out = (__global float*)((__global char*)base + offset);\n"
      "  float value = 0.0f;\n"
      "  for (long i = 0; i < rounds; ++i) value = value * 0.5f + 1.0f;\n"
      "  out[get_global_id(0)] = value;\n"
      "}\n",
      "spin");
  void* scratch = device_->Allocate(256 * sizeof(float));
  const int64_t rounds = 2000000;
  const BufferArgument scratch_argument{scratch, 0};
  busy->Launch({&scratch_argument, 1}, {&rounds, 1}, 256);
  std::vector<void*> blocks;
  std::vector<std::vector<uint8_t>> expected;
  std::vector<uint8_t> source(512);
  for (uint8_t round = 0; round < 6; ++round) {
    expected.push_back(Pattern(source.size(), round));
    source = expected.back();
    blocks.push_back(device_->Allocate(source.size()));
    device_->CopyFromHost(source.data(), blocks.back(), 0, source.size());
    std::fill(source.begin(), source.end(), uint8_t{0xEE});  // reused at once
  }
  for (size_t index = 0; index < blocks.size(); ++index) {
    std::vector<uint8_t> output(source.size());
    device_->CopyToHost(blocks[index], 0, output.data(), output.size());
    EXPECT_EQ(output, expected[index]) << index;
    device_->Free(blocks[index], source.size());
  }
  device_->Free(scratch, 256 * sizeof(float));
}

TEST_F(OpenClDeviceTest, OverlappingCopyWithinOneBufferMovesLikeMemmove) {
  const std::vector<uint8_t> input = Pattern(1024, 11);
  void* buffer = device_->Allocate(input.size());
  device_->CopyFromHost(input.data(), buffer, 0, input.size());
  device_->CopyWithinDevice(buffer, 10, buffer, 0, 900);   // towards the start
  device_->CopyWithinDevice(buffer, 0, buffer, 100, 800);  // towards the end
  std::vector<uint8_t> expected = input;
  std::memmove(expected.data(), expected.data() + 10, 900);
  std::memmove(expected.data() + 100, expected.data(), 800);
  std::vector<uint8_t> output(input.size());
  device_->CopyToHost(buffer, 0, output.data(), output.size());
  EXPECT_EQ(output, expected);
  device_->Free(buffer, input.size());
  // The staging buffers went back to the pool.
  EXPECT_EQ(device_->memory_statistics().bytes_in_use, 0u);
}

TEST_F(OpenClDeviceTest, ZeroByteCopiesAndAllocationsAreAccepted) {
  void* empty = device_->Allocate(0);
  void* other = device_->Allocate(0);
  EXPECT_NE(empty, nullptr);
  EXPECT_NE(empty, other);
  device_->CopyFromHost(nullptr, empty, 0, 0);
  device_->CopyToHost(empty, 0, nullptr, 0);
  device_->CopyWithinDevice(empty, 0, other, 0, 0);
  device_->Free(empty, 0);
  device_->Free(other, 0);
}

TEST_F(OpenClDeviceTest, FreedBuffersAreReusedAndStatisticsCountThem) {
  void* first = device_->Allocate(1000);
  device_->Free(first, 1000);
  void* second = device_->Allocate(1000);
  EXPECT_EQ(second, first);
  MemoryStatistics statistics = device_->memory_statistics();
  EXPECT_EQ(statistics.allocations, 2u);
  EXPECT_EQ(statistics.reuses, 1u);
  EXPECT_EQ(statistics.frees, 1u);
  EXPECT_EQ(statistics.bytes_in_use, 1024u);  // the 1000-byte request's class
  EXPECT_EQ(statistics.peak_bytes_in_use, 1024u);
  device_->Free(second, 1000);
  EXPECT_EQ(device_->memory_statistics().bytes_cached, 1024u);
  device_->ReleaseCachedMemory();
  statistics = device_->memory_statistics();
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.blocks_released, 1u);
}

TEST_F(OpenClDeviceTest, MemoryLimitRefusesWithAnOutOfMemoryError) {
  device_->SetMemoryLimit(1 << 20);
  void* block = device_->Allocate(512 << 10);
  const Error error = ErrorFrom([&] { device_->Allocate(2 << 20); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_TRUE(StartsWith(error.message(), "out of memory on opencl:0: cannot allocate 2.0 MiB"))
      << error.message();
  MemoryStatistics statistics = device_->memory_statistics();
  EXPECT_EQ(statistics.failed_allocations, 1u);
  EXPECT_EQ(statistics.bytes_limit, size_t{1} << 20);
  device_->Free(block, 512 << 10);
  // Without the cap the same request succeeds.
  device_->SetMemoryLimit(0);
  void* large = device_->Allocate(2 << 20);
  device_->Free(large, 2 << 20);
}

TEST_F(OpenClDeviceTest, RequestBeyondTheLargestBufferIsRefusedClearly) {
  const Error error = ErrorFrom([&] { device_->Allocate(size_t{1} << 56); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_TRUE(StartsWith(error.message(),
                         "opencl:0: cannot allocate a block of 64.0 PiB: the "
                         "largest buffer opencl:0 allows is "))
      << error.message();
  EXPECT_EQ(device_->memory_statistics().bytes_in_use, 0u);
}

TEST_F(OpenClDeviceTest, DriverErrorsNameTheDeviceTheOperationAndTheCode) {
  void* buffer = device_->Allocate(64);
  std::vector<uint8_t> output(100);
  // Reading past the end of the 64-byte buffer: the driver refuses.
  const Error error = ErrorFrom([&] { device_->CopyToHost(buffer, 32, output.data(), 100); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(), "opencl:0: clEnqueueReadBuffer failed: CL_INVALID_VALUE (-30)");
  device_->Free(buffer, 64);
}

TEST_F(OpenClDeviceTest, ManyThreadsShareTheDevice) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> workers;
  for (int thread = 0; thread < kThreads; ++thread) {
    workers.emplace_back([&, thread] {
      for (int round = 0; round < kRounds; ++round) {
        const size_t bytes = 100 + static_cast<size_t>(thread * 1000 + round * 37);
        const std::vector<uint8_t> input = Pattern(bytes, static_cast<uint8_t>(thread + round));
        void* source = device_->Allocate(bytes);
        void* destination = device_->Allocate(bytes + 8);
        device_->CopyFromHost(input.data(), source, 0, bytes);
        device_->CopyWithinDevice(source, 0, destination, 8, bytes);
        std::vector<uint8_t> output(bytes);
        device_->CopyToHost(destination, 8, output.data(), bytes);
        if (output != input) ++mismatches[static_cast<size_t>(thread)];
        device_->Free(source, bytes);
        device_->Free(destination, bytes + 8);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
  EXPECT_EQ(device_->memory_statistics().bytes_in_use, 0u);
}

}  // namespace
}  // namespace relay::devices
