// The .rbc executable file: an Executable saved to bytes and loaded back
// with full verification (docs/architecture.md, "Bytecode and the VM").
//
// The format is our own and versioned independently of the build's version
// string. Everything is little-endian; integers have fixed widths; a string
// is a u32 byte length followed by its bytes (no terminator).
//
//   header   magic       8 bytes  89 'R' 'B' 'C' 0D 0A 1A 0A
//            version     u32      kExecutableFormatVersion
//            sections    u32      number of table entries (5, and 6 or 7
//                                 with the optional debug and device
//                                 sections)
//   table    per section: id u32, crc32 u32 (of the section's bytes),
//                         offset u64, size u64 (from the file's start)
//            table_crc   u32      crc32 of the header and table before it
//   sections, each listed id exactly once (1 to 5 always, 6 and 7
//            optionally),
//            inside the file, not overlapping the header, the table or each
//            other, and read to their last byte:
//     1 strings       count u32; string...                (fatal messages)
//     2 constants     count u32; per tensor: dtype u8 (relay/dtypes.def
//                     order), rank u32, dims i64 x rank, then the
//                     row-major element bytes (host tensors only)
//     3 kernels       count u32; per kernel: operator string, flags u8
//                     (1: tuple_input, 2: tuple_result, 4: placed,
//                     8: external), with placed: the device's kind u8 (its
//                     DLPack code) and index i32 (version 5 on), with
//                     external (version 7 on; see ExternalGraph): codegen
//                     string ("dnnl"), symbol string, parameter count u32
//                     and per parameter a type (dtype u8, rank u32, dims
//                     i64 x rank, -1 for `?`), operator count u32 and per
//                     operator: operator string, attributes, input count
//                     u32, inputs i32... (>= 0: a parameter, -1 - k:
//                     operator k's result), composite i32 (-1: none), its
//                     result's type; composite name count u32, names
//                     (strings); the codegen's state string. Attributes,
//                     fused operator count u32 (0 unless a fused group) and
//                     per fused operator: operator string, attributes,
//                     input count u32, inputs i32... (>= 0: a group input,
//                     -1 - k: the result of the group's operator k)
//                     attributes: count u32; per attribute: name string, value
//                     value: kind u8 (0 none, 1 bool u8, 2 int i64,
//                     3 float f64 bits, 4 string, 5 list: count u32, value...)
//     4 constructors  count u32; per constructor: name string, arity u32
//     5 functions     count u32; per function: name string, source string,
//                     param_count u32, captured_count u32, register_count u32,
//                     parameters: ParamInfo count u32 and per ParamInfo:
//                     name string, is_tensor u8, dtype u8, rank u32,
//                     dims i64 x rank, type_text string; results: the same
//                     (names empty; version 3 on);
//                     instruction count u32 and per instruction (29 bytes):
//                     opcode u8, operands i32 x 3, list_begin u32,
//                     list_size u32, line i32, column i32;
//                     register list length u32, registers i32...
//     6 debug         (optional: written only when some function has
//                     variables; a stripped executable has none) count u32,
//                     equal to the functions section's; per function, in
//                     the same order: variable count u32 and per variable
//                     (Function::variables): name string, reg i32,
//                     begin u32, end u32 (version 4 on)
//     7 device        (optional: `relay-vm compile --device`) the device
//                     runs use unless told another: kind u8 (its DLPack
//                     code), index i32 (version 5 on)
//
// Loading never trusts the bytes: every count is checked against the bytes
// left before anything is allocated, attribute lists nest at most
// kMaxAttributeDepth deep, each kernel's operator (each operator of a fused
// group) must exist and its attributes normalise against the operator's
// schema, a fused group's inputs must exist at every call, an external
// function's graph must pass ValidateGraph and its codegen must load its
// state (kernels/external/external_codegen.h), entry parameter
// descriptions must match their function, a debug section must describe
// every function, and the result must pass Verify (which bounds each
// variable's register and instruction range).
// An executable that loads cannot make the interpreter read out of bounds.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vm/bytecode/bytecode.h"

namespace relay::vm {

inline constexpr uint32_t kExecutableFormatVersion = 7;
inline constexpr int kMaxAttributeDepth = 8;
// Bounds that keep a loaded executable from asking for absurd memory: the
// interpreter allocates register_count registers per frame.
inline constexpr uint32_t kMaxRegisterCount = 1u << 24;
inline constexpr uint32_t kMaxTensorRank = 32;

// The bytes of `executable` in the format above. Throws kUsage if a constant
// is not a host tensor.
std::string SerializeExecutable(const Executable& executable);

// Parses and verifies `bytes`. Throws Error(kLoad, "NAME: problem") for any
// malformed input, where NAME is `name` (a file name, for messages).
Executable LoadExecutable(std::span<const uint8_t> bytes, const std::string& name);

// Writes `executable` to `path` atomically (a temporary file in the same
// directory, renamed over `path`). Throws kRuntime naming `path` on failure.
void WriteExecutableFile(const std::string& path, const Executable& executable);

// Reads and loads `path`; kLoad naming `path` if it cannot be read or is
// malformed.
Executable ReadExecutableFile(const std::string& path);

}  // namespace relay::vm
