// The OpenCL API as one symbol table loaded at run time.
//
// OpenClLibrary holds a pointer for every OpenCL entry point relay-vm uses,
// resolved from the ICD loader libOpenCL.so.1, which is opened with dlopen and
// never linked; the loader in turn finds the installed platforms (pocl, a GPU
// vendor's driver). This header and opencl_library.cc are the only files that
// include CL/cl.h; opencl_device.cc uses its types through them. Only OpenCL
// 1.2 entry points are used, so any loader and platform of the last decade
// serve.
//
// Thread-safety: an OpenClLibrary is immutable once loaded; OpenCL's entry
// points used here are thread-safe (OpenCL 1.2, appendix A.2).
// Errors: relay::Error of kind kDevice. cl_int codes are converted where they
// are returned, through Check(), naming the operation.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devices/driver_library.h"

namespace relay::devices {

// Every entry point, as X(member, exported_symbol).
#define RELAY_OPENCL_ENTRY_POINTS(X)                       \
  X(get_platform_ids, clGetPlatformIDs)                    \
  X(get_platform_info, clGetPlatformInfo)                  \
  X(get_device_ids, clGetDeviceIDs)                        \
  X(get_device_info, clGetDeviceInfo)                      \
  X(create_context, clCreateContext)                       \
  X(release_context, clReleaseContext)                     \
  X(create_command_queue, clCreateCommandQueue)            \
  X(release_command_queue, clReleaseCommandQueue)          \
  X(create_buffer, clCreateBuffer)                         \
  X(release_memory_object, clReleaseMemObject)             \
  X(enqueue_write_buffer, clEnqueueWriteBuffer)            \
  X(enqueue_read_buffer, clEnqueueReadBuffer)              \
  X(enqueue_copy_buffer, clEnqueueCopyBuffer)              \
  X(finish, clFinish)                                      \
  X(create_program_with_source, clCreateProgramWithSource) \
  X(create_program_with_binary, clCreateProgramWithBinary) \
  X(get_program_info, clGetProgramInfo)                    \
  X(build_program, clBuildProgram)                         \
  X(get_program_build_info, clGetProgramBuildInfo)         \
  X(release_program, clReleaseProgram)                     \
  X(create_kernel, clCreateKernel)                         \
  X(release_kernel, clReleaseKernel)                       \
  X(set_kernel_argument, clSetKernelArg)                   \
  X(get_kernel_work_group_info, clGetKernelWorkGroupInfo)  \
  X(enqueue_nd_range_kernel, clEnqueueNDRangeKernel)       \
  X(get_event_info, clGetEventInfo)                        \
  X(release_event, clReleaseEvent)

// One OpenCL device and the platform it belongs to.
struct OpenClDeviceLocation {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

// Every device the loader reports, GPU, accelerator and CPU alike, in
// platform order and within a platform in the platform's order.
struct OpenClInventory {
  size_t platform_count = 0;
  std::vector<OpenClDeviceLocation> devices;
};

class OpenClLibrary {
 public:
  // The library of this process: opens libOpenCL.so.1 (or libOpenCL.so) on
  // first use and keeps it loaded until exit. Throws kDevice "no OpenCL
  // driver: libOpenCL.so.1 could not be loaded (<dlerror text>)", or an error
  // naming the missing entry points. The outcome of the first call is kept.
  static std::shared_ptr<const OpenClLibrary> Process();

  // A table whose entry points come from `resolver` instead of dlsym.
  // `library_name` names the source in messages. Throws kDevice naming any
  // entry point the resolver lacks.
  static std::shared_ptr<const OpenClLibrary> FromResolver(const SymbolResolver& resolver,
                                                           std::string library_name);

  // "CL_OUT_OF_RESOURCES (-5)"; "OpenCL error -9999" for codes without a name
  // here (vendor extensions).
  static std::string DescribeErrorCode(cl_int code);

  // Does nothing for CL_SUCCESS; otherwise throws kDevice
  // "<subject>: <operation> failed: <DescribeErrorCode(code)>", for example
  // "opencl:0: clEnqueueReadBuffer failed: CL_INVALID_VALUE (-30)".
  void Check(cl_int code, std::string_view subject, std::string_view operation) const;

  // The platforms and devices present. A loader that finds no platform
  // (CL_PLATFORM_NOT_FOUND_KHR) gives an empty inventory; other failures
  // throw kDevice.
  OpenClInventory ListDevices() const;

  // A string property of a platform or device (CL_PLATFORM_NAME,
  // CL_DEVICE_NAME, ...), without the terminating NUL. Throws kDevice naming
  // `subject`.
  std::string PlatformText(cl_platform_id platform, cl_platform_info property,
                           std::string_view subject) const;
  std::string DeviceText(cl_device_id device, cl_device_info property,
                         std::string_view subject) const;
  // A cl_ulong property of a device (CL_DEVICE_GLOBAL_MEM_SIZE, ...).
  cl_ulong DeviceNumber(cl_device_id device, cl_device_info property,
                        std::string_view subject) const;

  const std::string& library_name() const { return library_name_; }

#define RELAY_DECLARE_OPENCL_ENTRY_POINT(member, symbol) decltype(&::symbol) member = nullptr;
  RELAY_OPENCL_ENTRY_POINTS(RELAY_DECLARE_OPENCL_ENTRY_POINT)
#undef RELAY_DECLARE_OPENCL_ENTRY_POINT

 private:
  explicit OpenClLibrary(std::string library_name) : library_name_(std::move(library_name)) {}

  std::string library_name_;
};

}  // namespace relay::devices
