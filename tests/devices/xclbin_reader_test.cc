#include "devices/xrt/xclbin_reader.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "relay/error.h"
#include "tests/devices/device_test_support.h"

namespace relay::devices {
namespace {

// tests/devices/data/vadd.xclbin, written by make_test_xclbin.py; the
// expectations below are what that script writes (and what XRT 2.13's own
// xrt::xclbin read from it when it was checked by hand).
std::vector<std::byte> TestXclbin() {
  std::ifstream file(RELAY_DEVICES_TEST_DATA_DIR "/vadd.xclbin", std::ios::binary);
  const std::vector<char> characters((std::istreambuf_iterator<char>(file)),
                                     std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(characters.size());
  std::memcpy(bytes.data(), characters.data(), characters.size());
  EXPECT_EQ(bytes.size(), 2016u);
  return bytes;
}

// Where struct axlf (xrt/xclbin.h) keeps its section headers, 40 bytes each,
// with m_sectionOffset 24 bytes in; the test file's IP_LAYOUT is section 0
// and its EMBEDDED_METADATA section 1.
constexpr size_t kSectionHeadersOffset = 456;
constexpr size_t kSectionHeaderBytes = 40;
constexpr size_t kSectionOffsetField = 24;

uint64_t SectionOffset(const std::vector<std::byte>& bytes, size_t section) {
  uint64_t offset = 0;
  std::memcpy(
      &offset,
      bytes.data() + kSectionHeadersOffset + section * kSectionHeaderBytes + kSectionOffsetField,
      sizeof(offset));
  return offset;
}

// `bytes` with the one occurrence of `from` replaced by `to`, of the same
// length, so that every offset in the file stays right.
std::vector<std::byte> Replaced(std::vector<std::byte> bytes, const std::string& from,
                                const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string_view::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string_view::npos) << from;
  if (at != std::string_view::npos) std::memcpy(bytes.data() + at, to.data(), to.size());
  return bytes;
}

// The kUsage message ReadXclbin gives for `bytes`.
std::string UsageErrorFor(const std::vector<std::byte>& bytes) {
  const Error error = ErrorFrom([&] { ReadXclbin(bytes, "vadd.xclbin"); });
  EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.message();
  return error.message();
}

TEST(XclbinReaderTest, ReadsTheKernelItsComputeUnitAndItsArguments) {
  const XclbinDescription description = ReadXclbin(TestXclbin(), "vadd.xclbin");
  std::array<uint8_t, 16> uuid;
  for (size_t index = 0; index < uuid.size(); ++index) uuid[index] = 0x10 + index;
  EXPECT_EQ(description.uuid, uuid);
  ASSERT_EQ(description.kernels.size(), 1u);
  const XclbinKernel& kernel = description.kernels[0];
  EXPECT_EQ(kernel.name, "vadd");
  EXPECT_EQ(kernel.compute_unit_name, "vadd_1");
  EXPECT_EQ(kernel.compute_unit_index, 0u);
  EXPECT_EQ(kernel.base_address, 0x1800000u);
  using Kind = ExternalKernelArgument::Kind;
  const struct {
    const char* name;
    Kind kind;
    uint32_t register_offset;
    uint32_t bytes;
  } expected[] = {{"in1", Kind::kBuffer, 0x10, 8},
                  {"in2", Kind::kBuffer, 0x1c, 8},
                  {"out", Kind::kBuffer, 0x28, 8},
                  {"size", Kind::kScalar, 0x34, 4}};
  ASSERT_EQ(kernel.arguments.size(), std::size(expected));
  for (size_t index = 0; index < std::size(expected); ++index) {
    const XclbinArgument& argument = kernel.arguments[index];
    EXPECT_EQ(argument.name, expected[index].name);
    EXPECT_EQ(argument.kind, expected[index].kind) << argument.name;
    EXPECT_EQ(argument.register_offset, expected[index].register_offset) << argument.name;
    EXPECT_EQ(argument.bytes, expected[index].bytes) << argument.name;
  }
}

TEST(XclbinReaderTest, ArgumentsComeInTheOrderOfTheirIds) {
  // in1 and in2 swap ids, so in2 comes first.
  std::vector<std::byte> bytes = Replaced(TestXclbin(), "\"in1\" addressQualifier=\"1\" id=\"0\"",
                                          "\"in1\" addressQualifier=\"1\" id=\"1\"");
  bytes = Replaced(bytes, "\"in2\" addressQualifier=\"1\" id=\"1\"",
                   "\"in2\" addressQualifier=\"1\" id=\"0\"");
  const XclbinDescription description = ReadXclbin(bytes, "vadd.xclbin");
  ASSERT_EQ(description.kernels.at(0).arguments.size(), 4u);
  EXPECT_EQ(description.kernels[0].arguments[0].name, "in2");
  EXPECT_EQ(description.kernels[0].arguments[0].register_offset, 0x1cu);
  EXPECT_EQ(description.kernels[0].arguments[1].name, "in1");
}

TEST(XclbinReaderTest, FileThatIsNoXclbinIsRefused) {
  EXPECT_EQ(UsageErrorFor({}),
            "vadd.xclbin: not an xclbin file (it does not start with the magic \"xclbin2\")");
  EXPECT_EQ(UsageErrorFor(Replaced(TestXclbin(), "xclbin2", "xclbin1")),
            "vadd.xclbin: not an xclbin file (it does not start with the magic \"xclbin2\")");
}

TEST(XclbinReaderTest, TruncatedFileIsRefused) {
  std::vector<std::byte> bytes = TestXclbin();
  bytes.resize(1000);
  EXPECT_EQ(UsageErrorFor(bytes),
            "vadd.xclbin: truncated: its header gives its length as 2016 bytes, but it holds 1000");
  bytes.resize(100);
  EXPECT_EQ(UsageErrorFor(bytes),
            "vadd.xclbin: truncated: 100 bytes, fewer than an xclbin header's 456");
}

TEST(XclbinReaderTest, SectionPastTheEndIsRefused) {
  std::vector<std::byte> bytes = TestXclbin();
  const uint64_t past_the_end = 2000;
  std::memcpy(bytes.data() + kSectionHeadersOffset + kSectionHeaderBytes + kSectionOffsetField,
              &past_the_end, sizeof(past_the_end));
  EXPECT_EQ(UsageErrorFor(bytes),
            "vadd.xclbin: section 1 (EMBEDDED_METADATA) spans bytes 2000 to 3391, past the "
            "file's end at 2016");
}

TEST(XclbinReaderTest, FileWithoutKernelComputeUnitsIsRefused) {
  // The one IP_LAYOUT entry becomes IP_MB (0) instead of IP_KERNEL (1):
  // ip_data's m_type is its first word, 8 bytes into the section.
  std::vector<std::byte> bytes = TestXclbin();
  const uint32_t microblaze = 0;
  std::memcpy(bytes.data() + SectionOffset(bytes, 0) + 8, &microblaze, sizeof(microblaze));
  EXPECT_EQ(UsageErrorFor(bytes),
            "vadd.xclbin: no kernels: its IP_LAYOUT section lists no kernel compute unit");
}

TEST(XclbinReaderTest, MalformedLayoutAndMetadataAreRefusedWithTheLine) {
  const struct {
    std::string from;
    std::string to;
    std::string message;
  } cases[] = {
      {"vadd:vadd_1", "vadd_vadd_1",
       "vadd.xclbin: malformed IP_LAYOUT section: entry 0 names its compute unit "
       "\"vadd_vadd_1\", not \"kernel:instance\""},
      {"<kernel name=\"vadd\"", "<kernel name=\"vsub\"",
       "vadd.xclbin: EMBEDDED_METADATA declares no <kernel name=\"vadd\">, so the arguments of "
       "its compute unit vadd_1 are unknown"},
      {" offset=\"0x34\"", "              ",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: <arg> of kernel vadd lacks the "
       "attribute offset"},
      {"offset=\"0x34\"", "offset=\"0xZZ\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: the attribute offset=\"0xZZ\" of "
       "<arg> is not a number"},
      {"offset=\"0x34\"", "offset=\"0x35\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: argument size of kernel vadd has "
       "the register offset 53; it must be a multiple of 4, at least 16"},
      {"offset=\"0x34\"", "offset=\"0x2c\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: arguments out and size of kernel "
       "vadd overlap in the register map"},
      {"offset=\"0x34\"", "offset=0x34  ",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: expected a value in double quotes "
       "for the attribute offset"},
      {"\"size\" addressQualifier=\"0\"", "\"size\" addressQualifier=\"4\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: argument size of kernel vadd has "
       "addressQualifier 4; only 0 (a scalar) and 1 (a global-memory pointer) are supported"},
      {"port=\"S_AXI_CONTROL\" size=\"0x4\"", "port=\"S_AXI_CONTROL\" size=\"0x2\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 13: argument size of kernel vadd is a "
       "scalar of size 2; only 4 and 8 bytes are supported"},
      {"id=\"3\"", "id=\"2\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 7: the <arg> ids of kernel vadd are "
       "not 0 to 3, each once"},
      {"\"in2\"", "\"in1\"",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 11: kernel vadd has two arguments "
       "named in1"},
      {"</kernel>", "</kernal>",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 17: </kernal> closes <kernel>"},
      {"</project>", "<project/>",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 22: the text ends before <project> is "
       "closed"},
      {"<!-- vadd", "<!DOCTYPE",
       "vadd.xclbin: malformed EMBEDDED_METADATA at line 6: \"<!\" begins neither a comment nor "
       "CDATA"},
  };
  for (const auto& one : cases) {
    EXPECT_EQ(UsageErrorFor(Replaced(TestXclbin(), one.from, one.to)), one.message) << one.to;
  }
}

}  // namespace
}  // namespace relay::devices
