// Compute definitions of the neural-network operators (see
// neural_network_compute.h), with the naive schedule BuildInjectiveKernel
// gives every TensorExpr: each output element is computed on its own, its
// reductions inline.
//
// Precision: dot products (dense, matmul, batch_matmul) accumulate in
// DotAccumulator(out_dtype): float32 for float32 and float16, as BLAS does;
// integer dot products accumulate in out_dtype and wrap. Softmax computes
// in float32 for float32 and float16 data (float64 for float64), as PyTorch
// and ONNX Runtime do. The normalisations compute in float64 and round once
// to the output dtype, as the reductions do (reduction_compute.cc). Their
// variance is E[x^2] - E[x]^2 in float64 (clamped at 0), one pass over the reduced
// elements; for float32 data this loses nothing visible unless |mean| / std
// exceeds about 1e5.
//
// Cost: the definitions share nothing between output elements; read
// naively, every element of softmax recomputes its row's maximum inside
// the sum of exponentials and every element of a normalisation its
// statistics. The CPU's injective schedule (cpu_kernels.cc) computes such
// reductions once per row when they do not depend on the innermost axis
// (softmax and layer_norm over the last axis); along other axes they are
// still recomputed per element.
#include "kernels/compute/neural_network_compute.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

constexpr DType kWide = DType::kFloat64;

bool IsOne(const Expr& dimension) {
  const auto* constant = As<IntImmNode>(dimension);
  return constant != nullptr && constant->value == 1;
}

Expr Wide(const Expr& value) {
  return Cast(kWide, value);
}

// Zero of `dtype` (the start of a sum).
Expr Zero(DType dtype) {
  if (IsFloat(dtype)) return Float(0, dtype);
  return Expr(new IntImmNode(0, dtype));
}

// The dtype a dot product accumulates in (see the top of the file).
// `indices` with the index of `axis` replaced by `value`.
std::vector<Expr> Replaced(std::vector<Expr> indices, size_t axis, Expr value) {
  indices[axis] = std::move(value);
  return indices;
}

// ---- dense, matmul, batch_matmul --------------------------------------------------------

// a: (..., M, K), or (..., K, M) with transpose_a; b: (K, N), or (N, K) with
// transpose_b. Result (..., M, N); a of rank 1 (K,) gives (N,).
TensorExpr MatrixProduct(const TensorExpr& a, const TensorExpr& b, bool transpose_a,
                         bool transpose_b, DType out_dtype) {
  const size_t rank = a.ndim();
  std::vector<Expr> shape = a.shape;
  const Expr reduction = transpose_a ? a.shape[rank - 2] : a.shape[rank - 1];
  if (transpose_a) shape[rank - 2] = a.shape[rank - 1];
  shape[rank - 1] = transpose_b ? b.shape[0] : b.shape[1];
  const DType accumulator = DotAccumulator(out_dtype);
  return TensorExpr{shape, out_dtype, [=](const std::vector<Expr>& indices) {
                      Var k(new VarNode("k"));
                      std::vector<Expr> a_indices = indices;
                      const Expr column = indices[rank - 1];
                      if (transpose_a) {
                        a_indices[rank - 2] = k;
                        a_indices[rank - 1] = indices[rank - 2];
                      } else {
                        a_indices[rank - 1] = k;
                      }
                      std::vector<Expr> b_indices =
                          transpose_b ? std::vector<Expr>{column, k} : std::vector<Expr>{k, column};
                      Expr product = Binary(BinaryOp::kMultiply, Cast(accumulator, a.at(a_indices)),
                                            Cast(accumulator, b.at(b_indices)));
                      return Cast(out_dtype, Reduce(ReduceOp::kSum, {k}, {reduction},
                                                    Zero(accumulator), product));
                    }};
}

TensorExpr Dense(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  return MatrixProduct(inputs[0], inputs[1], /*transpose_a=*/false, /*transpose_b=*/true,
                       DTypeAttr(attrs, "out_dtype", inputs[0].dtype));
}

TensorExpr Matmul(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  return MatrixProduct(inputs[0], inputs[1], BoolAttr(attrs, "transpose_a"),
                       BoolAttr(attrs, "transpose_b"),
                       DTypeAttr(attrs, "out_dtype", inputs[0].dtype));
}

// a: (Ba, M, K) or (Ba, K, M); b: (Bb, K, N) or (Bb, N, K). A batch extent of
// 1 broadcasts against the other (shapes are constant here).
TensorExpr BatchMatmul(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr a = inputs[0], b = inputs[1];
  const bool transpose_a = BoolAttr(attrs, "transpose_a");
  const bool transpose_b = BoolAttr(attrs, "transpose_b");
  const DType out_dtype = DTypeAttr(attrs, "out_dtype", a.dtype);
  const DType accumulator = DotAccumulator(out_dtype);
  const Expr batch = IsOne(a.shape[0]) ? b.shape[0] : a.shape[0];
  const Expr rows = transpose_a ? a.shape[2] : a.shape[1];
  const Expr reduction = transpose_a ? a.shape[1] : a.shape[2];
  const Expr columns = transpose_b ? b.shape[1] : b.shape[2];
  return TensorExpr{
      {batch, rows, columns}, out_dtype, [=](const std::vector<Expr>& indices) {
        Var k(new VarNode("k"));
        const Expr a_batch = IsOne(a.shape[0]) ? Int(0) : indices[0];
        const Expr b_batch = IsOne(b.shape[0]) ? Int(0) : indices[0];
        std::vector<Expr> a_indices = transpose_a ? std::vector<Expr>{a_batch, k, indices[1]}
                                                  : std::vector<Expr>{a_batch, indices[1], k};
        std::vector<Expr> b_indices = transpose_b ? std::vector<Expr>{b_batch, indices[2], k}
                                                  : std::vector<Expr>{b_batch, k, indices[2]};
        Expr product = Binary(BinaryOp::kMultiply, Cast(accumulator, a.at(a_indices)),
                              Cast(accumulator, b.at(b_indices)));
        return Cast(out_dtype,
                    Reduce(ReduceOp::kSum, {k}, {reduction}, Zero(accumulator), product));
      }};
}

// ---- per-channel elementwise ------------------------------------------------------------

// Float16 computes in float32, as the elementwise computes do.
Expr Widen(const Expr& value) {
  return value->dtype == DType::kFloat16 ? Cast(DType::kFloat32, value) : value;
}

TensorExpr BiasAdd(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr data = inputs[0], bias = inputs[1];
  const size_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  return TensorExpr{data.shape, data.dtype, [=](const std::vector<Expr>& indices) {
                      return Cast(data.dtype, Binary(BinaryOp::kAdd, Widen(data.at(indices)),
                                                     Widen(bias.at({indices[axis]}))));
                    }};
}

// x > 0 ? x : alpha[channel] * x.
TensorExpr PRelu(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr data = inputs[0], alpha = inputs[1];
  const size_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  return TensorExpr{data.shape, data.dtype, [=](const std::vector<Expr>& indices) {
                      Expr x = Widen(data.at(indices));
                      Expr slope = Widen(alpha.at({indices[axis]}));
                      return Cast(data.dtype,
                                  Select(Binary(BinaryOp::kGreater, x, Float(0, x->dtype)), x,
                                         Binary(BinaryOp::kMultiply, slope, x)));
                    }};
}

// ---- softmax ----------------------------------------------------------------------------

// softmax(x)_i = exp(x_i - m) / sum_k exp(x_k - m) and log_softmax(x)_i =
// (x_i - m) - log(sum_k exp(x_k - m)), m the maximum along the axis, so that
// no exponential overflows.
// Softmax computes in float32 for float32 and float16 data, as PyTorch and
// ONNX Runtime do: the maximum is exact, each exponential is within an ulp
// or two, and a sum of float32 terms in lanes loses a few ulps; float64 cost
// twice the time for digits no float32 result keeps.
DType SoftmaxPrecision(DType dtype) {
  return dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

ComputeFunction Softmax(bool logarithm) {
  return [logarithm](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr data = inputs[0];
    const size_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
    const Expr extent = data.shape[axis];
    const DType wide = SoftmaxPrecision(data.dtype);
    auto widen = [wide](const Expr& value) { return Cast(wide, value); };
    return TensorExpr{
        data.shape, data.dtype, [=](const std::vector<Expr>& indices) {
          Var max_axis(new VarNode("m"));
          Expr maximum = Reduce(ReduceOp::kMaximum, {max_axis}, {extent},
                                Float(-std::numeric_limits<double>::infinity(), wide),
                                widen(data.at(Replaced(indices, axis, max_axis))));
          Var sum_axis(new VarNode("s"));
          Expr shifted_term = Binary(BinaryOp::kSubtract,
                                     widen(data.at(Replaced(indices, axis, sum_axis))), maximum);
          Expr sum = Reduce(ReduceOp::kSum, {sum_axis}, {extent}, Float(0, wide),
                            Unary(UnaryOp::kExp, shifted_term));
          Expr shifted = Binary(BinaryOp::kSubtract, widen(data.at(indices)), maximum);
          Expr value = logarithm ? Binary(BinaryOp::kSubtract, shifted, Unary(UnaryOp::kLog, sum))
                                 : Binary(BinaryOp::kDivide, Unary(UnaryOp::kExp, shifted), sum);
          return Cast(data.dtype, value);
        }};
  };
}

// ---- normalisations ---------------------------------------------------------------------

// Which elements one output element's statistics are taken over: every
// index of the `reduced` axes and, for group_norm, the channels of the
// output element's group along `group_axis` (`group_size` of them).
struct NormalizationGeometry {
  std::vector<size_t> reduced;
  std::optional<size_t> group_axis;
  Expr group_size;
};

// The normalised element at `indices`, in float64:
// (x - mean) / sqrt(variance + epsilon), times gamma[channel] when `scale`,
// plus beta[channel] when `center`; channel = indices[channel_axis].
ComputeFunction Normalization(
    std::function<NormalizationGeometry(const TensorExpr&, size_t axis, const Attrs&)>
        geometry_of) {
  return [geometry_of](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr data = inputs[0], gamma = inputs[1], beta = inputs[2];
    const size_t channel_axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
    const NormalizationGeometry geometry = geometry_of(data, channel_axis, attrs);
    const double epsilon = FloatAttr(attrs, "epsilon");
    const bool scale = BoolAttr(attrs, "scale");
    const bool center = BoolAttr(attrs, "center");
    Expr count = Int(1);
    for (size_t axis : geometry.reduced) count = Multiply(count, data.shape[axis]);
    if (geometry.group_axis) count = Multiply(count, geometry.group_size);
    const Expr wide_count = Wide(count);
    return TensorExpr{
        data.shape, data.dtype, [=](const std::vector<Expr>& indices) {
          // Sum of term(x) over the elements sharing this element's statistics.
          auto sum_over = [&](const std::function<Expr(const Expr&)>& term) {
            std::vector<Var> axes;
            std::vector<Expr> extents;
            std::vector<Expr> data_indices = indices;
            for (size_t axis : geometry.reduced) {
              axes.push_back(Var(new VarNode("n" + std::to_string(axis))));
              extents.push_back(data.shape[axis]);
              data_indices[axis] = axes.back();
            }
            if (geometry.group_axis) {
              const size_t axis = *geometry.group_axis;
              axes.push_back(Var(new VarNode("g")));
              extents.push_back(geometry.group_size);
              Expr group = Binary(BinaryOp::kFloorDivide, indices[axis], geometry.group_size);
              data_indices[axis] = Add(Multiply(group, geometry.group_size), axes.back());
            }
            return Reduce(ReduceOp::kSum, axes, extents, Float(0, kWide),
                          term(Wide(data.at(data_indices))));
          };
          Expr mean =
              Binary(BinaryOp::kDivide, sum_over([](const Expr& x) { return x; }), wide_count);
          Expr mean_square =
              Binary(BinaryOp::kDivide,
                     sum_over([](const Expr& x) { return Binary(BinaryOp::kMultiply, x, x); }),
                     wide_count);
          Expr variance = Binary(
              BinaryOp::kMaximum,
              Binary(BinaryOp::kSubtract, mean_square, Binary(BinaryOp::kMultiply, mean, mean)),
              Float(0, kWide));
          Expr value = Binary(
              BinaryOp::kDivide, Binary(BinaryOp::kSubtract, Wide(data.at(indices)), mean),
              Unary(UnaryOp::kSqrt, Binary(BinaryOp::kAdd, variance, Float(epsilon, kWide))));
          const Expr channel = indices[channel_axis];
          if (scale) value = Binary(BinaryOp::kMultiply, value, Wide(gamma.at({channel})));
          if (center) value = Binary(BinaryOp::kAdd, value, Wide(beta.at({channel})));
          return Cast(data.dtype, value);
        }};
  };
}

// layer_norm: statistics over `axis` alone.
NormalizationGeometry LayerNormGeometry(const TensorExpr&, size_t axis, const Attrs&) {
  return {{axis}, std::nullopt, Expr()};
}

// instance_norm: over every axis but the batch (0) and channel axes.
NormalizationGeometry InstanceNormGeometry(const TensorExpr& data, size_t axis, const Attrs&) {
  NormalizationGeometry geometry;
  for (size_t other = 1; other < data.ndim(); ++other) {
    if (other != axis) geometry.reduced.push_back(other);
  }
  return geometry;
}

// group_norm: as instance_norm, plus the channels of the element's group.
NormalizationGeometry GroupNormGeometry(const TensorExpr& data, size_t axis, const Attrs& attrs) {
  NormalizationGeometry geometry = InstanceNormGeometry(data, axis, attrs);
  geometry.group_axis = axis;
  geometry.group_size =
      Binary(BinaryOp::kFloorDivide, data.shape[axis], Int(IntAttr(attrs, "num_groups")));
  return geometry;
}

// ---- tuple results ----------------------------------------------------------------------

TensorExpr Identity(const TensorExpr& input) {
  return input;
}

// Inference: (x - moving_mean) / sqrt(moving_var + epsilon) [* gamma] [+ beta]
// per channel along `axis`; the moving statistics come back unchanged.
std::vector<TensorExpr> BatchNorm(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr data = inputs[0], gamma = inputs[1], beta = inputs[2];
  const TensorExpr moving_mean = inputs[3], moving_variance = inputs[4];
  const size_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  const double epsilon = FloatAttr(attrs, "epsilon");
  const bool scale = BoolAttr(attrs, "scale");
  const bool center = BoolAttr(attrs, "center");
  TensorExpr output{
      data.shape, data.dtype, [=](const std::vector<Expr>& indices) {
        const std::vector<Expr> channel = {indices[axis]};
        Expr value = Binary(
            BinaryOp::kDivide,
            Binary(BinaryOp::kSubtract, Wide(data.at(indices)), Wide(moving_mean.at(channel))),
            Unary(UnaryOp::kSqrt, Binary(BinaryOp::kAdd, Wide(moving_variance.at(channel)),
                                         Float(epsilon, kWide))));
        if (scale) value = Binary(BinaryOp::kMultiply, value, Wide(gamma.at(channel)));
        if (center) value = Binary(BinaryOp::kAdd, value, Wide(beta.at(channel)));
        return Cast(data.dtype, value);
      }};
  return {output, Identity(moving_mean), Identity(moving_variance)};
}

// Inference: the data unchanged and a mask of ones (every element kept).
std::vector<TensorExpr> Dropout(std::span<const TensorExpr> inputs, const Attrs&) {
  const TensorExpr data = inputs[0];
  TensorExpr mask{data.shape, data.dtype,
                  [dtype = data.dtype](const std::vector<Expr>&) { return Float(1, dtype); }};
  return {Identity(data), mask};
}

std::unordered_map<std::string, ComputeFunction> NeuralNetworkComputes() {
  std::unordered_map<std::string, ComputeFunction> computes;
  computes["nn.dense"] = Dense;
  computes["nn.matmul"] = Matmul;
  computes["nn.batch_matmul"] = BatchMatmul;
  computes["nn.bias_add"] = BiasAdd;
  computes["nn.prelu"] = PRelu;
  computes["nn.softmax"] = Softmax(/*logarithm=*/false);
  computes["nn.log_softmax"] = Softmax(/*logarithm=*/true);
  computes["nn.layer_norm"] = Normalization(LayerNormGeometry);
  computes["nn.instance_norm"] = Normalization(InstanceNormGeometry);
  computes["nn.group_norm"] = Normalization(GroupNormGeometry);
  return computes;
}

}  // namespace

std::optional<std::vector<TensorExpr>> NeuralNetworkTupleResult(std::string_view operator_name,
                                                                std::span<const TensorExpr> inputs,
                                                                const Attrs& attrs) {
  if (operator_name == "nn.batch_norm") return BatchNorm(inputs, attrs);
  if (operator_name == "nn.dropout") return Dropout(inputs, attrs);
  return std::nullopt;
}

void AttachNeuralNetworkComputes(OperatorTableBuilder& table) {
  table.AttachComputes(NeuralNetworkComputes());
}

}  // namespace relay::kernels
