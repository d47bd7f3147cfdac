// libFuzzer target over the .xclbin reader (devices/xrt/xclbin_reader.h),
// which reads files users hand to `relay-vm run --xclbin`.
//
// Any bytes may be rejected, but only with a kUsage error naming the file: a
// crash, a hang, a sanitizer report or any other kind of error is a bug. A
// description that is read must hold what the reader promises: kernels with
// arguments in id order, registers past the control words, buffer arguments
// of 8 bytes and scalars of 4 or 8.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "devices/xrt/xclbin_reader.h"
#include "relay/error.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "xclbin_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  relay::devices::XclbinDescription description;
  try {
    description = relay::devices::ReadXclbin(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size), "fuzz.xclbin");
  } catch (const relay::Error& error) {
    const std::string message = error.message();
    if (error.kind() != relay::ErrorKind::kUsage) Fail("error of the wrong kind", error.what());
    if (message.rfind("fuzz.xclbin: ", 0) != 0) Fail("an error not naming the file", message);
    return 0;
  }
  if (description.kernels.empty()) Fail("no kernels, yet no error", "");
  for (const relay::devices::XclbinKernel& kernel : description.kernels) {
    for (const relay::devices::XclbinArgument& argument : kernel.arguments) {
      const bool buffer = argument.kind == relay::devices::ExternalKernelArgument::Kind::kBuffer;
      if (argument.register_offset < 0x10 || argument.register_offset % 4 != 0 ||
          (buffer ? argument.bytes != 8 : argument.bytes != 4 && argument.bytes != 8)) {
        Fail("an argument the reader should have refused", kernel.name + " " + argument.name);
      }
    }
  }
  return 0;
}
