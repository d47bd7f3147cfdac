// CUDA C to PTX through NVRTC, loaded at run time.
//
// NVRTC (libnvrtc.so from the CUDA toolkit) is opened with dlopen on first
// use and never linked, like the driver: a build runs where it is absent,
// and compiling CUDA kernels then fails with "no NVRTC: ...". Compiling
// needs no GPU and no driver, which is how CI checks every operator's CUDA
// kernel without one.
//
// This header does not include nvrtc.h; nvrtc_compiler.cc is the only file
// that does.
//
// Thread-safety: every function may be called from many threads at once.
// Errors: relay::Error of kind kDevice; a compilation failure carries
// NVRTC's log.
#pragma once

#include <string>

namespace relay::devices {

// NVRTC's version, "13.0". Throws kDevice "no NVRTC: ..." when the library
// cannot be loaded.
std::string NvrtcVersion();

// PTX for `source` (CUDA C++, with extern "C" kernels) compiled for the
// virtual architecture compute_<major><minor>. `name` names the program in
// messages.
std::string CompileCudaToPtx(const std::string& source, int compute_major, int compute_minor,
                             const std::string& name = "relay_kernel.cu");

}  // namespace relay::devices
