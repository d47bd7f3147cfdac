// Compute definitions of the injective data-movement operators. Each maps
// an output index to the input element it copies; no arithmetic touches the
// values, so every dtype (float16 and bool included) moves unchanged. The
// one exception is scatter_add (the adjoint of gather and take), which sums
// the updates that land on an element.
//
// Kernels evaluate both arms of a Select, so an index that is only used
// when a condition holds (concatenate's source, pad's interior) is clamped
// into its buffer anyway: no load may leave the buffer, whatever the
// condition says.
#include "kernels/compute/transform_compute.h"

#include <algorithm>
#include <unordered_map>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {

namespace {

using namespace relay::kernels::kir;

// A compute body given the output shape the operator's type relation
// resolved from the inputs' constant shapes.
using ShapedCompute = std::function<TensorExpr(std::span<const TensorExpr> inputs,
                                               const Attrs& attrs, const Dims& output_shape)>;

// The operator's inputs as the type relation sees them: one tuple of every
// input when `tuple_input` (concatenate, stack), else one tensor each.
struct Specialised {
  ShapedCompute body;
  bool tuple_input = false;
};

Dims ConstantShape(const TensorExpr& tensor) {
  Dims shape;
  for (const Expr& dim : tensor.shape) {
    const auto* constant = As<IntImmNode>(dim);
    if (constant == nullptr) {
      throw Error(ErrorKind::kInternal,
                  "transform compute definitions need inputs with constant shapes");
    }
    shape.push_back(constant->value);
  }
  return shape;
}

std::vector<Expr> ShapeExprs(const Dims& shape) {
  std::vector<Expr> exprs;
  for (int64_t dim : shape) exprs.push_back(Int(dim));
  return exprs;
}

int64_t ElementCountOf(const Dims& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

Expr FloorDivide(Expr a, Expr b) {
  return Binary(BinaryOp::kFloorDivide, std::move(a), std::move(b));
}
Expr FloorMod(Expr a, Expr b) {
  return Binary(BinaryOp::kFloorMod, std::move(a), std::move(b));
}
Expr Clamp(Expr value, int64_t low, int64_t high) {
  return Binary(BinaryOp::kMinimum, Binary(BinaryOp::kMaximum, std::move(value), Int(low)),
                Int(high));
}
Expr Less(Expr a, Expr b) {
  return Binary(BinaryOp::kLess, std::move(a), std::move(b));
}
Expr And(Expr a, Expr b) {
  return Binary(BinaryOp::kAnd, std::move(a), std::move(b));
}

// Row-major flat index of `indices` in `shape`.
Expr Ravel(const std::vector<Expr>& indices, const Dims& shape) {
  Expr flat = Int(0);
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    flat = Add(Multiply(flat, Int(shape[axis])), indices[axis]);
  }
  return flat;
}

// The multi-index of row-major `flat` in `shape`. A zero extent divides by
// zero, which kernels define as 0; such a tensor has no element to read.
std::vector<Expr> Unravel(const Expr& flat, const Dims& shape) {
  std::vector<Expr> indices(shape.size());
  Expr rest = flat;
  for (size_t axis = shape.size(); axis-- > 0;) {
    indices[axis] = axis == 0 ? rest : FloorMod(rest, Int(shape[axis]));
    rest = FloorDivide(rest, Int(shape[axis]));
  }
  return indices;
}

// A constant of `dtype`.
Expr Constant(int64_t value, DType dtype) {
  if (IsFloat(dtype)) return Float(static_cast<double>(value), dtype);
  if (dtype == DType::kBool) return Binary(BinaryOp::kNotEqual, Int(value), Int(0));
  return Expr(new IntImmNode(value, dtype));
}

// Any reinterpretation of the row-major element order: reshape, squeeze,
// expand_dims, batch_flatten and reshape_like only rename the axes.
TensorExpr ReshapeCompute(std::span<const TensorExpr> inputs, const Attrs&, const Dims& output) {
  TensorExpr data = inputs[0];
  Dims input = ConstantShape(data);
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, input, output](const std::vector<Expr>& indices) {
                      return data.at(Unravel(Ravel(indices, output), input));
                    }};
}

TensorExpr TransposeCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                            const Dims& output) {
  TensorExpr data = inputs[0];
  const size_t rank = data.ndim();
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> given = OptionalIntListAttr(attrs, "axes")) {
    axes = NormalizeAxes(*given, rank);
  } else {
    for (size_t axis = rank; axis-- > 0;) axes.push_back(static_cast<int64_t>(axis));
  }
  return TensorExpr{ShapeExprs(output), data.dtype, [data, axes](const std::vector<Expr>& indices) {
                      std::vector<Expr> source(axes.size());
                      for (size_t axis = 0; axis < axes.size(); ++axis) {
                        source[axes[axis]] = indices[axis];
                      }
                      return data.at(source);
                    }};
}

TensorExpr ReverseCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                          const Dims& output) {
  TensorExpr data = inputs[0];
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  const int64_t extent = output[axis];
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, axis, extent](const std::vector<Expr>& indices) {
                      std::vector<Expr> source = indices;
                      source[axis] = Subtract(Int(extent - 1), indices[axis]);
                      return data.at(source);
                    }};
}

TensorExpr BroadcastToCompute(std::span<const TensorExpr> inputs, const Attrs&,
                              const Dims& output) {
  TensorExpr data = inputs[0];
  std::vector<Expr> shape = ShapeExprs(output);
  return TensorExpr{shape, data.dtype, [data, shape](const std::vector<Expr>& indices) {
                      return BroadcastRead(data, shape, indices);
                    }};
}

// The first element and step along each axis of a strided_slice of a
// tensor of shape `input`, resolved as the type relation resolves them
// (which has already validated the attributes, so nothing here fails).
// Axes that are not sliced start at 0 with step 1.
struct SliceGeometry {
  std::vector<int64_t> first, step;
};

SliceGeometry ResolveSlice(const Dims& input, const Attrs& attrs) {
  const size_t rank = input.size();
  const std::vector<int64_t> begin = IntListAttr(attrs, "begin");
  const std::vector<int64_t> end = IntListAttr(attrs, "end");
  std::vector<int64_t> strides =
      OptionalIntListAttr(attrs, "strides").value_or(std::vector<int64_t>{});
  const bool size_mode = StringAttr(attrs, "slice_mode") == "size";
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> given = OptionalIntListAttr(attrs, "axes")) {
    axes = NormalizeAxes(*given, rank, "axes entry");
  } else {
    const size_t count = std::max({begin.size(), end.size(), strides.size()});
    for (size_t axis = 0; axis < count; ++axis) axes.push_back(static_cast<int64_t>(axis));
  }
  strides.resize(axes.size(), 1);
  if (size_mode) std::fill(strides.begin(), strides.end(), 1);

  SliceGeometry geometry{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1)};
  for (size_t slot = 0; slot < axes.size(); ++slot) {
    const int64_t axis = axes[slot];
    const int64_t stride = strides[slot];
    const int64_t extent = input[axis];
    int64_t start = slot < begin.size() ? begin[slot] : (stride > 0 ? 0 : extent - 1);
    // Python's clamping, as in the relation: negative counts from the end.
    if (start < 0) start += extent;
    start = stride > 0 ? std::clamp<int64_t>(start, 0, extent)
                       : std::clamp<int64_t>(start, -1, extent - 1);
    geometry.first[axis] = start;
    geometry.step[axis] = stride;
  }
  return geometry;
}

TensorExpr StridedSliceCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                               const Dims& output) {
  TensorExpr data = inputs[0];
  const SliceGeometry geometry = ResolveSlice(ConstantShape(data), attrs);
  return TensorExpr{
      ShapeExprs(output), data.dtype,
      [data, first = geometry.first, step = geometry.step](const std::vector<Expr>& indices) {
        std::vector<Expr> source;
        for (size_t axis = 0; axis < indices.size(); ++axis) {
          source.push_back(Add(Int(first[axis]), Multiply(indices[axis], Int(step[axis]))));
        }
        return data.at(source);
      }};
}

// slice_scatter: an element of data's shape is source's where the slice
// reaches it (its distance from the slice's first element along every axis
// is a whole number of steps, fewer than the slice's extent), data's
// elsewhere.
TensorExpr SliceScatterCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                               const Dims& output) {
  TensorExpr data = inputs[0], source = inputs[1];
  const Dims input = ConstantShape(data);
  const Dims slice = ConstantShape(source);  // the relation checked it is the slice's shape
  if (ElementCountOf(slice) == 0) {
    // Nothing to place (and nothing that may be loaded from source).
    return TensorExpr{ShapeExprs(output), data.dtype,
                      [data](const std::vector<Expr>& indices) { return data.at(indices); }};
  }
  const SliceGeometry geometry = ResolveSlice(input, attrs);
  return TensorExpr{
      ShapeExprs(output), data.dtype,
      [data, source, input, slice, geometry](const std::vector<Expr>& indices) {
        Expr inside;
        std::vector<Expr> position;
        for (size_t axis = 0; axis < indices.size(); ++axis) {
          const int64_t first = geometry.first[axis], step = geometry.step[axis];
          if (first == 0 && step == 1 && slice[axis] == input[axis]) {
            position.push_back(indices[axis]);  // the whole axis
            continue;
          }
          // The distance in the stride's direction, then in steps.
          const int64_t magnitude = step > 0 ? step : -step;
          Expr distance =
              step > 0 ? Subtract(indices[axis], Int(first)) : Subtract(Int(first), indices[axis]);
          Expr steps = magnitude == 1 ? distance : FloorDivide(distance, Int(magnitude));
          Expr reached = And(Less(Int(-1), distance), Less(steps, Int(slice[axis])));
          if (magnitude != 1) {
            reached =
                And(reached, Binary(BinaryOp::kEqual, FloorMod(distance, Int(magnitude)), Int(0)));
          }
          inside = inside ? And(inside, reached) : reached;
          position.push_back(Clamp(steps, 0, slice[axis] - 1));
        }
        Expr placed = source.at(position);
        return inside ? Select(inside, placed, data.at(indices)) : placed;
      }};
}

// cast_like: data converted to the dtype of a second tensor, whose values
// are never read (so its shape may be anything: the kernel is specialised
// to shapes like every data-movement kernel).
TensorExpr CastLikeCompute(std::span<const TensorExpr> inputs, const Attrs&, const Dims& output) {
  TensorExpr data = inputs[0];
  const DType dtype = inputs[1].dtype;
  return TensorExpr{ShapeExprs(output), dtype, [data, dtype](const std::vector<Expr>& indices) {
                      return Cast(dtype, data.at(indices));
                    }};
}

// gather (numpy.take_along_axis): out[i] = data[i with i[axis] replaced by
// indices[i]]. An out-of-range index is clamped to the axis (TVM leaves it
// undefined; reading outside the data is not an option), so negative
// indices do not wrap.
TensorExpr GatherCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                         const Dims& output) {
  TensorExpr data = inputs[0], indices_tensor = inputs[1];
  const Dims input = ConstantShape(data);
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), input.size());
  const int64_t extent = input[axis];
  if (extent == 0 && ElementCountOf(output) > 0) {
    throw Error(ErrorKind::kUsage, "gather: cannot gather from an empty axis");
  }
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, indices_tensor, axis, extent](const std::vector<Expr>& indices) {
                      std::vector<Expr> source = indices;
                      source[axis] =
                          Clamp(Cast(DType::kInt64, indices_tensor.at(indices)), 0, extent - 1);
                      return data.at(source);
                    }};
}

// scatter_add: out[i] = data[i] + the sum of updates[j] over the positions
// j of indices that send their update to i: j equal to i off the axis, and
// indices[j] (clamped to the axis, as gather clamps it) equal to i on it.
// One reduction along the indices' axis per output element; float sums
// accumulate in float64, as sum does.
TensorExpr ScatterAddCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                             const Dims& output) {
  TensorExpr data = inputs[0], indices_tensor = inputs[1], updates = inputs[2];
  const Dims input = ConstantShape(data);
  const Dims scattered = ConstantShape(indices_tensor);
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), input.size());
  const DType dtype = data.dtype;
  if (ElementCountOf(scattered) == 0 || ElementCountOf(output) == 0) {
    // No update to add (or no element to add it to): data unchanged.
    return TensorExpr{ShapeExprs(output), dtype,
                      [data](const std::vector<Expr>& indices) { return data.at(indices); }};
  }
  const DType accumulator = IsFloat(dtype) ? DType::kFloat64 : dtype;
  return TensorExpr{
      ShapeExprs(output), dtype,
      [data, indices_tensor, updates, input, scattered, axis, dtype,
       accumulator](const std::vector<Expr>& indices) {
        Var along(new VarNode("k"));
        // The position in indices and updates; off the axis it is the
        // output's own, which indices may be too small to hold.
        Expr within;
        std::vector<Expr> position;
        for (size_t dim = 0; dim < input.size(); ++dim) {
          if (static_cast<int64_t>(dim) == axis) {
            position.push_back(along);
          } else if (scattered[dim] < input[dim]) {
            Expr fits = Less(indices[dim], Int(scattered[dim]));
            within = within ? And(within, fits) : fits;
            position.push_back(Clamp(indices[dim], 0, scattered[dim] - 1));
          } else {
            position.push_back(indices[dim]);
          }
        }
        Expr target = Clamp(Cast(DType::kInt64, indices_tensor.at(position)), 0, input[axis] - 1);
        Expr hit = Binary(BinaryOp::kEqual, target, indices[axis]);
        if (within) hit = And(within, hit);
        Expr zero = Constant(0, accumulator);
        Expr body = Select(hit, Cast(accumulator, updates.at(position)), zero);
        Expr sum = Reduce(ReduceOp::kSum, {along}, {Int(scattered[axis])}, zero, body);
        return Cast(dtype, Add(Cast(accumulator, data.at(indices)), sum));
      }};
}

// take with mode clip (out-of-range indices clamp to the ends) or wrap
// (indices are taken modulo the extent). "fast" promises in-range indices;
// it is clipped as well, since a bad index must not read outside the data.
TensorExpr TakeCompute(std::span<const TensorExpr> inputs, const Attrs& attrs, const Dims& output) {
  TensorExpr data = inputs[0], indices_tensor = inputs[1];
  const Dims input = ConstantShape(data);
  const size_t indices_rank = indices_tensor.ndim();
  const bool wrap = StringAttr(attrs, "mode") == "wrap";
  std::optional<int64_t> given_axis = OptionalIntAttr(attrs, "axis");
  const int64_t axis = given_axis ? NormalizeAxis(*given_axis, input.size()) : 0;
  int64_t batch_dims = given_axis ? IntAttr(attrs, "batch_dims") : 0;
  if (batch_dims < 0) batch_dims += static_cast<int64_t>(indices_rank);
  const int64_t extent = given_axis ? input[axis] : ElementCountOf(input);
  if (extent == 0 && ElementCountOf(output) > 0) {
    throw Error(ErrorKind::kUsage, "take: cannot take from an empty axis");
  }
  auto resolve = [wrap, extent](Expr index) {
    index = Cast(DType::kInt64, index);
    return wrap ? FloorMod(index, Int(extent)) : Clamp(index, 0, extent - 1);
  };
  if (!given_axis) {
    return TensorExpr{ShapeExprs(output), data.dtype,
                      [data, indices_tensor, input, resolve](const std::vector<Expr>& indices) {
                        return data.at(Unravel(resolve(indices_tensor.at(indices)), input));
                      }};
  }
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, indices_tensor, input, axis, batch_dims, indices_rank,
                     resolve](const std::vector<Expr>& indices) {
                      // Output axes: data[:axis], then indices[batch_dims:], then data[axis + 1:].
                      const size_t gathered = indices_rank - static_cast<size_t>(batch_dims);
                      std::vector<Expr> position(indices.begin(), indices.begin() + batch_dims);
                      position.insert(position.end(), indices.begin() + axis,
                                      indices.begin() + axis + static_cast<int64_t>(gathered));
                      std::vector<Expr> source(indices.begin(), indices.begin() + axis);
                      source.push_back(resolve(indices_tensor.at(position)));
                      source.insert(source.end(),
                                    indices.begin() + axis + static_cast<int64_t>(gathered),
                                    indices.end());
                      return data.at(source);
                    }};
}

TensorExpr TileCompute(std::span<const TensorExpr> inputs, const Attrs&, const Dims& output) {
  TensorExpr data = inputs[0];
  const Dims input = ConstantShape(data);
  const size_t offset = output.size() - input.size();
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, input, offset](const std::vector<Expr>& indices) {
                      std::vector<Expr> source;
                      for (size_t axis = 0; axis < input.size(); ++axis) {
                        source.push_back(FloorMod(indices[offset + axis], Int(input[axis])));
                      }
                      return data.at(source);
                    }};
}

TensorExpr RepeatCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                         const Dims& output) {
  TensorExpr data = inputs[0];
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  const int64_t repeats = IntAttr(attrs, "repeats");
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, axis, repeats](const std::vector<Expr>& indices) {
                      std::vector<Expr> source = indices;
                      source[axis] = FloorDivide(indices[axis], Int(repeats));
                      return data.at(source);
                    }};
}

// zeros, ones (value given) and full (value read from the scalar input).
ShapedCompute FillCompute(std::optional<int64_t> value) {
  return [value](std::span<const TensorExpr> inputs, const Attrs& attrs, const Dims& output) {
    const std::string& dtype_name = StringAttr(attrs, "dtype");
    DType dtype = dtype_name.empty() ? inputs[0].dtype : *ParseDType(dtype_name);
    Expr fill = value ? Constant(*value, dtype) : Cast(dtype, inputs[0].at({}));
    return TensorExpr{ShapeExprs(output), dtype, [fill](const std::vector<Expr>&) { return fill; }};
  };
}

// zeros_like, ones_like (value given) and full_like (value read from the
// scalar second input), in data's dtype.
ShapedCompute FillLikeCompute(std::optional<int64_t> value) {
  return [value](std::span<const TensorExpr> inputs, const Attrs&, const Dims& output) {
    DType dtype = inputs[0].dtype;
    Expr fill = value ? Constant(*value, dtype) : Cast(dtype, inputs[1].at({}));
    return TensorExpr{ShapeExprs(output), dtype, [fill](const std::vector<Expr>&) { return fill; }};
  };
}

// nn.pad: constant mode fills with pad_value (converted to data's dtype);
// edge repeats the border element; reflect mirrors about it (the relation
// has checked that reflect's widths are below the extents).
TensorExpr PadCompute(std::span<const TensorExpr> inputs, const Attrs& attrs, const Dims& output) {
  TensorExpr data = inputs[0];
  const Dims input = ConstantShape(data);
  const std::string mode = StringAttr(attrs, "pad_mode");
  std::vector<int64_t> before;
  for (const AttrValue& pair : GetAttr(attrs, "pad_width").as_list()) {
    before.push_back(pair.as_list()[0].as_int());
  }
  Expr pad_value = Cast(data.dtype, inputs[1].at({}));
  if (ElementCountOf(input) == 0) {
    // Nothing to copy (and nothing that may be loaded): all padding.
    return TensorExpr{ShapeExprs(output), data.dtype,
                      [pad_value](const std::vector<Expr>&) { return pad_value; }};
  }
  return TensorExpr{ShapeExprs(output), data.dtype,
                    [data, input, mode, before, pad_value](const std::vector<Expr>& indices) {
                      Expr inside;
                      std::vector<Expr> source;
                      for (size_t axis = 0; axis < input.size(); ++axis) {
                        const int64_t extent = input[axis];
                        Expr index = Subtract(indices[axis], Int(before[axis]));
                        if (mode == "reflect") {
                          Expr mirrored_low = Subtract(Int(0), index);
                          Expr mirrored_high = Subtract(Int(2 * (extent - 1)), index);
                          index = Select(Less(index, Int(0)), mirrored_low,
                                         Select(Less(index, Int(extent)), index, mirrored_high));
                        } else if (mode == "constant") {
                          Expr in_range = And(Less(index, Int(extent)), Less(Int(-1), index));
                          inside = inside ? And(inside, in_range) : in_range;
                        }
                        source.push_back(Clamp(index, 0, extent - 1));
                      }
                      Expr value = data.at(source);
                      return inside ? Select(inside, value, pad_value) : value;
                    }};
}

// The fields (inputs) joined along `axis`: the output index along the axis
// picks the field whose running offset range holds it.
TensorExpr ConcatenateCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                              const Dims& output) {
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), output.size());
  std::vector<TensorExpr> fields;
  std::vector<int64_t> offsets, extents;
  int64_t offset = 0;
  for (const TensorExpr& field : inputs) {
    const int64_t extent = ConstantShape(field)[axis];
    // An empty field contributes nothing and must never be loaded from.
    if (extent > 0) {
      fields.push_back(field);
      offsets.push_back(offset);
      extents.push_back(extent);
    }
    offset += extent;
  }
  DType dtype = inputs[0].dtype;
  return TensorExpr{
      ShapeExprs(output), dtype,
      [fields, offsets, extents, axis, dtype](const std::vector<Expr>& indices) {
        if (fields.empty()) return Constant(0, dtype);  // the output is empty too
        Expr result;
        for (size_t field = fields.size(); field-- > 0;) {
          std::vector<Expr> source = indices;
          source[axis] = Clamp(Subtract(indices[axis], Int(offsets[field])), 0, extents[field] - 1);
          Expr value = fields[field].at(source);
          result = result ? Select(Less(indices[axis], Int(offsets[field] + extents[field])), value,
                                   result)
                          : value;
        }
        return result;
      }};
}

TensorExpr StackCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                        const Dims& output) {
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), output.size());
  std::vector<TensorExpr> fields(inputs.begin(), inputs.end());
  return TensorExpr{ShapeExprs(output), fields[0].dtype,
                    [fields, axis](const std::vector<Expr>& indices) {
                      std::vector<Expr> source = indices;
                      source.erase(source.begin() + axis);
                      Expr result = fields.back().at(source);
                      for (size_t field = fields.size() - 1; field-- > 0;) {
                        result = Select(Less(indices[axis], Int(static_cast<int64_t>(field) + 1)),
                                        fields[field].at(source), result);
                      }
                      return result;
                    }};
}

const std::unordered_map<std::string, Specialised>& TransformComputes() {
  static const std::unordered_map<std::string, Specialised> computes = [] {
    std::unordered_map<std::string, Specialised> table;
    for (const char* name :
         {"reshape", "reshape_like", "squeeze", "expand_dims", "nn.batch_flatten"}) {
      table[name] = {ReshapeCompute};
    }
    table["transpose"] = {TransposeCompute};
    table["reverse"] = {ReverseCompute};
    table["broadcast_to"] = {BroadcastToCompute};
    table["broadcast_to_like"] = {BroadcastToCompute};
    table["strided_slice"] = {StridedSliceCompute};
    table["slice_scatter"] = {SliceScatterCompute};
    table["scatter_add"] = {ScatterAddCompute};
    table["take"] = {TakeCompute};
    table["gather"] = {GatherCompute};
    table["cast_like"] = {CastLikeCompute};
    table["tile"] = {TileCompute};
    table["repeat"] = {RepeatCompute};
    table["zeros"] = {FillCompute(0)};
    table["ones"] = {FillCompute(1)};
    table["full"] = {FillCompute(std::nullopt)};
    table["zeros_like"] = {FillLikeCompute(0)};
    table["ones_like"] = {FillLikeCompute(1)};
    table["full_like"] = {FillLikeCompute(std::nullopt)};
    table["nn.pad"] = {PadCompute};
    table["concatenate"] = {ConcatenateCompute, true};
    table["stack"] = {StackCompute, true};
    return table;
  }();
  return computes;
}

// Wraps `compute` so that it first resolves the output shape with the
// operator's own type relation (one definition of reshape's special values,
// of slice clamping, ...).
ComputeFunction WithResolvedShape(const std::string& name, TypeRelation relation,
                                  Specialised compute) {
  return [name, relation, compute](std::span<const TensorExpr> inputs, const Attrs& attrs) {
    std::vector<ValueType> types;
    for (const TensorExpr& input : inputs) {
      types.push_back(ValueType::Tensor(ConstantShape(input), input.dtype));
    }
    if (compute.tuple_input) types = {ValueType::Tuple(std::move(types))};
    std::vector<RelationInput> relation_inputs;
    for (const ValueType& type : types) relation_inputs.push_back({&type, nullptr});
    ValueType output;
    try {
      output = relation(relation_inputs, attrs);
    } catch (const OperatorTypeError& error) {
      throw Error(ErrorKind::kUsage, "operator " + name + ": " + error.message);
    }
    return compute.body(inputs, attrs, output.shape);
  };
}

// split's fields: consecutive ranges along the axis, with the extents the
// type relation resolved.
std::vector<TensorExpr> SplitCompute(std::span<const TensorExpr> inputs, const Attrs& attrs,
                                     const std::vector<ValueType>& fields) {
  TensorExpr data = inputs[0];
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.ndim());
  std::vector<TensorExpr> results;
  int64_t offset = 0;
  for (const ValueType& field : fields) {
    results.push_back(TensorExpr{ShapeExprs(field.shape), data.dtype,
                                 [data, axis, offset](const std::vector<Expr>& indices) {
                                   std::vector<Expr> source = indices;
                                   source[axis] = Add(indices[axis], Int(offset));
                                   return data.at(source);
                                 }});
    offset += field.shape[axis];
  }
  return results;
}

}  // namespace

std::vector<TensorExpr> ComputeTupleResult(std::string_view operator_name,
                                           std::span<const TensorExpr> inputs, const Attrs& attrs) {
  const OperatorDefinition* definition = FindOperator(operator_name);
  if (operator_name != "split" || definition == nullptr) {
    throw Error(ErrorKind::kUsage,
                "operator " + std::string(operator_name) + " has no tuple-result CPU kernel");
  }
  std::vector<ValueType> types;
  for (const TensorExpr& input : inputs) {
    types.push_back(ValueType::Tensor(ConstantShape(input), input.dtype));
  }
  std::vector<RelationInput> relation_inputs;
  for (const ValueType& type : types) relation_inputs.push_back({&type, nullptr});
  ValueType output;
  try {
    output = definition->relation(relation_inputs, attrs);
  } catch (const OperatorTypeError& error) {
    throw Error(ErrorKind::kUsage, "operator " + definition->name + ": " + error.message);
  }
  return SplitCompute(inputs, attrs, output.fields);
}

void AttachTransformComputes(OperatorTableBuilder& table) {
  // Transform computes are written against the resolved output shape
  // (Specialised), so each is wrapped with its operator's type relation.
  const auto& computes = TransformComputes();
  size_t attached = 0;
  for (OperatorDefinition& definition : table.definitions()) {
    if (auto found = computes.find(definition.name); found != computes.end()) {
      definition.compute = WithResolvedShape(definition.name, definition.relation, found->second);
      ++attached;
    }
  }
  RELAY_CHECK(attached == computes.size(),
              "a transform compute definition names an operator the table lacks");
}

}  // namespace relay::kernels
