#include "devices/cuda/cuda_driver.h"

#include <utility>
#include <variant>

#include "relay/error.h"

namespace relay::devices {

std::shared_ptr<const CudaDriver> CudaDriver::Process() {
  // Loaded once: a driver that failed to load will not appear while the
  // process runs, and retrying dlopen on every request would only cost time.
  static const std::variant<std::shared_ptr<const CudaDriver>, Error> outcome =
      []() -> std::variant<std::shared_ptr<const CudaDriver>, Error> {
    std::string failure;
    std::optional<DriverLibrary> library =
        OpenDriverLibrary({"libcuda.so.1", "libcuda.so"}, failure);
    if (!library) {
      return Error(ErrorKind::kDevice,
                   "no CUDA driver: libcuda.so.1 could not be loaded (" + failure + ")");
    }
    try {
      return FromResolver(library->resolver(), library->name);
    } catch (const Error& error) {
      return error;
    }
  }();
  if (const auto* error = std::get_if<Error>(&outcome)) throw *error;
  return std::get<std::shared_ptr<const CudaDriver>>(outcome);
}

std::shared_ptr<const CudaDriver> CudaDriver::FromResolver(const SymbolResolver& resolver,
                                                           std::string library_name) {
  std::shared_ptr<CudaDriver> driver(new CudaDriver(std::move(library_name)));
  std::string missing;
#define RELAY_RESOLVE_CUDA_ENTRY_POINT(member, symbol)                            \
  driver->member = reinterpret_cast<decltype(driver->member)>(resolver(#symbol)); \
  if (driver->member == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #symbol;
  RELAY_CUDA_DRIVER_ENTRY_POINTS(RELAY_RESOLVE_CUDA_ENTRY_POINT)
#undef RELAY_RESOLVE_CUDA_ENTRY_POINT
  if (!missing.empty()) {
    throw Error(ErrorKind::kDevice, "unusable CUDA driver: " + driver->library_name_ + " lacks " +
                                        missing +
                                        " (relay-vm needs a driver for CUDA 11 or newer)");
  }
  return driver;
}

std::string CudaDriver::DescribeResult(CUresult result) const {
  const char* name = nullptr;
  const char* description = nullptr;
  // Both return CUDA_ERROR_INVALID_VALUE for a code they do not know.
  if (get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUresult " + std::to_string(static_cast<int>(result)) + " (unknown to the driver)";
  }
  if (get_error_string(result, &description) != CUDA_SUCCESS || description == nullptr) {
    return name;
  }
  return std::string(name) + " (" + description + ")";
}

void CudaDriver::Check(CUresult result, std::string_view subject,
                       std::string_view operation) const {
  if (result == CUDA_SUCCESS) return;
  throw Error(ErrorKind::kDevice, std::string(subject) + ": " + std::string(operation) +
                                      " failed: " + DescribeResult(result));
}

}  // namespace relay::devices
