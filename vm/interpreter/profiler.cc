#include "vm/interpreter/profiler.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "kernels/compute/kernel_cost.h"
#include "relay/error.h"
#include "vm/core/zip_archive.h"

namespace relay::vm {

namespace {

// "1x512" for a shape, "scalar" for a 0-d tensor.
std::string CompactShape(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += 'x';
    text += std::to_string(shape[axis]);
  }
  return text;
}

// `text` as a JSON string literal.
std::string JsonString(std::string_view text) {
  std::string quoted = "\"";
  for (char character : text) {
    switch (character) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(character) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", character);
          quoted += escaped;
        } else {
          quoted += character;
        }
    }
  }
  return quoted + "\"";
}

// Microseconds with the nanoseconds kept, as the trace format counts time.
std::string Microseconds(int64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", double(nanoseconds) / 1e3);
  return text;
}

}  // namespace

Profiler::Profiler(std::shared_ptr<const Executable> executable, bool record_trace)
    : executable_(std::move(executable)), record_trace_(record_trace), origin_(Clock::now()) {
  RELAY_CHECK(executable_ != nullptr, "a profiler needs the executable it profiles");
  rows_by_kernel_.resize(executable_->kernels.size());
}

int64_t Profiler::Since(Clock::time_point time) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time - origin_).count();
}

void Profiler::BeginRun() {
  run_start_ = Clock::now();
}

void Profiler::EndRun() {
  const Clock::time_point end = Clock::now();
  run_nanoseconds_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - run_start_).count();
  ++runs_;
  // A run that failed leaves its calls open: close them where it ended.
  while (!open_functions_.empty()) LeaveFunction();
}

size_t Profiler::RowFor(int32_t kernel, std::span<const Ref<Tensor>> inputs) {
  const DeviceId device = inputs.empty() ? DeviceId{} : inputs[0]->device_id();
  for (size_t row_index : rows_by_kernel_[kernel]) {
    const Row& row = rows_[row_index];
    bool same = row.shapes.size() == inputs.size() && row.device == device;
    for (size_t index = 0; same && index < inputs.size(); ++index) {
      same = row.dtypes[index] == inputs[index]->dtype() &&
             row.shapes[index] == inputs[index]->shape();
    }
    if (same) return row_index;
  }
  const KernelCall& call = executable_->kernels[kernel];
  Row row;
  row.kernel = kernel;
  std::vector<kernels::ValueType> types;
  for (const Ref<Tensor>& input : inputs) {
    row.shapes.push_back(input->shape());
    row.dtypes.push_back(input->dtype());
    if (!row.inputs.empty()) row.inputs += ", ";
    row.inputs += CompactShape(input->shape());
    row.bytes += double(input->byte_size());
    types.push_back(kernels::ValueType::Tensor(input->shape(), input->dtype()));
  }
  std::vector<kernels::FusedOperator> operators = call.fused;
  if (call.external) {
    // An external codegen's function (dnnl:dnnl_0): rated by the
    // contractions of its graph, like a fused group.
    row.name = call.op;
    operators = call.external->graph.operators;
  } else if (operators.empty()) {
    row.name = call.op;
    if (!call.tuple_input) {
      kernels::FusedOperator single{call.op, call.attrs, {}};
      for (size_t index = 0; index < inputs.size(); ++index)
        single.inputs.push_back(int32_t(index));
      operators.push_back(std::move(single));
    }
  } else {
    for (const kernels::FusedOperator& fused : call.fused) {
      if (!row.name.empty()) row.name += '+';
      row.name += fused.op;
    }
  }
  row.device = device;
  if (device.kind != DeviceKind::kCPU) row.name += "@" + device.ToString();
  row.flops = kernels::ContractionFlops(operators, types);
  rows_by_kernel_[kernel].push_back(rows_.size());
  rows_.push_back(std::move(row));
  return rows_.size() - 1;
}

void Profiler::RecordKernel(int32_t kernel, std::span<const Ref<Tensor>> inputs,
                            int64_t output_bytes, Clock::time_point start, Clock::time_point end) {
  const size_t row_index = RowFor(kernel, inputs);
  Row& row = rows_[row_index];
  if (row.calls == 0) row.bytes += double(output_bytes);
  const int64_t nanoseconds =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  ++row.calls;
  row.nanoseconds += nanoseconds;
  if (record_trace_) {
    events_.push_back({Event::Kind::kKernel, int32_t(row_index), Since(start), nanoseconds});
  }
}

void Profiler::RecordPreparation(Clock::time_point start, Clock::time_point end) {
  preparation_nanoseconds_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
}

void Profiler::EnterFunction(int32_t function) {
  if (!record_trace_) return;
  open_functions_.push_back(function);
  events_.push_back({Event::Kind::kEnter, function, Since(Clock::now()), 0});
}

void Profiler::LeaveFunction() {
  if (!record_trace_ || open_functions_.empty()) return;
  events_.push_back({Event::Kind::kLeave, open_functions_.back(), Since(Clock::now()), 0});
  open_functions_.pop_back();
}

int64_t Profiler::kernel_nanoseconds() const {
  int64_t total = 0;
  for (const Row& row : rows_) total += row.nanoseconds;
  return total;
}

uint64_t Profiler::kernel_launches() const {
  uint64_t total = 0;
  for (const Row& row : rows_) total += row.calls;
  return total;
}

void Profiler::FormatTable(std::ostream& out) const {
  std::vector<size_t> order(rows_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Ties keep first-seen order. (Not std::stable_sort: libstdc++ 12's
  // trips clang 19's deprecation warnings.)
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rows_[a].nanoseconds != rows_[b].nanoseconds)
      return rows_[a].nanoseconds > rows_[b].nanoseconds;
    return a < b;
  });
  size_t name_width = std::string_view("kernel").size();
  size_t inputs_width = std::string_view("inputs").size();
  for (const Row& row : rows_) {
    name_width = std::max(name_width, row.name.size());
    inputs_width = std::max(inputs_width, row.inputs.size());
  }
  const double run_ms = double(run_nanoseconds_) / 1e6;
  auto percent = [&](double ms) { return run_ms > 0 ? 100.0 * ms / run_ms : 0.0; };
  char line[256];
  auto print_line = [&](const std::string& name, const std::string& inputs,
                        const std::string& calls, double ms, const std::string& tail) {
    out << name << std::string(name_width - std::min(name_width, name.size()) + 2, ' ') << inputs
        << std::string(inputs_width - std::min(inputs_width, inputs.size()) + 2, ' ');
    std::snprintf(line, sizeof line, "%9s %11.3f %6.1f%%", calls.c_str(), ms, percent(ms));
    out << line << tail << "\n";
  };

  std::snprintf(line, sizeof line, "relay-vm profile: %llu run%s, %.3f ms\n",
                static_cast<unsigned long long>(runs_), runs_ == 1 ? "" : "s", run_ms);
  out << line;
  out << "kernel" << std::string(name_width - 6 + 2, ' ') << "inputs"
      << std::string(inputs_width - 6 + 2, ' ')
      << "    calls    total ms       %    mean us  rate\n";
  for (size_t row_index : order) {
    const Row& row = rows_[row_index];
    const double ms = double(row.nanoseconds) / 1e6;
    const double seconds = double(row.nanoseconds) / 1e9;
    std::string rate;
    if (seconds > 0 && row.flops > 0) {
      std::snprintf(line, sizeof line, "%8.1f GFLOP/s",
                    row.flops * double(row.calls) / seconds / 1e9);
      rate = line;
    } else if (seconds > 0) {
      std::snprintf(line, sizeof line, "%8.2f GB/s", row.bytes * double(row.calls) / seconds / 1e9);
      rate = line;
    }
    std::snprintf(line, sizeof line, " %10.2f  %s",
                  1e3 * ms / double(std::max<uint64_t>(row.calls, 1)), rate.c_str());
    print_line(row.name, row.inputs, std::to_string(row.calls), ms, line);
  }
  const double kernel_ms = double(kernel_nanoseconds()) / 1e6;
  const double preparation_ms = double(preparation_nanoseconds_) / 1e6;
  print_line("kernels", "", std::to_string(kernel_launches()), kernel_ms, "");
  print_line("kernel preparation", "(type relations, JIT)", "", preparation_ms, "");
  print_line("VM outside kernels", "", "", std::max(0.0, run_ms - kernel_ms - preparation_ms), "");
}

void Profiler::WriteChromeTrace(const std::string& path) const {
  if (!record_trace_) {
    throw Error(ErrorKind::kUsage, "this profiler was not asked to record a trace");
  }
  std::string json = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  json +=
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"relay-vm "
      "VM\"}}";
  for (const Event& event : events_) {
    json += ",\n{";
    if (event.kind == Event::Kind::kKernel) {
      const Row& row = rows_[event.index];
      json += "\"name\":" + JsonString(row.name) +
              ",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":" + Microseconds(event.start) +
              ",\"dur\":" + Microseconds(event.duration) +
              ",\"pid\":1,\"tid\":1,\"args\":{\"inputs\":" + JsonString(row.inputs) + "}";
    } else {
      json += "\"name\":" + JsonString(executable_->functions[event.index].name) +
              ",\"cat\":\"function\",\"ph\":\"" + (event.kind == Event::Kind::kEnter ? "B" : "E") +
              "\",\"ts\":" + Microseconds(event.start) + ",\"pid\":1,\"tid\":1";
    }
    json += "}";
  }
  json += "\n]}\n";
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(json.data()), json.size());
  detail::WriteFileAtomically(path, std::span<const std::span<const uint8_t>>(&bytes, 1));
}

}  // namespace relay::vm
