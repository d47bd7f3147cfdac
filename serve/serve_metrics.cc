#include "serve/serve_metrics.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace relay::serve {

namespace {

std::string LabelValue(const std::string& text) {
  std::string escaped;
  for (char character : text) {
    if (character == '\\' || character == '"') escaped += '\\';
    if (character == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += character;
  }
  return escaped;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void ServeMetrics::RecordRequest(int status, double seconds) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (status >= 0 && static_cast<size_t>(status) < responses_by_status_.size())
    responses_by_status_[status].fetch_add(1, std::memory_order_relaxed);
  size_t bucket = static_cast<size_t>(
      std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), seconds) -
      kLatencyBuckets.begin());
  latency_counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  latency_sum_nanoseconds_.fetch_add(static_cast<uint64_t>(std::max(0.0, seconds) * 1e9),
                                     std::memory_order_relaxed);
}

void ServeMetrics::RecordRun(size_t requests) {
  runs_.fetch_add(1, std::memory_order_relaxed);
  if (requests > 1) {
    batched_runs_.fetch_add(1, std::memory_order_relaxed);
    batched_requests_.fetch_add(requests, std::memory_order_relaxed);
  }
}

std::string ServeMetrics::Render(const std::string& model, size_t queue_length, size_t in_flight,
                                 const HttpStats& connections) const {
  const std::string label = "model=\"" + LabelValue(model) + "\"";
  auto load = [](const std::atomic<uint64_t>& counter) {
    return std::to_string(counter.load(std::memory_order_relaxed));
  };
  std::string out;
  Family(out, "relay_serve_requests_total", "counter", "Inference requests answered.");
  out += "relay_serve_requests_total{" + label + "} " + load(requests_) + "\n";
  Family(out, "relay_serve_request_failures_total", "counter",
         "Inference requests answered with an error, by HTTP status.");
  for (size_t status = 400; status < responses_by_status_.size(); ++status) {
    if (responses_by_status_[status].load(std::memory_order_relaxed) == 0) continue;
    out += "relay_serve_request_failures_total{" + label + ",code=\"" + std::to_string(status) +
           "\"} " + load(responses_by_status_[status]) + "\n";
  }
  Family(out, "relay_serve_request_duration_seconds", "histogram",
         "Time from an inference request's arrival to its answer.");
  uint64_t cumulative = 0;
  for (size_t bucket = 0; bucket <= kLatencyBuckets.size(); ++bucket) {
    cumulative += latency_counts_[bucket].load(std::memory_order_relaxed);
    std::string bound = bucket < kLatencyBuckets.size() ? Number(kLatencyBuckets[bucket]) : "+Inf";
    out += "relay_serve_request_duration_seconds_bucket{" + label + ",le=\"" + bound + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out +=
      "relay_serve_request_duration_seconds_sum{" + label + "} " +
      Number(static_cast<double>(latency_sum_nanoseconds_.load(std::memory_order_relaxed)) * 1e-9) +
      "\n";
  out += "relay_serve_request_duration_seconds_count{" + label + "} " + std::to_string(cumulative) +
         "\n";
  Family(out, "relay_serve_queue_length", "gauge",
         "Inference requests waiting for a worker to take them.");
  out += "relay_serve_queue_length{" + label + "} " + std::to_string(queue_length) + "\n";
  Family(out, "relay_serve_inflight_requests", "gauge",
         "Inference requests received and not yet answered.");
  out += "relay_serve_inflight_requests{" + label + "} " + std::to_string(in_flight) + "\n";
  Family(out, "relay_serve_model_runs_total", "counter", "Runs of the model.");
  out += "relay_serve_model_runs_total{" + label + "} " + load(runs_) + "\n";
  Family(out, "relay_serve_batched_runs_total", "counter",
         "Runs of the model over several requests concatenated (dynamic batching).");
  out += "relay_serve_batched_runs_total{" + label + "} " + load(batched_runs_) + "\n";
  Family(out, "relay_serve_batched_requests_total", "counter",
         "Requests answered by a batched run.");
  out += "relay_serve_batched_requests_total{" + label + "} " + load(batched_requests_) + "\n";

  auto metric = [&](const char* name, const char* type, const char* help,
                    const std::atomic<uint64_t>& value) {
    Family(out, name, type, help);
    out += std::string(name) + "{" + label + "} " + load(value) + "\n";
  };
  metric("relay_serve_open_connections", "gauge", "Client connections open.",
         connections.open_connections);
  metric("relay_serve_connections_total", "counter", "Client connections accepted.",
         connections.accepted);
  metric("relay_serve_connections_refused_total", "counter",
         "Connections refused (503) at --max-connections, no slow connection to close instead.",
         connections.refused);
  metric("relay_serve_connections_evicted_total", "counter",
         "Connections closed before delivering a request, to make room for a new one.",
         connections.evicted);
  Family(out, "relay_serve_connection_timeouts_total", "counter",
         "Connections cut by a deadline, by phase: header (--header-timeout), body "
         "(--body-timeout), idle (--idle-timeout), write (--write-timeout).");
  const std::pair<const char*, const std::atomic<uint64_t>*> phases[] = {
      {"header", &connections.header_timeouts},
      {"body", &connections.body_timeouts},
      {"idle", &connections.idle_timeouts},
      {"write", &connections.write_timeouts}};
  for (const auto& [phase, count] : phases) {
    out += "relay_serve_connection_timeouts_total{" + label + ",phase=\"" + phase + "\"} " +
           load(*count) + "\n";
  }
  metric("relay_serve_malformed_requests_total", "counter",
         "Requests refused for their framing before reaching a handler (400, 413, 431, 501).",
         connections.malformed);
  metric("relay_serve_inflight_bytes", "gauge",
         "Request body bytes held by requests being read or answered.", connections.inflight_bytes);
  metric("relay_serve_inflight_bytes_refusals_total", "counter",
         "Requests refused (503) because their body would pass --max-inflight-bytes.",
         connections.inflight_full);
  return out;
}

}  // namespace relay::serve
