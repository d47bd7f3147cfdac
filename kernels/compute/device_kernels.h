// Kernels for devices that compile source at run time (OpenCL, CUDA): the
// GPU schedule's kernel IR printed in the device's dialect
// (kernels/codegen/gpu/kernel_source.h) and loaded through the device's
// KernelLoader (devices/kernel_loader.h), which builds each distinct text
// once per device.
#pragma once

#include <memory>
#include <span>

#include "devices/kernel_loader.h"
#include "kernels/compute/gpu_schedule.h"
#include "kernels/kir/kir.h"
#include "relay/device.h"

namespace relay::kernels {

struct DeviceKernel {
  std::shared_ptr<const devices::LoadedKernel> loaded;
  kir::Expr thread_count;  // over the kernel's dims
};

// `kernel` compiled for `device`. Throws kUsage when the device loads no
// source kernels (the CPU, XRT), and the loader's kDevice errors.
DeviceKernel CompileDeviceKernel(const kir::Kernel& kernel, Device& device);

// The GPU schedule's choices for `device` (BuildGpuKernel).
GpuScheduleOptions GpuScheduleOptionsFor(Device& device);

}  // namespace relay::kernels
