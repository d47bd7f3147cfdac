// The base of every Relay IR node: an intrusive reference count, the node's
// kind and its source span.
//
// Nodes are immutable after construction (the one exception is the type slot
// that type inference fills in on expressions, see expr.h). Identity matters
// for variables (a Var is its node, not its name); everything else is
// compared structurally (structural_equal.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>

#include "relay/error.h"
#include "relay/object.h"

namespace relay::ir {

enum class NodeKind : uint8_t {
#define RELAY_IR_NODE(enumerator, class_name, category) enumerator,
#include "compiler/ir/nodes.def"
#undef RELAY_IR_NODE
};

std::string_view NodeKindName(NodeKind kind);

// A 1-based source region; line 0 means "no location" (built by a pass).
struct Span {
  int32_t line = 0;
  int32_t column = 0;
  int32_t end_line = 0;
  int32_t end_column = 0;

  bool known() const { return line > 0; }
  SourceSpan In(const std::string& file) const {
    return {file, line, column, end_line, end_column};
  }
};

class Node {
 public:
  Node(NodeKind kind, Span span) : kind_(kind), span_(span) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;

  NodeKind kind() const { return kind_; }
  const Span& span() const { return span_; }

  void IncrementReference() const { reference_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecrementReference() const {
    if (reference_count_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      Object::DestroyDeferred(this);
  }

 private:
  mutable std::atomic<uint32_t> reference_count_{0};
  const NodeKind kind_;
  const Span span_;
};

// Downcast by kind: returns null when `node` is null or of another kind.
template <typename T, typename U>
const T* As(const Ref<const U>& node) {
  return node && node->kind() == T::kKind ? static_cast<const T*>(node.get()) : nullptr;
}
template <typename T, typename U>
const T* As(const U* node) {
  return node && node->kind() == T::kKind ? static_cast<const T*>(node) : nullptr;
}

// Builds a node and returns it as its handle type.
template <typename T, typename... Args>
Ref<const T> Make(Args&&... args) {
  return Ref<const T>(new T(std::forward<Args>(args)...));
}

// Shares ownership of a node we hold a plain pointer to (nodes are always
// heap-allocated and counted, so this is safe while any Ref is alive).
template <typename T>
Ref<const T> Share(const T* node) {
  return Ref<const T>(node);
}

}  // namespace relay::ir
