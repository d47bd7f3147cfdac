// The workers that run a served model: --workers threads, each with its own
// VirtualMachine over the one shared Executable, taking requests from one
// queue. Each request runs as a fiber on its worker (fiber_scheduler.h), so
// that with dynamic batching a request waiting for others to join its batch
// suspends and leaves the thread free to take them, instead of blocking it.
//
// Dynamic batching (max_batch > 0): requests whose inputs share their
// leading extent ("rows") and agree beyond it are concatenated along it, up
// to max_batch rows, run once and the outputs split back by rows. A batch
// runs when full or batch_timeout after its first request arrived. One
// worker at a time collects a batch, so concurrent requests meet in it
// rather than spreading over idle workers. If the batched run fails (one
// request's data, say) or its outputs do not keep the rows apart, each
// request runs alone, so a request's answer never depends on its company.
//
// Thread-safety: Submit, queue_length and Shutdown may be called from any
// thread at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "relay/runtime.h"
#include "serve/request_batching.h"
#include "serve/serve_metrics.h"

namespace relay::serve {

struct WorkerOptions {
  size_t workers = 1;
  int64_t max_batch = 0;  // rows; 0: no dynamic batching
  std::chrono::microseconds batch_timeout{500};
  // Each fiber's stack: a model's run, kernels included, happens on it.
  size_t fiber_stack_bytes = size_t{8} << 20;
};

class InferenceWorkers {
 public:
  // Starts the workers, each with a VM over `executable` on the cpu.
  InferenceWorkers(const Executable& executable, const WorkerOptions& options,
                   ServeMetrics& metrics);
  // Shutdown, if not done yet.
  ~InferenceWorkers();

  // What a request's run ends with: the outputs (one per signature output),
  // or the run's relay::Error.
  using Done = std::function<void(Tensors outputs, std::exception_ptr error)>;

  // Queues a run of @main on `inputs` (one per parameter, in order, checked
  // against the signature) and returns; `done` is called once it has run,
  // on the worker's thread (it must not throw, and should not block: the
  // worker's next request waits for it). Throws kUsage once Shutdown has
  // begun, without calling `done`.
  void Submit(Tensors inputs, Done done);

  // Requests queued and not yet taken by a worker.
  size_t queue_length() const;

  // Stops taking new requests, runs every one queued or waiting in a
  // batch, and joins the workers.
  void Shutdown();

 private:
  class Worker;
  struct Job;

  // Whether worker `id` may take queued requests now: any may without
  // batching; with it, only the one collecting a batch, or any while none is.
  bool MayTake(int id) const { return collecting_ == -1 || collecting_ == id; }

  const WorkerOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable arrivals_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<size_t> queued_{0};             // queue_.size(), read without the lock
  std::atomic<bool> worker_spinning_{false};  // an idle worker spins for requests
  int collecting_ = -1;                       // the worker collecting a batch, or -1
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace relay::serve
