// HostDevice() and GetDevice(): the one place that knows which device kinds
// this build has. gpu_backends.cmake defines RELAY_HAS_<KIND>_DEVICE for each
// backend compiled in; a kind without one is reported as not built.
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "devices/cpu/cpu_device.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_loader.h"
#include "relay/devices.h"
#include "relay/error.h"

#if defined(RELAY_HAS_CUDA_DEVICE)
#include "devices/cuda/cuda_device.h"
#include "devices/cuda/nvrtc_compiler.h"
#endif
#if defined(RELAY_HAS_OPENCL_DEVICE)
#include "devices/opencl/opencl_device.h"
#endif
#if defined(RELAY_HAS_XRT_DEVICE)
#include "devices/xrt/xrt_device.h"
#endif

namespace relay {
namespace {

[[maybe_unused]] [[noreturn]] void ThrowBackendNotBuilt(DeviceId id, const char* backend_name) {
  throw Error(ErrorKind::kDevice, "device " + id.ToString() + " is not available: the " +
                                      backend_name + " backend is not part of this build yet");
}

void SynchronizeEveryDevice();

// Registers SynchronizeEveryDevice to run at exit, once.
void DrainDevicesAtExit() {
  static const bool registered = std::atexit(SynchronizeEveryDevice) == 0;
  (void)registered;
}

// Devices of one kind, created on first use by `create(index)` and, like the
// host device, never destroyed: storage freed during static destruction may
// still return blocks to them. A failed creation is not remembered, so a
// later call tries again (and reports the error again).
class DeviceTable {
 public:
  template <typename Create>
  Device& GetOrCreate(int32_t index, Create create) {
    std::lock_guard lock(mutex_);
    auto existing = devices_.find(index);
    if (existing != devices_.end()) return *existing->second;
    std::unique_ptr<Device> created = create(index);
    Device& device = *created;
    devices_.emplace(index, created.release());
    // A process that exits with kernels still queued (after an error) lets
    // the driver run them while its own libraries are torn down: PoCL then
    // fails to compile them and aborts. Registered after the driver was
    // loaded, this runs before the driver's static destructors.
    DrainDevicesAtExit();
    return device;
  }

  // Waits for every device of this table; errors are dropped (the process
  // is exiting).
  void SynchronizeAll() {
    std::lock_guard lock(mutex_);
    for (const auto& [index, device] : devices_) {
      try {
        device->Synchronize();
      } catch (const Error&) {
      }
    }
  }

 private:
  std::mutex mutex_;
  std::map<int32_t, Device*> devices_;
};

[[maybe_unused]] DeviceTable& TableFor(DeviceKind kind) {
  static DeviceTable* const tables = new DeviceTable[3];
  switch (kind) {
    case DeviceKind::kCUDA:
      return tables[0];
    case DeviceKind::kOpenCL:
      return tables[1];
    default:
      return tables[2];
  }
}

void SynchronizeEveryDevice() {
  for (DeviceKind kind : {DeviceKind::kCUDA, DeviceKind::kOpenCL, DeviceKind::kXRT})
    TableFor(kind).SynchronizeAll();
}

}  // namespace

Device& HostDevice() {
  // Deliberately never destroyed: tensors held by other static objects may be
  // freed during static destruction, after a destroyed device would be gone.
  static devices::CpuDevice* const host_device = new devices::CpuDevice();
  return *host_device;
}

Device& GetDevice(DeviceId id) {
  switch (id.kind) {
    case DeviceKind::kCPU:
      if (id.index == 0) return HostDevice();
      throw Error(ErrorKind::kDevice, "no device " + id.ToString() + ": the host is cpu:0");
    case DeviceKind::kCUDA:
#if defined(RELAY_HAS_CUDA_DEVICE)
      return TableFor(id.kind).GetOrCreate(
          id.index, [](int32_t index) { return devices::CreateCudaDevice(index); });
#else
      ThrowBackendNotBuilt(id, "CUDA");
#endif
    case DeviceKind::kOpenCL:
#if defined(RELAY_HAS_OPENCL_DEVICE)
      return TableFor(id.kind).GetOrCreate(
          id.index, [](int32_t index) { return devices::CreateOpenClDevice(index); });
#else
      ThrowBackendNotBuilt(id, "OpenCL");
#endif
    case DeviceKind::kXRT:
#if defined(RELAY_HAS_XRT_DEVICE)
      return TableFor(id.kind).GetOrCreate(
          id.index, [](int32_t index) { return devices::CreateXrtDevice(index); });
#else
      ThrowBackendNotBuilt(id, "XRT");
#endif
  }
  // A DeviceKind value outside the enumeration, for example a cast DLPack code.
  throw Error(ErrorKind::kDevice, "no device of kind " + std::to_string(static_cast<int>(id.kind)) +
                                      " (index " + std::to_string(id.index) +
                                      "): relay-vm knows cpu, cuda, opencl and xrt");
}

namespace {

// The devices of one kind that `count` reports, or why there are none.
template <typename Count>
BackendSurvey SurveyKind(DeviceKind kind, Count count, const char* none_present) {
  BackendSurvey survey;
  survey.kind = kind;
  int32_t present = 0;
  try {
    present = count();
  } catch (const Error& error) {
    survey.unavailable = error.message();
    return survey;
  }
  if (present == 0) survey.unavailable = none_present;
  for (int32_t index = 0; index < present; ++index) {
    const DeviceId id{kind, index};
    try {
      survey.devices.push_back(GetDevice(id).description());
    } catch (const Error& error) {
      survey.devices.push_back(id.ToString() + " (unusable: " + error.message() + ")");
    }
  }
  return survey;
}

[[maybe_unused]] BackendSurvey NotBuilt(DeviceKind kind, const char* backend_name) {
  BackendSurvey survey;
  survey.kind = kind;
  survey.unavailable = std::string("the ") + backend_name + " backend is not part of this build";
  return survey;
}

}  // namespace

std::vector<BackendSurvey> SurveyDevices() {
  std::vector<BackendSurvey> surveys;
  BackendSurvey host;
  host.kind = DeviceKind::kCPU;
  host.devices.push_back(HostDevice().description() + ", " +
                         std::to_string(devices::HostThreadPool().worker_count() + 1) + " threads");
  host.compiler = "the LLVM JIT";
  surveys.push_back(std::move(host));
#if defined(RELAY_HAS_OPENCL_DEVICE)
  surveys.push_back(SurveyKind(
      DeviceKind::kOpenCL, [] { return devices::OpenClDeviceCount(); },
      "the OpenCL loader found no device"));
  if (!surveys.back().devices.empty()) surveys.back().compiler = "the platform's clBuildProgram";
#else
  surveys.push_back(NotBuilt(DeviceKind::kOpenCL, "OpenCL"));
#endif
#if defined(RELAY_HAS_CUDA_DEVICE)
  surveys.push_back(SurveyKind(
      DeviceKind::kCUDA, [] { return devices::CudaDeviceCount(); },
      "the CUDA driver reports no device"));
  try {
    surveys.back().compiler = "NVRTC " + devices::NvrtcVersion();
  } catch (const Error& error) {
    surveys.back().compiler = error.message();
  }
#else
  surveys.push_back(NotBuilt(DeviceKind::kCUDA, "CUDA"));
#endif
#if defined(RELAY_HAS_XRT_DEVICE)
  surveys.push_back(SurveyKind(
      DeviceKind::kXRT, [] { return devices::XrtDeviceCount(); }, "XRT reports no device"));
  if (!surveys.back().devices.empty())
    surveys.back().compiler = "pre-built, from the .xclbin given with --xclbin";
#else
  surveys.push_back(NotBuilt(DeviceKind::kXRT, "XRT"));
#endif
  return surveys;
}

namespace devices {

KernelLoader* KernelLoaderOf(Device& device) {
  return dynamic_cast<KernelLoader*>(&device);
}

}  // namespace devices
}  // namespace relay
