#include "tests/kernels/onnx_testdata.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"

namespace relay::kernels::testing {
namespace {

[[noreturn]] void Fail(const std::string& message) {
  throw Error(ErrorKind::kLoad, "malformed ONNX protobuf: " + message);
}

// ---- the wire format ---------------------------------------------------------------------

enum class WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct FieldKey {
  uint32_t number = 0;
  WireType wire_type = WireType::kVarint;
};

// Reads one message's fields in order. Every read checks that it stays
// inside the message's bytes, so truncated or corrupt input throws instead of
// reading past the end.
class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  bool AtEnd() const { return position_ == bytes_.size(); }

  FieldKey ReadKey() {
    const uint64_t key = ReadVarint();
    const uint64_t number = key >> 3;
    // Field numbers are at most 2^29 - 1 and never 0.
    if (number == 0 || number > (uint64_t{1} << 29) - 1) {
      Fail("invalid field number " + std::to_string(number));
    }
    const auto wire_type = static_cast<uint32_t>(key & 7);
    if (wire_type > 5) Fail("invalid wire type " + std::to_string(wire_type));
    return {static_cast<uint32_t>(number), static_cast<WireType>(wire_type)};
  }

  uint64_t ReadVarint() {
    uint64_t value = 0;
    // A varint is at most 10 bytes; the 10th may carry only the top bit.
    for (int shift = 0; shift < 64; shift += 7) {
      if (position_ >= bytes_.size()) Fail("truncated varint");
      const uint8_t byte = bytes_[position_++];
      if (shift == 63 && byte > 1) Fail("varint overflows 64 bits");
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    Fail("varint longer than 10 bytes");
  }

  uint32_t ReadFixed32() {
    uint32_t value = 0;
    for (int byte = 0; byte < 4; ++byte) value |= static_cast<uint32_t>(ReadByte()) << (8 * byte);
    return value;
  }

  uint64_t ReadFixed64() {
    uint64_t value = 0;
    for (int byte = 0; byte < 8; ++byte) value |= static_cast<uint64_t>(ReadByte()) << (8 * byte);
    return value;
  }

  std::span<const uint8_t> ReadLengthDelimited() {
    const uint64_t length = ReadVarint();
    if (length > bytes_.size() - position_) Fail("length " + std::to_string(length) + " overruns");
    std::span<const uint8_t> payload = bytes_.subspan(position_, static_cast<size_t>(length));
    position_ += static_cast<size_t>(length);
    return payload;
  }

  void Skip(WireType wire_type) {
    switch (wire_type) {
      case WireType::kVarint:
        ReadVarint();
        return;
      case WireType::kFixed64:
        ReadFixed64();
        return;
      case WireType::kLengthDelimited:
        ReadLengthDelimited();
        return;
      case WireType::kFixed32:
        ReadFixed32();
        return;
      case WireType::kStartGroup:
      case WireType::kEndGroup:
        // Groups are deprecated and onnx.proto has none.
        break;
    }
    Fail("unexpected group");
  }

 private:
  uint8_t ReadByte() {
    if (position_ >= bytes_.size()) Fail("truncated fixed-width value");
    return bytes_[position_++];
  }

  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
};

void ExpectWireType(const FieldKey& key, WireType expected, const char* field) {
  if (key.wire_type != expected) {
    Fail(std::string("field '") + field + "' has wire type " +
         std::to_string(static_cast<uint32_t>(key.wire_type)));
  }
}

std::string ReadString(WireReader& reader, const FieldKey& key, const char* field) {
  ExpectWireType(key, WireType::kLengthDelimited, field);
  std::span<const uint8_t> payload = reader.ReadLengthDelimited();
  return std::string(payload.begin(), payload.end());
}

// A repeated scalar field arrives either packed (one length-delimited run) or
// as one value per occurrence; both append to `values`. `read_one` reads one
// value of the field's own wire type.
template <typename T, typename ReadOne>
void AppendRepeated(WireReader& reader, const FieldKey& key, WireType element_wire_type,
                    const char* field, std::vector<T>& values, ReadOne read_one) {
  if (key.wire_type == WireType::kLengthDelimited) {
    WireReader packed(reader.ReadLengthDelimited());
    while (!packed.AtEnd()) values.push_back(read_one(packed));
    return;
  }
  ExpectWireType(key, element_wire_type, field);
  values.push_back(read_one(reader));
}

float FloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

double DoubleFromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// ---- TensorProto -------------------------------------------------------------------------

}  // namespace

std::optional<DType> DTypeOfOnnxType(int64_t data_type) {
  switch (data_type) {
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt8;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kFloat16;
    case 11:
      return DType::kFloat64;
    case 4:
      return DType::kUInt16;
    case 12:
      return DType::kUInt32;
    case 13:
      return DType::kUInt64;
    default:
      return std::nullopt;
  }
}

namespace {

struct TensorFields {
  std::vector<int64_t> dims;
  std::optional<int64_t> data_type;
  std::vector<float> float_data;
  std::vector<int64_t> int32_data;  // int32 values, sign-extended by the varint
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;  // uint32 and uint64 values
  std::optional<std::span<const uint8_t>> raw_data;
  bool is_external = false;
};

TensorFields ReadTensorFields(std::span<const uint8_t> bytes) {
  TensorFields fields;
  WireReader reader(bytes);
  auto read_signed = [](WireReader& r) { return static_cast<int64_t>(r.ReadVarint()); };
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    switch (key.number) {
      case 1:
        AppendRepeated(reader, key, WireType::kVarint, "dims", fields.dims, read_signed);
        break;
      case 2:
        ExpectWireType(key, WireType::kVarint, "data_type");
        fields.data_type = static_cast<int64_t>(reader.ReadVarint());
        break;
      case 4:
        AppendRepeated(reader, key, WireType::kFixed32, "float_data", fields.float_data,
                       [](WireReader& r) { return FloatFromBits(r.ReadFixed32()); });
        break;
      case 5:
        AppendRepeated(reader, key, WireType::kVarint, "int32_data", fields.int32_data,
                       read_signed);
        break;
      case 7:
        AppendRepeated(reader, key, WireType::kVarint, "int64_data", fields.int64_data,
                       read_signed);
        break;
      case 9:
        ExpectWireType(key, WireType::kLengthDelimited, "raw_data");
        fields.raw_data = reader.ReadLengthDelimited();
        break;
      case 10:
        AppendRepeated(reader, key, WireType::kFixed64, "double_data", fields.double_data,
                       [](WireReader& r) { return DoubleFromBits(r.ReadFixed64()); });
        break;
      case 11:
        AppendRepeated(reader, key, WireType::kVarint, "uint64_data", fields.uint64_data,
                       [](WireReader& r) { return r.ReadVarint(); });
        break;
      case 14:
        ExpectWireType(key, WireType::kVarint, "data_location");
        fields.is_external = reader.ReadVarint() == 1;
        break;
      default:  // name (8), string_data, doc_string, segment, external_data: not needed
        reader.Skip(key.wire_type);
        break;
    }
  }
  return fields;
}

// The element count of `dims`, refusing negative dimensions and counts too
// large to be real test data (which also rules out overflow).
int64_t ElementCount(const std::vector<int64_t>& dims) {
  constexpr int64_t kLimit = int64_t{1} << 40;
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) Fail("negative dimension " + std::to_string(dim));
    if (dim != 0 && count > kLimit / dim) Fail("tensor too large");
    count *= dim;
  }
  return count;
}

// Stores the typed-field values `values` (already known to number the
// tensor's elements) into `tensor`, converting each to the tensor's dtype.
template <typename Source>
void StoreValues(const std::vector<Source>& values, Tensor& tensor) {
  const int64_t count = tensor.element_count();
  for (int64_t index = 0; index < count; ++index) {
    const Source value = values[static_cast<size_t>(index)];
    switch (tensor.dtype()) {
      case DType::kFloat32:
        tensor.data<float>()[index] = static_cast<float>(value);
        break;
      case DType::kFloat64:
        tensor.data<double>()[index] = static_cast<double>(value);
        break;
      case DType::kFloat16:
        // int32_data carries a float16's bits.
        tensor.data<Float16>()[index] = Float16::FromBits(static_cast<uint16_t>(value));
        break;
      case DType::kBool:
        tensor.data<bool>()[index] = value != 0;
        break;
      case DType::kInt8:
        tensor.data<int8_t>()[index] = static_cast<int8_t>(value);
        break;
      case DType::kInt16:
        tensor.data<int16_t>()[index] = static_cast<int16_t>(value);
        break;
      case DType::kInt32:
        tensor.data<int32_t>()[index] = static_cast<int32_t>(value);
        break;
      case DType::kInt64:
        tensor.data<int64_t>()[index] = static_cast<int64_t>(value);
        break;
      case DType::kUInt8:
        tensor.data<uint8_t>()[index] = static_cast<uint8_t>(value);
        break;
      case DType::kUInt16:
        tensor.data<uint16_t>()[index] = static_cast<uint16_t>(value);
        break;
      case DType::kUInt32:
        tensor.data<uint32_t>()[index] = static_cast<uint32_t>(value);
        break;
      case DType::kUInt64:
        tensor.data<uint64_t>()[index] = static_cast<uint64_t>(value);
        break;
    }
  }
}

// How many values the typed field for `dtype` holds, and its name.
std::pair<size_t, const char*> TypedFieldSize(const TensorFields& fields, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {fields.float_data.size(), "float_data"};
    case DType::kFloat64:
      return {fields.double_data.size(), "double_data"};
    case DType::kInt64:
      return {fields.int64_data.size(), "int64_data"};
    case DType::kUInt32:
    case DType::kUInt64:
      return {fields.uint64_data.size(), "uint64_data"};
    default:  // float16, bool and the narrower integers
      return {fields.int32_data.size(), "int32_data"};
  }
}

Ref<Tensor> TensorFromFields(const TensorFields& fields) {
  if (!fields.data_type) Fail("tensor without data_type");
  if (fields.is_external) Fail("tensor with external data");
  const std::optional<DType> dtype = DTypeOfOnnxType(*fields.data_type);
  if (!dtype) {
    Fail("ONNX data type " + std::to_string(*fields.data_type) + " has no relay-vm dtype");
  }
  // Checked before allocating, so that corrupt dims cannot request huge
  // buffers: every element must be backed by bytes of the message.
  const int64_t count = ElementCount(fields.dims);
  const size_t element_size = DTypeSize(*dtype);
  if (fields.raw_data) {
    if (static_cast<uint64_t>(count) * element_size != fields.raw_data->size()) {
      Fail("raw_data has " + std::to_string(fields.raw_data->size()) + " bytes, shape " +
           ShapeToString(fields.dims) + " of " + std::string(DTypeName(*dtype)) + " needs " +
           std::to_string(count * static_cast<int64_t>(element_size)));
    }
  } else {
    const auto [size, field] = TypedFieldSize(fields, *dtype);
    if (static_cast<int64_t>(size) != count) {
      Fail(std::string(field) + " holds " + std::to_string(size) + " values, shape " +
           ShapeToString(fields.dims) + " needs " + std::to_string(count));
    }
  }

  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), fields.dims, *dtype);
  if (count == 0) return tensor;
  if (fields.raw_data) {
    // raw_data is little-endian, as is every host relay-vm runs on.
    std::memcpy(tensor->host_data(), fields.raw_data->data(), fields.raw_data->size());
    // A bool byte other than 0 or 1 is not a valid C++ bool; normalise it
    // (ONNX reads any non-zero byte as true).
    if (*dtype == DType::kBool) {
      auto* raw = static_cast<uint8_t*>(tensor->host_data());
      for (int64_t index = 0; index < count; ++index) raw[index] = raw[index] != 0;
    }
    return tensor;
  }
  switch (*dtype) {
    case DType::kFloat32:
      StoreValues(fields.float_data, *tensor);
      break;
    case DType::kFloat64:
      StoreValues(fields.double_data, *tensor);
      break;
    case DType::kInt64:
      StoreValues(fields.int64_data, *tensor);
      break;
    case DType::kUInt32:
    case DType::kUInt64:
      StoreValues(fields.uint64_data, *tensor);
      break;
    default:
      StoreValues(fields.int32_data, *tensor);
      break;
  }
  return tensor;
}

// ---- ModelProto --------------------------------------------------------------------------

OnnxAttribute ReadAttribute(std::span<const uint8_t> bytes) {
  OnnxAttribute attribute;
  // AttributeProto sets one value field (named by `type`, which old models
  // omit); the last value field seen wins, as in protobuf's own parsers.
  std::optional<OnnxAttributeValue> value;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  bool has_ints = false, has_floats = false;
  int64_t type = 0;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    switch (key.number) {
      case 1:
        attribute.name = ReadString(reader, key, "AttributeProto.name");
        break;
      case 2:
        ExpectWireType(key, WireType::kFixed32, "AttributeProto.f");
        value = FloatFromBits(reader.ReadFixed32());
        break;
      case 3:
        ExpectWireType(key, WireType::kVarint, "AttributeProto.i");
        value = static_cast<int64_t>(reader.ReadVarint());
        break;
      case 4:
        value = ReadString(reader, key, "AttributeProto.s");
        break;
      case 5:
        ExpectWireType(key, WireType::kLengthDelimited, "AttributeProto.t");
        value = TensorFromFields(ReadTensorFields(reader.ReadLengthDelimited()));
        break;
      case 7:
        has_floats = true;
        AppendRepeated(reader, key, WireType::kFixed32, "AttributeProto.floats", floats,
                       [](WireReader& r) { return FloatFromBits(r.ReadFixed32()); });
        break;
      case 8:
        has_ints = true;
        AppendRepeated(reader, key, WireType::kVarint, "AttributeProto.ints", ints,
                       [](WireReader& r) { return static_cast<int64_t>(r.ReadVarint()); });
        break;
      case 20:
        ExpectWireType(key, WireType::kVarint, "AttributeProto.type");
        type = static_cast<int64_t>(reader.ReadVarint());
        break;
      default:  // graphs, strings, tensors, sparse tensors, doc_string: not needed
        reader.Skip(key.wire_type);
        break;
    }
  }
  // An empty list has no bytes on the wire, so only `type` says it is a list.
  constexpr int64_t kFloats = 6, kInts = 7;
  if (has_ints || type == kInts) {
    value = std::move(ints);
  } else if (has_floats || type == kFloats) {
    value = std::move(floats);
  }
  // Attribute kinds the tests do not use (graphs, string lists) decode as an
  // empty int list; no mapping accepts them where a value matters.
  attribute.value = value ? std::move(*value) : OnnxAttributeValue(std::vector<int64_t>{});
  return attribute;
}

OnnxNode ReadNode(std::span<const uint8_t> bytes) {
  OnnxNode node;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    switch (key.number) {
      case 1:
        node.inputs.push_back(ReadString(reader, key, "NodeProto.input"));
        break;
      case 2:
        node.outputs.push_back(ReadString(reader, key, "NodeProto.output"));
        break;
      case 4:
        node.op_type = ReadString(reader, key, "NodeProto.op_type");
        break;
      case 5:
        ExpectWireType(key, WireType::kLengthDelimited, "NodeProto.attribute");
        node.attributes.push_back(ReadAttribute(reader.ReadLengthDelimited()));
        break;
      case 7:
        node.domain = ReadString(reader, key, "NodeProto.domain");
        break;
      default:  // name, doc_string
        reader.Skip(key.wire_type);
        break;
    }
  }
  return node;
}

// ValueInfoProto: only its name (field 1) is needed.
std::string ReadValueInfoName(std::span<const uint8_t> bytes) {
  std::string name;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    if (key.number == 1) {
      name = ReadString(reader, key, "ValueInfoProto.name");
    } else {
      reader.Skip(key.wire_type);
    }
  }
  return name;
}

OnnxGraph ReadGraph(std::span<const uint8_t> bytes) {
  OnnxGraph graph;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    switch (key.number) {
      case 1:
        ExpectWireType(key, WireType::kLengthDelimited, "GraphProto.node");
        graph.nodes.push_back(ReadNode(reader.ReadLengthDelimited()));
        break;
      case 11:
        ExpectWireType(key, WireType::kLengthDelimited, "GraphProto.input");
        graph.inputs.push_back(ReadValueInfoName(reader.ReadLengthDelimited()));
        break;
      case 12:
        ExpectWireType(key, WireType::kLengthDelimited, "GraphProto.output");
        graph.outputs.push_back(ReadValueInfoName(reader.ReadLengthDelimited()));
        break;
      default:  // name, initializers, value_info, ...: not needed
        reader.Skip(key.wire_type);
        break;
    }
  }
  return graph;
}

OnnxOperatorSet ReadOperatorSet(std::span<const uint8_t> bytes) {
  OnnxOperatorSet operator_set;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    if (key.number == 1) {
      operator_set.domain = ReadString(reader, key, "OperatorSetIdProto.domain");
    } else if (key.number == 2) {
      ExpectWireType(key, WireType::kVarint, "OperatorSetIdProto.version");
      operator_set.version = static_cast<int64_t>(reader.ReadVarint());
    } else {
      reader.Skip(key.wire_type);
    }
  }
  return operator_set;
}

}  // namespace

const OnnxAttribute* OnnxNode::FindAttribute(const std::string& name) const {
  for (const OnnxAttribute& attribute : attributes) {
    if (attribute.name == name) return &attribute;
  }
  return nullptr;
}

int64_t OnnxModel::OpsetVersion(const std::string& domain) const {
  const bool wants_default = domain.empty() || domain == "ai.onnx";
  for (const OnnxOperatorSet& operator_set : opset_imports) {
    const bool is_default = operator_set.domain.empty() || operator_set.domain == "ai.onnx";
    if (wants_default ? is_default : operator_set.domain == domain) return operator_set.version;
  }
  return 0;
}

Ref<Tensor> DecodeOnnxTensor(std::span<const uint8_t> bytes) {
  return TensorFromFields(ReadTensorFields(bytes));
}

OnnxModel DecodeOnnxModel(std::span<const uint8_t> bytes) {
  OnnxModel model;
  bool has_graph = false;
  WireReader reader(bytes);
  while (!reader.AtEnd()) {
    const FieldKey key = reader.ReadKey();
    if (key.number == 7) {
      ExpectWireType(key, WireType::kLengthDelimited, "ModelProto.graph");
      model.graph = ReadGraph(reader.ReadLengthDelimited());
      has_graph = true;
    } else if (key.number == 8) {
      ExpectWireType(key, WireType::kLengthDelimited, "ModelProto.opset_import");
      model.opset_imports.push_back(ReadOperatorSet(reader.ReadLengthDelimited()));
    } else {
      reader.Skip(key.wire_type);
    }
  }
  if (!has_graph) Fail("model without a graph");
  return model;
}

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorKind::kLoad, "cannot open " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (file.bad()) throw Error(ErrorKind::kLoad, "cannot read " + path);
  return bytes;
}

namespace {

// Re-throws `error` with the file named.
[[noreturn]] void RethrowForFile(const Error& error, const std::string& path) {
  throw Error(error.kind(), error.message(), SourceSpan{.file = path});
}

}  // namespace

Ref<Tensor> ReadOnnxTensorFile(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadFileBytes(path);
  try {
    return DecodeOnnxTensor(bytes);
  } catch (const Error& error) {
    RethrowForFile(error, path);
  }
}

OnnxModel ReadOnnxModelFile(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadFileBytes(path);
  try {
    return DecodeOnnxModel(bytes);
  } catch (const Error& error) {
    RethrowForFile(error, path);
  }
}

}  // namespace relay::kernels::testing
