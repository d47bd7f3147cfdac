// A minimal ZIP container, enough for NumPy .npz archives, plus the whole-file
// helpers that .npy and .npz share.
//
// Reading handles stored (method 0) and deflated (method 8) members, zip64
// end records and zip64 extra fields, and rejects everything else: encrypted
// members, other methods, multi-disk archives, offsets outside the archive,
// overlapping members, CRC-32 mismatches and decompression bombs. Writing
// produces what numpy.savez / numpy.savez_compressed produce: one local
// header per member, the data, the central directory and the end record,
// switching to zip64 records when a size or offset needs more than 32 bits.
//
// Errors: malformed archives throw relay::Error of kind kLoad whose span names
// the archive and whose one-line message names the member when one is at
// fault ("member 'x.npy': CRC-32 mismatch ...").
// Thread-safety: a ZipReader is immutable after construction and may be read
// from many threads; a ZipWriter belongs to one thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace relay::detail {

enum class ZipMethod : uint16_t { kStored = 0, kDeflate = 8 };

// One member as the central directory describes it, with the position of its
// data resolved through the local header.
struct ZipMember {
  std::string name;
  ZipMethod method = ZipMethod::kStored;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t data_offset = 0;  // from the start of the archive
};

class ZipReader {
 public:
  // Parses and validates the end records, the central directory and every
  // local header. `archive` must outlive the reader; `archive_name` is the
  // file named in errors.
  ZipReader(std::span<const uint8_t> archive, std::string archive_name);

  // In central-directory order.
  const std::vector<ZipMember>& members() const { return members_; }

  // The member's uncompressed bytes, checked against its CRC-32: a view into
  // the archive for stored members, or into `scratch` (resized to fit) for
  // deflated ones. Never allocates more than the declared uncompressed size.
  std::span<const uint8_t> Extract(const ZipMember& member, std::vector<uint8_t>& scratch) const;

  // A one-line error about `member`, "member 'NAME': WHAT", naming the archive.
  [[noreturn]] void ThrowMemberError(const ZipMember& member, std::string_view what) const;

 private:
  [[noreturn]] void ThrowArchiveError(std::string_view what) const;

  std::span<const uint8_t> archive_;
  std::string archive_name_;
  std::vector<ZipMember> members_;
};

// Builds an archive in memory.
class ZipWriter {
 public:
  // With `force_zip64`, every member carries zip64 extra fields and the
  // archive ends with zip64 records even when 32 bits would do (as Python's
  // zipfile does for numpy.savez); otherwise zip64 appears only when needed.
  explicit ZipWriter(bool force_zip64 = false) : force_zip64_(force_zip64) {}

  // Appends a member. Throws kUsage for a name longer than 65535 bytes.
  void Add(std::string_view name, std::span<const uint8_t> data, ZipMethod method);
  // Appends the central directory and end records and returns the archive.
  std::vector<uint8_t> Finish() &&;

 private:
  struct CentralRecord {
    std::string name;
    ZipMethod method;
    uint32_t crc32;
    uint64_t compressed_size;
    uint64_t uncompressed_size;
    uint64_t local_header_offset;
  };

  bool force_zip64_;
  std::vector<uint8_t> output_;
  std::vector<CentralRecord> records_;
};

// The CRC-32 that ZIP uses (zlib's), for any length.
uint32_t Crc32(std::span<const uint8_t> bytes);

// The whole contents of a file. Throws kLoad naming `path`: "cannot open: ...".
std::vector<uint8_t> ReadFileBytes(const std::string& path);

// Writes the concatenation of `pieces` to a new file next to `path`, flushes
// it to disk and renames it over `path`, so that readers see either the old
// file or the complete new one, and a failure leaves `path` untouched.
// Throws kRuntime naming `path` and the system's reason.
void WriteFileAtomically(const std::string& path, std::span<const std::span<const uint8_t>> pieces);

// `text` made printable on one line (control and non-ASCII bytes as \xNN)
// and cut to about `limit` characters, for quoting untrusted names in errors.
std::string PrintableExcerpt(std::string_view text, size_t limit = 80);

}  // namespace relay::detail
