#include "serve/fiber_scheduler.h"

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include "relay/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define RELAY_FIBERS_TELL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RELAY_FIBERS_TELL_ASAN 1
#endif
#endif
#ifdef RELAY_FIBERS_TELL_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace relay::serve {

namespace {

// AddressSanitizer must hear of every switch between stacks, or it takes a
// fiber's frames for overflows of the thread's stack (Debian's Boost.Context
// is built without its own annotations). Without ASan these do nothing.
// `fake_stack` holds the ASan state of the stack being left; null when
// that stack is finished with.
void StartSwitch(void** fake_stack, const void* bottom, size_t size) {
#ifdef RELAY_FIBERS_TELL_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
  (void)fake_stack, (void)bottom, (void)size;
#endif
}
void FinishSwitch(void* fake_stack, const void** old_bottom, size_t* old_size) {
#ifdef RELAY_FIBERS_TELL_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_size);
#else
  (void)fake_stack, (void)old_bottom, (void)old_size;
#endif
}

}  // namespace

namespace context = boost::context;

// Keeps the stacks of finished fibers for the next ones: mapping a stack
// and its guard page costs system calls that a request should not pay.
class FiberScheduler::StackPool {
 public:
  explicit StackPool(size_t stack_bytes) : allocator_(stack_bytes) {}
  ~StackPool() {
    for (context::stack_context& stack : free_) allocator_.deallocate(stack);
  }

  context::stack_context Allocate() {
    if (free_.empty()) return allocator_.allocate();
    context::stack_context stack = free_.back();
    free_.pop_back();
    return stack;
  }
  void Release(context::stack_context& stack) {
    constexpr size_t kKept = 64;
    if (free_.size() < kKept) {
      free_.push_back(stack);
    } else {
      allocator_.deallocate(stack);
    }
  }

 private:
  context::protected_fixedsize_stack allocator_;
  std::vector<context::stack_context> free_;
};

namespace {

// Boost.Context's StackAllocator concept over a StackPool (copied into each
// fiber's control block, so it holds the pool by pointer). It records the
// stack it hands out in `given`, for AddressSanitizer.
struct PooledStack {
  FiberScheduler::StackPool* pool;
  context::stack_context* given;
  context::stack_context allocate();
  void deallocate(context::stack_context& stack);
};

}  // namespace

class FiberScheduler::Fiber {
 public:
  context::fiber own;        // the fiber, while it does not run
  context::fiber scheduler;  // the scheduler, while the fiber runs
  std::function<void()> body;
  std::optional<Clock::time_point> deadline;
  bool suspended = false;
  bool finished = false;
  context::stack_context stack;        // the fiber's own stack
  void* fake_stack = nullptr;          // ASan's state of it while it is left
  const void* thread_stack = nullptr;  // the thread's stack, which it returns to
  size_t thread_stack_size = 0;

  const void* stack_bottom() const { return static_cast<const char*>(stack.sp) - stack.size; }
};

context::stack_context PooledStack::allocate() {
  *given = pool->Allocate();
  return *given;
}
void PooledStack::deallocate(context::stack_context& stack) {
  pool->Release(stack);
}

FiberScheduler::FiberScheduler(size_t stack_bytes)
    : stacks_(std::make_unique<StackPool>(stack_bytes)) {}

FiberScheduler::~FiberScheduler() {
  // A suspended fiber would be unwound by Boost.Context's forced_unwind
  // through code that does not expect it; the workers finish theirs first.
  if (!fibers_.empty()) std::terminate();
}

void FiberScheduler::Spawn(std::function<void()> body) {
  auto fiber = std::make_unique<Fiber>();
  Fiber* raw = fiber.get();
  raw->body = std::move(body);
  raw->own = context::fiber(std::allocator_arg, PooledStack{stacks_.get(), &raw->stack},
                            [raw](context::fiber&& scheduler) {
                              FinishSwitch(nullptr, &raw->thread_stack, &raw->thread_stack_size);
                              raw->scheduler = std::move(scheduler);
                              raw->body();
                              raw->finished = true;
                              StartSwitch(nullptr, raw->thread_stack, raw->thread_stack_size);
                              return std::move(raw->scheduler);
                            });
  fibers_.push_back(std::move(fiber));
  ready_.push_back(raw);
}

void FiberScheduler::RunReady() {
  Clock::time_point now = Clock::now();
  for (const std::unique_ptr<Fiber>& fiber : fibers_) {
    if (fiber->suspended && fiber->deadline && *fiber->deadline <= now) Wake(fiber.get());
  }
  while (!ready_.empty()) {
    Fiber* fiber = ready_.front();
    ready_.pop_front();
    current_ = fiber;
    void* thread_fake_stack = nullptr;
    StartSwitch(&thread_fake_stack, fiber->stack_bottom(), fiber->stack.size);
    fiber->own = std::move(fiber->own).resume();
    FinishSwitch(thread_fake_stack, nullptr, nullptr);
    current_ = nullptr;
    if (fiber->finished) {
      std::erase_if(fibers_,
                    [&](const std::unique_ptr<Fiber>& each) { return each.get() == fiber; });
    }
  }
}

void FiberScheduler::Suspend(std::optional<Clock::time_point> deadline) {
  Fiber* fiber = current_;
  if (fiber == nullptr)
    throw Error(ErrorKind::kInternal, "FiberScheduler::Suspend outside a fiber");
  fiber->suspended = true;
  fiber->deadline = deadline;
  StartSwitch(&fiber->fake_stack, fiber->thread_stack, fiber->thread_stack_size);
  fiber->scheduler = std::move(fiber->scheduler).resume();
  FinishSwitch(fiber->fake_stack, &fiber->thread_stack, &fiber->thread_stack_size);
}

void FiberScheduler::Wake(Fiber* fiber) {
  if (!fiber->suspended) return;
  fiber->suspended = false;
  fiber->deadline.reset();
  ready_.push_back(fiber);
}

std::optional<FiberScheduler::Clock::time_point> FiberScheduler::next_deadline() const {
  std::optional<Clock::time_point> earliest;
  for (const std::unique_ptr<Fiber>& fiber : fibers_) {
    if (fiber->suspended && fiber->deadline && (!earliest || *fiber->deadline < *earliest))
      earliest = fiber->deadline;
  }
  return earliest;
}

}  // namespace relay::serve
