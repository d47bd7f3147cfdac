// Shape-transforming operators (reshape, transpose, squeeze, expand_dims,
// concatenate, split, stack, strided_slice, take, gather, tile, repeat,
// reverse, broadcasts), their adjoints (slice_scatter, scatter_add: the
// gradients of strided_slice and of gather and take) and tensor creation
// (zeros, ones, full, *_like, arange, shape_of, ndarray_size).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/operator_table.h"
#include "kernels/operators/relation_helpers.h"

namespace relay::kernels {
namespace {

int64_t KnownElementCount(const Dims& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count = MultiplyDims(count, dim);
  return count;
}

// ---- reshape ----------------------------------------------------------------------

// Relay's reshape rule. Walking `newshape` while tracking a position in the
// input's dimensions:
//   d > 0  emits d and advances one input dimension;
//   0      copies the input dimension at the current position (or, with
//          allowzero, emits a literal 0) and advances one;
//   -1     emits a placeholder to infer and advances one;
//   -2     copies every remaining input dimension;
//   -3     emits the product of the next two input dimensions;
//   -4     splits the next input dimension into the two values that follow
//          (one of which may be -1).
// The -1 placeholder becomes the product of the input dimensions that were not
// copied by 0/-2/-3/-4 divided by the product of the output dimensions that
// were not produced by copying (the explicit positive values).
Dims InferReshape(const Dims& input, const std::vector<int64_t>& newshape, bool allowzero) {
  Dims output;
  std::vector<bool> input_copied(input.size(), false);
  std::vector<bool> output_copied;
  std::optional<size_t> inferred;
  size_t source = 0;
  auto emit = [&](int64_t dim, bool copied) {
    output.push_back(dim);
    output_copied.push_back(copied);
  };
  auto need_input = [&](size_t count, std::string_view what) {
    if (source + count > input.size()) {
      FailRelation("newshape " + AttrValue::IntList(newshape).ToString() + " " + std::string(what) +
                   " beyond the rank " + std::to_string(input.size()) + " of the input " +
                   DimsToString(input));
    }
  };
  for (size_t index = 0; index < newshape.size(); ++index) {
    const int64_t value = newshape[index];
    if (value > 0) {
      emit(value, false);
      ++source;
    } else if (value == 0 && allowzero) {
      emit(0, false);
      ++source;
    } else if (value == 0) {
      need_input(1, "copies (0) a dimension");
      input_copied[source] = true;
      emit(input[source++], true);
    } else if (value == -1) {
      if (inferred.has_value()) {
        FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                     " has more than one -1");
      }
      inferred = output.size();
      emit(1, false);
      ++source;
    } else if (value == -2) {
      while (source < input.size()) {
        input_copied[source] = true;
        emit(input[source++], true);
      }
    } else if (value == -3) {
      need_input(2, "merges (-3) dimensions");
      input_copied[source] = input_copied[source + 1] = true;
      emit(MultiplyDims(input[source], input[source + 1]), true);
      source += 2;
    } else if (value == -4) {
      if (index + 2 >= newshape.size()) {
        FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                     ": -4 must be followed by the two parts of the split");
      }
      need_input(1, "splits (-4) a dimension");
      const int64_t whole = input[source];
      input_copied[source++] = true;
      int64_t first = newshape[++index];
      int64_t second = newshape[++index];
      if ((first < 1 && first != -1) || (second < 1 && second != -1) ||
          (first == -1 && second == -1)) {
        FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                     ": the two parts after -4 must be positive, at most one of them -1");
      }
      if (IsKnownDim(whole)) {
        const int64_t known_part = first == -1 ? second : first;
        if (whole % known_part != 0) {
          FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                       ": cannot split input dimension " + std::to_string(whole) +
                       " into parts of " + std::to_string(known_part));
        }
        if (first == -1) first = whole / second;
        if (second == -1) second = whole / first;
        if (CheckedMultiply(first, second) != whole) {
          FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                       ": cannot split input dimension " + std::to_string(whole) + " into " +
                       std::to_string(first) + " x " + std::to_string(second));
        }
      } else {
        if (first == -1) first = kAnyDim;
        if (second == -1) second = kAnyDim;
      }
      emit(first, true);
      emit(second, true);
    } else {
      FailRelation("newshape " + AttrValue::IntList(newshape).ToString() +
                   " has the unsupported value " + std::to_string(value) +
                   " (special values are 0, -1, -2, -3 and -4)");
    }
  }
  if (inferred.has_value()) {
    int64_t remaining = 1;
    for (size_t index = 0; index < input.size(); ++index) {
      if (!input_copied[index]) remaining = MultiplyDims(remaining, input[index]);
    }
    int64_t divisor = 1;
    for (size_t index = 0; index < output.size(); ++index) {
      if (!output_copied[index] && index != *inferred) {
        divisor = MultiplyDims(divisor, output[index]);
      }
    }
    if (!IsKnownDim(remaining) || !IsKnownDim(divisor)) {
      output[*inferred] = kAnyDim;
    } else if (divisor == 0 || remaining % divisor != 0) {
      FailRelation("cannot reshape a tensor of shape " + DimsToString(input) + " with newshape " +
                   AttrValue::IntList(newshape).ToString() +
                   ": the -1 dimension cannot be inferred");
    } else {
      output[*inferred] = remaining / divisor;
    }
  }
  const int64_t input_count = KnownElementCount(input);
  const int64_t output_count = KnownElementCount(output);
  if (IsKnownDim(input_count) && IsKnownDim(output_count) && input_count != output_count) {
    FailRelation("cannot reshape a tensor of shape " + DimsToString(input) + " (" +
                 std::to_string(input_count) + " elements) to shape " + DimsToString(output) +
                 " (" + std::to_string(output_count) + " elements)");
  }
  return output;
}

ValueType ReshapeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  return ValueType::Tensor(
      InferReshape(data.shape, IntListAttr(attrs, "newshape"), BoolAttr(attrs, "allowzero")),
      data.dtype);
}

// data[:lhs_begin] + shape_like[rhs_begin:rhs_end] + data[lhs_end:].
ValueType ReshapeLikeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& like = ExpectTensor(inputs, 1, "shape_like");
  auto bound = [&attrs](std::string_view name, const Dims& shape, bool is_end) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t value = is_end ? OptionalIntAttr(attrs, name).value_or(rank) : IntAttr(attrs, name);
    if (value < 0) value += rank;
    if (value < 0 || value > rank) {
      FailRelation("attribute '" + std::string(name) + "' is out of range for rank " +
                   std::to_string(rank));
    }
    return value;
  };
  const int64_t lhs_begin = bound("lhs_begin", data.shape, false);
  const int64_t lhs_end = bound("lhs_end", data.shape, true);
  const int64_t rhs_begin = bound("rhs_begin", like.shape, false);
  const int64_t rhs_end = bound("rhs_end", like.shape, true);
  if (lhs_begin > lhs_end || rhs_begin > rhs_end) {
    FailRelation("reshape_like's begin attributes must not exceed its end attributes");
  }
  Dims shape(data.shape.begin(), data.shape.begin() + lhs_begin);
  shape.insert(shape.end(), like.shape.begin() + rhs_begin, like.shape.begin() + rhs_end);
  shape.insert(shape.end(), data.shape.begin() + lhs_end, data.shape.end());
  const int64_t input_count = KnownElementCount(data.shape);
  const int64_t output_count = KnownElementCount(shape);
  if (IsKnownDim(input_count) && IsKnownDim(output_count) && input_count != output_count) {
    FailRelation("cannot reshape a tensor of shape " + DimsToString(data.shape) + " to shape " +
                 DimsToString(shape));
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

// ---- axis permutations and insertions ---------------------------------------------

ValueType TransposeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const size_t rank = data.shape.size();
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> given = OptionalIntListAttr(attrs, "axes")) {
    if (given->size() != rank) {
      FailRelation("attribute 'axes' " + GetAttr(attrs, "axes").ToString() + " must list " +
                   std::to_string(rank) + " axes for a tensor of rank " + std::to_string(rank));
    }
    axes = NormalizeAxes(*given, rank);
  } else {
    for (size_t index = rank; index > 0; --index) axes.push_back(static_cast<int64_t>(index - 1));
  }
  Dims shape;
  for (int64_t axis : axes) shape.push_back(data.shape[axis]);
  return ValueType::Tensor(std::move(shape), data.dtype);
}

ValueType SqueezeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const size_t rank = data.shape.size();
  std::vector<bool> removed(rank, false);
  if (std::optional<std::vector<int64_t>> axes = OptionalIntListAttr(attrs, "axis")) {
    for (int64_t axis : NormalizeAxes(*axes, rank)) {
      if (IsKnownDim(data.shape[axis]) && data.shape[axis] != 1) {
        FailRelation("cannot squeeze axis " + std::to_string(axis) + " of " + data.ToString() +
                     ": its extent is " + std::to_string(data.shape[axis]) + ", not 1");
      }
      removed[axis] = true;
    }
  } else {
    for (size_t index = 0; index < rank; ++index) {
      // Which axes disappear must be known when typing, as in TVM.
      if (!IsKnownDim(data.shape[index])) {
        FailRelation("squeeze without 'axis' needs every dimension known, but " + data.ToString() +
                     " has ? at axis " + std::to_string(index));
      }
      removed[index] = data.shape[index] == 1;
    }
  }
  Dims shape;
  for (size_t index = 0; index < rank; ++index) {
    if (!removed[index]) shape.push_back(data.shape[index]);
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

ValueType ExpandDimsRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const int64_t count = IntAttr(attrs, "num_newaxis");
  if (count < 0 || count > kMaxNewAxes) {
    FailRelation("attribute 'num_newaxis' must be in [0, " + std::to_string(kMaxNewAxes) +
                 "], got " + std::to_string(count));
  }
  const int64_t axis = NormalizeInsertionAxis(IntAttr(attrs, "axis"), data.shape.size());
  Dims shape = data.shape;
  shape.insert(shape.begin() + axis, static_cast<size_t>(count), 1);
  return ValueType::Tensor(std::move(shape), data.dtype);
}

// ---- joining and splitting --------------------------------------------------------

// The tuple's tensors, which must be non-empty and agree on rank and dtype.
const std::vector<ValueType>& ExpectJoinable(const ValueType& tuple) {
  if (tuple.fields.empty()) FailRelation("input 'data' must be a non-empty tuple of tensors");
  const ValueType& first = tuple.fields[0];
  for (const ValueType& field : tuple.fields) {
    ExpectSameDType(first, field);
    if (field.shape.size() != first.shape.size()) {
      FailRelation("the tensors must all have the same rank: " + first.ToString() + " and " +
                   field.ToString());
    }
  }
  return tuple.fields;
}

ValueType ConcatenateRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const std::vector<ValueType>& fields = ExpectJoinable(ExpectTupleOfTensors(inputs, 0, "data"));
  const size_t rank = fields[0].shape.size();
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), rank);
  Dims shape = fields[0].shape;
  shape[axis] = 0;
  for (const ValueType& field : fields) {
    for (size_t index = 0; index < rank; ++index) {
      if (static_cast<int64_t>(index) == axis) continue;
      const int64_t dim = field.shape[index];
      if (IsKnownDim(shape[index]) && IsKnownDim(dim) && shape[index] != dim) {
        FailRelation("cannot concatenate " + fields[0].ToString() + " and " + field.ToString() +
                     " along axis " + std::to_string(axis) + ": they differ on axis " +
                     std::to_string(index));
      }
      if (!IsKnownDim(shape[index])) shape[index] = dim;
    }
    shape[axis] = AddDims(shape[axis], field.shape[axis]);
  }
  return ValueType::Tensor(std::move(shape), fields[0].dtype);
}

ValueType StackRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const std::vector<ValueType>& fields = ExpectJoinable(ExpectTupleOfTensors(inputs, 0, "data"));
  Dims shape = fields[0].shape;
  for (const ValueType& field : fields) {
    for (size_t index = 0; index < shape.size(); ++index) {
      const int64_t dim = field.shape[index];
      if (IsKnownDim(shape[index]) && IsKnownDim(dim) && shape[index] != dim) {
        FailRelation("cannot stack " + fields[0].ToString() + " and " + field.ToString() +
                     ": stacked tensors must have the same shape");
      }
      if (!IsKnownDim(shape[index])) shape[index] = dim;
    }
  }
  const int64_t axis = NormalizeInsertionAxis(IntAttr(attrs, "axis"), shape.size());
  shape.insert(shape.begin() + axis, static_cast<int64_t>(fields.size()));
  return ValueType::Tensor(std::move(shape), fields[0].dtype);
}

// indices_or_sections: an integer N (N equal parts; the extent must divide)
// or a strictly increasing list of split points, each inside (0, extent).
ValueType SplitRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectMinimumRank(data, 1, "data");
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  const int64_t extent = data.shape[axis];
  const AttrValue& split = GetAttr(attrs, "indices_or_sections");
  std::vector<ValueType> fields;
  auto add_part = [&](int64_t length) {
    Dims shape = data.shape;
    shape[axis] = length;
    fields.push_back(ValueType::Tensor(std::move(shape), data.dtype));
  };
  if (split.kind() == AttrValue::Kind::kInt) {
    const int64_t sections = split.as_int();
    if (sections < 1 || sections > kMaxSplitSections) {
      FailRelation("attribute 'indices_or_sections' must be in [1, " +
                   std::to_string(kMaxSplitSections) + "], got " + split.ToString());
    }
    if (IsKnownDim(extent) && extent % sections != 0) {
      FailRelation("cannot split axis " + std::to_string(axis) + " of extent " +
                   std::to_string(extent) + " into " + std::to_string(sections) +
                   " equal sections");
    }
    for (int64_t part = 0; part < sections; ++part) {
      add_part(IsKnownDim(extent) ? extent / sections : kAnyDim);
    }
  } else if (split.kind() == AttrValue::Kind::kList &&
             std::all_of(split.as_list().begin(), split.as_list().end(), [](const AttrValue& item) {
               return item.kind() == AttrValue::Kind::kInt;
             })) {
    int64_t begin = 0;
    for (int64_t index : split.as_int_list()) {
      if (index <= begin) {
        FailRelation("attribute 'indices_or_sections' " + split.ToString() +
                     " must be strictly increasing and positive");
      }
      add_part(index - begin);
      begin = index;
    }
    if (!fields.empty() && IsKnownDim(extent) && begin >= extent) {
      FailRelation("attribute 'indices_or_sections' " + split.ToString() +
                   " must stay below the extent " + std::to_string(extent) + " of axis " +
                   std::to_string(axis));
    }
    add_part(IsKnownDim(extent) ? extent - begin : kAnyDim);
  } else {
    FailRelation("attribute 'indices_or_sections' expects an integer or a list of integers, got " +
                 split.ToString());
  }
  return ValueType::Tuple(std::move(fields));
}

// ---- slicing and indexing ----------------------------------------------------------

// Python's slice-index clamping: negative indices count from the end, then
// clamp to [0, extent] for a positive stride or [-1, extent - 1] for a
// negative one (-1 there means "before the first element").
int64_t ClampSliceIndex(int64_t index, int64_t extent, int64_t stride) {
  const int64_t low = stride < 0 ? -1 : 0;
  const int64_t high = stride < 0 ? extent - 1 : extent;
  if (index < 0) index += extent;
  return std::clamp(index, low, high);
}

ValueType StridedSliceRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const size_t rank = data.shape.size();
  const std::vector<int64_t> begin = IntListAttr(attrs, "begin");
  const std::vector<int64_t> end = IntListAttr(attrs, "end");
  std::vector<int64_t> strides =
      OptionalIntListAttr(attrs, "strides").value_or(std::vector<int64_t>{});
  const bool size_mode = ChoiceAttr(attrs, "slice_mode", {"end", "size"}) == "size";

  // Which axes are sliced: `axes` names them (begin/end/strides line up with
  // it); otherwise begin/end/strides cover the leading axes and the rest are
  // taken whole.
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> given = OptionalIntListAttr(attrs, "axes")) {
    axes = NormalizeAxes(*given, rank, "axes entry");
    if (begin.size() != axes.size() || end.size() != axes.size()) {
      FailRelation("attributes 'begin' and 'end' must each have one value per entry of 'axes'");
    }
  } else {
    const size_t count = std::max({begin.size(), end.size(), strides.size()});
    if (count > rank) {
      FailRelation("attributes 'begin', 'end' and 'strides' have " + std::to_string(count) +
                   " values but 'data' " + data.ToString() + " has rank " + std::to_string(rank));
    }
    for (size_t axis = 0; axis < count; ++axis) axes.push_back(static_cast<int64_t>(axis));
  }
  if (strides.size() > axes.size()) {
    FailRelation("attribute 'strides' has more values than there are sliced axes");
  }
  strides.resize(axes.size(), 1);
  if (size_mode) std::fill(strides.begin(), strides.end(), 1);

  constexpr int64_t kPastEnd = std::numeric_limits<int64_t>::max();
  constexpr int64_t kBeforeStart = std::numeric_limits<int64_t>::min();
  Dims shape = data.shape;
  for (size_t slot = 0; slot < axes.size(); ++slot) {
    const int64_t axis = axes[slot];
    const int64_t stride = strides[slot];
    if (stride == 0) FailRelation("attribute 'strides' must not contain 0");
    const int64_t extent = data.shape[axis];
    if (!IsKnownDim(extent)) {
      shape[axis] = kAnyDim;
      continue;
    }
    // Missing begin/end values take the whole axis in the stride's direction.
    const int64_t raw_begin = slot < begin.size() ? begin[slot] : (stride > 0 ? 0 : kPastEnd);
    const int64_t first = ClampSliceIndex(raw_begin, extent, stride);
    int64_t last;
    if (size_mode) {
      const int64_t size = slot < end.size() ? end[slot] : -1;
      last = size < 0 || size > extent - first ? extent : first + size;
    } else {
      const int64_t raw_end =
          slot < end.size() ? end[slot] : (stride > 0 ? kPastEnd : kBeforeStart);
      last = ClampSliceIndex(raw_end, extent, stride);
    }
    // Relay rejects a slice that runs against its stride (NumPy would give
    // an empty result).
    if (stride > 0 ? first > last : first < last) {
      FailRelation("strided_slice on axis " + std::to_string(axis) + " of " + data.ToString() +
                   ": begin " + std::to_string(raw_begin) + " and end " +
                   std::to_string(slot < end.size() ? end[slot] : 0) + " run against stride " +
                   std::to_string(stride));
    }
    const int64_t distance = stride > 0 ? last - first : first - last;
    const int64_t step = stride > 0 ? stride : -stride;
    shape[axis] = distance / step + (distance % step != 0 ? 1 : 0);
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

// axis=None takes from the flattened data (output: indices' shape);
// otherwise data[:axis] + indices[batch_dims:] + data[axis + 1:], the first
// batch_dims dimensions of data and indices being shared.
ValueType TakeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& indices = ExpectTensor(inputs, 1, "indices");
  ExpectIntegerDType(indices, "indices");
  ChoiceAttr(attrs, "mode", {"clip", "wrap", "fast"});
  std::optional<int64_t> given_axis = OptionalIntAttr(attrs, "axis");
  if (!given_axis.has_value()) return ValueType::Tensor(indices.shape, data.dtype);
  const int64_t axis = NormalizeAxis(*given_axis, data.shape.size());
  int64_t batch_dims = IntAttr(attrs, "batch_dims");
  const int64_t indices_rank = static_cast<int64_t>(indices.shape.size());
  if (batch_dims < 0) batch_dims += indices_rank;
  if (batch_dims < 0 || batch_dims > indices_rank || batch_dims > axis) {
    FailRelation("attribute 'batch_dims' " + std::to_string(IntAttr(attrs, "batch_dims")) +
                 " must lie in [0, min(rank of indices, axis)] = [0, " +
                 std::to_string(std::min(indices_rank, axis)) + "]");
  }
  Dims shape;
  for (int64_t index = 0; index < axis; ++index) {
    shape.push_back(
        index < batch_dims
            ? UnifyDims(data.shape[index], indices.shape[index],
                        "'data' and 'indices' differ on batch dimension " + std::to_string(index))
            : data.shape[index]);
  }
  shape.insert(shape.end(), indices.shape.begin() + batch_dims, indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  return ValueType::Tensor(std::move(shape), data.dtype);
}

// Off `axis`, `indices` (of data's rank) must fit inside `data`: its
// positions there address data's elements directly, and no kernel may read
// outside a buffer.
void ExpectWithinOffAxis(const ValueType& indices, const ValueType& data, int64_t axis,
                         std::string_view name) {
  for (size_t index = 0; index < data.shape.size(); ++index) {
    const int64_t dim = indices.shape[index];
    if (static_cast<int64_t>(index) != axis && IsKnownDim(dim) && IsKnownDim(data.shape[index]) &&
        dim > data.shape[index]) {
      FailRelation("input '" + std::string(name) + "' " + indices.ToString() +
                   " must be no larger than 'data' " + data.ToString() + " off axis " +
                   std::to_string(axis));
    }
  }
}

// gather: out[i][j] = data[i][indices[i][j]] along axis; output has indices'
// shape, which must have data's rank.
ValueType GatherRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& indices = ExpectTensor(inputs, 1, "indices");
  ExpectIntegerDType(indices, "indices");
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  if (indices.shape.size() != data.shape.size()) {
    FailRelation("input 'indices' " + indices.ToString() + " must have the rank of 'data' " +
                 data.ToString());
  }
  ExpectWithinOffAxis(indices, data, axis, "indices");
  return ValueType::Tensor(indices.shape, data.dtype);
}

// slice_scatter: data with its strided_slice (the same attributes, resolved
// the same way) replaced by `source`, which must have the slice's shape.
// The adjoint of strided_slice: its gradient is slice_scatter(zeros, g).
ValueType SliceScatterRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& source = ExpectTensor(inputs, 1, "source");
  ExpectSameDType(data, source);
  const ValueType slice = StridedSliceRelation(inputs.subspan(0, 1), attrs);
  if (source.shape.size() != slice.shape.size()) {
    FailRelation("input 'source' " + source.ToString() + " must have the shape " +
                 DimsToString(slice.shape) + " of the slice of 'data' " + data.ToString());
  }
  for (size_t index = 0; index < slice.shape.size(); ++index) {
    UnifyDims(source.shape[index], slice.shape[index],
              "input 'source' " + source.ToString() + " must have the shape " +
                  DimsToString(slice.shape) + " of the slice of 'data' " + data.ToString());
  }
  return data;
}

// scatter_add, after TVM's: out = data, then out[i with i[axis] replaced by
// indices[i]] += updates[i] for every position i of indices. indices and
// updates share one shape of data's rank, no larger than data's off the
// axis. An out-of-range index (a negative one too, which TVM counts from
// the end) is clamped to the axis, as gather clamps it, so that
// scatter_add is gather's adjoint (its gradient) exactly.
ValueType ScatterAddRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& indices = ExpectTensor(inputs, 1, "indices");
  const ValueType& updates = ExpectTensor(inputs, 2, "updates");
  if (data.dtype == DType::kBool) {
    FailRelation("input 'data' must have a numeric dtype, got " + data.ToString());
  }
  ExpectIntegerDType(indices, "indices");
  ExpectSameDType(data, updates);
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  if (indices.shape.size() != data.shape.size() || updates.shape.size() != data.shape.size()) {
    FailRelation("inputs 'indices' " + indices.ToString() + " and 'updates' " + updates.ToString() +
                 " must have the rank of 'data' " + data.ToString());
  }
  for (size_t index = 0; index < data.shape.size(); ++index) {
    UnifyDims(indices.shape[index], updates.shape[index],
              "inputs 'indices' " + indices.ToString() + " and 'updates' " + updates.ToString() +
                  " must have the same shape");
  }
  ExpectWithinOffAxis(indices, data, axis, "indices");
  return data;
}

// ---- repetition and broadcasting --------------------------------------------------

// NumPy's tile: the shorter of data's shape and reps is padded with leading
// 1s, then the two multiply elementwise.
ValueType TileRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const std::vector<int64_t> reps = IntListAttr(attrs, "reps");
  for (int64_t rep : reps) {
    if (rep < 1)
      FailRelation("attribute 'reps' must have values >= 1, got " +
                   GetAttr(attrs, "reps").ToString());
  }
  const size_t rank = std::max(data.shape.size(), reps.size());
  Dims shape(rank);
  for (size_t offset = 1; offset <= rank; ++offset) {
    const int64_t dim = offset <= data.shape.size() ? data.shape[data.shape.size() - offset] : 1;
    const int64_t rep = offset <= reps.size() ? reps[reps.size() - offset] : 1;
    shape[rank - offset] = MultiplyDims(dim, rep);
  }
  return ValueType::Tensor(std::move(shape), data.dtype);
}

ValueType RepeatRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const int64_t repeats = IntAttr(attrs, "repeats");
  if (repeats < 1) FailRelation("attribute 'repeats' must be >= 1, got " + std::to_string(repeats));
  const int64_t axis = NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  Dims shape = data.shape;
  shape[axis] = MultiplyDims(shape[axis], repeats);
  return ValueType::Tensor(std::move(shape), data.dtype);
}

ValueType ReverseRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  NormalizeAxis(IntAttr(attrs, "axis"), data.shape.size());
  return data;
}

// `source` must broadcast to exactly `target` (one-way, unlike add).
Dims ExpectBroadcastsTo(const Dims& source, const Dims& target) {
  bool fits = source.size() <= target.size();
  if (fits) {
    try {
      const Dims result = BroadcastShapes(source, target);
      for (size_t index = 0; index < target.size(); ++index) {
        fits = fits && (!IsKnownDim(target[index]) || result[index] == target[index]);
      }
    } catch (const OperatorTypeError&) {
      fits = false;  // reported below, naming the direction of the broadcast
    }
  }
  if (!fits) {
    FailRelation("a tensor of shape " + DimsToString(source) + " cannot be broadcast to shape " +
                 DimsToString(target));
  }
  return target;
}

ValueType BroadcastToRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const Dims target = ExpectNonNegativeDims(IntListAttr(attrs, "shape"), "attribute 'shape'");
  return ValueType::Tensor(ExpectBroadcastsTo(data.shape, target), data.dtype);
}

ValueType BroadcastToLikeRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& like = ExpectTensor(inputs, 1, "broadcast_type");
  return ValueType::Tensor(ExpectBroadcastsTo(data.shape, like.shape), data.dtype);
}

// The inverse of broadcasting (used by automatic differentiation): sums data
// down to collapse_type's shape, which must broadcast to data's.
ValueType CollapseSumLikeRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const ValueType& like = ExpectTensor(inputs, 1, "collapse_type");
  ExpectBroadcastsTo(like.shape, data.shape);
  return ValueType::Tensor(like.shape, data.dtype);
}

// ---- creation -----------------------------------------------------------------------

AttrSchema InitSchema(const char* default_dtype) {
  return {RequiredAttr("shape", AttrKind::kIntList),
          DefaultAttr("dtype", AttrKind::kString, AttrValue::String(default_dtype))};
}

ValueType InitRelation(std::span<const RelationInput>, const Attrs& attrs) {
  return ValueType::Tensor(ExpectNonNegativeDims(IntListAttr(attrs, "shape"), "attribute 'shape'"),
                           DTypeAttr(attrs, "dtype", std::nullopt));
}

ValueType FullRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& fill_value = ExpectTensor(inputs, 0, "fill_value");
  ExpectRank(fill_value, 0, "fill_value");
  return ValueType::Tensor(ExpectNonNegativeDims(IntListAttr(attrs, "shape"), "attribute 'shape'"),
                           DTypeAttr(attrs, "dtype", fill_value.dtype));
}

ValueType LikeRelation(std::span<const RelationInput> inputs, const Attrs&) {
  return ExpectTensor(inputs, 0, "data");
}

ValueType FullLikeRelation(std::span<const RelationInput> inputs, const Attrs&) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  ExpectRank(ExpectTensor(inputs, 1, "fill_value"), 0, "fill_value");
  return data;
}

// The length is ceil((stop - start) / step), known only when all three
// inputs are constants; an empty range gives length 0.
ValueType ArangeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  static constexpr const char* kNames[] = {"start", "stop", "step"};
  std::optional<double> values[3];
  for (size_t index = 0; index < 3; ++index) {
    const ValueType& bound = ExpectTensor(inputs, index, kNames[index]);
    if (!bound.shape.empty() || bound.dtype != dtype) {
      FailRelation("input '" + std::string(kNames[index]) + "' must be a scalar of dtype " +
                   std::string(DTypeName(dtype)) + " (the 'dtype' attribute), got " +
                   bound.ToString());
    }
    values[index] = ScalarConstant(inputs[index]);
  }
  if (!values[0] || !values[1] || !values[2]) return ValueType::Tensor({kAnyDim}, dtype);
  const double start = *values[0], stop = *values[1], step = *values[2];
  if (step == 0) FailRelation("arange's step must not be 0");
  const double length = std::ceil((stop - start) / step);
  if (!std::isfinite(length) || length > static_cast<double>(std::numeric_limits<int32_t>::max())) {
    FailRelation("arange's bounds give no finite length");
  }
  return ValueType::Tensor({std::max<int64_t>(0, static_cast<int64_t>(length))}, dtype);
}

ValueType ShapeOfRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  const ValueType& data = ExpectTensor(inputs, 0, "data");
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  if (!IsIntegerDType(dtype)) FailRelation("attribute 'dtype' must name an integer dtype");
  return ValueType::Tensor({static_cast<int64_t>(data.shape.size())}, dtype);
}

ValueType NDArraySizeRelation(std::span<const RelationInput> inputs, const Attrs& attrs) {
  ExpectTensor(inputs, 0, "data");
  const DType dtype = DTypeAttr(attrs, "dtype", std::nullopt);
  if (!IsIntegerDType(dtype)) FailRelation("attribute 'dtype' must name an integer dtype");
  return ValueType::Tensor({}, dtype);
}

AttrField IntDefault(const char* name, int64_t value) {
  return DefaultAttr(name, AttrKind::kInt, AttrValue::Int(value));
}

// strided_slice's attributes, which slice_scatter shares.
AttrSchema StridedSliceSchema() {
  return {RequiredAttr("begin", AttrKind::kIntList), RequiredAttr("end", AttrKind::kIntList),
          DefaultAttr("strides", AttrKind::kOptionalIntList, AttrValue()),
          DefaultAttr("axes", AttrKind::kOptionalIntList, AttrValue()),
          DefaultAttr("slice_mode", AttrKind::kString, AttrValue::String("end"))};
}

}  // namespace

void RegisterTransformOperators(OperatorTableBuilder& table) {
  table.Add({.name = "reshape",
             .input_names = {"data"},
             .attributes = {RequiredAttr("newshape", AttrKind::kIntList),
                            DefaultAttr("allowzero", AttrKind::kBool, AttrValue::Bool(false))},
             .pattern = FusionPattern::kInjective,
             .relation = ReshapeRelation,
             .summary = "Reshapes; newshape may use 0, -1, -2, -3 and -4 (see the docs).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "reshape_like",
             .input_names = {"data", "shape_like"},
             .attributes = {IntDefault("lhs_begin", 0),
                            DefaultAttr("lhs_end", AttrKind::kOptionalInt, AttrValue()),
                            IntDefault("rhs_begin", 0),
                            DefaultAttr("rhs_end", AttrKind::kOptionalInt, AttrValue())},
             .pattern = FusionPattern::kInjective,
             .relation = ReshapeLikeRelation,
             .summary = "Reshapes data (a range of its axes) to the shape of another tensor.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "transpose",
             .input_names = {"data"},
             .attributes = {DefaultAttr("axes", AttrKind::kOptionalIntList, AttrValue())},
             .pattern = FusionPattern::kInjective,
             .relation = TransposeRelation,
             .summary = "Permutes the axes (reverses them when axes=None).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "squeeze",
             .input_names = {"data"},
             .attributes = {DefaultAttr("axis", AttrKind::kOptionalIntList, AttrValue())},
             .pattern = FusionPattern::kInjective,
             .relation = SqueezeRelation,
             .summary = "Removes axes of extent 1 (all of them when axis=None).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "expand_dims",
             .input_names = {"data"},
             .attributes = {RequiredAttr("axis", AttrKind::kInt), IntDefault("num_newaxis", 1)},
             .pattern = FusionPattern::kBroadcast,
             .relation = ExpandDimsRelation,
             .summary = "Inserts num_newaxis axes of extent 1 at axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "concatenate",
             .input_names = {"data"},
             .attributes = {IntDefault("axis", 0)},
             .pattern = FusionPattern::kInjective,
             .relation = ConcatenateRelation,
             .summary = "Joins a tuple of tensors along an existing axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "stack",
             .input_names = {"data"},
             .attributes = {IntDefault("axis", 0)},
             .pattern = FusionPattern::kInjective,
             .relation = StackRelation,
             .summary = "Joins a tuple of same-shaped tensors along a new axis.",
             .differentiability = Differentiability::kGradient});
  table.Add(
      {.name = "split",
       .input_names = {"data"},
       .attributes = {RequiredAttr("indices_or_sections", AttrKind::kAny), IntDefault("axis", 0)},
       .pattern = FusionPattern::kInjective,
       .relation = SplitRelation,
       .summary = "Splits into a tuple: N equal sections or at the given indices.",
       .differentiability = Differentiability::kGradient});
  table.Add({.name = "strided_slice",
             .input_names = {"data"},
             .attributes = StridedSliceSchema(),
             .pattern = FusionPattern::kInjective,
             .relation = StridedSliceRelation,
             .summary = "Python-style slicing with begin, end (or size) and strides per axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "take",
             .input_names = {"data", "indices"},
             .attributes = {DefaultAttr("axis", AttrKind::kOptionalInt, AttrValue()),
                            IntDefault("batch_dims", 0),
                            DefaultAttr("mode", AttrKind::kString, AttrValue::String("clip"))},
             .pattern = FusionPattern::kInjective,
             .relation = TakeRelation,
             .summary = "Selects entries along an axis (of the flattened data if axis=None).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "gather",
             .input_names = {"data", "indices"},
             .attributes = {RequiredAttr("axis", AttrKind::kInt)},
             .pattern = FusionPattern::kInjective,
             .relation = GatherRelation,
             .summary = "Gathers along an axis with an index tensor of data's rank.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "slice_scatter",
             .input_names = {"data", "source"},
             .attributes = StridedSliceSchema(),
             .pattern = FusionPattern::kInjective,
             .relation = SliceScatterRelation,
             .summary = "data with its strided_slice (same attributes) replaced by source.",
             .differentiability = Differentiability::kGradient});
  // Opaque: each output element sums over the index axis, a loop that
  // fusing producers into would repeat.
  table.Add({.name = "scatter_add",
             .input_names = {"data", "indices", "updates"},
             .attributes = {RequiredAttr("axis", AttrKind::kInt)},
             .pattern = FusionPattern::kOpaque,
             .relation = ScatterAddRelation,
             .summary = "Adds updates into data at indices along an axis (gather's adjoint).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "tile",
             .input_names = {"data"},
             .attributes = {RequiredAttr("reps", AttrKind::kIntList)},
             .pattern = FusionPattern::kBroadcast,
             .relation = TileRelation,
             .summary = "Repeats the whole tensor reps times per axis (NumPy's tile).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "repeat",
             .input_names = {"data"},
             .attributes = {RequiredAttr("repeats", AttrKind::kInt),
                            RequiredAttr("axis", AttrKind::kInt)},
             .pattern = FusionPattern::kBroadcast,
             .relation = RepeatRelation,
             .summary = "Repeats each element repeats times along axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "reverse",
             .input_names = {"data"},
             .attributes = {RequiredAttr("axis", AttrKind::kInt)},
             .pattern = FusionPattern::kInjective,
             .relation = ReverseRelation,
             .summary = "Reverses the order of elements along axis.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "broadcast_to",
             .input_names = {"data"},
             // dtype is part of Relay's attribute type for this operator and is
             // ignored, as in TVM.
             .attributes = {RequiredAttr("shape", AttrKind::kIntList),
                            DefaultAttr("dtype", AttrKind::kString, AttrValue::String(""))},
             .pattern = FusionPattern::kBroadcast,
             .relation = BroadcastToRelation,
             .summary = "Broadcasts to the given shape.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "broadcast_to_like",
             .input_names = {"data", "broadcast_type"},
             .attributes = {},
             .pattern = FusionPattern::kBroadcast,
             .relation = BroadcastToLikeRelation,
             .summary = "Broadcasts to the shape of another tensor.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "collapse_sum_like",
             .input_names = {"data", "collapse_type"},
             .attributes = {},
             .pattern = FusionPattern::kCommReduce,
             .relation = CollapseSumLikeRelation,
             .summary = "Sums the broadcast axes away, down to another tensor's shape.",
             .differentiability = Differentiability::kGradient});

  // zeros and ones take no input, and shape_of and ndarray_size give
  // integers: no gradient ever reaches them, so they stay kNotDifferentiable.
  table.Add({.name = "zeros",
             .input_names = {},
             .attributes = InitSchema("float32"),
             .pattern = FusionPattern::kElementwise,
             .relation = InitRelation,
             .summary = "A tensor of zeros."});
  table.Add({.name = "ones",
             .input_names = {},
             .attributes = InitSchema("float32"),
             .pattern = FusionPattern::kElementwise,
             .relation = InitRelation,
             .summary = "A tensor of ones."});
  table.Add({.name = "full",
             .input_names = {"fill_value"},
             .attributes = InitSchema(""),
             .pattern = FusionPattern::kElementwise,
             .relation = FullRelation,
             .summary = "A tensor filled with a scalar (dtype defaults to the scalar's).",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "zeros_like",
             .input_names = {"data"},
             .attributes = {},
             .pattern = FusionPattern::kElementwise,
             .relation = LikeRelation,
             .summary = "Zeros of data's shape and dtype.",
             // Its value does not depend on data's, only its shape does.
             .differentiability = Differentiability::kZeroGradient});
  table.Add({.name = "ones_like",
             .input_names = {"data"},
             .attributes = {},
             .pattern = FusionPattern::kElementwise,
             .relation = LikeRelation,
             .summary = "Ones of data's shape and dtype.",
             // Its value does not depend on data's, only its shape does.
             .differentiability = Differentiability::kZeroGradient});
  table.Add({.name = "full_like",
             .input_names = {"data", "fill_value"},
             .attributes = {},
             .pattern = FusionPattern::kElementwise,
             .relation = FullLikeRelation,
             .summary = "A scalar repeated to data's shape and dtype.",
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "arange",
             .input_names = {"start", "stop", "step"},
             .attributes = {DefaultAttr("dtype", AttrKind::kString, AttrValue::String("float32"))},
             .pattern = FusionPattern::kOpaque,
             .relation = ArangeRelation,
             .summary = "Evenly spaced values in [start, stop) by step.",
             .shape_dependence = ShapeDependence::kInputValues,
             .differentiability = Differentiability::kGradient});
  table.Add({.name = "shape_of",
             .input_names = {"data"},
             .attributes = {DefaultAttr("dtype", AttrKind::kString, AttrValue::String("int32"))},
             .pattern = FusionPattern::kOpaque,
             .relation = ShapeOfRelation,
             .summary = "The shape of a tensor, as a 1-D integer tensor."});
  table.Add({.name = "ndarray_size",
             .input_names = {"data"},
             .attributes = {DefaultAttr("dtype", AttrKind::kString, AttrValue::String("int32"))},
             .pattern = FusionPattern::kOpaque,
             .relation = NDArraySizeRelation,
             .summary = "The number of elements of a tensor, as an integer scalar."});
}

}  // namespace relay::kernels
