// The CUDA Driver API as one symbol table loaded at run time.
//
// CudaDriver holds a pointer for every driver entry point relay-vm uses,
// resolved by the exported (versioned) name from libcuda.so.1, which is opened
// with dlopen and never linked. This header and cuda_driver.cc are the only
// files that include cuda.h; cuda_device.cc uses cuda.h's types through them.
//
// Thread-safety: a CudaDriver is immutable once loaded; the driver's entry
// points are themselves thread-safe.
// Errors: relay::Error of kind kDevice. CUresult values are converted where
// they are returned, through Check(), naming the operation.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "devices/driver_library.h"

namespace relay::devices {

// Every entry point, as X(member, exported_symbol). The exported names carry
// the suffixes of the ABI revisions cuda.h maps the plain names to (cuMemAlloc
// is cuMemAlloc_v2 since CUDA 3.2, cuDevicePrimaryCtxRelease is _v2 since
// CUDA 11), so a driver for CUDA 11 or newer has all of them.
#define RELAY_CUDA_DRIVER_ENTRY_POINTS(X)                  \
  X(initialise, cuInit)                                    \
  X(get_driver_version, cuDriverGetVersion)                \
  X(get_error_name, cuGetErrorName)                        \
  X(get_error_string, cuGetErrorString)                    \
  X(get_device_count, cuDeviceGetCount)                    \
  X(get_device, cuDeviceGet)                               \
  X(get_device_name, cuDeviceGetName)                      \
  X(get_device_total_memory, cuDeviceTotalMem_v2)          \
  X(retain_primary_context, cuDevicePrimaryCtxRetain)      \
  X(release_primary_context, cuDevicePrimaryCtxRelease_v2) \
  X(set_current_context, cuCtxSetCurrent)                  \
  X(push_current_context, cuCtxPushCurrent_v2)             \
  X(pop_current_context, cuCtxPopCurrent_v2)               \
  X(get_memory_information, cuMemGetInfo_v2)               \
  X(allocate_memory, cuMemAlloc_v2)                        \
  X(free_memory, cuMemFree_v2)                             \
  X(get_device_attribute, cuDeviceGetAttribute)            \
  X(load_module_data, cuModuleLoadData)                    \
  X(unload_module, cuModuleUnload)                         \
  X(get_module_function, cuModuleGetFunction)              \
  X(launch_kernel, cuLaunchKernel)                         \
  X(create_stream, cuStreamCreate)                         \
  X(destroy_stream, cuStreamDestroy_v2)                    \
  X(synchronize_stream, cuStreamSynchronize)               \
  X(create_event, cuEventCreate)                           \
  X(destroy_event, cuEventDestroy_v2)                      \
  X(record_event, cuEventRecord)                           \
  X(synchronize_event, cuEventSynchronize)                 \
  X(allocate_pinned_memory, cuMemHostAlloc)                \
  X(free_pinned_memory, cuMemFreeHost)                     \
  X(copy_host_to_device_async, cuMemcpyHtoDAsync_v2)       \
  X(copy_device_to_host_async, cuMemcpyDtoHAsync_v2)       \
  X(copy_device_to_device_async, cuMemcpyDtoDAsync_v2)

class CudaDriver {
 public:
  // The driver of this process: opens libcuda.so.1 (or libcuda.so) on first
  // use and keeps it loaded until exit. Does not call cuInit. Throws kDevice
  // "no CUDA driver: libcuda.so.1 could not be loaded (<dlerror text>)", or
  // an error naming the missing entry points when the driver is older than
  // CUDA 11. The outcome of the first call is kept: later calls return the
  // same table or throw the same error.
  static std::shared_ptr<const CudaDriver> Process();

  // A table whose entry points come from `resolver` instead of dlsym; tests
  // use it with a stand-in driver. `library_name` names the source in
  // messages. Throws kDevice naming any entry point the resolver lacks.
  static std::shared_ptr<const CudaDriver> FromResolver(const SymbolResolver& resolver,
                                                        std::string library_name);

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; "CUresult 1234 (unknown to
  // the driver)" for a code the driver cannot name.
  std::string DescribeResult(CUresult result) const;

  // Does nothing for CUDA_SUCCESS; otherwise throws kDevice
  // "<subject>: <operation> failed: <DescribeResult(result)>", for example
  // "cuda:0: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  void Check(CUresult result, std::string_view subject, std::string_view operation) const;

  const std::string& library_name() const { return library_name_; }

#define RELAY_DECLARE_CUDA_ENTRY_POINT(member, symbol) decltype(&::symbol) member = nullptr;
  RELAY_CUDA_DRIVER_ENTRY_POINTS(RELAY_DECLARE_CUDA_ENTRY_POINT)
#undef RELAY_DECLARE_CUDA_ENTRY_POINT

 private:
  explicit CudaDriver(std::string library_name) : library_name_(std::move(library_name)) {}

  std::string library_name_;
};

}  // namespace relay::devices
