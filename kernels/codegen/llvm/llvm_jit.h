// The LLVM ORC JIT behind one small class (docs/architecture.md,
// "Kernel IR, schedules and the LLVM JIT").
//
// LlvmJit turns an llvm::Module into callable host code: it verifies the
// module, optimises it with LLVM's O3 pipeline for the host CPU (its real
// vector width and features: AVX2 / AVX-512 where present), compiles it to a
// relocatable object and links that object into the process with ORC.
// Compiled kernels are cached in memory (key -> address) and on disk (key ->
// object file), so a second process that asks for the same key links the
// cached object without building or optimising any IR.
//
// Only this class and the kernel-IR-to-LLVM lowering beside it include LLVM
// headers; this header forward-declares the two LLVM types it mentions.
//
// Thread-safety: every member function may be called from any thread. Builds
// of distinct keys run in parallel; callers asking for a key that another
// thread is building wait for it and then share its result.
//
// Lifetime: code returned by an LlvmJit stays valid until that LlvmJit is
// destroyed. HostJit() is never destroyed, so its code lives until exit.
//
// Errors: every failure is a relay::Error. kInternal: the module does not
// verify, or LLVM could not optimise, compile, link or find a symbol of a
// module that did verify (generated code is ours, so either is a bug).
// kUsage: DefineSymbol given a name already bound to another address.
// kDevice: the host target could not be set up. The disk cache never causes
// an error: an unreadable, corrupt or foreign entry is counted and rebuilt,
// and a failed write is counted and otherwise ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "devices/kernel_disk_cache.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace relay::kernels::llvm_backend {

// A module together with the context that owns its types and constants.
// The member order matters: the module is destroyed before its context.
struct BuiltModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

// Called only on a cache miss; returns the module to compile. May throw
// relay::Error, which reaches the caller of CompileOrReuse unchanged.
using BuildModuleFn = std::function<BuiltModule()>;

// Counters since construction. Each is exact (updated under a lock).
struct LlvmJitStatistics {
  uint64_t compiles = 0;      // IR modules optimised and compiled to objects
  uint64_t memory_hits = 0;   // CompileOrReuse answered from memory
  uint64_t disk_hits = 0;     // CompileOrReuse answered by a cached object file
  uint64_t disk_writes = 0;   // object files written to the disk cache
  uint64_t disk_rejects = 0;  // disk entries ignored: corrupt, truncated, foreign, unlinkable
  uint64_t disk_write_failures = 0;  // object files that could not be written
};

// The disk cache directory that the environment selects
// (devices/kernel_disk_cache.h, shared with the GPU backends).
using devices::DefaultKernelCacheDirectory;

// The version of the disk cache's file layout and key scheme. Part of every
// disk key: entries written under another version are never read. (2: the
// checksum became FNV-1a when the cache moved to devices/.)
inline constexpr uint32_t kKernelCacheFormatVersion = 2;

class LlvmJit {
 public:
  // A JIT for the host CPU with a disk cache in `cache_directory` ("" for
  // none); the directory is created on the first write. Initialises LLVM's
  // native target once per process. Throws kDevice if the host target cannot
  // be set up.
  explicit LlvmJit(std::string cache_directory);
  ~LlvmJit();
  LlvmJit(const LlvmJit&) = delete;
  LlvmJit& operator=(const LlvmJit&) = delete;

  // "TRIPLE cpu=NAME features=+a,+b,..." with every enabled feature, sorted.
  // Two hosts with equal descriptions run each other's objects; disk keys
  // include it.
  const std::string& TargetDescription() const;

  const std::string& cache_directory() const;

  // Binds `name` to `address` for code compiled afterwards (runtime entry
  // points such as a parallel-for, or data). Symbols not bound here are
  // looked up in the process (libm's expf, libc's memcpy, ...). Binding a
  // name again to the same address does nothing; to another address, or
  // after generated code has linked against the process's definition of the
  // name, it throws kUsage.
  void DefineSymbol(const std::string& name, void* address);

  // Verifies `module` (kInternal with the verifier's report on failure),
  // sets its target triple and data layout to the host's, gives functions
  // without them the host's target-cpu / target-features attributes, and
  // runs the O3 pipeline with the host's target information. `module` must
  // belong to a context no other thread is using. Compile does this itself;
  // it is public so that tests and debugging tools can see optimised IR.
  void Optimize(llvm::Module& module) const;

  // Optimises and compiles `module` (whose context is `context`), links it
  // and returns the address of `entry_symbol` (an unmangled name with
  // external linkage). Nothing is cached: each call compiles and links anew.
  // Takes ownership of both and frees them before returning. Each function
  // definition is emitted after 16 zero bytes, so that callers built with
  // clang's -fsanitize=function, which read the 8 bytes before an
  // indirectly called function, may call the returned address directly.
  void* Compile(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                const std::string& entry_symbol);

  // As Compile, but cached under `key`, which must identify the module's
  // content completely (structural hash, shapes, dtypes, codegen version);
  // the target, LLVM's version and the cache format are added here. Looks
  // in memory, then on disk; calls `build` only when both miss, then saves
  // the object to disk. The same key may be asked for with different entry
  // symbols of the module.
  void* CompileOrReuse(const std::string& key, const BuildModuleFn& build,
                       const std::string& entry_symbol);

  LlvmJitStatistics statistics() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide JIT, created on first use with DefaultKernelCacheDirectory()
// and never destroyed (kernels may still run while static objects are torn
// down at exit). With $RELAY_KERNEL_STATS set (and not "0"), the process
// prints HostJit's statistics to stderr at exit, in the words of
// FormatStatistics: how to see that a second run compiled nothing.
LlvmJit& HostJit();

// One line: "relay-vm: kernels: 3 compiled, 2 from the disk cache, 7 from
// memory, 3 written to the disk cache, 0 cache entries rejected".
std::string FormatStatistics(const LlvmJitStatistics& statistics);

// The width in bytes of the host CPU's widest vector registers (64 with
// AVX-512, 32 with AVX, else 16): schedules size register tiles by it.
int64_t HostVectorBytes();

}  // namespace relay::kernels::llvm_backend
