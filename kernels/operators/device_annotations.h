// The device annotations of Relay programs: on_device and device_copy.
//
//   on_device(%x, device_type="opencl")      %x is computed on that device
//   device_copy(%x, src_device_type="opencl", dst_device_type="cpu")
//                                             %x moved between devices
//
// Device types are names ("cpu", "cuda", "opencl", "xrt"; "llvm" and "gpu"
// as TVM's aliases of cpu and cuda) or TVM's integer DLPack codes (1 cpu,
// 2 cuda, 4 opencl, 12 xrt); device_id (src_device_id, dst_device_id)
// picks one of several devices of a kind, default 0. Both operators have
// their input's type, and as kernels they copy it. The VM's compiler turns
// them into placements of the calls around them
// (compiler/passes/plan_devices.h).
#pragma once

#include <optional>
#include <string>

#include "kernels/attributes.h"
#include "relay/device.h"

namespace relay::kernels {

inline constexpr const char* kOnDevice = "on_device";
inline constexpr const char* kDeviceCopy = "device_copy";

// The device that attributes `type_key` and `id_key` of normalised `attrs`
// name, or a message saying what is wrong with them.
struct DeviceAttr {
  std::optional<DeviceId> device;
  std::string problem;
};
DeviceAttr DeviceFromAttrs(const Attrs& attrs, const char* type_key, const char* id_key);

// Attributes naming `device`, as on_device's (device_type, device_id).
Attrs DeviceAttrs(DeviceId device, const char* type_key = "device_type",
                  const char* id_key = "device_id");

}  // namespace relay::kernels
