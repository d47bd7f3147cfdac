// Cooperative fibers on one thread (Boost.Context): a fiber that has to
// wait, for a batch to fill, say, suspends and gives the thread to the
// others instead of blocking it. Each inference worker runs one scheduler.
//
// Thread-safety: a scheduler and its fibers belong to the thread that runs
// them; nothing here may be called from another thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace relay::serve {

class FiberScheduler {
 public:
  using Clock = std::chrono::steady_clock;
  class Fiber;
  class StackPool;

  // Fibers get stacks of `stack_bytes`, with a guard page below, reused
  // from one fiber to the next.
  explicit FiberScheduler(size_t stack_bytes);
  // Every fiber must have finished.
  ~FiberScheduler();
  FiberScheduler(const FiberScheduler&) = delete;
  FiberScheduler& operator=(const FiberScheduler&) = delete;

  // Makes `body` a fiber, ready to run at the next RunReady. `body` must
  // not throw.
  void Spawn(std::function<void()> body);

  // Runs ready fibers, and those whose deadline has passed, each until it
  // finishes or suspends, until none is ready.
  void RunReady();

  // Inside a fiber: suspends it until Wake, or until `deadline` if given.
  void Suspend(std::optional<Clock::time_point> deadline = std::nullopt);
  // The fiber running now (inside a fiber only).
  Fiber* current() const { return current_; }
  // Makes a suspended fiber ready; no effect on one that is not suspended.
  void Wake(Fiber* fiber);

  bool empty() const { return fibers_.empty(); }
  bool has_ready() const { return !ready_.empty(); }
  // The earliest deadline of a suspended fiber, if any has one.
  std::optional<Clock::time_point> next_deadline() const;

 private:
  std::unique_ptr<StackPool> stacks_;
  std::vector<std::unique_ptr<Fiber>> fibers_;  // every unfinished fiber
  std::deque<Fiber*> ready_;
  Fiber* current_ = nullptr;
};

}  // namespace relay::serve
