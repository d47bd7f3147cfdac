// Compute definitions of the neural-network operators (nn.dense, nn.matmul,
// nn.batch_matmul, nn.bias_add, nn.prelu, nn.softmax, nn.log_softmax,
// nn.layer_norm, nn.instance_norm, nn.group_norm, nn.batch_norm,
// nn.dropout), attached to the operator table by AttachNeuralNetworkComputes
// (kernels/operator_table.h).
//
// nn.batch_norm and nn.dropout have tuple results, which the table's
// single-tensor ComputeFunction cannot express: their fields come from
// NeuralNetworkTupleResult instead, and their table entries carry no compute.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/compute/tensor_expr.h"

namespace relay::kernels {

// The fields of the tuple result of nn.batch_norm (output, moving_mean,
// moving_var) or nn.dropout (output, mask) at inference, given TensorExpr
// `inputs` with constant shapes and attributes normalised and accepted by
// the operator's type relation; nullopt for any other operator.
std::optional<std::vector<TensorExpr>> NeuralNetworkTupleResult(std::string_view operator_name,
                                                                std::span<const TensorExpr> inputs,
                                                                const Attrs& attrs);

}  // namespace relay::kernels
