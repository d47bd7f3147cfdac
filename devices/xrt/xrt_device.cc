#include "devices/xrt/xrt_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "devices/external_kernels.h"
#include "devices/pooled_device.h"
#include "devices/xrt/xclbin_reader.h"
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
// cache. Its mutex serialises every call made with the card's handle, and
// guards the device's loaded kernels, whose state changes only with calls.
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

// ---- kernels from an xclbin -------------------------------------------------

// How long one xclExecWait waits before the command's state is read again.
constexpr int kExecutionWaitMilliseconds = 1000;
// An ERT command's header counts its payload words in 11 bits.
constexpr uint32_t kMaximumPayloadWords = (1u << 11) - 1;
// One mandatory compute-unit mask and up to three more (extra_cu_masks has
// two bits), 32 compute units each.
constexpr uint32_t kMaximumComputeUnitMasks = 4;
constexpr uint32_t kComputeUnitsPerMask = 32;
// ERT accepts a start command only with at least the four control registers.
constexpr uint32_t kMinimumRegisterWords = 4;
// Exec buffers are mapped into the process, so they take whole pages.
constexpr size_t kExecBufferGranularity = 4096;

const char* CommandStateName(uint32_t state) {
  switch (state) {
    case ERT_CMD_STATE_NEW:
      return "ERT_CMD_STATE_NEW";
    case ERT_CMD_STATE_QUEUED:
      return "ERT_CMD_STATE_QUEUED";
    case ERT_CMD_STATE_RUNNING:
      return "ERT_CMD_STATE_RUNNING";
    case ERT_CMD_STATE_COMPLETED:
      return "ERT_CMD_STATE_COMPLETED";
    case ERT_CMD_STATE_ERROR:
      return "ERT_CMD_STATE_ERROR";
    case ERT_CMD_STATE_ABORT:
      return "ERT_CMD_STATE_ABORT";
    case ERT_CMD_STATE_SUBMITTED:
      return "ERT_CMD_STATE_SUBMITTED";
    case ERT_CMD_STATE_TIMEOUT:
      return "ERT_CMD_STATE_TIMEOUT";
    case ERT_CMD_STATE_NORESPONSE:
      return "ERT_CMD_STATE_NORESPONSE";
    case ERT_CMD_STATE_SKERROR:
      return "ERT_CMD_STATE_SKERROR";
    case ERT_CMD_STATE_SKCRASHED:
      return "ERT_CMD_STATE_SKCRASHED";
    default:
      return "unknown";
  }
}

// Whether the scheduler still owns a command in `state`.
bool CommandInFlight(uint32_t state) {
  return state == ERT_CMD_STATE_NEW || state == ERT_CMD_STATE_QUEUED ||
         state == ERT_CMD_STATE_SUBMITTED || state == ERT_CMD_STATE_RUNNING;
}

// The shape of a kernel's start command (ert_start_kernel_cmd): a header
// word, the compute-unit masks, then the compute unit's register map.
struct CommandLayout {
  uint32_t mask_words = 1;
  uint32_t register_words = kMinimumRegisterWords;

  uint32_t payload_words() const { return mask_words + register_words; }
  size_t bytes() const { return sizeof(uint32_t) * (1 + payload_words()); }
};

// Throws kUsage naming `path` for a kernel that no start command can reach.
CommandLayout CommandLayoutOf(const XclbinKernel& kernel, const std::string& path) {
  CommandLayout layout;
  layout.mask_words = kernel.compute_unit_index / kComputeUnitsPerMask + 1;
  if (layout.mask_words > kMaximumComputeUnitMasks) {
    throw Error(ErrorKind::kUsage,
                path + ": kernel " + kernel.name + " runs on compute unit " +
                    std::to_string(kernel.compute_unit_index) + " of IP_LAYOUT; ERT commands " +
                    "reach only the first " +
                    std::to_string(kMaximumComputeUnitMasks * kComputeUnitsPerMask));
  }
  uint64_t register_end = 0;
  for (const XclbinArgument& argument : kernel.arguments) {
    register_end =
        std::max<uint64_t>(register_end, uint64_t{argument.register_offset} + argument.bytes);
  }
  const uint64_t register_words =
      std::max<uint64_t>(kMinimumRegisterWords, (register_end + 3) / sizeof(uint32_t));
  if (layout.mask_words + register_words > kMaximumPayloadWords) {
    throw Error(ErrorKind::kUsage, path + ": the register map of kernel " + kernel.name + " (" +
                                       std::to_string(register_end) +
                                       " bytes) is too large for an ERT command");
  }
  layout.register_words = static_cast<uint32_t>(register_words);
  return layout;
}

// "3 buffers and 1 scalar".
std::string DescribeArgumentCounts(size_t buffers, size_t scalars) {
  return std::to_string(buffers) + (buffers == 1 ? " buffer and " : " buffers and ") +
         std::to_string(scalars) + (scalars == 1 ? " scalar" : " scalars");
}

// A kernel of a loaded xclbin, run through ERT start commands on its compute
// unit. Its exec buffer and the loaded flag are guarded by the card's mutex;
// the device attaches it when its xclbin is loaded and detaches it when the
// xclbin is replaced or the device destroyed, after which Run refuses.
class XrtKernel final : public ExternalKernel {
 public:
  XrtKernel(std::shared_ptr<const OpenCard> card, std::string device_name, std::string path,
            XclbinKernel description, CommandLayout layout)
      : card_(std::move(card)),
        device_name_(std::move(device_name)),
        path_(std::move(path)),
        description_(std::move(description)),
        layout_(layout) {
    for (const XclbinArgument& argument : description_.arguments) {
      arguments_.push_back({.name = argument.name, .kind = argument.kind});
      const bool buffer = argument.kind == ExternalKernelArgument::Kind::kBuffer;
      (buffer ? buffer_count_ : scalar_count_) += 1;
    }
  }
  XrtKernel(const XrtKernel&) = delete;
  XrtKernel& operator=(const XrtKernel&) = delete;

  const std::string& name() const override { return description_.name; }
  const std::vector<ExternalKernelArgument>& arguments() const override { return arguments_; }

  void Run(std::span<const BufferArgument> buffers,
           std::span<const int64_t> scalars) const override {
    if (buffers.size() != buffer_count_ || scalars.size() != scalar_count_) {
      throw Error(ErrorKind::kUsage, "kernel " + name() + " takes " +
                                         DescribeArgumentCounts(buffer_count_, scalar_count_) +
                                         ", not " +
                                         DescribeArgumentCounts(buffers.size(), scalars.size()));
    }
    std::lock_guard lock(card_->mutex());
    if (command_ == nullptr) {
      throw Error(
          ErrorKind::kUsage,
          "kernel " + name() + " of " + path_ + " is no longer loaded on " + device_name_ +
              (replaced_by_.empty() ? std::string() : ": " + replaced_by_ + " replaced it"));
    }
    WriteCommandLocked(buffers, scalars);
    const XrtLibrary& library = card_->library();
    XrtLibrary::Check(library.execute_command(card_->handle(), command_buffer_), device_name_,
                      "xclExecBuf");
    // The card's mutex also keeps a second thread from waiting on the card:
    // XRT warns that concurrent waits on one handle may lose wake-ups.
    const volatile auto* command = reinterpret_cast<const volatile ert_start_kernel_cmd*>(command_);
    uint32_t state = command->state;
    while (CommandInFlight(state)) {
      errno = 0;
      const int events = library.wait_for_commands(card_->handle(), kExecutionWaitMilliseconds);
      // The wait is poll(2): -1 with errno, though some layers return -errno.
      if (events < 0) {
        const int error_number = events == -1 && errno != 0 ? errno : -events;
        if (error_number != EINTR) XrtLibrary::Check(error_number, device_name_, "xclExecWait");
      }
      state = command->state;
    }
    if (state != ERT_CMD_STATE_COMPLETED) {
      throw Error(ErrorKind::kDevice, device_name_ + ": kernel " + name() + " ended in state " +
                                          CommandStateName(state) + " (" + std::to_string(state) +
                                          "), not ERT_CMD_STATE_COMPLETED");
    }
  }

  // Allocates and maps the exec buffer. Throws kDevice.
  void AttachLocked() {
    const XrtLibrary& library = card_->library();
    const size_t bytes = (layout_.bytes() + kExecBufferGranularity - 1) / kExecBufferGranularity *
                         kExecBufferGranularity;
    errno = 0;
    const xclBufferHandle buffer =
        library.allocate_buffer(card_->handle(), bytes, 0, XCL_BO_FLAGS_EXECBUF);
    if (buffer == NULLBO) {
      XrtLibrary::Check(errno != 0 ? errno : ENOMEM, device_name_, "xclAllocBO (exec buffer)");
    }
    errno = 0;
    void* mapped = library.map_buffer(card_->handle(), buffer, true);
    if (mapped == nullptr || mapped == MAP_FAILED) {
      const int error_number = errno != 0 ? errno : EINVAL;
      library.free_buffer(card_->handle(), buffer);
      XrtLibrary::Check(error_number, device_name_, "xclMapBO");
    }
    command_buffer_ = buffer;
    command_ = static_cast<uint32_t*>(mapped);
  }

  // Unmaps and frees the exec buffer; Run refuses from now on, naming
  // `replaced_by` when it is not empty. Never throws.
  void DetachLocked(const std::string& replaced_by) noexcept {
    if (command_ == nullptr) return;
    const XrtLibrary& library = card_->library();
    library.unmap_buffer(card_->handle(), command_buffer_, command_);
    library.free_buffer(card_->handle(), command_buffer_);
    command_ = nullptr;
    command_buffer_ = NULLBO;
    replaced_by_ = replaced_by;
  }

 private:
  // Fills the exec buffer with a start command for this kernel's compute
  // unit: the arguments at their register offsets, the control word 0.
  void WriteCommandLocked(std::span<const BufferArgument> buffers,
                          std::span<const int64_t> scalars) const {
    std::fill(command_, command_ + 1 + layout_.payload_words(), 0u);
    const uint32_t unit = description_.compute_unit_index;
    command_[1 + unit / kComputeUnitsPerMask] = 1u << (unit % kComputeUnitsPerMask);
    uint32_t* registers = command_ + 1 + layout_.mask_words;
    size_t next_buffer = 0;
    size_t next_scalar = 0;
    for (const XclbinArgument& argument : description_.arguments) {
      uint64_t value = 0;
      if (argument.kind == ExternalKernelArgument::Kind::kBuffer) {
        value = DeviceAddressLocked(buffers[next_buffer++], argument);
      } else {
        const int64_t scalar = scalars[next_scalar++];
        const bool fits = argument.bytes == 8 || (scalar >= std::numeric_limits<int32_t>::min() &&
                                                  scalar <= std::numeric_limits<uint32_t>::max());
        if (!fits) {
          throw Error(ErrorKind::kUsage, "argument " + argument.name + " of kernel " + name() +
                                             " takes 4 bytes; " + std::to_string(scalar) +
                                             " does not fit");
        }
        value = static_cast<uint64_t>(scalar);
      }
      // Little-endian words, the low one first, as the register map holds
      // 64-bit values.
      registers[argument.register_offset / sizeof(uint32_t)] = static_cast<uint32_t>(value);
      if (argument.bytes == 8) {
        registers[argument.register_offset / sizeof(uint32_t) + 1] =
            static_cast<uint32_t>(value >> 32);
      }
    }
    auto* command = reinterpret_cast<ert_start_kernel_cmd*>(command_);
    command->extra_cu_masks = layout_.mask_words - 1;
    command->count = layout_.payload_words();
    command->opcode = ERT_START_CU;
    command->type = ERT_CU;
    command->state = ERT_CMD_STATE_NEW;
  }

  // The card's address of `buffer`: its buffer object's plus its offset.
  uint64_t DeviceAddressLocked(const BufferArgument& buffer, const XclbinArgument& argument) const {
    if (buffer.handle == nullptr) {
      throw Error(ErrorKind::kUsage,
                  "argument " + argument.name + " of kernel " + name() + " is a null buffer");
    }
    xclBOProperties properties = {};
    XrtLibrary::Check(card_->library().get_buffer_properties(card_->handle(),
                                                             BufferOf(buffer.handle), &properties),
                      device_name_, "xclGetBOProperties");
    return properties.paddr + buffer.byte_offset;
  }

  const std::shared_ptr<const OpenCard> card_;
  const std::string device_name_;
  const std::string path_;
  const XclbinKernel description_;
  const CommandLayout layout_;
  std::vector<ExternalKernelArgument> arguments_;
  size_t buffer_count_ = 0;
  size_t scalar_count_ = 0;
  // Guarded by the card's mutex; a null command_ means detached.
  xclBufferHandle command_buffer_ = NULLBO;
  uint32_t* command_ = nullptr;
  std::string replaced_by_;
};

// The kernel file at `path`, whole. Throws kUsage naming it.
std::vector<std::byte> ReadKernelFile(const std::string& path) {
  auto fail = [&](int error_number) {
    throw Error(ErrorKind::kUsage, path + ": cannot read the kernel file: " +
                                       std::generic_category().message(error_number));
  };
  const int descriptor = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) fail(errno);
  std::vector<std::byte> bytes;
  struct stat status = {};
  int error_number = fstat(descriptor, &status) != 0 ? errno : 0;
  if (error_number == 0 && !S_ISREG(status.st_mode)) {
    error_number = S_ISDIR(status.st_mode) ? EISDIR : EINVAL;
  }
  if (error_number == 0) {
    bytes.resize(static_cast<size_t>(status.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t got = read(descriptor, bytes.data() + done, bytes.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) error_number = errno;
      if (got <= 0) break;
      done += static_cast<size_t>(got);
    }
    bytes.resize(done);
  }
  close(descriptor);
  if (error_number != 0) fail(error_number);
  return bytes;
}

class XrtDevice final : public PooledDevice, public ExternalKernelHost {
 public:
  // `card` is the card `id` names, opened.
  XrtDevice(DeviceId id, std::shared_ptr<const OpenCard> card, MemoryPoolOptions pool_options)
      : PooledDevice(id, DescribeCard(*card, id.ToString()),
                     std::make_unique<XrtBufferAllocator>(card, id.ToString()),
                     std::move(pool_options)),
        card_(std::move(card)) {}

  ~XrtDevice() override {
    std::lock_guard lock(card_->mutex());
    UnloadLocked("");
  }

  std::vector<std::string> LoadKernelFile(const std::string& path) override {
    const std::vector<std::byte> bytes = ReadKernelFile(path);
    XclbinDescription description = ReadXclbin(bytes, path);
    std::vector<CommandLayout> layouts;
    for (const XclbinKernel& kernel : description.kernels) {
      layouts.push_back(CommandLayoutOf(kernel, path));
    }

    std::lock_guard lock(card_->mutex());
    // The driver refuses a new xclbin while contexts on the old one are open.
    UnloadLocked(path);
    const XrtLibrary& library = card_->library();
    XrtLibrary::Check(
        library.load_xclbin(card_->handle(), reinterpret_cast<const axlf*>(bytes.data())), name(),
        "xclLoadXclBin");
    loaded_uuid_ = description.uuid;
    std::vector<std::unique_ptr<XrtKernel>> loaded;
    try {
      for (size_t index = 0; index < description.kernels.size(); ++index) {
        XclbinKernel& kernel = description.kernels[index];
        const uint32_t unit = kernel.compute_unit_index;
        XrtLibrary::Check(library.open_context(card_->handle(), loaded_uuid_.data(), unit, true),
                          name(), "xclOpenContext");
        open_contexts_.push_back(unit);
        loaded.push_back(
            std::make_unique<XrtKernel>(card_, name(), path, std::move(kernel), layouts[index]));
        loaded.back()->AttachLocked();
      }
    } catch (...) {
      for (const std::unique_ptr<XrtKernel>& kernel : loaded) kernel->DetachLocked("");
      CloseContextsLocked();
      throw;
    }
    std::vector<std::string> names;
    for (std::unique_ptr<XrtKernel>& kernel : loaded) {
      names.push_back(kernel->name());
      loaded_kernels_.emplace(kernel->name(), kernel.get());
      kernels_.push_back(std::move(kernel));
    }
    return names;
  }

  const ExternalKernel* FindKernel(std::string_view kernel_name) const override {
    std::lock_guard lock(card_->mutex());
    const auto found = loaded_kernels_.find(kernel_name);
    return found == loaded_kernels_.end() ? nullptr : found->second;
  }

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

  // Detaches the loaded kernels (naming `replaced_by` to later callers) and
  // closes their contexts. Never throws.
  void UnloadLocked(const std::string& replaced_by) noexcept {
    for (const auto& [kernel_name, kernel] : loaded_kernels_) kernel->DetachLocked(replaced_by);
    loaded_kernels_.clear();
    CloseContextsLocked();
  }

  void CloseContextsLocked() noexcept {
    for (const uint32_t unit : open_contexts_) {
      card_->library().close_context(card_->handle(), loaded_uuid_.data(), unit);
    }
    open_contexts_.clear();
  }

  // Shared with the raw allocator, which keeps the card open until the pool
  // has returned its cache through it.
  const std::shared_ptr<const OpenCard> card_;
  // Guarded by the card's mutex. Every kernel ever loaded stays, detached
  // once replaced, because FindKernel's pointers live as long as the device.
  std::array<uint8_t, 16> loaded_uuid_ = {};
  std::vector<uint32_t> open_contexts_;  // compute-unit indices
  std::vector<std::unique_ptr<XrtKernel>> kernels_;
  std::map<std::string, XrtKernel*, std::less<>> loaded_kernels_;
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
