// NumPy .npy and .npz files: the way tensors enter and leave relay-vm on the
// command line.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, C and Fortran order
// (Fortran arrays are transposed into row-major tensors), little- and
// big-endian data, and every relay dtype. .npz archives may be stored or
// deflate-compressed, with or without zip64 records. Writing produces
// little-endian, C-order version 1.0 files (2.0 when the header needs it) and
// replaces the destination atomically, so a failed write never destroys an
// existing file.
//
// Errors: malformed input and read failures throw relay::Error of kind kLoad
// whose span names the file (one line: "FILE: error: WHAT"); write failures
// throw kRuntime naming the path and the system's reason.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "relay/device.h"
#include "relay/tensor.h"

namespace relay {

// Reads one array into a new tensor allocated on `host` (a host-accessible
// device).
Ref<Tensor> ReadNpy(const std::string& path, Device& host);
// Parses the bytes of a .npy file; `name` is used in error messages.
Ref<Tensor> ParseNpy(std::span<const uint8_t> bytes, const std::string& name, Device& host);

// Writes a host tensor as .npy. Throws kUsage for a tensor not on the host.
void WriteNpy(const std::string& path, const Tensor& tensor);
std::vector<uint8_t> SerializeNpy(const Tensor& tensor);

struct NamedTensor {
  std::string name;  // the archive member's name without ".npy"
  Ref<Tensor> tensor;
};

// Reads every array of an archive, in archive order.
std::vector<NamedTensor> ReadNpz(const std::string& path, Device& host);
std::vector<NamedTensor> ParseNpz(std::span<const uint8_t> bytes, const std::string& name,
                                  Device& host);

enum class NpzCompression { kStored, kDeflate };

// Writes an archive as numpy.savez (kStored) or numpy.savez_compressed
// (kDeflate) would. Throws kUsage for duplicate or empty names.
void WriteNpz(const std::string& path, const std::vector<NamedTensor>& arrays,
              NpzCompression compression = NpzCompression::kStored);

}  // namespace relay
