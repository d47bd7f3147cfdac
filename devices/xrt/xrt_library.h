// The Xilinx Runtime's hardware layer (XRT's C "xcl" API) as one symbol table
// loaded at run time.
//
// XrtLibrary holds a pointer for every xcl entry point relay-vm uses, resolved
// from libxrt_core.so.2 (the layer over the xocl kernel driver; it pulls in
// libxrt_coreutil.so.2 itself), which is opened with dlopen and never linked.
// This header and xrt_library.cc are the only files that include xrt.h and
// ert.h (the layout of the commands the card's scheduler runs); xrt_device.cc
// uses their types through them. xclbin_reader.cc reads xclbin.h alone.
//
// Thread-safety: an XrtLibrary is immutable once loaded. XRT does not document
// the xcl calls as thread-safe, so each XRT device serialises its calls.
// Errors: relay::Error of kind kDevice. The errno-style results of the xcl
// calls are converted where they are returned, through Check(), naming the
// operation.
#pragma once

#include <ert.h>
#include <xrt.h>

#include <memory>
#include <string>
#include <string_view>

#include "devices/driver_library.h"

namespace relay::devices {

// Every entry point, as X(member, exported_symbol).
#define RELAY_XRT_ENTRY_POINTS(X)              \
  X(count_devices, xclProbe)                   \
  X(open_device, xclOpen)                      \
  X(close_device, xclClose)                    \
  X(get_device_information, xclGetDeviceInfo2) \
  X(allocate_buffer, xclAllocBO)               \
  X(free_buffer, xclFreeBO)                    \
  X(write_buffer, xclWriteBO)                  \
  X(read_buffer, xclReadBO)                    \
  X(synchronize_buffer, xclSyncBO)             \
  X(get_buffer_properties, xclGetBOProperties) \
  X(map_buffer, xclMapBO)                      \
  X(unmap_buffer, xclUnmapBO)                  \
  X(load_xclbin, xclLoadXclBin)                \
  X(open_context, xclOpenContext)              \
  X(close_context, xclCloseContext)            \
  X(execute_command, xclExecBuf)               \
  X(wait_for_commands, xclExecWait)

class XrtLibrary {
 public:
  // The library of this process: opens libxrt_core.so.2 (or libxrt_core.so)
  // on first use and keeps it loaded until exit. Throws kDevice "no XRT
  // driver: libxrt_core.so.2 could not be loaded (<dlerror text>)", or an
  // error naming the missing entry points. The outcome of the first call is
  // kept.
  static std::shared_ptr<const XrtLibrary> Process();

  // A table whose entry points come from `resolver` instead of dlsym; tests
  // use it with a stand-in driver. `library_name` names the source in
  // messages. Throws kDevice naming any entry point the resolver lacks.
  static std::shared_ptr<const XrtLibrary> FromResolver(const SymbolResolver& resolver,
                                                        std::string library_name);

  // The xcl calls return 0 on success and an errno value, negated or not,
  // on failure. Does nothing for 0; otherwise throws kDevice
  // "<subject>: <operation> failed: <strerror text> (errno <n>)".
  static void Check(long long result, std::string_view subject, std::string_view operation);

  const std::string& library_name() const { return library_name_; }

#define RELAY_DECLARE_XRT_ENTRY_POINT(member, symbol) decltype(&::symbol) member = nullptr;
  RELAY_XRT_ENTRY_POINTS(RELAY_DECLARE_XRT_ENTRY_POINT)
#undef RELAY_DECLARE_XRT_ENTRY_POINT

 private:
  explicit XrtLibrary(std::string library_name) : library_name_(std::move(library_name)) {}

  std::string library_name_;
};

}  // namespace relay::devices
