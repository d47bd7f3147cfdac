// Kernels a device runs that relay-vm did not compile: an FPGA's kernels,
// built by the vendor's tools into a file the user supplies (an .xclbin for
// XRT), loaded at run time and called by name.
//
// A device that can run such kernels is also an ExternalKernelHost. The VM
// calls a Relay function marked Compiler="xrt" (global_symbol naming the
// kernel) through this interface; nothing above it names a device kind.
//
// The calling convention is the one relay-vm's own kernels follow: the
// kernel's buffer arguments take the call's input tensors in order, then its
// result; its scalar arguments take 64-bit integers (the result's
// dimensions, outermost first; see docs/devices.md).
//
// Thread-safety: every method may be called from many threads.
// Errors: relay::Error of kind kUsage for a file that is not a kernel file
// of the device (naming the file and what is wrong) and for calls that do
// not match a kernel's arguments; kDevice for the driver's failures, naming
// the device and the operation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/kernel_loader.h"
#include "relay/device.h"

namespace relay::devices {

// One argument of an external kernel, in the kernel's order.
struct ExternalKernelArgument {
  enum class Kind : uint8_t {
    kBuffer,  // a pointer into the device's memory: a tensor
    kScalar,  // an integer passed by value
  };
  std::string name;
  Kind kind = Kind::kBuffer;
};

class ExternalKernel {
 public:
  virtual ~ExternalKernel() = default;
  virtual const std::string& name() const = 0;
  virtual const std::vector<ExternalKernelArgument>& arguments() const = 0;
  // Runs the kernel and returns when it has finished. `buffers` holds one
  // entry per kBuffer argument and `scalars` one per kScalar argument, each
  // in the order of arguments(); a count that differs is kUsage. The
  // buffers are blocks of this kernel's device.
  virtual void Run(std::span<const BufferArgument> buffers,
                   std::span<const int64_t> scalars) const = 0;
};

class ExternalKernelHost {
 public:
  virtual ~ExternalKernelHost() = default;
  // Loads the kernel file at `path` onto the device (replacing any loaded
  // before: a card holds one at a time) and registers its kernels by name.
  // Returns their names, in the file's order.
  virtual std::vector<std::string> LoadKernelFile(const std::string& path) = 0;
  // The registered kernel `name`, or null. Kernels live as long as the
  // device.
  virtual const ExternalKernel* FindKernel(std::string_view name) const = 0;
};

// `device` as an ExternalKernelHost, or null when its kind runs no external
// kernels.
inline ExternalKernelHost* ExternalKernelHostOf(Device& device) {
  return dynamic_cast<ExternalKernelHost*>(&device);
}

}  // namespace relay::devices
