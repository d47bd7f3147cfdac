// The server's counters, exposed at GET /metrics in Prometheus's text
// format: inference requests, failures by HTTP status, a latency histogram,
// the queue's length, what dynamic batching did, and what the connections
// did (the HTTP layer's HttpStats: open, refused, cut by a deadline).
//
// Thread-safety: Record* may be called from any thread at once (atomics);
// Render reads a consistent-enough snapshot (each counter exact, the set
// not taken at one instant).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "serve/http_server.h"

namespace relay::serve {

class ServeMetrics {
 public:
  // The histogram's upper bounds, in seconds (and +Inf).
  static constexpr std::array<double, 16> kLatencyBuckets = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};

  // One infer request answered with `status` after `seconds`.
  void RecordRequest(int status, double seconds);
  // One run of the model over `requests` requests concatenated (1: alone).
  void RecordRun(size_t requests);

  std::string Render(const std::string& model, size_t queue_length, size_t in_flight,
                     const HttpStats& connections) const;

 private:
  std::atomic<uint64_t> requests_{0};
  std::array<std::atomic<uint64_t>, 600> responses_by_status_{};
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> latency_counts_{};
  std::atomic<uint64_t> latency_sum_nanoseconds_{0};
  std::atomic<uint64_t> runs_{0};
  std::atomic<uint64_t> batched_runs_{0};
  std::atomic<uint64_t> batched_requests_{0};
};

}  // namespace relay::serve
