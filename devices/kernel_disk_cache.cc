#include "devices/kernel_disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace relay::devices {

namespace {

constexpr char kMagic[8] = {'R', 'L', 'Y', 'K', 'O', 'B', 'J', '\0'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;

template <typename T>
void AppendInteger(std::string& bytes, T value) {
  char buffer[sizeof(T)];
  std::memcpy(buffer, &value, sizeof(T));
  bytes.append(buffer, sizeof(T));
}

template <typename T>
T ReadInteger(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// 64-bit FNV-1a: it detects a damaged file and spreads names; keys are
// compared in full, so it need not resist collisions.
uint64_t Checksum(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (const char byte : bytes) {
    hash ^= static_cast<uint8_t>(byte);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

std::string DefaultKernelCacheDirectory() {
  if (const char* override_directory = std::getenv("RELAY_CACHE_DIR")) {
    std::string_view value = override_directory;
    if (value.empty() || value == "off") return "";
    return std::string(value);
  }
  // The XDG base-directory specification says relative values are ignored.
  const char* xdg_cache_home = std::getenv("XDG_CACHE_HOME");
  if (xdg_cache_home != nullptr && xdg_cache_home[0] == '/') {
    return std::string(xdg_cache_home) + "/relay-vm/kernels";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/relay-vm/kernels";
  return "";
}

KernelDiskCache::KernelDiskCache(std::string directory, uint32_t format_version,
                                 std::string extension)
    : directory_(std::move(directory)),
      format_version_(format_version),
      extension_(std::move(extension)) {}

KernelDiskCache::LoadOutcome KernelDiskCache::Load(const std::string& full_key,
                                                   std::string& payload) const {
  std::ifstream file(PathFor(full_key), std::ios::binary);
  if (!file) return LoadOutcome::kMissing;
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad() || bytes.size() < kHeaderSize) return LoadOutcome::kRejected;
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return LoadOutcome::kRejected;
  size_t offset = sizeof(kMagic);
  auto version = ReadInteger<uint32_t>(bytes, offset);
  auto key_size = ReadInteger<uint32_t>(bytes, offset + 4);
  auto payload_size = ReadInteger<uint64_t>(bytes, offset + 8);
  auto payload_checksum = ReadInteger<uint64_t>(bytes, offset + 16);
  if (version != format_version_) return LoadOutcome::kRejected;
  // Sizes are checked against the file before any arithmetic can overflow.
  size_t body_size = bytes.size() - kHeaderSize;
  if (key_size > body_size || payload_size != body_size - key_size) {
    return LoadOutcome::kRejected;
  }
  std::string_view stored_key(bytes.data() + kHeaderSize, key_size);
  std::string_view stored_payload(bytes.data() + kHeaderSize + key_size, payload_size);
  if (stored_key != full_key || Checksum(stored_payload) != payload_checksum) {
    return LoadOutcome::kRejected;
  }
  payload.assign(stored_payload);
  return LoadOutcome::kFound;
}

bool KernelDiskCache::Store(const std::string& full_key, std::string_view payload) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  std::string bytes(kMagic, sizeof(kMagic));
  AppendInteger<uint32_t>(bytes, format_version_);
  AppendInteger<uint32_t>(bytes, static_cast<uint32_t>(full_key.size()));
  AppendInteger<uint64_t>(bytes, payload.size());
  AppendInteger<uint64_t>(bytes, Checksum(payload));
  bytes += full_key;
  bytes += payload;

  static std::atomic<uint64_t> temporary_counter{0};
  std::string final_path = PathFor(full_key);
  std::string temporary_path = final_path + ".tmp." + std::to_string(::getpid()) + "." +
                               std::to_string(temporary_counter.fetch_add(1));
  {
    std::ofstream file(temporary_path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.close();
    if (!file) {
      std::filesystem::remove(temporary_path, error);
      return false;
    }
  }
  std::filesystem::rename(temporary_path, final_path, error);
  if (error) {
    std::filesystem::remove(temporary_path, error);
    return false;
  }
  return true;
}

std::string KernelDiskCache::PathFor(const std::string& full_key) const {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  uint64_t hash = Checksum(full_key);
  std::string name(16, '0');
  for (int digit = 15; digit >= 0; --digit, hash >>= 4) name[digit] = kHexDigits[hash & 0xf];
  return (std::filesystem::path(directory_) / (name + extension_)).string();
}

}  // namespace relay::devices
