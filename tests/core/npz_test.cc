#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relay/devices.h"
#include "relay/npy.h"
#include "tests/core/npy_test_support.h"
#include "vm/core/zip_archive.h"

namespace relay {
namespace {

using detail::ZipMethod;
using detail::ZipReader;
using detail::ZipWriter;
using testing::ExpectError;
using testing::ExpectFormulaTensor;
using testing::FixturePath;
using testing::FormulaTensor;
using testing::kAllDTypes;
using testing::ReadBytes;
using testing::SameBytes;
using testing::TemporaryDirectory;
using testing::WriteBytes;

// Offsets inside ZIP records (APPNOTE.TXT section 4.3).
constexpr size_t kEndRecordBytes = 22;
constexpr size_t kEndDiskNumber = 4;
constexpr size_t kEndEntriesOnDisk = 8;
constexpr size_t kEndEntryCount = 10;
constexpr size_t kEndDirectoryOffset = 16;
constexpr size_t kCentralFlags = 8;
constexpr size_t kCentralMethod = 10;
constexpr size_t kCentralCrc = 16;
constexpr size_t kCentralCompressedSize = 20;
constexpr size_t kCentralUncompressedSize = 24;
constexpr size_t kCentralNameLength = 28;
constexpr size_t kCentralLocalHeaderOffset = 42;
constexpr size_t kCentralName = 46;
constexpr size_t kLocalExtraLength = 28;
constexpr size_t kLocalName = 30;

uint32_t Load32(const std::vector<uint8_t>& bytes, size_t offset) {
  return bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) |
         (static_cast<uint32_t>(bytes[offset + 3]) << 24);
}
uint16_t Load16(const std::vector<uint8_t>& bytes, size_t offset) {
  return static_cast<uint16_t>(bytes[offset] | (bytes[offset + 1] << 8));
}
void Store32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value) {
  for (size_t byte = 0; byte < 4; ++byte)
    bytes[offset + byte] = static_cast<uint8_t>(value >> (8 * byte));
}
void Store16(std::vector<uint8_t>& bytes, size_t offset, uint16_t value) {
  bytes[offset] = static_cast<uint8_t>(value);
  bytes[offset + 1] = static_cast<uint8_t>(value >> 8);
}

// Where the (non-zip64, comment-free) end record says the directory starts.
size_t DirectoryOffset(const std::vector<uint8_t>& archive) {
  return Load32(archive, archive.size() - kEndRecordBytes + kEndDirectoryOffset);
}

std::vector<uint8_t> NpyOf(DType dtype, const Shape& shape) {
  return SerializeNpy(*FormulaTensor(dtype, shape));
}

std::vector<uint8_t> Archive(
    const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members, ZipMethod method,
    bool force_zip64 = false) {
  ZipWriter writer(force_zip64);
  for (const auto& [name, contents] : members) writer.Add(name, contents, method);
  return std::move(writer).Finish();
}

// One 2x3x4 float32 member named x.npy.
std::vector<uint8_t> SingleMemberArchive(ZipMethod method) {
  return Archive({{"x.npy", NpyOf(DType::kFloat32, {2, 3, 4})}}, method);
}

void ExpectLoadError(const std::vector<uint8_t>& archive, const std::string& phrase) {
  ExpectError([&] { ParseNpz(archive, "w.npz", HostDevice()); }, ErrorKind::kLoad, "w.npz", phrase);
}

void ExpectSavezMembers(const std::vector<NamedTensor>& arrays, const std::string& label) {
  ASSERT_EQ(arrays.size(), 5u) << label;
  EXPECT_EQ(arrays[0].name, "weights");
  ExpectFormulaTensor(*arrays[0].tensor, DType::kFloat32, {2, 3, 4}, label + " weights");
  EXPECT_EQ(arrays[1].name, "bias");
  ExpectFormulaTensor(*arrays[1].tensor, DType::kFloat64, {4}, label + " bias");
  EXPECT_EQ(arrays[2].name, "mask");
  ExpectFormulaTensor(*arrays[2].tensor, DType::kBool, {3}, label + " mask");
  EXPECT_EQ(arrays[3].name, "step");
  ASSERT_EQ(arrays[3].tensor->shape(), Shape{});
  EXPECT_EQ(arrays[3].tensor->data<int64_t>()[0], 7);
  EXPECT_EQ(arrays[4].name, "tokens");
  ExpectFormulaTensor(*arrays[4].tensor, DType::kUInt8, {0, 5}, label + " tokens");
}

// Some member of every dtype, in a spread of shapes.
std::vector<NamedTensor> EveryDType() {
  const Shape shapes[] = {{2, 3, 4}, {}, {0, 3}, {5}, {3, 1, 2}};
  std::vector<NamedTensor> arrays;
  size_t index = 0;
  for (const DType dtype : kAllDTypes) {
    const Shape& shape = shapes[index++ % std::size(shapes)];
    arrays.push_back({"array_" + std::string(DTypeName(dtype)), FormulaTensor(dtype, shape)});
  }
  return arrays;
}

void ExpectSameArrays(const std::vector<NamedTensor>& expected,
                      const std::vector<NamedTensor>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t index = 0; index < expected.size(); ++index) {
    EXPECT_EQ(actual[index].name, expected[index].name);
    EXPECT_TRUE(SameBytes(*actual[index].tensor, *expected[index].tensor)) << expected[index].name;
  }
}

// ---- NumPy's archives ---------------------------------------------------------------

TEST(NpzFixtures, ReadsSavezAndSavezCompressed) {
  for (const char* name : {"savez.npz", "savez_compressed.npz"}) {
    ExpectSavezMembers(ReadNpz(FixturePath(name), HostDevice()), name);
    const std::vector<uint8_t> bytes = ReadBytes(FixturePath(name));
    ExpectSavezMembers(ParseNpz(bytes, name, HostDevice()), name);
    // numpy.savez forces zip64 extra fields into every local header; the
    // fixtures would not test that path without them.
    EXPECT_EQ(Load16(bytes, kLocalExtraLength), 20) << name;
  }
  const std::vector<uint8_t> compressed = ReadBytes(FixturePath("savez_compressed.npz"));
  EXPECT_EQ(Load16(compressed, DirectoryOffset(compressed) + kCentralMethod), 8);
}

// ---- writing -------------------------------------------------------------------------

TEST(NpzWrite, RoundTripsEveryDTypeStoredAndDeflated) {
  const TemporaryDirectory directory;
  const std::vector<NamedTensor> arrays = EveryDType();
  for (const NpzCompression compression : {NpzCompression::kStored, NpzCompression::kDeflate}) {
    const std::string path = directory / "arrays.npz";
    WriteNpz(path, arrays, compression);
    ExpectSameArrays(arrays, ReadNpz(path, HostDevice()));
    const std::vector<uint8_t> bytes = ReadBytes(path);
    ExpectSameArrays(arrays, ParseNpz(bytes, path, HostDevice()));
    const uint16_t expected_method = compression == NpzCompression::kDeflate ? 8 : 0;
    EXPECT_EQ(Load16(bytes, DirectoryOffset(bytes) + kCentralMethod), expected_method);
  }
  EXPECT_EQ(directory.Entries(), std::vector<std::string>{"arrays.npz"});
}

TEST(NpzWrite, RoundTripsAnEmptyArchive) {
  const TemporaryDirectory directory;
  WriteNpz(directory / "empty.npz", {});
  EXPECT_EQ(ReadBytes(directory / "empty.npz").size(), kEndRecordBytes);
  EXPECT_TRUE(ReadNpz(directory / "empty.npz", HostDevice()).empty());
}

TEST(NpzWrite, RejectsBadNamesWithoutTouchingTheFile) {
  const TemporaryDirectory directory;
  const std::string path = directory / "w.npz";
  WriteNpz(path, {{"kept", FormulaTensor(DType::kInt8, {2})}});
  const std::vector<uint8_t> before = ReadBytes(path);
  const Ref<Tensor> tensor = FormulaTensor(DType::kFloat32, {2});
  const auto expect_usage = [&](const std::vector<NamedTensor>& arrays, const std::string& phrase) {
    try {
      WriteNpz(path, arrays);
      ADD_FAILURE() << "expected an error containing " << phrase;
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kUsage) << error.what();
      EXPECT_NE(std::string(error.what()).find(phrase), std::string::npos) << error.what();
    }
  };
  expect_usage({{"", tensor}}, "names must not be empty");
  expect_usage({{"a", tensor}, {"b", tensor}, {"a", tensor}}, "duplicate npz array name 'a'");
  expect_usage({{"a", Ref<Tensor>()}}, "npz array 'a' has no tensor");
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_EQ(directory.Entries(), std::vector<std::string>{"w.npz"});

  const std::string nowhere = directory / "missing/w.npz";
  ExpectError(
      [&] {
        WriteNpz(nowhere, {{"a", tensor}});
      },
      ErrorKind::kRuntime, nowhere, "cannot create file");
}

// ---- the ZIP layer -------------------------------------------------------------------

TEST(NpzZip, ReadsForcedZip64Records) {
  const std::vector<uint8_t> archive =
      Archive({{"a.npy", NpyOf(DType::kInt64, {3, 2})}, {"b.npy", NpyOf(DType::kFloat16, {4})}},
              ZipMethod::kDeflate, /*force_zip64=*/true);
  // The zip64 end-of-central-directory locator precedes the end record.
  EXPECT_EQ(Load32(archive, archive.size() - kEndRecordBytes - 20), 0x07064b50u);
  EXPECT_EQ(Load32(archive, DirectoryOffset(archive) + kCentralCompressedSize), 0xFFFFFFFFu);
  const std::vector<NamedTensor> arrays = ParseNpz(archive, "z.npz", HostDevice());
  ASSERT_EQ(arrays.size(), 2u);
  ExpectFormulaTensor(*arrays[0].tensor, DType::kInt64, {3, 2}, "a");
  ExpectFormulaTensor(*arrays[1].tensor, DType::kFloat16, {4}, "b");
}

TEST(NpzZip, ReadsArchivesWithAComment) {
  std::vector<uint8_t> archive = SingleMemberArchive(ZipMethod::kStored);
  // A comment that itself contains an end-record signature must not fool
  // the backwards search.
  const std::string comment =
      "made by hand PK\x05\x06 with a decoy end record and more text after it";
  Store16(archive, archive.size() - 2, static_cast<uint16_t>(comment.size()));
  archive.insert(archive.end(), comment.begin(), comment.end());
  const std::vector<NamedTensor> arrays = ParseNpz(archive, "c.npz", HostDevice());
  ASSERT_EQ(arrays.size(), 1u);
  ExpectFormulaTensor(*arrays[0].tensor, DType::kFloat32, {2, 3, 4}, "x");
}

TEST(NpzZip, ExtractsExactlyTheDeclaredSize) {
  const std::vector<uint8_t> archive = SingleMemberArchive(ZipMethod::kDeflate);
  const size_t entry = DirectoryOffset(archive);
  const uint32_t size = Load32(archive, entry + kCentralUncompressedSize);
  std::vector<uint8_t> smaller = archive;
  Store32(smaller, entry + kCentralUncompressedSize, size - 1);
  ExpectLoadError(smaller, "member 'x.npy': inflates to more than its declared " +
                               std::to_string(size - 1) + " bytes");
  std::vector<uint8_t> larger = archive;
  Store32(larger, entry + kCentralUncompressedSize, size + 10);
  ExpectLoadError(larger, "member 'x.npy': inflates to " + std::to_string(size) +
                              " bytes, not the declared " + std::to_string(size + 10));

  const ZipReader reader(archive, "w.npz");
  std::vector<uint8_t> scratch;
  const std::span<const uint8_t> contents = reader.Extract(reader.members().at(0), scratch);
  EXPECT_EQ(std::vector<uint8_t>(contents.begin(), contents.end()),
            NpyOf(DType::kFloat32, {2, 3, 4}));
  EXPECT_EQ(scratch.size(), size);
}

// ---- malformed archives --------------------------------------------------------------

TEST(NpzMalformed, RejectsFilesThatAreNotZipArchives) {
  ExpectLoadError({1, 2, 3}, "not a zip archive: 3 bytes is too short");
  ExpectLoadError(NpyOf(DType::kFloat32, {8, 8}), "not a zip archive: no end-of-central-directory");
  const TemporaryDirectory directory;
  const std::string missing = directory / "w.npz";
  try {
    ReadNpz(missing, HostDevice());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_EQ(std::string(error.what()),
              missing + ": error: cannot open: No such file or directory");
  }
}

TEST(NpzMalformed, RejectsCorruptEndRecords) {
  const std::vector<uint8_t> archive = SingleMemberArchive(ZipMethod::kStored);
  const size_t end = archive.size() - kEndRecordBytes;
  std::vector<uint8_t> bytes = archive;
  Store32(bytes, end + kEndDirectoryOffset, 0xFFFFFF00u);
  ExpectLoadError(bytes, "central directory (");
  ExpectLoadError(bytes, "lies outside the archive");
  bytes = archive;
  Store16(bytes, end + kEndEntriesOnDisk, 1000);
  Store16(bytes, end + kEndEntryCount, 1000);
  ExpectLoadError(bytes, "declares 1000 entries but has room for at most 1");
  bytes = archive;
  Store16(bytes, end + kEndDiskNumber, 1);
  ExpectLoadError(bytes, "multi-disk zip archives are not supported");

  const std::vector<uint8_t> zip64 =
      Archive({{"x.npy", NpyOf(DType::kInt8, {4})}}, ZipMethod::kStored, /*force_zip64=*/true);
  const size_t locator = zip64.size() - kEndRecordBytes - 20;
  bytes = zip64;
  Store32(bytes, locator + 8, 0x7FFFFFFF);
  ExpectLoadError(bytes, "zip64 end-of-central-directory offset 2147483647 is out of bounds");
  bytes = zip64;
  bytes[Load32(zip64, locator + 8)] ^= 0xFF;
  ExpectLoadError(bytes, "bad zip64 end-of-central-directory signature");
}

TEST(NpzMalformed, RejectsCorruptCentralDirectoryEntries) {
  const std::vector<uint8_t> stored = SingleMemberArchive(ZipMethod::kStored);
  const std::vector<uint8_t> deflated = SingleMemberArchive(ZipMethod::kDeflate);
  const size_t entry = DirectoryOffset(stored);
  const struct {
    const char* label;
    const std::vector<uint8_t>* original;
    size_t offset;
    uint32_t value;
    int width;
    std::string phrase;
  } cases[] = {
      {"signature", &stored, 0, 0x12345678, 4, "bad signature for central directory entry 0"},
      {"encrypted", &stored, kCentralFlags, 1, 2, "member 'x.npy': is encrypted"},
      {"method", &stored, kCentralMethod, 12, 2,
       "member 'x.npy': unsupported compression method 12"},
      {"name length", &stored, kCentralNameLength, 0xFFFF, 2,
       "central directory entry 0 is truncated"},
      {"local offset", &stored, kCentralLocalHeaderOffset, static_cast<uint32_t>(entry) - 10, 4,
       "member 'x.npy': local header offset"},
      {"stored sizes", &stored, kCentralUncompressedSize, 0, 4,
       "member 'x.npy': stored data declares"},
      {"past directory", &stored, kCentralCompressedSize, 100000, 4,
       "runs past the central directory"},
      {"zip64 missing", &stored, kCentralCompressedSize, 0xFFFFFFFF, 4,
       "sizes need a zip64 extra field, which is missing"},
      {"crc", &stored, kCentralCrc, 0xDEADBEEF, 4,
       "member 'x.npy': CRC-32 mismatch (stored 0xdeadbeef"},
      {"bomb", &deflated, kCentralUncompressedSize, 0, 4, "a decompression bomb?"},
      {"truncated deflate", &deflated, kCentralCompressedSize, 5, 4, "deflate data is truncated"},
  };
  for (const auto& test_case : cases) {
    SCOPED_TRACE(test_case.label);
    std::vector<uint8_t> bytes = *test_case.original;
    const size_t directory = DirectoryOffset(bytes);
    uint32_t value = test_case.value;
    if (std::string(test_case.label) == "bomb") {
      value = 1032 * Load32(bytes, directory + kCentralCompressedSize) + 1025;
    }
    if (test_case.width == 2) {
      Store16(bytes, directory + test_case.offset, static_cast<uint16_t>(value));
    } else {
      Store32(bytes, directory + test_case.offset, value);
    }
    ExpectLoadError(bytes, test_case.phrase);
  }
}

TEST(NpzMalformed, RejectsCorruptLocalHeadersAndData) {
  const std::vector<uint8_t> stored = SingleMemberArchive(ZipMethod::kStored);
  std::vector<uint8_t> bytes = stored;
  bytes[0] = 'Q';
  ExpectLoadError(bytes, "member 'x.npy': bad local header signature at offset 0");
  bytes = stored;
  bytes[kLocalName] = 'y';
  ExpectLoadError(bytes, "member 'x.npy': local header names a different file");
  bytes = stored;
  Store16(bytes, kLocalExtraLength, 0xFFFF);
  ExpectLoadError(bytes, "member 'x.npy': local header runs into the central directory");

  // One flipped bit in the array's last element.
  bytes = stored;
  bytes[DirectoryOffset(stored) - 1] ^= 0x01;
  ExpectLoadError(bytes, "member 'x.npy': CRC-32 mismatch");

  const std::vector<uint8_t> deflated = SingleMemberArchive(ZipMethod::kDeflate);
  const ZipReader reader(deflated, "w.npz");
  bytes = deflated;
  bytes[reader.members().at(0).data_offset] = 0xFF;  // a reserved block type
  ExpectLoadError(bytes, "member 'x.npy': corrupt deflate data (zlib: invalid block type)");
}

TEST(NpzMalformed, RejectsOverlappingAndDuplicateMembers) {
  const std::vector<uint8_t> npy = NpyOf(DType::kInt32, {3});
  // Point the second entry at the first one's local header, under its name.
  std::vector<uint8_t> bytes = Archive({{"a.npy", npy}, {"b.npy", npy}}, ZipMethod::kStored);
  size_t second = DirectoryOffset(bytes) + kCentralName + 5;
  ASSERT_EQ(Load32(bytes, second), 0x02014b50u);
  bytes[second + kCentralName] = 'a';
  Store32(bytes, second + kCentralLocalHeaderOffset, 0);
  ExpectLoadError(bytes, "member 'a.npy': overlaps another member");

  ExpectLoadError(Archive({{"a.npy", npy}, {"a.npy", npy}}, ZipMethod::kStored),
                  "member 'a.npy': appears twice");
}

TEST(NpzMalformed, NamesTheMemberAtFault) {
  const std::vector<uint8_t> npy = NpyOf(DType::kInt32, {3});
  ExpectLoadError(Archive({{"a.npy", npy}, {"notes.txt", npy}}, ZipMethod::kStored),
                  "member 'notes.txt': is not a .npy array");
  ExpectLoadError(Archive({{"bad\nname.txt", npy}}, ZipMethod::kStored),
                  "member 'bad\\x0aname.txt': is not a .npy array");

  std::vector<uint8_t> truncated = NpyOf(DType::kFloat32, {3, 4});
  truncated.resize(truncated.size() - 28);
  try {
    ParseNpz(Archive({{"x.npy", truncated}}, ZipMethod::kDeflate), "w.npz", HostDevice());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_STREQ(error.what(),
                 "w.npz: error: member 'x.npy': truncated data: shape (3, 4) of float32 needs 48 "
                 "bytes, file has 20");
  }
  std::vector<uint8_t> unsupported = NpyOf(DType::kInt32, {3});
  unsupported[21] = '>';
  unsupported[22] = 'c';  // complex: no relay-vm dtype
  ExpectLoadError(Archive({{"u.npy", unsupported}}, ZipMethod::kStored),
                  "member 'u.npy': unsupported dtype '>c4'");
}

TEST(NpzMalformed, EveryTruncationIsAOneLineLoadError) {
  for (const char* name : {"savez.npz", "savez_compressed.npz"}) {
    const std::vector<uint8_t> bytes = ReadBytes(FixturePath(name));
    for (size_t length = 0; length < bytes.size(); ++length) {
      SCOPED_TRACE(std::string(name) + " cut to " + std::to_string(length) + " bytes");
      ExpectLoadError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + length), "");
    }
  }
}

TEST(NpzMalformed, CorruptBytesNeverCrash) {
  std::mt19937 generator(54321);
  for (const char* name : {"savez.npz", "savez_compressed.npz"}) {
    const std::vector<uint8_t> original = ReadBytes(FixturePath(name));
    for (size_t position = 0; position < original.size(); ++position) {
      for (const uint8_t replacement :
           {uint8_t{0}, uint8_t{0xFF}, static_cast<uint8_t>(original[position] ^ 0x80),
            static_cast<uint8_t>(generator())}) {
        std::vector<uint8_t> bytes = original;
        bytes[position] = replacement;
        try {
          ParseNpz(bytes, "fuzz.npz", HostDevice());
        } catch (const Error& error) {
          ASSERT_EQ(error.kind(), ErrorKind::kLoad) << error.what();
          ASSERT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
        }
      }
    }
  }
}

// ---- NumPy as the oracle -------------------------------------------------------------

TEST(NpzNumPy, NumPyReadsWhatWeWrite) {
  if (!testing::PythonNumpyAvailable()) GTEST_SKIP() << "python3 with numpy is not available";
  const TemporaryDirectory directory;
  const std::vector<NamedTensor> arrays = EveryDType();
  WriteNpz(directory / "stored.npz", arrays, NpzCompression::kStored);
  WriteNpz(directory / "deflated.npz", arrays, NpzCompression::kDeflate);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> members;
  for (const NamedTensor& array : arrays) {
    members.emplace_back(array.name + ".npy", SerializeNpy(*array.tensor));
  }
  WriteBytes(directory / "zip64.npz", Archive(members, ZipMethod::kDeflate, /*force_zip64=*/true));

  std::string expected = "[";
  for (const NamedTensor& array : arrays) {
    expected += "('" + array.name + "', '" + std::string(DTypeName(array.tensor->dtype())) + "', " +
                testing::PythonShape(array.tensor->shape()) + "), ";
  }
  expected += "]";
  const std::string script =
      "import zipfile\n"
      "expected = " +
      expected +
      "\n"
      "for path in ['stored.npz', 'deflated.npz', 'zip64.npz']:\n"
      "    if zipfile.ZipFile(path).testzip() is not None:\n"
      "        sys.exit(path + ': bad CRC')\n"
      "    with np.load(path, allow_pickle=False) as archive:\n"
      "        if list(archive.keys()) != [name for name, _, _ in expected]:\n"
      "            sys.exit(path + ': names ' + str(list(archive.keys())))\n"
      "        for name, dtype, shape in expected:\n"
      "            check(archive[name], dtype, shape, path + ':' + name)\n";
  EXPECT_EQ(testing::RunPythonCheck(directory, script), 0);
}

}  // namespace
}  // namespace relay
