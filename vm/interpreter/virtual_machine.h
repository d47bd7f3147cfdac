// The bytecode interpreter (docs/architecture.md, "Bytecode and the VM").
//
// A VirtualMachine runs functions of a shared, verified Executable. All
// execution state is explicit: a contiguous register stack and a stack of
// frames, so a Relay call never recurses on the C++ stack (a million-deep
// recursion needs memory, not stack), tail calls reuse their frame, and a
// run could be suspended between instructions. Kernels run through the CPU
// kernel pipeline (kernels/compute/cpu_kernels.h).
//
// Errors: a failing instruction (a kernel rejecting its inputs, `fatal` for
// a match without a matching clause, a value of the wrong kind reaching an
// instruction) throws relay::Error of kind kRuntime (or the kernel's own
// kind) with the Relay source location of the failing instruction as its
// span and the Relay functions active as its backtrace, innermost first.
//
// Thread-safety: one VirtualMachine per thread; the Executable is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/compute/cpu_kernels.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "relay/value.h"
#include "vm/bytecode/bytecode.h"
#include "vm/interpreter/profiler.h"
#include "vm/interpreter/rematerializer.h"
#include "vm/interpreter/scalar_operators.h"

namespace relay::vm {

class VirtualMachine {
 public:
  // `executable` must have passed Verify.
  explicit VirtualMachine(std::shared_ptr<const Executable> executable);

  // Runs function `name` ("main" or "@main") on `arguments` and returns its
  // result. Throws kUsage for an unknown function or the wrong number of
  // arguments, and runtime errors as described above.
  Value Invoke(std::string_view name, std::span<const Value> arguments);

  // A run that can pause between instructions (a debugger's step, a server
  // interleaving requests): Start sets up the call of `name` on `arguments`
  // (errors as Invoke); Resume runs at most `budget` instructions and
  // returns the result when the call finishes, or nothing when it paused,
  // to be resumed later. Starting again abandons a paused run; an error
  // ends the run. Invoke is Start and one unbounded Resume.
  void Start(std::string_view name, std::span<const Value> arguments);
  std::optional<Value> Resume(uint64_t budget = UINT64_MAX);
  // Whether a started run has not finished yet (nor failed).
  bool paused() const { return !frames_.empty() && !failed_; }

  // ---- inspection, for a debugger --------------------------------------------------------
  // With `keep`, a run that fails keeps its frames and registers for
  // inspection (frames(), RegisterOf) until the next Start, instead of
  // dropping them; it cannot be resumed. Off by default.
  void set_keep_failed_run(bool keep) { keep_failed_run_ = keep; }
  // Whether the last run failed and was kept.
  bool failed() const { return failed_; }
  struct FrameView {
    int32_t function = 0;
    // The instruction the frame runs next (innermost frame), or the call it
    // waits in (outer frames; for a failed run's innermost frame, the one
    // that failed).
    size_t pc = 0;
    int32_t return_register = 0;  // in the caller's frame
  };
  // The frames of a paused or failed run, outermost first.
  std::vector<FrameView> frames() const;
  // Register `reg` of frame `depth` (0: outermost); null when the register
  // holds nothing (not written yet, or killed after its last use).
  const Value& RegisterOf(size_t depth, int32_t reg) const;
  const Executable& executable() const { return *executable_; }

  // Reports kernel launches, preparation and calls of later runs to
  // `profiler` (null: none, the default), which must outlive its use. A run
  // is timed from Start to the Resume that finishes it.
  void set_profiler(Profiler* profiler) { profiler_ = profiler; }

  // Where tensor work runs, as Nimble places it: with a device, storage
  // and shaped allocations (alloc_storage, alloc_tensor_reg) come from it,
  // and every kernel runs there except those reading only small host
  // tensors (at most 64 elements: loop counters, flags, shapes, an index
  // looked up, which stay on the host) and shape_of and ndarray_size,
  // answered on the host from the shape. Inputs are copied
  // to where their kernel runs; an immutable one (a constant, a weight
  // given as an input) once, the copy kept with it. Values the VM itself
  // reads (an `if` condition, a shape to allocate) are copied to the host,
  // which waits for the device's queue: kernels are otherwise queued
  // without waiting. Results may be left on the device (ValueOnHost copies
  // them back). Null, the default: everything on the host. Set it between
  // runs.
  void set_device(Device* device) { device_ = device; }
  Device* device() const { return device_; }

  // Runs under a memory budget (Dynamic Tensor Rematerialization,
  // rematerializer.h): the bytes resident at once (the arguments and what
  // the run allocates) stay at most `bytes`, by evicting operator results
  // and recomputing them when used again; none, the default: no budget.
  // The planned memory steps aside under a budget: each alloc_tensor gets a
  // storage of its own rather than a view into its planned block, so every
  // result can be evicted alone. A run that cannot fit fails with a
  // kRuntime error naming the bytes it needed. Host (CPU) runs only: with
  // set_device, Start refuses it (kUsage). Set it between runs.
  void set_memory_budget(std::optional<size_t> bytes) { memory_budget_ = bytes; }
  // Whether runs measure their peak memory (always, under a budget).
  void set_measure_memory(bool measure) { measure_memory_ = measure; }
  // What the last run that measured (finished or failed) saw.
  const MemoryStats& memory_stats() const { return memory_stats_; }

  // Instructions executed by this VM so far (for benchmarks and tests).
  uint64_t instructions_executed() const { return instructions_executed_; }

 private:
  struct Frame {
    int32_t function = 0;
    const Instruction* next = nullptr;  // in the function's code: the one to run next
    size_t base = 0;                    // first register in registers_
    int32_t return_register = 0;        // in the caller's frame
    Value self;                         // the closure called, for load_self
  };

  // Runs at most `budget` instructions of the current run. The loop's
  // dispatch (computed goto or switch) is chosen in dispatch.h.
  std::optional<Value> Run(uint64_t budget);
  // Pushes a frame for `function` on `arguments` (captured values first).
  void PushFrame(int32_t function, std::vector<Value>& arguments, int32_t return_register,
                 Value self);
  // Replaces the current frame's function and registers (a tail call).
  void ReplaceFrame(int32_t function, std::vector<Value>& arguments, Value self);
  // call_arguments_ filled with the values of `argument_registers` of the
  // current frame, whose first register is `registers`. Its user moves the
  // values out, so that it holds no value between instructions.
  std::vector<Value>& GatherArguments(std::span<const int32_t> argument_registers,
                                      const Value* registers);
  // Calls the closure `callee` on the registers `argument_registers` of the
  // current frame (whose first register is `registers`): pushes its frame,
  // returning to `return_register`, or for a tail call replaces the current
  // frame. Fails unless `callee` is a closure taking that many arguments.
  void CallClosure(Value callee, std::span<const int32_t> argument_registers,
                   const Value* registers, int32_t return_register, bool tail);
  // A runtime error at the current instruction, with the backtrace.
  [[noreturn]] void Fail(ErrorKind kind, const std::string& message) const;
  // Fail with what a kernel, shape function or allocation threw (a usage
  // error there is the program's runtime error).
  [[noreturn]] void FailInKernel(const Error& error) const;
  // The index of the instruction `frame` is running (or last ran) in
  // `function`, its function.
  static size_t CurrentIndex(const Frame& frame, const Function& function);
  // The active Relay functions, innermost first: "@f (file:line:col)".
  std::vector<std::string> Backtrace() const;

  // Runs kernel table entry `kernel` on the values of `input_registers` of
  // the current frame (whose first register is `registers`): fails unless
  // they are tensors (a tuple of them, for a tuple-input kernel), and
  // reports the kernel's errors at the current instruction.
  Value CallKernel(int32_t kernel, std::span<const int32_t> input_registers,
                   const Value* registers);
  // The VM's own arithmetic for a scalar operator kernel on 0-d host
  // tensors (scalar_operators.h), reading the registers in place; false
  // when the kernel or its inputs are not for it.
  // For a shape_of or ndarray_size call site: the result kept from its last
  // call when the input has the same shape, else null.
  const Ref<Tensor>* KeptShapeResult(int32_t kernel, std::span<const int32_t> input_registers,
                                     const Value* registers) const;
  void KeepShapeResult(int32_t kernel, const Tensor& input, const Tensor& result);
  bool RunScalarKernel(int32_t kernel, std::span<const int32_t> input_registers, Value* registers,
                       int32_t result_register);
  // kernel_inputs_ filled with the tensors of `input_registers` (the fields
  // of the one tuple, for a tuple-input kernel); fails unless they are.
  std::vector<Ref<Tensor>>& GatherKernelInputs(const KernelCall& call,
                                               std::span<const int32_t> input_registers,
                                               const Value* registers);
  // What kernel `kernel` was prepared as for `tensors` at its call site.
  const kernels::PreparedOperator& PrepareKernel(int32_t kernel,
                                                 const std::vector<Ref<Tensor>>& tensors);
  // invoke_shape_func and invoke_kernel_out (explicit memory).
  Value KernelResultShape(int32_t kernel, std::span<const int32_t> input_registers,
                          const Value* registers);
  void CallKernelInto(int32_t kernel, std::span<const int32_t> registers_list,
                      const Value* registers);
  // alloc_storage, alloc_tensor and alloc_tensor_reg; failures (out of
  // memory) are reported at the instruction.
  Value AllocateStorage(const Tensor& size_constant);
  Value AllocateTensor(const Value& storage, const Tensor& layout);
  Value AllocateTensorOfShape(const Value& shape, int32_t dtype);
  // Runs kernel table entry `kernel` on `tensors`, reusing the operator
  // prepared at this call site when the inputs' shapes and dtypes repeat.
  Value InvokeKernel(int32_t kernel, const std::vector<Ref<Tensor>>& tensors);
  // InvokeKernel reporting its preparation and launch to profiler_.
  Value ProfiledInvokeKernel(int32_t kernel, const std::vector<Ref<Tensor>>& tensors);
  // InvokeKernel under a memory budget: its inputs pinned, its results
  // recorded (with the time it took) so that they can be recomputed.
  Value CallRecordedKernel(int32_t kernel, std::vector<Ref<Tensor>>& tensors);
  // A kernel of an external device (KernelCall::external), timed when
  // profiling.
  Value CallExternalKernel(int32_t kernel, std::vector<Ref<Tensor>>& tensors);

  // A kernel call site: its scalar fast path, if any, and what it last
  // prepared.
  struct CallSite {
    ScalarOperator scalar = ScalarOperator::kNone;
    // shape_of and ndarray_size, whose result depends on the input's shape
    // alone: the last result, kept for the next call with an input of the
    // same shape (a recursive scan asks for the same shape every step).
    bool shape_only = false;
    // An operator shaped by its inputs' values (arange), or computed by C++
    // code (topk): its inputs are read on the host.
    bool host_values = false;
    // device_copy and a leftover on_device: no kernel, the input moved to
    // this device.
    std::optional<DeviceId> move_to;
    Shape shape_input;
    Ref<Tensor> shape_result;
    ScalarPool scalar_results;  // recycled 0-d results of the scalar path
    kernels::PreparedCallSite prepared;
  };

  // Copies `tensors` (the inputs of kernel table entry `kernel`) to where
  // the kernel runs: the device of `output` when given
  // (invoke_kernel_out), else the host for an operator shaped by its
  // inputs' values (arange), else the device the program placed the call
  // on, else the VM's device unless every input is a small host tensor.
  // See set_device.
  void PlaceKernelInputs(int32_t kernel, std::vector<Ref<Tensor>>& tensors,
                         const Tensor* output) const;
  // The device `id` names: the host device for the CPU.
  static Device& DeviceNamed(DeviceId id);
  // shape_of or ndarray_size of a tensor on a device, computed on the host.
  Ref<Tensor> HostShapeResult(const KernelCall& call, const Tensor& input) const;

  std::shared_ptr<const Executable> executable_;
  Device* device_ = nullptr;
  std::vector<CallSite> call_sites_;  // one per kernel table entry
  std::vector<Value> registers_;
  std::vector<Value> call_arguments_;       // see GatherArguments
  std::vector<Ref<Tensor>> kernel_inputs_;  // reused by every kernel call
  std::vector<Frame> frames_;
  bool keep_failed_run_ = false;
  bool failed_ = false;
  // Memory budget and measurement (set_memory_budget): the current run's
  // rematerializer, made by Start when either is asked for.
  std::optional<size_t> memory_budget_;
  bool measure_memory_ = false;
  std::unique_ptr<Rematerializer> rematerializer_;
  MemoryStats memory_stats_;
  // Ends the current run's memory tracking: its result made resident, its
  // statistics kept.
  void FinishMemoryTracking(const Value* result);
  // Under a budget: kernel `kernel` rerun on `inputs` into `outputs`, to
  // recompute an evicted result.
  void RerunKernel(int32_t kernel, std::span<const Ref<Tensor>> inputs,
                   std::span<const Ref<Tensor>> outputs);
  // Under a budget, whether this run evicts: the tensors a kernel reads
  // must be made resident first.
  bool Rematerializing() const { return rematerializer_ && rematerializer_->has_budget(); }
  uint64_t instructions_executed_ = 0;
  Profiler* profiler_ = nullptr;
};

// `value` with every tensor it holds directly or in tuples and ADT values
// copied to the host where it is not there (closures and references are
// left as they are); the value itself when nothing moves.
Value ValueOnHost(const Value& value);

}  // namespace relay::vm
