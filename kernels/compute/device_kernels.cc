#include "kernels/compute/device_kernels.h"

#include <string>

#include "kernels/codegen/gpu/kernel_source.h"

namespace relay::kernels {

DeviceKernel CompileDeviceKernel(const kir::Kernel& kernel, Device& device) {
  devices::KernelLoader* loader = devices::KernelLoaderOf(device);
  if (loader == nullptr) {
    throw Error(ErrorKind::kUsage, "operator " + kernel.name + " cannot run on " +
                                       device.id().ToString() +
                                       ": that device does not compile kernels");
  }
  gpu::KernelSource source = gpu::EmitKernelSource(kernel, loader->dialect());
  return {loader->LoadKernel(source.text, gpu::kKernelEntry), std::move(source.thread_count)};
}

GpuScheduleOptions GpuScheduleOptionsFor(Device& device) {
  GpuScheduleOptions options;
  const devices::KernelLoader* loader = devices::KernelLoaderOf(device);
  options.split_row_reductions = loader == nullptr || !loader->work_items_on_cpu_cores();
  return options;
}

}  // namespace relay::kernels
