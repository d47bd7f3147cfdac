// The oneDNN codegen's rule table and the split of a graph into its units.
//
// Every predicate accepts only what dnnl_plan.cc runs exactly as relay-vm's
// own kernels compute it (kernels/compute/*_compute.cc): float32 tensors,
// NCHW data and OIHW kernels, out_dtype empty or float32. Dimensions may be
// `?` wherever a plan, built per distinct input shapes, handles any extent;
// a step whose role depends on a shape (a bias is a vector of the output
// channels) needs that shape known.
#include "kernels/external/dnnl/dnnl_rules.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "kernels/operators/relation_helpers.h"
#include "relay/error.h"

namespace relay::kernels::external::onednn {
namespace {

bool IsFloat32Tensor(const ValueType& type) {
  return !type.is_tuple && type.dtype == DType::kFloat32;
}

bool AllFloat32(const CallView& call) {
  return IsFloat32Tensor(call.result) &&
         std::all_of(call.inputs.begin(), call.inputs.end(), IsFloat32Tensor);
}

bool StringIs(const Attrs& attrs, std::string_view name,
              std::initializer_list<std::string_view> allowed) {
  const std::string& value = StringAttr(attrs, name);
  return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

bool Float32Result(const Attrs& attrs) {
  return StringIs(attrs, "out_dtype", {"", "float32"});
}

// `axis` of a tensor of rank `rank`, counted from the front; nullopt when out
// of range.
std::optional<size_t> AxisOf(int64_t axis, size_t rank) {
  const int64_t normalized = axis < 0 ? axis + int64_t(rank) : axis;
  if (normalized < 0 || normalized >= int64_t(rank)) return std::nullopt;
  return size_t(normalized);
}

// Whether `shape` broadcasts against a result of rank `rank` as a vector
// along axis `axis` of extent `extent` (known): all ones but that axis.
bool IsVectorAlong(const std::vector<int64_t>& shape, size_t rank, size_t axis, int64_t extent) {
  if (extent == kAnyDim || shape.size() > rank || rank - shape.size() > axis) return false;
  const size_t offset = rank - shape.size();
  for (size_t index = 0; index < shape.size(); ++index) {
    if (shape[index] != (index + offset == axis ? extent : 1)) return false;
  }
  return true;
}

// An add or multiply whose one operand has the result's type and whose other
// is a vector along `axis` of the result (a bias written as add, a
// per-channel scale).
bool IsVectorOperation(const CallView& call, size_t axis) {
  const size_t rank = call.result.shape.size();
  if (call.inputs.size() != 2 || axis >= rank) return false;
  for (size_t chained = 0; chained < 2; ++chained) {
    const ValueType& bias = call.inputs[1 - chained];
    if (call.inputs[chained] == call.result &&
        IsVectorAlong(bias.shape, rank, axis, call.result.shape[axis])) {
      return true;
    }
  }
  return false;
}

// ---- single operators -----------------------------------------------------------

bool Conv2DAccepted(const CallView& call) {
  return AllFloat32(call) && call.inputs[0].shape.size() == 4 && call.inputs[1].shape.size() == 4 &&
         StringIs(call.attrs, "data_layout", {"NCHW"}) &&
         StringIs(call.attrs, "kernel_layout", {"OIHW"}) &&
         StringIs(call.attrs, "out_layout", {"", "NCHW"}) && Float32Result(call.attrs);
}

// Max and average pools: every window must hold a cell of the input, so that
// no result is a pool over padding alone (relay-vm's -inf or 0), and
// count_include_pad's divisor must be the window's area (ceil_mode's extra
// windows count only the padded input's cells there).
bool Pool2DAccepted(const CallView& call) {
  if (!AllFloat32(call) || call.inputs[0].shape.size() != 4 ||
      !StringIs(call.attrs, "layout", {"NCHW"}) ||
      !StringIs(call.attrs, "out_layout", {"", "NCHW"})) {
    return false;
  }
  if (call.op == "nn.avg_pool2d" && BoolAttr(call.attrs, "ceil_mode") &&
      BoolAttr(call.attrs, "count_include_pad")) {
    return false;
  }
  const std::array<int64_t, 2> pool = SpatialPair(call.attrs, "pool_size");
  const std::array<int64_t, 4> padding = PaddingSides(call.attrs);
  for (size_t side = 0; side < 4; ++side) {
    if (padding[side] >= pool[side % 2]) return false;
  }
  return true;
}

bool GlobalPool2DAccepted(const CallView& call) {
  return AllFloat32(call) && call.inputs[0].shape.size() == 4 &&
         StringIs(call.attrs, "layout", {"NCHW"}) &&
         StringIs(call.attrs, "out_layout", {"", "NCHW"});
}

bool MatmulAccepted(const CallView& call) {
  return AllFloat32(call) && Float32Result(call.attrs);
}

bool SoftmaxAccepted(const CallView& call) {
  return AllFloat32(call) && AxisOf(IntAttr(call.attrs, "axis"), call.result.shape.size());
}

// oneDNN normalises over the innermost axis only.
bool LayerNormAccepted(const CallView& call) {
  const size_t rank = call.result.shape.size();
  return AllFloat32(call) && rank >= 1 && AxisOf(IntAttr(call.attrs, "axis"), rank) == rank - 1;
}

// ---- composite steps ------------------------------------------------------------

// A bias along the channels (axis 1) of a convolution's NCHW result.
bool ConvBiasAccepted(const CallView& call) {
  if (!AllFloat32(call) || call.result.shape.size() != 4) return false;
  if (call.op == "nn.bias_add") return AxisOf(IntAttr(call.attrs, "axis"), 4) == 1;
  return IsVectorOperation(call, 1);
}

// A scale along the channels of a convolution's NCHW result (a batch norm,
// simplify_batch_norm.h).
bool ConvScaleAccepted(const CallView& call) {
  return AllFloat32(call) && call.result.shape.size() == 4 && IsVectorOperation(call, 1);
}

// A bias along the units (the last axis) of a dense result.
bool DenseBiasAccepted(const CallView& call) {
  const size_t rank = call.result.shape.size();
  if (!AllFloat32(call) || rank == 0) return false;
  if (call.op == "nn.bias_add") return AxisOf(IntAttr(call.attrs, "axis"), rank) == rank - 1;
  return IsVectorOperation(call, rank - 1);
}

// A residual: an add of two tensors of the result's type (a `?` that turns
// out to broadcast at run time is run by relay-vm's kernels).
bool ResidualAccepted(const CallView& call) {
  return AllFloat32(call) && call.inputs.size() == 2 && call.inputs[0] == call.result &&
         call.inputs[1] == call.result;
}

bool ActivationAccepted(const CallView& call) {
  return AllFloat32(call) && IsActivation(call.op);
}

// The activations a chain ends with (a function, so that the table may be
// built during static initialisation).
const std::vector<std::string>& Activations() {
  static const std::vector<std::string> activations = {"nn.relu", "clip", "nn.leaky_relu",
                                                       "sigmoid", "tanh"};
  return activations;
}

// Composite steps, each named for what it matches.

PatternStep Conv2D() {
  return {{"nn.conv2d"}, false, Conv2DAccepted};
}
PatternStep Dense() {
  return {{"nn.dense"}, false, MatmulAccepted};
}
PatternStep ConvBias(bool optional) {
  return {{"nn.bias_add", "add"}, optional, ConvBiasAccepted};
}
PatternStep DenseBias(bool optional) {
  return {{"nn.bias_add", "add"}, optional, DenseBiasAccepted};
}
PatternStep ConvScale() {
  return {{"multiply"}, false, ConvScaleAccepted};
}
PatternStep Residual(bool optional) {
  return {{"add"}, optional, ResidualAccepted};
}
PatternStep Activation(bool optional) {
  return {Activations(), optional, ActivationAccepted};
}

}  // namespace

bool IsActivation(std::string_view op) {
  const std::vector<std::string>& activations = Activations();
  return std::find(activations.begin(), activations.end(), op) != activations.end();
}

// The table. A composite's "relu" is any of Activations() (relu, clip as
// relu6, leaky_relu, sigmoid, tanh), each one eltwise post-op; a bias is
// nn.bias_add or an add of a vector along the channels; "add" is a residual
// of the result's shape, oneDNN's sum post-op. Rules are tried in order, so
// the longer chains come first.
const RuleTable& DnnlRules() {
  static const RuleTable table = {
      .composites =
          {
              // A batch norm after the convolution: its per-channel scale and
              // shift (simplify_batch_norm.h) as binary post-ops.
              {"dnnl.conv2d_bias_batch_norm_add_relu",
               {Conv2D(), ConvBias(true), ConvScale(), ConvBias(false), Residual(true),
                Activation(true)}},
              {"dnnl.conv2d_bias_add_relu",
               {Conv2D(), ConvBias(true), Residual(false), Activation(true)}},
              {"dnnl.conv2d_bias_relu", {Conv2D(), ConvBias(false), Activation(true)}},
              {"dnnl.conv2d_relu", {Conv2D(), Activation(false)}},
              {"dnnl.dense_bias_add_relu",
               {Dense(), DenseBias(true), Residual(false), Activation(true)}},
              {"dnnl.dense_bias_relu", {Dense(), DenseBias(false), Activation(true)}},
              {"dnnl.dense_relu", {Dense(), Activation(false)}},
          },
      .operators =
          {
              {"nn.conv2d", Conv2DAccepted},
              {"nn.dense", MatmulAccepted},
              {"nn.matmul", MatmulAccepted},
              {"nn.batch_matmul", MatmulAccepted},
              {"nn.max_pool2d", Pool2DAccepted},
              {"nn.avg_pool2d", Pool2DAccepted},
              {"nn.global_avg_pool2d", GlobalPool2DAccepted},
              {"nn.softmax", SoftmaxAccepted},
              {"nn.layer_norm", LayerNormAccepted},
          },
  };
  return table;
}

std::array<int64_t, 4> PaddingSides(const Attrs& attrs) {
  const std::vector<int64_t> values = IntListAttr(attrs, "padding");
  switch (values.size()) {
    case 1:
      return {values[0], values[0], values[0], values[0]};
    case 2:
      return {values[0], values[1], values[0], values[1]};
    case 4:
      return {values[0], values[1], values[2], values[3]};
    default:
      throw Error(ErrorKind::kInternal, "padding of " + std::to_string(values.size()) +
                                            " values passed the type relation");
  }
}

std::array<int64_t, 2> SpatialPair(const Attrs& attrs, std::string_view name) {
  const std::vector<int64_t> values = IntListAttr(attrs, name);
  RELAY_CHECK(values.size() == 1 || values.size() == 2, std::string(name) + " is a pair");
  return {values.front(), values.back()};
}

// ---- units ----------------------------------------------------------------------

namespace {

// Matches composite rules against a graph's operators.
class CompositeMatcher {
 public:
  explicit CompositeMatcher(const ExternalGraph& graph) : graph_(graph) {
    uses_.assign(graph.operators.size(), 0);
    for (const FusedOperator& call : graph.operators) {
      for (int32_t input : call.inputs) {
        if (input < 0) ++uses_[size_t(-(input + 1))];
      }
    }
    ++uses_.back();  // the graph's result
  }

  // The types of operator `position`'s operands.
  std::vector<ValueType> OperandTypes(size_t position) const {
    std::vector<ValueType> types;
    for (int32_t input : graph_.operators[position].inputs) {
      types.push_back(input >= 0 ? graph_.params[size_t(input)]
                                 : graph_.types[size_t(-(input + 1))]);
    }
    return types;
  }

  bool Accepts(const CallPredicate& accepts, size_t position) const {
    if (!accepts) return true;
    const std::vector<ValueType> operands = OperandTypes(position);
    const FusedOperator& call = graph_.operators[position];
    return accepts(CallView{call.op, call.attrs, operands, graph_.types[position]});
  }

  // The end of the longest match of `rule`'s steps [step, ...) at operator
  // `position`, operators of composite index `composite`; optional steps are
  // taken where the rest still matches.
  std::optional<size_t> Match(const CompositeRule& rule, int32_t composite, size_t step,
                              size_t position) const {
    if (step == rule.steps.size()) return position;
    const PatternStep& pattern = rule.steps[step];
    if (StepMatches(pattern, composite, step, position)) {
      if (std::optional<size_t> end = Match(rule, composite, step + 1, position + 1)) return end;
    }
    if (pattern.optional) return Match(rule, composite, step + 1, position);
    return std::nullopt;
  }

 private:
  bool StepMatches(const PatternStep& pattern, int32_t composite, size_t step,
                   size_t position) const {
    if (position >= graph_.operators.size() || graph_.composites[position] != composite) {
      return false;
    }
    const FusedOperator& call = graph_.operators[position];
    if (std::find(pattern.ops.begin(), pattern.ops.end(), call.op) == pattern.ops.end()) {
      return false;
    }
    if (step > 0) {
      // The previous step's result, used here once and nowhere else.
      const int32_t previous = -1 - int32_t(position - 1);
      if (std::count(call.inputs.begin(), call.inputs.end(), previous) != 1 ||
          uses_[position - 1] != 1) {
        return false;
      }
    }
    return Accepts(pattern.accepts, position);
  }

  const ExternalGraph& graph_;
  std::vector<size_t> uses_;
};

}  // namespace

std::vector<Unit> SplitIntoUnits(const ExternalGraph& graph, ErrorKind kind,
                                 const std::string& symbol) {
  const RuleTable& rules = DnnlRules();
  const CompositeMatcher matcher(graph);
  auto fail = [&](size_t position, const std::string& problem) {
    throw Error(kind, symbol + ": operator " + std::to_string(position) + " (" +
                          graph.operators[position].op + ") " + problem);
  };
  for (const ValueType& param : graph.params) {
    if (!IsFloat32Tensor(param)) {
      throw Error(kind,
                  symbol + ": the dnnl codegen takes float32 tensors, not " + param.ToString());
    }
  }
  std::vector<Unit> units;
  size_t position = 0;
  while (position < graph.operators.size()) {
    const int32_t composite = graph.composites[position];
    if (composite < 0) {
      const std::string& op = graph.operators[position].op;
      auto rule = std::find_if(rules.operators.begin(), rules.operators.end(),
                               [&](const OperatorRule& candidate) { return candidate.op == op; });
      if (rule == rules.operators.end()) fail(position, "is not an operator the dnnl codegen runs");
      if (!matcher.Accepts(rule->accepts, position)) {
        fail(position, "has attributes or types the dnnl codegen does not run");
      }
      units.push_back({position, position + 1, nullptr});
      ++position;
      continue;
    }
    const std::string& name = graph.composite_names[size_t(composite)];
    auto rule =
        std::find_if(rules.composites.begin(), rules.composites.end(),
                     [&](const CompositeRule& candidate) { return candidate.name == name; });
    if (rule == rules.composites.end()) {
      fail(position, "is in composite '" + name + "', not a dnnl pattern");
    }
    const std::optional<size_t> end = matcher.Match(*rule, composite, 0, position);
    if (!end.has_value() || *end == position) {
      fail(position, "does not begin a '" + name + "' pattern");
    }
    units.push_back({position, *end, &*rule});
    position = *end;
  }
  return units;
}

}  // namespace relay::kernels::external::onednn
