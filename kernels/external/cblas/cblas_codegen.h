// The OpenBLAS codegen ("cblas"): float32 nn.dense, nn.matmul and
// nn.batch_matmul as cblas_sgemm calls, with any elementwise epilogue of a
// composite run by relay-vm's own kernels. The simplest example of the
// external codegen interface (docs/byoc.md).
//
// Rules: the three products (float32 inputs, out_dtype "" or "float32";
// matmul's and batch_matmul's transposes; batch_matmul's batch of 1
// broadcast; any `?` dimension), and the composite "cblas.dense_bias":
// nn.dense, then nn.bias_add along the last axis or add of a vector, then
// optionally nn.relu, nn.leaky_relu, clip, sigmoid or tanh. Regions merge.
//
// The state is empty. A loaded function runs on the host (inputs elsewhere
// are copied there) and returns a new host tensor; a bias of the product's
// width is sgemm's starting C (beta = 1), any other is added by relay-vm's
// add. Compile (kCompile) and Load (kLoad) refuse, naming the symbol and the
// operator, a graph holding an operator the rules do not accept; Run's
// shape errors are InferShapes' kUsage, a wrong input count or dtype kUsage
// naming the symbol.
//
// Thread-safety: Run may be called from many threads at once: each call
// allocates its own results, and OpenBLAS's threaded builds (0.3.21 here)
// take concurrent sgemm calls; tests/external/cblas_codegen_test.cc calls
// from 4 threads. OpenBLAS runs each sgemm on its own thread pool, beside
// relay-vm's.
#pragma once

#include "kernels/external/external_codegen.h"

namespace relay::kernels::external {

const ExternalCodegen& CblasCodegen();

}  // namespace relay::kernels::external
