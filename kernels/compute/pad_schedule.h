// The schedule for constant padding: nn.pad's constant mode, with any
// elementwise operators fused before it (a bias and an activation whose
// result a convolution then reads padded), and the padded store of a
// contraction fused before it (see contraction_schedule.h).
//
// The generic schedule stores every output element through the padding
// test, with the data's index clamped into its buffer (both arms of a
// select are evaluated), and a clamped index is no longer affine in the
// vector lanes: the copy becomes gathers. Here the output's rows (every
// axis but the last, flattened) run in parallel chunks; a row in the
// padding along a leading axis is filled with the pad value, any other row
// is three runs: the value, the data's row copied (evaluated) without a
// test, and the value again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/attributes.h"
#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

// A constant padding of a tensor of constant shape: the widths before and
// after each axis, and the value (of the tensor's dtype) that fills them.
struct ConstantPadding {
  std::vector<int64_t> extents;  // the tensor's, before padding
  std::vector<int64_t> before, after;
  kir::Expr value;
  std::vector<int64_t> PaddedExtents() const;
};

// nn.pad's normalised `pad_attributes` and scalar `pad_value` applied to
// `data`, or nothing when they are not a constant padding of a tensor of
// constant shape with elements.
std::optional<ConstantPadding> ConstantPaddingOf(const TensorExpr& data,
                                                 const TensorExpr& pad_value,
                                                 const Attrs& pad_attributes);

// The parallel loop nest storing `padding.value` into the padding of `out`
// (a buffer of the padded shape), and `interior` (of the unpadded shape,
// when given) into the rest.
kir::Stmt StorePadded(const kir::Buffer& out, const ConstantPadding& padding,
                      const TensorExpr* interior);

// The kernel storing `data` padded by nn.pad's normalised `pad_attributes`
// with the scalar `pad_value`, or nothing when this schedule does not serve
// the call: not a constant padding (ConstantPaddingOf), or data that holds
// a reduction (a fused contraction's sum, which its own schedule stores
// padded).
std::optional<kir::Kernel> BuildPadKernel(const std::string& name,
                                          const std::vector<kir::Buffer>& inputs,
                                          const TensorExpr& data, const TensorExpr& pad_value,
                                          const Attrs& pad_attributes);

}  // namespace relay::kernels
