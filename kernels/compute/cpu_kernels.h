// Building, compiling and running kernels for the CPU.
//
// BuildInjectiveKernel turns a TensorExpr (one operator, or a fused chain)
// into a kernel with the CPU schedule: the outer loop runs in parallel on the
// thread pool when the work is large enough, the innermost loop is
// vectorised. RunOperator builds, JIT-compiles (with caching) and runs one
// operator on host tensors; it is how tests and, until the VM exists, users
// of the C++ API drive kernels.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/codegen/llvm/lower_kernel.h"
#include "kernels/compute/device_kernels.h"
#include "kernels/compute/tensor_expr.h"
#include "relay/tensor.h"

namespace relay::kernels {

// A kernel computing `output` into a new output buffer, reading `inputs`.
// Symbolic dimensions are those of `dims` (their values are passed at run
// time in this order).
kir::Kernel BuildInjectiveKernel(const std::string& name, const std::vector<kir::Buffer>& inputs,
                                 const std::vector<kir::Var>& dims, const TensorExpr& output);

// The CPU kernel for `output`, whose shape is constant: the contraction
// schedule (kernels/compute/contraction_schedule.h) when `output` is a dot
// product or convolution it serves, with any elementwise epilogue fused in,
// else BuildInjectiveKernel's.
kir::Kernel BuildCpuKernel(const std::string& name, const std::vector<kir::Buffer>& inputs,
                           const TensorExpr& output);

// Compiles `kernel` (through the JIT's caches) and runs it on host tensors
// `inputs` (one per input parameter, of its dtype and shape) with
// `dim_values` for its symbolic dimensions, in the order of kernel.dims.
// Shapes are not checked against those values: getting them right is the
// caller's job. Allocates the result of `output_shape` and the kernel's
// workspaces from the host device's pool. Throws kUsage for inputs of the
// wrong number, dtype or device, or the wrong number of dimension values.
Ref<Tensor> RunKernel(const kir::Kernel& kernel, std::span<const Ref<Tensor>> inputs,
                      const Shape& output_shape, std::span<const int64_t> dim_values = {});

// A kernel compiled for inputs of known shapes and dtypes, with what
// launching it needs: its entry, its result's shape and dtype, the values of
// its symbolic dimensions and the sizes of its workspaces. On the host its
// entry is called directly; on another device (`device` set) it is a
// device kernel queued on that device, with `threads` threads.
struct PreparedKernel {
  llvm_backend::KernelEntry entry = nullptr;
  Device* device = nullptr;  // null: the host
  std::shared_ptr<const devices::LoadedKernel> device_kernel;
  int64_t threads = 0;
  Shape output_shape;
  DType output_dtype = DType::kFloat32;
  std::vector<int64_t> dim_values;
  std::vector<std::pair<int64_t, DType>> workspaces;  // element count, dtype
  // The kernel filling a workspace from one input (kir::Kernel's
  // derived_workspace), run before `entry`; for an immutable input, once,
  // its result kept with the input (Tensor::Derived) for later launches.
  struct WorkspaceFill {
    llvm_backend::KernelEntry entry = nullptr;
    size_t input = 0;
    size_t workspace = 0;
  };
  std::optional<WorkspaceFill> fill;
  // Set for an operator computed by C++ code (OperatorDefinition's
  // host_kernel), which runs in place of `entry`: it reads host copies of
  // inputs on a device and writes a host copy of an output there.
  std::function<void(std::span<const Ref<Tensor>> inputs, const Tensor& output)> host_function;

  // Runs on `inputs` (of the shapes and dtypes it was prepared for, on its
  // device: not checked) into a new tensor on that device.
  Ref<Tensor> Launch(std::span<const Ref<Tensor>> inputs) const;
  // The same into `output`, a tensor on its device that the caller
  // allocated (explicit memory); its shape and dtype must be output_shape
  // and output_dtype (not checked here) and it must not overlap an input.
  void LaunchInto(std::span<const Ref<Tensor>> inputs, const Tensor& output) const;

 private:
  void LaunchOnDevice(std::span<const Ref<Tensor>> inputs, const Tensor& output) const;
  void RunHostFunction(std::span<const Ref<Tensor>> inputs, const Tensor& output) const;
};

// An operator call prepared for inputs of given shapes and dtypes (and
// attributes): type relation run, kernels built and compiled. Running it
// again on inputs of the same shapes and dtypes skips all of that, which is
// how the VM makes repeated calls cheap. An operator shaped by its inputs'
// values (arange) must be prepared again for other values.
struct PreparedOperator {
  std::string name;
  std::vector<PreparedKernel> kernels;  // one per result tensor
  bool tuple_result = false;
  bool depends_on_values = false;

  // The result tensors: one, or a tuple result's fields.
  std::vector<Ref<Tensor>> Run(std::span<const Ref<Tensor>> tensors) const;
};

// What a call site (of a VM or an interpreter) last prepared: while the
// inputs' shapes, dtypes and devices repeat, the same prepared operator serves, so a
// call in a loop skips the type relation, kernel building and JIT lookup.
class PreparedCallSite {
 public:
  // The prepared operator for `tensors`: the remembered one when it was
  // prepared for the same shapes and dtypes (and not from input values),
  // else the one `prepare()` returns, remembered.
  template <typename Prepare>
  const PreparedOperator& For(std::span<const Ref<Tensor>> tensors, Prepare&& prepare) {
    if (!Matches(tensors)) Remember(tensors, prepare());
    return *prepared_;
  }

 private:
  bool Matches(std::span<const Ref<Tensor>> tensors) const;
  void Remember(std::span<const Ref<Tensor>> tensors,
                std::shared_ptr<const PreparedOperator> prepared);

  std::vector<DType> dtypes_;
  std::vector<Shape> shapes_;
  std::vector<const Device*> devices_;  // where each input was (a kernel is per device)
  std::shared_ptr<const PreparedOperator> prepared_;
};

// How an operator's inputs arrive: one tensor per input, or (concatenate,
// stack) one tuple input given as its fields.
enum class InputForm { kTensors, kTuple };

// Prepares operator `name` for `tensors` (for kTuple, the tuple's fields),
// on the device that holds them: the host's kernels, or the GPU schedule
// compiled for that device. Errors as RunOperator, and kUsage for inputs on
// more than one device.
std::shared_ptr<const PreparedOperator> PrepareOperator(std::string_view name,
                                                        std::span<const Ref<Tensor>> tensors,
                                                        const Attrs& attrs, InputForm form);

// One operator of a fused group (a primitive function): its inputs are the
// group's inputs (index >= 0) or the results of earlier operators of the
// group (-1 - their position).
struct FusedOperator {
  std::string op;
  Attrs attrs;
  std::vector<int32_t> inputs;
};

// Prepares a fused group for `tensors` (the group's inputs): the operators'
// compute definitions composed into one kernel whose result is the last
// operator's. Each operator's type relation runs in order on the types it
// sees, so shapes are checked as the unfused calls would check them (kUsage
// naming the operator). Operators with tuple inputs or results, or whose
// shape depends on input values, cannot be in a group (kUsage).
std::shared_ptr<const PreparedOperator> PrepareFusedOperators(
    std::span<const FusedOperator> operators, std::span<const Ref<Tensor>> tensors);

// Runs the operator `name` (an elementwise, broadcast or injective operator
// of the table) on tensors of one device and returns its result, a new
// tensor on that device (queued there: reading it waits for it).
// The kernel is specialised to the inputs' dtypes and ranks; for elementwise
// and broadcast operators, reductions and arange, dimension sizes are passed
// at run time, so one compiled kernel serves every shape of the same rank
// (and pattern of sizes 0 and 1), while data-movement, windowed and
// neural-network operators compile one kernel per distinct input shape. Throws kUsage for an
// unknown operator, kType-like kUsage errors from the operator's type relation for bad inputs, and
// kUsage for an operator without a compute definition yet or with a tuple result.
Ref<Tensor> RunOperator(std::string_view name, std::span<const Ref<Tensor>> inputs,
                        const Attrs& attrs = {});

// Runs an operator whose one input is a tuple (concatenate, stack) on the
// tuple's `fields`; otherwise as RunOperator.
Ref<Tensor> RunOperatorOnTuple(std::string_view name, std::span<const Ref<Tensor>> fields,
                               const Attrs& attrs = {});

// Runs an operator with a tuple result (split) on tensor inputs and returns
// the tuple's fields, one kernel launch each. Errors as RunOperator; an
// operator with a tensor result gives a one-element vector.
std::vector<Ref<Tensor>> RunOperatorWithTupleResult(std::string_view name,
                                                    std::span<const Ref<Tensor>> inputs,
                                                    const Attrs& attrs = {});

// How many kernels RunOperator and RunKernel have launched in this process
// (tests use it to check that a fused chain is one kernel).
uint64_t KernelLaunchCount();

}  // namespace relay::kernels
