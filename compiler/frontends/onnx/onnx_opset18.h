// Opset 18 models on ONNX 1.12, whose checker and shape inference know the
// default domain's operators only up to opset 17: the operators opset 18
// changed are rewritten in their opset-17 form where the model allows it
// (the axes of reductions and Pad as attributes or full pads, Split's
// num_outputs as an equal split, Mish as its function body), and the model
// then imports as opset 17.
#pragma once

#include <string>

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace relay::onnx_import {

// Rewrites `model`, which imports opset 18 of the default domain, in place
// as an opset-17 model computing the same. Constants the rewrite needs
// (axes) are read from initializers and Constant nodes, external data from
// `folder`. Throws relay::Error (kCompile) naming a node whose opset-18 form
// has no opset-17 equivalent here (axes computed at run time, Resize's
// antialiasing, ...), with `origin` naming the model.
void RewriteOpset18As17(onnx::ModelProto& model, const std::string& origin,
                        const std::string& folder);

}  // namespace relay::onnx_import
