#include "devices/xrt/xrt_device.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "devices/external_kernels.h"
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

// ---- kernels from an xclbin, run by the stand-in driver -------------------
//
// The fake runs the kernel vadd of tests/devices/data/vadd.xclbin (written by
// make_test_xclbin.py) on the card side of its buffer objects, so these tests
// check the whole path: the xclbin, the contexts, the register map of the
// start command, the buffers' addresses and the wait.

const std::string kVaddXclbin = RELAY_DEVICES_TEST_DATA_DIR "/vadd.xclbin";

// A copy of vadd.xclbin at `path` whose uuid (m_header.uuid, 416 bytes into
// struct axlf) differs from the original's.
void WriteXclbinWithAnotherUuid(const std::string& path) {
  std::ifstream input(kVaddXclbin, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(input)),
                          std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 432u);
  bytes[416] = static_cast<char>(0xAB);
  std::ofstream output(path, std::ios::binary);
  output.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class FakeXrtKernelTest : public FakeXrtDriverTest {
 protected:
  void SetUp() override {
    FakeXrtDriverTest::SetUp();
    device_ = CreateXrtDevice(Library(), 0);
    host_ = ExternalKernelHostOf(*device_);
    ASSERT_NE(host_, nullptr);
  }

  // Runs vadd over `count` int32 elements on blocks of the device and
  // returns out; in2 sits 64 bytes into its block, to check byte offsets.
  std::vector<int32_t> RunVadd(const ExternalKernel& kernel, const std::vector<int32_t>& in1,
                               const std::vector<int32_t>& in2, int64_t count) {
    const size_t bytes = in1.size() * sizeof(int32_t);
    void* first = device_->Allocate(bytes);
    void* second = device_->Allocate(bytes + 64);
    void* out = device_->Allocate(bytes);
    device_->CopyFromHost(in1.data(), first, 0, bytes);
    device_->CopyFromHost(in2.data(), second, 64, bytes);
    const BufferArgument buffers[] = {{first, 0}, {second, 64}, {out, 0}};
    const int64_t scalars[] = {count};
    std::vector<int32_t> result(in1.size());
    try {
      kernel.Run(buffers, scalars);
      device_->CopyToHost(out, 0, result.data(), bytes);
    } catch (...) {
      device_->Free(first, bytes);
      device_->Free(second, bytes + 64);
      device_->Free(out, bytes);
      throw;
    }
    device_->Free(first, bytes);
    device_->Free(second, bytes + 64);
    device_->Free(out, bytes);
    return result;
  }

  std::unique_ptr<Device> device_;
  ExternalKernelHost* host_ = nullptr;
};

TEST_F(FakeXrtKernelTest, LoadsTheKernelsOfAnXclbinWithAContextEach) {
  EXPECT_EQ(host_->LoadKernelFile(kVaddXclbin), std::vector<std::string>{"vadd"});
  EXPECT_EQ(fake_xrt_open_contexts(), 1);
  const ExternalKernel* kernel = host_->FindKernel("vadd");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->name(), "vadd");
  using Kind = ExternalKernelArgument::Kind;
  const std::vector<std::pair<std::string, Kind>> expected = {{"in1", Kind::kBuffer},
                                                              {"in2", Kind::kBuffer},
                                                              {"out", Kind::kBuffer},
                                                              {"size", Kind::kScalar}};
  ASSERT_EQ(kernel->arguments().size(), expected.size());
  for (size_t index = 0; index < expected.size(); ++index) {
    EXPECT_EQ(kernel->arguments()[index].name, expected[index].first);
    EXPECT_EQ(kernel->arguments()[index].kind, expected[index].second);
  }
  EXPECT_EQ(host_->FindKernel("vsub"), nullptr);
}

TEST_F(FakeXrtKernelTest, RunsVaddOnTheCard) {
  host_->LoadKernelFile(kVaddXclbin);
  const ExternalKernel& kernel = *host_->FindKernel("vadd");
  std::vector<int32_t> in1(1000);
  std::vector<int32_t> in2(1000);
  std::vector<int32_t> expected(1000);
  for (int32_t index = 0; index < 1000; ++index) {
    in1[index] = 3 * index - 500;
    in2[index] = 7 - 2 * index;
    expected[index] = index - 493;
  }
  EXPECT_EQ(RunVadd(kernel, in1, in2, 1000), expected);
  EXPECT_EQ(fake_xrt_executed_commands(), 1u);
  // The exec buffer is kept for the next run: no buffer object is added.
  const size_t live_buffers = fake_xrt_live_buffers();
  // Only the first 10 elements: the rest of out stays as the pool left it.
  const std::vector<int32_t> first_ten = RunVadd(kernel, in1, in2, 10);
  EXPECT_EQ(std::vector<int32_t>(first_ten.begin(), first_ten.begin() + 10),
            std::vector<int32_t>(expected.begin(), expected.begin() + 10));
  EXPECT_EQ(fake_xrt_live_buffers(), live_buffers);
  EXPECT_EQ(fake_xrt_executed_commands(), 2u);
}

TEST_F(FakeXrtKernelTest, WrongArgumentCountsAreUsageErrors) {
  host_->LoadKernelFile(kVaddXclbin);
  const ExternalKernel& kernel = *host_->FindKernel("vadd");
  void* block = device_->Allocate(64);
  const BufferArgument two[] = {{block, 0}, {block, 0}};
  const BufferArgument three[] = {{block, 0}, {block, 0}, {block, 0}};
  const int64_t one_scalar[] = {4};
  Error error = ErrorFrom([&] { kernel.Run(two, one_scalar); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(),
            "kernel vadd takes 3 buffers and 1 scalar, not 2 buffers and 1 scalar");
  error = ErrorFrom([&] { kernel.Run(three, {}); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(),
            "kernel vadd takes 3 buffers and 1 scalar, not 3 buffers and 0 scalars");
  // A count that does not fit the 4-byte argument.
  const int64_t too_large[] = {int64_t{1} << 33};
  error = ErrorFrom([&] { kernel.Run(three, too_large); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(), "argument size of kernel vadd takes 4 bytes; 8589934592 does not fit");
  EXPECT_EQ(fake_xrt_executed_commands(), 0u);
  device_->Free(block, 64);
}

TEST_F(FakeXrtKernelTest, CommandThatEndsInErrorIsADeviceError) {
  host_->LoadKernelFile(kVaddXclbin);
  const ExternalKernel& kernel = *host_->FindKernel("vadd");
  const std::vector<int32_t> values(16, 1);
  fake_xrt_end_next_command_in(5);  // ERT_CMD_STATE_ERROR
  EXPECT_EQ(DeviceErrorMessage([&] { RunVadd(kernel, values, values, 16); }),
            "xrt:0: kernel vadd ended in state ERT_CMD_STATE_ERROR (5), not "
            "ERT_CMD_STATE_COMPLETED");
  // A count past the buffers' end: the card refuses the addresses.
  EXPECT_EQ(DeviceErrorMessage([&] { RunVadd(kernel, values, values, 17); }),
            "xrt:0: kernel vadd ended in state ERT_CMD_STATE_ERROR (5), not "
            "ERT_CMD_STATE_COMPLETED");
  // The kernel still runs afterwards.
  EXPECT_EQ(RunVadd(kernel, values, values, 16), std::vector<int32_t>(16, 2));
}

TEST_F(FakeXrtKernelTest, DestroyingTheDeviceClosesContextsAndFreesExecBuffers) {
  host_->LoadKernelFile(kVaddXclbin);
  EXPECT_EQ(fake_xrt_open_contexts(), 1);
  EXPECT_EQ(fake_xrt_live_buffers(), 1u);  // the exec buffer
  device_.reset();
  EXPECT_EQ(fake_xrt_open_contexts(), 0);
  EXPECT_EQ(fake_xrt_live_buffers(), 0u);
  EXPECT_EQ(fake_xrt_open_cards(), 0);
}

TEST_F(FakeXrtKernelTest, SecondFileReplacesTheFirst) {
  const std::string second_path = ::testing::TempDir() + "/vadd_second.xclbin";
  WriteXclbinWithAnotherUuid(second_path);
  host_->LoadKernelFile(kVaddXclbin);
  const ExternalKernel* first = host_->FindKernel("vadd");
  // The fake refuses a new image while contexts on the old one are open, and
  // closing them needs the old uuid.
  EXPECT_EQ(host_->LoadKernelFile(second_path), std::vector<std::string>{"vadd"});
  EXPECT_EQ(fake_xrt_open_contexts(), 1);
  EXPECT_EQ(fake_xrt_live_buffers(), 1u);
  const ExternalKernel* second = host_->FindKernel("vadd");
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  const std::vector<int32_t> values(8, 20);
  EXPECT_EQ(RunVadd(*second, values, values, 8), std::vector<int32_t>(8, 40));
  const Error error = ErrorFrom([&] { RunVadd(*first, values, values, 8); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(), "kernel vadd of " + kVaddXclbin +
                                 " is no longer loaded on xrt:0: " + second_path + " replaced it");
  std::remove(second_path.c_str());
}

TEST_F(FakeXrtKernelTest, UnreadableFilesAreUsageErrorsThatLeaveTheLoadedOne) {
  host_->LoadKernelFile(kVaddXclbin);
  const std::string missing = RELAY_DEVICES_TEST_DATA_DIR "/missing.xclbin";
  Error error = ErrorFrom([&] { host_->LoadKernelFile(missing); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(), missing + ": cannot read the kernel file: No such file or directory");
  error = ErrorFrom([&] { host_->LoadKernelFile(RELAY_DEVICES_TEST_DATA_DIR); });
  EXPECT_EQ(error.message(), std::string(RELAY_DEVICES_TEST_DATA_DIR) +
                                 ": cannot read the kernel file: Is a directory");
  const std::string not_an_xclbin = ::testing::TempDir() + "/not_an_xclbin.xclbin";
  std::ofstream(not_an_xclbin) << "hello";
  error = ErrorFrom([&] { host_->LoadKernelFile(not_an_xclbin); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.message(),
            not_an_xclbin + ": not an xclbin file (it does not start with the magic \"xclbin2\")");
  std::remove(not_an_xclbin.c_str());
  // Files are read and checked before the card is touched.
  EXPECT_EQ(fake_xrt_open_contexts(), 1);
  const std::vector<int32_t> values(4, 1);
  EXPECT_EQ(RunVadd(*host_->FindKernel("vadd"), values, values, 4), std::vector<int32_t>(4, 2));
}

TEST_F(FakeXrtKernelTest, DriverRefusalsAreDeviceErrorsThatLeaveNothingOpen) {
  fake_xrt_fail_next_call("xclLoadXclBin", EINVAL);
  EXPECT_EQ(DeviceErrorMessage([&] { host_->LoadKernelFile(kVaddXclbin); }),
            "xrt:0: xclLoadXclBin failed: Invalid argument (errno 22)");
  EXPECT_EQ(host_->FindKernel("vadd"), nullptr);
  fake_xrt_fail_next_call("xclOpenContext", EBUSY);
  EXPECT_EQ(DeviceErrorMessage([&] { host_->LoadKernelFile(kVaddXclbin); }),
            "xrt:0: xclOpenContext failed: Device or resource busy (errno 16)");
  EXPECT_EQ(host_->FindKernel("vadd"), nullptr);
  EXPECT_EQ(fake_xrt_open_contexts(), 0);
  EXPECT_EQ(fake_xrt_live_buffers(), 0u);
  fake_xrt_fail_next_call("xclExecBuf", EIO);
  host_->LoadKernelFile(kVaddXclbin);
  const std::vector<int32_t> values(4, 1);
  EXPECT_EQ(DeviceErrorMessage([&] { RunVadd(*host_->FindKernel("vadd"), values, values, 4); }),
            "xrt:0: xclExecBuf failed: Input/output error (errno 5)");
}

}  // namespace
}  // namespace relay::devices
