// XRT as a codegen: Compile decides which kernel of the .xclbin a function
// calls and in which order its arguments go, and writes that down as the
// state, two lines of text:
//
//   kernel vadd
//   arguments input0 input1 output output.shape[0]
//
// (xrt_manifest.h's argument grammar, "inputN" naming the function's N-th
// parameter). Load checks every part of it against the graph; the loaded
// function finds the kernel on xrt:0 at each call.
#include "kernels/external/xrt/xrt_codegen.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "devices/external_kernels.h"
#include "kernels/external/xrt/xrt_manifest.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "vm/core/zip_archive.h"

namespace relay::kernels::external {
namespace {

constexpr DeviceId kXrtDevice{DeviceKind::kXRT, 0};

// A kernel and its arguments in the kernel's order: what the state says.
struct XrtKernelCall {
  std::string kernel;
  std::vector<XrtArgument> arguments;
};

std::string WriteState(const XrtKernelCall& call) {
  std::string state = "kernel " + call.kernel + "\narguments";
  for (const XrtArgument& argument : call.arguments) state += " " + argument.ToString();
  return state + "\n";
}

// The state's call, its syntax checked (the graph is checked by Resolve).
XrtKernelCall ReadState(std::string_view state, const std::string& symbol) {
  auto fail = [&](const std::string& problem) {
    return Error(ErrorKind::kLoad, symbol + ": malformed xrt state: " + problem);
  };
  auto take_line = [&](std::string_view prefix) {
    const size_t end = state.find('\n');
    if (end == std::string_view::npos || state.substr(0, prefix.size()) != prefix)
      throw fail("no line \"" + std::string(prefix) + "...\"");
    const std::string_view line = state.substr(prefix.size(), end - prefix.size());
    state.remove_prefix(end + 1);
    return line;
  };
  XrtKernelCall call;
  call.kernel = take_line("kernel ");
  if (!IsXrtKernelName(call.kernel)) throw fail("the kernel's name is not printable");
  std::string_view arguments = take_line("arguments");
  if (!state.empty()) throw fail("text after the arguments");
  while (!arguments.empty()) {
    if (arguments[0] != ' ' || arguments.size() == 1 || arguments[1] == ' ')
      throw fail("arguments are separated by one space");
    arguments.remove_prefix(1);
    const std::string_view text = arguments.substr(0, arguments.find(' '));
    arguments.remove_prefix(text.size());
    const std::optional<XrtArgument> argument = ParseXrtArgument(text);
    if (!argument) throw fail("\"" + detail::PrintableExcerpt(text, 40) + "\" is not an argument");
    call.arguments.push_back(*argument);
  }
  return call;
}

// A call resolved against its graph: each buffer a parameter's index (-1:
// the result) and each integer its value.
struct ResolvedCall {
  std::string kernel;
  std::vector<int32_t> buffers;
  std::vector<int64_t> integers;
  std::string integer_names;  // "output.shape[0] output.shape[1]", for messages
};

// Checks `call` against `graph` (one output buffer; inputs, dimensions in
// range and static; a result of static shape), throwing `kind` naming
// `symbol`.
ResolvedCall Resolve(const ExternalGraph& graph, const XrtKernelCall& call, ErrorKind kind,
                     const std::string& symbol) {
  auto fail = [&](const std::string& problem) { return Error(kind, symbol + ": " + problem); };
  const ValueType& result = graph.result();
  if (result.is_tuple ||
      std::any_of(result.shape.begin(), result.shape.end(), [](int64_t dim) { return dim < 0; })) {
    throw fail("an external kernel returns one tensor of static shape");
  }
  ResolvedCall resolved{.kernel = call.kernel, .buffers = {}, .integers = {}, .integer_names = {}};
  for (const XrtArgument& argument : call.arguments) {
    if (argument.input >= int32_t(graph.params.size())) {
      throw fail("kernel " + call.kernel + "'s argument " + argument.ToString() +
                 " names a parameter the function does not have (it has " +
                 std::to_string(graph.params.size()) + ")");
    }
    if (argument.kind == XrtArgument::Kind::kBuffer) {
      resolved.buffers.push_back(argument.input);
      continue;
    }
    const Shape& shape =
        argument.input < 0 ? result.shape : graph.params[size_t(argument.input)].shape;
    if (size_t(argument.axis) >= shape.size() || shape[size_t(argument.axis)] < 0) {
      throw fail("kernel " + call.kernel + "'s argument " + argument.ToString() +
                 " is not a static dimension of a tensor of shape " + ShapeToString(shape));
    }
    resolved.integers.push_back(shape[size_t(argument.axis)]);
    resolved.integer_names += (resolved.integer_names.empty() ? "" : " ") + argument.ToString();
  }
  if (std::count(resolved.buffers.begin(), resolved.buffers.end(), -1) != 1)
    throw fail("kernel " + call.kernel + " is not passed its output exactly once");
  return resolved;
}

std::string Count(size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

class XrtFunction final : public ExternalFunction {
 public:
  XrtFunction(ResolvedCall call, std::vector<ValueType> params, ValueType result,
              std::string symbol)
      : call_(std::move(call)),
        params_(std::move(params)),
        result_(std::move(result)),
        symbol_(std::move(symbol)) {}

  // The kernel's buffers take the tensors the state names, on xrt:0, and the
  // result, allocated there (where it stays); its integers the state's
  // values, the first as many as it takes.
  Ref<Tensor> Run(std::span<const Ref<Tensor>> inputs) const override {
    CheckInputs(inputs);
    Device& device = GetDevice(kXrtDevice);
    devices::ExternalKernelHost* host = devices::ExternalKernelHostOf(device);
    const devices::ExternalKernel* kernel =
        host != nullptr ? host->FindKernel(call_.kernel) : nullptr;
    if (kernel == nullptr) {
      throw Error(ErrorKind::kUsage, "xrt kernel " + call_.kernel + " is not loaded on " +
                                         device.id().ToString() +
                                         ": give the .xclbin that holds it with --xclbin FILE");
    }
    size_t buffers = 0, integers = 0;
    for (const devices::ExternalKernelArgument& argument : kernel->arguments())
      (argument.kind == devices::ExternalKernelArgument::Kind::kBuffer ? buffers : integers) += 1;
    if (buffers != call_.buffers.size() || integers > call_.integers.size()) {
      throw Error(ErrorKind::kUsage,
                  "xrt kernel " + call_.kernel + " takes " + Count(buffers, "buffer", "buffers") +
                      " and " + Count(integers, "integer", "integers") + "; the call gives " +
                      Count(call_.buffers.size() - 1, "tensor", "tensors") + " and its result (" +
                      Count(call_.buffers.size(), "buffer", "buffers") + "), and " +
                      Count(call_.integers.size(), "dimension", "dimensions") + " as integers (" +
                      call_.integer_names + ")");
    }
    Ref<Tensor> result = Tensor::Empty(device, result_.shape, result_.dtype);
    std::vector<Ref<Tensor>> placed;  // alive until the kernel has run
    std::vector<devices::BufferArgument> arguments;
    for (int32_t buffer : call_.buffers) {
      placed.push_back(buffer < 0 ? result : TensorOn(inputs[size_t(buffer)], device));
      arguments.push_back({placed.back()->storage()->handle(), placed.back()->byte_offset()});
    }
    kernel->Run(arguments, std::span<const int64_t>(call_.integers).first(integers));
    return result;
  }

 private:
  void CheckInputs(std::span<const Ref<Tensor>> inputs) const {
    if (inputs.size() != params_.size()) {
      throw Error(ErrorKind::kUsage, symbol_ + " takes " +
                                         Count(params_.size(), "tensor", "tensors") + ", given " +
                                         std::to_string(inputs.size()));
    }
    for (size_t index = 0; index < inputs.size(); ++index) {
      const ValueType& param = params_[index];
      const Tensor& input = *inputs[index];
      bool fits = input.dtype() == param.dtype && size_t(input.ndim()) == param.shape.size();
      for (size_t axis = 0; fits && axis < param.shape.size(); ++axis)
        fits = param.shape[axis] == kAnyDim || param.shape[axis] == input.shape()[axis];
      if (!fits) {
        throw Error(ErrorKind::kUsage,
                    symbol_ + "'s input " + std::to_string(index) + " is " + param.ToString() +
                        ", given " + ValueType::Tensor(input.shape(), input.dtype()).ToString());
      }
    }
  }

  const ResolvedCall call_;
  const std::vector<ValueType> params_;
  const ValueType result_;
  const std::string symbol_;
};

// The kernels of a manifest, or none (XrtCodegen()): functions marked
// Compiler="xrt" by hand call the kernel their global_symbol names.
class XrtKernelCodegen final : public ExternalCodegen {
 public:
  explicit XrtKernelCodegen(std::vector<XrtManifestKernel> kernels = {})
      : kernels_(std::move(kernels)), rules_(XrtManifestRules(kernels_)) {}

  std::string_view name() const override { return "xrt"; }
  const RuleTable& rules() const override { return rules_; }
  bool merges_regions() const override { return false; }

  std::string Compile(const ExternalGraph& graph, const std::string& symbol) const override {
    // A function whose body calls no operator has no result type here.
    if (graph.types.empty()) {
      throw Error(ErrorKind::kCompile,
                  symbol + ": an external function computes at least one operator");
    }
    const XrtKernelCall call = graph.composite_names.empty() ? HandWrittenCall(graph, symbol)
                                                             : ManifestCall(graph, symbol);
    Resolve(graph, call, ErrorKind::kCompile, symbol);
    return WriteState(call);
  }

  std::shared_ptr<const ExternalFunction> Load(const ExternalGraph& graph, std::string_view state,
                                               const std::string& symbol) const override {
    return std::make_shared<XrtFunction>(
        Resolve(graph, ReadState(state, symbol), ErrorKind::kLoad, symbol), graph.params,
        graph.result(), symbol);
  }

 private:
  // The kernel `symbol` on the parameters in order, then the result, and
  // the result's dimensions.
  static XrtKernelCall HandWrittenCall(const ExternalGraph& graph, const std::string& symbol) {
    if (!IsXrtKernelName(symbol)) {
      throw Error(ErrorKind::kCompile,
                  symbol + ": an xrt kernel's name is printable characters without spaces");
    }
    XrtKernelCall call{.kernel = symbol, .arguments = {}};
    using Kind = XrtArgument::Kind;
    for (size_t input = 0; input < graph.params.size(); ++input)
      call.arguments.push_back({.kind = Kind::kBuffer, .input = int32_t(input)});
    call.arguments.push_back({.kind = Kind::kBuffer, .input = -1});
    for (size_t axis = 0; axis < graph.result().shape.size(); ++axis)
      call.arguments.push_back({.kind = Kind::kInteger, .input = -1, .axis = int32_t(axis)});
    return call;
  }

  // The manifest's kernel whose pattern the graph is, its "inputN" (the
  // pattern's N-th free operand) replaced by the parameter it is.
  XrtKernelCall ManifestCall(const ExternalGraph& graph, const std::string& symbol) const {
    auto fail = [&](const std::string& problem) {
      return Error(ErrorKind::kCompile, symbol + ": " + problem);
    };
    if (graph.composite_names.size() != 1 ||
        std::any_of(graph.composites.begin(), graph.composites.end(),
                    [](int32_t composite) { return composite != 0; })) {
      throw fail("an xrt function is one kernel's pattern, and nothing else");
    }
    const std::string& composite = graph.composite_names[0];
    const auto kernel = std::find_if(kernels_.begin(), kernels_.end(), [&](const auto& kernel) {
      return "xrt." + kernel.name == composite;
    });
    if (kernels_.empty())
      throw fail(composite + " is a kernel of a manifest, which --byoc xrt:MANIFEST names");
    if (kernel == kernels_.end()) throw fail(composite + " is no kernel of the xrt manifest");
    std::vector<int32_t> free_operands;
    bool follows_pattern = graph.operators.size() == kernel->pattern.size();
    for (size_t position = 0; follows_pattern && position < graph.operators.size(); ++position) {
      follows_pattern = graph.operators[position].op == kernel->pattern[position];
      for (int32_t input : graph.operators[position].inputs)
        if (input >= 0) free_operands.push_back(input);
    }
    if (!follows_pattern || free_operands.size() != size_t(kernel->input_count))
      throw fail("the function does not follow the pattern of " + composite);
    XrtKernelCall call{.kernel = kernel->name, .arguments = kernel->arguments};
    for (XrtArgument& argument : call.arguments) {
      if (argument.input >= 0) argument.input = free_operands[size_t(argument.input)];
    }
    return call;
  }

  const std::vector<XrtManifestKernel> kernels_;
  const RuleTable rules_;
};

}  // namespace

const ExternalCodegen& XrtCodegen() {
  static const XrtKernelCodegen codegen;
  return codegen;
}

std::shared_ptr<const ExternalCodegen> XrtCodegenFromManifest(const std::string& path) {
  return std::make_shared<XrtKernelCodegen>(ReadXrtManifest(path));
}

}  // namespace relay::kernels::external
