// Compute definitions: how an operator's output element is computed from
// its inputs' elements, in kernel IR (docs/architecture.md,
// "Kernel IR, schedules and the LLVM JIT").
//
// A TensorExpr is a tensor not yet materialised: its shape, its dtype and a
// function from output indices to the scalar kernel-IR expression of that
// element. An operator's compute definition maps input TensorExprs to an
// output TensorExpr. Fusion is composition: a producer's TensorExpr passed
// straight to its consumer inlines the producer into the consumer's loop,
// so a chain of elementwise operators becomes one loop nest, one kernel.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/kir/kir.h"

namespace relay::kernels {

struct TensorExpr {
  std::vector<kir::Expr> shape;  // int64 kernel-IR expressions
  DType dtype = DType::kFloat32;
  std::function<kir::Expr(const std::vector<kir::Expr>& indices)> at;

  size_t ndim() const { return shape.size(); }
};

// The elements of a buffer (a kernel input).
TensorExpr FromBuffer(const kir::Buffer& buffer);

// `input` read at output `indices` of a broadcast to `output_shape`
// (NumPy rules: trailing axes align; an input dimension of 1 repeats).
// Dimensions only known at run time are checked there: an index into a
// dimension whose value turns out to be 1 reads element 0.
kir::Expr BroadcastRead(const TensorExpr& input, const std::vector<kir::Expr>& output_shape,
                        const std::vector<kir::Expr>& indices);

// The broadcast shape of `inputs` (the shapes are assumed compatible: the
// type relation has checked them).
std::vector<kir::Expr> BroadcastShape(std::span<const TensorExpr> inputs);

// The dtype in which a dot product (dense, matmul, convolution) with result
// dtype `out_dtype` accumulates: float32 for float16 and float32 (as BLAS
// libraries, PyTorch and ONNX Runtime do: the vector units' FMA width), the
// dtype itself otherwise (float64; integers, which wrap).
DType DotAccumulator(DType out_dtype);

using ComputeFunction =
    std::function<TensorExpr(std::span<const TensorExpr> inputs, const Attrs& attrs)>;

}  // namespace relay::kernels
