#include "devices/opencl/opencl_device.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "devices/kernel_disk_cache.h"
#include "devices/kernel_loader.h"
#include "devices/opencl/opencl_library.h"
#include "devices/pooled_device.h"
#include "relay/error.h"

namespace relay::devices {
namespace {

cl_mem BufferOf(const void* handle) {
  return static_cast<cl_mem>(const_cast<void*>(handle));
}

// A context for one device, released with the OpenClDevice once its pool has
// returned its cache.
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

// An in-order command queue, drained and released with the OpenClDevice,
// before its pool returns its cache.
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
  OpenClBufferAllocator(std::shared_ptr<const OpenClLibrary> library,
                        std::shared_ptr<const OwnedContext> context, std::string device_name,
                        size_t largest_buffer_bytes)
      : library_(std::move(library)),
        context_(std::move(context)),
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
        library_->create_buffer(context_->get(), CL_MEM_READ_WRITE, bytes, nullptr, &result);
    // Exhaustion is the pool's to handle: it releases its cache and retries.
    if (result == CL_MEM_OBJECT_ALLOCATION_FAILURE || result == CL_OUT_OF_RESOURCES ||
        result == CL_OUT_OF_HOST_MEMORY) {
      return nullptr;
    }
    library_->Check(result, device_name_, "clCreateBuffer");
    return buffer;
  }

  // The pool frees from destructors, so a refusal cannot be reported; it
  // means the handle was never ours, which the pool rules out.
  void FreeRaw(void* handle, size_t /*bytes*/) override {
    library_->release_memory_object(BufferOf(handle));
  }

 private:
  // Declared before context_, which needs the library to release itself.
  const std::shared_ptr<const OpenClLibrary> library_;
  const std::shared_ptr<const OwnedContext> context_;
  const std::string device_name_;
  const size_t largest_buffer_bytes_;
};

// A program built from source for one device and its one kernel. Setting
// arguments and enqueueing is one step under a lock: a cl_kernel's
// arguments are shared state.
class OpenClKernel final : public LoadedKernel {
 public:
  // Built from the program binary cached on disk under `disk_key` when
  // there is a good one, else from `source` (the binary then stored).
  OpenClKernel(std::shared_ptr<const OpenClLibrary> library,
               std::shared_ptr<const OwnedContext> context, std::shared_ptr<OwnedQueue> queue,
               cl_device_id device, std::string device_name, const std::string& source,
               const std::string& entry, const KernelDiskCache& disk, const std::string& disk_key)
      : library_(std::move(library)),
        context_(std::move(context)),
        queue_(std::move(queue)),
        device_name_(std::move(device_name)) {
    std::string binary;
    if (disk.enabled() && disk.Load(disk_key, binary) == KernelDiskCache::LoadOutcome::kFound) {
      program_ = BuildFromBinary(device, binary);
    }
    if (program_ == nullptr) {
      program_ = BuildFromSource(device, source);
      if (disk.enabled()) {
        binary = ProgramBinary();
        if (!binary.empty()) disk.Store(disk_key, binary);
      }
    }
    cl_int result = CL_SUCCESS;
    kernel_ = library_->create_kernel(program_, entry.c_str(), &result);
    if (result != CL_SUCCESS) {
      library_->release_program(program_);
      library_->Check(result, device_name_, "clCreateKernel");
    }
    size_t largest_group = 0;
    library_->Check(
        library_->get_kernel_work_group_info(kernel_, device, CL_KERNEL_WORK_GROUP_SIZE,
                                             sizeof largest_group, &largest_group, nullptr),
        device_name_, "clGetKernelWorkGroupInfo");
    group_size_ = std::max<size_t>(1, std::min<size_t>(largest_group, kGroupSize));
  }
  OpenClKernel(const OpenClKernel&) = delete;
  OpenClKernel& operator=(const OpenClKernel&) = delete;
  ~OpenClKernel() override {
    library_->release_kernel(kernel_);
    library_->release_program(program_);
  }

  void Launch(std::span<const BufferArgument> buffers, std::span<const int64_t> scalars,
              int64_t threads) const override {
    if (threads <= 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    cl_uint position = 0;
    for (const BufferArgument& buffer : buffers) {
      const cl_mem memory = BufferOf(buffer.handle);
      const cl_long offset = static_cast<cl_long>(buffer.byte_offset);
      SetArgument(position++, sizeof memory, &memory);
      SetArgument(position++, sizeof offset, &offset);
    }
    for (const int64_t scalar : scalars) {
      const cl_long value = scalar;
      SetArgument(position++, sizeof value, &value);
    }
    // OpenCL 1.2 wants the global size a multiple of the group's; threads
    // past `threads` return at once.
    const size_t groups = (static_cast<size_t>(threads) + group_size_ - 1) / group_size_;
    const size_t global = groups * group_size_;
    library_->Check(library_->enqueue_nd_range_kernel(queue_->get(), kernel_, 1, nullptr, &global,
                                                      &group_size_, 0, nullptr, nullptr),
                    device_name_, "clEnqueueNDRangeKernel");
  }

 private:
  // Work-items per work-group: a multiple of every GPU's warp or
  // wavefront, and enough for PoCL to vectorise across work-items.
  static constexpr size_t kGroupSize = 256;

  cl_program BuildFromSource(cl_device_id device, const std::string& source) const {
    const char* text = source.c_str();
    const size_t length = source.size();
    cl_int result = CL_SUCCESS;
    cl_program program =
        library_->create_program_with_source(context_->get(), 1, &text, &length, &result);
    library_->Check(result, device_name_, "clCreateProgramWithSource");
    result = library_->build_program(program, 1, &device, "", nullptr, nullptr);
    if (result != CL_SUCCESS) {
      const std::string log = BuildLog(program, device);
      library_->release_program(program);
      throw Error(ErrorKind::kDevice, device_name_ + ": clBuildProgram failed: " +
                                          OpenClLibrary::DescribeErrorCode(result) +
                                          (log.empty() ? std::string() : "\n" + log));
    }
    return program;
  }

  // A program from a cached binary, or null when the platform refuses it
  // (a driver update can invalidate binaries its key did not foresee): the
  // caller builds from source instead.
  cl_program BuildFromBinary(cl_device_id device, const std::string& binary) const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    const size_t size = binary.size();
    cl_int status = CL_SUCCESS, result = CL_SUCCESS;
    cl_program program = library_->create_program_with_binary(context_->get(), 1, &device, &size,
                                                              &bytes, &status, &result);
    if (result != CL_SUCCESS || status != CL_SUCCESS) {
      if (program != nullptr) library_->release_program(program);
      return nullptr;
    }
    if (library_->build_program(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
      library_->release_program(program);
      return nullptr;
    }
    return program;
  }

  // The built program's binary for its one device ("" when the platform
  // gives none).
  std::string ProgramBinary() const {
    size_t size = 0;
    if (library_->get_program_info(program_, CL_PROGRAM_BINARY_SIZES, sizeof size, &size,
                                   nullptr) != CL_SUCCESS ||
        size == 0) {
      return "";
    }
    std::string binary(size, '\0');
    unsigned char* destination = reinterpret_cast<unsigned char*>(binary.data());
    if (library_->get_program_info(program_, CL_PROGRAM_BINARIES, sizeof destination, &destination,
                                   nullptr) != CL_SUCCESS) {
      return "";
    }
    return binary;
  }

  void SetArgument(cl_uint position, size_t size, const void* value) const {
    library_->Check(library_->set_kernel_argument(kernel_, position, size, value), device_name_,
                    "clSetKernelArg");
  }

  std::string BuildLog(cl_program program, cl_device_id device) const {
    size_t size = 0;
    if (library_->get_program_build_info(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                                         &size) != CL_SUCCESS ||
        size == 0) {
      return "";
    }
    std::string log(size, '\0');
    if (library_->get_program_build_info(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                                         nullptr) != CL_SUCCESS) {
      return "";
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

  const std::shared_ptr<const OpenClLibrary> library_;
  const std::shared_ptr<const OwnedContext> context_;
  const std::shared_ptr<OwnedQueue> queue_;
  const std::string device_name_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  size_t group_size_ = 1;
  mutable std::mutex mutex_;
};

class OpenClDevice final : public PooledDevice, public KernelLoader {
 public:
  // `context` is a context for the device at `location`, which `id` names.
  // `identity` names the device model, its OpenCL version and driver for
  // the disk cache's keys: a binary is only ever read back by the same.
  OpenClDevice(std::shared_ptr<const OpenClLibrary> library, DeviceId id,
               const OpenClDeviceLocation& location, std::shared_ptr<const OwnedContext> context,
               std::string description, std::string identity, size_t largest_buffer_bytes,
               bool cpu_device, MemoryPoolOptions pool_options)
      : PooledDevice(id, std::move(description),
                     std::make_unique<OpenClBufferAllocator>(library, context, id.ToString(),
                                                             largest_buffer_bytes),
                     std::move(pool_options)),
        library_(std::move(library)),
        context_(std::move(context)),
        device_(location.device),
        queue_(std::make_shared<OwnedQueue>(*library_, *context_, location.device, name())),
        disk_(DefaultKernelCacheDirectory(), kBinaryCacheVersion, ".relay-opencl"),
        disk_key_prefix_("opencl program binary\n" + std::move(identity) + "\n"),
        cpu_device_(cpu_device) {}

  // The queued writes read their host copies until they have run.
  ~OpenClDevice() override {
    library_->finish(queue_->get());
    std::lock_guard lock(writes_mutex_);
    for (PendingWrite& write : pending_writes_) library_->release_event(write.done);
  }

  SourceDialect dialect() const override { return SourceDialect::kOpenClC; }
  bool work_items_on_cpu_cores() const override { return cpu_device_; }

  std::shared_ptr<const LoadedKernel> LoadKernel(const std::string& source,
                                                 const std::string& entry) override {
    return kernels_.GetOrBuild(source, entry, [&] {
      return std::make_shared<OpenClKernel>(library_, context_, queue_, device_, name(), source,
                                            entry, disk_, disk_key_prefix_ + entry + '\n' + source);
    });
  }

  // Returns once the write is queued, from a copy of the bytes kept until
  // its event says it has run: a blocking write would wait for every kernel
  // queued before it (the queue is in order), and the caller may reuse its
  // memory at once.
  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    // OpenCL rejects zero-byte transfers with CL_INVALID_VALUE.
    if (bytes == 0) return;
    ReleaseFinishedWrites();
    auto copy = std::make_unique_for_overwrite<std::byte[]>(bytes);
    std::memcpy(copy.get(), source, bytes);
    cl_event done = nullptr;
    library_->Check(
        library_->enqueue_write_buffer(queue_->get(), BufferOf(destination_handle), CL_FALSE,
                                       destination_offset, bytes, copy.get(), 0, nullptr, &done),
        name(), "clEnqueueWriteBuffer");
    std::lock_guard lock(writes_mutex_);
    pending_writes_.push_back({done, std::move(copy)});
  }

  // Returns when the bytes have arrived, after everything queued before.
  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    if (bytes == 0) return;
    library_->Check(
        library_->enqueue_read_buffer(queue_->get(), BufferOf(source_handle), CL_TRUE,
                                      source_offset, bytes, destination, 0, nullptr, nullptr),
        name(), "clEnqueueReadBuffer");
    ReleaseFinishedWrites();
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
    // The in-order queue runs any later use of the staging buffer after
    // these copies.
    WithStagingBlock(bytes, [&](void* staging) {
      EnqueueCopy(source_handle, source_offset, staging, 0, bytes);
      EnqueueCopy(staging, 0, destination_handle, destination_offset, bytes);
    });
  }

  void Synchronize() override {
    library_->Check(library_->finish(queue_->get()), name(), "clFinish");
    ReleaseFinishedWrites();
  }

 private:
  struct PendingWrite {
    cl_event done;
    std::unique_ptr<std::byte[]> bytes;
  };

  // Releases the host copies of the writes whose events say they have run.
  // Each is asked, not inferred from a drained queue: another thread may
  // have queued a write since. A write that failed is reported here, as its
  // call had returned.
  void ReleaseFinishedWrites() {
    std::vector<PendingWrite> finished;
    cl_int failure = CL_SUCCESS;
    {
      std::lock_guard lock(writes_mutex_);
      for (size_t index = 0; index < pending_writes_.size();) {
        cl_int status = CL_QUEUED;  // kept while its state is unknown
        library_->get_event_info(pending_writes_[index].done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                 sizeof(status), &status, nullptr);
        if (status != CL_COMPLETE && status >= 0) {
          ++index;
          continue;
        }
        if (status < 0 && failure == CL_SUCCESS) failure = status;
        finished.push_back(std::move(pending_writes_[index]));
        pending_writes_.erase(pending_writes_.begin() + std::ptrdiff_t(index));
      }
    }
    for (PendingWrite& write : finished) library_->release_event(write.done);
    library_->Check(failure, name(), "a queued clEnqueueWriteBuffer");
  }

  void EnqueueCopy(const void* source_handle, size_t source_offset, void* destination_handle,
                   size_t destination_offset, size_t bytes) {
    library_->Check(library_->enqueue_copy_buffer(queue_->get(), BufferOf(source_handle),
                                                  BufferOf(destination_handle), source_offset,
                                                  destination_offset, bytes, 0, nullptr, nullptr),
                    name(), "clEnqueueCopyBuffer");
  }

  const std::shared_ptr<const OpenClLibrary> library_;
  const std::shared_ptr<const OwnedContext> context_;
  const cl_device_id device_;
  // In the context the raw allocator holds, which outlives it. Drained and
  // released before the pool returns its cache (unless a loaded kernel
  // still holds it), so every queued copy has finished by the time the
  // buffers go.
  const std::shared_ptr<OwnedQueue> queue_;
  LoadedKernelCache kernels_;
  // Program binaries on disk, keyed by the device's identity and the text.
  static constexpr uint32_t kBinaryCacheVersion = 1;
  const KernelDiskCache disk_;
  const std::string disk_key_prefix_;
  const bool cpu_device_;  // CL_DEVICE_TYPE_CPU
  std::mutex writes_mutex_;
  std::vector<PendingWrite> pending_writes_;
};

}  // namespace

int32_t OpenClDeviceCount() {
  return static_cast<int32_t>(OpenClLibrary::Process()->ListDevices().devices.size());
}

std::unique_ptr<Device> CreateOpenClDevice(int32_t index, MemoryPoolOptions pool_options) {
  std::shared_ptr<const OpenClLibrary> library = OpenClLibrary::Process();
  const DeviceId id{DeviceKind::kOpenCL, index};
  const std::string name = id.ToString();
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
  const cl_ulong compute_units =
      library->DeviceNumber(location.device, CL_DEVICE_MAX_COMPUTE_UNITS, name);
  std::string description = name + " (" + model + " on " + platform + ", " +
                            FormatByteSize(global_memory) + ", " + std::to_string(compute_units) +
                            " compute units, pooled)";
  std::string identity = model + "\n" + platform + "\n" +
                         library->DeviceText(location.device, CL_DEVICE_VERSION, name) + "\n" +
                         library->DeviceText(location.device, CL_DRIVER_VERSION, name);
  const bool cpu_device =
      (library->DeviceNumber(location.device, CL_DEVICE_TYPE, name) & CL_DEVICE_TYPE_CPU) != 0;
  auto context = std::make_shared<OwnedContext>(*library, location, name);
  return std::make_unique<OpenClDevice>(std::move(library), id, location, std::move(context),
                                        std::move(description), std::move(identity), largest_buffer,
                                        cpu_device, std::move(pool_options));
}

}  // namespace relay::devices
