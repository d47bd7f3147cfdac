#include "devices/cpu/cpu_device.h"

#include <mimalloc.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace relay::devices {
namespace {

// memmove rather than memcpy: two views of one storage may overlap, and on
// the host the "host" side of a copy may itself be pool memory. A zero-byte
// copy may come with null pointers, which the C library does not accept.
void MoveBytes(void* destination, const void* source, size_t bytes) {
  if (bytes == 0) return;
  std::memmove(destination, source, bytes);
}

}  // namespace

void* MimallocAllocator::AllocateRaw(size_t bytes) {
  return mi_malloc_aligned(bytes, kAllocationAlignment);
}

void MimallocAllocator::FreeRaw(void* handle, size_t /*bytes*/) {
  mi_free(handle);
}

CpuDevice::CpuDevice(MemoryPoolOptions pool_options)
    : PooledDevice(
          DeviceId{DeviceKind::kCPU, 0},
          "cpu:0 (host memory, " + std::to_string(kAllocationAlignment) + "-byte aligned, pooled)",
          std::make_unique<MimallocAllocator>(), std::move(pool_options)) {}

void CpuDevice::CopyFromHost(const void* source, void* destination_handle,
                             size_t destination_offset, size_t bytes) {
  MoveBytes(static_cast<std::byte*>(destination_handle) + destination_offset, source, bytes);
}

void CpuDevice::CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                           size_t bytes) {
  MoveBytes(destination, static_cast<const std::byte*>(source_handle) + source_offset, bytes);
}

void CpuDevice::CopyWithinDevice(const void* source_handle, size_t source_offset,
                                 void* destination_handle, size_t destination_offset,
                                 size_t bytes) {
  MoveBytes(static_cast<std::byte*>(destination_handle) + destination_offset,
            static_cast<const std::byte*>(source_handle) + source_offset, bytes);
}

}  // namespace relay::devices
