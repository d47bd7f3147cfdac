// What relay-vm needs to know about an .xclbin file (the container Xilinx's
// v++ writes for an FPGA image): its uuid, its kernels, the compute unit each
// runs on and where each argument goes in that compute unit's register map.
//
// ReadXclbin is a pure function of the file's bytes, so it is testable without
// a card or a driver. It reads the layout of Debian's XRT headers (struct axlf
// in xrt/xclbin.h): kernels and compute units from the IP_LAYOUT section
// (entries of type IP_KERNEL named "kernel:instance"), arguments from the
// EMBEDDED_METADATA section, an XML document whose <kernel name="..."> elements
// hold one <arg> element per argument:
//   <arg name="in1" addressQualifier="1" id="0" size="0x8" offset="0x10" .../>
// addressQualifier 1 (a global-memory pointer) is a buffer and 0 a scalar;
// `offset` is the byte offset in the register map, `size` its width in bytes
// (8 for a pointer, 4 or 8 for a scalar) and `id` its position. The XML is read
// by a small, strict scanner: attribute values in double quotes, numbers in
// hex ("0x10") or decimal, elements properly nested; comments, processing
// instructions, CDATA and elements other than <kernel> and <arg> are skipped.
//
// This header includes no XRT header; xclbin_reader.cc includes xclbin.h.
//
// Thread-safety: ReadXclbin keeps no state.
// Errors: relay::Error of kind kUsage whose message starts with the path:
// not an xclbin ("<path>: not an xclbin file (it does not start with the
// magic \"xclbin2\")"), truncated, a section outside the file, no kernel
// compute unit in IP_LAYOUT, malformed or missing metadata (naming the line
// of the XML and what is wrong).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devices/external_kernels.h"

namespace relay::devices {

// One argument of a kernel as its compute unit's register map holds it.
struct XclbinArgument {
  std::string name;
  ExternalKernelArgument::Kind kind = ExternalKernelArgument::Kind::kBuffer;
  // Bytes from the start of the register map; a multiple of 4, at least 0x10
  // (the words before hold the control and interrupt registers).
  uint32_t register_offset = 0;
  // 8 for a buffer (a 64-bit device address), 4 or 8 for a scalar.
  uint32_t bytes = 0;
};

// A kernel and the compute unit it runs on. A kernel with several compute
// units runs on the first IP_LAYOUT lists; the others are not used.
struct XclbinKernel {
  std::string name;                       // "vadd"
  std::string compute_unit_name;          // "vadd_1"
  uint32_t compute_unit_index = 0;        // the entry's index in IP_LAYOUT
  uint64_t base_address = 0;              // of the compute unit's register map
  std::vector<XclbinArgument> arguments;  // in the order of their ids
};

struct XclbinDescription {
  std::array<uint8_t, 16> uuid = {};  // axlf's m_header.uuid
  std::vector<XclbinKernel> kernels;  // in the order IP_LAYOUT lists them
};

// The description of the xclbin whose bytes are `bytes`, read from `path`
// (named in errors only). Throws kUsage as described above.
XclbinDescription ReadXclbin(std::span<const std::byte> bytes, std::string_view path);

}  // namespace relay::devices
