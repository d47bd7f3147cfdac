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
#include <optional>
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
// The VM keeps one per call site, whose results come and go in the same
// rhythm, so a few slots suffice. Not thread-safe.
class ScalarPool {
 public:
  Ref<Tensor> Allocate(DType dtype);
  // Whether `tensor` is one of the pool's (which then holds one reference).
  bool Holds(const Tensor* tensor) const {
    for (const Ref<Tensor>& slot : slots_) {
      if (slot.get() == tensor) return true;
    }
    return false;
  }

 private:
  static constexpr size_t kSlots = 4;
  Ref<Tensor> slots_[kSlots];
  size_t next_ = 0;  // the slot a new tensor replaces
};

// The dtype of `op`'s result when `inputs` are 0-d host tensors of one
// dtype it handles; nullopt otherwise (the kernel path then runs).
std::optional<DType> ScalarResultDType(ScalarOperator op, std::span<const Tensor* const> inputs);
// `op` on `inputs` (for which ScalarResultDType gave out's dtype) into the
// 0-d host tensor `out`, which may be one of them.
void ComputeScalarOperator(ScalarOperator op, std::span<const Tensor* const> inputs, Tensor& out);

// The VM's form: `op` on `inputs` into register `destination`, reusing the
// tensor there when nothing but the register (and `pool`, where it came
// from) refers to it, so a loop's counters neither allocate nor touch a
// reference count; else a tensor from `pool`. False (nothing written)
// when the inputs are not for the fast path.
bool RunScalarOperatorInto(ScalarOperator op, std::span<const Tensor* const> inputs,
                           Ref<Object>& destination, ScalarPool& pool);

// `op` on `inputs` when they are 0-d host tensors of one dtype it handles,
// with its result from `pool`; null otherwise.
Ref<Tensor> RunScalarOperator(ScalarOperator op, std::span<const Tensor* const> inputs,
                              ScalarPool& pool);
Ref<Tensor> RunScalarOperator(ScalarOperator op, std::span<const Ref<Tensor>> inputs,
                              ScalarPool& pool);

}  // namespace relay::vm
