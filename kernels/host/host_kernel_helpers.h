// Internal: pieces the C++ kernels of kernels/host/ share: calling a
// function template with a tensor's element type, comparing elements as
// numbers, and walking the rows along one axis.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "relay/dtype.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::kernels::host {

// Calls visit(T{}) with T the C++ type of `dtype`'s elements.
template <typename Visitor>
decltype(auto) VisitElementType(DType dtype, Visitor&& visit) {
  switch (dtype) {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  case DType::enumerator:                                                       \
    return visit(cpp_type{});
#include "relay/dtypes.def"
#undef RELAY_DTYPE
  }
  RELAY_UNREACHABLE("a dtype without an element type");
}

// Calls visit(T{}) with T the C++ type of a floating-point dtype; `subject`
// names the operator whose relation admits no other dtype.
template <typename Visitor>
void VisitFloatType(DType dtype, const char* subject, Visitor&& visit) {
  switch (dtype) {
    case DType::kFloat16:
      visit(Float16{});
      return;
    case DType::kFloat32:
      visit(float{});
      return;
    case DType::kFloat64:
      visit(double{});
      return;
    default:
      RELAY_UNREACHABLE(std::string(subject) + " of a dtype its relation refuses");
  }
}

// An element as a number C++ compares and adds: float16 widened to float.
template <typename T>
auto Numeric(T value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return static_cast<float>(value);
  } else {
    return value;
  }
}

// A number stored as an element of type T (float16 narrowed).
template <typename T, typename Number>
T StoreAs(Number value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
bool IsNaN(T value) {
  if constexpr (std::is_floating_point_v<decltype(Numeric(value))>) {
    return std::isnan(Numeric(value));
  } else {
    return false;
  }
}

// Whether a orders before b in ascending order, NaN after every number (as
// NumPy sorts).
template <typename T>
bool AscendingBefore(T a, T b) {
  if (IsNaN(a)) return false;
  if (IsNaN(b)) return true;
  return Numeric(a) < Numeric(b);
}

// The layout of a tensor seen along one axis: `outer` rows before it,
// `extent` positions on it, `inner` elements after it; element (o, i, n) is
// at o * extent * inner + i * inner + n.
struct AxisLayout {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;

  AxisLayout(const Shape& shape, size_t axis) {
    for (size_t index = 0; index < shape.size(); ++index) {
      if (index < axis) outer *= shape[index];
      if (index == axis) extent = shape[index];
      if (index > axis) inner *= shape[index];
    }
  }
  int64_t At(int64_t o, int64_t i, int64_t n) const { return (o * extent + i) * inner + n; }
};

// A normalised axis (the relation has checked it).
inline size_t AxisOf(int64_t axis, size_t rank) {
  return size_t(axis < 0 ? axis + int64_t(rank) : axis);
}

}  // namespace relay::kernels::host
