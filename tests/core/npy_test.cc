#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "relay/devices.h"
#include "relay/npy.h"
#include "tests/core/npy_test_support.h"

namespace relay {
namespace {

using testing::ExpectError;
using testing::ExpectFormulaTensor;
using testing::FixturePath;
using testing::FormulaTensor;
using testing::kAllDTypes;
using testing::ReadBytes;
using testing::SameBytes;
using testing::TemporaryDirectory;
using testing::WriteBytes;

const Shape kFixtureShape = {2, 3, 4};

// A .npy file with `dictionary` as its header (padded as NumPy pads it) and
// `data_bytes` bytes of data counting up from 0.
std::vector<uint8_t> MakeNpy(const std::string& dictionary, size_t data_bytes, int major = 1,
                             int minor = 0) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string header = dictionary;
  while ((8 + length_bytes + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> bytes = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), static_cast<uint8_t>(minor)};
  for (size_t byte = 0; byte < length_bytes; ++byte) {
    bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * byte)));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (size_t index = 0; index < data_bytes; ++index) bytes.push_back(static_cast<uint8_t>(index));
  return bytes;
}

std::string Dictionary(const std::string& descr, const std::string& shape,
                       const std::string& fortran_order = "False") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran_order + ", 'shape': " + shape +
         ", }";
}

void ExpectLoadError(const std::vector<uint8_t>& bytes, const std::string& phrase) {
  ExpectError([&] { ParseNpy(bytes, "bad.npy", HostDevice()); }, ErrorKind::kLoad, "bad.npy",
              phrase);
}

// A device the host cannot read, to check that host-only paths refuse it.
class FakeAcceleratorDevice final : public Device {
 public:
  DeviceId id() const override { return {DeviceKind::kCUDA, 7}; }
  std::string description() const override { return "cuda:7 (fake, for tests)"; }
  void* Allocate(size_t bytes) override { return std::malloc(bytes == 0 ? 1 : bytes); }
  void Free(void* handle, size_t) override { std::free(handle); }
  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    std::memcpy(static_cast<char*>(destination_handle) + destination_offset, source, bytes);
  }
  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    std::memcpy(destination, static_cast<const char*>(source_handle) + source_offset, bytes);
  }
  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override {
    std::memmove(static_cast<char*>(destination_handle) + destination_offset,
                 static_cast<const char*>(source_handle) + source_offset, bytes);
  }
  void Synchronize() override {}
  MemoryStatistics memory_statistics() const override { return {}; }
  void ReleaseCachedMemory() override {}
  void SetMemoryLimit(size_t) override {}
};

// ---- NumPy's files ---------------------------------------------------------------

TEST(NpyFixtures, ReadsEveryDTypeInCOrder) {
  for (const DType dtype : kAllDTypes) {
    const std::string name = "c_" + std::string(DTypeName(dtype)) + ".npy";
    const Ref<Tensor> tensor = ReadNpy(FixturePath(name), HostDevice());
    ExpectFormulaTensor(*tensor, dtype, kFixtureShape, name);
  }
}

TEST(NpyFixtures, TransposesFortranOrderIntoRowMajor) {
  for (const DType dtype : {DType::kBool, DType::kInt16, DType::kFloat32, DType::kFloat64}) {
    const std::string name = "fortran_" + std::string(DTypeName(dtype)) + ".npy";
    ExpectFormulaTensor(*ReadNpy(FixturePath(name), HostDevice()), dtype, kFixtureShape, name);
  }
}

TEST(NpyFixtures, SwapsBigEndianData) {
  for (const DType dtype : {DType::kInt16, DType::kInt32, DType::kInt64, DType::kFloat16,
                            DType::kFloat32, DType::kFloat64}) {
    const std::string name = "big_endian_" + std::string(DTypeName(dtype)) + ".npy";
    ExpectFormulaTensor(*ReadNpy(FixturePath(name), HostDevice()), dtype, kFixtureShape, name);
  }
  ExpectFormulaTensor(*ReadNpy(FixturePath("fortran_big_endian_float64.npy"), HostDevice()),
                      DType::kFloat64, kFixtureShape, "fortran_big_endian_float64.npy");
}

TEST(NpyFixtures, ReadsScalarAndZeroSizeArrays) {
  const Ref<Tensor> scalar = ReadNpy(FixturePath("scalar_float32.npy"), HostDevice());
  EXPECT_EQ(scalar->shape(), Shape{});
  EXPECT_EQ(scalar->element_count(), 1);
  EXPECT_EQ(scalar->data<float>()[0], 3.5f);

  const Ref<Tensor> empty = ReadNpy(FixturePath("empty_float32.npy"), HostDevice());
  EXPECT_EQ(empty->dtype(), DType::kFloat32);
  EXPECT_EQ(empty->shape(), (Shape{0, 3}));
  EXPECT_EQ(empty->element_count(), 0);
}

TEST(NpyFixtures, ReadsFormatVersions2And3) {
  ExpectFormulaTensor(*ReadNpy(FixturePath("version2_int32.npy"), HostDevice()), DType::kInt32, {5},
                      "version2_int32.npy");
  ExpectFormulaTensor(*ReadNpy(FixturePath("version3_float64.npy"), HostDevice()), DType::kFloat64,
                      {2, 3}, "version3_float64.npy");
}

TEST(NpyFixtures, ParseNpyAgreesWithReadNpy) {
  for (const char* name : {"c_int64.npy", "fortran_float32.npy", "big_endian_float16.npy"}) {
    const std::vector<uint8_t> bytes = ReadBytes(FixturePath(name));
    EXPECT_TRUE(
        SameBytes(*ParseNpy(bytes, name, HostDevice()), *ReadNpy(FixturePath(name), HostDevice())))
        << name;
  }
}

// ---- header syntax -------------------------------------------------------------------

TEST(NpyHeader, AcceptsAnyKeyOrderQuotingAndSpacing) {
  const std::vector<std::string> dictionaries = {
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
      "{'shape': (2, 3), 'descr': '<i4', 'fortran_order': False}",
      "{\"fortran_order\": False, \"shape\": (2,3,), \"descr\": \"<i4\"}",
      "  {  'descr' :'<i4' ,'fortran_order':False,'shape':( 2 , 3 ) }  ",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L)}",
      "{'descr': '=i4', 'fortran_order': False, 'shape': (2, 3)}",
  };
  for (const std::string& dictionary : dictionaries) {
    const Ref<Tensor> tensor = ParseNpy(MakeNpy(dictionary, 24), "ok.npy", HostDevice());
    EXPECT_EQ(tensor->shape(), (Shape{2, 3})) << dictionary;
    EXPECT_EQ(tensor->dtype(), DType::kInt32) << dictionary;
    EXPECT_EQ(tensor->data<int32_t>()[1], 0x07060504) << dictionary;
  }
}

TEST(NpyHeader, AcceptsAnyByteOrderForOneByteTypes) {
  for (const char* descr : {"'|u1'", "'<u1'", "'>u1'", "'=u1'"}) {
    const Ref<Tensor> tensor =
        ParseNpy(MakeNpy(Dictionary(descr, "(3,)"), 3), "ok.npy", HostDevice());
    EXPECT_EQ(tensor->dtype(), DType::kUInt8) << descr;
    EXPECT_EQ(tensor->data<uint8_t>()[2], 2) << descr;
  }
}

TEST(NpyHeader, ReadsNonZeroBoolBytesAsTrue) {
  std::vector<uint8_t> bytes = MakeNpy(Dictionary("'|b1'", "(3,)"), 0);
  bytes.insert(bytes.end(), {0, 2, 255});
  const Ref<Tensor> tensor = ParseNpy(bytes, "bool.npy", HostDevice());
  const auto* raw = static_cast<const uint8_t*>(tensor->host_data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

// ---- malformed files ---------------------------------------------------------------

TEST(NpyMalformed, RejectsBadMagicAndVersion) {
  ExpectLoadError({}, "not a .npy file: the file is empty");
  ExpectLoadError({0x93, 'N', 'U'}, "missing the \\x93NUMPY magic string");
  ExpectLoadError({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, "missing the \\x93NUMPY magic string");
  ExpectLoadError({0x93, 'N', 'U', 'M', 'P', 'Y', 1}, "truncated header: no format version");
  ExpectLoadError({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 10}, "truncated header: no header length");
  const std::string dictionary = Dictionary("'<f4'", "(2,)");
  ExpectLoadError(MakeNpy(dictionary, 8, 4, 0), "unsupported .npy format version 4.0");
  ExpectLoadError(MakeNpy(dictionary, 8, 1, 1), "unsupported .npy format version 1.1");
  ExpectLoadError(MakeNpy(dictionary, 8, 0, 0), "unsupported .npy format version 0.0");
}

TEST(NpyMalformed, RejectsHeaderLengthsPastTheFile) {
  std::vector<uint8_t> bytes = MakeNpy(Dictionary("'<f4'", "(2,)"), 0);
  bytes.resize(40);
  ExpectLoadError(bytes, "truncated header: declares 118 bytes, file has 30");
  // A version 2.0 header length of 2 GiB on a tiny file is refused by size.
  ExpectLoadError({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xFF, 0xFF, 0xFF, 0x7F, '{'},
                  "header of 2147483647 bytes exceeds the limit");
  ExpectLoadError({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x00, 0x10, 0x00, 0x00, '{'},
                  "truncated header: declares 4096 bytes, file has 1");
}

TEST(NpyMalformed, RejectsMalformedHeaders) {
  const struct {
    std::string dictionary;
    std::string phrase;
  } cases[] = {
      {"", "malformed header: expected '{'"},
      {"garbage", "malformed header: expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "expected a string key"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "unexpected text after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}}", "unexpected text after"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "expected ':'"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", "expected a string key"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
      {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (2,)}", "unterminated string"},
      {"{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}", "unsupported escape"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", "unexpected name 'false'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
      {"{'fortran_order': False, 'shape': (2,)}", "no 'descr' key"},
      {"{'descr': '<f4', 'shape': (2,)}", "no 'fortran_order' key"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
       "'fortran_order' must be True or False, not 0"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}",
       "'shape' must be a tuple of non-negative integers, not (2, -3)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "not [2, 3]"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "not (6)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('6',)}", "not ('6',)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (True,)}", "not (True,)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", "expected a value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", "leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "integer out of range"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-,)}", "expected digits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100, '(') + "2,)}",
       "nested too deeply"},
  };
  for (const auto& test_case : cases) {
    SCOPED_TRACE(test_case.dictionary);
    ExpectLoadError(MakeNpy(test_case.dictionary, 8), test_case.phrase);
  }
}

TEST(NpyMalformed, NamesUnsupportedDTypes) {
  try {
    ParseNpy(MakeNpy(Dictionary("'<c8'", "(2,)"), 8), "x.npy", HostDevice());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_STREQ(error.what(),
                 "x.npy: error: unsupported dtype '<c8' (relay-vm supports bool, int8, int16, "
                 "int32, int64, uint8, float16, float32, float64, uint16, uint32, uint64)");
  }
  const struct {
    std::string descr;
    std::string phrase;
  } cases[] = {
      {"'<c8'", "unsupported dtype '<c8'"},
      {"'|O'", "unsupported dtype '|O'"},
      {"'<U10'", "unsupported dtype '<U10'"},
      {"'<f3'", "unsupported dtype '<f3'"},
      {"'<f16'", "unsupported dtype '<f16'"},
      {"'f4'", "unsupported dtype 'f4'"},
      {"'|i4'", "unsupported dtype '|i4'"},
      {"'<i04'", "unsupported dtype '<i04'"},
      {"'<M8[ns]'", "unsupported dtype '<M8[ns]'"},
      {"[('a', '<i4'), ('b', '<f8')]", "unsupported dtype [('a', '<i4'), ('b', '<f8')]"},
      {"7", "unsupported dtype 7"},
      {"'\x1b'", "unsupported dtype '\\x1b'"},
  };
  for (const auto& test_case : cases) {
    SCOPED_TRACE(test_case.descr);
    ExpectLoadError(MakeNpy(Dictionary(test_case.descr, "(2,)"), 8), test_case.phrase);
  }
}

TEST(NpyMalformed, ChecksDataSizeBeforeAllocating) {
  try {
    ParseNpy(MakeNpy(Dictionary("'<f4'", "(3, 4)"), 20), "x.npy", HostDevice());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_STREQ(
        error.what(),
        "x.npy: error: truncated data: shape (3, 4) of float32 needs 48 bytes, file has 20");
  }
  ExpectLoadError(MakeNpy(Dictionary("'<f4'", "(3, 4)"), 52),
                  "trailing bytes: shape (3, 4) of float32 needs 48 bytes, file has 52");
  // Shapes this large would exhaust memory if allocated before the check.
  ExpectLoadError(MakeNpy(Dictionary("'<f4'", "(1073741824, 1073741824)"), 16),
                  "truncated data: shape (1073741824, 1073741824) of float32 needs "
                  "4611686018427387904 bytes, file has 16");
  ExpectLoadError(MakeNpy(Dictionary("'<i8'", "(4611686018427387904, 4)"), 16),
                  "has too many elements");
  ExpectLoadError(MakeNpy(Dictionary("'<f8'", "(2305843009213693952,)"), 16), "is too large");
  // A zero dimension makes any other dimension harmless.
  ExpectLoadError(MakeNpy(Dictionary("'<f8'", "(0, 9223372036854775807)"), 1),
                  "trailing bytes: shape (0, 9223372036854775807) of float64 needs 0 bytes");
}

TEST(NpyMalformed, EveryTruncationIsAOneLineLoadError) {
  for (const char* name : {"c_float64.npy", "version2_int32.npy", "scalar_float32.npy"}) {
    const std::vector<uint8_t> bytes = ReadBytes(FixturePath(name));
    ASSERT_FALSE(bytes.empty()) << name;
    for (size_t length = 0; length < bytes.size(); ++length) {
      SCOPED_TRACE(std::string(name) + " cut to " + std::to_string(length) + " bytes");
      ExpectLoadError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + length), "");
    }
  }
}

TEST(NpyMalformed, CorruptHeaderBytesNeverCrash) {
  // Every header byte replaced by a few chosen and random values: the file
  // must either still parse or fail with a one-line load error.
  const std::vector<uint8_t> original = ReadBytes(FixturePath("c_int32.npy"));
  std::mt19937 generator(12345);
  for (size_t position = 0; position < 128; ++position) {
    const int random_byte = static_cast<int>(generator() & 0xFF);
    for (const int replacement :
         {0, 0xFF, int{'('}, int{')'}, int{'\''}, int{','}, int{'-'}, int{'9'}, random_byte}) {
      std::vector<uint8_t> bytes = original;
      bytes[position] = static_cast<uint8_t>(replacement);
      try {
        ParseNpy(bytes, "fuzz.npy", HostDevice());
      } catch (const Error& error) {
        ASSERT_EQ(error.kind(), ErrorKind::kLoad) << error.what();
        ASSERT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
      }
    }
  }
}

TEST(NpyMalformed, ReportsFilesThatCannotBeRead) {
  const TemporaryDirectory directory;
  const std::string missing = directory / "x.npy";
  try {
    ReadNpy(missing, HostDevice());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_EQ(std::string(error.what()),
              missing + ": error: cannot open: No such file or directory");
  }
  ExpectError([&] { ReadNpy(directory.path(), HostDevice()); }, ErrorKind::kLoad, directory.path(),
              "cannot read: Is a directory");
  const std::string truncated = directory / "truncated.npy";
  std::vector<uint8_t> bytes = ReadBytes(FixturePath("c_float32.npy"));
  bytes.resize(bytes.size() - 4);
  WriteBytes(truncated, bytes);
  ExpectError([&] { ReadNpy(truncated, HostDevice()); }, ErrorKind::kLoad, truncated,
              "truncated data: shape (2, 3, 4) of float32 needs 96 bytes, file has 92");
}

TEST(NpyMalformed, RefusesDevicesTheHostCannotRead) {
  FakeAcceleratorDevice accelerator;
  EXPECT_THROW(ReadNpy(FixturePath("c_int8.npy"), accelerator), Error);
  try {
    ParseNpy(ReadBytes(FixturePath("c_int8.npy")), "c_int8.npy", accelerator);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("host-accessible"), std::string::npos);
  }
}

// ---- writing -----------------------------------------------------------------------

TEST(NpyWrite, RoundTripsEveryDTypeAndShape) {
  const TemporaryDirectory directory;
  for (const DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{2, 3, 4}, Shape{}, Shape{0, 3}, Shape{7}, Shape{1, 1, 5, 1}}) {
      const std::string label = std::string(DTypeName(dtype)) + " " + ShapeToString(shape);
      const Ref<Tensor> original = FormulaTensor(dtype, shape);
      const std::string path = directory / "round_trip.npy";
      WriteNpy(path, *original);
      const Ref<Tensor> loaded = ReadNpy(path, HostDevice());
      ExpectFormulaTensor(*loaded, dtype, shape, label);
      EXPECT_TRUE(SameBytes(*original, *loaded)) << label;

      const std::vector<uint8_t> file = ReadBytes(path);
      EXPECT_EQ(SerializeNpy(*original), file) << label;
      EXPECT_TRUE(SameBytes(*original, *ParseNpy(file, label, HostDevice()))) << label;
      // Version 1.0, data aligned to 64 bytes as NumPy aligns it.
      ASSERT_GE(file.size(), 10u);
      EXPECT_EQ(file[6], 1) << label;
      const size_t data_offset = 10 + (file[8] | (file[9] << 8));
      EXPECT_EQ(data_offset % 64, 0u) << label;
      EXPECT_EQ(file.size() - data_offset, original->byte_size()) << label;
      EXPECT_EQ(file[data_offset - 1], '\n') << label;
    }
  }
  EXPECT_EQ(directory.Entries(), std::vector<std::string>{"round_trip.npy"});
}

TEST(NpyWrite, WritesTheHeaderNumPyWrites) {
  const struct {
    DType dtype;
    Shape shape;
    std::string dictionary;
  } cases[] = {
      {DType::kFloat16, {2, 3}, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"},
      {DType::kBool, {5}, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"},
      {DType::kInt64, {}, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"},
  };
  for (const auto& test_case : cases) {
    const Ref<Tensor> tensor = FormulaTensor(test_case.dtype, test_case.shape);
    const std::vector<uint8_t> bytes = SerializeNpy(*tensor);
    const size_t header_end = bytes.size() - tensor->byte_size();
    const std::string header(bytes.begin() + 10,
                             bytes.begin() + static_cast<ptrdiff_t>(header_end));
    // The dictionary, then spaces, then one newline.
    EXPECT_EQ(header.substr(0, test_case.dictionary.size()), test_case.dictionary);
    EXPECT_EQ(header.find_first_not_of(' ', test_case.dictionary.size()), header.size() - 1)
        << header;
    EXPECT_EQ(header.back(), '\n');
  }
}

TEST(NpyWrite, UsesVersion2ForHugeHeaders) {
  // 30000 unit dimensions print as more than 65535 header bytes.
  const Shape shape(30000, 1);
  const Ref<Tensor> tensor = FormulaTensor(DType::kInt16, shape);
  const std::vector<uint8_t> bytes = SerializeNpy(*tensor);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ(bytes[7], 0);
  const size_t data_offset = 12 + (bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) |
                                   (static_cast<size_t>(bytes[11]) << 24));
  EXPECT_EQ(data_offset % 64, 0u);
  EXPECT_TRUE(SameBytes(*tensor, *ParseNpy(bytes, "wide.npy", HostDevice())));
}

TEST(NpyWrite, ReplacesFilesAtomically) {
  const TemporaryDirectory directory;
  const std::string path = directory / "x.npy";
  WriteNpy(path, *FormulaTensor(DType::kInt32, {4}));
  WriteNpy(path, *FormulaTensor(DType::kFloat64, {2, 2}));
  ExpectFormulaTensor(*ReadNpy(path, HostDevice()), DType::kFloat64, {2, 2}, path);
  const std::vector<uint8_t> before = ReadBytes(path);

  // A tensor the host cannot read fails before the old file is touched.
  FakeAcceleratorDevice accelerator;
  const Ref<Tensor> remote = Tensor::Empty(accelerator, {4}, DType::kFloat32);
  try {
    WriteNpy(path, *remote);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  }
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_EQ(directory.Entries(), std::vector<std::string>{"x.npy"});

  // A missing directory is a runtime error naming the path; nothing appears.
  const std::string nowhere = directory / "missing/y.npy";
  ExpectError([&] { WriteNpy(nowhere, *FormulaTensor(DType::kInt8, {3})); }, ErrorKind::kRuntime,
              nowhere, "cannot create file: No such file or directory");
  EXPECT_EQ(directory.Entries(), std::vector<std::string>{"x.npy"});
  // Renaming over a directory fails after the temporary was written; it
  // must be cleaned up and the directory left alone.
  const std::string occupied = directory / "occupied";
  std::filesystem::create_directory(occupied);
  std::filesystem::create_directory(occupied + "/child");
  ExpectError([&] { WriteNpy(occupied, *FormulaTensor(DType::kInt8, {3})); }, ErrorKind::kRuntime,
              occupied, "cannot replace file");
  EXPECT_EQ(directory.Entries(), (std::vector<std::string>{"occupied", "x.npy"}));
}

// ---- NumPy as the oracle -------------------------------------------------------------

TEST(NpyNumPy, NumPyReadsWhatWeWrite) {
  if (!testing::PythonNumpyAvailable()) GTEST_SKIP() << "python3 with numpy is not available";
  const TemporaryDirectory directory;
  std::string script = "import numpy as np\n";
  for (const DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{2, 3, 4}, Shape{}, Shape{0, 3}}) {
      const std::string name =
          std::string(DTypeName(dtype)) + "_" + std::to_string(shape.size()) + ".npy";
      WriteNpy(directory / name, *FormulaTensor(dtype, shape));
      script += "check(np.load('" + name + "', allow_pickle=False), '" +
                std::string(DTypeName(dtype)) + "', " + testing::PythonShape(shape) + ", '" + name +
                "')\n";
    }
  }
  EXPECT_EQ(testing::RunPythonCheck(directory, script), 0);
}

}  // namespace
}  // namespace relay
