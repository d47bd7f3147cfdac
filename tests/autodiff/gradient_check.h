// Checking reverse-mode gradients against central finite differences.
//
// CheckGradient differentiates @entry of a program with AddGradient, runs
// @entry_grad (with the reference evaluator, and, when asked, compiled on
// the VM), and compares every gradient with
//
//   (f(x + eps e_i) - f(x - eps e_i)) / (2 eps)
//
// where f is the sum of every element of @entry's result, computed in
// float64. The oracle is independent of the code under test: it only
// evaluates the original program. Programs should run in float64 and keep
// away from kinks (relu at 0, max ties) by their choice of inputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "relay/value.h"

namespace relay::testing {

struct GradientCheckOptions {
  std::string entry = "main";
  double epsilon = 1e-6;
  // |analytic - numeric| <= tolerance * max(1, |numeric|).
  double tolerance = 1e-6;
  // Also compile the gradient program and run it on the VM, whose results
  // must agree with the evaluator's to the same tolerance.
  bool on_vm = true;
};

// Checks the gradient of @entry of `program` (Relay text, without the
// version line) at `arguments`; reports failures with gtest, naming the
// parameter and element.
void CheckGradient(const std::string& program, const std::vector<Value>& arguments,
                   const GradientCheckOptions& options = {});

// Checks that @entry of `program` returns (result, d) where result is
// @reference's result and d is @reference_grad's gradient in `slot`: for a
// gradient reached another way (through an ADT parameter, say) than the
// one CheckGradient verified.
void ExpectSameAsGradientOf(const std::string& program, const std::string& entry,
                            const std::string& reference, const std::vector<Value>& arguments,
                            size_t slot);

// A float64 tensor of `shape` with elements uniform in [low, high).
Value RandomTensor(const std::vector<int64_t>& shape, std::mt19937& random, double low = -1,
                   double high = 1);
// A float64 tensor of `shape` whose elements are `values` in row-major order.
Value TensorOf(const std::vector<int64_t>& shape, const std::vector<double>& values);

}  // namespace relay::testing
