#include "kernels/attributes.h"

#include <charconv>
#include <cmath>
#include <string>

#include "relay/error.h"

namespace relay::kernels {

AttrValue AttrValue::Bool(bool value) {
  AttrValue result;
  result.kind_ = Kind::kBool;
  result.int_value_ = value ? 1 : 0;
  return result;
}

AttrValue AttrValue::Int(int64_t value) {
  AttrValue result;
  result.kind_ = Kind::kInt;
  result.int_value_ = value;
  return result;
}

AttrValue AttrValue::Float(double value) {
  AttrValue result;
  result.kind_ = Kind::kFloat;
  result.float_value_ = value;
  return result;
}

AttrValue AttrValue::String(std::string value) {
  AttrValue result;
  result.kind_ = Kind::kString;
  result.string_value_ = std::move(value);
  return result;
}

AttrValue AttrValue::List(std::vector<AttrValue> items) {
  AttrValue result;
  result.kind_ = Kind::kList;
  result.list_ = std::move(items);
  return result;
}

AttrValue AttrValue::IntList(const std::vector<int64_t>& items) {
  std::vector<AttrValue> values;
  values.reserve(items.size());
  for (int64_t item : items) values.push_back(Int(item));
  return List(std::move(values));
}

std::vector<int64_t> AttrValue::as_int_list() const {
  std::vector<int64_t> values;
  values.reserve(list_.size());
  for (const AttrValue& item : list_) values.push_back(item.as_int());
  return values;
}

bool AttrValue::operator==(const AttrValue& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kNone:
      return true;
    case Kind::kBool:
    case Kind::kInt:
      return int_value_ == other.int_value_;
    case Kind::kFloat:
      // Bitwise-equal NaNs should compare equal so that normalised attributes
      // can be compared structurally (e.g. by a common-subexpression pass).
      return float_value_ == other.float_value_ ||
             (std::isnan(float_value_) && std::isnan(other.float_value_));
    case Kind::kString:
      return string_value_ == other.string_value_;
    case Kind::kList:
      return list_ == other.list_;
  }
  return false;
}

namespace {

std::string FloatToRelayText(double value) {
  if (std::isnan(value)) return "nanf";
  if (std::isinf(value)) return value > 0 ? "inff" : "-inff";
  char buffer[64];
  // Shortest text that reads back to the same double, so printing and
  // re-parsing an attribute is lossless.
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr) + "f";
}

std::string QuoteString(const std::string& text) {
  std::string quoted = "\"";
  for (char character : text) {
    switch (character) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      default:
        quoted += character;
    }
  }
  return quoted + "\"";
}

}  // namespace

std::string AttrValue::ToString() const {
  switch (kind_) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return int_value_ != 0 ? "True" : "False";
    case Kind::kInt:
      return std::to_string(int_value_);
    case Kind::kFloat:
      return FloatToRelayText(float_value_);
    case Kind::kString:
      return QuoteString(string_value_);
    case Kind::kList: {
      std::string text = "[";
      for (size_t index = 0; index < list_.size(); ++index) {
        if (index > 0) text += ", ";
        text += list_[index].ToString();
      }
      return text + "]";
    }
  }
  return "?";
}

const AttrValue& GetAttr(const Attrs& attrs, std::string_view name) {
  for (const auto& [attr_name, value] : attrs) {
    if (attr_name == name) return value;
  }
  ThrowInternalError("attribute present", __FILE__, __LINE__,
                     "attribute '" + std::string(name) +
                         "' is missing; were the attributes normalised by the operator's schema?");
}

namespace {

// How an error message names what a field accepts.
std::string_view DescribeKind(AttrKind kind) {
  switch (kind) {
    case AttrKind::kBool:
      return "a boolean";
    case AttrKind::kInt:
      return "an integer";
    case AttrKind::kFloat:
      return "a number";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kIntList:
      return "a list of integers";
    case AttrKind::kOptionalInt:
      return "an integer or None";
    case AttrKind::kOptionalIntList:
      return "a list of integers or None";
    case AttrKind::kOptionalString:
      return "a string or None";
    case AttrKind::kOptionalFloat:
      return "a number or None";
    case AttrKind::kAny:
      return "a value";
  }
  return "a value";
}

bool IsOptional(AttrKind kind) {
  return kind == AttrKind::kOptionalInt || kind == AttrKind::kOptionalIntList ||
         kind == AttrKind::kOptionalString || kind == AttrKind::kOptionalFloat ||
         kind == AttrKind::kAny;
}

std::optional<AttrValue> CoerceIntList(const AttrValue& value) {
  if (value.kind() != AttrValue::Kind::kList) return std::nullopt;
  for (const AttrValue& item : value.as_list()) {
    if (item.kind() != AttrValue::Kind::kInt) return std::nullopt;
  }
  return value;
}

// The value converted to `kind`, or nullopt when it does not fit.
std::optional<AttrValue> Coerce(const AttrValue& value, AttrKind kind) {
  if (value.is_none()) {
    if (IsOptional(kind)) return value;
    return std::nullopt;
  }
  switch (kind) {
    case AttrKind::kBool:
      if (value.kind() == AttrValue::Kind::kBool) return value;
      // Some Relay printers write flags such as allowzero as 0/1.
      if (value.kind() == AttrValue::Kind::kInt && (value.as_int() == 0 || value.as_int() == 1)) {
        return AttrValue::Bool(value.as_int() != 0);
      }
      return std::nullopt;
    case AttrKind::kInt:
    case AttrKind::kOptionalInt:
      if (value.kind() == AttrValue::Kind::kInt) return value;
      return std::nullopt;
    case AttrKind::kFloat:
    case AttrKind::kOptionalFloat:
      if (value.kind() == AttrValue::Kind::kFloat) return value;
      if (value.kind() == AttrValue::Kind::kInt) {
        return AttrValue::Float(static_cast<double>(value.as_int()));
      }
      return std::nullopt;
    case AttrKind::kString:
    case AttrKind::kOptionalString:
      if (value.kind() == AttrValue::Kind::kString) return value;
      return std::nullopt;
    case AttrKind::kIntList:
    case AttrKind::kOptionalIntList:
      return CoerceIntList(value);
    case AttrKind::kAny:
      return value;
  }
  return std::nullopt;
}

std::string ExpectedNames(const AttrSchema& schema) {
  if (schema.empty()) return "the operator takes no attributes";
  std::string names = "expected one of: ";
  for (size_t index = 0; index < schema.size(); ++index) {
    if (index > 0) names += ", ";
    names += schema[index].name;
  }
  return names;
}

}  // namespace

std::optional<std::string> NormalizeAttrs(const AttrSchema& schema, const Attrs& given,
                                          Attrs& out) {
  for (size_t index = 0; index < given.size(); ++index) {
    const std::string& name = given[index].first;
    bool known = false;
    for (const AttrField& field : schema) known = known || field.name == name;
    if (!known) {
      return "unknown attribute '" + name + "' (" + ExpectedNames(schema) + ")";
    }
    for (size_t earlier = 0; earlier < index; ++earlier) {
      if (given[earlier].first == name) return "attribute '" + name + "' is given twice";
    }
  }

  Attrs normalized;
  normalized.reserve(schema.size());
  for (const AttrField& field : schema) {
    const AttrValue* supplied = nullptr;
    for (const auto& [name, value] : given) {
      if (name == field.name) supplied = &value;
    }
    if (supplied == nullptr) {
      if (!field.default_value.has_value()) {
        return "missing required attribute '" + field.name + "'";
      }
      normalized.emplace_back(field.name, *field.default_value);
      continue;
    }
    std::optional<AttrValue> coerced = Coerce(*supplied, field.kind);
    if (!coerced.has_value()) {
      return "attribute '" + field.name + "' expects " + std::string(DescribeKind(field.kind)) +
             ", got " + supplied->ToString();
    }
    normalized.emplace_back(field.name, std::move(*coerced));
  }
  out = std::move(normalized);
  return std::nullopt;
}

}  // namespace relay::kernels
