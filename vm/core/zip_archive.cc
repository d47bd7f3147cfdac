#include "vm/core/zip_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <utility>

#include "relay/error.h"

namespace relay::detail {
namespace {

// Record signatures and fixed sizes from PKWARE's APPNOTE.TXT.
constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalHeaderBytes = 30;
constexpr size_t kCentralHeaderBytes = 46;
constexpr size_t kEndBytes = 22;
constexpr size_t kZip64EndBytes = 56;
constexpr size_t kZip64LocatorBytes = 20;
constexpr size_t kMaximumCommentBytes = 0xFFFF;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kSentinel32 = 0xFFFFFFFF;
constexpr uint16_t kSentinel16 = 0xFFFF;
constexpr uint16_t kFlagEncrypted = 1u << 0;
constexpr uint16_t kFlagStrongEncryption = 1u << 6;
constexpr uint16_t kFlagUtf8Name = 1u << 11;
constexpr uint16_t kVersionDefault = 20;  // 2.0: deflate
constexpr uint16_t kVersionZip64 = 45;    // 4.5: zip64 records
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint32_t kRegularFileAttributes = 0100644u << 16;  // S_IFREG | rw-r--r--
constexpr uint16_t kDosDate1980 =
    (0 << 9) | (1 << 5) | 1;  // 1980-01-01, fixed for reproducible archives

// Deflate's best case is about 1032 output bytes per input byte (a maximal
// run of length codes); any larger declared ratio cannot be honest.
constexpr uint64_t kMaximumDeflateRatio = 1032;
constexpr uint64_t kDeflateSlack = 1024;

// zlib counts in uInt; feed it at most this much at a time.
constexpr uint64_t kZlibChunk = 1u << 30;

uint16_t Load16(const uint8_t* bytes) {
  return static_cast<uint16_t>(bytes[0] | (bytes[1] << 8));
}
uint32_t Load32(const uint8_t* bytes) {
  return static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8) |
         (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
}
uint64_t Load64(const uint8_t* bytes) {
  return static_cast<uint64_t>(Load32(bytes)) | (static_cast<uint64_t>(Load32(bytes + 4)) << 32);
}

void Append16(std::vector<uint8_t>& output, uint16_t value) {
  output.push_back(static_cast<uint8_t>(value));
  output.push_back(static_cast<uint8_t>(value >> 8));
}
void Append32(std::vector<uint8_t>& output, uint32_t value) {
  Append16(output, static_cast<uint16_t>(value));
  Append16(output, static_cast<uint16_t>(value >> 16));
}
void Append64(std::vector<uint8_t>& output, uint64_t value) {
  Append32(output, static_cast<uint32_t>(value));
  Append32(output, static_cast<uint32_t>(value >> 32));
}
void AppendBytes(std::vector<uint8_t>& output, std::string_view bytes) {
  output.insert(output.end(), bytes.begin(), bytes.end());
}

uint32_t Clamp32(uint64_t value) {
  return value >= kSentinel32 ? kSentinel32 : static_cast<uint32_t>(value);
}

std::string Hex32(uint32_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) text += kDigits[(value >> shift) & 0xF];
  return text;
}

// Ends a zlib stream on every path out of a scope.
class InflateStream {
 public:
  InflateStream() {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) {
      RELAY_UNREACHABLE("inflateInit2 failed: out of memory or a zlib version mismatch");
    }
  }
  ~InflateStream() { inflateEnd(&stream_); }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
};

class DeflateStream {
 public:
  DeflateStream() {
    if (deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      RELAY_UNREACHABLE("deflateInit2 failed: out of memory or a zlib version mismatch");
    }
  }
  ~DeflateStream() { deflateEnd(&stream_); }
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
};

// Raw deflate of `data` (no zlib or gzip wrapper, as ZIP wants).
std::vector<uint8_t> Deflate(std::span<const uint8_t> data) {
  DeflateStream deflater;
  z_stream* stream = deflater.get();
  std::vector<uint8_t> output;
  const uint8_t* input = data.data();
  uint64_t input_left = data.size();
  uint8_t chunk[1 << 16];
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (stream->avail_in == 0 && input_left > 0) {
      const uint64_t piece = std::min(input_left, kZlibChunk);
      stream->next_in = const_cast<Bytef*>(input);
      stream->avail_in = static_cast<uInt>(piece);
      input += piece;
      input_left -= piece;
    }
    stream->next_out = chunk;
    stream->avail_out = sizeof chunk;
    status = deflate(stream, input_left == 0 ? Z_FINISH : Z_NO_FLUSH);
    RELAY_CHECK(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR,
                "zlib deflate failed with status " + std::to_string(status));
    output.insert(output.end(), chunk, chunk + (sizeof chunk - stream->avail_out));
  }
  return output;
}

// A system error with the failing operation and errno's text.
[[noreturn]] void ThrowFileError(ErrorKind kind, const std::string& path,
                                 std::string_view operation, int error_number) {
  throw Error(kind, std::string(operation) + ": " + std::strerror(error_number),
              SourceSpan{.file = path});
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int descriptor) : descriptor_(descriptor) {}
  ~FileDescriptor() {
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return descriptor_; }
  // Closes now so that the caller sees close's error (it can report a
  // deferred write failure on some file systems).
  int Close() { return ::close(std::exchange(descriptor_, -1)); }

 private:
  int descriptor_;
};

}  // namespace

uint32_t Crc32(std::span<const uint8_t> bytes) {
  return static_cast<uint32_t>(crc32_z(0, bytes.data(), bytes.size()));
}

std::string PrintableExcerpt(std::string_view text, size_t limit) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string result;
  for (const char character : text) {
    if (result.size() >= limit) {
      result += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(character);
    if (byte >= 0x20 && byte < 0x7F) {
      result += character;
    } else {
      result += "\\x";
      result += kDigits[byte >> 4];
      result += kDigits[byte & 0xF];
    }
  }
  return result;
}

// ---- reading -----------------------------------------------------------------

void ZipReader::ThrowArchiveError(std::string_view what) const {
  throw Error(ErrorKind::kLoad, std::string(what), SourceSpan{.file = archive_name_});
}

void ZipReader::ThrowMemberError(const ZipMember& member, std::string_view what) const {
  ThrowArchiveError("member '" + PrintableExcerpt(member.name) + "': " + std::string(what));
}

ZipReader::ZipReader(std::span<const uint8_t> archive, std::string archive_name)
    : archive_(archive), archive_name_(std::move(archive_name)) {
  const uint8_t* const data = archive_.data();
  const uint64_t size = archive_.size();
  if (size < kEndBytes) {
    ThrowArchiveError("not a zip archive: " + std::to_string(size) +
                      " bytes is too short for an end-of-central-directory record");
  }

  // The end record sits at the very end, followed only by its comment; a
  // match must account for every byte after it.
  const uint64_t search_floor =
      size > kEndBytes + kMaximumCommentBytes ? size - kEndBytes - kMaximumCommentBytes : 0;
  uint64_t end_offset = size;
  for (uint64_t offset = size - kEndBytes + 1; offset-- > search_floor;) {
    if (Load32(data + offset) == kEndSignature &&
        offset + kEndBytes + Load16(data + offset + 20) == size) {
      end_offset = offset;
      break;
    }
  }
  if (end_offset == size) {
    ThrowArchiveError("not a zip archive: no end-of-central-directory record");
  }
  const uint8_t* end = data + end_offset;
  uint64_t disk_number = Load16(end + 4);
  uint64_t directory_disk = Load16(end + 6);
  uint64_t entries_on_disk = Load16(end + 8);
  uint64_t entry_count = Load16(end + 10);
  uint64_t directory_size = Load32(end + 12);
  uint64_t directory_offset = Load32(end + 16);
  uint64_t end_records_start = end_offset;

  if (end_offset >= kZip64LocatorBytes &&
      Load32(end - kZip64LocatorBytes) == kZip64LocatorSignature) {
    const uint8_t* locator = end - kZip64LocatorBytes;
    const uint64_t locator_offset = end_offset - kZip64LocatorBytes;
    const uint64_t zip64_end_offset = Load64(locator + 8);
    if (Load32(locator + 4) != 0 || Load32(locator + 16) > 1) {
      ThrowArchiveError("multi-disk zip archives are not supported");
    }
    if (zip64_end_offset > locator_offset || locator_offset - zip64_end_offset < kZip64EndBytes) {
      ThrowArchiveError("zip64 end-of-central-directory offset " +
                        std::to_string(zip64_end_offset) + " is out of bounds");
    }
    const uint8_t* zip64_end = data + zip64_end_offset;
    const uint64_t record_size = Load64(zip64_end + 4);
    if (Load32(zip64_end) != kZip64EndSignature) {
      ThrowArchiveError("bad zip64 end-of-central-directory signature at offset " +
                        std::to_string(zip64_end_offset));
    }
    if (record_size < kZip64EndBytes - 12 || record_size > locator_offset - zip64_end_offset - 12) {
      ThrowArchiveError("zip64 end-of-central-directory record has a bad size");
    }
    disk_number = Load32(zip64_end + 16);
    directory_disk = Load32(zip64_end + 20);
    entries_on_disk = Load64(zip64_end + 24);
    entry_count = Load64(zip64_end + 32);
    directory_size = Load64(zip64_end + 40);
    directory_offset = Load64(zip64_end + 48);
    end_records_start = zip64_end_offset;
  }
  if (disk_number != 0 || directory_disk != 0 || entries_on_disk != entry_count) {
    ThrowArchiveError("multi-disk zip archives are not supported");
  }
  if (directory_offset > end_records_start ||
      directory_size > end_records_start - directory_offset) {
    ThrowArchiveError("central directory (" + std::to_string(directory_size) + " bytes at offset " +
                      std::to_string(directory_offset) + ") lies outside the archive");
  }
  if (entry_count > directory_size / kCentralHeaderBytes) {
    ThrowArchiveError("central directory declares " + std::to_string(entry_count) +
                      " entries but has room for at most " +
                      std::to_string(directory_size / kCentralHeaderBytes));
  }

  struct Extent {
    uint64_t begin;
    uint64_t end;
    size_t member_index;
  };
  std::vector<Extent> extents;
  members_.reserve(entry_count);
  extents.reserve(entry_count);
  const uint64_t directory_end = directory_offset + directory_size;
  uint64_t position = directory_offset;
  for (uint64_t index = 0; index < entry_count; ++index) {
    const std::string entry_label = "central directory entry " + std::to_string(index);
    if (directory_end - position < kCentralHeaderBytes)
      ThrowArchiveError(entry_label + " is truncated");
    const uint8_t* header = data + position;
    if (Load32(header) != kCentralHeaderSignature) {
      ThrowArchiveError("bad signature for " + entry_label + " at offset " +
                        std::to_string(position));
    }
    const uint16_t flags = Load16(header + 8);
    const uint16_t method = Load16(header + 10);
    const size_t name_length = Load16(header + 28);
    const size_t extra_length = Load16(header + 30);
    const size_t comment_length = Load16(header + 32);
    if (directory_end - position - kCentralHeaderBytes <
        name_length + extra_length + comment_length) {
      ThrowArchiveError(entry_label + " is truncated");
    }
    ZipMember member;
    member.name.assign(reinterpret_cast<const char*>(header + kCentralHeaderBytes), name_length);
    member.crc32 = Load32(header + 16);
    member.compressed_size = Load32(header + 20);
    member.uncompressed_size = Load32(header + 24);
    uint64_t disk_start = Load16(header + 34);
    uint64_t local_header_offset = Load32(header + 42);

    // The zip64 extra field holds, in this order, exactly those values whose
    // 32-bit (or 16-bit) slots are saturated.
    const bool needs_uncompressed = member.uncompressed_size == kSentinel32;
    const bool needs_compressed = member.compressed_size == kSentinel32;
    const bool needs_offset = local_header_offset == kSentinel32;
    const bool needs_disk = disk_start == kSentinel16;
    if (needs_uncompressed || needs_compressed || needs_offset || needs_disk) {
      const uint8_t* extra = header + kCentralHeaderBytes + name_length;
      const uint8_t* extra_end = extra + extra_length;
      bool found = false;
      while (extra_end - extra >= 4) {
        const uint16_t id = Load16(extra);
        const size_t field_size = Load16(extra + 2);
        if (static_cast<size_t>(extra_end - extra - 4) < field_size) {
          ThrowMemberError(member, "extra field overruns its central directory entry");
        }
        if (id == kZip64ExtraId) {
          const size_t required =
              8 * (needs_uncompressed + needs_compressed + needs_offset) + 4 * needs_disk;
          if (field_size < required) ThrowMemberError(member, "zip64 extra field is too short");
          const uint8_t* field = extra + 4;
          if (needs_uncompressed) {
            member.uncompressed_size = Load64(field);
            field += 8;
          }
          if (needs_compressed) {
            member.compressed_size = Load64(field);
            field += 8;
          }
          if (needs_offset) {
            local_header_offset = Load64(field);
            field += 8;
          }
          if (needs_disk) disk_start = Load32(field);
          found = true;
          break;
        }
        extra += 4 + field_size;
      }
      if (!found) ThrowMemberError(member, "sizes need a zip64 extra field, which is missing");
    }

    if (flags & (kFlagEncrypted | kFlagStrongEncryption)) {
      ThrowMemberError(member, "is encrypted, which is not supported");
    }
    if (method != static_cast<uint16_t>(ZipMethod::kStored) &&
        method != static_cast<uint16_t>(ZipMethod::kDeflate)) {
      ThrowMemberError(member, "unsupported compression method " + std::to_string(method) +
                                   " (only 0, stored, and 8, deflate)");
    }
    member.method = static_cast<ZipMethod>(method);
    if (disk_start != 0) ThrowArchiveError("multi-disk zip archives are not supported");

    // The local header repeats the name and has its own extra field; only
    // its lengths matter for finding the data, since the central directory
    // is authoritative for sizes (numpy.savez leaves them saturated here).
    if (local_header_offset > directory_offset ||
        directory_offset - local_header_offset < kLocalHeaderBytes) {
      ThrowMemberError(member, "local header offset " + std::to_string(local_header_offset) +
                                   " is out of bounds");
    }
    const uint8_t* local = data + local_header_offset;
    if (Load32(local) != kLocalHeaderSignature) {
      ThrowMemberError(
          member, "bad local header signature at offset " + std::to_string(local_header_offset));
    }
    const uint64_t local_name_length = Load16(local + 26);
    const uint64_t local_extra_length = Load16(local + 28);
    const uint64_t data_offset =
        local_header_offset + kLocalHeaderBytes + local_name_length + local_extra_length;
    if (data_offset > directory_offset) {
      ThrowMemberError(member, "local header runs into the central directory");
    }
    if (std::string_view(reinterpret_cast<const char*>(local + kLocalHeaderBytes),
                         local_name_length) != member.name) {
      ThrowMemberError(member, "local header names a different file");
    }
    if (member.compressed_size > directory_offset - data_offset) {
      ThrowMemberError(member, "data (" + std::to_string(member.compressed_size) +
                                   " bytes at offset " + std::to_string(data_offset) +
                                   ") runs past the central directory");
    }
    if (member.method == ZipMethod::kStored && member.compressed_size != member.uncompressed_size) {
      ThrowMemberError(member, "stored data declares " + std::to_string(member.compressed_size) +
                                   " compressed but " + std::to_string(member.uncompressed_size) +
                                   " uncompressed bytes");
    }
    if (member.method == ZipMethod::kDeflate &&
        member.uncompressed_size > kMaximumDeflateRatio * member.compressed_size + kDeflateSlack) {
      ThrowMemberError(member, "declares " + std::to_string(member.uncompressed_size) +
                                   " bytes inflated from " +
                                   std::to_string(member.compressed_size) +
                                   ", more than deflate can produce (a decompression bomb?)");
    }
    member.data_offset = data_offset;
    extents.push_back({local_header_offset, data_offset + member.compressed_size, members_.size()});
    members_.push_back(std::move(member));
    position += kCentralHeaderBytes + name_length + extra_length + comment_length;
  }

  // Members sharing bytes would let a small archive inflate many times over.
  std::sort(extents.begin(), extents.end(),
            [](const Extent& left, const Extent& right) { return left.begin < right.begin; });
  for (size_t index = 1; index < extents.size(); ++index) {
    if (extents[index].begin < extents[index - 1].end) {
      ThrowMemberError(members_[extents[index].member_index], "overlaps another member");
    }
  }
}

std::span<const uint8_t> ZipReader::Extract(const ZipMember& member,
                                            std::vector<uint8_t>& scratch) const {
  std::span<const uint8_t> result;
  const std::span<const uint8_t> compressed =
      archive_.subspan(member.data_offset, member.compressed_size);
  if (member.method == ZipMethod::kStored) {
    result = compressed;
  } else {
    scratch.resize(member.uncompressed_size);
    InflateStream inflater;
    z_stream* stream = inflater.get();
    // zlib rejects a null output pointer even when there is no room to write.
    uint8_t no_output[1];
    stream->next_out = no_output;
    stream->avail_out = 0;
    const uint8_t* input = compressed.data();
    uint64_t input_left = compressed.size();
    uint8_t* output = scratch.data();
    uint64_t output_left = scratch.size();
    while (true) {
      if (stream->avail_in == 0 && input_left > 0) {
        const uint64_t piece = std::min(input_left, kZlibChunk);
        stream->next_in = const_cast<Bytef*>(input);
        stream->avail_in = static_cast<uInt>(piece);
        input += piece;
        input_left -= piece;
      }
      if (stream->avail_out == 0 && output_left > 0) {
        const uint64_t piece = std::min(output_left, kZlibChunk);
        stream->next_out = output;
        stream->avail_out = static_cast<uInt>(piece);
        output += piece;
        output_left -= piece;
      }
      const int status = inflate(stream, Z_NO_FLUSH);
      if (status == Z_STREAM_END) break;
      if (status == Z_BUF_ERROR) {
        // No progress was possible: either the output is full or the input
        // ran out before the end of the stream.
        if (stream->avail_out == 0 && output_left == 0) {
          ThrowMemberError(member, "inflates to more than its declared " +
                                       std::to_string(member.uncompressed_size) + " bytes");
        }
        ThrowMemberError(member, "deflate data is truncated");
      }
      if (status != Z_OK) {
        ThrowMemberError(member, std::string("corrupt deflate data (zlib: ") +
                                     (stream->msg ? stream->msg : "unknown error") + ")");
      }
    }
    const uint64_t produced = scratch.size() - output_left - stream->avail_out;
    if (produced != member.uncompressed_size) {
      ThrowMemberError(member, "inflates to " + std::to_string(produced) +
                                   " bytes, not the declared " +
                                   std::to_string(member.uncompressed_size));
    }
    if (stream->avail_in != 0 || input_left != 0) {
      ThrowMemberError(member, "has data after the end of its deflate stream");
    }
    result = scratch;
  }
  const uint32_t computed = Crc32(result);
  if (computed != member.crc32) {
    ThrowMemberError(member, "CRC-32 mismatch (stored " + Hex32(member.crc32) + ", computed " +
                                 Hex32(computed) + ")");
  }
  return result;
}

// ---- writing -----------------------------------------------------------------

void ZipWriter::Add(std::string_view name, std::span<const uint8_t> data, ZipMethod method) {
  if (name.size() > kSentinel16) {
    throw Error(ErrorKind::kUsage, "zip member name of " + std::to_string(name.size()) +
                                       " bytes is longer than the 65535 ZIP allows");
  }
  std::vector<uint8_t> deflated;
  std::span<const uint8_t> stored_bytes = data;
  if (method == ZipMethod::kDeflate) {
    deflated = Deflate(data);
    stored_bytes = deflated;
  }
  CentralRecord record{std::string(name),   method,      Crc32(data),
                       stored_bytes.size(), data.size(), output_.size()};
  const bool zip64 = force_zip64_ || record.uncompressed_size >= kSentinel32 ||
                     record.compressed_size >= kSentinel32;
  const bool ascii_name = std::all_of(name.begin(), name.end(), [](char character) {
    return static_cast<unsigned char>(character) < 0x80;
  });

  Append32(output_, kLocalHeaderSignature);
  Append16(output_, zip64 ? kVersionZip64 : kVersionDefault);
  Append16(output_, ascii_name ? 0 : kFlagUtf8Name);
  Append16(output_, static_cast<uint16_t>(method));
  Append16(output_, 0);  // modification time: midnight
  Append16(output_, kDosDate1980);
  Append32(output_, record.crc32);
  Append32(output_, zip64 ? kSentinel32 : static_cast<uint32_t>(record.compressed_size));
  Append32(output_, zip64 ? kSentinel32 : static_cast<uint32_t>(record.uncompressed_size));
  Append16(output_, static_cast<uint16_t>(name.size()));
  Append16(output_, zip64 ? 20 : 0);
  AppendBytes(output_, name);
  if (zip64) {
    Append16(output_, kZip64ExtraId);
    Append16(output_, 16);
    Append64(output_, record.uncompressed_size);
    Append64(output_, record.compressed_size);
  }
  output_.insert(output_.end(), stored_bytes.begin(), stored_bytes.end());
  records_.push_back(std::move(record));
}

std::vector<uint8_t> ZipWriter::Finish() && {
  const uint64_t directory_offset = output_.size();
  for (const CentralRecord& record : records_) {
    const bool zip64_uncompressed = force_zip64_ || record.uncompressed_size >= kSentinel32;
    const bool zip64_compressed = force_zip64_ || record.compressed_size >= kSentinel32;
    const bool zip64_offset = force_zip64_ || record.local_header_offset >= kSentinel32;
    const uint16_t extra_data_size =
        static_cast<uint16_t>(8 * (zip64_uncompressed + zip64_compressed + zip64_offset));
    const bool any_zip64 = extra_data_size > 0;
    const uint16_t version = any_zip64 ? kVersionZip64 : kVersionDefault;
    const bool ascii_name = std::all_of(record.name.begin(), record.name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x80;
    });

    Append32(output_, kCentralHeaderSignature);
    Append16(output_, kMadeByUnix | version);
    Append16(output_, version);
    Append16(output_, ascii_name ? 0 : kFlagUtf8Name);
    Append16(output_, static_cast<uint16_t>(record.method));
    Append16(output_, 0);
    Append16(output_, kDosDate1980);
    Append32(output_, record.crc32);
    Append32(output_, zip64_compressed ? kSentinel32 : Clamp32(record.compressed_size));
    Append32(output_, zip64_uncompressed ? kSentinel32 : Clamp32(record.uncompressed_size));
    Append16(output_, static_cast<uint16_t>(record.name.size()));
    Append16(output_, any_zip64 ? static_cast<uint16_t>(4 + extra_data_size) : 0);
    Append16(output_, 0);  // comment length
    Append16(output_, 0);  // disk number start
    Append16(output_, 0);  // internal attributes
    Append32(output_, kRegularFileAttributes);
    Append32(output_, zip64_offset ? kSentinel32 : Clamp32(record.local_header_offset));
    AppendBytes(output_, record.name);
    if (any_zip64) {
      Append16(output_, kZip64ExtraId);
      Append16(output_, extra_data_size);
      if (zip64_uncompressed) Append64(output_, record.uncompressed_size);
      if (zip64_compressed) Append64(output_, record.compressed_size);
      if (zip64_offset) Append64(output_, record.local_header_offset);
    }
  }
  const uint64_t directory_size = output_.size() - directory_offset;
  const uint64_t entry_count = records_.size();

  if (force_zip64_ || entry_count >= kSentinel16 || directory_size >= kSentinel32 ||
      directory_offset >= kSentinel32) {
    const uint64_t zip64_end_offset = output_.size();
    Append32(output_, kZip64EndSignature);
    Append64(output_, kZip64EndBytes - 12);  // the record's size after this field
    Append16(output_, kMadeByUnix | kVersionZip64);
    Append16(output_, kVersionZip64);
    Append32(output_, 0);  // this disk
    Append32(output_, 0);  // disk holding the central directory
    Append64(output_, entry_count);
    Append64(output_, entry_count);
    Append64(output_, directory_size);
    Append64(output_, directory_offset);

    Append32(output_, kZip64LocatorSignature);
    Append32(output_, 0);  // disk holding the zip64 end record
    Append64(output_, zip64_end_offset);
    Append32(output_, 1);  // total disks
  }
  const uint16_t short_count =
      entry_count >= kSentinel16 ? kSentinel16 : static_cast<uint16_t>(entry_count);
  Append32(output_, kEndSignature);
  Append16(output_, 0);
  Append16(output_, 0);
  Append16(output_, short_count);
  Append16(output_, short_count);
  Append32(output_, Clamp32(directory_size));
  Append32(output_, Clamp32(directory_offset));
  Append16(output_, 0);  // comment length
  records_.clear();
  return std::move(output_);
}

// ---- files -------------------------------------------------------------------

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) ThrowFileError(ErrorKind::kLoad, path, "cannot open", errno);
  struct stat status {};
  if (::fstat(file.get(), &status) != 0)
    ThrowFileError(ErrorKind::kLoad, path, "cannot read", errno);
  std::vector<uint8_t> bytes;
  // Regular files announce their size; pipes and the like are read to EOF.
  size_t capacity = S_ISREG(status.st_mode) ? static_cast<size_t>(status.st_size) + 1 : 1 << 16;
  bytes.resize(capacity);
  size_t filled = 0;
  while (true) {
    if (filled == bytes.size()) bytes.resize(bytes.size() * 2);
    const ssize_t count = ::read(file.get(), bytes.data() + filled, bytes.size() - filled);
    if (count < 0) {
      if (errno == EINTR) continue;
      ThrowFileError(ErrorKind::kLoad, path, "cannot read", errno);
    }
    if (count == 0) break;
    filled += static_cast<size_t>(count);
  }
  bytes.resize(filled);
  return bytes;
}

void WriteFileAtomically(const std::string& path,
                         std::span<const std::span<const uint8_t>> pieces) {
  // The temporary lives in the destination's directory so that rename() is
  // atomic; its name is unique within this process and O_EXCL guards
  // against other processes.
  static std::atomic<uint64_t> counter{0};
  std::string temporary_path;
  int descriptor = -1;
  for (int attempt = 0; attempt < 100 && descriptor < 0; ++attempt) {
    temporary_path = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    descriptor = ::open(temporary_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (descriptor < 0 && errno != EEXIST) break;
  }
  if (descriptor < 0) ThrowFileError(ErrorKind::kRuntime, path, "cannot create file", errno);
  FileDescriptor file(descriptor);

  const auto fail = [&](std::string_view operation, int error_number) {
    if (file.get() >= 0) file.Close();
    ::unlink(temporary_path.c_str());
    ThrowFileError(ErrorKind::kRuntime, path, operation, error_number);
  };
  for (const std::span<const uint8_t> piece : pieces) {
    size_t written = 0;
    while (written < piece.size()) {
      const ssize_t count = ::write(file.get(), piece.data() + written, piece.size() - written);
      if (count < 0) {
        if (errno == EINTR) continue;
        fail("cannot write", errno);
      }
      written += static_cast<size_t>(count);
    }
  }
  if (::fsync(file.get()) != 0) fail("cannot write", errno);
  if (file.Close() != 0) fail("cannot write", errno);
  if (::rename(temporary_path.c_str(), path.c_str()) != 0) fail("cannot replace file", errno);
}

}  // namespace relay::detail
