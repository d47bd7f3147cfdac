#include "devices/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <memory>
#include <variant>
#include <vector>

#include "devices/driver_library.h"
#include "relay/error.h"

namespace relay::devices {
namespace {

#define RELAY_NVRTC_ENTRY_POINTS(X)               \
  X(version, nvrtcVersion)                        \
  X(get_error_string, nvrtcGetErrorString)        \
  X(create_program, nvrtcCreateProgram)           \
  X(destroy_program, nvrtcDestroyProgram)         \
  X(compile_program, nvrtcCompileProgram)         \
  X(get_ptx_size, nvrtcGetPTXSize)                \
  X(get_ptx, nvrtcGetPTX)                         \
  X(get_program_log_size, nvrtcGetProgramLogSize) \
  X(get_program_log, nvrtcGetProgramLog)

struct NvrtcLibrary {
  std::string library_name;
#define RELAY_DECLARE_NVRTC_ENTRY_POINT(member, symbol) decltype(&::symbol) member = nullptr;
  RELAY_NVRTC_ENTRY_POINTS(RELAY_DECLARE_NVRTC_ENTRY_POINT)
#undef RELAY_DECLARE_NVRTC_ENTRY_POINT

  void Check(nvrtcResult result, const std::string& subject, const char* operation) const {
    if (result == NVRTC_SUCCESS) return;
    throw Error(ErrorKind::kDevice,
                subject + ": " + operation + " failed: " + get_error_string(result));
  }
};

// The library of this process, loaded once; the outcome (or the error) is
// kept, as for the driver.
const NvrtcLibrary& Nvrtc() {
  static const std::variant<std::shared_ptr<const NvrtcLibrary>, Error> outcome =
      []() -> std::variant<std::shared_ptr<const NvrtcLibrary>, Error> {
    std::string failure;
    // The toolkit's own directory too: its installer does not always add
    // it to the loader's path.
    std::optional<DriverLibrary> library = OpenDriverLibrary(
        {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"},
        failure);
    if (!library) {
      return Error(ErrorKind::kDevice, "no NVRTC: libnvrtc.so could not be loaded (" + failure +
                                           "); install the CUDA toolkit to compile CUDA kernels");
    }
    auto nvrtc = std::make_shared<NvrtcLibrary>();
    nvrtc->library_name = library->name;
    const SymbolResolver resolver = library->resolver();
    std::string missing;
#define RELAY_RESOLVE_NVRTC_ENTRY_POINT(member, symbol)                         \
  nvrtc->member = reinterpret_cast<decltype(nvrtc->member)>(resolver(#symbol)); \
  if (nvrtc->member == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #symbol;
    RELAY_NVRTC_ENTRY_POINTS(RELAY_RESOLVE_NVRTC_ENTRY_POINT)
#undef RELAY_RESOLVE_NVRTC_ENTRY_POINT
    if (!missing.empty()) {
      return Error(ErrorKind::kDevice, "unusable NVRTC: " + library->name + " lacks " + missing);
    }
    return std::shared_ptr<const NvrtcLibrary>(std::move(nvrtc));
  }();
  if (const auto* error = std::get_if<Error>(&outcome)) throw *error;
  return *std::get<std::shared_ptr<const NvrtcLibrary>>(outcome);
}

// Destroys the program when the compilation is done, whatever happened.
class ProgramHandle {
 public:
  explicit ProgramHandle(const NvrtcLibrary& nvrtc) : nvrtc_(nvrtc) {}
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ~ProgramHandle() {
    if (program_ != nullptr) nvrtc_.destroy_program(&program_);
  }
  nvrtcProgram* address() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  const NvrtcLibrary& nvrtc_;
  nvrtcProgram program_ = nullptr;
};

}  // namespace

std::string NvrtcVersion() {
  const NvrtcLibrary& nvrtc = Nvrtc();
  int major = 0, minor = 0;
  nvrtc.Check(nvrtc.version(&major, &minor), "NVRTC", "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string CompileCudaToPtx(const std::string& source, int compute_major, int compute_minor,
                             const std::string& name) {
  const NvrtcLibrary& nvrtc = Nvrtc();
  ProgramHandle program(nvrtc);
  nvrtc.Check(
      nvrtc.create_program(program.address(), source.c_str(), name.c_str(), 0, nullptr, nullptr),
      name, "nvrtcCreateProgram");
  const std::string architecture =
      "--gpu-architecture=compute_" + std::to_string(compute_major) + std::to_string(compute_minor);
  // No fast-math: kernels compute what the CPU's do (IEEE division and
  // square root, denormals kept).
  const char* options[] = {architecture.c_str(), "--std=c++17"};
  const nvrtcResult compiled = nvrtc.compile_program(program.get(), 2, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    std::string log;
    if (nvrtc.get_program_log_size(program.get(), &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      if (nvrtc.get_program_log(program.get(), log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    throw Error(ErrorKind::kDevice,
                name + ": nvrtcCompileProgram failed: " + nvrtc.get_error_string(compiled) +
                    (log.empty() ? std::string() : "\n" + log));
  }
  size_t size = 0;
  nvrtc.Check(nvrtc.get_ptx_size(program.get(), &size), name, "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  nvrtc.Check(nvrtc.get_ptx(program.get(), ptx.data()), name, "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace relay::devices
