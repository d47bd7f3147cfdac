#include <charconv>

#include "relay/device.h"

namespace relay {

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCPU:
      return "cpu";
    case DeviceKind::kCUDA:
      return "cuda";
    case DeviceKind::kOpenCL:
      return "opencl";
    case DeviceKind::kXRT:
      return "xrt";
  }
  return "unknown";
}

std::string DeviceId::ToString() const {
  return std::string(DeviceKindName(kind)) + ":" + std::to_string(index);
}

std::optional<DeviceId> ParseDeviceId(std::string_view text) {
  std::string_view kind_text = text;
  int32_t index = 0;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    kind_text = text.substr(0, colon);
    std::string_view index_text = text.substr(colon + 1);
    auto [end, error] =
        std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
    if (index_text.empty() || error != std::errc() ||
        end != index_text.data() + index_text.size() || index < 0) {
      return std::nullopt;
    }
  }
  for (DeviceKind kind :
       {DeviceKind::kCPU, DeviceKind::kCUDA, DeviceKind::kOpenCL, DeviceKind::kXRT}) {
    if (DeviceKindName(kind) == kind_text) return DeviceId{kind, index};
  }
  return std::nullopt;
}

}  // namespace relay
