// Internal: the distinct slices of a tensor along an axis (or its distinct
// elements), which both unique_along's type relation (its result's extent
// is their count) and its kernel (kernels/host/selection_kernels.cc) need.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "relay/tensor.h"

namespace relay::kernels::host {

// The distinct slices of `data` along `axis` (its elements, flattened,
// without one), compared element by element in row-major order, NaN equal
// to NaN and after every number (as numpy.unique). Ordered ascending
// (lexicographically) when `sorted`, else by first occurrence.
struct UniqueSlices {
  std::vector<int64_t> first;    // each distinct slice's first position
  std::vector<int64_t> inverse;  // each position's distinct slice's number
  std::vector<int64_t> counts;   // how many positions hold each
};

// `data` must be on the host; `axis` a valid, non-negative axis.
UniqueSlices FindUniqueSlices(const Tensor& data, std::optional<size_t> axis, bool sorted);

}  // namespace relay::kernels::host
