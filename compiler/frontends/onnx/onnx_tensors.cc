#include "compiler/frontends/onnx/onnx_tensors.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "relay/devices.h"
#include "relay/error.h"

namespace relay::onnx_import {

namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& message) {
  throw Error(ErrorKind::kLoad, what + ": " + message);
}

// The bytes of `proto`'s external data (location, offset, length), read
// from `folder`.
std::string ReadExternalData(const onnx::TensorProto& proto, const std::string& folder,
                             const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      Fail(what, "external data " + entry.key() + " '" + entry.value() + "' is not a number");
    }
  }
  if (location.empty()) Fail(what, "external data without a location");
  const std::filesystem::path base = std::filesystem::weakly_canonical(folder);
  const std::filesystem::path file = std::filesystem::weakly_canonical(base / location);
  // The location is relative to the model's folder and must stay inside it.
  const std::string inside = base.string() + "/";
  if (std::filesystem::path(location).is_absolute() || file.string().rfind(inside, 0) != 0) {
    Fail(what, "external data location '" + location + "' leaves the model's folder");
  }
  std::ifstream stream(file, std::ios::binary);
  if (!stream) Fail(what, "cannot read external data file " + file.string());
  stream.seekg(0, std::ios::end);
  const int64_t size = stream.tellg();
  if (offset < 0 || offset > size || length < -1 || (length >= 0 && offset + length > size)) {
    Fail(what, "external data range outside " + file.string());
  }
  if (length < 0) length = size - offset;
  std::string bytes(static_cast<size_t>(length), '\0');
  stream.seekg(offset);
  stream.read(bytes.data(), length);
  if (!stream) Fail(what, "cannot read external data file " + file.string());
  return bytes;
}

// Copies `values` (a typed field) into `tensor`, converting each to T.
template <typename T, typename Field>
void CopyField(const Field& values, Tensor& tensor) {
  T* out = tensor.data<T>();
  for (int index = 0; index < values.size(); ++index) out[index] = static_cast<T>(values[index]);
}

}  // namespace

std::optional<DType> DTypeOfElementType(int32_t element_type) {
  switch (element_type) {
    case onnx::TensorProto::FLOAT:
      return DType::kFloat32;
    case onnx::TensorProto::DOUBLE:
      return DType::kFloat64;
    case onnx::TensorProto::FLOAT16:
      return DType::kFloat16;
    case onnx::TensorProto::INT8:
      return DType::kInt8;
    case onnx::TensorProto::INT16:
      return DType::kInt16;
    case onnx::TensorProto::INT32:
      return DType::kInt32;
    case onnx::TensorProto::INT64:
      return DType::kInt64;
    case onnx::TensorProto::UINT8:
      return DType::kUInt8;
    case onnx::TensorProto::UINT16:
      return DType::kUInt16;
    case onnx::TensorProto::UINT32:
      return DType::kUInt32;
    case onnx::TensorProto::UINT64:
      return DType::kUInt64;
    case onnx::TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

std::string ElementTypeName(int32_t element_type) {
  if (onnx::TensorProto::DataType_IsValid(element_type)) {
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(element_type));
  }
  return "element type " + std::to_string(element_type);
}

Ref<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& folder,
                            const std::string& what) {
  const std::optional<DType> dtype = DTypeOfElementType(proto.data_type());
  if (!dtype) Fail(what, "tensors of " + ElementTypeName(proto.data_type()) + " are not supported");
  Shape shape;
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0 || (dim > 0 && count > std::numeric_limits<int32_t>::max() / dim)) {
      Fail(what, "bad dimension " + std::to_string(dim));
    }
    shape.push_back(dim);
    count *= dim;
  }
  const size_t bytes = size_t(count) * DTypeSize(*dtype);
  auto mismatch = [&](size_t given) {
    Fail(what, std::to_string(given) + " values or bytes for a tensor of " + std::to_string(count) +
                   " elements");
  };
  // The data is checked against the shape before anything is allocated:
  // a small file cannot ask for a huge tensor.
  std::string external;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    external = ReadExternalData(proto, folder, what);
    if (external.size() != bytes) mismatch(external.size());
  } else if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) mismatch(proto.raw_data().size());
  } else {
    int values = 0;
    switch (*dtype) {
      case DType::kFloat32:
        values = proto.float_data_size();
        break;
      case DType::kFloat64:
        values = proto.double_data_size();
        break;
      case DType::kInt64:
        values = proto.int64_data_size();
        break;
      // ONNX keeps uint32 and uint64 in uint64_data, the narrower in int32_data.
      case DType::kUInt32:
      case DType::kUInt64:
        values = proto.uint64_data_size();
        break;
      default:
        values = proto.int32_data_size();
        break;
    }
    if (values != count) mismatch(size_t(values));
  }
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, *dtype);
  if (!external.empty()) {
    std::memcpy(tensor->host_data(), external.data(), bytes);
  } else if (proto.has_raw_data()) {
    if (bytes > 0) std::memcpy(tensor->host_data(), proto.raw_data().data(), bytes);
  } else {
    switch (*dtype) {
      case DType::kFloat32:
        CopyField<float>(proto.float_data(), *tensor);
        break;
      case DType::kFloat64:
        CopyField<double>(proto.double_data(), *tensor);
        break;
      case DType::kInt64:
        CopyField<int64_t>(proto.int64_data(), *tensor);
        break;
      case DType::kFloat16: {
        // float16's bits, one per int32_data entry.
        auto* out = static_cast<uint16_t*>(tensor->host_data());
        for (int index = 0; index < proto.int32_data_size(); ++index)
          out[index] = static_cast<uint16_t>(proto.int32_data(index));
        break;
      }
      case DType::kInt32:
        CopyField<int32_t>(proto.int32_data(), *tensor);
        break;
      case DType::kInt16:
        CopyField<int16_t>(proto.int32_data(), *tensor);
        break;
      case DType::kInt8:
        CopyField<int8_t>(proto.int32_data(), *tensor);
        break;
      case DType::kUInt8:
        CopyField<uint8_t>(proto.int32_data(), *tensor);
        break;
      case DType::kUInt16:
        CopyField<uint16_t>(proto.int32_data(), *tensor);
        break;
      case DType::kUInt32:
        CopyField<uint32_t>(proto.uint64_data(), *tensor);
        break;
      case DType::kUInt64:
        CopyField<uint64_t>(proto.uint64_data(), *tensor);
        break;
      case DType::kBool:
        CopyField<bool>(proto.int32_data(), *tensor);
        break;
    }
  }
  tensor->MarkImmutable();
  return tensor;
}

}  // namespace relay::onnx_import
