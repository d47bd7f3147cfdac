// Opening a vendor driver library at run time.
//
// relay-vm never links a GPU or accelerator driver (libcuda, libOpenCL,
// libxrt_core): each backend opens its driver with dlopen when a device of its
// kind is first asked for, so one build runs on machines with and without the
// driver. Each backend resolves the entry points it uses into one symbol table
// of its own (cuda/cuda_driver.h, opencl/opencl_library.h, xrt/xrt_library.h)
// through a SymbolResolver; tests hand those tables a resolver over a
// stand-in driver instead of dlsym.
//
// Thread-safety: every function here may be called from many threads at once.
// Errors: none are thrown here; failures are reported through return values so
// that each backend words its own "no ... driver" message.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

namespace relay::devices {

// Returns the address of the entry point exported as `symbol_name`, or
// nullptr when the library has none.
using SymbolResolver = std::function<void*(const char* symbol_name)>;

struct DriverLibrary {
  // The name that dlopen accepted, for messages: "libcuda.so.1".
  std::string name;
  // Never closed: drivers start threads and register exit handlers that
  // would run into unmapped code if the library were unloaded.
  void* handle = nullptr;

  // A resolver backed by dlsym on `handle`.
  SymbolResolver resolver() const;
};

// Opens the first of `names` that dlopen accepts, resolving every symbol now
// and keeping them out of the global namespace. Returns nullopt when none
// opens and sets `failure` to dlerror's explanation for the first name (the
// canonical one, whose message users can act on).
std::optional<DriverLibrary> OpenDriverLibrary(std::initializer_list<const char*> names,
                                               std::string& failure);

}  // namespace relay::devices
