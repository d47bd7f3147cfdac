// The C++ kernel of dft (definition in kernels/operators/signal.cc): each row
// along the last axis transformed in double precision, by an iterative
// radix-2 FFT when its length is a power of two and by the direct O(N^2)
// sum otherwise, both with twiddle factors taken from one table of
// exp(-+2 pi i j / N) so that rounding stays that of one sin and cos each.
#include <cmath>
#include <complex>
#include <numbers>
#include <type_traits>
#include <vector>

#include "kernels/host/host_kernel_helpers.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::kernels {
namespace {

using Complex = std::complex<double>;

template <typename T>
double Widen(T value) {
  return static_cast<double>(
      static_cast<std::conditional_t<std::is_same_v<T, Float16>, float, T>>(value));
}

template <typename T>
T Narrow(double value) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// exp(sign 2 pi i j / N) for j in [0, N).
std::vector<Complex> Twiddles(int64_t length, double sign) {
  std::vector<Complex> table(static_cast<size_t>(length));
  for (int64_t j = 0; j < length; ++j) {
    const double angle = 2 * std::numbers::pi * double(j) / double(length);
    table[size_t(j)] = Complex(std::cos(angle), sign * std::sin(angle));
  }
  return table;
}

bool IsPowerOfTwo(int64_t length) {
  return length > 0 && (length & (length - 1)) == 0;
}

// In place: Cooley-Tukey on the bit-reversed permutation.
void RadixTwo(std::vector<Complex>& row, const std::vector<Complex>& twiddles) {
  const size_t length = row.size();
  for (size_t i = 1, j = 0; i < length; ++i) {
    size_t bit = length >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(row[i], row[j]);
  }
  for (size_t span = 2; span <= length; span <<= 1) {
    const size_t stride = length / span;  // twiddle step at this span
    for (size_t start = 0; start < length; start += span) {
      for (size_t k = 0; k < span / 2; ++k) {
        const Complex odd = row[start + k + span / 2] * twiddles[k * stride];
        row[start + k + span / 2] = row[start + k] - odd;
        row[start + k] += odd;
      }
    }
  }
}

// X[k] = sum_n x[n] w[(k n) mod N]; the product's index is kept modulo N as
// it grows, so no k n overflows.
void Direct(const std::vector<Complex>& row, const std::vector<Complex>& twiddles,
            std::vector<Complex>& result) {
  const size_t length = row.size();
  result.assign(length, Complex());
  for (size_t k = 0; k < length; ++k) {
    Complex sum;
    size_t at = 0;
    for (size_t n = 0; n < length; ++n) {
      sum += row[n] * twiddles[at];
      at += k;
      if (at >= length) at -= length;
    }
    result[k] = sum;
  }
}

// Result 0: the real parts; result 1: the imaginary parts.
void Dft(std::span<const Tensor* const> inputs, const Attrs& attrs, size_t result,
         const Tensor& output) {
  const Tensor& re = *inputs[0];
  const Tensor& im = *inputs[1];
  if (re.shape() != im.shape() || re.dtype() != im.dtype() || output.shape() != re.shape()) {
    throw Error(ErrorKind::kRuntime, "dft: the real and imaginary parts differ in shape or dtype");
  }
  if (re.element_count() == 0) return;
  const int64_t length = re.shape().back();
  const int64_t rows = re.element_count() / length;
  const bool inverse = BoolAttr(attrs, "inverse");
  const std::vector<Complex> twiddles = Twiddles(length, inverse ? 1.0 : -1.0);
  const double scale = inverse ? 1.0 / double(length) : 1.0;
  const bool fast = IsPowerOfTwo(length);
  host::VisitFloatType(re.dtype(), "dft", [&](auto zero) {
    using T = decltype(zero);
    const T* real = re.data<T>();
    const T* imaginary = im.data<T>();
    T* target = output.data<T>();
    std::vector<Complex> row(static_cast<size_t>(length)), transformed;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t n = 0; n < length; ++n) {
        row[size_t(n)] = Complex(Widen(real[r * length + n]), Widen(imaginary[r * length + n]));
      }
      if (fast) {
        RadixTwo(row, twiddles);
      } else {
        Direct(row, twiddles, transformed);
        row.swap(transformed);
      }
      for (int64_t k = 0; k < length; ++k) {
        const Complex value = row[size_t(k)] * scale;
        target[r * length + k] = Narrow<T>(result == 0 ? value.real() : value.imag());
      }
    }
  });
}

}  // namespace

void AttachSignalKernels(OperatorTableBuilder& table) {
  table.AttachHostKernels({{"dft", Dft}});
}

}  // namespace relay::kernels
