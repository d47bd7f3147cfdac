// Building a plan: one oneDNN primitive per unit (a composite's bias,
// residual and activation as its bias and post-ops), each value in the
// layout its producer chose, and reorders only where a consumer needs
// another: convolutions and pools take and give oneDNN's blocked layouts
// (format_tag::any), so a chain of them reorders only at the graph's inputs
// and result; matmul, softmax and layer_norm read and write row-major
// tensors. A unit oneDNN has no implementation for, at these shapes, runs on
// relay-vm's kernels instead.
#include "kernels/external/dnnl/dnnl_plan.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <numeric>
#include <optional>

#include "kernels/operators/relation_helpers.h"

namespace relay::kernels::external::onednn {

const dnnl::engine& CpuEngine() {
  // Never destroyed: loaded functions' primitives, which refer to it, may
  // outlive static destruction.
  static const dnnl::engine* engine = [] {
    try {
      return new dnnl::engine(dnnl::engine::kind::cpu, 0);
    } catch (const dnnl::error& error) {
      throw DeviceError("creating the CPU engine", error);
    }
  }();
  return *engine;
}

Error DeviceError(const std::string& operation, const dnnl::error& error) {
  return Error(ErrorKind::kDevice, "oneDNN: " + operation + ": " + error.what() + " (" +
                                       dnnl_status2str(error.status) + ")");
}

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

constexpr memory::data_type kFloat32 = memory::data_type::f32;

// oneDNN dims of a tensor's shape; a scalar is one element.
memory::dims DimsOf(const Shape& shape) {
  if (shape.empty()) return {1};
  return memory::dims(shape.begin(), shape.end());
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  return std::accumulate(shape.begin() + begin, shape.begin() + end, int64_t{1},
                         std::multiplies<int64_t>());
}

bool HasZeroExtent(const Shape& shape) {
  return std::find(shape.begin(), shape.end(), 0) != shape.end();
}

memory::desc WithStrides(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, kFloat32, strides);
}

// Row-major (relay-vm's layout) `dims`.
memory::desc RowMajor(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t axis = dims.size(); axis-- > 1;) {
    strides[axis - 1] = strides[axis] * std::max<memory::dim>(dims[axis], 1);
  }
  return WithStrides(dims, strides);
}

memory::desc AnyLayout(const memory::dims& dims) {
  return memory::desc(dims, kFloat32, memory::format_tag::any);
}

// `dims`-ranked ones with `extent` at `axis`: a vector broadcast along it.
memory::desc VectorAlong(size_t rank, size_t axis, int64_t extent) {
  memory::dims dims(rank, 1);
  dims[axis] = extent;
  return RowMajor(dims);
}

// The attributes of every primitive: a scratchpad the caller passes (a run
// of its own per call, so that threads share none) and `post_ops`.
dnnl::primitive_attr Attributes(const dnnl::post_ops& post_ops = dnnl::post_ops()) {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attributes.set_post_ops(post_ops);
  return attributes;
}

// The key under which an input's reorder from `view` to `layout` is kept
// with the (immutable) input: one address per distinct pair for the life of
// the process.
const void* DerivedKey(const memory::desc& view, const memory::desc& layout) {
  static std::mutex mutex;
  static std::deque<std::pair<memory::desc, memory::desc>> keys;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& key : keys) {
    if (key.first == view && key.second == layout) return &key;
  }
  keys.emplace_back(view, layout);
  return &keys.back();
}

// How a chain's calls after its head (convolution or matmul) become the
// primitive's bias and post-ops.
struct Epilogue {
  std::optional<size_t> bias;      // a value: the primitive's bias
  std::optional<size_t> residual;  // a value: the sum post-op's addend
  dnnl::post_ops post_ops;
  struct Binary {
    int post_op = 0;
    size_t value = 0;
    memory::desc view;
  };
  std::vector<Binary> binaries;  // binary post-ops' second operands
};

// An eltwise post-op for activation call `call`.
void AppendActivation(const FusedOperator& call, dnnl::post_ops& post_ops) {
  if (call.op == "nn.relu") {
    post_ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  } else if (call.op == "nn.leaky_relu") {
    post_ops.append_eltwise(1.f, algorithm::eltwise_relu, float(FloatAttr(call.attrs, "alpha")),
                            0.f);
  } else if (call.op == "clip") {
    post_ops.append_eltwise(1.f, algorithm::eltwise_clip, float(FloatAttr(call.attrs, "a_min")),
                            float(FloatAttr(call.attrs, "a_max")));
  } else if (call.op == "sigmoid") {
    post_ops.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
  } else if (call.op == "tanh") {
    post_ops.append_eltwise(1.f, algorithm::eltwise_tanh, 0.f, 0.f);
  } else {
    RELAY_UNREACHABLE("activation " + call.op + " has no post-op");
  }
}

class PlanBuilder {
 public:
  PlanBuilder(const ExternalGraph& graph, std::span<const Shape> input_shapes,
              const std::vector<bool>& immutable)
      : graph_(graph), immutable_(immutable), plan_(std::make_shared<Plan>()) {
    plan_->value_shapes.assign(input_shapes.begin(), input_shapes.end());
    const std::vector<Shape> results = InferShapes(graph, input_shapes);
    plan_->value_shapes.insert(plan_->value_shapes.end(), results.begin(), results.end());
    for (size_t input = 0; input < input_shapes.size(); ++input) {
      plan_->buffers.push_back({true, input, RowMajor(DimsOf(input_shapes[input]))});
      values_.push_back({input, plan_->buffers.back().layout, {}});
    }
    values_.resize(plan_->value_shapes.size());
    // Where each value is last read: by an operator, or (the result) at the end.
    last_use_.assign(values_.size(), 0);
    for (size_t position = 0; position < graph.operators.size(); ++position) {
      for (int32_t input : graph.operators[position].inputs) last_use_[ValueOf(input)] = position;
    }
    last_use_.back() = graph.operators.size();
  }

  std::shared_ptr<const Plan> Build(std::span<const Unit> units) {
    for (const Unit& unit : units) {
      if (!LowerNatively(unit)) LowerToRelayKernels(unit);
    }
    Finish();
    return plan_;
  }

 private:
  // The value (graph input, then operator results) an operand names.
  size_t ValueOf(int32_t operand) const {
    return operand >= 0 ? size_t(operand) : graph_.params.size() + size_t(-(operand + 1));
  }
  size_t ResultOf(size_t position) const { return graph_.params.size() + position; }
  const Shape& ShapeOf(size_t value) const { return plan_->value_shapes[value]; }
  const FusedOperator& Call(size_t position) const { return graph_.operators[position]; }
  std::string Label(size_t position) const {
    return Call(position).op + " (operator " + std::to_string(position) + ")";
  }

  size_t NewBuffer(const memory::desc& layout) {
    plan_->buffers.push_back({false, 0, layout});
    return plan_->buffers.size() - 1;
  }

  void NoteScratchpad(const dnnl::primitive_desc_base& descriptor, Step& step) {
    const memory::desc scratchpad = descriptor.scratchpad_desc();
    plan_->scratchpad_bytes = std::max(plan_->scratchpad_bytes, scratchpad.get_size());
    if (scratchpad.get_size() > 0) {
      step.arguments.push_back({DNNL_ARG_SCRATCHPAD, kScratchpadBuffer, scratchpad});
    }
  }

  // A step reordering `from` (read as `from_view`) into `to` (as `to_view`).
  Step ReorderStep(size_t from, const memory::desc& from_view, size_t to,
                   const memory::desc& to_view, const std::string& operation) {
    Step step;
    step.operation = operation;
    try {
      const dnnl::reorder::primitive_desc descriptor(CpuEngine(), from_view, CpuEngine(), to_view,
                                                     Attributes());
      step.primitive = dnnl::reorder(descriptor);
      step.arguments = {{DNNL_ARG_FROM, from, from_view}, {DNNL_ARG_TO, to, to_view}};
      NoteScratchpad(descriptor, step);
    } catch (const dnnl::error& error) {
      throw DeviceError(operation, error);
    }
    return step;
  }

  // A buffer holding `value`'s row-major bytes read as `view` (its shape, or
  // other dims or strides over them) in `layout`: that buffer itself when
  // `view` is `layout`, else a copy made once per run, or, for a graph input,
  // kept with an immutable input tensor.
  size_t Reordered(size_t value, const memory::desc& view, const memory::desc& layout) {
    const size_t row_major = RowMajorBuffer(value);
    if (view == layout) return row_major;
    return CopyOf(value, row_major, view, layout);
  }

  // A buffer holding `value`, as its producer laid it out, in `layout`.
  size_t InLayout(size_t value, const memory::desc& layout) {
    ValueState& state = values_[value];
    if (state.layout == layout) return state.buffer;
    return CopyOf(value, state.buffer, state.layout, layout);
  }

  size_t RowMajorBuffer(size_t value) { return InLayout(value, RowMajor(DimsOf(ShapeOf(value)))); }

  size_t CopyOf(size_t value, size_t from, const memory::desc& view, const memory::desc& layout) {
    for (const ValueState::Copy& copy : values_[value].copies) {
      if (copy.view == view && copy.layout == layout) return copy.buffer;
    }
    const size_t to = NewBuffer(layout);
    Step step = ReorderStep(from, view, to, layout, "reorder of value " + std::to_string(value));
    if (plan_->buffers[from].input) {
      step.kind = Step::Kind::kInputReorder;
      step.derived_key = DerivedKey(view, layout);
    }
    plan_->steps.push_back(std::move(step));
    values_[value].copies.push_back({view, layout, to});
    return to;
  }

  // Whether a unit's primitive may write its result over `residual` (the
  // sum post-op's addend, needed in the result's buffer anyway): a result
  // of an earlier unit, laid out as `layout`, read by nothing after.
  bool CanWriteOver(size_t residual, const Unit& unit, const memory::desc& layout) const {
    if (residual < graph_.params.size() || values_[residual].layout != layout ||
        last_use_[residual] >= unit.end) {
      return false;
    }
    size_t reads = 0;
    for (size_t position = unit.first; position < unit.end; ++position) {
      for (int32_t input : Call(position).inputs) reads += ValueOf(input) == residual;
    }
    return reads == 1;
  }

  // The buffer of a unit's result laid out as `layout`, holding `residual`
  // beforehand when the epilogue has one.
  size_t ResultBuffer(const Unit& unit, const Epilogue& epilogue, const memory::desc& layout) {
    if (!epilogue.residual.has_value()) return NewBuffer(layout);
    const size_t residual = *epilogue.residual;
    if (CanWriteOver(residual, unit, layout)) return values_[residual].buffer;
    const size_t buffer = NewBuffer(layout);
    plan_->steps.push_back(ReorderStep(values_[residual].buffer, values_[residual].layout, buffer,
                                       layout, "copy of the residual of " + Label(unit.first)));
    return buffer;
  }

  // The epilogue of a chain whose head's result has `channel_axis` (in the
  // result's shape) and `primitive_dims` (as the primitive sees it, the
  // channels innermost or at axis 1); nullopt when a call maps to no post-op
  // at these shapes.
  std::optional<Epilogue> MapEpilogue(const Unit& unit, size_t channel_axis,
                                      const memory::dims& primitive_dims,
                                      size_t primitive_channel_axis) {
    Epilogue epilogue;
    const Shape& result = ShapeOf(ResultOf(unit.first));
    size_t previous = ResultOf(unit.first);
    int post_op_count = 0;
    for (size_t position = unit.first + 1; position < unit.end; ++position) {
      const FusedOperator& call = Call(position);
      if (ShapeOf(ResultOf(position)) != result) return std::nullopt;
      if (IsActivation(call.op)) {
        AppendActivation(call, epilogue.post_ops);
        ++post_op_count;
        previous = ResultOf(position);
        continue;
      }
      const size_t first = ValueOf(call.inputs[0]), second = ValueOf(call.inputs[1]);
      if ((first == previous) == (second == previous)) return std::nullopt;
      const size_t other = first == previous ? second : first;
      const Shape& other_shape = ShapeOf(other);
      bool vector = false;
      if (call.op == "nn.bias_add") {
        const int64_t axis = IntAttr(call.attrs, "axis");
        vector = (axis < 0 ? axis + int64_t(result.size()) : axis) == int64_t(channel_axis) &&
                 other == second;
      } else {
        vector = other_shape.size() <= result.size() &&
                 result.size() - other_shape.size() <= channel_axis;
        for (size_t index = 0; vector && index < other_shape.size(); ++index) {
          const size_t axis = index + result.size() - other_shape.size();
          vector = other_shape[index] == (axis == channel_axis ? result[channel_axis] : 1);
        }
      }
      if (call.op == "multiply") {
        // A per-channel scale (a batch norm's); a bias before it stays the
        // primitive's, which oneDNN adds before the post-ops.
        if (!vector) return std::nullopt;
        const memory::desc view =
            VectorAlong(primitive_dims.size(), primitive_channel_axis, result[channel_axis]);
        epilogue.post_ops.append_binary(algorithm::binary_mul, view);
        epilogue.binaries.push_back({post_op_count++, other, view});
      } else if (vector && !epilogue.bias.has_value() && post_op_count == 0) {
        epilogue.bias = other;
      } else if (vector) {
        const memory::desc view =
            VectorAlong(primitive_dims.size(), primitive_channel_axis, result[channel_axis]);
        epilogue.post_ops.append_binary(algorithm::binary_add, view);
        epilogue.binaries.push_back({post_op_count++, other, view});
      } else if (call.op == "add" && other_shape == result && !epilogue.residual.has_value()) {
        epilogue.post_ops.append_sum(1.f);
        epilogue.residual = other;
        ++post_op_count;
      } else if (call.op == "add" && other_shape == result) {
        const memory::desc view = RowMajor(primitive_dims);
        epilogue.post_ops.append_binary(algorithm::binary_add, view);
        epilogue.binaries.push_back({post_op_count++, other, view});
      } else {
        return std::nullopt;
      }
      previous = ResultOf(position);
    }
    return epilogue;
  }

  // The bias and binary post-op operands of `epilogue`, as arguments.
  void AddEpilogueArguments(const Epilogue& epilogue, const memory::desc& bias_view, Step& step) {
    if (epilogue.bias.has_value()) {
      step.arguments.push_back(
          {DNNL_ARG_BIAS, Reordered(*epilogue.bias, bias_view, bias_view), bias_view});
    }
    for (const Epilogue::Binary& binary : epilogue.binaries) {
      step.arguments.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary.post_op) | DNNL_ARG_SRC_1,
                                Reordered(binary.value, binary.view, binary.view), binary.view});
    }
  }

  // Creates a primitive descriptor; false when oneDNN implements none for it.
  template <typename Create>
  bool TryCreate(const std::string& operation, Create&& create) {
    try {
      create();
      return true;
    } catch (const dnnl::error& error) {
      if (error.status == dnnl_unimplemented) return false;
      throw DeviceError(operation, error);
    }
  }

  bool LowerNatively(const Unit& unit) {
    for (size_t position = unit.first; position < unit.end; ++position) {
      for (int32_t input : Call(position).inputs) {
        if (HasZeroExtent(ShapeOf(ValueOf(input)))) return false;
      }
      if (HasZeroExtent(ShapeOf(ResultOf(position)))) return false;
    }
    const std::string& op = Call(unit.first).op;
    if (op == "nn.conv2d") return LowerConvolution(unit);
    if (op == "nn.dense" || op == "nn.matmul" || op == "nn.batch_matmul") return LowerMatmul(unit);
    if (op == "nn.max_pool2d" || op == "nn.avg_pool2d") return LowerPool(unit);
    if (op == "nn.global_avg_pool2d") return LowerGlobalPool(unit);
    if (op == "nn.softmax") return LowerSoftmax(unit);
    if (op == "nn.layer_norm") return LowerLayerNorm(unit);
    RELAY_UNREACHABLE("operator " + op + " passed the dnnl rules");
  }

  bool LowerConvolution(const Unit& unit) {
    const FusedOperator& call = Call(unit.first);
    const size_t data = ValueOf(call.inputs[0]), weight = ValueOf(call.inputs[1]);
    const Shape& weight_shape = ShapeOf(weight);
    const Shape& result = ShapeOf(ResultOf(unit.first));
    const int64_t groups = IntAttr(call.attrs, "groups");
    const auto strides = SpatialPair(call.attrs, "strides");
    const auto dilation = SpatialPair(call.attrs, "dilation");
    const auto padding = PaddingSides(call.attrs);
    const memory::dims weight_dims =
        groups == 1 ? DimsOf(weight_shape)
                    : memory::dims{groups, weight_shape[0] / groups, weight_shape[1],
                                   weight_shape[2], weight_shape[3]};
    const memory::dims result_dims = DimsOf(result);
    const std::optional<Epilogue> epilogue = MapEpilogue(unit, 1, result_dims, 1);
    if (!epilogue.has_value()) return false;

    const std::string operation = Label(unit.first);
    const memory::desc bias_view = RowMajor({result[1]});
    dnnl::convolution_forward::primitive_desc descriptor;
    const bool created = TryCreate(operation, [&] {
      const memory::desc source = AnyLayout(DimsOf(ShapeOf(data)));
      const memory::desc weights = AnyLayout(weight_dims);
      const memory::desc destination = AnyLayout(result_dims);
      const memory::dims stride_dims = {strides[0], strides[1]};
      const memory::dims dilation_dims = {dilation[0] - 1, dilation[1] - 1};
      const memory::dims padding_low = {padding[0], padding[1]};
      const memory::dims padding_high = {padding[2], padding[3]};
      const auto desc =
          epilogue->bias.has_value()
              ? dnnl::convolution_forward::desc(
                    prop_kind::forward_inference, algorithm::convolution_direct, source, weights,
                    bias_view, destination, stride_dims, dilation_dims, padding_low, padding_high)
              : dnnl::convolution_forward::desc(
                    prop_kind::forward_inference, algorithm::convolution_direct, source, weights,
                    destination, stride_dims, dilation_dims, padding_low, padding_high);
      descriptor = dnnl::convolution_forward::primitive_desc(desc, Attributes(epilogue->post_ops),
                                                             CpuEngine());
    });
    if (!created) return false;

    Step step;
    step.operation = operation;
    step.primitive = dnnl::convolution_forward(descriptor);
    step.arguments.push_back(
        {DNNL_ARG_SRC, InLayout(data, descriptor.src_desc()), descriptor.src_desc()});
    step.arguments.push_back({DNNL_ARG_WEIGHTS,
                              Reordered(weight, RowMajor(weight_dims), descriptor.weights_desc()),
                              descriptor.weights_desc()});
    AddEpilogueArguments(*epilogue, bias_view, step);
    const size_t destination = ResultBuffer(unit, *epilogue, descriptor.dst_desc());
    step.arguments.push_back({DNNL_ARG_DST, destination, descriptor.dst_desc()});
    NoteScratchpad(descriptor, step);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.end - 1)] = {destination, descriptor.dst_desc(), {}};
    return true;
  }

  // nn.dense, nn.matmul and nn.batch_matmul as oneDNN's matmul, its operands
  // row-major tensors read through strides (transposes included), the
  // weight of a dense or matmul that is an immutable input reordered to
  // the layout oneDNN prefers, once.
  bool LowerMatmul(const Unit& unit) {
    const FusedOperator& call = Call(unit.first);
    const size_t a = ValueOf(call.inputs[0]), b = ValueOf(call.inputs[1]);
    const Shape &a_shape = ShapeOf(a), &b_shape = ShapeOf(b);
    const Shape& result = ShapeOf(ResultOf(unit.first));
    const bool batched = call.op == "nn.batch_matmul";
    const bool transpose_a = call.op != "nn.dense" && BoolAttr(call.attrs, "transpose_a");
    const bool transpose_b = call.op == "nn.dense" || BoolAttr(call.attrs, "transpose_b");
    const size_t rank = a_shape.size();
    const int64_t columns = result.back();
    memory::desc source, weights;
    memory::dims result_dims;
    if (batched) {
      const int64_t rows = transpose_a ? a_shape[2] : a_shape[1];
      const int64_t depth = transpose_a ? a_shape[1] : a_shape[2];
      source = WithStrides({a_shape[0], rows, depth}, transpose_a
                                                          ? memory::dims{rows * depth, 1, rows}
                                                          : memory::dims{rows * depth, depth, 1});
      weights = WithStrides({b_shape[0], depth, columns},
                            transpose_b ? memory::dims{columns * depth, 1, depth}
                                        : memory::dims{columns * depth, columns, 1});
      result_dims = {result[0], rows, columns};
    } else if (!transpose_a) {
      // (..., K) times (K, N): the leading axes are the rows.
      const int64_t depth = a_shape[rank - 1];
      const int64_t rows = Product(a_shape, 0, rank - 1);
      source = RowMajor({rows, depth});
      weights = WithStrides({depth, columns},
                            transpose_b ? memory::dims{1, depth} : memory::dims{columns, 1});
      result_dims = {rows, columns};
    } else {
      // (..., K, M) read transposed: the leading axes are a batch.
      const int64_t depth = a_shape[rank - 2], rows = a_shape[rank - 1];
      const int64_t batch = Product(a_shape, 0, rank - 2);
      source = WithStrides({batch, rows, depth}, {rows * depth, 1, rows});
      weights =
          WithStrides({1, depth, columns}, transpose_b ? memory::dims{columns * depth, 1, depth}
                                                       : memory::dims{columns * depth, columns, 1});
      result_dims = {batch, rows, columns};
    }
    const size_t channel_axis = result_dims.size() - 1;
    const std::optional<Epilogue> epilogue =
        MapEpilogue(unit, result.size() - 1, result_dims, channel_axis);
    if (!epilogue.has_value()) return false;

    const std::string operation = Label(unit.first);
    const memory::desc destination_view = RowMajor(result_dims);
    const memory::desc bias_view = VectorAlong(result_dims.size(), channel_axis, columns);
    // A weight kept with its immutable tensor: in oneDNN's preferred layout.
    const bool packed_weight = !batched && b < graph_.params.size() && immutable_[b];
    dnnl::matmul::primitive_desc descriptor;
    auto create = [&](const memory::desc& weights_layout) {
      return TryCreate(operation, [&] {
        const auto desc =
            epilogue->bias.has_value()
                ? dnnl::matmul::desc(source, weights_layout, bias_view, destination_view)
                : dnnl::matmul::desc(source, weights_layout, destination_view);
        descriptor =
            dnnl::matmul::primitive_desc(desc, Attributes(epilogue->post_ops), CpuEngine());
      });
    };
    const bool created = (packed_weight && create(AnyLayout(weights.dims()))) || create(weights);
    if (!created) return false;

    Step step;
    step.operation = operation;
    step.primitive = dnnl::matmul(descriptor);
    step.arguments.push_back({DNNL_ARG_SRC, RowMajorBuffer(a), source});
    step.arguments.push_back({DNNL_ARG_WEIGHTS, Reordered(b, weights, descriptor.weights_desc()),
                              descriptor.weights_desc()});
    AddEpilogueArguments(*epilogue, bias_view, step);
    const memory::desc result_layout = RowMajor(DimsOf(result));
    const size_t destination = ResultBuffer(unit, *epilogue, result_layout);
    step.arguments.push_back({DNNL_ARG_DST, destination, destination_view});
    NoteScratchpad(descriptor, step);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.end - 1)] = {destination, result_layout, {}};
    return true;
  }

  // A pooling primitive reading `data` as its producer laid it out (or
  // row-major, if oneDNN has no implementation for that layout).
  bool LowerPooling(const Unit& unit, algorithm kind, const memory::dims& kernel,
                    const memory::dims& strides, const memory::dims& dilation,
                    const memory::dims& padding_low, const memory::dims& padding_high) {
    const size_t data = ValueOf(Call(unit.first).inputs[0]);
    const memory::dims result_dims = DimsOf(ShapeOf(ResultOf(unit.first)));
    const std::string operation = Label(unit.first);
    dnnl::pooling_v2_forward::primitive_desc descriptor;
    auto create = [&](const memory::desc& source) {
      return TryCreate(operation, [&] {
        const dnnl::pooling_v2_forward::desc desc(prop_kind::forward_inference, kind, source,
                                                  AnyLayout(result_dims), strides, kernel, dilation,
                                                  padding_low, padding_high);
        descriptor = dnnl::pooling_v2_forward::primitive_desc(desc, Attributes(), CpuEngine());
      });
    };
    const memory::desc row_major = RowMajor(DimsOf(ShapeOf(data)));
    if (!create(values_[data].layout) && !create(row_major)) return false;

    Step step;
    step.operation = operation;
    step.primitive = dnnl::pooling_v2_forward(descriptor);
    step.arguments.push_back(
        {DNNL_ARG_SRC, InLayout(data, descriptor.src_desc()), descriptor.src_desc()});
    const size_t destination = NewBuffer(descriptor.dst_desc());
    step.arguments.push_back({DNNL_ARG_DST, destination, descriptor.dst_desc()});
    NoteScratchpad(descriptor, step);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.first)] = {destination, descriptor.dst_desc(), {}};
    return true;
  }

  // Max and average pools. oneDNN's windows are those of the padded input
  // (its dst extent fixes them); ceil_mode's extra windows are padding on
  // the high side, which max pooling and the average excluding padding
  // skip as relay-vm does. A window over no input cell runs on relay-vm.
  bool LowerPool(const Unit& unit) {
    const FusedOperator& call = Call(unit.first);
    const Shape& data = ShapeOf(ValueOf(call.inputs[0]));
    const Shape& result = ShapeOf(ResultOf(unit.first));
    const auto pool = SpatialPair(call.attrs, "pool_size");
    const auto strides = SpatialPair(call.attrs, "strides");
    const auto dilation = SpatialPair(call.attrs, "dilation");
    const auto padding = PaddingSides(call.attrs);
    const bool average = call.op == "nn.avg_pool2d";
    const bool include_padding = average && BoolAttr(call.attrs, "count_include_pad");
    memory::dims padding_high(2);
    for (size_t axis = 0; axis < 2; ++axis) {
      const int64_t extent = data[2 + axis], window = (pool[axis] - 1) * dilation[axis] + 1;
      padding_high[axis] = (result[2 + axis] - 1) * strides[axis] + window - extent - padding[axis];
      if (padding_high[axis] < padding[axis + 2]) padding_high[axis] = padding[axis + 2];
      // The average over the padded input divides by the window's area.
      if (include_padding && padding_high[axis] != padding[axis + 2]) return false;
      for (int64_t output = 0; output < result[2 + axis]; ++output) {
        const int64_t start = output * strides[axis] - padding[axis];
        bool inside = false;
        for (int64_t cell = 0; cell < pool[axis] && !inside; ++cell) {
          const int64_t position = start + cell * dilation[axis];
          inside = position >= 0 && position < extent;
        }
        if (!inside) return false;
      }
    }
    const algorithm kind = !average          ? algorithm::pooling_max
                           : include_padding ? algorithm::pooling_avg_include_padding
                                             : algorithm::pooling_avg_exclude_padding;
    return LowerPooling(unit, kind, {pool[0], pool[1]}, {strides[0], strides[1]},
                        {dilation[0] - 1, dilation[1] - 1}, {padding[0], padding[1]}, padding_high);
  }

  bool LowerGlobalPool(const Unit& unit) {
    const Shape& data = ShapeOf(ValueOf(Call(unit.first).inputs[0]));
    return LowerPooling(unit, algorithm::pooling_avg_exclude_padding, {data[2], data[3]}, {1, 1},
                        {0, 0}, {0, 0}, {0, 0});
  }

  // Softmax over any axis of a row-major tensor seen as (outer, axis, inner).
  bool LowerSoftmax(const Unit& unit) {
    const FusedOperator& call = Call(unit.first);
    const size_t data = ValueOf(call.inputs[0]);
    const Shape& shape = ShapeOf(data);
    const int64_t given = IntAttr(call.attrs, "axis");
    const size_t axis = size_t(given < 0 ? given + int64_t(shape.size()) : given);
    const int64_t outer = Product(shape, 0, axis), inner = Product(shape, axis + 1, shape.size());
    const memory::desc view =
        inner == 1 ? RowMajor({outer, shape[axis]}) : RowMajor({outer, shape[axis], inner});
    const std::string operation = Label(unit.first);
    dnnl::softmax_forward::primitive_desc descriptor;
    if (!TryCreate(operation, [&] {
          const dnnl::softmax_forward::desc desc(prop_kind::forward_inference, view, 1);
          descriptor = dnnl::softmax_forward::primitive_desc(desc, Attributes(), CpuEngine());
        })) {
      return false;
    }
    Step step;
    step.operation = operation;
    step.primitive = dnnl::softmax_forward(descriptor);
    step.arguments.push_back({DNNL_ARG_SRC, RowMajorBuffer(data), view});
    const memory::desc layout = RowMajor(DimsOf(shape));
    const size_t destination = NewBuffer(layout);
    step.arguments.push_back({DNNL_ARG_DST, destination, view});
    NoteScratchpad(descriptor, step);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.first)] = {destination, layout, {}};
    return true;
  }

  // layer_norm over the innermost axis of a row-major tensor seen as rows.
  bool LowerLayerNorm(const Unit& unit) {
    const FusedOperator& call = Call(unit.first);
    const size_t data = ValueOf(call.inputs[0]);
    const size_t gamma = ValueOf(call.inputs[1]), beta = ValueOf(call.inputs[2]);
    const Shape& shape = ShapeOf(data);
    const int64_t channels = shape.back();
    const memory::desc view = RowMajor({Product(shape, 0, shape.size() - 1), channels});
    const memory::desc vector = RowMajor({channels});
    const bool scale = BoolAttr(call.attrs, "scale"), center = BoolAttr(call.attrs, "center");
    dnnl::normalization_flags flags = dnnl::normalization_flags::none;
    if (scale) flags |= dnnl::normalization_flags::use_scale;
    if (center) flags |= dnnl::normalization_flags::use_shift;
    const std::string operation = Label(unit.first);
    dnnl::layer_normalization_forward::primitive_desc descriptor;
    if (!TryCreate(operation, [&] {
          const dnnl::layer_normalization_forward::desc desc(
              prop_kind::forward_inference, view, float(FloatAttr(call.attrs, "epsilon")), flags);
          descriptor =
              dnnl::layer_normalization_forward::primitive_desc(desc, Attributes(), CpuEngine());
        })) {
      return false;
    }
    Step step;
    step.operation = operation;
    step.primitive = dnnl::layer_normalization_forward(descriptor);
    step.arguments.push_back({DNNL_ARG_SRC, RowMajorBuffer(data), view});
    if (scale) step.arguments.push_back({DNNL_ARG_SCALE, RowMajorBuffer(gamma), vector});
    if (center) step.arguments.push_back({DNNL_ARG_SHIFT, RowMajorBuffer(beta), vector});
    const memory::desc layout = RowMajor(DimsOf(shape));
    const size_t destination = NewBuffer(layout);
    step.arguments.push_back({DNNL_ARG_DST, destination, view});
    NoteScratchpad(descriptor, step);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.first)] = {destination, layout, {}};
    return true;
  }

  // The unit's operators, one by one, on relay-vm's kernels.
  void LowerToRelayKernels(const Unit& unit) {
    Step step;
    step.kind = Step::Kind::kRelayKernels;
    step.operation = Label(unit.first);
    step.first_operator = unit.first;
    step.end_operator = unit.end;
    for (size_t position = unit.first; position < unit.end; ++position) {
      std::vector<int64_t> operands;
      for (int32_t input : Call(position).inputs) {
        const size_t value = ValueOf(input);
        const bool in_unit = value >= ResultOf(unit.first) && value < ResultOf(position);
        operands.push_back(in_unit ? -1 - int64_t(value - ResultOf(unit.first))
                                   : int64_t(RowMajorBuffer(value)));
      }
      step.operands.push_back(std::move(operands));
    }
    const memory::desc layout = RowMajor(DimsOf(ShapeOf(ResultOf(unit.end - 1))));
    step.output = NewBuffer(layout);
    plan_->steps.push_back(std::move(step));
    values_[ResultOf(unit.end - 1)] = {plan_->steps.back().output, layout, {}};
  }

  // The result row-major, and when each buffer may go.
  void Finish() {
    const size_t result = values_.size() - 1;
    plan_->result_shape = ShapeOf(result);
    plan_->result_buffer = RowMajorBuffer(result);
    std::vector<std::optional<size_t>> last_step(plan_->buffers.size());
    for (size_t index = 0; index < plan_->steps.size(); ++index) {
      const Step& step = plan_->steps[index];
      for (const Argument& argument : step.arguments) {
        if (argument.buffer != kScratchpadBuffer) last_step[argument.buffer] = index;
      }
      for (const std::vector<int64_t>& operands : step.operands) {
        for (int64_t operand : operands) {
          if (operand >= 0) last_step[size_t(operand)] = index;
        }
      }
      if (step.kind == Step::Kind::kRelayKernels) last_step[step.output] = index;
    }
    for (size_t buffer = 0; buffer < plan_->buffers.size(); ++buffer) {
      if (last_step[buffer].has_value() && buffer != plan_->result_buffer &&
          !plan_->buffers[buffer].input) {
        plan_->steps[*last_step[buffer]].released.push_back(buffer);
      }
    }
  }

  struct ValueState {
    size_t buffer = 0;
    memory::desc layout;
    // The value in other layouts: its bytes read as `view`, reordered.
    struct Copy {
      memory::desc view;
      memory::desc layout;
      size_t buffer = 0;
    };
    std::vector<Copy> copies;
  };

  const ExternalGraph& graph_;
  const std::vector<bool>& immutable_;
  std::shared_ptr<Plan> plan_;
  std::vector<ValueState> values_;
  std::vector<size_t> last_use_;
};

}  // namespace

std::shared_ptr<const Plan> BuildPlan(const ExternalGraph& graph, std::span<const Unit> units,
                                      std::span<const Shape> input_shapes,
                                      const std::vector<bool>& immutable) {
  return PlanBuilder(graph, input_shapes, immutable).Build(units);
}

}  // namespace relay::kernels::external::onednn
