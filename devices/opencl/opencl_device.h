// OpenCL devices (GPUs, accelerators, CPUs through pocl) as relay::Devices,
// through the OpenCL ICD loader opened at run time (opencl_library.h).
//
// Device index N is the N-th device over all platforms, in the loader's
// platform order, every device type counted. Each device gets its own context
// and one in-order command queue. Memory comes from clCreateBuffer through a
// MemoryPool; a handle is the buffer's cl_mem cast to void*, and byte offsets
// are passed to the enqueue calls. Copies to and from the host return when the
// bytes have arrived; copies within the device are queued in order before
// every later copy on this device and may still be running when the call
// returns; Synchronize (clFinish) waits for them. Ranges of a copy within one
// buffer may overlap: such copies go through a temporary buffer.
//
// OpenCL platforms may defer the actual allocation of a buffer to its first
// use; on those, exhaustion is reported by the first copy into the buffer
// (CL_MEM_OBJECT_ALLOCATION_FAILURE) rather than by Allocate.
//
// This header does not include CL/cl.h, so callers need no OpenCL headers.
//
// Thread-safety: every method of an OpenCL device may be called from many
// threads at once; the factory functions too.
// Errors: relay::Error of kind kDevice naming the device and the operation,
// for example "opencl:0: clEnqueueReadBuffer failed: CL_INVALID_VALUE (-30)".
// Exhausted memory is reported by the pool after it has released its cache
// and retried ("out of memory on opencl:0: ..."); a request larger than the
// device's largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is refused with a
// message saying so. Freeing never throws.
#pragma once

#include <cstdint>
#include <memory>

#include "devices/memory_pool.h"
#include "relay/device.h"

namespace relay::devices {

// The number of OpenCL devices over all platforms; 0 when the loader finds
// no platform. Throws kDevice "no OpenCL driver: libOpenCL.so.1 could not be
// loaded (...)" when there is no loader.
int32_t OpenClDeviceCount();

// Creates opencl:`index`. The pool's device name is always "opencl:<index>";
// the other options are taken as given. Throws the errors of
// OpenClDeviceCount, kDevice "no device opencl:0: the OpenCL loader
// (libOpenCL.so.1) found no platform ..." when there is no platform, and
// "no device opencl:3: 1 OpenCL device present" for an index past the
// devices present. Two devices created with one index have separate contexts
// and pools.
std::unique_ptr<Device> CreateOpenClDevice(int32_t index, MemoryPoolOptions pool_options = {});

}  // namespace relay::devices
