// Compute definitions of the injective data-movement operators (reshape,
// transpose, strided_slice, take, concatenate, pad, ...), attached to the
// operator table by AttachTransformComputes (kernels/operator_table.h).
//
// Unlike the elementwise definitions, these are specialised to constant
// shapes: where an output element comes from depends on every input
// dimension (reshape's unravelling, slicing's clamped bounds, concatenate's
// offsets), and the type relation that resolves those needs known
// dimensions. Their inputs must therefore carry constant (IntImm) shapes,
// and a caller compiles one kernel per distinct input shape.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

// The fields of the result of a tuple-valued operator (split) whose
// TensorExpr `inputs` have constant shapes, one TensorExpr per field; the
// table's ComputeFunction returns a single tensor, so these live here.
// Throws kUsage for an operator without a tuple compute or for attributes
// the operator's type relation rejects.
std::vector<TensorExpr> ComputeTupleResult(std::string_view operator_name,
                                           std::span<const TensorExpr> inputs, const Attrs& attrs);

}  // namespace relay::kernels
