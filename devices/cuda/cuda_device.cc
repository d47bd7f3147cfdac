#include "devices/cuda/cuda_device.h"

#include <cstddef>
#include <utility>

#include "devices/cuda/cuda_driver.h"
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

class CudaDevice final : public PooledDevice {
 public:
  // `context` is the primary context of the device `id` names.
  CudaDevice(DeviceId id, std::shared_ptr<const PrimaryContext> context, std::string description,
             MemoryPoolOptions pool_options)
      : PooledDevice(id, std::move(description),
                     std::make_unique<CudaMemoryAllocator>(context, id.ToString()),
                     std::move(pool_options)),
        context_(std::move(context)),
        driver_(context_->driver()) {}

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
  std::string description = name + " (" + model + ", " + FormatByteSize(total_memory) +
                            ", CUDA driver " + FormatDriverVersion(driver_version) + ", pooled)";
  auto context = std::make_shared<PrimaryContext>(std::move(driver), device, name);
  return std::make_unique<CudaDevice>(id, std::move(context), std::move(description),
                                      std::move(pool_options));
}

std::unique_ptr<Device> CreateCudaDevice(int32_t index, MemoryPoolOptions pool_options) {
  return CreateCudaDevice(CudaDriver::Process(), index, std::move(pool_options));
}

std::shared_ptr<const CudaDriver> LoadCudaDriverFromResolver(const SymbolResolver& resolver,
                                                             std::string library_name) {
  return CudaDriver::FromResolver(resolver, std::move(library_name));
}

}  // namespace relay::devices
