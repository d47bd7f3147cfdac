// Intrusively reference-counted runtime objects.
//
// Every value the VM manipulates (tensors, storage, ADT values, closures,
// references) derives from Object and is handled through Ref<T>. The count
// lives in the object itself so that a Ref is one pointer wide and registers
// can hold Ref<Object> without a separate control block.
//
// Thread-safety: reference counting is atomic, so Refs to the same object may
// be copied and destroyed from many threads. Objects are immutable after
// construction unless their own header says otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace relay {

// The concrete kind of an Object, so registers holding Ref<Object> can be
// checked and downcast without RTTI.
enum class ObjectKind : uint8_t {
  kStorage,
  kTensor,
  kKernelIR,  // a node of the kernel IR (kernels/kir), which has kinds of its own
  // Values of Relay programs besides tensors (relay/value.h).
  kTuple,
  kConstructed,  // a value of an algebraic data type: constructor tag and fields
  kClosure,      // a bytecode function with its captured values
  kReference,    // Relay's ref(T): a mutable cell
};

class Object {
 public:
  explicit Object(ObjectKind kind) : kind_(kind) {}
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  ObjectKind kind() const { return kind_; }
  uint32_t use_count() const { return reference_count_.load(std::memory_order_relaxed); }

  void IncrementReference() const { reference_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecrementReference() const {
    if (reference_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) DestroyDeferred(this);
  }

  // Deletes `object` without recursion: objects whose destructors release
  // the last reference to further objects (a million-element list, a long
  // chain of IR nodes) are queued and deleted in a loop on this thread, so
  // the C++ stack stays flat however long the chain. Any class with a
  // virtual destructor may use it.
  template <typename T>
  static void DestroyDeferred(const T* object) {
    thread_local std::vector<const T*>* queue = nullptr;
    if (queue != nullptr) {
      queue->push_back(object);
      return;
    }
    std::vector<const T*> pending{object};
    queue = &pending;
    while (!pending.empty()) {
      const T* next = pending.back();
      pending.pop_back();
      delete next;
    }
    queue = nullptr;
  }

 private:
  mutable std::atomic<uint32_t> reference_count_{0};
  const ObjectKind kind_;
};

// A counted pointer to an Object subclass. Null is a valid value.
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* pointer) : pointer_(pointer) {
    if (pointer_) pointer_->IncrementReference();
  }
  Ref(const Ref& other) : Ref(other.pointer_) {}
  Ref(Ref&& other) noexcept : pointer_(std::exchange(other.pointer_, nullptr)) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(const Ref<U>& other) : Ref(other.get()) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(Ref<U>&& other) noexcept : pointer_(other.release()) {}
  ~Ref() {
    if (pointer_) pointer_->DecrementReference();
  }

  Ref& operator=(Ref other) noexcept {
    std::swap(pointer_, other.pointer_);
    return *this;
  }

  T* get() const { return pointer_; }
  T* operator->() const { return pointer_; }
  T& operator*() const { return *pointer_; }
  explicit operator bool() const { return pointer_ != nullptr; }
  bool operator==(const Ref& other) const { return pointer_ == other.pointer_; }

  // Gives up ownership without decrementing; the caller owns one reference.
  T* release() { return std::exchange(pointer_, nullptr); }

 private:
  T* pointer_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> MakeRef(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace relay
