// Embedding relay-vm: load a program once as an Executable, then run it
// from any number of VirtualMachines.
//
//   relay::Executable model = relay::Executable::Load("model.onnx");
//   relay::VirtualMachine vm(model);
//   vm.SetInput("input.1", tensor);              // by parameter or ONNX name
//   relay::Value result = vm.Invoke();            // @main
//
// A program is Relay source (.relay), an ONNX model (.onnx, imported) or a
// saved executable (.rbc); weights from an .npz bind @main's parameters of
// their names as constants. Values are relay/value.h's (tensors, tuples,
// ADT values); tensors come from relay/tensor.h or, without a copy, from
// DLPack (relay/dlpack.h's FromDLPack). Errors are relay::Error with their
// kinds, as everywhere (relay/error.h).
//
// Thread-safety: an Executable is immutable once loaded; copies share it,
// and any number of threads may use it and create VMs over it at once. A
// VirtualMachine is one thread's at a time (its inputs and its run); use one
// per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "relay/dtype.h"
#include "relay/tensor.h"
#include "relay/value.h"

namespace relay {

// One parameter of a function: its name (without '%'), and for a tensor its
// dtype and shape (-1 for a `?` dimension).
struct ParameterInfo {
  std::string name;
  bool is_tensor = false;  // false: a tuple, ADT value, closure or reference
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string type;  // the Relay type: "Tensor[(?, 784), float32]"
};

struct FunctionInfo {
  std::string name;  // "main"
  std::vector<ParameterInfo> parameters;
  // What it returns: one entry per tensor of a tensor or a tuple of tensors
  // (named "out0", "out1", ... in order; an imported ONNX model's @main by
  // the model's output names), else one entry "out0" of the whole type
  // (is_tensor false, type its Relay type).
  std::vector<ParameterInfo> results;
};

struct LoadOptions {
  // An .npz whose arrays bind @main's parameters of their names as
  // constants (a .relay or .onnx program only); empty: none.
  std::string params_path;
  // Globals of a .relay or .onnx program to differentiate: each NAME gets
  // @NAME_grad, taking NAME's parameters and returning (result, (d_p1, ...)),
  // the gradient of the sum of the result's elements with respect to each
  // floating-point tensor parameter (relay-vm grad --help says more). The
  // program itself may also call @NAME_grad for its own @NAME.
  std::vector<std::string> gradients;
  // External codegens (BYOC) to hand what they run to, in priority order:
  // "dnnl", "cblas", "xrt:MANIFEST", comma-separated, as `relay-vm run
  // --byoc` takes (docs/byoc.md). Empty: relay-vm's own kernels run
  // everything. A .relay or .onnx program only.
  std::string byoc;
};

class Executable {
 public:
  // Loads, checks and compiles `path` (.relay, .onnx) or loads and verifies
  // a saved executable (.rbc). Throws relay::Error: kLoad for a file that
  // cannot be read or is malformed, kParse/kType/kCompile with every
  // diagnostic of a program that does not compile, kUsage for params given
  // to an .rbc or naming no parameter.
  static Executable Load(const std::string& path, const LoadOptions& options = {});

  // The functions a caller may invoke (the program's globals), by name.
  std::vector<FunctionInfo> functions() const;
  // Function `name` ("main" or "@main"); throws kUsage when there is none.
  FunctionInfo function(std::string_view name = "main") const;
  // The parameter that input `name` sets (VirtualMachine::SetInput): a
  // parameter's name or an imported model's input name; @main's parameter
  // of the name, else the first function's. Throws kUsage for none.
  ParameterInfo input(std::string_view name) const;
  // For an imported ONNX model, the graph's output names in order (@main
  // returns one tensor, or a tuple of them); else empty.
  std::vector<std::string> onnx_output_names() const;
  // For an imported ONNX model, the graph's input names as the model writes
  // them ("input.1"), by @main's parameter name ("input_1"); else empty.
  const std::map<std::string, std::string>& onnx_input_names() const;

  class Impl;

 private:
  friend class VirtualMachine;
  explicit Executable(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl() const { return *impl_; }
  std::shared_ptr<const Impl> impl_;
};

class VirtualMachine {
 public:
  // A VM over `executable` (shared, not copied) whose tensor work runs on
  // `device`: "cpu" (the default), "opencl[:N]" or "cuda[:N]"
  // (docs/devices.md: shapes, scalars and control flow stay on the host).
  // Inputs are host tensors and results come back to the host. Throws
  // kUsage for a name that is no device, kDevice for a device that is not
  // there (no driver, an index past the devices present).
  explicit VirtualMachine(const Executable& executable, std::string_view device = "cpu");
  ~VirtualMachine();
  VirtualMachine(VirtualMachine&&) noexcept;
  VirtualMachine& operator=(VirtualMachine&&) noexcept;

  // Sets input `name` (a parameter's name, or an imported model's input
  // name as the model writes it) for the next Invokes: a function invoked
  // without arguments takes the inputs named as its parameters. Throws
  // kUsage for a name no function's parameter has, or a tensor whose dtype
  // or shape does not fit the parameter's type (any extent for a `?`;
  // checked against @main's parameter of the name if it has one, else when
  // invoking). The tensor is shared, not copied, and must not change while
  // a run reads it.
  void SetInput(std::string_view name, Ref<Tensor> tensor);
  // Forgets the inputs set so far.
  void ClearInputs();

  // Runs function `name` (@main by default) on the inputs set. Throws
  // kUsage naming a missing input, and what running throws (kRuntime,
  // kDevice, ...); the VM stays usable.
  Value Invoke(std::string_view name = "main");
  // Runs function `name` on `arguments`, in its parameters' order (any
  // values; tensors are checked against tensor parameters).
  Value Invoke(std::string_view name, std::span<const Value> arguments);
  // Runs function `name` on arguments given by parameter name.
  Value Invoke(std::string_view name, const std::map<std::string, Value>& arguments);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace relay
