// The device interface (docs/architecture.md, "Devices").
//
// A Device owns a memory pool and moves bytes in and out of it. Device memory
// is addressed by an opaque handle plus a byte offset, as DLPack does: on the
// CPU the handle is a host pointer, on CUDA a CUdeviceptr, on OpenCL a cl_mem.
// Kernel compilation, loading and launching join this interface with the
// kernel pipeline (issue 4).
//
// Thread-safety: every method may be called from many threads at once.
// Errors: failures throw relay::Error of kind kDevice naming the device and
// the operation; exhausted memory is reported the same way, never by nullptr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relay {

// Values match DLPack's DLDeviceType so conversion is a cast.
enum class DeviceKind : int32_t {
  kCPU = 1,     // kDLCPU
  kCUDA = 2,    // kDLCUDA
  kOpenCL = 4,  // kDLOpenCL
  kXRT = 12,    // kDLExtDev: DLPack has no code of its own for Xilinx FPGAs
};

std::string_view DeviceKindName(DeviceKind kind);  // "cpu", "cuda", "opencl", "xrt"

struct DeviceId {
  DeviceKind kind = DeviceKind::kCPU;
  int32_t index = 0;

  bool operator==(const DeviceId&) const = default;
  std::string ToString() const;  // "cpu:0", "cuda:1"
};

// Parses "cpu", "cpu:0", "cuda:1", ...; nullopt on anything else.
std::optional<DeviceId> ParseDeviceId(std::string_view text);

// Every allocation is aligned to this many bytes so kernels may use aligned
// vector loads on any tensor that starts at offset 0.
inline constexpr size_t kAllocationAlignment = 64;

struct MemoryStatistics {
  size_t bytes_in_use = 0;  // handed out and not yet freed (rounded sizes)
  size_t bytes_cached = 0;  // freed blocks kept for reuse
  size_t peak_bytes_in_use = 0;
  size_t bytes_limit = 0;    // cap on in_use + cached; 0 = no cap
  uint64_t allocations = 0;  // successful Allocate calls
  uint64_t reuses = 0;       // allocations served from the cache
  uint64_t frees = 0;
  uint64_t blocks_released = 0;        // cached blocks returned to the system (trim or retry)
  uint64_t retries_after_release = 0;  // allocations that succeeded only after releasing cache
  uint64_t failed_allocations = 0;     // out-of-memory errors reported
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceId id() const = 0;
  // A line for users: "cpu:0 (host, 64-byte aligned pool)".
  virtual std::string description() const = 0;

  // Returns a handle to at least `bytes` bytes (a distinct valid handle even
  // for 0 bytes). Throws kDevice when the device is out of memory.
  virtual void* Allocate(size_t bytes) = 0;
  // `bytes` must be the value passed to the Allocate that returned `handle`.
  virtual void Free(void* handle, size_t bytes) = 0;

  virtual void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                            size_t bytes) = 0;
  virtual void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                          size_t bytes) = 0;
  virtual void CopyWithinDevice(const void* source_handle, size_t source_offset,
                                void* destination_handle, size_t destination_offset,
                                size_t bytes) = 0;
  // Waits until all work queued on this device has finished.
  virtual void Synchronize() = 0;

  virtual MemoryStatistics memory_statistics() const = 0;
  // Returns every cached (free) block to the system.
  virtual void ReleaseCachedMemory() = 0;
  // Sets the cap on memory held (in use + cached); 0 removes the cap.
  virtual void SetMemoryLimit(size_t bytes) = 0;

  // Whether the host can read the handle's memory directly (the CPU device).
  bool host_accessible() const { return id().kind == DeviceKind::kCPU; }
};

}  // namespace relay
