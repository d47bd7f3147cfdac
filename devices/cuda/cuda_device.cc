#include "devices/cuda/cuda_device.h"

#include <cstddef>
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

// cuMemAlloc and cuMemFree in the device's primary context. cuMemAlloc
// returns blocks aligned to at least 256 bytes, more than kAllocationAlignment.
class CudaMemoryAllocator final : public RawAllocator {
 public:
  CudaMemoryAllocator(std::shared_ptr<const PrimaryContext> context, std::string device_name)
      : context_(std::move(context)), device_name_(std::move(device_name)) {}

  void* AllocateRaw(size_t bytes) override {
    const CudaDriver& driver = context_->driver();
    ScopedCurrentContext current(driver, context_->get(), device_name_);
    CUdeviceptr pointer = 0;
    const CUresult result = driver.allocate_memory(&pointer, bytes);
    // Exhaustion is the pool's to handle: it releases its cache and retries.
    if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
    driver.Check(result, device_name_, "cuMemAlloc");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
  }

  void FreeRaw(void* handle, size_t /*bytes*/) override {
    const CudaDriver& driver = context_->driver();
    // The pool frees from destructors, so this must not throw; a block the
    // driver refuses to free is lost with its (broken) context anyway.
    if (driver.push_current_context(context_->get()) != CUDA_SUCCESS) return;
    driver.free_memory(DevicePointer(handle, 0));
    CUcontext popped = nullptr;
    driver.pop_current_context(&popped);
  }

 private:
  const std::shared_ptr<const PrimaryContext> context_;
  const std::string device_name_;
};

// A module loaded from PTX and its one kernel, launched on the context's
// default stream: the stream the device's copies use, so a launch runs
// after the copies queued before it and before those after it.
class CudaKernel final : public LoadedKernel {
 public:
  CudaKernel(std::shared_ptr<const PrimaryContext> context, std::string device_name,
             const std::string& ptx, const std::string& entry)
      : context_(std::move(context)), device_name_(std::move(device_name)) {
    const CudaDriver& driver = context_->driver();
    ScopedCurrentContext current(driver, context_->get(), device_name_);
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
    const CudaDriver& driver = context_->driver();
    if (driver.push_current_context(context_->get()) != CUDA_SUCCESS) return;
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
    const CudaDriver& driver = context_->driver();
    ScopedCurrentContext current(driver, context_->get(), device_name_);
    driver.Check(driver.launch_kernel(function_, blocks, 1, 1, kBlockThreads, 1, 1, 0, nullptr,
                                      arguments.data(), nullptr),
                 device_name_, "cuLaunchKernel");
  }

 private:
  static constexpr unsigned kBlockThreads = 256;

  const std::shared_ptr<const PrimaryContext> context_;
  const std::string device_name_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

class CudaDevice final : public PooledDevice, public KernelLoader {
 public:
  // `context` is the primary context of the device `id` names, whose
  // compute capability is `compute_major`.`compute_minor`.
  CudaDevice(DeviceId id, std::shared_ptr<const PrimaryContext> context, std::string description,
             int compute_major, int compute_minor, MemoryPoolOptions pool_options)
      : PooledDevice(id, std::move(description),
                     std::make_unique<CudaMemoryAllocator>(context, id.ToString()),
                     std::move(pool_options)),
        context_(std::move(context)),
        driver_(context_->driver()),
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
      return std::make_shared<CudaKernel>(context_, name(), ptx, entry);
    });
  }

  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    if (bytes == 0) return;
    ScopedCurrentContext current(driver_, context_->get(), name());
    driver_.Check(driver_.copy_host_to_device(DevicePointer(destination_handle, destination_offset),
                                              source, bytes),
                  name(), "cuMemcpyHtoD");
  }

  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    if (bytes == 0) return;
    ScopedCurrentContext current(driver_, context_->get(), name());
    driver_.Check(driver_.copy_device_to_host(destination,
                                              DevicePointer(source_handle, source_offset), bytes),
                  name(), "cuMemcpyDtoH");
  }

  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override {
    if (bytes == 0) return;
    const CUdeviceptr source = DevicePointer(source_handle, source_offset);
    const CUdeviceptr destination = DevicePointer(destination_handle, destination_offset);
    if (source == destination) return;
    // cuMemcpyDtoD leaves overlapping ranges undefined; two views of one
    // storage may overlap, so stage those copies through a temporary block.
    const bool overlapping = source < destination + bytes && destination < source + bytes;
    if (!overlapping) {
      ScopedCurrentContext current(driver_, context_->get(), name());
      driver_.Check(driver_.copy_device_to_device(destination, source, bytes), name(),
                    "cuMemcpyDtoD");
      return;
    }
    // The default stream orders any later use of the staging block after
    // these copies.
    WithStagingBlock(bytes, [&](void* staging_handle) {
      ScopedCurrentContext current(driver_, context_->get(), name());
      const CUdeviceptr staging = DevicePointer(staging_handle, 0);
      driver_.Check(driver_.copy_device_to_device(staging, source, bytes), name(), "cuMemcpyDtoD");
      driver_.Check(driver_.copy_device_to_device(destination, staging, bytes), name(),
                    "cuMemcpyDtoD");
    });
  }

  void Synchronize() override {
    ScopedCurrentContext current(driver_, context_->get(), name());
    driver_.Check(driver_.synchronize_context(), name(), "cuCtxSynchronize");
  }

 private:
  // Shared with the raw allocator, which keeps the context retained until the
  // pool has returned its cache through it.
  const std::shared_ptr<const PrimaryContext> context_;
  const CudaDriver& driver_;  // kept alive by context_
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
  return std::make_unique<CudaDevice>(id, std::move(context), std::move(description), compute_major,
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
