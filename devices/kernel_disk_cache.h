// The on-disk cache of compiled kernels that every backend shares: the
// CPU's object files (kernels/codegen/llvm), OpenCL program binaries and
// CUDA's PTX.
//
// One file per key, named by a hash of the key and an extension that names
// the kind of payload:
//   magic "RLYKOBJ\0" | format version u32 | key size u32 | payload size u64
//   | payload checksum u64 | key bytes | payload bytes
// Integers are in host byte order: keys name the target (host CPU
// features, the device and its driver), so a file is only ever read by the
// kind of machine that wrote it. The full key is stored and compared, so a
// file-name hash collision is a miss, never a wrong kernel; a truncated,
// corrupt or foreign file is rejected, and the caller rebuilds and
// overwrites it.
//
// Thread-safety: Load and Store may run in many threads and processes at
// once: writes are atomic (a file of its own renamed over the final name).
// Errors: none thrown; Store reports failure by its result.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace relay::devices {

// The directory the environment selects: $RELAY_CACHE_DIR when set ("off" or
// empty disables the cache and gives ""), else $XDG_CACHE_HOME/relay-vm/
// kernels, else $HOME/.cache/relay-vm/kernels, else "" (no cache). The
// directory is not created here.
std::string DefaultKernelCacheDirectory();

class KernelDiskCache {
 public:
  // A cache in `directory` ("" disables it) whose entries carry
  // `format_version` (entries of another version are rejected) and whose
  // files end in `extension` (".relay-object").
  KernelDiskCache(std::string directory, uint32_t format_version, std::string extension);

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  enum class LoadOutcome { kMissing, kRejected, kFound };
  // Reads the payload stored under `full_key`. kRejected: a file exists but
  // is truncated, corrupt, of another version or written for another key.
  LoadOutcome Load(const std::string& full_key, std::string& payload) const;
  // Writes the entry atomically; false when it could not be written.
  bool Store(const std::string& full_key, std::string_view payload) const;
  // The file an entry goes to.
  std::string PathFor(const std::string& full_key) const;

 private:
  std::string directory_;
  uint32_t format_version_;
  std::string extension_;
};

}  // namespace relay::devices
