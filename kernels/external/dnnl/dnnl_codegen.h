// The oneDNN codegen ("dnnl", Debian's libdnnl-dev): convolutions with their
// bias, activation and residual add as post-ops, dense, matmul,
// batch_matmul, pooling, softmax and layer_norm, as oneDNN primitives
// created once per input shape and cached; consecutive oneDNN operators of a
// region pass tensors in oneDNN's blocked layouts.
//
// Float32 only. Its rules (dnnl_rules.cc) accept the calls it runs exactly
// as relay-vm's kernels compute them; a unit that oneDNN has no primitive
// for at the shapes a run brings (a pool window over padding alone, a `?`
// residual that broadcasts, an empty tensor) runs on relay-vm's kernels.
// Weights that are immutable tensors are reordered once and kept with them
// (Tensor::Derived); other inputs are reordered per run where needed.
//
// Errors: Compile throws kCompile, Load kLoad, naming the symbol and the
// operator; Run throws kUsage for inputs of the wrong number, dtype or
// shape, and kDevice "oneDNN: OPERATION: MESSAGE" for oneDNN's failures.
// Thread-safety: a loaded function may run on many threads at once; each
// run has its own buffers, stream and scratchpad. oneDNN runs its
// primitives on its own OpenMP threads, not relay-vm's thread pool.
#pragma once

#include "kernels/external/external_codegen.h"

namespace relay::kernels::external {

const ExternalCodegen& DnnlCodegen();

}  // namespace relay::kernels::external
