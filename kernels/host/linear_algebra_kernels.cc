// The C++ kernel of det (definition in kernels/operators/linear_algebra.cc):
// each matrix factorised as P A = L U by Gaussian elimination with partial
// pivoting, in double precision (as LAPACK's getrf, which numpy.linalg.det
// calls), its determinant the product of U's diagonal times the
// permutation's sign.
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/operator_table.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::kernels {
namespace {

// The determinant of the n x n matrix `a` (row-major; overwritten). An
// exactly singular matrix gives 0; NaN propagates.
double Determinant(std::vector<double>& a, size_t n) {
  double determinant = 1;
  for (size_t column = 0; column < n; ++column) {
    size_t pivot = column;
    for (size_t row = column + 1; row < n; ++row) {
      if (std::abs(a[row * n + column]) > std::abs(a[pivot * n + column])) pivot = row;
    }
    const double largest = a[pivot * n + column];
    if (largest == 0) return 0;
    if (pivot != column) {
      for (size_t k = 0; k < n; ++k) std::swap(a[pivot * n + k], a[column * n + k]);
      determinant = -determinant;
    }
    determinant *= largest;
    for (size_t row = column + 1; row < n; ++row) {
      const double factor = a[row * n + column] / largest;
      for (size_t k = column + 1; k < n; ++k) a[row * n + k] -= factor * a[column * n + k];
    }
  }
  return determinant;
}

void Det(std::span<const Tensor* const> inputs, const Attrs&, size_t, const Tensor& output) {
  const Tensor& data = *inputs[0];
  const Shape& shape = data.shape();
  if (shape.size() < 2 || shape[shape.size() - 1] != shape[shape.size() - 2]) {
    throw Error(ErrorKind::kRuntime, "det: the data's last two axes are not a square matrix");
  }
  const size_t n = size_t(shape.back());
  const int64_t matrices = output.element_count();
  host::VisitFloatType(data.dtype(), "det", [&](auto zero) {
    using T = decltype(zero);
    using Wide = std::conditional_t<std::is_same_v<T, Float16>, float, T>;
    const T* source = data.data<T>();
    T* target = output.data<T>();
    std::vector<double> matrix(n * n);
    for (int64_t index = 0; index < matrices; ++index) {
      const T* elements = source + size_t(index) * n * n;
      for (size_t at = 0; at < n * n; ++at) matrix[at] = double(static_cast<Wide>(elements[at]));
      const double determinant = Determinant(matrix, n);
      if constexpr (std::is_same_v<T, Float16>) {
        target[index] = Float16(static_cast<float>(determinant));
      } else {
        target[index] = static_cast<T>(determinant);
      }
    }
  });
}

}  // namespace

void AttachLinearAlgebraKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"det", Det}});
}

}  // namespace relay::kernels
