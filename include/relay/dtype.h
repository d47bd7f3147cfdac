// Tensor element types, generated from dtypes.def.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "relay/float16.h"

namespace relay {

enum class DType : uint8_t {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) enumerator,
#include "relay/dtypes.def"
#undef RELAY_DTYPE
};

inline constexpr int kDTypeCount = 0
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) +1
#include "relay/dtypes.def"
#undef RELAY_DTYPE
    ;
static_assert(kDTypeCount == 12, "update the dtype tests when adding a dtype");

// Relay's spelling: "float32", "int64", "bool", ...
std::string_view DTypeName(DType dtype);
// Parses Relay's spelling; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);
// Bytes per element.
size_t DTypeSize(DType dtype);
bool IsFloat(DType dtype);
bool IsSignedInteger(DType dtype);
bool IsUnsignedInteger(DType dtype);

// The C++ type that stores one element of a dtype, and back.
template <DType D>
struct DTypeStorage;
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  template <>                                                                   \
  struct DTypeStorage<DType::enumerator> {                                      \
    using type = cpp_type;                                                      \
  };
#include "relay/dtypes.def"
#undef RELAY_DTYPE

template <typename T>
constexpr std::optional<DType> DTypeOf() {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  if constexpr (std::is_same_v<T, cpp_type>) return DType::enumerator;
#include "relay/dtypes.def"
#undef RELAY_DTYPE
  return std::nullopt;
}

}  // namespace relay
