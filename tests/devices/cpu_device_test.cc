#include "devices/cpu/cpu_device.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "relay/devices.h"
#include "relay/error.h"
#include "tests/devices/device_test_support.h"

namespace relay::devices {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool ContainsIgnoringCase(std::string text, std::string word) {
  for (char& character : text) character = static_cast<char>(std::tolower(character));
  for (char& character : word) character = static_cast<char>(std::tolower(character));
  return text.find(word) != std::string::npos;
}

TEST(CpuDeviceTest, IdentifiesItself) {
  CpuDevice device;
  EXPECT_EQ(device.id(), (DeviceId{DeviceKind::kCPU, 0}));
  EXPECT_EQ(device.description(), "cpu:0 (host memory, 64-byte aligned, pooled)");
  EXPECT_TRUE(device.host_accessible());
}

TEST(CpuDeviceTest, AllocationsAre64ByteAlignedAndWritable) {
  CpuDevice device;
  std::vector<size_t> sizes = {0, 1, 7, 63, 64, 65, 100, 255, 256, 257, 1000, 4095, 4096, 4097};
  for (size_t bytes = 1; bytes <= 8 * kMiB; bytes = bytes * 3 + 1) sizes.push_back(bytes);
  for (int round = 0; round < 2; ++round) {  // The second round is served from the cache.
    std::vector<void*> handles;
    for (size_t bytes : sizes) {
      void* handle = device.Allocate(bytes);
      ASSERT_NE(handle, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(handle) % kAllocationAlignment, 0u) << bytes;
      if (bytes > 0) {
        std::memset(handle, 0xab, bytes);
        EXPECT_EQ(static_cast<uint8_t*>(handle)[bytes - 1], 0xab);
      }
      handles.push_back(handle);
    }
    for (size_t i = 0; i < sizes.size(); ++i) device.Free(handles[i], sizes[i]);
  }
  EXPECT_EQ(device.memory_statistics().reuses, device.memory_statistics().allocations / 2);
}

TEST(CpuDeviceTest, CopiesHonourOffsets) {
  CpuDevice device;
  const std::vector<uint8_t> pattern = Pattern(100, 3);
  void* first = device.Allocate(256);
  void* second = device.Allocate(256);

  device.CopyFromHost(pattern.data(), first, 16, pattern.size());
  EXPECT_EQ(std::memcmp(static_cast<uint8_t*>(first) + 16, pattern.data(), pattern.size()), 0);

  std::vector<uint8_t> read_back(pattern.size());
  device.CopyToHost(first, 16, read_back.data(), read_back.size());
  EXPECT_EQ(read_back, pattern);

  device.CopyWithinDevice(first, 16, second, 40, pattern.size());
  std::vector<uint8_t> copied(pattern.size());
  device.CopyToHost(second, 40, copied.data(), copied.size());
  EXPECT_EQ(copied, pattern);

  // Part of the pattern read from an offset into the middle.
  std::vector<uint8_t> middle(10);
  device.CopyToHost(second, 40 + 50, middle.data(), middle.size());
  EXPECT_EQ(middle, std::vector<uint8_t>(pattern.begin() + 50, pattern.begin() + 60));

  device.Synchronize();
  device.Free(first, 256);
  device.Free(second, 256);
}

TEST(CpuDeviceTest, CopyWithinOneBlockMayOverlap) {
  CpuDevice device;
  const std::vector<uint8_t> pattern = Pattern(200, 3);
  void* block = device.Allocate(pattern.size());
  device.CopyFromHost(pattern.data(), block, 0, pattern.size());
  device.CopyWithinDevice(block, 10, block, 30, 100);  // Forward, overlapping.

  std::vector<uint8_t> expected = pattern;
  for (size_t i = 0; i < 100; ++i) expected[30 + i] = pattern[10 + i];
  std::vector<uint8_t> actual(pattern.size());
  device.CopyToHost(block, 0, actual.data(), actual.size());
  EXPECT_EQ(actual, expected);
  device.Free(block, pattern.size());
}

TEST(CpuDeviceTest, ZeroByteCopiesAcceptNullPointers) {
  CpuDevice device;
  device.CopyFromHost(nullptr, nullptr, 0, 0);
  device.CopyToHost(nullptr, 0, nullptr, 0);
  device.CopyWithinDevice(nullptr, 0, nullptr, 0, 0);
}

TEST(CpuDeviceTest, PoolsFreedMemoryAndReleasesItOnRequest) {
  CpuDevice device;
  void* block = device.Allocate(1000);
  device.Free(block, 1000);
  EXPECT_EQ(device.Allocate(1000), block);
  device.Free(block, 1000);
  MemoryStatistics statistics = device.memory_statistics();
  EXPECT_EQ(statistics.reuses, 1u);
  EXPECT_EQ(statistics.bytes_cached, 1024u);
  device.ReleaseCachedMemory();
  statistics = device.memory_statistics();
  EXPECT_EQ(statistics.bytes_cached, 0u);
  EXPECT_EQ(statistics.blocks_released, 1u);
}

TEST(CpuDeviceTest, MemoryLimitIsEnforcedWithADeviceError) {
  CpuDevice device;
  device.SetMemoryLimit(kMiB);
  EXPECT_EQ(device.memory_statistics().bytes_limit, kMiB);
  const std::string message = DeviceErrorMessage([&] { device.Allocate(2 * kMiB); });
  EXPECT_EQ(message,
            "out of memory on cpu:0: cannot allocate 2.0 MiB (in use 0 B, cached 0 B, limit "
            "1.0 MiB)");
  EXPECT_EQ(device.memory_statistics().failed_allocations, 1u);
  device.SetMemoryLimit(0);
  void* block = device.Allocate(2 * kMiB);
  device.Free(block, 2 * kMiB);
}

TEST(CpuDeviceTest, SystemRefusalIsADeviceError) {
  CpuDevice device;
  // 4 EiB is past any machine's address space, so mimalloc returns null.
  const std::string message = DeviceErrorMessage([&] { device.Allocate(size_t{1} << 62); });
  EXPECT_EQ(message,
            "out of memory on cpu:0: cannot allocate 4.0 EiB: cpu:0 has no free memory (in use 0 "
            "B, cached 0 B, no limit)");
  EXPECT_EQ(device.memory_statistics().failed_allocations, 1u);
}

TEST(CpuDeviceTest, PoolOptionsAreHonouredButTheNameIsAlwaysCpu0) {
  MemoryPoolOptions options;
  options.device_name = "something else";
  options.bytes_limit = 4096;
  CpuDevice device(options);
  const std::string message = DeviceErrorMessage([&] { device.Allocate(8192); });
  EXPECT_EQ(message.rfind("out of memory on cpu:0: cannot allocate 8.0 KiB", 0), 0u) << message;
}

TEST(DeviceRegistryTest, HostDeviceIsCpu0) {
  Device& host = HostDevice();
  EXPECT_EQ(&host, &GetDevice(DeviceId{DeviceKind::kCPU, 0}));
  EXPECT_EQ(&host, &HostDevice());
  EXPECT_EQ(host.id(), (DeviceId{DeviceKind::kCPU, 0}));
  void* block = host.Allocate(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kAllocationAlignment, 0u);
  host.Free(block, 100);
}

TEST(DeviceRegistryTest, OtherCpuIndicesAreDeviceErrors) {
  EXPECT_EQ(DeviceErrorMessage([] {
              GetDevice(DeviceId{DeviceKind::kCPU, 1});
            }),
            "no device cpu:1: the host is cpu:0");
}

// A backend compiled in either opens the device (when this machine has it)
// or says why not, naming the kind; one left out of the build says so.
void ExpectBackendAnswers(DeviceId id, bool built, const std::string& backend_name) {
  SCOPED_TRACE(id.ToString());
  if (!built) {
    EXPECT_EQ(DeviceErrorMessage([&] { GetDevice(id); }),
              "device " + id.ToString() + " is not available: the " + backend_name +
                  " backend is not part of this build yet");
    return;
  }
  try {
    Device& device = GetDevice(id);
    EXPECT_EQ(device.id(), id);
    EXPECT_EQ(&GetDevice(id), &device) << "a second lookup must find the same device";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDevice);
    EXPECT_TRUE(ContainsIgnoringCase(error.message(), backend_name)) << error.message();
  }
}

TEST(DeviceRegistryTest, GpuBackendsOpenTheirDeviceOrSayWhyNot) {
#if defined(RELAY_HAS_CUDA_DEVICE)
  constexpr bool kCudaBuilt = true;
#else
  constexpr bool kCudaBuilt = false;
#endif
#if defined(RELAY_HAS_OPENCL_DEVICE)
  constexpr bool kOpenClBuilt = true;
#else
  constexpr bool kOpenClBuilt = false;
#endif
#if defined(RELAY_HAS_XRT_DEVICE)
  constexpr bool kXrtBuilt = true;
#else
  constexpr bool kXrtBuilt = false;
#endif
  ExpectBackendAnswers(DeviceId{DeviceKind::kCUDA, 0}, kCudaBuilt, "CUDA");
  ExpectBackendAnswers(DeviceId{DeviceKind::kOpenCL, 0}, kOpenClBuilt, "OpenCL");
  ExpectBackendAnswers(DeviceId{DeviceKind::kXRT, 0}, kXrtBuilt, "XRT");
}

TEST(DeviceRegistryTest, DeviceIndexPastThoseBuiltOrPresentIsADeviceError) {
  // No machine has 1000 of any device, so every kind refuses this index.
  for (DeviceKind kind : {DeviceKind::kCUDA, DeviceKind::kOpenCL, DeviceKind::kXRT}) {
    const DeviceId id{kind, 1000};
    const std::string message = DeviceErrorMessage([&] { GetDevice(id); });
    EXPECT_TRUE(ContainsIgnoringCase(message, std::string(DeviceKindName(kind)))) << message;
  }
}

TEST(DeviceRegistryTest, UnknownDeviceKindIsADeviceError) {
  const std::string message = DeviceErrorMessage([] {
    GetDevice(DeviceId{static_cast<DeviceKind>(99), 0});
  });
  EXPECT_NE(message.find("no device of kind 99"), std::string::npos) << message;
}

}  // namespace
}  // namespace relay::devices
