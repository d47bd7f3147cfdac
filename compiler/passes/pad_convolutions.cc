#include "compiler/passes/pad_convolutions.h"

#include <array>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/expr_functor.h"
#include "compiler/passes/pass_util.h"
#include "kernels/compute/convolution_compute.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::passes {

namespace {

using namespace relay::ir;

const kernels::AttrValue* FindAttr(const kernels::Attrs& attrs, const std::string& name) {
  for (const auto& [key, value] : attrs) {
    if (key == name) return &value;
  }
  return nullptr;
}

// What padding a convolution's input takes: the data, and its padded shape
// and pad widths per axis; nothing when the convolution is left as it is.
struct InputPadding {
  std::vector<int64_t> padded_shape;
  std::vector<std::array<int64_t, 2>> widths;
};

std::optional<InputPadding> PaddingToMove(const CallNode& call) {
  const auto* op = As<OpNode>(call.callee);
  if (op == nullptr || op->name() != "nn.conv2d" || call.args.size() != 2) return std::nullopt;
  const auto* data = As<TensorTypeNode>(call.args[0]->checked_type());
  if (data == nullptr || data->shape.size() != 4 ||
      (data->dtype != DType::kFloat32 && data->dtype != DType::kFloat64)) {
    return std::nullopt;
  }
  for (int64_t extent : data->shape) {
    if (extent == kAnyDim) return std::nullopt;
  }
  const kernels::AttrValue* groups = FindAttr(call.attrs, "groups");
  const kernels::AttrValue* layout = FindAttr(call.attrs, "data_layout");
  if (groups == nullptr || groups->as_int() != 1 || layout == nullptr) return std::nullopt;
  const std::string& letters = layout->as_string();
  const size_t height = letters.find('H'), width = letters.find('W');
  if (letters.size() != 4 || height == std::string::npos || width == std::string::npos) {
    return std::nullopt;
  }
  // top, left, bottom, right
  const std::array<int64_t, 4> padding = kernels::Padding(call.attrs);
  if (padding == std::array<int64_t, 4>{0, 0, 0, 0}) return std::nullopt;
  InputPadding result{data->shape, std::vector<std::array<int64_t, 2>>(4, {0, 0})};
  result.widths[height] = {padding[0], padding[2]};
  result.widths[width] = {padding[1], padding[3]};
  for (size_t axis = 0; axis < 4; ++axis)
    result.padded_shape[axis] += result.widths[axis][0] + result.widths[axis][1];
  return result;
}

// nn.pad(data, 0, pad_width=widths), typed.
Expr PadCall(const Expr& data, const InputPadding& padding, DType dtype, const Span& span) {
  static const kernels::OperatorDefinition* const definition = kernels::FindOperator("nn.pad");
  std::vector<kernels::AttrValue> widths;
  for (const auto& [before, after] : padding.widths)
    widths.push_back(kernels::AttrValue::IntList({before, after}));
  const kernels::Attrs given{{"pad_width", kernels::AttrValue::List(std::move(widths))}};
  kernels::Attrs attrs;
  const std::optional<std::string> problem =
      kernels::NormalizeAttrs(definition->attributes, given, attrs);
  RELAY_CHECK(!problem, "nn.pad refused a convolution's padding: " + problem.value_or(""));

  Ref<Tensor> zero = Tensor::Empty(HostDevice(), {}, dtype);
  if (dtype == DType::kFloat32) {
    *zero->data<float>() = 0.0f;
  } else {
    *zero->data<double>() = 0.0;
  }
  Expr pad_value = Make<ConstantNode>(zero, span);
  pad_value->set_checked_type(ScalarType(dtype));
  Expr pad = Make<CallNode>(Make<OpNode>(definition, span), std::vector<Expr>{data, pad_value},
                            std::move(attrs), std::vector<Type>{}, span);
  pad->set_checked_type(TensorType(padding.padded_shape, dtype));
  return pad;
}

// Rewrites each convolution call to `let %padded = nn.pad(..); conv`, then
// lifts that let out of a binding's value, so that the chain stays flat:
// `let %y = conv(..)` becomes `let %padded = nn.pad(..); let %y = conv(..)`.
class ConvolutionPadder : public TypedExprMutator {
 protected:
  Expr RewriteTyped(const Expr&, const Expr& rebuilt) override {
    if (const auto* call = As<CallNode>(rebuilt)) return Padded(rebuilt, *call);
    const auto* let = As<LetNode>(rebuilt);
    if (let == nullptr || !made_.count(let->value.get())) return rebuilt;
    const auto* inner = As<LetNode>(let->value);
    return TypedLet(inner->var, inner->value, TypedLet(let->var, inner->body, let->body));
  }

 private:
  Expr Padded(const Expr& expr, const CallNode& call) {
    std::optional<InputPadding> padding = PaddingToMove(call);
    if (!padding) return expr;
    const DType dtype = As<TensorTypeNode>(call.args[0]->checked_type())->dtype;
    Expr pad = PadCall(call.args[0], *padding, dtype, call.span());
    Var padded = FreshVar("padded", pad);
    kernels::Attrs attrs = call.attrs;
    for (auto& [name, value] : attrs) {
      if (name == "padding") value = kernels::AttrValue::IntList({0, 0, 0, 0});
    }
    Expr convolution = Make<CallNode>(call.callee, std::vector<Expr>{padded, call.args[1]},
                                      std::move(attrs), call.type_args, call.span());
    convolution->set_checked_type(call.checked_type());
    Expr result = TypedLet(padded, pad, convolution);
    made_.insert(result.get());
    return result;
  }

  std::unordered_set<const ExprNode*> made_;  // the lets Padded built
};

}  // namespace

Function PadConvolutionInputs(const Function& function) {
  ConvolutionPadder padder;
  return WithBody(function, padder.Mutate(function->body));
}

}  // namespace relay::passes
