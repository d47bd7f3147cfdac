// `relay-vm serve`: one model behind the Open Inference Protocol's (KServe
// v2, as Triton speaks it) REST API, over cpp-httplib:
//
//   GET  /v2/health/live, /v2/health/ready, /v2 (server metadata)
//   GET  /v2/models/NAME[/versions/1]         inputs and outputs
//   GET  /v2/models/NAME[/versions/1]/ready
//   POST /v2/models/NAME[/versions/1]/infer   inference_protocol.h's bodies
//   GET  /metrics                             Prometheus text (serve_metrics.h)
//
// Connections are served by a pool of HTTP threads, which read a request,
// parse it, hand it to the inference workers (inference_workers.h) and
// write the answer; a slow client holds an HTTP thread, never a worker.
// Every failure is answered with a JSON body {"error": "..."}: 400 for a
// bad request, 404 for an unknown model or endpoint, 413 for a body over
// the limit, 500 for a model that fails at run time, and the server goes on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "relay/runtime.h"
#include "serve/inference_workers.h"
#include "serve/model_signature.h"
#include "serve/serve_metrics.h"

namespace relay::serve {

struct ServerOptions {
  std::string model_name = "model";
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (Bind returns it)
  WorkerOptions workers;
  size_t max_body_bytes = size_t{64} << 20;
  // Connections served at once (an HTTP thread each); more wait to be.
  size_t connection_threads = 128;
};

class ModelServer {
 public:
  // Describes the model and starts its workers. Throws relay::Error
  // (kUsage) for a model the protocol cannot carry or bad options.
  ModelServer(const Executable& executable, const ServerOptions& options);
  ~ModelServer();

  // Binds the listening socket; returns its port. Throws relay::Error
  // (kUsage) when the address cannot be bound.
  int Bind();
  // Answers requests until Stop, then finishes every request received
  // (in flight, queued or waiting in a batch), stops the workers and
  // returns. Call once, after Bind.
  void Serve();
  // Stops accepting connections; Serve then returns once the requests
  // already received are answered. Any thread, any time, more than once.
  void Stop();

  const ModelSignature& signature() const { return signature_; }

 private:
  class HttpServer;
  void AddRoutes();
  std::string BodyTooLarge() const;

  const ServerOptions options_;
  const ModelSignature signature_;
  ServeMetrics metrics_;
  InferenceWorkers workers_;
  std::unique_ptr<HttpServer> http_;
  std::atomic<size_t> in_flight_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_requested_ = false;
};

}  // namespace relay::serve
