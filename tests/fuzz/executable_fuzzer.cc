// libFuzzer target over the .rbc loader (vm/bytecode/executable_file.h).
//
// Any bytes may be rejected, but only with a kLoad error: a crash, a hang, a
// sanitizer report or any other kind of error is a bug. An executable that
// loads must pass Verify again, disassemble, and save to the bytes that
// load to the same listing.
//
// Random mutations almost never keep the CRC32 checksums right, so each input
// is also loaded with its checksums recomputed (the layout is documented in
// executable_file.h), which lets the fuzzer reach the section parsers and
// the verifier.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "relay/error.h"
#include "vm/bytecode/executable_file.h"
#include "vm/core/zip_archive.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "executable_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

constexpr size_t kSectionCountOffset = 12;
constexpr size_t kTableOffset = 16;
constexpr size_t kEntryBytes = 24;

uint64_t GetLittle(const std::string& bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t byte = 0; byte < width; ++byte)
    value |= uint64_t(uint8_t(bytes[offset + byte])) << (8 * byte);
  return value;
}

void PutLittle(std::string& bytes, size_t offset, size_t width, uint64_t value) {
  for (size_t byte = 0; byte < width; ++byte) bytes[offset + byte] = char(value >> (8 * byte));
}

std::span<const uint8_t> BytesOf(const std::string& bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

// `bytes` with every checksum made to match; false if the table is cut off
// or lists neither 5 nor 6 sections (6 with the optional debug section).
bool RecomputeChecksums(std::string& bytes) {
  if (bytes.size() < kTableOffset) return false;
  const uint64_t sections = GetLittle(bytes, kSectionCountOffset, 4);
  if (sections != 5 && sections != 6) return false;
  const size_t table_checksum_offset = kTableOffset + sections * kEntryBytes;
  if (bytes.size() < table_checksum_offset + 4) return false;
  for (size_t entry = 0; entry < sections; ++entry) {
    const size_t at = kTableOffset + entry * kEntryBytes;
    const uint64_t offset = GetLittle(bytes, at + 8, 8);
    const uint64_t size = GetLittle(bytes, at + 16, 8);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    PutLittle(bytes, at + 4, 4, relay::detail::Crc32(BytesOf(bytes).subspan(offset, size)));
  }
  PutLittle(bytes, table_checksum_offset, 4,
            relay::detail::Crc32(BytesOf(bytes).first(table_checksum_offset)));
  return true;
}

void LoadAndCheck(std::span<const uint8_t> bytes) {
  relay::vm::Executable executable;
  try {
    executable = relay::vm::LoadExecutable(bytes, "fuzz.rbc");
  } catch (const relay::Error& error) {
    if (error.kind() != relay::ErrorKind::kLoad) Fail("error of the wrong kind", error.what());
    return;
  }
  try {
    relay::vm::Verify(executable);
    const std::string listing = relay::vm::Disassemble(executable);
    const std::string saved = relay::vm::SerializeExecutable(executable);
    relay::vm::Executable reloaded = relay::vm::LoadExecutable(BytesOf(saved), "saved.rbc");
    if (relay::vm::Disassemble(reloaded) != listing) Fail("save and load changed it", listing);
  } catch (const relay::Error& error) {
    Fail("a loaded executable failed afterwards", error.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LoadAndCheck(std::span<const uint8_t>(data, size));
  std::string fixed(reinterpret_cast<const char*>(data), size);
  if (RecomputeChecksums(fixed)) LoadAndCheck(BytesOf(fixed));
  return 0;
}
