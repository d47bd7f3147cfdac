#include "devices/cuda/cuda_device.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "devices/cuda/cuda_driver.h"
#include "devices/cuda/nvrtc_compiler.h"
#include "devices/kernel_disk_cache.h"
#include "devices/kernel_loader.h"
#include "devices/pooled_device.h"
#include "relay/error.h"

namespace relay::devices {
namespace {

CUdeviceptr DevicePointer(const void* handle, size_t offset) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(handle)) + offset;
}

// Pushes a context onto the calling thread's context stack for one scope.
// Push and pop rather than cuCtxSetCurrent: a thread that had another
// context current (a library beside us managing its own) gets it back.
class ScopedCurrentContext {
 public:
  // Throws kDevice when the push fails.
  ScopedCurrentContext(const CudaDriver& driver, CUcontext context, std::string_view subject)
      : driver_(driver) {
    driver_.Check(driver_.push_current_context(context), subject, "cuCtxPushCurrent");
  }
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;
  // A failed pop leaves our context current on this thread, which is harmless
  // and cannot be reported from a destructor.
  ~ScopedCurrentContext() {
    CUcontext popped = nullptr;
    driver_.pop_current_context(&popped);
  }

 private:
  const CudaDriver& driver_;
};

// A reference on a device's primary context, held for a CudaDevice's life
// and, through its memory allocator, until its pool has returned its cache.
class PrimaryContext {
 public:
  PrimaryContext(std::shared_ptr<const CudaDriver> driver, CUdevice device,
                 const std::string& subject)
      : driver_(std::move(driver)), device_(device) {
    driver_->Check(driver_->retain_primary_context(&context_, device_), subject,
                   "cuDevicePrimaryCtxRetain");
  }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  // Nothing to do on failure: the driver is shutting down or broken.
  ~PrimaryContext() { driver_->release_primary_context(device_); }

  const CudaDriver& driver() const { return *driver_; }
  CUcontext get() const { return context_; }

 private:
  std::shared_ptr<const CudaDriver> driver_;
  CUdevice device_;
  CUcontext context_ = nullptr;
};

// The device's one stream, on which every copy and launch is queued in
// order: created non-blocking, so that work other libraries put on the
// context's legacy default stream neither waits for it nor makes it wait.
// The device's memory pool, its kernels and its staging buffers share it.
class CudaQueue {
 public:
  CudaQueue(std::shared_ptr<const PrimaryContext> context, std::string device_name)
      : context_(std::move(context)), device_name_(std::move(device_name)) {
    const CudaDriver& driver = context_->driver();
    ScopedCurrentContext current(driver, context_->get(), device_name_);
    driver.Check(driver.create_stream(&stream_, CU_STREAM_NON_BLOCKING), device_name_,
                 "cuStreamCreate");
  }
  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;
  // cuStreamDestroy lets queued work finish first.
  ~CudaQueue() {
    const CudaDriver& driver = context_->driver();
    if (driver.push_current_context(context_->get()) != CUDA_SUCCESS) return;
    driver.destroy_stream(stream_);
    CUcontext popped = nullptr;
    driver.pop_current_context(&popped);
  }

  const CudaDriver& driver() const { return context_->driver(); }
  CUcontext context() const { return context_->get(); }
  CUstream stream() const { return stream_; }
  const std::string& device_name() const { return device_name_; }

  // Waits for everything queued. Throws kDevice naming cuStreamSynchronize.
  void Synchronize() const {
    ScopedCurrentContext current(driver(), context(), device_name_);
    driver().Check(driver().synchronize_stream(stream_), device_name_, "cuStreamSynchronize");
  }

 private:
  const std::shared_ptr<const PrimaryContext> context_;
  const std::string device_name_;
  CUstream stream_ = nullptr;
};

// Page-locked host buffers through which copies between host memory and the
// device pass. From page-locked memory the GPU copies by DMA at full speed
// while the host goes on; from pageable memory the driver would stage the
// bytes itself and the host would wait. A copy to the device returns once its
// bytes are in a staging buffer (the caller may reuse its memory at once) and
// the transfer runs in stream order; a copy to the host returns when the bytes
// have arrived, the next chunk's transfer overlapping the last one's memcpy.
// Each buffer's event, recorded after the transfer that uses it, says when it
// may be filled again. Where the driver cannot lock host memory, copies go
// from and to the caller's memory directly and wait for the stream.
class PinnedStaging {
 public:
  explicit PinnedStaging(std::shared_ptr<const CudaQueue> queue) : queue_(std::move(queue)) {}
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  // Failures are ignored: the context is being torn down or is broken.
  ~PinnedStaging() {
    const CudaDriver& driver = queue_->driver();
    if (driver.push_current_context(queue_->context()) != CUDA_SUCCESS) return;
    for (Buffer& buffer : buffers_) {
      if (buffer.ready != nullptr) {
        driver.synchronize_event(buffer.ready);
        driver.destroy_event(buffer.ready);
      }
      if (buffer.host != nullptr) driver.free_pinned_memory(buffer.host);
    }
    CUcontext popped = nullptr;
    driver.pop_current_context(&popped);
  }

  void ToDevice(const void* source, CUdeviceptr destination, size_t bytes) {
    std::lock_guard lock(mutex_);
    const CudaDriver& driver = queue_->driver();
    const std::string& name = queue_->device_name();
    ScopedCurrentContext current(driver, queue_->context(), name);
    if (!Available()) {
      driver.Check(driver.copy_host_to_device_async(destination, source, bytes, queue_->stream()),
                   name, "cuMemcpyHtoDAsync");
      driver.Check(driver.synchronize_stream(queue_->stream()), name, "cuStreamSynchronize");
      return;
    }
    for (size_t done = 0; done < bytes; done += kChunkBytes) {
      const size_t chunk = std::min(kChunkBytes, bytes - done);
      Buffer& buffer = NextBuffer();
      std::memcpy(buffer.host, static_cast<const char*>(source) + done, chunk);
      driver.Check(driver.copy_host_to_device_async(destination + done, buffer.host, chunk,
                                                    queue_->stream()),
                   name, "cuMemcpyHtoDAsync");
      Record(buffer);
    }
  }

  void ToHost(CUdeviceptr source, void* destination, size_t bytes) {
    std::lock_guard lock(mutex_);
    const CudaDriver& driver = queue_->driver();
    const std::string& name = queue_->device_name();
    ScopedCurrentContext current(driver, queue_->context(), name);
    if (!Available()) {
      driver.Check(driver.copy_device_to_host_async(destination, source, bytes, queue_->stream()),
                   name, "cuMemcpyDtoHAsync");
      driver.Check(driver.synchronize_stream(queue_->stream()), name, "cuStreamSynchronize");
      return;
    }
    // The chunk in flight whose bytes are still to be taken out.
    Buffer* pending = nullptr;
    size_t pending_offset = 0, pending_bytes = 0;
    auto take_pending = [&] {
      driver.Check(driver.synchronize_event(pending->ready), name, "cuEventSynchronize");
      std::memcpy(static_cast<char*>(destination) + pending_offset, pending->host, pending_bytes);
    };
    for (size_t done = 0; done < bytes; done += kChunkBytes) {
      const size_t chunk = std::min(kChunkBytes, bytes - done);
      Buffer& buffer = NextBuffer();
      driver.Check(
          driver.copy_device_to_host_async(buffer.host, source + done, chunk, queue_->stream()),
          name, "cuMemcpyDtoHAsync");
      Record(buffer);
      if (pending != nullptr) take_pending();
      pending = &buffer, pending_offset = done, pending_bytes = chunk;
    }
    if (pending != nullptr) take_pending();
  }

 private:
  // Each staging buffer's size: large enough that a transfer's fixed cost is
  // small beside it, small enough to keep two locked for the process.
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  struct Buffer {
    void* host = nullptr;
    CUevent ready = nullptr;  // recorded after the last transfer using `host`
    bool recorded = false;    // `ready` has been recorded at least once
  };

  // Locks the buffers on first use; false (for the process) where the driver
  // refuses. Requires the context current and mutex_ held.
  bool Available() {
    if (state_ == State::kUnknown) {
      const CudaDriver& driver = queue_->driver();
      state_ = State::kAvailable;
      for (Buffer& buffer : buffers_) {
        if (driver.allocate_pinned_memory(&buffer.host, kChunkBytes, 0) != CUDA_SUCCESS ||
            driver.create_event(&buffer.ready, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
          state_ = State::kRefused;
          break;
        }
      }
    }
    return state_ == State::kAvailable;
  }

  // The next buffer in turn, once the transfer last using it has finished.
  Buffer& NextBuffer() {
    Buffer& buffer = buffers_[next_];
    next_ = (next_ + 1) % buffers_.size();
    if (buffer.recorded) {
      queue_->driver().Check(queue_->driver().synchronize_event(buffer.ready),
                             queue_->device_name(), "cuEventSynchronize");
    }
    return buffer;
  }

  void Record(Buffer& buffer) {
    queue_->driver().Check(queue_->driver().record_event(buffer.ready, queue_->stream()),
                           queue_->device_name(), "cuEventRecord");
    buffer.recorded = true;
  }

  enum class State { kUnknown, kAvailable, kRefused };
  const std::shared_ptr<const CudaQueue> queue_;
  std::mutex mutex_;
  State state_ = State::kUnknown;
  std::array<Buffer, 2> buffers_;
  size_t next_ = 0;
};

// cuMemAlloc and cuMemFree in the device's primary context. cuMemAlloc
// returns blocks aligned to at least 256 bytes, more than kAllocationAlignment.
class CudaMemoryAllocator final : public RawAllocator {
 public:
  explicit CudaMemoryAllocator(std::shared_ptr<const CudaQueue> queue)
      : queue_(std::move(queue)), device_name_(queue_->device_name()) {}

  void* AllocateRaw(size_t bytes) override {
    const CudaDriver& driver = queue_->driver();
    ScopedCurrentContext current(driver, queue_->context(), device_name_);
    CUdeviceptr pointer = 0;
    const CUresult result = driver.allocate_memory(&pointer, bytes);
    // Exhaustion is the pool's to handle: it releases its cache and retries.
    if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
    driver.Check(result, device_name_, "cuMemAlloc");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
  }

  void FreeRaw(void* handle, size_t /*bytes*/) override {
    const CudaDriver& driver = queue_->driver();
    // The pool frees from destructors, so this must not throw; a block the
    // driver refuses to free is lost with its (broken) context anyway.
    if (driver.push_current_context(queue_->context()) != CUDA_SUCCESS) return;
    // The pool hands a block back to the driver only when trimming its
    // cache; work still queued may use it.
    driver.synchronize_stream(queue_->stream());
    driver.free_memory(DevicePointer(handle, 0));
    CUcontext popped = nullptr;
    driver.pop_current_context(&popped);
  }

 private:
  const std::shared_ptr<const CudaQueue> queue_;
  const std::string device_name_;
};

// A module loaded from PTX and its one kernel, launched on the device's
// stream: the stream its copies use, so a launch runs after the copies
// queued before it and before those after it.
class CudaKernel final : public LoadedKernel {
 public:
  CudaKernel(std::shared_ptr<const CudaQueue> queue, const std::string& ptx,
             const std::string& entry)
      : queue_(std::move(queue)), device_name_(queue_->device_name()) {
    const CudaDriver& driver = queue_->driver();
    ScopedCurrentContext current(driver, queue_->context(), device_name_);
    driver.Check(driver.load_module_data(&module_, ptx.c_str()), device_name_, "cuModuleLoadData");
    const CUresult found = driver.get_module_function(&function_, module_, entry.c_str());
    if (found != CUDA_SUCCESS) {
      driver.unload_module(module_);
      driver.Check(found, device_name_, "cuModuleGetFunction");
    }
  }
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;
  ~CudaKernel() override {
    const CudaDriver& driver = queue_->driver();
    if (driver.push_current_context(queue_->context()) != CUDA_SUCCESS) return;
    driver.unload_module(module_);
    CUcontext popped = nullptr;
    driver.pop_current_context(&popped);
  }

  void Launch(std::span<const BufferArgument> buffers, std::span<const int64_t> scalars,
              int64_t threads) const override {
    if (threads <= 0) return;
    // cuLaunchKernel reads each argument through a pointer to it.
    std::vector<CUdeviceptr> pointers;
    pointers.reserve(buffers.size());
    for (const BufferArgument& buffer : buffers)
      pointers.push_back(DevicePointer(buffer.handle, buffer.byte_offset));
    std::vector<long long> values(scalars.begin(), scalars.end());
    std::vector<void*> arguments;
    for (CUdeviceptr& pointer : pointers) arguments.push_back(&pointer);
    for (long long& value : values) arguments.push_back(&value);
    const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
    const CudaDriver& driver = queue_->driver();
    ScopedCurrentContext current(driver, queue_->context(), device_name_);
    driver.Check(driver.launch_kernel(function_, blocks, 1, 1, kBlockThreads, 1, 1, 0,
                                      queue_->stream(), arguments.data(), nullptr),
                 device_name_, "cuLaunchKernel");
  }

 private:
  static constexpr unsigned kBlockThreads = 256;

  const std::shared_ptr<const CudaQueue> queue_;
  const std::string device_name_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

class CudaDevice final : public PooledDevice, public KernelLoader {
 public:
  // `queue` is on the primary context of the device `id` names, whose
  // compute capability is `compute_major`.`compute_minor`.
  CudaDevice(DeviceId id, std::shared_ptr<const CudaQueue> queue, std::string description,
             int compute_major, int compute_minor, MemoryPoolOptions pool_options)
      : PooledDevice(id, std::move(description), std::make_unique<CudaMemoryAllocator>(queue),
                     std::move(pool_options)),
        queue_(std::move(queue)),
        driver_(queue_->driver()),
        staging_(queue_),
        compute_major_(compute_major),
        compute_minor_(compute_minor),
        disk_(DefaultKernelCacheDirectory(), kPtxCacheVersion, ".relay-ptx") {}

  SourceDialect dialect() const override { return SourceDialect::kCudaC; }

  // CUDA C through NVRTC to PTX for the device's compute capability, which
  // the driver compiles for the GPU as it loads the module.
  std::shared_ptr<const LoadedKernel> LoadKernel(const std::string& source,
                                                 const std::string& entry) override {
    return kernels_.GetOrBuild(source, entry, [&] {
      // PTX is cached on disk by NVRTC's version, the architecture and the
      // text: NVRTC takes tens of milliseconds a kernel.
      const std::string architecture =
          "compute_" + std::to_string(compute_major_) + std::to_string(compute_minor_);
      const std::string key =
          "cuda ptx\nNVRTC " + NvrtcVersion() + "\n" + architecture + "\n" + source;
      std::string ptx;
      if (!disk_.enabled() || disk_.Load(key, ptx) != KernelDiskCache::LoadOutcome::kFound) {
        ptx = CompileCudaToPtx(source, compute_major_, compute_minor_);
        if (disk_.enabled()) disk_.Store(key, ptx);
      }
      return std::make_shared<CudaKernel>(queue_, ptx, entry);
    });
  }

  // Returns once the bytes are staged; the transfer is queued.
  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    if (bytes == 0) return;
    staging_.ToDevice(source, DevicePointer(destination_handle, destination_offset), bytes);
  }

  // Returns when the bytes have arrived, after everything queued before.
  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    if (bytes == 0) return;
    staging_.ToHost(DevicePointer(source_handle, source_offset), destination, bytes);
  }

  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override {
    if (bytes == 0) return;
    const CUdeviceptr source = DevicePointer(source_handle, source_offset);
    const CUdeviceptr destination = DevicePointer(destination_handle, destination_offset);
    if (source == destination) return;
    auto copy = [&](CUdeviceptr to, CUdeviceptr from) {
      driver_.Check(driver_.copy_device_to_device_async(to, from, bytes, queue_->stream()), name(),
                    "cuMemcpyDtoDAsync");
    };
    // cuMemcpyDtoD leaves overlapping ranges undefined; two views of one
    // storage may overlap, so stage those copies through a temporary block.
    const bool overlapping = source < destination + bytes && destination < source + bytes;
    if (!overlapping) {
      ScopedCurrentContext current(driver_, queue_->context(), name());
      copy(destination, source);
      return;
    }
    // The stream orders any later use of the staging block after these
    // copies.
    WithStagingBlock(bytes, [&](void* staging_handle) {
      ScopedCurrentContext current(driver_, queue_->context(), name());
      const CUdeviceptr staging = DevicePointer(staging_handle, 0);
      copy(staging, source);
      copy(destination, staging);
    });
  }

  void Synchronize() override { queue_->Synchronize(); }

 private:
  // Shared with the raw allocator and the kernels, which keep the stream and
  // the context until the pool has returned its cache through it.
  const std::shared_ptr<const CudaQueue> queue_;
  const CudaDriver& driver_;  // kept alive by queue_
  PinnedStaging staging_;
  const int compute_major_;
  const int compute_minor_;
  LoadedKernelCache kernels_;
  static constexpr uint32_t kPtxCacheVersion = 1;
  const KernelDiskCache disk_;  // PTX by NVRTC version, architecture and text
};

// "12.4" from the driver's 12040.
std::string FormatDriverVersion(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int32_t CudaDeviceCount(const CudaDriver& driver) {
  const CUresult initialised = driver.initialise(0);
  if (initialised == CUDA_ERROR_NO_DEVICE) return 0;
  // The toolkit's link-time stub has every entry point, so it loads when
  // its directory is on the library path, but it drives nothing.
  if (initialised == CUDA_ERROR_STUB_LIBRARY) {
    throw Error(ErrorKind::kDevice, "no CUDA driver: " + driver.library_name() +
                                        " is the CUDA toolkit's stub library, not a driver "
                                        "(cuInit: CUDA_ERROR_STUB_LIBRARY); install the NVIDIA "
                                        "driver or take the stubs directory off the library path");
  }
  driver.Check(initialised, "CUDA driver", "cuInit");
  int count = 0;
  driver.Check(driver.get_device_count(&count), "CUDA driver", "cuDeviceGetCount");
  return count;
}

int32_t CudaDeviceCount() {
  return CudaDeviceCount(*CudaDriver::Process());
}

std::unique_ptr<Device> CreateCudaDevice(std::shared_ptr<const CudaDriver> driver, int32_t index,
                                         MemoryPoolOptions pool_options) {
  const DeviceId id{DeviceKind::kCUDA, index};
  const std::string name = id.ToString();
  const int32_t count = CudaDeviceCount(*driver);
  if (count == 0) {
    throw Error(ErrorKind::kDevice, "no device " + name + ": the CUDA driver (" +
                                        driver->library_name() + ") reports no CUDA device");
  }
  if (index < 0 || index >= count) {
    throw Error(ErrorKind::kDevice, "no device " + name + ": " + std::to_string(count) +
                                        (count == 1 ? " CUDA device" : " CUDA devices") +
                                        " present");
  }
  CUdevice device = 0;
  driver->Check(driver->get_device(&device, index), name, "cuDeviceGet");
  char model[256] = {};
  driver->Check(driver->get_device_name(model, sizeof(model) - 1, device), name, "cuDeviceGetName");
  size_t total_memory = 0;
  driver->Check(driver->get_device_total_memory(&total_memory, device), name, "cuDeviceTotalMem");
  int driver_version = 0;
  driver->Check(driver->get_driver_version(&driver_version), name, "cuDriverGetVersion");
  int compute_major = 0, compute_minor = 0;
  driver->Check(driver->get_device_attribute(&compute_major,
                                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                name, "cuDeviceGetAttribute");
  driver->Check(driver->get_device_attribute(&compute_minor,
                                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                name, "cuDeviceGetAttribute");
  int multiprocessors = 0;
  driver->Check(driver->get_device_attribute(&multiprocessors,
                                             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                name, "cuDeviceGetAttribute");
  std::string description = name + " (" + model + ", compute capability " +
                            std::to_string(compute_major) + "." + std::to_string(compute_minor) +
                            ", " + std::to_string(multiprocessors) + " multiprocessors, " +
                            FormatByteSize(total_memory) + ", CUDA driver " +
                            FormatDriverVersion(driver_version) + ", pooled)";
  auto context = std::make_shared<PrimaryContext>(std::move(driver), device, name);
  auto queue = std::make_shared<CudaQueue>(std::move(context), name);
  return std::make_unique<CudaDevice>(id, std::move(queue), std::move(description), compute_major,
                                      compute_minor, std::move(pool_options));
}

std::unique_ptr<Device> CreateCudaDevice(int32_t index, MemoryPoolOptions pool_options) {
  return CreateCudaDevice(CudaDriver::Process(), index, std::move(pool_options));
}

std::shared_ptr<const CudaDriver> LoadCudaDriverFromResolver(const SymbolResolver& resolver,
                                                             std::string library_name) {
  return CudaDriver::FromResolver(resolver, std::move(library_name));
}

}  // namespace relay::devices
