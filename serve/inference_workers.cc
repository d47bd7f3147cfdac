#include "serve/inference_workers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>

#include "relay/error.h"
#include "serve/fiber_scheduler.h"

namespace relay::serve {

namespace {

// How long an idle worker spins (yielding) for the next request before it
// sleeps. Waking a sleeping thread costs tens of microseconds on a virtual
// machine (a condition variable's round trip took 55 us on the 2-core one
// bench/serve/ ran on), which would otherwise be most of a small model's
// overhead.
constexpr auto kSpinBeforeSleeping = std::chrono::microseconds(300);

template <typename Ready>
bool SpinUntil(const Ready& ready) {
  auto until = std::chrono::steady_clock::now() + kSpinBeforeSleeping;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

struct InferenceWorkers::Job {
  Tensors inputs;
  std::optional<int64_t> rows;  // set when the request may join a batch
  Done done;

  // Hands the answer over; the inputs go first, so that their memory is
  // free before the caller writes its answer.
  void Finish(Tensors outputs, std::exception_ptr error) {
    inputs.clear();
    Done call = std::move(done);
    call(std::move(outputs), std::move(error));
  }
};

class InferenceWorkers::Worker {
 public:
  Worker(InferenceWorkers& pool, int id, const Executable& executable, ServeMetrics& metrics)
      : pool_(pool),
        id_(id),
        machine_(executable),
        metrics_(metrics),
        scheduler_(pool.options_.fiber_stack_bytes) {}

  // The thread's loop: take requests as fibers, run the fibers, wait.
  void Run();

 private:
  // Requests collected into one run, in arrival order; owned by the fiber
  // of the first (its leader), which runs them.
  struct Batch {
    std::vector<std::shared_ptr<Job>> jobs;
    int64_t rows = 0;
    FiberScheduler::Fiber* leader = nullptr;
  };

  bool batching() const { return pool_.options_.max_batch > 0; }

  // Lets another worker collect the next batch once this one has no open
  // batch with room left. Called with pool_.mutex_ held.
  void StopCollectingIfFull();
  void Serve(std::shared_ptr<Job> job);  // a request's fiber
  void JoinBatch(std::shared_ptr<Job> job);
  void RunBatch(Batch& batch);
  void RunAlone(Job& job);
  Tensors Invoke(const Tensors& inputs);

  InferenceWorkers& pool_;
  const int id_;
  VirtualMachine machine_;
  ServeMetrics& metrics_;
  FiberScheduler scheduler_;
  std::vector<Batch*> open_batches_;  // collecting; each a leader's
  // Rows taken from the queue and not yet run (a request that cannot join
  // a batch counts as a full one).
  int64_t taken_rows_ = 0;
};

void InferenceWorkers::Worker::Run() {
  std::unique_lock lock(pool_.mutex_);
  auto may_take = [&] {
    if (pool_.queue_.empty() || !pool_.MayTake(id_)) return false;
    if (!batching()) return scheduler_.empty();
    const Job& next = *pool_.queue_.front();
    return taken_rows_ == 0 || (next.rows && taken_rows_ + *next.rows <= pool_.options_.max_batch);
  };
  while (true) {
    while (may_take()) {
      std::shared_ptr<Job> job = std::move(pool_.queue_.front());
      pool_.queue_.pop_front();
      pool_.queued_.store(pool_.queue_.size(), std::memory_order_relaxed);
      if (batching()) {
        taken_rows_ += job->rows.value_or(pool_.options_.max_batch);
        pool_.collecting_ = id_;
      }
      scheduler_.Spawn([this, job = std::move(job)]() mutable { Serve(std::move(job)); });
    }
    std::optional<FiberScheduler::Clock::time_point> deadline = scheduler_.next_deadline();
    if (scheduler_.has_ready() || (deadline && *deadline <= FiberScheduler::Clock::now())) {
      lock.unlock();
      scheduler_.RunReady();
      lock.lock();
      StopCollectingIfFull();
      continue;
    }
    if (pool_.stopping_ && pool_.queue_.empty() && scheduler_.empty()) return;
    auto woken = [&] {
      return may_take() || (pool_.stopping_ && pool_.queue_.empty() && scheduler_.empty());
    };
    if (deadline) {
      pool_.arrivals_.wait_until(lock, *deadline, woken);
      continue;
    }
    // Idle: without batching, spin a while for the next request before
    // sleeping. (With batching, a request waits for its batch far longer
    // than a wake-up takes, and a worker may have to leave queued requests
    // to the one collecting.)
    // One worker spins at a time, so that spinners do not take the cores
    // from the workers running requests.
    bool arrived = false;
    if (!batching() && !pool_.worker_spinning_.exchange(true)) {
      lock.unlock();
      arrived = SpinUntil([&] { return pool_.queued_.load(std::memory_order_relaxed) > 0; });
      // Cleared before the queue is looked at under the lock, so that a
      // request queued meanwhile is seen here or notified (Run).
      pool_.worker_spinning_.store(false);
      lock.lock();
    }
    if (!arrived) pool_.arrivals_.wait(lock, woken);
  }
}

void InferenceWorkers::Worker::StopCollectingIfFull() {
  // Still collecting while a batch is open with room in it; else the next
  // batch is another worker's to collect.
  if (pool_.collecting_ == id_ &&
      (open_batches_.empty() || taken_rows_ >= pool_.options_.max_batch)) {
    pool_.collecting_ = -1;
    pool_.arrivals_.notify_all();
  }
}

void InferenceWorkers::Worker::Serve(std::shared_ptr<Job> job) {
  if (!batching() || !job->rows) {
    taken_rows_ -= batching() ? pool_.options_.max_batch : 0;
    RunAlone(*job);
    return;
  }
  JoinBatch(std::move(job));
}

void InferenceWorkers::Worker::JoinBatch(std::shared_ptr<Job> job) {
  const int64_t max_batch = pool_.options_.max_batch;
  auto fits = [&](const Batch* batch) {
    return SameTrailingShapes(batch->jobs.front()->inputs, job->inputs);
  };
  auto found = std::find_if(open_batches_.begin(), open_batches_.end(), fits);
  if (found != open_batches_.end() && (*found)->rows + *job->rows > max_batch) {
    // No room: the open batch runs now (its leader wakes) and this request
    // starts the next.
    scheduler_.Wake((*found)->leader);
    open_batches_.erase(found);
    found = open_batches_.end();
  }
  if (found != open_batches_.end()) {
    Batch& batch = **found;
    batch.rows += *job->rows;
    batch.jobs.push_back(std::move(job));
    if (batch.rows >= max_batch) {
      open_batches_.erase(found);
      scheduler_.Wake(batch.leader);
    }
    return;
  }
  // This request leads a new batch: it waits for others until the batch
  // is full or the timeout passes, then runs them all.
  Batch batch;
  batch.leader = scheduler_.current();
  batch.rows = *job->rows;
  batch.jobs.push_back(std::move(job));
  if (batch.rows < max_batch) {
    open_batches_.push_back(&batch);
    scheduler_.Suspend(FiberScheduler::Clock::now() + pool_.options_.batch_timeout);
    std::erase(open_batches_, &batch);
  }
  RunBatch(batch);
}

void InferenceWorkers::Worker::RunBatch(Batch& batch) {
  taken_rows_ -= batch.rows;
  {
    // While this batch runs, another worker collects the next one.
    std::lock_guard lock(pool_.mutex_);
    StopCollectingIfFull();
  }
  if (batch.jobs.size() == 1) {
    RunAlone(*batch.jobs.front());
    return;
  }
  std::vector<const Tensors*> inputs;
  std::vector<int64_t> rows;
  for (const std::shared_ptr<Job>& job : batch.jobs) {
    inputs.push_back(&job->inputs);
    rows.push_back(*job->rows);
  }
  std::optional<std::vector<Tensors>> split;
  try {
    split = SplitRows(Invoke(ConcatenateRows(inputs)), rows);
  } catch (const std::exception&) {
    // Answered below by running each request alone, which gives each its
    // own error (or result).
  }
  if (!split) {
    for (const std::shared_ptr<Job>& job : batch.jobs) RunAlone(*job);
    return;
  }
  metrics_.RecordRun(batch.jobs.size());
  for (size_t index = 0; index < batch.jobs.size(); ++index)
    batch.jobs[index]->Finish(std::move((*split)[index]), nullptr);
}

void InferenceWorkers::Worker::RunAlone(Job& job) {
  Tensors outputs;
  std::exception_ptr failure;
  try {
    outputs = Invoke(job.inputs);
  } catch (const Error&) {
    failure = std::current_exception();
  } catch (const std::exception& error) {
    failure = std::make_exception_ptr(Error(ErrorKind::kInternal, error.what()));
  }
  metrics_.RecordRun(1);
  job.Finish(std::move(outputs), std::move(failure));
}

Tensors InferenceWorkers::Worker::Invoke(const Tensors& inputs) {
  std::vector<Value> arguments(inputs.begin(), inputs.end());
  Value result = machine_.Invoke("main", std::span<const Value>(arguments));
  Tensors outputs;
  auto take = [&](const Value& value) {
    if (value->kind() != ObjectKind::kTensor)
      throw Error(ErrorKind::kInternal, "@main returned a value that is not a tensor");
    outputs.emplace_back(static_cast<Tensor*>(value.get()));
  };
  if (result->kind() == ObjectKind::kTuple) {
    for (const Value& field : static_cast<const Tuple&>(*result).fields()) take(field);
  } else {
    take(result);
  }
  return outputs;
}

InferenceWorkers::InferenceWorkers(const Executable& executable, const WorkerOptions& options,
                                   ServeMetrics& metrics)
    : options_(options) {
  if (options.workers == 0) throw Error(ErrorKind::kUsage, "a server needs at least one worker");
  for (size_t id = 0; id < options.workers; ++id)
    workers_.push_back(std::make_unique<Worker>(*this, static_cast<int>(id), executable, metrics));
  for (const std::unique_ptr<Worker>& worker : workers_)
    threads_.emplace_back([worker = worker.get()] { worker->Run(); });
}

InferenceWorkers::~InferenceWorkers() {
  Shutdown();
}

void InferenceWorkers::Submit(Tensors inputs, Done done) {
  auto job = std::make_shared<Job>();
  job->inputs = std::move(inputs);
  job->done = std::move(done);
  if (options_.max_batch > 0) job->rows = LeadingRows(job->inputs);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw Error(ErrorKind::kUsage, "the server is shutting down");
    queue_.push_back(std::move(job));
    queued_.store(queue_.size(), std::memory_order_relaxed);
  }
  // With batching, the worker collecting a batch must hear of the arrival,
  // whichever others wait too.
  if (options_.max_batch > 0) {
    arrivals_.notify_all();
  } else if (!worker_spinning_.load()) {
    // (A spinning worker will see the request without being woken.)
    arrivals_.notify_one();
  }
}

size_t InferenceWorkers::queue_length() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void InferenceWorkers::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  arrivals_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace relay::serve
