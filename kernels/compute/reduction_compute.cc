// Compute definitions of the reductions (sum, prod, mean, max, min, argmax,
// argmin, all, any, variance, std), attached to the operator table's
// entries. Each output element is one kir::ReduceNode over the reduced axes
// of the input, so BuildInjectiveKernel schedules a reduction like any other
// TensorExpr: a loop nest over the output with the reduction inline.
//
// Precision: float sums and products (and so mean, variance and std)
// accumulate in float64 and round once to the input's dtype at the end,
// which is at least as accurate as NumPy's pairwise float32 summation.
// Integers accumulate in their own dtype and wrap, like
// numpy.sum(x, dtype=x.dtype). Float16 is widened to float32 for max, min,
// argmax and argmin, as the elementwise computes do.
//
// Reductions without an identity (max, min, argmax, argmin) over an empty
// axis throw kRuntime when the axis is known to be empty (constant shapes, as
// kernels specialised to their inputs' shapes have), as NumPy raises. The
// type relation accepts such shapes, as TVM's does: only running them fails.
// A kernel whose reduced extent is symbolic and turns out to be 0 at run time
// yields the starting value instead (-inf or the dtype's lowest for max, the
// opposite for min, index 0 for argmax and argmin); its caller must check.
// mean, variance and std accept only
// floating-point inputs: their integer semantics in Relay (truncating
// division) are not implemented yet and would silently differ from NumPy.
#include <cmath>
#include <limits>
#include <unordered_map>

#include "kernels/compute/reduction_compute.h"
#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

Expr Widen(const Expr& value) {
  return value->dtype == DType::kFloat16 ? Cast(DType::kFloat32, value) : value;
}

// The dtype a float reduction accumulates in (see the top of the file).
DType AccumulatorType(DType dtype) {
  return IsFloat(dtype) ? DType::kFloat64 : dtype;
}

Expr Constant(double value, DType dtype) {
  if (IsFloat(dtype)) return Float(value, dtype);
  return Expr(new IntImmNode(static_cast<int64_t>(value), dtype));
}

// The smallest (`lowest`) or largest value of `dtype`: the starting point
// of max and argmax (respectively min and argmin). Floats use infinities so
// that an all-infinite input still yields its own value.
Expr Extreme(DType dtype, bool lowest) {
  if (IsFloat(dtype)) {
    double infinity = std::numeric_limits<double>::infinity();
    return Float(lowest ? -infinity : infinity, dtype);
  }
  auto limit = [lowest](auto type_tag) {
    using T = decltype(type_tag);
    return lowest ? static_cast<int64_t>(std::numeric_limits<T>::lowest())
                  : static_cast<int64_t>(std::numeric_limits<T>::max());
  };
  int64_t value = 0;
  switch (dtype) {
    case DType::kBool:
      value = lowest ? 0 : 1;
      break;
    case DType::kInt8:
      value = limit(int8_t{});
      break;
    case DType::kUInt8:
      value = limit(uint8_t{});
      break;
    case DType::kUInt16:
      value = limit(uint16_t{});
      break;
    case DType::kUInt32:
      value = limit(uint32_t{});
      break;
    case DType::kUInt64:
      // The largest uint64 has the bits of int64's -1: the immediate holds
      // the bits.
      value = lowest ? 0 : -1;
      break;
    case DType::kInt16:
      value = limit(int16_t{});
      break;
    case DType::kInt32:
      value = limit(int32_t{});
      break;
    case DType::kInt64:
      value = limit(int64_t{});
      break;
    default:
      RELAY_UNREACHABLE("extreme value of a float dtype");
  }
  return Expr(new IntImmNode(value, dtype));
}

// Which input axes a reduction's attributes reduce, and the output shape.
// The attributes were validated by the type relation, which uses the same
// rules (axis=None is every axis; exclude inverts the list).
struct ReduceGeometry {
  std::vector<bool> reduced;  // per input axis
  bool keepdims = false;
  std::vector<Expr> output_shape;
  std::vector<Expr> reduced_extents;  // in input-axis order
};

ReduceGeometry Geometry(const TensorExpr& data, const Attrs& attrs) {
  ReduceGeometry geometry;
  const size_t rank = data.ndim();
  geometry.reduced.assign(rank, true);
  if (std::optional<std::vector<int64_t>> axes = OptionalIntListAttr(attrs, "axis")) {
    const bool exclude = BoolAttr(attrs, "exclude");
    std::fill(geometry.reduced.begin(), geometry.reduced.end(), exclude);
    for (int64_t axis : NormalizeAxes(*axes, rank)) geometry.reduced[axis] = !exclude;
  }
  geometry.keepdims = BoolAttr(attrs, "keepdims");
  for (size_t axis = 0; axis < rank; ++axis) {
    if (geometry.reduced[axis]) {
      geometry.reduced_extents.push_back(data.shape[axis]);
      if (geometry.keepdims) geometry.output_shape.push_back(Int(1));
    } else {
      geometry.output_shape.push_back(data.shape[axis]);
    }
  }
  return geometry;
}

void ExpectNonEmpty(const TensorExpr& data, const ReduceGeometry& geometry, std::string_view name) {
  for (size_t axis = 0; axis < geometry.reduced.size(); ++axis) {
    const auto* extent = As<IntImmNode>(data.shape[axis]);
    if (geometry.reduced[axis] && extent != nullptr && extent->value == 0) {
      throw Error(ErrorKind::kRuntime, "operator " + std::string(name) + " cannot reduce axis " +
                                           std::to_string(axis) +
                                           ", which has size 0: the reduction has no identity");
    }
  }
}

// The number of elements each output element reduces, as an int64 expression.
Expr ReducedCount(const ReduceGeometry& geometry) {
  Expr count = Int(1);
  for (const Expr& extent : geometry.reduced_extents) count = Multiply(count, extent);
  return count;
}

// Builds one output element: given fresh reduction variables (one per
// reduced axis), their extents and the input indices they form with the
// output indices, returns the element's expression.
using ElementBuilder =
    std::function<Expr(const std::vector<Var>& axes, const std::vector<Expr>& extents,
                       const std::vector<Expr>& data_indices)>;

TensorExpr ReduceOutput(const TensorExpr& data, const Attrs& attrs, DType dtype,
                        ElementBuilder element) {
  ReduceGeometry geometry = Geometry(data, attrs);
  std::vector<Expr> shape = geometry.output_shape;
  return TensorExpr{shape, dtype, [geometry, element](const std::vector<Expr>& indices) {
                      std::vector<Var> axes;
                      std::vector<Expr> data_indices;
                      size_t output_axis = 0;
                      for (size_t axis = 0; axis < geometry.reduced.size(); ++axis) {
                        if (geometry.reduced[axis]) {
                          axes.push_back(Var(new VarNode("r" + std::to_string(axis))));
                          data_indices.push_back(axes.back());
                          if (geometry.keepdims) ++output_axis;  // the kept 1 is indexed by 0 only
                        } else {
                          data_indices.push_back(indices[output_axis++]);
                        }
                      }
                      return element(axes, geometry.reduced_extents, data_indices);
                    }};
}

// sum and prod: accumulate in AccumulatorType, round once at the end.
ComputeFunction Accumulate(ReduceOp op, double identity) {
  return [op, identity](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    DType dtype = data.dtype;
    DType accumulator = AccumulatorType(dtype);
    return ReduceOutput(
        data, attrs, dtype,
        [data, op, identity, dtype, accumulator](const std::vector<Var>& axes,
                                                 const std::vector<Expr>& extents,
                                                 const std::vector<Expr>& data_indices) {
          Expr body = Cast(accumulator, data.at(data_indices));
          return Cast(dtype, Reduce(op, axes, extents, Constant(identity, accumulator), body));
        });
  };
}

// max, min, all and any (bool max and min are OR and AND). `name` is set
// for max and min, which have no identity; all and any have true and false.
ComputeFunction Extremum(ReduceOp op, const char* name = nullptr) {
  return [op, name](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    if (name != nullptr) ExpectNonEmpty(data, Geometry(data, attrs), name);
    DType dtype = data.dtype;
    DType computed = dtype == DType::kFloat16 ? DType::kFloat32 : dtype;
    return ReduceOutput(
        data, attrs, dtype,
        [data, op, dtype, computed](const std::vector<Var>& axes, const std::vector<Expr>& extents,
                                    const std::vector<Expr>& data_indices) {
          Expr init = Extreme(computed, /*lowest=*/op == ReduceOp::kMaximum);
          return Cast(dtype, Reduce(op, axes, extents, init, Widen(data.at(data_indices))));
        });
  };
}

ComputeFunction ArgExtremum(ReduceOp op) {
  return [op](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    ExpectNonEmpty(data, Geometry(data, attrs), op == ReduceOp::kArgMax ? "argmax" : "argmin");
    bool select_last = BoolAttr(attrs, "select_last_index");
    DType computed = data.dtype == DType::kFloat16 ? DType::kFloat32 : data.dtype;
    return ReduceOutput(data, attrs, DType::kInt32,
                        [data, op, computed, select_last](const std::vector<Var>& axes,
                                                          const std::vector<Expr>& extents,
                                                          const std::vector<Expr>& data_indices) {
                          Expr init = Extreme(computed, /*lowest=*/op == ReduceOp::kArgMax);
                          return Reduce(op, axes, extents, init, Widen(data.at(data_indices)),
                                        select_last);
                        });
  };
}

void ExpectFloat(const TensorExpr& data, std::string_view name) {
  if (!IsFloat(data.dtype)) {
    throw Error(ErrorKind::kUsage, "operator " + std::string(name) +
                                       " supports only floating-point inputs for now, got " +
                                       std::string(DTypeName(data.dtype)));
  }
}

TensorExpr Mean(std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const TensorExpr& data = inputs[0];
  ExpectFloat(data, "mean");
  DType dtype = data.dtype;
  Expr count = Cast(DType::kFloat64, ReducedCount(Geometry(data, attrs)));
  return ReduceOutput(
      data, attrs, dtype,
      [data, dtype, count](const std::vector<Var>& axes, const std::vector<Expr>& extents,
                           const std::vector<Expr>& data_indices) {
        Expr sum = Reduce(ReduceOp::kSum, axes, extents, Float(0, DType::kFloat64),
                          Cast(DType::kFloat64, data.at(data_indices)));
        return Cast(dtype, Binary(BinaryOp::kDivide, sum, count));
      });
}

// variance and std, given the mean (TVM's arity): sum((x - mean)^2) over
// count - 1 when `unbiased`, else over count. The mean broadcasts against
// the data (its reduced axes are 1).
ComputeFunction Variance(bool take_root) {
  return [take_root](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    const TensorExpr& data = inputs[0];
    const TensorExpr& mean = inputs[1];
    ExpectFloat(data, take_root ? "std" : "variance");
    DType dtype = data.dtype;
    Expr count = ReducedCount(Geometry(data, attrs));
    if (BoolAttr(attrs, "unbiased")) count = Subtract(count, Int(1));
    Expr divisor = Cast(DType::kFloat64, count);
    return ReduceOutput(
        data, attrs, dtype,
        [data, mean, dtype, divisor, take_root](const std::vector<Var>& axes,
                                                const std::vector<Expr>& extents,
                                                const std::vector<Expr>& data_indices) {
          Expr deviation =
              Subtract(Cast(DType::kFloat64, data.at(data_indices)),
                       Cast(DType::kFloat64, BroadcastRead(mean, data.shape, data_indices)));
          Expr sum = Reduce(ReduceOp::kSum, axes, extents, Float(0, DType::kFloat64),
                            Multiply(deviation, deviation));
          Expr variance = Binary(BinaryOp::kDivide, sum, divisor);
          if (take_root) variance = Unary(UnaryOp::kSqrt, variance);
          return Cast(dtype, variance);
        });
  };
}

bool IsOneDim(const Expr& dimension) {
  const auto* constant = As<IntImmNode>(dimension);
  return constant != nullptr && constant->value == 1;
}

// collapse_sum_like: data summed down to collapse_type's shape, the
// reverse of broadcasting it: the leading axes data has beyond it, and the
// axes where it has 1 and data more, are summed away. Accumulates as sum.
TensorExpr CollapseSumLike(std::span<const TensorExpr> inputs, const Attrs&) {
  const TensorExpr data = inputs[0], like = inputs[1];
  const size_t rank = data.ndim(), leading = rank - like.ndim();
  const DType dtype = data.dtype, accumulator = AccumulatorType(dtype);
  return TensorExpr{
      like.shape, dtype, [=](const std::vector<Expr>& indices) {
        std::vector<Var> axes;
        std::vector<Expr> extents, source(rank);
        for (size_t axis = 0; axis < rank; ++axis) {
          const auto* target =
              axis < leading ? nullptr : As<IntImmNode>(like.shape[axis - leading]);
          const bool summed = axis < leading || (target != nullptr && target->value == 1 &&
                                                 !IsOneDim(data.shape[axis]));
          if (summed) {
            axes.push_back(Var(new VarNode("r" + std::to_string(axis))));
            extents.push_back(data.shape[axis]);
            source[axis] = axes.back();
          } else {
            source[axis] = indices[axis - leading];
          }
        }
        Expr value = Cast(accumulator, data.at(source));
        if (axes.empty()) return Cast(dtype, value);
        return Cast(dtype, Reduce(ReduceOp::kSum, axes, extents, Constant(0, accumulator), value));
      }};
}

std::unordered_map<std::string, ComputeFunction> ReductionComputes() {
  std::unordered_map<std::string, ComputeFunction> computes;
  computes["sum"] = Accumulate(ReduceOp::kSum, 0);
  computes["prod"] = Accumulate(ReduceOp::kProduct, 1);
  computes["max"] = Extremum(ReduceOp::kMaximum, "max");
  computes["min"] = Extremum(ReduceOp::kMinimum, "min");
  computes["all"] = Extremum(ReduceOp::kMinimum);
  computes["any"] = Extremum(ReduceOp::kMaximum);
  computes["argmax"] = ArgExtremum(ReduceOp::kArgMax);
  computes["argmin"] = ArgExtremum(ReduceOp::kArgMin);
  computes["mean"] = Mean;
  computes["variance"] = Variance(/*take_root=*/false);
  computes["std"] = Variance(/*take_root=*/true);
  computes["collapse_sum_like"] = CollapseSumLike;
  return computes;
}

}  // namespace

bool IsReductionCompute(std::string_view operator_name) {
  static const std::unordered_map<std::string, ComputeFunction> computes = ReductionComputes();
  return computes.contains(std::string(operator_name));
}

void AttachReductionComputes(OperatorTableBuilder& table) {
  table.AttachComputes(ReductionComputes());
}

}  // namespace relay::kernels
