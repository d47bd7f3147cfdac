// The VM's own costs, apart from kernel work: instruction dispatch, a call
// and return, scalar arithmetic, and invoking a kernel on 0-d tensors. Each case runs a
// generated straight-line Relay function of kSteps steps (a let chain, so
// nothing but the measured operation repeats) and reports the time per step.
// The chain starts from @main's parameter, so that the compiler cannot fold
// it to a constant; `instructions/step` shows what the VM still runs.
//
//   ninja -C build vm_bench && build/bench/vm_bench
//
// The interpreter dispatches by computed goto where the compiler allows; a
// second build configured with -DCMAKE_CXX_FLAGS=-DRELAY_VM_SWITCH_DISPATCH=1
// gives the portable switch to compare with (vm/interpreter/dispatch.h).
//
// The end-to-end comparison with CPython is bench/programs/count_loop.relay
// against bench/count_loop.py.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

constexpr int kSteps = 10000;

std::shared_ptr<const vm::Executable> Compile(const std::string& body) {
  std::string text = "#[version = \"0.0.5\"]\n" + body;
  Diagnostics diagnostics("bench.relay", std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kInternal, diagnostics.FormatAll());
  return std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
}

// @main(%x: T) -> T: let %v0 = %x; let %v1 = STEP(%v0); let %v2 = STEP(%v1); ...
std::string Chain(const std::string& type, const std::string& step_format) {
  std::string body = "def @main(%x: " + type + ") -> " + type + " {\n  let %v0 = %x;\n";
  for (int step = 1; step <= kSteps; ++step) {
    std::string step_text = step_format;
    const std::string previous = "%v" + std::to_string(step - 1);
    for (size_t at; (at = step_text.find("PREV")) != std::string::npos;)
      step_text.replace(at, 4, previous);
    body += "  let %v" + std::to_string(step) + " = " + step_text + ";\n";
  }
  return body + "  %v" + std::to_string(kSteps) + "\n}\n";
}

// A 0-d host tensor holding `value` (int32_t or float).
template <typename T>
Value Scalar(T value) {
  Ref<Tensor> tensor =
      Tensor::Empty(HostDevice(), {}, std::is_same_v<T, float> ? DType::kFloat32 : DType::kInt32);
  std::memcpy(tensor->host_data(), &value, sizeof(value));
  return tensor;
}

void RunSteps(benchmark::State& state, const std::shared_ptr<const vm::Executable>& executable,
              const Value& start) {
  vm::VirtualMachine machine(executable);
  const Value arguments[] = {start};
  benchmark::DoNotOptimize(machine.Invoke("main", arguments));  // compiles the kernels
  const uint64_t before = machine.instructions_executed();
  for (auto _ : state) benchmark::DoNotOptimize(machine.Invoke("main", arguments));
  const double instructions =
      double(machine.instructions_executed() - before) / double(state.iterations());
  state.counters["instructions/step"] = instructions / kSteps;
  state.counters["ns/step"] = benchmark::Counter(
      double(kSteps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Three instructions a step (alloc_ref, ref_read, kill): the interpreter's
// dispatch and register traffic with the cheapest work there is (a tuple's
// projection would fold away at compile time).
void BM_Dispatch(benchmark::State& state) {
  static const auto executable = Compile(Chain("int32", "ref_read(ref(PREV))"));
  RunSteps(state, executable, Scalar<int32_t>(1));
}
BENCHMARK(BM_Dispatch);

// One call and one return a step (the callee's body is its parameter).
void BM_CallReturn(benchmark::State& state) {
  static const auto executable =
      Compile("def @id(%x: int32) -> int32 { %x }\n" + Chain("int32", "@id(PREV)"));
  RunSteps(state, executable, Scalar<int32_t>(1));
}
BENCHMARK(BM_CallReturn);

// Arithmetic on 0-d tensors, which the VM does itself (scalar_operators.h):
// one add a step. Each value is used twice, so nothing fuses.
void BM_ScalarArithmetic(benchmark::State& state) {
  static const auto executable = Compile(Chain("int32", "add(PREV, PREV)"));
  RunSteps(state, executable, Scalar<int32_t>(1));
}
BENCHMARK(BM_ScalarArithmetic);

// One kernel invocation on 0-d float32 tensors a step: divide has no VM
// fast path, so this is a prepared kernel's launch and its result's
// allocation.
void BM_KernelInvokeScalar(benchmark::State& state) {
  static const auto executable = Compile(Chain("float32", "divide(PREV, PREV)"));
  RunSteps(state, executable, Scalar<float>(1.0f));
}
BENCHMARK(BM_KernelInvokeScalar);

}  // namespace
}  // namespace relay
