// Internal to the oneDNN codegen: a plan, what running a graph on inputs of
// given shapes takes (oneDNN primitives created once, the buffers they
// exchange in oneDNN's own layouts, the reorders between them), and running
// it.
//
// A plan is immutable once built and may be run by many threads at once:
// each run has its own buffers, stream and scratchpad.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/external/dnnl/dnnl_rules.h"
#include "kernels/external/external_graph.h"
#include "relay/tensor.h"

namespace relay::kernels::external::onednn {

// The one engine of every plan: the CPU, index 0. Throws kDevice when
// oneDNN cannot create it.
const dnnl::engine& CpuEngine();

// A relay::Error of kind kDevice: "oneDNN: OPERATION: MESSAGE (STATUS)".
Error DeviceError(const std::string& operation, const dnnl::error& error);

// Memory of one run: a graph input (the caller's tensor, row-major), or a
// buffer a step writes (allocated when first written, released after its
// last reader) in `layout`.
struct Buffer {
  bool input = false;
  size_t input_index = 0;
  dnnl::memory::desc layout;
};

// A primitive's argument: `buffer` read or written as `layout` (the
// buffer's own layout, or another view of the same bytes), or, as
// kScratchpadBuffer, the run's scratchpad seen as the primitive's.
inline constexpr size_t kScratchpadBuffer = SIZE_MAX;

struct Argument {
  int argument = 0;  // DNNL_ARG_*
  size_t buffer = 0;
  dnnl::memory::desc layout;
};

struct Step {
  enum class Kind {
    kPrimitive,  // a oneDNN primitive on `arguments`
    // A reorder of a graph input (arguments: DNNL_ARG_FROM, DNNL_ARG_TO) kept
    // with an immutable input under `derived_key`, else run per call.
    kInputReorder,
    // Operators [first_operator, end_operator) run by relay-vm's kernels on
    // row-major operands `operands` (per operator input: a buffer index, or
    // -1 - the offset of an earlier operator of the run), the last one's
    // result going to `output`.
    kRelayKernels,
  };
  Kind kind = Kind::kPrimitive;
  std::string operation;  // what an error names: "nn.conv2d (operator 3)"
  dnnl::primitive primitive;
  std::vector<Argument> arguments;
  const void* derived_key = nullptr;
  size_t first_operator = 0;
  size_t end_operator = 0;
  std::vector<std::vector<int64_t>> operands;
  size_t output = 0;
  // Buffers no later step reads, released once this step has run.
  std::vector<size_t> released;
};

struct Plan {
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<Shape> value_shapes;  // the graph's inputs, then each operator's result
  size_t result_buffer = 0;
  Shape result_shape;
  size_t scratchpad_bytes = 0;  // the largest primitive's (user-managed scratchpad)
};

// The plan for `graph` (split into `units`) on inputs of `input_shapes`,
// `immutable[i]` telling whether input i is an immutable tensor (its
// reorders then kept with it). Throws kUsage from InferShapes for shapes the
// operators refuse and kDevice for oneDNN failures other than a primitive
// it does not implement for these shapes (such a unit runs on relay-vm's
// kernels).
std::shared_ptr<const Plan> BuildPlan(const ExternalGraph& graph, std::span<const Unit> units,
                                      std::span<const Shape> input_shapes,
                                      const std::vector<bool>& immutable);

// Runs `plan` on host tensors `inputs` (of the shapes it was built for) and
// returns the graph's result, a new row-major host tensor. oneDNN failures
// are kDevice errors naming the step.
Ref<Tensor> RunPlan(const Plan& plan, const ExternalGraph& graph,
                    std::span<const Ref<Tensor>> inputs);

}  // namespace relay::kernels::external::onednn
