// Random well-typed Relay programs for differential testing of the VM
// against the reference evaluator (docs/architecture.md, "Tests and
// benchmarks").
//
// A program is Relay text: a few helper globals (bounded loops, list
// builders) and @main(), which returns a tuple of values of the generator's
// types: int32 and bool scalars, float32 tensors of shape (2, 3), lists and
// options of int32, tuples, closures (only called, never returned), and
// references. Every program terminates: the only recursion is in generated
// loops (globals, and let-bound closures whose tail calls cross their
// arguments) whose counter decreases from a small constant. Integer arithmetic
// may wrap; both implementations run the same kernels, so results are
// deterministic.
#pragma once

#include <cstdint>
#include <string>

namespace relay::testing {

// The program for `seed` (the same seed always gives the same text).
std::string GenerateProgram(uint64_t seed);

}  // namespace relay::testing
