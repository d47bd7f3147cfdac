// The C++ kernels of the search and scan operators (definitions in
// kernels/operators/search.cc): topk, argsort, sort, argwhere, cumsum,
// cumprod. Each runs along its axis row by row, in O(n log n) for the
// sorts and O(n) for the scans.
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

using host::AxisLayout;
using host::VisitElementType;

// Writes position `value` into an index tensor of any integer dtype.
void StoreIndex(const Tensor& output, int64_t at, int64_t value) {
  VisitElementType(output.dtype(), [&](auto zero) {
    using Index = decltype(zero);
    output.data<Index>()[at] = host::StoreAs<Index>(value);
  });
}

// The positions of one row along the axis, ordered: the first `count` of
// them by `before` (a strict order; ties keep the lower position first).
template <typename T, typename Before>
void OrderRow(const T* data, const AxisLayout& layout, int64_t o, int64_t n, int64_t count,
              Before before, std::vector<int64_t>& order) {
  order.resize(size_t(layout.extent));
  std::iota(order.begin(), order.end(), 0);
  auto compare = [&](int64_t a, int64_t b) {
    const T x = data[layout.At(o, a, n)];
    const T y = data[layout.At(o, b, n)];
    if (before(x, y)) return true;
    if (before(y, x)) return false;
    return a < b;
  };
  if (count < layout.extent) {
    std::partial_sort(order.begin(), order.begin() + count, order.end(), compare);
  } else {
    std::sort(order.begin(), order.end(), compare);
  }
}

// Sorting kernels share one walk: for each row along the axis, the first
// `count` positions in order, written as values (to `values`) or positions.
void SortAlongAxis(const Tensor& data, size_t axis, bool ascending, int64_t count,
                   bool write_values, const Tensor& output) {
  const AxisLayout in(data.shape(), axis);
  AxisLayout out = in;
  out.extent = count;
  VisitElementType(data.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* elements = data.data<T>();
    std::vector<int64_t> order;
    auto before = [ascending](T a, T b) {
      return ascending ? host::AscendingBefore(a, b) : host::AscendingBefore(b, a);
    };
    for (int64_t o = 0; o < in.outer; ++o) {
      for (int64_t n = 0; n < in.inner; ++n) {
        OrderRow(elements, in, o, n, count, before, order);
        for (int64_t i = 0; i < count; ++i) {
          const int64_t source = order[size_t(i)];
          if (write_values) {
            output.data<T>()[out.At(o, i, n)] = elements[in.At(o, source, n)];
          } else {
            StoreIndex(output, out.At(o, i, n), source);
          }
        }
      }
    }
  });
}

void TopK(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t result,
          const Tensor& output) {
  const Tensor& data = *inputs[0];
  const size_t axis = host::AxisOf(IntAttr(attrs, "axis"), data.ndim());
  const std::string& returned = StringAttr(attrs, "ret_type");
  const bool values = returned == "values" || (returned == "both" && result == 0);
  SortAlongAxis(data, axis, BoolAttr(attrs, "is_ascend"), output.shape()[axis], values, output);
}

void Argsort(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t,
             const Tensor& output) {
  const Tensor& data = *inputs[0];
  const size_t axis = host::AxisOf(IntAttr(attrs, "axis"), data.ndim());
  SortAlongAxis(data, axis, BoolAttr(attrs, "is_ascend"), data.shape()[axis], false, output);
}

void Sort(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t, const Tensor& output) {
  const Tensor& data = *inputs[0];
  const size_t axis = host::AxisOf(IntAttr(attrs, "axis"), data.ndim());
  SortAlongAxis(data, axis, BoolAttr(attrs, "is_ascend"), data.shape()[axis], true, output);
}

void Argwhere(std::span<const Tensor* const> inputs, const Attrs&, size_t, const Tensor& output) {
  const Tensor& condition = *inputs[0];
  const Shape& shape = condition.shape();
  std::vector<int64_t> position(shape.size(), 0);
  int32_t* rows = output.data<int32_t>();
  int64_t written = 0;
  VisitElementType(condition.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* elements = condition.data<T>();
    for (int64_t index = 0; index < condition.element_count(); ++index) {
      if (host::Numeric(elements[index]) != 0) {
        RELAY_CHECK(written < output.shape()[0], "argwhere found more nonzeros than counted");
        for (size_t axis = 0; axis < shape.size(); ++axis) {
          rows[written * int64_t(shape.size()) + int64_t(axis)] = int32_t(position[axis]);
        }
        ++written;
      }
      // The next position in row-major order.
      for (size_t axis = shape.size(); axis-- > 0;) {
        if (++position[axis] < shape[axis]) break;
        position[axis] = 0;
      }
    }
  });
  RELAY_CHECK(written == output.shape()[0], "argwhere found fewer nonzeros than counted");
}

// a * b or a + b; integers wrap (computed unsigned: signed overflow is
// undefined in C++), as they do in the compiled kernels.
template <bool kProduct, typename Number>
Number Combine(Number a, Number b) {
  if constexpr (std::is_integral_v<Number>) {
    const uint64_t x = uint64_t(a), y = uint64_t(b);
    return static_cast<Number>(kProduct ? x * y : x + y);
  } else {
    return kProduct ? a * b : a + b;
  }
}

// Running sums or products in the output's dtype (the dtype attribute's).
template <bool kProduct>
void Scan(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t, const Tensor& output) {
  const Tensor& data = *inputs[0];
  const std::optional<int64_t> axis = OptionalIntAttr(attrs, "axis");
  // Without an axis, the flattened data: one row.
  const AxisLayout layout = axis ? AxisLayout(data.shape(), host::AxisOf(*axis, data.ndim()))
                                 : AxisLayout(Shape{data.element_count()}, 0);
  const bool exclusive = BoolAttr(attrs, "exclusive");
  VisitElementType(data.dtype(), [&](auto in_zero) {
    using In = decltype(in_zero);
    VisitElementType(output.dtype(), [&](auto out_zero) {
      using Out = decltype(out_zero);
      if constexpr (!std::is_same_v<In, bool> && !std::is_same_v<Out, bool>) {
        // float16 accumulates in float, as the other kernels do.
        using Accumulator = decltype(host::Numeric(Out{}));
        const In* source = data.data<In>();
        Out* target = output.data<Out>();
        for (int64_t o = 0; o < layout.outer; ++o) {
          for (int64_t n = 0; n < layout.inner; ++n) {
            Accumulator running = kProduct ? Accumulator(1) : Accumulator(0);
            for (int64_t i = 0; i < layout.extent; ++i) {
              const int64_t at = layout.At(o, i, n);
              const auto value = static_cast<Accumulator>(host::Numeric(source[at]));
              if (exclusive) target[at] = host::StoreAs<Out>(running);
              running = Combine<kProduct>(running, value);
              if (!exclusive) target[at] = host::StoreAs<Out>(running);
            }
          }
        }
      } else {
        RELAY_UNREACHABLE("a scan of bool passed its type relation");
      }
    });
  });
}

}  // namespace

void AttachSearchKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"topk", TopK},
                           {"argsort", Argsort},
                           {"sort", Sort},
                           {"argwhere", Argwhere},
                           {"cumsum", Scan<false>},
                           {"cumprod", Scan<true>}});
}

}  // namespace relay::kernels
