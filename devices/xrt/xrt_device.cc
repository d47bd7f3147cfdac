#include "devices/xrt/xrt_device.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "devices/pooled_device.h"
#include "devices/xrt/xrt_library.h"
#include "relay/error.h"

namespace relay::devices {
namespace {

// Buffer object n travels as the handle n + 1: XRT numbers buffer objects
// from 0, and a null handle means "no block" to the pool.
void* HandleOf(xclBufferHandle buffer) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(buffer) + 1);
}

xclBufferHandle BufferOf(const void* handle) {
  return static_cast<xclBufferHandle>(reinterpret_cast<uintptr_t>(handle) - 1);
}

// An open card, closed with the XrtDevice once its pool has returned its
// cache. Its mutex serialises every call made with the card's handle.
class OpenCard {
 public:
  OpenCard(std::shared_ptr<const XrtLibrary> library, int32_t index, const std::string& subject)
      : library_(std::move(library)) {
    handle_ = library_->open_device(static_cast<unsigned int>(index), nullptr, XCL_QUIET);
    if (handle_ == nullptr) {
      throw Error(ErrorKind::kDevice, subject + ": xclOpen failed (" + library_->library_name() +
                                          " could not open the card; is another process "
                                          "holding it, or its firmware not loaded?)");
    }
  }
  OpenCard(const OpenCard&) = delete;
  OpenCard& operator=(const OpenCard&) = delete;
  ~OpenCard() { library_->close_device(handle_); }

  const XrtLibrary& library() const { return *library_; }
  xclDeviceHandle handle() const { return handle_; }
  std::mutex& mutex() const { return mutex_; }

 private:
  std::shared_ptr<const XrtLibrary> library_;
  xclDeviceHandle handle_ = nullptr;
  mutable std::mutex mutex_;
};

// xclAllocBO and xclFreeBO on the card's first memory bank. Buffer objects
// start on page boundaries, beyond kAllocationAlignment.
class XrtBufferAllocator final : public RawAllocator {
 public:
  XrtBufferAllocator(std::shared_ptr<const OpenCard> card, std::string device_name)
      : card_(std::move(card)), device_name_(std::move(device_name)) {}

  void* AllocateRaw(size_t bytes) override {
    std::lock_guard lock(card_->mutex());
    // The xcl layer reports why an allocation failed only through errno.
    errno = 0;
    const xclBufferHandle buffer =
        card_->library().allocate_buffer(card_->handle(), bytes, 0, XCL_BO_FLAGS_NONE);
    if (buffer != NULLBO) return HandleOf(buffer);
    const int error_number = errno;
    // Exhaustion is the pool's to handle: it releases its cache and retries.
    if (error_number == ENOMEM || error_number == 0) return nullptr;
    XrtLibrary::Check(error_number, device_name_, "xclAllocBO");
    return nullptr;
  }

  void FreeRaw(void* handle, size_t /*bytes*/) override {
    std::lock_guard lock(card_->mutex());
    card_->library().free_buffer(card_->handle(), BufferOf(handle));
  }

 private:
  const std::shared_ptr<const OpenCard> card_;
  const std::string device_name_;
};

// "xrt:0 (xilinx_u250_gen3x16_xdma_shell_4_1, 64.0 GiB DDR, pooled)"; the
// card's name is left out when the driver will not describe it.
std::string DescribeCard(const OpenCard& card, const std::string& name) {
  xclDeviceInfo2 information = {};
  if (card.library().get_device_information(card.handle(), &information) != 0) {
    return name + " (Xilinx card through " + card.library().library_name() + ", pooled)";
  }
  const std::string model(information.mName, strnlen(information.mName, sizeof(information.mName)));
  return name + " (" + model + ", " + FormatByteSize(information.mDDRSize) + " DDR, pooled)";
}

class XrtDevice final : public PooledDevice {
 public:
  // `card` is the card `id` names, opened.
  XrtDevice(DeviceId id, std::shared_ptr<const OpenCard> card, MemoryPoolOptions pool_options)
      : PooledDevice(id, DescribeCard(*card, id.ToString()),
                     std::make_unique<XrtBufferAllocator>(card, id.ToString()),
                     std::move(pool_options)),
        card_(std::move(card)) {}

  void CopyFromHost(const void* source, void* destination_handle, size_t destination_offset,
                    size_t bytes) override {
    if (bytes == 0) return;
    std::lock_guard lock(card_->mutex());
    WriteLocked(source, BufferOf(destination_handle), destination_offset, bytes);
  }

  void CopyToHost(const void* source_handle, size_t source_offset, void* destination,
                  size_t bytes) override {
    if (bytes == 0) return;
    std::lock_guard lock(card_->mutex());
    ReadLocked(BufferOf(source_handle), source_offset, destination, bytes);
  }

  void CopyWithinDevice(const void* source_handle, size_t source_offset, void* destination_handle,
                        size_t destination_offset, size_t bytes) override {
    if (bytes == 0) return;
    // Reading the whole range before writing any of it makes overlapping
    // ranges of one buffer behave like memmove.
    std::vector<std::byte> staging(bytes);
    std::lock_guard lock(card_->mutex());
    ReadLocked(BufferOf(source_handle), source_offset, staging.data(), bytes);
    WriteLocked(staging.data(), BufferOf(destination_handle), destination_offset, bytes);
  }

  // Every copy has finished when it returns.
  void Synchronize() override {}

 private:
  // The host side of the buffer first, then the DMA to the card.
  void WriteLocked(const void* source, xclBufferHandle buffer, size_t offset, size_t bytes) {
    const XrtLibrary& library = card_->library();
    XrtLibrary::Check(static_cast<long long>(
                          library.write_buffer(card_->handle(), buffer, source, bytes, offset)),
                      name(), "xclWriteBO");
    XrtLibrary::Check(library.synchronize_buffer(card_->handle(), buffer, XCL_BO_SYNC_BO_TO_DEVICE,
                                                 bytes, offset),
                      name(), "xclSyncBO");
  }

  // The DMA from the card first, then the host side of the buffer.
  void ReadLocked(xclBufferHandle buffer, size_t offset, void* destination, size_t bytes) {
    const XrtLibrary& library = card_->library();
    XrtLibrary::Check(library.synchronize_buffer(card_->handle(), buffer,
                                                 XCL_BO_SYNC_BO_FROM_DEVICE, bytes, offset),
                      name(), "xclSyncBO");
    XrtLibrary::Check(static_cast<long long>(
                          library.read_buffer(card_->handle(), buffer, destination, bytes, offset)),
                      name(), "xclReadBO");
  }

  // Shared with the raw allocator, which keeps the card open until the pool
  // has returned its cache through it.
  const std::shared_ptr<const OpenCard> card_;
};

}  // namespace

int32_t XrtDeviceCount(const XrtLibrary& library) {
  return static_cast<int32_t>(library.count_devices());
}

int32_t XrtDeviceCount() {
  return XrtDeviceCount(*XrtLibrary::Process());
}

std::unique_ptr<Device> CreateXrtDevice(std::shared_ptr<const XrtLibrary> library, int32_t index,
                                        MemoryPoolOptions pool_options) {
  const DeviceId id{DeviceKind::kXRT, index};
  const std::string name = id.ToString();
  const int32_t count = XrtDeviceCount(*library);
  if (count == 0) {
    throw Error(ErrorKind::kDevice, "no XRT device: " + library->library_name() +
                                        " finds no Xilinx card (xclProbe reports none), so " +
                                        name + " does not exist; is the xocl driver loaded?");
  }
  if (index < 0 || index >= count) {
    throw Error(ErrorKind::kDevice,
                "no device " + name + ": " + std::to_string(count) +
                    (count == 1 ? " XRT device present" : " XRT devices present"));
  }
  auto card = std::make_shared<OpenCard>(std::move(library), index, name);
  return std::make_unique<XrtDevice>(id, std::move(card), std::move(pool_options));
}

std::unique_ptr<Device> CreateXrtDevice(int32_t index, MemoryPoolOptions pool_options) {
  return CreateXrtDevice(XrtLibrary::Process(), index, std::move(pool_options));
}

std::shared_ptr<const XrtLibrary> LoadXrtLibraryFromResolver(const SymbolResolver& resolver,
                                                             std::string library_name) {
  return XrtLibrary::FromResolver(resolver, std::move(library_name));
}

}  // namespace relay::devices
