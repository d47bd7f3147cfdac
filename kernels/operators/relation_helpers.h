// Internal: pieces shared by the operator families' type relations.
//
// Every helper reports a problem with the call by throwing OperatorTypeError
// with a message for the user; the type checker adds the operator name and
// source location. Shapes use kAnyDim for Relay's `?`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/operator.h"

namespace relay::kernels {

using Dims = std::vector<int64_t>;

[[noreturn]] void FailRelation(std::string message);

inline bool IsKnownDim(int64_t dim) {
  return dim != kAnyDim;
}

// "(2, ?)", "(5,)", "()": NumPy's spelling with `?` for unknown dimensions.
std::string DimsToString(std::span<const int64_t> dims);

// ---- schema construction ------------------------------------------------------

inline AttrField RequiredAttr(std::string name, AttrKind kind) {
  return AttrField{std::move(name), kind, std::nullopt};
}
inline AttrField DefaultAttr(std::string name, AttrKind kind, AttrValue value) {
  return AttrField{std::move(name), kind, std::move(value)};
}

// ---- typed access to normalised attributes -----------------------------------

inline bool BoolAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr(attrs, name).as_bool();
}
inline int64_t IntAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr(attrs, name).as_int();
}
inline double FloatAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr(attrs, name).as_float();
}
inline const std::string& StringAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr(attrs, name).as_string();
}
inline std::vector<int64_t> IntListAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr(attrs, name).as_int_list();
}
std::optional<int64_t> OptionalIntAttr(const Attrs& attrs, std::string_view name);
std::optional<std::vector<int64_t>> OptionalIntListAttr(const Attrs& attrs, std::string_view name);

// A dtype attribute such as cast's `dtype`. An empty string means "not given"
// and yields `if_empty` (an error when that is nullopt).
DType DTypeAttr(const Attrs& attrs, std::string_view name, std::optional<DType> if_empty);

// A string attribute that must be one of `allowed`.
const std::string& ChoiceAttr(const Attrs& attrs, std::string_view name,
                              std::initializer_list<std::string_view> allowed);

// ---- inputs -------------------------------------------------------------------

// The input at `index`, which must be a tensor; `name` is its input name.
const ValueType& ExpectTensor(std::span<const RelationInput> inputs, size_t index,
                              std::string_view name);
// The input at `index`, which must be a tuple of tensors.
const ValueType& ExpectTupleOfTensors(std::span<const RelationInput> inputs, size_t index,
                                      std::string_view name);

void ExpectRank(const ValueType& tensor, size_t rank, std::string_view name);
void ExpectMinimumRank(const ValueType& tensor, size_t rank, std::string_view name);

// ---- dtypes -------------------------------------------------------------------

// "Tensor[(2, 3), float32] and Tensor[(2, 3), int32] have different dtypes".
void ExpectSameDType(const ValueType& first, const ValueType& second);
void ExpectFloatDType(const ValueType& tensor, std::string_view name);
void ExpectIntegerDType(const ValueType& tensor, std::string_view name);
void ExpectBoolDType(const ValueType& tensor, std::string_view name);
bool IsIntegerDType(DType dtype);

// ---- axes ---------------------------------------------------------------------

// An axis in [-rank, rank) made non-negative; `what` names it in messages.
int64_t NormalizeAxis(int64_t axis, size_t rank, std::string_view what = "axis");
// A position at which new axes are inserted: [-rank - 1, rank].
int64_t NormalizeInsertionAxis(int64_t axis, size_t rank, std::string_view what = "axis");
// Normalises a list of distinct axes; duplicates are an error.
std::vector<int64_t> NormalizeAxes(std::span<const int64_t> axes, size_t rank,
                                   std::string_view what = "axis");

// ---- dimension arithmetic ----------------------------------------------------

// The most axes an operator may add to a tensor in one call (expand_dims)
// and the most parts split may make: bounds that keep a hostile attribute
// from exhausting memory.
inline constexpr int64_t kMaxNewAxes = 256;
inline constexpr int64_t kMaxSplitSections = 65536;

// Plain arithmetic on sizes taken from user input; overflow is an error.
int64_t CheckedMultiply(int64_t first, int64_t second);
int64_t CheckedAdd(int64_t first, int64_t second);

// a * b, unknown when either is unknown; overflow is an error.
int64_t MultiplyDims(int64_t first, int64_t second);
// a + b, unknown when either is unknown.
int64_t AddDims(int64_t first, int64_t second);
// Two dimensions that must agree: a known one wins over `?`.
int64_t UnifyDims(int64_t first, int64_t second, const std::string& context);

// NumPy broadcasting with Relay's gradual rules for `?` (see the .cc).
Dims BroadcastShapes(const Dims& first, const Dims& second);

// A dimension list taken from an attribute (broadcast_to's shape, zeros'
// shape): every entry must be >= 0.
Dims ExpectNonNegativeDims(const std::vector<int64_t>& dims, std::string_view what);

// ---- constants ----------------------------------------------------------------

// The value of a rank-0 constant input, as a double; nullopt when the input is
// not a constant (or not readable on the host).
std::optional<double> ScalarConstant(const RelationInput& input);

}  // namespace relay::kernels
