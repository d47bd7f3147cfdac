#include "devices/opencl/opencl_library.h"

#include <optional>
#include <utility>
#include <variant>

#include "relay/error.h"

namespace relay::devices {
namespace {

// Defined by the cl_khr_icd extension, which every ICD loader implements;
// spelled out so that this file needs only CL/cl.h.
constexpr cl_int kPlatformNotFound = -1001;

// The codes a memory backend meets, as X(name).
#define RELAY_OPENCL_ERROR_CODES(X)               \
  X(CL_SUCCESS)                                   \
  X(CL_DEVICE_NOT_FOUND)                          \
  X(CL_DEVICE_NOT_AVAILABLE)                      \
  X(CL_COMPILER_NOT_AVAILABLE)                    \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE)             \
  X(CL_OUT_OF_RESOURCES)                          \
  X(CL_OUT_OF_HOST_MEMORY)                        \
  X(CL_MEM_COPY_OVERLAP)                          \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET)              \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
  X(CL_INVALID_VALUE)                             \
  X(CL_INVALID_DEVICE_TYPE)                       \
  X(CL_INVALID_PLATFORM)                          \
  X(CL_INVALID_DEVICE)                            \
  X(CL_INVALID_CONTEXT)                           \
  X(CL_INVALID_QUEUE_PROPERTIES)                  \
  X(CL_INVALID_COMMAND_QUEUE)                     \
  X(CL_INVALID_HOST_PTR)                          \
  X(CL_INVALID_MEM_OBJECT)                        \
  X(CL_INVALID_EVENT_WAIT_LIST)                   \
  X(CL_INVALID_OPERATION)                         \
  X(CL_INVALID_BUFFER_SIZE)                       \
  X(CL_INVALID_PROPERTY)

}  // namespace

std::shared_ptr<const OpenClLibrary> OpenClLibrary::Process() {
  // Loaded once: a loader that failed to load will not appear while the
  // process runs.
  static const std::variant<std::shared_ptr<const OpenClLibrary>, Error> outcome =
      []() -> std::variant<std::shared_ptr<const OpenClLibrary>, Error> {
    std::string failure;
    std::optional<DriverLibrary> library =
        OpenDriverLibrary({"libOpenCL.so.1", "libOpenCL.so"}, failure);
    if (!library) {
      return Error(ErrorKind::kDevice,
                   "no OpenCL driver: libOpenCL.so.1 could not be loaded (" + failure + ")");
    }
    try {
      return FromResolver(library->resolver(), library->name);
    } catch (const Error& error) {
      return error;
    }
  }();
  if (const auto* error = std::get_if<Error>(&outcome)) throw *error;
  return std::get<std::shared_ptr<const OpenClLibrary>>(outcome);
}

std::shared_ptr<const OpenClLibrary> OpenClLibrary::FromResolver(const SymbolResolver& resolver,
                                                                 std::string library_name) {
  std::shared_ptr<OpenClLibrary> library(new OpenClLibrary(std::move(library_name)));
  std::string missing;
#define RELAY_RESOLVE_OPENCL_ENTRY_POINT(member, symbol)                            \
  library->member = reinterpret_cast<decltype(library->member)>(resolver(#symbol)); \
  if (library->member == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #symbol;
  RELAY_OPENCL_ENTRY_POINTS(RELAY_RESOLVE_OPENCL_ENTRY_POINT)
#undef RELAY_RESOLVE_OPENCL_ENTRY_POINT
  if (!missing.empty()) {
    throw Error(ErrorKind::kDevice, "unusable OpenCL library: " + library->library_name_ +
                                        " lacks " + missing +
                                        " (relay-vm needs an OpenCL 1.2 ICD loader)");
  }
  return library;
}

std::string OpenClLibrary::DescribeErrorCode(cl_int code) {
  switch (code) {
#define RELAY_DESCRIBE_OPENCL_ERROR_CODE(name) \
  case name:                                   \
    return #name " (" + std::to_string(name) + ")";
    RELAY_OPENCL_ERROR_CODES(RELAY_DESCRIBE_OPENCL_ERROR_CODE)
#undef RELAY_DESCRIBE_OPENCL_ERROR_CODE
    case kPlatformNotFound:
      return "CL_PLATFORM_NOT_FOUND_KHR (" + std::to_string(kPlatformNotFound) + ")";
  }
  return "OpenCL error " + std::to_string(code);
}

void OpenClLibrary::Check(cl_int code, std::string_view subject, std::string_view operation) const {
  if (code == CL_SUCCESS) return;
  throw Error(ErrorKind::kDevice, std::string(subject) + ": " + std::string(operation) +
                                      " failed: " + DescribeErrorCode(code));
}

OpenClInventory OpenClLibrary::ListDevices() const {
  constexpr std::string_view kSubject = "OpenCL";
  OpenClInventory inventory;
  cl_uint platform_count = 0;
  const cl_int counted = get_platform_ids(0, nullptr, &platform_count);
  if (counted == kPlatformNotFound || (counted == CL_SUCCESS && platform_count == 0)) {
    return inventory;
  }
  Check(counted, kSubject, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(platform_count);
  Check(get_platform_ids(platform_count, platforms.data(), &platform_count), kSubject,
        "clGetPlatformIDs");
  platforms.resize(platform_count);
  inventory.platform_count = platforms.size();
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    const cl_int devices_counted =
        get_device_ids(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    // A platform whose devices are all unplugged or disabled has none.
    if (devices_counted == CL_DEVICE_NOT_FOUND || device_count == 0) continue;
    Check(devices_counted, kSubject, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(device_count);
    Check(get_device_ids(platform, CL_DEVICE_TYPE_ALL, device_count, devices.data(), &device_count),
          kSubject, "clGetDeviceIDs");
    devices.resize(device_count);
    for (cl_device_id device : devices) inventory.devices.push_back({platform, device});
  }
  return inventory;
}

std::string OpenClLibrary::PlatformText(cl_platform_id platform, cl_platform_info property,
                                        std::string_view subject) const {
  size_t bytes = 0;
  Check(get_platform_info(platform, property, 0, nullptr, &bytes), subject, "clGetPlatformInfo");
  std::string text(bytes, '\0');
  Check(get_platform_info(platform, property, bytes, text.data(), nullptr), subject,
        "clGetPlatformInfo");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string OpenClLibrary::DeviceText(cl_device_id device, cl_device_info property,
                                      std::string_view subject) const {
  size_t bytes = 0;
  Check(get_device_info(device, property, 0, nullptr, &bytes), subject, "clGetDeviceInfo");
  std::string text(bytes, '\0');
  Check(get_device_info(device, property, bytes, text.data(), nullptr), subject, "clGetDeviceInfo");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

cl_ulong OpenClLibrary::DeviceNumber(cl_device_id device, cl_device_info property,
                                     std::string_view subject) const {
  cl_ulong value = 0;
  Check(get_device_info(device, property, sizeof(value), &value, nullptr), subject,
        "clGetDeviceInfo");
  return value;
}

}  // namespace relay::devices
