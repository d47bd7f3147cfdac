// Operator attribute values and schemas (the keyword arguments of an
// operator call, such as strides=[1, 1] or dtype="float32").
//
// Attribute names, kinds and defaults follow Apache TVM's Relay so that Relay
// text written for it means the same here. A schema normalises a call's
// attributes: every field present, in schema order, defaults filled in, each
// value coerced to its field's kind (an int where a float is expected, a
// single int where a list is expected is NOT accepted: Relay spells lists).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::kernels {

class AttrValue {
 public:
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList };

  AttrValue() = default;  // None
  static AttrValue Bool(bool value);
  static AttrValue Int(int64_t value);
  static AttrValue Float(double value);
  static AttrValue String(std::string value);
  static AttrValue List(std::vector<AttrValue> items);
  static AttrValue IntList(const std::vector<int64_t>& items);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  // Accessors require the matching kind (checked by the schema beforehand).
  bool as_bool() const { return int_value_ != 0; }
  int64_t as_int() const { return int_value_; }
  double as_float() const { return kind_ == Kind::kInt ? double(int_value_) : float_value_; }
  const std::string& as_string() const { return string_value_; }
  const std::vector<AttrValue>& as_list() const { return list_; }
  std::vector<int64_t> as_int_list() const;

  bool operator==(const AttrValue& other) const;
  // Relay text: None, True, 3, 1.5f, "NCHW", [1, 2].
  std::string ToString() const;

 private:
  Kind kind_ = Kind::kNone;
  int64_t int_value_ = 0;
  double float_value_ = 0;
  std::string string_value_;
  std::vector<AttrValue> list_;
};

// A call's attributes, by name, in schema order once normalised.
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

// What a field accepts. kOptional* fields also accept None.
enum class AttrKind {
  kBool,
  kInt,
  kFloat,
  kString,
  kIntList,
  kOptionalInt,
  kOptionalIntList,
  kOptionalString,
  kOptionalFloat,
  kAny,  // any value, passed through (rare: e.g. a fill value)
};

struct AttrField {
  std::string name;
  AttrKind kind;
  // nullopt: the attribute is required.
  std::optional<AttrValue> default_value;
};

using AttrSchema = std::vector<AttrField>;

// Looks up an attribute of a normalised Attrs; throws an internal error if
// absent (the schema guarantees presence).
const AttrValue& GetAttr(const Attrs& attrs, std::string_view name);

// Normalises `given` against `schema`. On a problem returns a message
// ("unknown attribute 'strides'", "attribute 'axis' expects an integer, got
// \"x\"", "missing required attribute 'newshape'") and leaves `out` unspecified.
std::optional<std::string> NormalizeAttrs(const AttrSchema& schema, const Attrs& given, Attrs& out);

}  // namespace relay::kernels
