// The VM's fast path for arithmetic on 0-d host tensors: loop counters,
// comparisons and flags in control code. A kernel call costs far more than
// such an operation (result allocation aside, ~100 ns of launch), so the
// common elementwise operators on scalars run here instead, computing
// exactly what their kernels compute (integers wrap, floats are IEEE,
// minimum and maximum propagate NaN as numpy does, comparisons with NaN are
// false except not_equal). Anything else (other dtypes, shapes,
// attributes) returns null and takes the kernel path.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/attributes.h"
#include "relay/tensor.h"

namespace relay::vm {

enum class ScalarOperator : uint8_t {
  kNone,
  kAdd,
  kSubtract,
  kMultiply,
  kMaximum,
  kMinimum,
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kLogicalAnd,
  kLogicalOr,
  kLogicalNot,
  kNegative,
};

// The fast-path operator for a call of `op` with `attrs`, or kNone.
ScalarOperator ScalarOperatorFor(std::string_view op, const kernels::Attrs& attrs);

// Where fast-path results come from: 0-d tensors reused once nothing but
// the pool refers to them (a loop's counters die every iteration), so
// scalar arithmetic in a loop allocates nothing. A tensor is reused only
// when its reference count says no register, value or caller holds it.
// One per VirtualMachine (not thread-safe).
class ScalarPool {
 public:
  Ref<Tensor> Allocate(DType dtype);

 private:
  static constexpr size_t kSlots = 16;
  Ref<Tensor> slots_[kSlots];
  size_t next_ = 0;  // the slot a new tensor replaces
};

// `op` on `inputs` when they are 0-d host tensors of one dtype it handles,
// with its result from `pool`; null otherwise.
Ref<Tensor> RunScalarOperator(ScalarOperator op, std::span<const Ref<Tensor>> inputs,
                              ScalarPool& pool);

}  // namespace relay::vm
