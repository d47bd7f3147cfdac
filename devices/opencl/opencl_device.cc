#include "devices/opencl/opencl_device.h"

#include <string>
#include <utility>

#include "devices/opencl/opencl_library.h"
#include "relay/error.h"

namespace relay::devices {
namespace {

cl_mem BufferOf(const void* handle) {
  return static_cast<cl_mem>(const_cast<void*>(handle));
}

// A context for one device, released with the OpenClDevice.
class OwnedContext {
 public:
  OwnedContext(const OpenClLibrary& library, const OpenClDeviceLocation& location,
               const std::string& subject)
      : library_(library) {
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(location.platform), 0};
    cl_int result = CL_SUCCESS;
    context_ = library_.create_context(properties, 1, &location.device, nullptr, nullptr, &result);
    library_.Check(result, subject, "clCreateContext");
  }
  OwnedContext(const OwnedContext&) = delete;
  OwnedContext& operator=(const OwnedContext&) = delete;
  ~OwnedContext() { library_.release_context(context_); }

  cl_context get() const { return context_; }

 private:
  const OpenClLibrary& library_;
  cl_context context_ = nullptr;
};

// An in-order command queue, drained and released with the OpenClDevice.
class OwnedQueue {
 public:
  OwnedQueue(const OpenClLibrary& library, const OwnedContext& context, cl_device_id device,
             const std::string& subject)
      : library_(library) {
    cl_int result = CL_SUCCESS;
    queue_ = library_.create_command_queue(context.get(), device, 0, &result);
    library_.Check(result, subject, "clCreateCommandQueue");
  }
  OwnedQueue(const OwnedQueue&) = delete;
  OwnedQueue& operator=(const OwnedQueue&) = delete;
  // Drained first so that no queued copy outlives the device's buffers.
  ~OwnedQueue() {
    library_.finish(queue_);
    library_.release_command_queue(queue_);
  }

  cl_command_queue get() const { return queue_; }

 private:
  const OpenClLibrary& library_;
  cl_command_queue queue_ = nullptr;
};

// clCreateBuffer and clReleaseMemObject in the device's context. The handle
// is a cl_mem, an object rather than an address; the memory behind it is
// aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN, which OpenCL 1.2 requires to be
// at least the size of the largest built-in type (128 bytes).
class OpenClBufferAllocator final : public RawAllocator {
 public:
  OpenClBufferAllocator(const OpenClLibrary& library, const OwnedContext& context,
                        std::string device_name, size_t largest_buffer_bytes)
      : library_(library),
        context_(context),
        device_name_(std::move(device_name)),
        largest_buffer_bytes_(largest_buffer_bytes) {}

  void* AllocateRaw(size_t bytes) override {
    // Refused for good, not for want of memory: say so instead of letting
    // the pool report an exhausted device.
    if (bytes > largest_buffer_bytes_) {
      throw Error(ErrorKind::kDevice,
                  device_name_ + ": cannot allocate a block of " + FormatByteSize(bytes) +
                      ": the largest buffer " + device_name_ + " allows is " +
                      FormatByteSize(largest_buffer_bytes_) + " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
    cl_int result = CL_SUCCESS;
    cl_mem buffer =
        library_.create_buffer(context_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &result);
    // Exhaustion is the pool's to handle: it releases its cache and retries.
    if (result == CL_MEM_OBJECT_ALLOCATION_FAILURE || result == CL_OUT_OF_RESOURCES ||
        result == CL_OUT_OF_HOST_MEMORY) {
      return nullptr;
    }
    library_.Check(result, device_name_, "clCreateBuffer");
    return buffer;
  }

  // The pool frees from destructors, so a refusal cannot be reported; it
  // means the handle was never ours, which the pool rules out.
  void FreeRaw(void* handle, size_t /*bytes*/) override {
    library_.release_memory_object(BufferOf(handle));
  }

 private:
  const OpenClLibrary& library_;
  const OwnedContext& context_;
  const std::string device_name_;
  const size_t largest_buffer_bytes_;
};

MemoryPoolOptions WithDeviceName(MemoryPoolOptions options, std::string device_name) {
  options.device_name = std::move(device_name);
  return options;
}

class OpenClDevice final : public Device {
 public:
  OpenClDevice(std::shared_ptr<const OpenClLibrary> library, int32_t index,
               const OpenClDeviceLocation& location, std::string description,
               size_t largest_buffer_bytes, MemoryPoolOptions pool_options)
      : library_(std::move(library)),
        index_(index),
        name_(DeviceId{DeviceKind::kOpenCL, index}.ToString()),
        description_(std::move(description)),
        context_(*library_, location, name_),
        queue_(*library_, context_, location.device, name_),
        raw_allocator_(*library_, context_, name_, largest_buffer_bytes),
        pool_(raw_allocator_, WithDeviceName(std::move(pool_options), name_)) {}

  DeviceId id() const override { return DeviceId{DeviceKind::kOpenCL, index_}; }
  std::string description() const override { return description_; }

  void* Allocate(size_t bytes) override { return pool_.Allocate(bytes); }
  void Free(void* handle, size_t bytes) override { pool_.Free(handle, bytes); }

  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    // OpenCL rejects zero-byte transfers with CL_INVALID_VALUE.
    if (bytes == 0) return;
    library_->Check(
        library_->enqueue_write_buffer(queue_.get(), BufferOf(destination_handle), CL_TRUE,
                                       destination_offset, bytes, source, 0, nullptr, nullptr),
        name_, "clEnqueueWriteBuffer");
  }

  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    if (bytes == 0) return;
    library_->Check(
        library_->enqueue_read_buffer(queue_.get(), BufferOf(source_handle), CL_TRUE, source_offset,
                                      bytes, destination, 0, nullptr, nullptr),
        name_, "clEnqueueReadBuffer");
  }

  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override {
    if (bytes == 0) return;
    const bool same_buffer = source_handle == destination_handle;
    if (same_buffer && source_offset == destination_offset) return;
    // clEnqueueCopyBuffer refuses overlapping ranges of one buffer
    // (CL_MEM_COPY_OVERLAP); two views of one storage may overlap, so stage
    // those copies through a temporary buffer.
    const bool overlapping = same_buffer && source_offset < destination_offset + bytes &&
                             destination_offset < source_offset + bytes;
    if (!overlapping) {
      EnqueueCopy(source_handle, source_offset, destination_handle, destination_offset, bytes);
      return;
    }
    void* staging = pool_.Allocate(bytes);
    try {
      EnqueueCopy(source_handle, source_offset, staging, 0, bytes);
      EnqueueCopy(staging, 0, destination_handle, destination_offset, bytes);
    } catch (...) {
      pool_.Free(staging, bytes);
      throw;
    }
    // Freed while the copies may still run: the in-order queue runs any
    // later use of the buffer after them.
    pool_.Free(staging, bytes);
  }

  void Synchronize() override {
    library_->Check(library_->finish(queue_.get()), name_, "clFinish");
  }

  MemoryStatistics memory_statistics() const override { return pool_.statistics(); }
  void ReleaseCachedMemory() override { pool_.ReleaseCached(); }
  void SetMemoryLimit(size_t bytes) override { pool_.SetLimit(bytes); }

 private:
  void EnqueueCopy(const void* source_handle, size_t source_offset, void* destination_handle,
                   size_t destination_offset, size_t bytes) {
    library_->Check(library_->enqueue_copy_buffer(queue_.get(), BufferOf(source_handle),
                                                  BufferOf(destination_handle), source_offset,
                                                  destination_offset, bytes, 0, nullptr, nullptr),
                    name_, "clEnqueueCopyBuffer");
  }

  const std::shared_ptr<const OpenClLibrary> library_;
  const int32_t index_;
  const std::string name_;
  const std::string description_;
  // Destroyed in reverse order: the pool returns its cache through the
  // allocator, then the queue drains, then the context goes.
  OwnedContext context_;
  OwnedQueue queue_;
  OpenClBufferAllocator raw_allocator_;
  MemoryPool pool_;
};

}  // namespace

int32_t OpenClDeviceCount() {
  return static_cast<int32_t>(OpenClLibrary::Process()->ListDevices().devices.size());
}

std::unique_ptr<Device> CreateOpenClDevice(int32_t index, MemoryPoolOptions pool_options) {
  std::shared_ptr<const OpenClLibrary> library = OpenClLibrary::Process();
  const std::string name = DeviceId{DeviceKind::kOpenCL, index}.ToString();
  const OpenClInventory inventory = library->ListDevices();
  if (inventory.platform_count == 0) {
    throw Error(ErrorKind::kDevice,
                "no device " + name + ": the OpenCL loader (" + library->library_name() +
                    ") found no platform; install an OpenCL driver (an ICD such as "
                    "pocl-opencl-icd) to use OpenCL devices");
  }
  const size_t count = inventory.devices.size();
  if (index < 0 || static_cast<size_t>(index) >= count) {
    throw Error(ErrorKind::kDevice,
                "no device " + name + ": " + std::to_string(count) +
                    (count == 1 ? " OpenCL device present" : " OpenCL devices present"));
  }
  const OpenClDeviceLocation& location = inventory.devices[static_cast<size_t>(index)];
  const std::string model = library->DeviceText(location.device, CL_DEVICE_NAME, name);
  const std::string platform = library->PlatformText(location.platform, CL_PLATFORM_NAME, name);
  const cl_ulong global_memory =
      library->DeviceNumber(location.device, CL_DEVICE_GLOBAL_MEM_SIZE, name);
  const cl_ulong largest_buffer =
      library->DeviceNumber(location.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, name);
  std::string description =
      name + " (" + model + " on " + platform + ", " + FormatByteSize(global_memory) + ", pooled)";
  return std::make_unique<OpenClDevice>(std::move(library), index, location, std::move(description),
                                        largest_buffer, std::move(pool_options));
}

}  // namespace relay::devices
