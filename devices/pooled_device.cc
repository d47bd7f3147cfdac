#include "devices/pooled_device.h"

#include <utility>

namespace relay::devices {
namespace {

MemoryPoolOptions WithDeviceName(MemoryPoolOptions options, std::string device_name) {
  options.device_name = std::move(device_name);
  return options;
}

}  // namespace

PooledDevice::PooledDevice(DeviceId id, std::string description,
                           std::unique_ptr<RawAllocator> raw_allocator,
                           MemoryPoolOptions pool_options)
    : id_(id),
      name_(id.ToString()),
      description_(std::move(description)),
      raw_allocator_(std::move(raw_allocator)),
      pool_(*raw_allocator_, WithDeviceName(std::move(pool_options), name_)) {}

}  // namespace relay::devices
