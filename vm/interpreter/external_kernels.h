// Calling kernels that relay-vm did not compile: a function marked
// Compiler="xrt", global_symbol="vadd" runs kernel vadd of an .xclbin loaded
// onto an XRT device (devices/external_kernels.h).
//
// The call follows relay-vm's kernel convention: the kernel's buffer
// arguments take the function's tensors in order, then the result, which
// is allocated on the kernel's device; its integer arguments take the
// result's dimensions, outermost first. The result stays on that device
// until something reads it elsewhere.
//
// Errors: kDevice when the device is absent ("no XRT device: ..."), kUsage
// when the kernel is not loaded or its arguments do not fit the call, both
// naming the kernel; the driver's failures as the device reports them.
#pragma once

#include <functional>
#include <vector>

#include "relay/device.h"
#include "relay/tensor.h"
#include "vm/bytecode/bytecode.h"

namespace relay::vm {

// Runs `call` (call.external set) on `inputs`, which are replaced by their
// copies on the kernel's device. `place` gives a tensor on a device, copying
// it there when it is elsewhere (the VM keeps immutable inputs' copies).
Ref<Tensor> RunExternalKernel(const KernelCall& call, std::vector<Ref<Tensor>>& inputs,
                              const std::function<Ref<Tensor>(const Ref<Tensor>&, Device&)>& place);

}  // namespace relay::vm
