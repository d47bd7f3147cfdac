#include "kernels/operators/relation_helpers.h"

#include <algorithm>
#include <type_traits>

#include "relay/error.h"

namespace relay::kernels {

void FailRelation(std::string message) {
  throw OperatorTypeError{std::move(message)};
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string text = "(";
  for (size_t index = 0; index < dims.size(); ++index) {
    if (index > 0) text += ", ";
    text += IsKnownDim(dims[index]) ? std::to_string(dims[index]) : std::string("?");
  }
  if (dims.size() == 1) text += ",";
  return text + ")";
}

std::optional<int64_t> OptionalIntAttr(const Attrs& attrs, std::string_view name) {
  const AttrValue& value = GetAttr(attrs, name);
  if (value.is_none()) return std::nullopt;
  return value.as_int();
}

std::optional<std::vector<int64_t>> OptionalIntListAttr(const Attrs& attrs, std::string_view name) {
  const AttrValue& value = GetAttr(attrs, name);
  if (value.is_none()) return std::nullopt;
  return value.as_int_list();
}

DType DTypeAttr(const Attrs& attrs, std::string_view name, std::optional<DType> if_empty) {
  const AttrValue& value = GetAttr(attrs, name);
  const std::string text = value.is_none() ? std::string() : value.as_string();
  if (text.empty()) {
    if (if_empty.has_value()) return *if_empty;
    FailRelation("attribute '" + std::string(name) + "' needs a dtype such as \"float32\"");
  }
  std::optional<DType> dtype = ParseDType(text);
  if (!dtype.has_value()) {
    FailRelation("attribute '" + std::string(name) + "' names an unknown dtype \"" + text + "\"");
  }
  return *dtype;
}

const std::string& ChoiceAttr(const Attrs& attrs, std::string_view name,
                              std::initializer_list<std::string_view> allowed) {
  const std::string& value = StringAttr(attrs, name);
  for (std::string_view choice : allowed) {
    if (value == choice) return value;
  }
  std::string expected;
  for (std::string_view choice : allowed) {
    if (!expected.empty()) expected += ", ";
    expected += "\"" + std::string(choice) + "\"";
  }
  FailRelation("attribute '" + std::string(name) + "' is \"" + value +
               "\" (expected one of: " + expected + ")");
}

const ValueType& ExpectTensor(std::span<const RelationInput> inputs, size_t index,
                              std::string_view name) {
  const ValueType& type = *inputs[index].type;
  if (type.is_tuple) {
    FailRelation("input '" + std::string(name) + "' must be a tensor, got the tuple " +
                 type.ToString());
  }
  return type;
}

const ValueType& ExpectTupleOfTensors(std::span<const RelationInput> inputs, size_t index,
                                      std::string_view name) {
  const ValueType& type = *inputs[index].type;
  if (!type.is_tuple) {
    FailRelation("input '" + std::string(name) + "' must be a tuple of tensors, got " +
                 type.ToString());
  }
  for (const ValueType& field : type.fields) {
    if (field.is_tuple) {
      FailRelation("input '" + std::string(name) + "' must be a tuple of tensors, got " +
                   type.ToString());
    }
  }
  return type;
}

void ExpectRank(const ValueType& tensor, size_t rank, std::string_view name) {
  if (tensor.shape.size() != rank) {
    FailRelation("input '" + std::string(name) + "' must have rank " + std::to_string(rank) +
                 ", got " + tensor.ToString());
  }
}

void ExpectMinimumRank(const ValueType& tensor, size_t rank, std::string_view name) {
  if (tensor.shape.size() < rank) {
    FailRelation("input '" + std::string(name) + "' must have rank at least " +
                 std::to_string(rank) + ", got " + tensor.ToString());
  }
}

void ExpectSameDType(const ValueType& first, const ValueType& second) {
  if (first.dtype != second.dtype) {
    FailRelation(first.ToString() + " and " + second.ToString() + " have different dtypes");
  }
}

void ExpectFloatDType(const ValueType& tensor, std::string_view name) {
  if (!IsFloat(tensor.dtype)) {
    FailRelation("input '" + std::string(name) + "' must have a floating-point dtype, got " +
                 tensor.ToString());
  }
}

bool IsIntegerDType(DType dtype) {
  return IsSignedInteger(dtype) || IsUnsignedInteger(dtype);
}

void ExpectIntegerDType(const ValueType& tensor, std::string_view name) {
  if (!IsIntegerDType(tensor.dtype)) {
    FailRelation("input '" + std::string(name) + "' must have an integer dtype, got " +
                 tensor.ToString());
  }
}

void ExpectBoolDType(const ValueType& tensor, std::string_view name) {
  if (tensor.dtype != DType::kBool) {
    FailRelation("input '" + std::string(name) + "' must have dtype bool, got " +
                 tensor.ToString());
  }
}

int64_t NormalizeAxis(int64_t axis, size_t rank, std::string_view what) {
  const int64_t signed_rank = static_cast<int64_t>(rank);
  if (axis < -signed_rank || axis >= signed_rank) {
    if (rank == 0) {
      FailRelation(std::string(what) + " " + std::to_string(axis) +
                   " is out of range: a tensor of rank 0 has no axes");
    }
    FailRelation(std::string(what) + " " + std::to_string(axis) +
                 " is out of range for a tensor of rank " + std::to_string(rank) + " (expected " +
                 std::to_string(-signed_rank) + " <= " + std::string(what) + " < " +
                 std::to_string(signed_rank) + ")");
  }
  return axis < 0 ? axis + signed_rank : axis;
}

int64_t NormalizeInsertionAxis(int64_t axis, size_t rank, std::string_view what) {
  const int64_t signed_rank = static_cast<int64_t>(rank);
  if (axis < -signed_rank - 1 || axis > signed_rank) {
    FailRelation(std::string(what) + " " + std::to_string(axis) +
                 " is out of range for inserting into a tensor of rank " + std::to_string(rank) +
                 " (expected " + std::to_string(-signed_rank - 1) + " <= " + std::string(what) +
                 " <= " + std::to_string(signed_rank) + ")");
  }
  return axis < 0 ? axis + signed_rank + 1 : axis;
}

std::vector<int64_t> NormalizeAxes(std::span<const int64_t> axes, size_t rank,
                                   std::string_view what) {
  std::vector<int64_t> normalized;
  normalized.reserve(axes.size());
  for (int64_t axis : axes) {
    const int64_t value = NormalizeAxis(axis, rank, what);
    if (std::find(normalized.begin(), normalized.end(), value) != normalized.end()) {
      FailRelation(std::string(what) + " " + std::to_string(axis) + " is given twice (as " +
                   std::to_string(value) + ")");
    }
    normalized.push_back(value);
  }
  return normalized;
}

int64_t CheckedMultiply(int64_t first, int64_t second) {
  int64_t product;
  if (__builtin_mul_overflow(first, second, &product)) {
    FailRelation("size " + std::to_string(first) + " * " + std::to_string(second) +
                 " is too large");
  }
  return product;
}

int64_t CheckedAdd(int64_t first, int64_t second) {
  int64_t sum;
  if (__builtin_add_overflow(first, second, &sum)) {
    FailRelation("size " + std::to_string(first) + " + " + std::to_string(second) +
                 " is too large");
  }
  return sum;
}

int64_t MultiplyDims(int64_t first, int64_t second) {
  if (!IsKnownDim(first) || !IsKnownDim(second)) return kAnyDim;
  return CheckedMultiply(first, second);
}

int64_t AddDims(int64_t first, int64_t second) {
  if (!IsKnownDim(first) || !IsKnownDim(second)) return kAnyDim;
  return CheckedAdd(first, second);
}

int64_t UnifyDims(int64_t first, int64_t second, const std::string& context) {
  if (!IsKnownDim(first)) return second;
  if (!IsKnownDim(second)) return first;
  if (first != second) {
    FailRelation(context + ": " + std::to_string(first) + " vs " + std::to_string(second));
  }
  return first;
}

// Relay's gradual broadcasting, per aligned (right-justified) dimension pair:
// a 1 yields the other dimension (so 1 with `?` gives `?`); equal known
// dimensions agree; a known dimension other than 1 with `?` gives the known
// one, since at run time `?` must then be 1 or that value; `?` with `?` stays
// `?`; two different known dimensions, neither 1, do not broadcast.
Dims BroadcastShapes(const Dims& first, const Dims& second) {
  const size_t rank = std::max(first.size(), second.size());
  Dims result(rank);
  for (size_t offset = 1; offset <= rank; ++offset) {
    const int64_t left = offset <= first.size() ? first[first.size() - offset] : 1;
    const int64_t right = offset <= second.size() ? second[second.size() - offset] : 1;
    int64_t dim;
    if (left == 1) {
      dim = right;
    } else if (right == 1) {
      dim = left;
    } else if (!IsKnownDim(left)) {
      dim = right;
    } else if (!IsKnownDim(right) || left == right) {
      dim = left;
    } else {
      FailRelation("operands of shapes " + DimsToString(first) + " and " + DimsToString(second) +
                   " cannot be broadcast");
    }
    result[rank - offset] = dim;
  }
  return result;
}

Dims ExpectNonNegativeDims(const std::vector<int64_t>& dims, std::string_view what) {
  for (int64_t dim : dims) {
    if (dim < 0) {
      FailRelation(std::string(what) + " " + DimsToString(dims) +
                   " has a negative dimension (every dimension must be >= 0)");
    }
  }
  return dims;
}

namespace {

template <typename T>
double ElementToDouble(const void* data) {
  const T value = *static_cast<const T*>(data);
  if constexpr (std::is_same_v<T, Float16>) {
    return static_cast<float>(value);
  } else {
    return static_cast<double>(value);
  }
}

}  // namespace

std::optional<double> ScalarConstant(const RelationInput& input) {
  if (input.constant == nullptr) return std::nullopt;
  const Tensor& tensor = *input.constant;
  if (tensor.ndim() != 0) return std::nullopt;
  const void* data;
  try {
    data = tensor.host_data();
  } catch (const Error&) {
    // A constant that lives on a device the host cannot read is treated as
    // unknown: the relation then gives `?` instead of failing.
    return std::nullopt;
  }
  switch (tensor.dtype()) {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  case DType::enumerator:                                                       \
    return ElementToDouble<cpp_type>(data);
#include "relay/dtypes.def"
#undef RELAY_DTYPE
  }
  return std::nullopt;
}

}  // namespace relay::kernels
