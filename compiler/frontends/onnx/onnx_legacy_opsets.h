// Models of opsets 1 to 6: most operators read the same then as from
// opset 7, which the converters are written for; the few whose form
// differs (an attribute that later became an input, legacy broadcasting
// along an axis) are refused by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace onnx {
class NodeProto;
}

namespace relay::onnx_import {

// Why `node`, in a model of default-domain opset `opset` (below 7), has a
// form the converters do not read; nothing when it reads as in opset 7.
std::optional<std::string> LegacyFormProblem(const onnx::NodeProto& node, int64_t opset);

}  // namespace relay::onnx_import
