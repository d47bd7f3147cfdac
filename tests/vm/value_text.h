// Comparing printed values (relay::FormatValue) from two implementations.
//
// The VM fuses operator chains into one kernel, which may contract a * b + c
// into a fused multiply-add; the reference evaluator runs each operator on
// its own. Results then differ in the last bit of some floats, so numbers
// are compared with a relative tolerance and everything else exactly.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace relay::testing {

// Whether `a` and `b` print the same value: the same text outside numbers,
// and numbers within `tolerance` * max(1, |b|) of each other.
inline bool SameValueText(const std::string& a, const std::string& b, double tolerance = 1e-5) {
  size_t i = 0, j = 0;
  auto starts_number = [](const std::string& text, size_t at) {
    if (at >= text.size()) return false;
    if (std::isdigit(static_cast<unsigned char>(text[at]))) return true;
    return text[at] == '-' && at + 1 < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[at + 1]));
  };
  while (i < a.size() && j < b.size()) {
    // A number begins a token only where a name or suffix does not continue.
    const bool word_before_a = i > 0 && std::isalnum(static_cast<unsigned char>(a[i - 1]));
    const bool word_before_b = j > 0 && std::isalnum(static_cast<unsigned char>(b[j - 1]));
    if (!word_before_a && !word_before_b && starts_number(a, i) && starts_number(b, j)) {
      char* end_a = nullptr;
      char* end_b = nullptr;
      const double x = std::strtod(a.c_str() + i, &end_a);
      const double y = std::strtod(b.c_str() + j, &end_b);
      if (std::abs(x - y) > tolerance * std::max(1.0, std::abs(y))) return false;
      i = static_cast<size_t>(end_a - a.c_str());
      j = static_cast<size_t>(end_b - b.c_str());
      continue;
    }
    if (a[i] != b[j]) return false;
    ++i;
    ++j;
  }
  return i == a.size() && j == b.size();
}

}  // namespace relay::testing
