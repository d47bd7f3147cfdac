// A manifest of a user's .xclbin kernels, for the xrt codegen
// (xrt_codegen.h): which operator pattern each kernel computes and how its
// arguments are passed. A JSON file:
//
//   {"kernels": [
//     {"name": "vadd", "pattern": ["add"], "dtype": "int32",
//      "arguments": ["input0", "input1", "output", "output.shape[0]"]},
//     {"name": "dense_relu", "pattern": ["nn.dense", "nn.relu"], "dtype": "float32",
//      "arguments": ["input0", "input1", "output", "output.shape[0]",
//                    "output.shape[1]", "input0.shape[1]"]}
//   ]}
//
// - "name": the kernel's name in the .xclbin (printable ASCII, no spaces);
//   each kernel is listed once.
// - "pattern": a chain of operators of the operator table, each taking the
//   previous one's result (and nothing else using it): the kernel becomes the
//   composite rule "xrt.NAME". Attributes are not matched: the kernel must
//   compute every attribute value the operators can be called with.
// - "dtype": the one dtype of every tensor of the chain; every shape must be
//   static.
// - "arguments": the kernel's arguments in its order. Buffers: "inputN", the
//   N-th operand of the chain that is not the previous operator's result, in
//   order of appearance (each passed exactly once), and "output" (once).
//   Integers (64-bit, passed by value): "inputN.shape[D]" and
//   "output.shape[D]", an extent.
//
// The same argument grammar is used by the codegen's compiled state, where
// "inputN" names the partitioned function's N-th parameter.
//
// Thread-safety: plain functions of their arguments. Errors: ReadXrtManifest
// throws kUsage naming the file and the problem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/external/external_codegen.h"
#include "relay/dtype.h"

namespace relay::kernels::external {

// One kernel argument: a buffer ("input0", "output") or an integer
// ("input0.shape[1]", "output.shape[0]").
struct XrtArgument {
  enum class Kind : uint8_t { kBuffer, kInteger };
  Kind kind = Kind::kBuffer;
  int32_t input = -1;  // the input's index; -1: the output
  int32_t axis = -1;   // integers: the dimension

  bool operator==(const XrtArgument&) const = default;
  std::string ToString() const;
};

// `text` in the grammar above (indices in decimal, without leading zeros,
// below 10^6), or nullopt.
std::optional<XrtArgument> ParseXrtArgument(std::string_view text);

// Whether `name` can name a kernel: 1 to 256 printable ASCII characters
// other than the space.
bool IsXrtKernelName(std::string_view name);

struct XrtManifestKernel {
  std::string name;
  std::vector<std::string> pattern;  // operator names
  DType dtype = DType::kFloat32;
  std::vector<XrtArgument> arguments;
  int32_t input_count = 0;  // the pattern's free operands
};

// The kernels of the manifest at `path`, in the file's order.
std::vector<XrtManifestKernel> ReadXrtManifest(const std::string& path);
// The same from the file's text; `path` names it in errors.
std::vector<XrtManifestKernel> ParseXrtManifest(std::string_view text, const std::string& path);

// One composite rule "xrt.NAME" per kernel, in order.
RuleTable XrtManifestRules(const std::vector<XrtManifestKernel>& kernels);

}  // namespace relay::kernels::external
