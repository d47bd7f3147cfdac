// Gradients of the data-movement and creation operators
// (kernels/operators/transform.cc).
//
// Data movement sends each output element's gradient back to the input
// element it was copied from, summing where one element was copied to
// several places (broadcasts, tile, repeat, take, gather). The rules are
// written with *_like operators and with reshape's copying special values
// (0, -2, -4) rather than with the input's dimensions, so that inputs with
// `?` dimensions get gradients too. The one exception is concatenate along
// an axis on which more than one of its inputs has an unknown extent: no
// slice can find their boundary, and the rule says so.
//
// The adjoints of slicing and indexing are operators of their own,
// slice_scatter (of strided_slice) and scatter_add (of gather and take),
// each with a rule here, so gradients can be differentiated again.
#include <algorithm>
#include <optional>
#include <string>

#include "compiler/passes/operator_gradients/operator_gradients.h"
#include "kernels/operator.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay::passes::operator_gradients {
namespace {

using ir::Expr;
using kernels::Attrs;
using kernels::AttrValue;

int64_t RankOf(const ir::Type& type) {
  return static_cast<int64_t>(TensorTypeOf(type).shape.size());
}

const AttrValue& Attr(const GradientContext& context, std::string_view name) {
  return kernels::GetAttr(context.call.attrs, name);
}

// An axis in [-rank, rank) made non-negative (the type checker has checked
// the range).
int64_t Normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// A scalar constant of integer `dtype`: an axis extent for take's wrapping.
Expr IntegerConstant(int64_t value, DType dtype) {
  Ref<Tensor> scalar = Tensor::Empty(HostDevice(), {}, dtype);
  switch (dtype) {
    case DType::kInt8:
      *scalar->data<int8_t>() = static_cast<int8_t>(value);
      break;
    case DType::kInt16:
      *scalar->data<int16_t>() = static_cast<int16_t>(value);
      break;
    case DType::kInt32:
      *scalar->data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kInt64:
      *scalar->data<int64_t>() = value;
      break;
    case DType::kUInt8:
      *scalar->data<uint8_t>() = static_cast<uint8_t>(value);
      break;
    default:
      RELAY_CHECK(false, "integer constant of dtype " + std::string(DTypeName(dtype)));
  }
  return ir::Make<ir::ConstantNode>(std::move(scalar));
}

// The gradient of a tensor input that only moved: `gradient` with the
// elements back in the input's row-major order (reshape, squeeze,
// expand_dims, reshape_like all keep that order).
Expr ReshapedBack(const Expr& gradient, const Expr& input) {
  return Op("reshape_like", {gradient, input});
}

// The sum of `gradient` in `input`'s dtype: the gradient of a scalar that
// was repeated into every element (full's and full_like's fill value).
// Null when `input` is not floating point.
Expr FillValueGradient(const Expr& gradient, const ir::Type& input_type,
                       const ir::Type& output_type) {
  const DType from = TensorTypeOf(input_type).dtype;
  if (!IsFloat(from)) return nullptr;
  Expr sum = Op("sum", {gradient});
  if (TensorTypeOf(output_type).dtype == from) return sum;
  return Op("cast", {sum}, {{"dtype", AttrValue::String(std::string(DTypeName(from)))}});
}

// ---- concatenate, stack, split -------------------------------------------------------------

// Each field's part of the gradient, sliced along the axis. A field's
// place is known from the start while the extents before it are, and from
// the end while those after it are: one unknown extent is found between
// the two.
Expr ConcatenateGradient(const GradientContext& context) {
  const auto& fields = ir::As<ir::TupleTypeNode>(context.input_type(0))->fields;
  const int64_t rank = RankOf(fields[0]);
  const int64_t axis = Normalized(Attr(context, "axis").as_int(), rank);
  std::vector<int64_t> extents;
  int64_t unknown = 0;
  for (const ir::Type& field : fields) {
    extents.push_back(TensorTypeOf(field).shape[axis]);
    if (extents.back() == ir::kAnyDim) ++unknown;
  }
  if (unknown > 1) {
    throw Error(ErrorKind::kType,
                "the gradient of concatenate needs the extents of its inputs along axis " +
                    std::to_string(axis) + " to be known for all but one of them, in " +
                    ir::TypeToString(context.input_type(0)));
  }
  auto slice = [&](int64_t begin, int64_t end, const char* mode) {
    return Op("strided_slice", {context.output_gradient},
              {{"begin", AttrValue::IntList({begin})},
               {"end", AttrValue::IntList({end})},
               {"axes", AttrValue::IntList({axis})},
               {"slice_mode", AttrValue::String(mode)}});
  };
  std::vector<Expr> gradients;
  int64_t before = 0;  // the known extents before the field, while all are known
  bool after_unknown = false;
  for (size_t index = 0; index < extents.size(); ++index) {
    int64_t after = 0;  // the extents after the field (known if it is not the unknown one's)
    for (size_t later = index + 1; later < extents.size(); ++later) {
      if (extents[later] != ir::kAnyDim) after += extents[later];
    }
    if (extents[index] == ir::kAnyDim) {
      // From its offset to `after` before the end (size -1: to the end).
      gradients.push_back(after == 0 ? slice(before, -1, "size") : slice(before, -after, "end"));
      after_unknown = true;
    } else if (!after_unknown) {
      gradients.push_back(slice(before, extents[index], "size"));
      before += extents[index];
    } else {
      gradients.push_back(slice(-(extents[index] + after), extents[index], "size"));
    }
  }
  return ir::Make<ir::TupleNode>(std::move(gradients));
}

// stack's output has the fields one after another along the new axis:
// split it back and drop that axis.
Expr StackGradient(const GradientContext& context) {
  const auto& fields = ir::As<ir::TupleTypeNode>(context.input_type(0))->fields;
  const int64_t axis = Normalized(Attr(context, "axis").as_int(), RankOf(fields[0]) + 1);
  const int64_t count = static_cast<int64_t>(fields.size());
  Expr parts = Op("split", {context.output_gradient},
                  {{"indices_or_sections", AttrValue::Int(count)}, {"axis", AttrValue::Int(axis)}});
  std::vector<Expr> gradients;
  for (int64_t index = 0; index < count; ++index) {
    gradients.push_back(Op("squeeze", {Project(parts, static_cast<int>(index))},
                           {{"axis", AttrValue::IntList({axis})}}));
  }
  return ir::Make<ir::TupleNode>(std::move(gradients));
}

// ---- repetition ----------------------------------------------------------------------------

// tile: output axis i holds reps[i] copies of input axis i (both padded
// with leading 1s to one rank). Splitting each output axis into
// (reps[i], extent) with reshape's -4, then summing the copies, gives the
// gradient of the padded input.
Expr TileGradient(const GradientContext& context) {
  const std::vector<int64_t> given = Attr(context, "reps").as_int_list();
  const int64_t rank = RankOf(context.output_type());
  std::vector<int64_t> reps(static_cast<size_t>(rank), 1);
  std::copy(given.begin(), given.end(), reps.end() - static_cast<int64_t>(given.size()));
  if (std::all_of(reps.begin(), reps.end(), [](int64_t rep) { return rep == 1; })) {
    return ReshapedBack(context.output_gradient, context.inputs[0]);
  }
  std::vector<int64_t> newshape, copies;
  for (int64_t axis = 0; axis < rank; ++axis) {
    newshape.insert(newshape.end(), {-4, reps[axis], -1});
    copies.push_back(2 * axis);
  }
  Expr split =
      Op("reshape", {context.output_gradient}, {{"newshape", AttrValue::IntList(newshape)}});
  Expr summed = Op("sum", {split}, {{"axis", AttrValue::IntList(copies)}});
  return ReshapedBack(summed, context.inputs[0]);
}

// repeat: output element j along the axis copies input element j / repeats,
// so the axis splits into (extent, repeats) and the repeats are summed.
Expr RepeatGradient(const GradientContext& context) {
  const int64_t rank = RankOf(context.input_type(0));
  const int64_t axis = Normalized(Attr(context, "axis").as_int(), rank);
  const int64_t repeats = Attr(context, "repeats").as_int();
  if (repeats == 1) return context.output_gradient;
  std::vector<int64_t> newshape(static_cast<size_t>(axis), 0);  // 0 copies a dimension
  newshape.insert(newshape.end(), {-4, -1, repeats, -2});
  Expr split =
      Op("reshape", {context.output_gradient}, {{"newshape", AttrValue::IntList(newshape)}});
  return Op("sum", {split}, {{"axis", AttrValue::IntList({axis + 1})}});
}

// ---- indexing ------------------------------------------------------------------------------

// The extent of `data` along `axis` (its element count for no axis), as a
// scalar of integer `dtype`: a constant when the type knows it.
Expr ExtentOf(const Expr& data, const ir::Type& data_type, std::optional<int64_t> axis,
              DType dtype) {
  const std::vector<int64_t>& shape = TensorTypeOf(data_type).shape;
  const std::string dtype_name(DTypeName(dtype));
  if (!axis) {
    int64_t count = 1;
    for (int64_t dim : shape) {
      if (dim == ir::kAnyDim) {
        return Op("ndarray_size", {data}, {{"dtype", AttrValue::String(dtype_name)}});
      }
      count *= dim;
    }
    return IntegerConstant(count, dtype);
  }
  if (shape[*axis] != ir::kAnyDim) return IntegerConstant(shape[*axis], dtype);
  return Op("take",
            {Op("shape_of", {data}, {{"dtype", AttrValue::String(dtype_name)}}),
             IntegerConstant(*axis, dtype)},
            {{"axis", AttrValue::Int(0)}});
}

// take: out[p, q, r] = data[p, resolve(indices[b, q]), r] with p the axes
// before `axis` (b, the first batch_dims of them, shared with indices), q
// the remaining axes of indices and r the axes after. The gradient
// flattens q into one axis, spreads the indices over p and r, and
// scatter-adds along the axis. clip and fast clamp out-of-range indices,
// as scatter_add does; wrap is resolved here, modulo the extent.
Expr TakeGradient(const GradientContext& context) {
  const Expr& data = context.inputs[0];
  Expr indices = context.inputs[1];
  const Expr& gradient = context.output_gradient;
  const ir::Type& data_type = context.input_type(0);
  const DType index_dtype = TensorTypeOf(context.input_type(1)).dtype;
  const bool wrap = Attr(context, "mode").as_string() == "wrap";
  const AttrValue& given_axis = Attr(context, "axis");
  auto flatten = [](const Expr& value) {
    return Op("reshape", {value}, {{"newshape", AttrValue::IntList({-1})}});
  };
  auto scatter = [](const Expr& base, const Expr& where, const Expr& what, int64_t axis) {
    return Op("scatter_add", {base, where, what}, {{"axis", AttrValue::Int(axis)}});
  };
  if (given_axis.is_none()) {
    // From the flattened data.
    Expr flat_indices = flatten(indices);
    if (wrap) {
      flat_indices = Op("floor_mod", {flat_indices, ExtentOf(data, data_type, {}, index_dtype)});
    }
    Expr flat = scatter(flatten(Op("zeros_like", {data})), flat_indices, flatten(gradient), 0);
    return ReshapedBack(flat, data);
  }
  const int64_t rank = RankOf(data_type);
  const int64_t indices_rank = RankOf(context.input_type(1));
  const int64_t axis = Normalized(given_axis.as_int(), rank);
  const int64_t batch_dims = Normalized(Attr(context, "batch_dims").as_int(), indices_rank);
  // indices as (b..., n), then as (b..., 1 for each other axis of p, n, 1 for each axis of r).
  std::vector<int64_t> newshape(static_cast<size_t>(batch_dims), 0);
  newshape.push_back(-1);
  Expr flat_indices = Op("reshape", {indices}, {{"newshape", AttrValue::IntList(newshape)}});
  if (wrap) {
    flat_indices = Op("floor_mod", {flat_indices, ExtentOf(data, data_type, axis, index_dtype)});
  }
  // The gradient as (p..., n, r...).
  Expr flat_gradient = Op("reshape_like", {gradient, flat_indices},
                          {{"lhs_begin", AttrValue::Int(axis)},
                           {"lhs_end", AttrValue::Int(axis + indices_rank - batch_dims)},
                           {"rhs_begin", AttrValue::Int(batch_dims)},
                           {"rhs_end", AttrValue::Int(batch_dims + 1)}});
  Expr spread = flat_indices;
  if (axis > batch_dims) {
    spread = Op(
        "expand_dims", {spread},
        {{"axis", AttrValue::Int(batch_dims)}, {"num_newaxis", AttrValue::Int(axis - batch_dims)}});
  }
  if (rank - axis - 1 > 0) {
    spread =
        Op("expand_dims", {spread},
           {{"axis", AttrValue::Int(axis + 1)}, {"num_newaxis", AttrValue::Int(rank - axis - 1)}});
  }
  spread = Op("broadcast_to_like", {spread, flat_gradient});
  return scatter(Op("zeros_like", {data}), spread, flat_gradient, axis);
}

}  // namespace

void AddTransformGradients(RuleTable& table) {
  // Reshapes keep the row-major order of the elements.
  for (const char* name : {"reshape", "squeeze", "expand_dims"}) {
    table.emplace_back(name, [](const GradientContext& context) -> std::vector<Expr> {
      return {ReshapedBack(context.output_gradient, context.inputs[0])};
    });
  }
  // shape_like gives only its shape: no gradient.
  table.emplace_back("reshape_like", [](const GradientContext& context) -> std::vector<Expr> {
    return {ReshapedBack(context.output_gradient, context.inputs[0]), nullptr};
  });
  // The inverse permutation; axes=None reverses the axes, its own inverse.
  table.emplace_back("transpose", [](const GradientContext& context) -> std::vector<Expr> {
    const AttrValue& axes = Attr(context, "axes");
    if (axes.is_none()) return {Op("transpose", {context.output_gradient})};
    const std::vector<int64_t> given = axes.as_int_list();
    const int64_t rank = static_cast<int64_t>(given.size());
    std::vector<int64_t> inverse(given.size());
    for (int64_t index = 0; index < rank; ++index) {
      inverse[static_cast<size_t>(Normalized(given[index], rank))] = index;
    }
    return {Op("transpose", {context.output_gradient}, {{"axes", AttrValue::IntList(inverse)}})};
  });
  table.emplace_back("reverse", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("reverse", {context.output_gradient}, context.call.attrs)};
  });

  table.emplace_back("concatenate", [](const GradientContext& context) -> std::vector<Expr> {
    return {ConcatenateGradient(context)};
  });
  table.emplace_back("stack", [](const GradientContext& context) -> std::vector<Expr> {
    return {StackGradient(context)};
  });
  // The output's gradient is a tuple with one tensor per part: joined again.
  table.emplace_back("split", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("concatenate", {context.output_gradient}, {{"axis", Attr(context, "axis")}})};
  });

  table.emplace_back("strided_slice", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("slice_scatter", {Op("zeros_like", {context.inputs[0]}), context.output_gradient},
               context.call.attrs)};
  });
  // data keeps the gradient outside the slice; source gets the slice.
  table.emplace_back("slice_scatter", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& gradient = context.output_gradient;
    return {
        Op("slice_scatter", {gradient, Op("zeros_like", {context.inputs[1]})}, context.call.attrs),
        Op("strided_slice", {gradient}, context.call.attrs)};
  });
  table.emplace_back("take", [](const GradientContext& context) -> std::vector<Expr> {
    return {TakeGradient(context), nullptr};
  });
  table.emplace_back("gather", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("scatter_add",
               {Op("zeros_like", {context.inputs[0]}), context.inputs[1], context.output_gradient},
               context.call.attrs),
            nullptr};
  });
  // Each update is added to one element: it gets that element's gradient,
  // read with the same (clamped) indices, which is gather.
  table.emplace_back("scatter_add", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& gradient = context.output_gradient;
    return {gradient, nullptr, Op("gather", {gradient, context.inputs[1]}, context.call.attrs)};
  });

  table.emplace_back("tile", [](const GradientContext& context) -> std::vector<Expr> {
    return {TileGradient(context)};
  });
  table.emplace_back("repeat", [](const GradientContext& context) -> std::vector<Expr> {
    return {RepeatGradient(context)};
  });
  table.emplace_back("broadcast_to", [](const GradientContext& context) -> std::vector<Expr> {
    return {SumToShapeOf(context.output_gradient, context.output_type(), context.inputs[0],
                         context.input_type(0))};
  });
  // broadcast_type gives only its shape: no gradient.
  table.emplace_back("broadcast_to_like", [](const GradientContext& context) -> std::vector<Expr> {
    return {SumToShapeOf(context.output_gradient, context.output_type(), context.inputs[0],
                         context.input_type(0)),
            nullptr};
  });
  // The adjoint of summing down is broadcasting up.
  table.emplace_back("collapse_sum_like", [](const GradientContext& context) -> std::vector<Expr> {
    return {Op("broadcast_to_like", {context.output_gradient, context.inputs[0]}), nullptr};
  });

  table.emplace_back("full", [](const GradientContext& context) -> std::vector<Expr> {
    return {
        FillValueGradient(context.output_gradient, context.input_type(0), context.output_type())};
  });
  // data gives only its shape and dtype.
  table.emplace_back("full_like", [](const GradientContext& context) -> std::vector<Expr> {
    return {nullptr, FillValueGradient(context.output_gradient, context.input_type(1),
                                       context.output_type())};
  });
  // out[i] = start + i step: d/dstart is the sum of the gradient, d/dstep
  // the sum of i times it, with i = (out - start) / step; stop only moves
  // the (whole) length, a piecewise constant function of it.
  table.emplace_back("arange", [](const GradientContext& context) -> std::vector<Expr> {
    const Expr& start = context.inputs[0];
    const Expr& step = context.inputs[2];
    const Expr& gradient = context.output_gradient;
    Expr positions = Op("divide", {Op("subtract", {context.output, start}), step});
    return {Op("sum", {gradient}), nullptr, Op("sum", {Op("multiply", {gradient, positions})})};
  });
}

}  // namespace relay::passes::operator_gradients
