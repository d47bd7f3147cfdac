#include "vm/interpreter/scalar_operators.h"

#include <cmath>
#include <optional>
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

// The dtypes were checked by the caller (ScalarResultDType): the data is
// read and written untyped.
template <typename T>
[[gnu::always_inline]] inline void Compute(ScalarOperator op, std::span<const Tensor* const> inputs,
                                           Tensor& out) {
  const T a = *static_cast<const T*>(inputs[0]->host_data());
  void* result = out.host_data();
  if (op == ScalarOperator::kNegative) {
    if constexpr (std::is_floating_point_v<T>) {
      *static_cast<T*>(result) = -a;
    } else {
      *static_cast<T*>(result) = Wrap<T>(ScalarOperator::kSubtract, T{0}, a);
    }
    return;
  }
  const T b = *static_cast<const T*>(inputs[1]->host_data());
  if (IsComparison(op)) {
    *static_cast<bool*>(result) = Compare(op, a, b);
  } else {
    *static_cast<T*>(result) = Arithmetic(op, a, b);
  }
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
  if (inputs.size() > 2) return nullptr;
  const Tensor* pointers[2] = {};
  for (size_t index = 0; index < inputs.size(); ++index) pointers[index] = inputs[index].get();
  return RunScalarOperator(op, std::span<const Tensor* const>(pointers, inputs.size()), pool);
}

namespace {

// The bodies of ScalarResultDType and ComputeScalarOperator, inlined into
// RunScalarOperatorInto: the VM calls it at every scalar step.
[[gnu::always_inline]] inline std::optional<DType> ResultDType(
    ScalarOperator op, std::span<const Tensor* const> inputs) {
  if (op == ScalarOperator::kNone || inputs.size() != (IsUnary(op) ? 1u : 2u)) return std::nullopt;
  const DType dtype = inputs[0]->dtype();
  for (const Tensor* input : inputs) {
    if (!input->shape().empty() || input->dtype() != dtype || !input->on_host()) {
      return std::nullopt;
    }
  }
  if (IsLogical(op)) {
    if (dtype != DType::kBool) return std::nullopt;
    return DType::kBool;
  }
  switch (dtype) {
    case DType::kInt32:
    case DType::kInt64:
    case DType::kFloat32:
    case DType::kFloat64:
      return IsComparison(op) ? DType::kBool : dtype;
    default:
      return std::nullopt;
  }
}

[[gnu::always_inline]] inline void ComputeInto(ScalarOperator op,
                                               std::span<const Tensor* const> inputs, Tensor& out) {
  if (IsLogical(op)) {
    const bool a = *static_cast<const bool*>(inputs[0]->host_data());
    const bool result = op == ScalarOperator::kLogicalNot ? !a
                        : op == ScalarOperator::kLogicalAnd
                            ? a && *static_cast<const bool*>(inputs[1]->host_data())
                            : a || *static_cast<const bool*>(inputs[1]->host_data());
    *static_cast<bool*>(out.host_data()) = result;
    return;
  }
  switch (inputs[0]->dtype()) {
    case DType::kInt32:
      return Compute<int32_t>(op, inputs, out);
    case DType::kInt64:
      return Compute<int64_t>(op, inputs, out);
    case DType::kFloat32:
      return Compute<float>(op, inputs, out);
    default:
      return Compute<double>(op, inputs, out);
  }
}

}  // namespace

std::optional<DType> ScalarResultDType(ScalarOperator op, std::span<const Tensor* const> inputs) {
  return ResultDType(op, inputs);
}

void ComputeScalarOperator(ScalarOperator op, std::span<const Tensor* const> inputs, Tensor& out) {
  ComputeInto(op, inputs, out);
}

bool RunScalarOperatorInto(ScalarOperator op, std::span<const Tensor* const> inputs,
                           Ref<Object>& destination, ScalarPool& pool) {
  const std::optional<DType> dtype = ResultDType(op, inputs);
  if (!dtype) return false;
  if (destination && destination->kind() == ObjectKind::kTensor) {
    auto& tensor = static_cast<Tensor&>(*destination);
    // The register's reference, and the pool's if it came from there.
    const uint32_t owners = 1 + (pool.Holds(&tensor) ? 1 : 0);
    if (tensor.use_count() == owners && tensor.dtype() == *dtype && tensor.shape().empty() &&
        tensor.on_host() && tensor.storage()->use_count() == 1) {
      ComputeInto(op, inputs, tensor);
      return true;
    }
  }
  Ref<Tensor> result = pool.Allocate(*dtype);
  ComputeInto(op, inputs, *result);
  destination = std::move(result);
  return true;
}

Ref<Tensor> RunScalarOperator(ScalarOperator op, std::span<const Tensor* const> inputs,
                              ScalarPool& pool) {
  const std::optional<DType> dtype = ScalarResultDType(op, inputs);
  if (!dtype) return nullptr;
  Ref<Tensor> result = pool.Allocate(*dtype);
  ComputeScalarOperator(op, inputs, *result);
  return result;
}

}  // namespace relay::vm
