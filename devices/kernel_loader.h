// Loading and launching kernels compiled from source text on a device.
//
// A device that compiles kernels at run time from C-like source (OpenCL C
// through clBuildProgram, CUDA C through NVRTC) is also a KernelLoader. The
// kernel pipeline (kernels/targets/) emits the source from kernel IR and
// asks the tensor's device to load it; nothing above this interface names
// a device kind. The CPU is not a KernelLoader: its kernels are LLVM IR,
// compiled by the JIT in kernels/codegen/llvm.
//
// Every loaded kernel follows one convention: its parameters are the
// buffers (each as the device passes a handle and a byte offset), then
// 64-bit integer scalars; a launch starts a 1-D grid of `threads` threads.
//
// Thread-safety: LoadKernel and Launch may be called from many threads.
// Errors: relay::Error of kind kDevice naming the device: a build failure
// carries the compiler's log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "relay/device.h"

namespace relay::devices {

enum class SourceDialect : uint8_t { kOpenClC, kCudaC };

// One buffer argument: a handle from the device's Allocate and a byte
// offset into it.
struct BufferArgument {
  const void* handle = nullptr;
  size_t byte_offset = 0;
};

class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  // Queues a launch of `threads` threads (none for 0) on the device's
  // in-order queue, which runs it after every copy and launch queued before
  // and before every one queued after; returns once it is queued. The
  // buffers must stay allocated until the device has run it (freeing a
  // block goes through the same queue on every device here).
  virtual void Launch(std::span<const BufferArgument> buffers, std::span<const int64_t> scalars,
                      int64_t threads) const = 0;
};

class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  virtual SourceDialect dialect() const = 0;
  // Whether the device's work-items run on CPU cores (PoCL, an OpenCL CPU
  // driver) rather than a GPU's: the GPU schedule then leaves out what only
  // pays on a GPU (see GpuScheduleOptions).
  virtual bool work_items_on_cpu_cores() const { return false; }
  // The compiled kernel named `entry` in `source`: built on first use and
  // kept for the life of the device (keyed by the text), so loading the
  // same source again costs a lookup.
  virtual std::shared_ptr<const LoadedKernel> LoadKernel(const std::string& source,
                                                         const std::string& entry) = 0;
};

// The kernels one device has built, by entry and source text, kept for the
// device's life; what each KernelLoader's LoadKernel looks up first.
class LoadedKernelCache {
 public:
  // The kernel built for (`source`, `entry`), or else the one `build()`
  // returns, kept. Builds hold the cache's lock: one text is built once.
  template <typename Build>
  std::shared_ptr<const LoadedKernel> GetOrBuild(const std::string& source,
                                                 const std::string& entry, Build&& build) {
    const std::string key = entry + '\n' + source;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = kernels_.find(key);
    if (found != kernels_.end()) return found->second;
    std::shared_ptr<const LoadedKernel> built = build();
    kernels_.emplace(key, built);
    return built;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const LoadedKernel>> kernels_;
};

// `device` as a KernelLoader, or nullptr for a device that loads no source
// (the CPU, XRT).
KernelLoader* KernelLoaderOf(Device& device);

}  // namespace relay::devices
