// XRT as an external codegen ("xrt"): a function marked Compiler="xrt" runs
// one kernel of the .xclbin loaded on xrt:0 (relay-vm run --xclbin), named by
// the state Compile wrote (the function's global_symbol, or the kernel a
// manifest names) with its arguments in the kernel's order.
//
// XrtCodegen() loads such functions and compiles hand-written ones (the
// kernel's buffers take the parameters in order, then the result; its
// integers the result's dimensions, outermost first). A manifest
// (xrt_manifest.h) gives the rule table that partitions programs for a
// user's kernels: one composite rule "xrt.NAME" per kernel, regions never
// merged. Both write the same state, two lines of text naming the kernel and
// its arguments in xrt_manifest.h's grammar ("inputN" being the function's
// N-th parameter):
//
//   kernel vadd
//   arguments input0 input1 output output.shape[0]
//
// so XrtCodegen() (which FindCodegen("xrt") returns) loads what either
// compiled, without the manifest.
//
// Compile throws kCompile naming the symbol for a result that is not one
// tensor of static shape, a global_symbol that cannot name a kernel, or a
// composite that is not the manifest's. Load throws kLoad naming the symbol
// for state that is not what Compile writes for that graph.
//
// A loaded function's Run checks its inputs' dtypes and shapes (kUsage),
// then finds the kernel on xrt:0: GetDevice's kDevice error where there is
// no XRT device ("no XRT device: ..."), kUsage "xrt kernel NAME is not loaded
// on xrt:0: give the .xclbin that holds it with --xclbin FILE", and kUsage
// when the kernel's buffer count differs from the state's or it takes more
// integers than the state lists (a kernel taking fewer gets the first ones).
// Inputs are copied to the card (an immutable tensor's copy is kept with it,
// Tensor::Derived, as the VM keeps its own); the result is allocated there
// and stays there.
//
// Thread-safety: codegens and loaded functions are immutable; the XRT device
// serialises the calls into the driver.
#pragma once

#include <memory>
#include <string>

#include "kernels/external/external_codegen.h"

namespace relay::kernels::external {

const ExternalCodegen& XrtCodegen();

// The codegen for the kernels the manifest at `path` describes. Throws kUsage
// naming the file and the problem for a manifest it cannot read.
std::shared_ptr<const ExternalCodegen> XrtCodegenFromManifest(const std::string& path);

}  // namespace relay::kernels::external
