// `relay-vm serve`: one model behind the Open Inference Protocol's (KServe
// v2, as Triton speaks it) REST API, over the event-driven HTTP layer of
// http_server.h:
//
//   GET  /v2/health/live, /v2/health/ready, /v2 (server metadata)
//   GET  /v2/models/NAME[/versions/1]         inputs and outputs
//   GET  /v2/models/NAME[/versions/1]/ready
//   POST /v2/models/NAME[/versions/1]/infer   inference_protocol.h's bodies
//   GET  /metrics                             Prometheus text (serve_metrics.h)
//
// The HTTP loops read a request and route it; an inference request's body
// is parsed there when small (larger ones on a thread of their own, so
// that a big body never holds up the loop's other connections), its
// tensors handed to the inference workers (inference_workers.h), and the
// answer is encoded and written by the worker that ran it. Every failure is
// answered with a JSON body {"error": "..."}: 400 for a bad request, 404
// for an unknown model or endpoint, 408 for a client too slow, 413 for a
// body over the limit, 503 for a server at its limits, 500 for a model that
// fails at run time, and the server goes on.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "relay/runtime.h"
#include "serve/http_server.h"
#include "serve/inference_workers.h"
#include "serve/model_signature.h"
#include "serve/serve_metrics.h"

namespace relay::serve {

struct ServerOptions {
  std::string model_name = "model";
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (Bind returns it)
  WorkerOptions workers;
  // Connections, deadlines, body sizes and bytes in flight.
  HttpLimits http;
  // HTTP event loops (threads); 0: one per four cores, at least one.
  size_t http_threads = 0;
  // How long Serve, once stopped, lets the requests received finish.
  std::chrono::milliseconds shutdown_timeout{5'000};
};

class ModelServer {
 public:
  // Describes the model and starts its workers. Throws relay::Error
  // (kUsage) for a model the protocol cannot carry or bad options.
  ModelServer(const Executable& executable, const ServerOptions& options);
  // Waits for any run still going (after a Serve that timed out).
  ~ModelServer();

  // Binds the listening socket; returns its port. Throws relay::Error
  // (kUsage) when the address cannot be bound (in use, not this machine's).
  int Bind();
  // Answers requests until Stop; then stops accepting, closes connections
  // that have not delivered a complete request, and lets the requests
  // received (being parsed, queued, waiting in a batch or running) finish
  // and be answered, for at most shutdown_timeout. Returns how many
  // inference requests were still unanswered then (0: every one was): their
  // runs go on, and the destructor waits for them. Call once, after Bind.
  size_t Serve();
  // Stops the server; Serve then returns as above. Any thread, any time,
  // more than once.
  void Stop();

  const ModelSignature& signature() const { return signature_; }

 private:
  struct PendingInference;
  void Handle(HttpRequest request, HttpResponder responder);
  void Infer(HttpRequest request, HttpResponder responder);
  // Parses the request and hands its tensors to the workers; answers it
  // itself when that fails.
  void ParseAndSubmit(std::shared_ptr<PendingInference> pending, HttpRequest request);
  void Finish(PendingInference& pending, HttpResponse response);

  const ServerOptions options_;
  const ModelSignature signature_;
  ServeMetrics metrics_;
  // Destroyed after the workers, whose answers write to its connections.
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<boost::asio::thread_pool> parsers_;  // for bodies too big to parse on a loop
  InferenceWorkers workers_;
  std::atomic<size_t> in_flight_{0};  // inference requests received, not answered
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_requested_ = false;
};

}  // namespace relay::serve
