// The values of Relay programs besides tensors: tuples, algebraic data type
// values, closures and references, and how any value prints.
//
// A value is a Ref<Object> whose kind() says which: kTensor (relay/tensor.h),
// kTuple, kConstructed, kClosure or kReference. Tuples, constructed values and
// closures are immutable; a reference's content is the one thing a program
// may change after construction.
//
// Thread-safety: as Object. A Reference's content is not synchronised: one
// invocation of a program at a time may use it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "relay/object.h"

namespace relay {

using Value = Ref<Object>;

class Tuple final : public Object {
 public:
  explicit Tuple(std::vector<Value> fields)
      : Object(ObjectKind::kTuple), fields_(std::move(fields)) {}
  const std::vector<Value>& fields() const { return fields_; }

 private:
  const std::vector<Value> fields_;
};

// A value built by a constructor of an algebraic data type: `tag` is the
// constructor's position among all constructors of the program (its
// executable's or module's numbering), which names it when printing.
class Constructed final : public Object {
 public:
  Constructed(int32_t tag, std::vector<Value> fields)
      : Object(ObjectKind::kConstructed), tag_(tag), fields_(std::move(fields)) {}
  int32_t tag() const { return tag_; }
  const std::vector<Value>& fields() const { return fields_; }

 private:
  const int32_t tag_;
  const std::vector<Value> fields_;
};

// A function of a program (by its position in the program's function
// table) with the values it captured; calling it passes them before the
// arguments.
class Closure final : public Object {
 public:
  Closure(int32_t function, std::vector<Value> captured)
      : Object(ObjectKind::kClosure), function_(function), captured_(std::move(captured)) {}
  int32_t function() const { return function_; }
  const std::vector<Value>& captured() const { return captured_; }

 private:
  const int32_t function_;
  const std::vector<Value> captured_;
};

// Relay's ref(T): ref(v) makes one, !r reads it, r := v writes it.
class Reference final : public Object {
 public:
  explicit Reference(Value content)
      : Object(ObjectKind::kReference), content_(std::move(content)) {}
  const Value& Read() const { return content_; }
  void Write(Value content) { content_ = std::move(content); }

 private:
  Value content_;
};

// ---- printing ----------------------------------------------------------------------

struct ValuePrintOptions {
  // The name of constructor `tag` ("Cons"); without it, constructed values
  // print as `Constructor#tag(...)`.
  std::function<std::string(int32_t tag)> constructor_name;
  // The name of function `index`, for closures; without it `#index`.
  std::function<std::string(int32_t index)> function_name;
  // A tensor with more elements prints its first and last few per axis
  // with `...` between.
  int64_t tensor_element_limit = 4096;
};

// `value` in Relay's literal syntax: scalars as Relay writes them (`6`,
// `6i64`, `2.5f`, `2.5f64`, `True`), tensors as nested brackets of their
// elements (`[[1, 2], [3, 4]]`, each element as its scalar would print),
// tuples `(a, b)` (one field: `(a,)`), constructed values `Cons(1, Nil)`,
// closures `<closure NAME>`, references `ref(v)`. Deeply nested values (a
// long list) are printed without recursion on the C++ stack.
std::string FormatValue(const Value& value, const ValuePrintOptions& options = {});

}  // namespace relay
