// Finding devices.
#pragma once

#include "relay/device.h"

namespace relay {

// The process-wide CPU device. Never throws.
Device& HostDevice();

// The device named by `id`, created on first use and alive until the process
// exits. Throws kDevice when the device is not available: a backend not in
// this build, a missing driver ("no CUDA driver: ..."), or an index past the
// number of devices present.
Device& GetDevice(DeviceId id);

}  // namespace relay
