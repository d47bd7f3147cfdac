#include "devices/xrt/xrt_device.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "relay/error.h"
#include "tests/devices/device_test_support.h"
#include "tests/devices/fake_xrt_driver.h"

namespace relay::devices {
namespace {

// Whether XRT's hardware layer is installed.
bool HostHasXrt() {
  return HostCanLoadAnyOf({"libxrt_core.so.2", "libxrt_core.so"});
}

// ---- the machine's own XRT -----------------------------------------------

TEST(XrtDeviceTest, MachineWithoutACardReportsNoXrtDevice) {
  if (!HostHasXrt()) {
    const Error error = ErrorFrom([] { CreateXrtDevice(0); });
    EXPECT_EQ(error.kind(), ErrorKind::kDevice);
    EXPECT_TRUE(
        StartsWith(error.message(), "no XRT driver: libxrt_core.so.2 could not be loaded ("))
        << error.message();
    return;
  }
  if (XrtDeviceCount() > 0) GTEST_SKIP() << "this machine has a Xilinx card";
  const Error error = ErrorFrom([] { CreateXrtDevice(0); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(),
            "no XRT device: libxrt_core.so.2 finds no Xilinx card (xclProbe reports none), so "
            "xrt:0 does not exist; is the xocl driver loaded?");
}

// ---- a stand-in driver ---------------------------------------------------
//
// fake_xrt_driver.c keeps each buffer object's host side and card side apart
// and moves bytes between them only on xclSyncBO, so these tests pin the
// device's logic without an FPGA.

class FakeXrtDriverTest : public ::testing::Test {
 protected:
  static constexpr size_t kCardMemory = size_t{1} << 20;

  void SetUp() override { fake_xrt_reset(1, kCardMemory); }

  std::shared_ptr<const XrtLibrary> Library() {
    return LoadXrtLibraryFromResolver(&fake_xrt_symbol, "fake libxrt_core");
  }
};

TEST_F(FakeXrtDriverTest, CopiesRoundTripThroughTheCardWithOffsets) {
  std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
  EXPECT_EQ(device->id(), (DeviceId{DeviceKind::kXRT, 0}));
  const std::vector<uint8_t> input = Pattern(700, 4);
  // The first buffer object XRT hands out is number 0; its handle is not null.
  void* first = device->Allocate(1024);
  void* second = device->Allocate(2048);
  EXPECT_NE(first, nullptr);
  device->CopyFromHost(input.data(), first, 100, input.size());
  device->CopyWithinDevice(first, 100, second, 1001, input.size());
  device->Synchronize();
  std::vector<uint8_t> output(input.size());
  device->CopyToHost(second, 1001, output.data(), output.size());
  EXPECT_EQ(output, input);
  device->Free(first, 1024);
  device->Free(second, 2048);
}

TEST_F(FakeXrtDriverTest, OverlappingCopyWithinOneBufferMovesLikeMemmove) {
  std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
  const std::vector<uint8_t> input = Pattern(512, 2);
  void* buffer = device->Allocate(input.size());
  device->CopyFromHost(input.data(), buffer, 0, input.size());
  device->CopyWithinDevice(buffer, 0, buffer, 64, 400);
  std::vector<uint8_t> expected = input;
  std::memmove(expected.data() + 64, expected.data(), 400);
  std::vector<uint8_t> output(input.size());
  device->CopyToHost(buffer, 0, output.data(), output.size());
  EXPECT_EQ(output, expected);
  device->Free(buffer, input.size());
}

TEST_F(FakeXrtDriverTest, PoolReusesBuffersAndReleasesThemWithTheCard) {
  {
    std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
    EXPECT_EQ(fake_xrt_open_cards(), 1);
    void* buffer = device->Allocate(3000);
    device->Free(buffer, 3000);
    EXPECT_EQ(device->Allocate(3000), buffer);
    EXPECT_EQ(device->memory_statistics().reuses, 1u);
    device->Free(buffer, 3000);
    EXPECT_EQ(fake_xrt_live_buffers(), 1u);
  }
  EXPECT_EQ(fake_xrt_live_buffers(), 0u);
  EXPECT_EQ(fake_xrt_open_cards(), 0);
}

TEST_F(FakeXrtDriverTest, ExhaustedCardReleasesTheCacheThenReportsOutOfMemory) {
  std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
  void* cached = device->Allocate(600 << 10);
  device->Free(cached, 600 << 10);
  void* large = device->Allocate(700 << 10);
  EXPECT_EQ(fake_xrt_refused_allocations(), 1u);
  EXPECT_EQ(device->memory_statistics().retries_after_release, 1u);
  const Error error = ErrorFrom([&] { device->Allocate(700 << 10); });
  EXPECT_TRUE(StartsWith(error.message(), "out of memory on xrt:0: cannot allocate 700.0 KiB"))
      << error.message();
  device->Free(large, 700 << 10);
}

TEST_F(FakeXrtDriverTest, DriverErrorsNameTheDeviceTheOperationAndErrno) {
  std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
  void* buffer = device->Allocate(64);
  uint8_t value = 1;
  fake_xrt_fail_next_call("xclSyncBO", EIO);
  Error error = ErrorFrom([&] { device->CopyFromHost(&value, buffer, 0, 1); });
  EXPECT_EQ(error.kind(), ErrorKind::kDevice);
  EXPECT_EQ(error.message(), "xrt:0: xclSyncBO failed: Input/output error (errno 5)");
  fake_xrt_fail_next_call("xclReadBO", EFAULT);
  error = ErrorFrom([&] { device->CopyToHost(buffer, 0, &value, 1); });
  EXPECT_EQ(error.message(), "xrt:0: xclReadBO failed: Bad address (errno 14)");
  // A refusal other than exhaustion is reported as it is, not as out of memory.
  fake_xrt_fail_next_call("xclAllocBO", EINVAL);
  error = ErrorFrom([&] { device->Allocate(4096); });
  EXPECT_EQ(error.message(), "xrt:0: xclAllocBO failed: Invalid argument (errno 22)");
  EXPECT_EQ(device->memory_statistics().bytes_in_use, 64u);
  device->Free(buffer, 64);
}

TEST_F(FakeXrtDriverTest, DescriptionWithoutDeviceInformationNamesTheLibrary) {
  std::unique_ptr<Device> device = CreateXrtDevice(Library(), 0);
  EXPECT_EQ(device->description(), "xrt:0 (Xilinx card through fake libxrt_core, pooled)");
}

TEST_F(FakeXrtDriverTest, MissingCardsAndIndicesAreReported) {
  EXPECT_EQ(ErrorFrom([&] { CreateXrtDevice(Library(), 1); }).message(),
            "no device xrt:1: 1 XRT device present");
  fake_xrt_reset(0, kCardMemory);
  EXPECT_EQ(ErrorFrom([&] { CreateXrtDevice(Library(), 0); }).message(),
            "no XRT device: fake libxrt_core finds no Xilinx card (xclProbe reports none), so "
            "xrt:0 does not exist; is the xocl driver loaded?");
}

TEST_F(FakeXrtDriverTest, CardThatWillNotOpenIsReported) {
  fake_xrt_fail_next_call("xclOpen", EBUSY);
  const Error error = ErrorFrom([&] { CreateXrtDevice(Library(), 0); });
  EXPECT_TRUE(StartsWith(error.message(),
                         "xrt:0: xclOpen failed (fake libxrt_core could not "
                         "open the card"))
      << error.message();
}

TEST_F(FakeXrtDriverTest, LibraryLackingEntryPointsIsRefused) {
  auto resolver = [](const char* name) -> void* {
    return std::string(name) == "xclSyncBO" ? nullptr : fake_xrt_symbol(name);
  };
  EXPECT_EQ(ErrorFrom([&] { LoadXrtLibraryFromResolver(resolver, "odd libxrt_core"); }).message(),
            "unusable XRT library: odd libxrt_core lacks xclSyncBO");
}

}  // namespace
}  // namespace relay::devices
