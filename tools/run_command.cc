// relay-vm run IN.relay|IN.onnx|IN.rbc [--entry NAME] [--input NAME=FILE.npy | NAME=SCALAR]...
//   [--params P.npz] [--output OUT.npy|OUT.npz] [--repeat N [--warmup SECONDS]]
//   [--random-inputs] [--profile] [--trace FILE.json] [--device cpu|opencl[:N]|cuda[:N]]
//   [--xclbin FILE.xclbin] [--byoc dnnl,cblas,xrt:MANIFEST] [--memory-budget SIZE] [--stats]
//
// Compiles the program, binds the entry function's parameters (by name,
// without '%') to the given arrays, runs it on the VM and prints the result
// in Relay's literal syntax. Every input is checked against its parameter's
// type before anything runs. --profile prints a table of where the run's
// time went after the result, --trace writes a Chrome trace of it
// (vm/interpreter/profiler.h); with --repeat they cover the timed runs.
// --device runs the tensor work on that device (VirtualMachine::set_device):
// shapes, scalars and control flow stay on the host; results come back to
// it, and timed runs include that. Without it, an executable compiled with
// --device runs on that device. --xclbin loads an FPGA's kernels onto xrt:0
// before the run, for the program's Compiler="xrt" functions to call.
// --byoc hands what the named external codegens run to them, in priority
// order (docs/byoc.md).
// --memory-budget runs under a memory budget, evicting and recomputing
// tensors (VirtualMachine::set_memory_budget, docs/dtr.md); --stats prints
// the run's peak memory, evictions and recomputations to standard error.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "api/program.h"
#include "devices/external_kernels.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"
#include "relay/npy.h"
#include "relay/tensor.h"
#include "tools/command_line.h"
#include "tools/program_inputs.h"
#include "tools/subcommands.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::tools {

namespace {

struct RunOptions {
  std::string path;
  InputOptions inputs;  // --entry, --input, --params, --random-inputs
  std::string output;
  int64_t repeat = 0;
  double warmup_seconds = 0;  // before timed runs, beyond the first run
  bool random_inputs = false;
  bool profile = false;
  std::string trace;
  std::optional<DeviceId> device;
  std::string xclbin;
  std::string byoc;
  std::optional<size_t> memory_budget;
  bool stats = false;
};

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm run: " + message);
}

// "65536", "64K", "64M", "1G" (powers of 1024; a trailing "B" or "iB" is
// allowed: "64MiB").
size_t ParseByteSize(const std::string& text) {
  uint64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string_view suffix(end, text.data() + text.size() - end);
  if (suffix.ends_with("iB")) {
    suffix.remove_suffix(2);
  } else if (suffix.ends_with("B")) {
    suffix.remove_suffix(1);
  }
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M") shift = 20;
  if (suffix == "G") shift = 30;
  if (error != std::errc() || end == text.data() || shift < 0 || number == 0 ||
      number > (uint64_t(1) << (62 - shift))) {
    UsageError("--memory-budget takes a size in bytes such as 65536, 64K, 64M or 2G, got '" + text +
               "'");
  }
  return size_t(number << shift);
}

RunOptions ParseOptions(std::span<const std::string_view> arguments) {
  RunOptions options;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= arguments.size()) UsageError(std::string(argument) + " needs a value");
      return std::string(arguments[++index]);
    };
    if (TakeInputOption(arguments, index, options.inputs, "run")) {
      continue;
    } else if (argument == "--output") {
      options.output = value();
    } else if (argument == "--repeat") {
      std::string text = value();
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), options.repeat);
      if (error != std::errc() || end != text.data() + text.size() || options.repeat < 0 ||
          options.repeat > 1'000'000) {
        UsageError("--repeat takes a count from 0 to 1000000, got '" + text + "'");
      }
    } else if (argument == "--warmup") {
      std::string text = value();
      auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), options.warmup_seconds);
      if (error != std::errc() || end != text.data() + text.size() ||
          !(options.warmup_seconds >= 0 && options.warmup_seconds <= 3600)) {
        UsageError("--warmup takes seconds from 0 to 3600, got '" + text + "'");
      }
    } else if (argument == "--profile") {
      options.profile = true;
    } else if (argument == "--trace") {
      options.trace = value();
    } else if (argument == "--device") {
      const std::string text = value();
      options.device = ParseDeviceId(text);
      if (!options.device) {
        UsageError("--device takes cpu, opencl[:N], cuda[:N] or xrt[:N], got '" + text + "'");
      }
    } else if (argument == "--memory-budget") {
      options.memory_budget = ParseByteSize(value());
    } else if (argument == "--stats") {
      options.stats = true;
    } else if (argument == "--byoc") {
      options.byoc = value();
    } else if (argument == "--xclbin") {
      if (!options.xclbin.empty())
        UsageError("--xclbin is given once: an XRT card holds one .xclbin at a time");
      options.xclbin = value();
    } else if (argument.starts_with("-") && argument != "-") {
      UsageError("unknown option '" + std::string(argument) + "'");
    } else if (options.path.empty()) {
      options.path = std::string(argument);
    } else {
      UsageError("expected one program file, got '" + options.path + "' and '" +
                 std::string(argument) + "'");
    }
  }
  if (options.path.empty()) UsageError("expected a program file, e.g. 'relay-vm run model.relay'");
  if (options.warmup_seconds > 0 && options.repeat == 0)
    UsageError("--warmup is for timed runs: give --repeat N too");
  return options;
}

// The tensors of `value`, a tensor or tuples of them nested to any depth,
// depth-first: ((a, b), c) gives a, b, c, as TVM's gradient results nest
// (result, (d_param1, ...)). `path` names the field for errors ("1.0": field
// 0 of field 1 of the result).
void CollectTensors(const Value& value, const std::string& path, const std::string& output,
                    std::vector<Ref<Tensor>>& tensors) {
  if (value && value->kind() == ObjectKind::kTensor) {
    tensors.push_back(Ref<Tensor>(static_cast<Tensor*>(value.get())));
    return;
  }
  if (!value || value->kind() != ObjectKind::kTuple) {
    throw Error(ErrorKind::kUsage,
                "--output " + output + ": " +
                    (path.empty() ? "the result" : "field " + path + " of the result") +
                    " is not a tensor or a tuple of tensors");
  }
  const auto& fields = static_cast<const Tuple*>(value.get())->fields();
  for (size_t index = 0; index < fields.size(); ++index)
    CollectTensors(fields[index], path + (path.empty() ? "" : ".") + std::to_string(index), output,
                   tensors);
}

// A tensor result goes to a .npy file. A tuple's tensors, nested tuples
// flattened depth-first, go to a .npz as out0, out1, ..., or by `names` (an
// imported model's output names) when there are as many.
void WriteOutput(const std::string& path, const Value& result,
                 const std::vector<std::string>& names) {
  if (result && result->kind() == ObjectKind::kTensor && path.ends_with(".npy")) {
    WriteNpy(path, *static_cast<const Tensor*>(result.get()));
    return;
  }
  if (result && result->kind() == ObjectKind::kTuple && path.ends_with(".npz")) {
    std::vector<Ref<Tensor>> tensors;
    CollectTensors(result, "", path, tensors);
    std::vector<NamedTensor> arrays;
    for (size_t index = 0; index < tensors.size(); ++index) {
      arrays.push_back(
          {names.size() == tensors.size() ? names[index] : "out" + std::to_string(index),
           tensors[index]});
    }
    WriteNpz(path, arrays);
    return;
  }
  throw Error(ErrorKind::kUsage,
              "--output " + path +
                  ": a tensor result is written to a .npy file and a tuple of tensors (nested "
                  "tuples too) to a .npz file; this result is neither for that name");
}

}  // namespace

int RunRunCommand(std::span<const std::string_view> arguments, std::ostream& out,
                  std::ostream& err) {
  RunOptions options = ParseOptions(arguments);
  std::optional<api::Program> program =
      api::LoadProgram(options.path, err, {.gradients = {}, .byoc = options.byoc});
  if (!program) return kExitFailure;
  const int32_t entry = program->executable->FindFunction(options.inputs.entry);
  if (entry < 0 || program->executable->functions[entry].captured_count != 0) {
    throw Error(ErrorKind::kUsage, options.path + " has no function @" + options.inputs.entry);
  }
  std::vector<Value> inputs =
      BindInputs(options.inputs, program->executable->functions[entry], program->input_aliases);

  if (!options.xclbin.empty()) {
    Device& card = GetDevice(DeviceId{DeviceKind::kXRT, 0});
    devices::ExternalKernelHost* host = devices::ExternalKernelHostOf(card);
    if (host == nullptr) throw Error(ErrorKind::kDevice, card.id().ToString() + " runs no kernels");
    host->LoadKernelFile(options.xclbin);
  }
  vm::VirtualMachine machine(program->executable);
  // --device, else the device the executable was compiled for.
  const std::optional<DeviceId> device =
      options.device ? options.device : program->executable->default_device;
  if (device && device->kind != DeviceKind::kCPU) {
    if (options.memory_budget) {
      UsageError("--memory-budget applies to runs on the CPU; this run is on " +
                 device->ToString());
    }
    machine.set_device(&GetDevice(*device));
  }
  machine.set_memory_budget(options.memory_budget);
  machine.set_measure_memory(options.stats);
  // Results come back to the host, which waits for the device's work.
  auto invoke = [&] { return vm::ValueOnHost(machine.Invoke(options.inputs.entry, inputs)); };
  std::optional<vm::Profiler> profiler;
  if (options.profile || !options.trace.empty()) {
    profiler.emplace(program->executable, /*record_trace=*/!options.trace.empty());
  }
  // The warm-up run before timed runs is not profiled: it compiles kernels.
  if (options.repeat == 0 && profiler) machine.set_profiler(&*profiler);
  Value result = invoke();
  if (options.repeat > 0) {
    // More warm-up, untimed, as benchmarks give their peers: the first runs
    // after start-up are slow for reasons of the machine (caches, clock
    // speeds, the scheduler spreading new threads over the CPUs).
    const auto warm_until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options.warmup_seconds);
    while (std::chrono::steady_clock::now() < warm_until) invoke();
    if (profiler) machine.set_profiler(&*profiler);
    std::vector<double> milliseconds;
    for (int64_t run = 0; run < options.repeat; ++run) {
      auto start = std::chrono::steady_clock::now();
      invoke();
      milliseconds.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(milliseconds.begin(), milliseconds.end());
    char line[160];
    std::snprintf(line, sizeof line, "relay-vm: %lld runs, median %.3f ms, min %.3f ms\n",
                  static_cast<long long>(options.repeat), milliseconds[milliseconds.size() / 2],
                  milliseconds.front());
    err << line;
  }
  out << FormatValue(result, program->executable->PrintOptions()) << "\n";
  if (options.stats) {
    const vm::MemoryStats& stats = machine.memory_stats();
    err << "peak memory: " << stats.peak_bytes << " bytes\n"
        << "evictions: " << stats.evictions << "\n"
        << "recomputations: " << stats.recomputations << "\n";
  }
  if (!options.output.empty()) WriteOutput(options.output, result, program->output_names);
  if (options.profile) profiler->FormatTable(out);
  if (!options.trace.empty()) profiler->WriteChromeTrace(options.trace);
  return kExitSuccess;
}

}  // namespace relay::tools
