#include "vm/interpreter/external_kernels.h"

#include <string>

#include "devices/external_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"

namespace relay::vm {
namespace {

std::string Count(size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

}  // namespace

Ref<Tensor> RunExternalKernel(
    const KernelCall& call, std::vector<Ref<Tensor>>& inputs,
    const std::function<Ref<Tensor>(const Ref<Tensor>&, Device&)>& place) {
  RELAY_CHECK(call.external.has_value(), "an external kernel call names its kernel");
  const KernelCall::External& external = *call.external;
  RELAY_CHECK(external.compiler == "xrt", "the loader admits only xrt kernels");
  Device& device = GetDevice(call.device.value_or(DeviceId{DeviceKind::kXRT, 0}));
  devices::ExternalKernelHost* host = devices::ExternalKernelHostOf(device);
  const devices::ExternalKernel* kernel =
      host != nullptr ? host->FindKernel(external.symbol) : nullptr;
  if (kernel == nullptr) {
    throw Error(ErrorKind::kUsage, "xrt kernel " + external.symbol + " is not loaded on " +
                                       device.id().ToString() +
                                       ": give the .xclbin that holds it with --xclbin FILE");
  }
  size_t buffers = 0, integers = 0;
  for (const devices::ExternalKernelArgument& argument : kernel->arguments())
    (argument.kind == devices::ExternalKernelArgument::Kind::kBuffer ? buffers : integers) += 1;
  if (buffers != inputs.size() + 1 || integers > external.shape.size()) {
    throw Error(ErrorKind::kUsage,
                "xrt kernel " + external.symbol + " takes " + Count(buffers, "buffer", "buffers") +
                    " and " + Count(integers, "integer", "integers") + "; the call gives " +
                    Count(inputs.size(), "tensor", "tensors") + " and its result (" +
                    Count(inputs.size() + 1, "buffer", "buffers") + "), and " +
                    Count(external.shape.size(), "dimension", "dimensions") +
                    " of the result as integers");
  }
  for (Ref<Tensor>& input : inputs) input = place(input, device);
  Ref<Tensor> result = Tensor::Empty(device, external.shape, external.dtype);
  std::vector<devices::BufferArgument> arguments;
  for (const Ref<Tensor>& tensor : inputs)
    arguments.push_back({tensor->storage()->handle(), tensor->byte_offset()});
  arguments.push_back({result->storage()->handle(), result->byte_offset()});
  const std::vector<int64_t> dimensions(external.shape.begin(),
                                        external.shape.begin() + std::ptrdiff_t(integers));
  kernel->Run(arguments, dimensions);
  return result;
}

}  // namespace relay::vm
