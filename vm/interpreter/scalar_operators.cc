#include "vm/interpreter/scalar_operators.h"

#include <cmath>
#include <type_traits>

#include "relay/devices.h"

namespace relay::vm {

namespace {

bool IsComparison(ScalarOperator op) {
  return op >= ScalarOperator::kEqual && op <= ScalarOperator::kGreaterEqual;
}
bool IsLogical(ScalarOperator op) {
  return op == ScalarOperator::kLogicalAnd || op == ScalarOperator::kLogicalOr ||
         op == ScalarOperator::kLogicalNot;
}
bool IsUnary(ScalarOperator op) {
  return op == ScalarOperator::kLogicalNot || op == ScalarOperator::kNegative;
}

// Two's-complement wrapping for integers, as the kernels' LLVM add/sub/mul.
template <typename T>
T Wrap(ScalarOperator op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case ScalarOperator::kAdd:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case ScalarOperator::kSubtract:
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    default:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}

template <typename T>
T Arithmetic(ScalarOperator op, T a, T b) {
  if (op == ScalarOperator::kMaximum || op == ScalarOperator::kMinimum) {
    const bool maximum = op == ScalarOperator::kMaximum;
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;         // NaN, as llvm.maximum/minimum
      if (a == b) return (std::signbit(a) == maximum) ? b : a;  // +0 > -0
    }
    return maximum ? (a > b ? a : b) : (a < b ? a : b);
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ScalarOperator::kAdd:
        return a + b;
      case ScalarOperator::kSubtract:
        return a - b;
      default:
        return a * b;
    }
  } else {
    return Wrap(op, a, b);
  }
}

template <typename T>
bool Compare(ScalarOperator op, T a, T b) {
  switch (op) {
    case ScalarOperator::kEqual:
      return a == b;
    case ScalarOperator::kNotEqual:
      return !(a == b);  // true for NaN, as the kernels' unordered compare
    case ScalarOperator::kLess:
      return a < b;
    case ScalarOperator::kLessEqual:
      return a <= b;
    case ScalarOperator::kGreater:
      return a > b;
    default:
      return a >= b;
  }
}

template <typename T>
Ref<Tensor> Run(ScalarOperator op, std::span<const Ref<Tensor>> inputs, ScalarPool& pool) {
  const T a = *inputs[0]->data<T>();
  if (op == ScalarOperator::kNegative) {
    Ref<Tensor> result = pool.Allocate(inputs[0]->dtype());
    if constexpr (std::is_floating_point_v<T>) {
      *result->data<T>() = -a;
    } else {
      *result->data<T>() = Wrap<T>(ScalarOperator::kSubtract, T{0}, a);
    }
    return result;
  }
  const T b = *inputs[1]->data<T>();
  if (IsComparison(op)) {
    Ref<Tensor> result = pool.Allocate(DType::kBool);
    *result->data<bool>() = Compare(op, a, b);
    return result;
  }
  Ref<Tensor> result = pool.Allocate(inputs[0]->dtype());
  *result->data<T>() = Arithmetic(op, a, b);
  return result;
}

}  // namespace

ScalarOperator ScalarOperatorFor(std::string_view op, const kernels::Attrs& attrs) {
  if (!attrs.empty()) return ScalarOperator::kNone;
  struct Entry {
    std::string_view name;
    ScalarOperator op;
  };
  static constexpr Entry kOperators[] = {
      {"add", ScalarOperator::kAdd},
      {"subtract", ScalarOperator::kSubtract},
      {"multiply", ScalarOperator::kMultiply},
      {"maximum", ScalarOperator::kMaximum},
      {"minimum", ScalarOperator::kMinimum},
      {"equal", ScalarOperator::kEqual},
      {"not_equal", ScalarOperator::kNotEqual},
      {"less", ScalarOperator::kLess},
      {"less_equal", ScalarOperator::kLessEqual},
      {"greater", ScalarOperator::kGreater},
      {"greater_equal", ScalarOperator::kGreaterEqual},
      {"logical_and", ScalarOperator::kLogicalAnd},
      {"logical_or", ScalarOperator::kLogicalOr},
      {"logical_not", ScalarOperator::kLogicalNot},
      {"negative", ScalarOperator::kNegative},
  };
  for (const Entry& entry : kOperators) {
    if (entry.name == op) return entry.op;
  }
  return ScalarOperator::kNone;
}

Ref<Tensor> ScalarPool::Allocate(DType dtype) {
  for (Ref<Tensor>& slot : slots_) {
    // Only this slot refers to it (or to its storage, which a view could
    // share): no one can see it change.
    if (slot && slot->use_count() == 1 && slot->storage()->use_count() == 1 &&
        slot->dtype() == dtype) {
      return slot;
    }
  }
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  slots_[next_] = tensor;
  next_ = (next_ + 1) % kSlots;
  return tensor;
}

Ref<Tensor> RunScalarOperator(ScalarOperator op, std::span<const Ref<Tensor>> inputs,
                              ScalarPool& pool) {
  if (op == ScalarOperator::kNone || inputs.size() != (IsUnary(op) ? 1u : 2u)) return nullptr;
  const DType dtype = inputs[0]->dtype();
  for (const Ref<Tensor>& input : inputs) {
    if (input->ndim() != 0 || input->dtype() != dtype ||
        input->device_id().kind != DeviceKind::kCPU) {
      return nullptr;
    }
  }
  if (IsLogical(op)) {
    if (dtype != DType::kBool) return nullptr;
    Ref<Tensor> result = pool.Allocate(DType::kBool);
    const bool a = *inputs[0]->data<bool>();
    *result->data<bool>() = op == ScalarOperator::kLogicalNot   ? !a
                            : op == ScalarOperator::kLogicalAnd ? a && *inputs[1]->data<bool>()
                                                                : a || *inputs[1]->data<bool>();
    return result;
  }
  switch (dtype) {
    case DType::kInt32:
      return Run<int32_t>(op, inputs, pool);
    case DType::kInt64:
      return Run<int64_t>(op, inputs, pool);
    case DType::kFloat32:
      return Run<float>(op, inputs, pool);
    case DType::kFloat64:
      return Run<double>(op, inputs, pool);
    default:
      return nullptr;
  }
}

}  // namespace relay::vm
