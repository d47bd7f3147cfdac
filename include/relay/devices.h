// Finding devices.
#pragma once

#include <string>
#include <vector>

#include "relay/device.h"

namespace relay {

// The process-wide CPU device. Never throws.
Device& HostDevice();

// The device named by `id`, created on first use and alive until the process
// exits. Throws kDevice when the device is not available: a backend not in
// this build, a missing driver ("no CUDA driver: ..."), or an index past the
// number of devices present.
Device& GetDevice(DeviceId id);

// What one backend offers, for `relay-vm devices`: a line per device
// present (its description), or why there is none.
struct BackendSurvey {
  DeviceKind kind = DeviceKind::kCPU;
  std::vector<std::string> devices;
  std::string unavailable;  // empty when devices were found
  std::string compiler;     // how its kernels are compiled ("NVRTC 13.0"), or why they cannot be
};

// Every backend relay-vm knows, in the order cpu, opencl, cuda, xrt. Opens
// the drivers present (creating their devices); never throws.
std::vector<BackendSurvey> SurveyDevices();

}  // namespace relay
