#include "relay/dtype.h"

#include "relay/dlpack.h"

namespace relay {

namespace {

struct DTypeInfo {
  std::string_view name;
  size_t bytes;
  uint8_t dlpack_code;
  char numpy_kind;
};

constexpr DTypeInfo kDTypeInfo[] = {
#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  {name, bytes, dlpack_code, numpy_kind},
#include "relay/dtypes.def"
#undef RELAY_DTYPE
};
static_assert(std::size(kDTypeInfo) == kDTypeCount);

#define RELAY_DTYPE(enumerator, name, cpp_type, bytes, dlpack_code, numpy_kind) \
  static_assert(sizeof(cpp_type) == bytes, "dtypes.def: size of " name);
#include "relay/dtypes.def"
#undef RELAY_DTYPE

const DTypeInfo& InfoOf(DType dtype) {
  return kDTypeInfo[static_cast<size_t>(dtype)];
}

}  // namespace

std::string_view DTypeName(DType dtype) {
  return InfoOf(dtype).name;
}

std::optional<DType> ParseDType(std::string_view name) {
  for (int index = 0; index < kDTypeCount; ++index) {
    if (kDTypeInfo[index].name == name) return static_cast<DType>(index);
  }
  return std::nullopt;
}

size_t DTypeSize(DType dtype) {
  return InfoOf(dtype).bytes;
}

bool IsFloat(DType dtype) {
  return InfoOf(dtype).numpy_kind == 'f';
}

bool IsSignedInteger(DType dtype) {
  return InfoOf(dtype).numpy_kind == 'i';
}

bool IsUnsignedInteger(DType dtype) {
  return InfoOf(dtype).numpy_kind == 'u';
}

DLDataType ToDLDataType(DType dtype) {
  const DTypeInfo& info = InfoOf(dtype);
  DLDataType type;
  type.code = info.dlpack_code;
  type.bits = static_cast<uint8_t>(info.bytes * 8);
  type.lanes = 1;
  return type;
}

std::optional<DType> FromDLDataType(const DLDataType& type) {
  if (type.lanes != 1) return std::nullopt;
  for (int index = 0; index < kDTypeCount; ++index) {
    const DTypeInfo& info = kDTypeInfo[index];
    if (info.dlpack_code == type.code && info.bytes * 8 == type.bits) {
      return static_cast<DType>(index);
    }
  }
  return std::nullopt;
}

}  // namespace relay
