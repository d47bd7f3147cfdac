#include "devices/driver_library.h"

#include <dlfcn.h>

namespace relay::devices {

SymbolResolver DriverLibrary::resolver() const {
  void* const library_handle = handle;
  return [library_handle](const char* symbol_name) { return dlsym(library_handle, symbol_name); };
}

std::optional<DriverLibrary> OpenDriverLibrary(std::initializer_list<const char*> names,
                                               std::string& failure) {
  failure.clear();
  for (const char* name : names) {
    // RTLD_LOCAL: two drivers exporting the same helper symbols must not
    // resolve into each other.
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return DriverLibrary{name, handle};
    // glibc keeps dlerror's text per thread, so reading it here is safe.
    const char* explanation = dlerror();
    if (failure.empty()) failure = explanation != nullptr ? explanation : "unknown dlopen failure";
  }
  return std::nullopt;
}

}  // namespace relay::devices
