// NVIDIA GPUs as relay::Devices, through the CUDA Driver API loaded at run
// time (cuda_driver.h).
//
// A CUDA device works in the GPU's primary context, the one the CUDA runtime
// and other libraries share, and makes it current on the calling thread for
// the length of each call, restoring the thread's previous context afterwards.
// Memory comes from cuMemAlloc through a MemoryPool; a handle is the block's
// CUdeviceptr cast to void*, and a byte offset is added to it arithmetically.
// Every copy and kernel launch is queued, in order, on one non-blocking stream
// of the device. Copies from the host pass through page-locked staging
// buffers and return once the bytes are staged (the caller may reuse its
// memory); copies to the host return when the bytes have arrived, after
// everything queued before them. Copies within the device may still be
// running when the call returns; Synchronize (cuStreamSynchronize) waits for
// all queued work. Ranges of a copy within the device may overlap: such
// copies go through a temporary block.
//
// This header does not include cuda.h, so callers need no CUDA headers.
//
// Thread-safety: every method of a CUDA device may be called from many threads
// at once; the factory functions too.
// Errors: relay::Error of kind kDevice naming the device and the operation,
// for example "cuda:0: cuMemcpyHtoD failed: CUDA_ERROR_ILLEGAL_ADDRESS (...)".
// Exhausted device memory is reported by the pool after it has released its
// cache and retried ("out of memory on cuda:0: ..."). Freeing never throws: a
// failed cuMemFree (a context already broken by a faulting kernel) leaks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "devices/driver_library.h"
#include "devices/memory_pool.h"
#include "relay/device.h"

namespace relay::devices {

class CudaDriver;  // devices/cuda/cuda_driver.h

// The number of CUDA devices of the process's driver, after cuInit. Returns 0
// when the driver reports that there is no device. Throws kDevice "no CUDA
// driver: libcuda.so.1 could not be loaded (...)" when there is no driver or
// only the toolkit's stub library, and "CUDA driver: cuInit failed: ..." when
// initialisation fails otherwise.
int32_t CudaDeviceCount();

// Creates cuda:`index` over the process's driver. The pool's device name is
// always "cuda:<index>"; the other options are taken as given. Throws the
// errors of CudaDeviceCount, and kDevice "no device cuda:3: 1 CUDA device
// present" for an index past the devices present. Creating two devices with
// one index is allowed; they share the primary context but not their pools.
std::unique_ptr<Device> CreateCudaDevice(int32_t index, MemoryPoolOptions pool_options = {});

// The same over a given driver table; tests pass a stand-in driver loaded
// with LoadCudaDriverFromResolver. Devices keep the table alive.
int32_t CudaDeviceCount(const CudaDriver& driver);
std::unique_ptr<Device> CreateCudaDevice(std::shared_ptr<const CudaDriver> driver, int32_t index,
                                         MemoryPoolOptions pool_options = {});

// CudaDriver::FromResolver for callers that do not include cuda.h.
std::shared_ptr<const CudaDriver> LoadCudaDriverFromResolver(const SymbolResolver& resolver,
                                                             std::string library_name);

}  // namespace relay::devices
