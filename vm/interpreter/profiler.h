// Where a run's time goes: per-kernel statistics and a Chrome trace.
//
// A VirtualMachine given a Profiler (VirtualMachine::set_profiler) reports
// every kernel launch with its inputs and its start and end times, the time
// it spent preparing kernels (type relations and JIT compilation, which a
// call site does once per distinct input shape), and, when a trace is
// recorded, every Relay function call and return. Without a profiler the
// VM tests one pointer per kernel launch and call, nothing more.
//
// FormatTable summarises the runs between BeginRun and EndRun as a table of
// kernels sorted by total time: the operator (a fused group as its
// operators joined by '+', e.g. "nn.dense+add+sigmoid"), its input shapes,
// calls, total milliseconds, share of the run, mean microseconds a call and
// the achieved rate (GFLOP/s for contractions, else GB/s of tensors read
// and written); then the kernels' total, the preparation time and the
// time spent in the VM outside kernels, which together make up the runs'
// wall time.
//
// WriteChromeTrace writes the Trace Event format that Perfetto and
// chrome://tracing load: one complete ("X") slice per kernel launch and a
// begin/end pair per Relay function call, on one track.
//
// Thread-safety: a Profiler belongs to the one VirtualMachine (and thread)
// that reports to it.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "relay/tensor.h"
#include "vm/bytecode/bytecode.h"

namespace relay::vm {

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  // A profiler of runs of `executable`, which must outlive it; with
  // `record_trace`, it also keeps one event per launch and call (memory
  // grows with the run) for WriteChromeTrace.
  Profiler(std::shared_ptr<const Executable> executable, bool record_trace);

  // Brackets one run (Invoke); the table covers every bracketed run.
  void BeginRun();
  void EndRun();

  // Kernel table entry `kernel` ran on `inputs` (the flat tensors it was
  // given) from `start` to `end`, writing `output_bytes` bytes of results.
  void RecordKernel(int32_t kernel, std::span<const Ref<Tensor>> inputs, int64_t output_bytes,
                    Clock::time_point start, Clock::time_point end);
  // Time spent preparing a kernel call (type relation, kernel building,
  // JIT compilation or a cache lookup).
  void RecordPreparation(Clock::time_point start, Clock::time_point end);
  // Relay function `function` was entered / the innermost one returned (a
  // tail call is a return and an entry). Recorded for the trace only.
  void EnterFunction(int32_t function);
  void LeaveFunction();

  bool records_trace() const { return record_trace_; }

  // The summary described above. Empty runs give a table without rows.
  void FormatTable(std::ostream& out) const;
  // Writes the trace to `path` (atomically: a temporary file renamed over
  // it). Throws kUsage if no trace was recorded, kRuntime if the file cannot
  // be written.
  void WriteChromeTrace(const std::string& path) const;

  // Totals since construction, in nanoseconds (for tests).
  int64_t run_nanoseconds() const { return run_nanoseconds_; }
  int64_t kernel_nanoseconds() const;
  int64_t preparation_nanoseconds() const { return preparation_nanoseconds_; }
  uint64_t kernel_launches() const;

 private:
  // One table row: a kernel table entry called on inputs of one signature.
  struct Row {
    int32_t kernel = 0;
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    DeviceId device;     // where the kernel ran (its inputs' device)
    std::string name;    // computed once, when the row is made; "@opencl:0" off the host
    std::string inputs;  // "1x512, 2048x512"
    double flops = 0;    // per call; 0 when not a contraction
    double bytes = 0;    // per call: inputs read and outputs written
    uint64_t calls = 0;
    int64_t nanoseconds = 0;
  };
  struct Event {
    enum class Kind : uint8_t { kKernel, kEnter, kLeave } kind;
    int32_t index;  // the row (kernels) or the function (enters)
    int64_t start;  // nanoseconds since the profiler's creation
    int64_t duration;
  };

  size_t RowFor(int32_t kernel, std::span<const Ref<Tensor>> inputs);
  int64_t Since(Clock::time_point time) const;

  std::shared_ptr<const Executable> executable_;
  bool record_trace_;
  Clock::time_point origin_;
  std::vector<Row> rows_;
  std::vector<std::vector<size_t>> rows_by_kernel_;  // per kernel table entry
  std::vector<Event> events_;
  std::vector<int32_t> open_functions_;  // the trace's call stack
  uint64_t runs_ = 0;
  Clock::time_point run_start_;
  int64_t run_nanoseconds_ = 0;
  int64_t preparation_nanoseconds_ = 0;
};

}  // namespace relay::vm
