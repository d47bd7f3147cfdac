#include "devices/xrt/xrt_library.h"

#include <cstring>
#include <optional>
#include <utility>
#include <variant>

#include "relay/error.h"

namespace relay::devices {

std::shared_ptr<const XrtLibrary> XrtLibrary::Process() {
  // Loaded once: a runtime that failed to load will not appear while the
  // process runs.
  static const std::variant<std::shared_ptr<const XrtLibrary>, Error> outcome =
      []() -> std::variant<std::shared_ptr<const XrtLibrary>, Error> {
    std::string failure;
    std::optional<DriverLibrary> library =
        OpenDriverLibrary({"libxrt_core.so.2", "libxrt_core.so"}, failure);
    if (!library) {
      return Error(ErrorKind::kDevice,
                   "no XRT driver: libxrt_core.so.2 could not be loaded (" + failure + ")");
    }
    try {
      return FromResolver(library->resolver(), library->name);
    } catch (const Error& error) {
      return error;
    }
  }();
  if (const auto* error = std::get_if<Error>(&outcome)) throw *error;
  return std::get<std::shared_ptr<const XrtLibrary>>(outcome);
}

std::shared_ptr<const XrtLibrary> XrtLibrary::FromResolver(const SymbolResolver& resolver,
                                                           std::string library_name) {
  std::shared_ptr<XrtLibrary> library(new XrtLibrary(std::move(library_name)));
  std::string missing;
#define RELAY_RESOLVE_XRT_ENTRY_POINT(member, symbol)                               \
  library->member = reinterpret_cast<decltype(library->member)>(resolver(#symbol)); \
  if (library->member == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #symbol;
  RELAY_XRT_ENTRY_POINTS(RELAY_RESOLVE_XRT_ENTRY_POINT)
#undef RELAY_RESOLVE_XRT_ENTRY_POINT
  if (!missing.empty()) {
    throw Error(ErrorKind::kDevice,
                "unusable XRT library: " + library->library_name_ + " lacks " + missing);
  }
  return library;
}

void XrtLibrary::Check(long long result, std::string_view subject, std::string_view operation) {
  if (result == 0) return;
  const int error_number = static_cast<int>(result < 0 ? -result : result);
  // strerror's buffer may be shared between threads; the GNU strerror_r
  // returns a pointer to an immutable string or to our buffer.
  char buffer[128] = {};
  const char* text = strerror_r(error_number, buffer, sizeof(buffer));
  throw Error(ErrorKind::kDevice, std::string(subject) + ": " + std::string(operation) +
                                      " failed: " + text + " (errno " +
                                      std::to_string(error_number) + ")");
}

}  // namespace relay::devices
