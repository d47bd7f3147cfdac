// The C++ kernel of unique_along (definition in
// kernels/operators/selection.cc), and the search for distinct slices its
// type relation shares (unique_slices.h): a sort of the slice positions,
// O(S log S) slice comparisons for S slices.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/host/unique_slices.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace host {

UniqueSlices FindUniqueSlices(const Tensor& data, std::optional<size_t> axis, bool sorted) {
  const AxisLayout layout =
      axis ? AxisLayout(data.shape(), *axis) : AxisLayout(Shape{data.element_count()}, 0);
  UniqueSlices unique;
  std::vector<int64_t> order(size_t(layout.extent));
  std::iota(order.begin(), order.end(), 0);
  // Whether slice a orders before slice b, comparing their elements in
  // row-major order.
  VisitElementType(data.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* elements = data.data<T>();
    auto before = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < layout.outer; ++o) {
        for (int64_t n = 0; n < layout.inner; ++n) {
          const T x = elements[layout.At(o, a, n)];
          const T y = elements[layout.At(o, b, n)];
          if (AscendingBefore(x, y)) return true;
          if (AscendingBefore(y, x)) return false;
        }
      }
      return false;
    };
    // Equal slices by position: the first of each run is its first
    // occurrence. (Not std::stable_sort: libstdc++ 12's uses the deprecated
    // get_temporary_buffer.)
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return before(a, b) || (!before(b, a) && a < b); });
    unique.inverse.assign(order.size(), 0);
    for (size_t at = 0; at < order.size(); ++at) {
      if (at == 0 || before(order[at - 1], order[at])) {
        unique.first.push_back(order[at]);
        unique.counts.push_back(0);
      }
      unique.inverse[size_t(order[at])] = int64_t(unique.first.size()) - 1;
      ++unique.counts.back();
    }
  });
  if (sorted) return unique;
  // Renumbered by first occurrence.
  std::vector<int64_t> by_first(unique.first.size());
  std::iota(by_first.begin(), by_first.end(), 0);
  std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
    return unique.first[size_t(a)] < unique.first[size_t(b)];
  });
  std::vector<int64_t> number(by_first.size());
  UniqueSlices renumbered;
  for (size_t rank = 0; rank < by_first.size(); ++rank) {
    number[size_t(by_first[rank])] = int64_t(rank);
    renumbered.first.push_back(unique.first[size_t(by_first[rank])]);
    renumbered.counts.push_back(unique.counts[size_t(by_first[rank])]);
  }
  for (int64_t slice : unique.inverse) renumbered.inverse.push_back(number[size_t(slice)]);
  return renumbered;
}

}  // namespace host

namespace {

void WriteInt64s(const std::vector<int64_t>& values, const Tensor& output) {
  if (output.dtype() != DType::kInt64 || output.element_count() != int64_t(values.size())) {
    throw Error(ErrorKind::kRuntime,
                "unique_along: a result's size differs from the distinct slices found");
  }
  std::copy(values.begin(), values.end(), output.data<int64_t>());
}

// Results: 0 the distinct slices, 1 their first positions, 2 each
// position's slice, 3 their counts.
void UniqueAlong(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t result,
                 const Tensor& output) {
  const Tensor& data = *inputs[0];
  const std::optional<int64_t> given = OptionalIntAttr(attrs, "axis");
  const std::optional<size_t> axis =
      given ? std::optional<size_t>(host::AxisOf(*given, data.ndim())) : std::nullopt;
  const host::UniqueSlices unique = host::FindUniqueSlices(data, axis, BoolAttr(attrs, "sorted"));
  if (result == 1) return WriteInt64s(unique.first, output);
  if (result == 2) return WriteInt64s(unique.inverse, output);
  if (result == 3) return WriteInt64s(unique.counts, output);
  // The values: slice first[u] of the data at position u of the output.
  const host::AxisLayout in = axis ? host::AxisLayout(data.shape(), *axis)
                                   : host::AxisLayout(Shape{data.element_count()}, 0);
  host::AxisLayout out = in;
  out.extent = int64_t(unique.first.size());
  if (output.dtype() != data.dtype() ||
      output.element_count() != out.outer * out.extent * out.inner)
    throw Error(ErrorKind::kRuntime,
                "unique_along: the values' size differs from the slices found");
  if (out.outer * out.extent * out.inner == 0) return;  // nothing to copy (memcpy of null)
  const size_t size = DTypeSize(data.dtype());
  const auto* source = static_cast<const uint8_t*>(data.host_data());
  auto* target = static_cast<uint8_t*>(output.host_data());
  for (int64_t o = 0; o < out.outer; ++o) {
    for (int64_t u = 0; u < out.extent; ++u) {
      const int64_t from = in.At(o, unique.first[size_t(u)], 0);
      std::memcpy(target + size_t(out.At(o, u, 0)) * size, source + size_t(from) * size,
                  size_t(in.inner) * size);
    }
  }
}

}  // namespace

void AttachSelectionKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"unique_along", UniqueAlong}});
}

}  // namespace relay::kernels
