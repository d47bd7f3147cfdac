// The ONNX protobuf decoder of onnx_testdata.h: hand-encoded messages check
// each field's wire forms against onnx.proto, and truncations and byte flips
// of real test-data files check that malformed input throws relay::Error
// instead of crashing (the CI build runs this under AddressSanitizer).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "relay/error.h"
#include "relay/float16.h"
#include "relay/tensor.h"
#include "tests/kernels/onnx_testdata.h"

namespace relay::kernels::testing {
namespace {

const std::filesystem::path kDataDirectory = RELAY_ONNX_TESTDATA_DIR;

// ---- encoding messages by hand ---------------------------------------------------------

using Bytes = std::vector<uint8_t>;

void AppendVarint(Bytes& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

void AppendKey(Bytes& out, uint32_t field, uint32_t wire_type) {
  AppendVarint(out, (uint64_t{field} << 3) | wire_type);
}

void AppendVarintField(Bytes& out, uint32_t field, uint64_t value) {
  AppendKey(out, field, 0);
  AppendVarint(out, value);
}

void AppendBytesField(Bytes& out, uint32_t field, const Bytes& payload) {
  AppendKey(out, field, 2);
  AppendVarint(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

void AppendStringField(Bytes& out, uint32_t field, const std::string& text) {
  AppendBytesField(out, field, Bytes(text.begin(), text.end()));
}

void AppendFixed32(Bytes& out, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int byte = 0; byte < 4; ++byte) out.push_back(static_cast<uint8_t>(bits >> (8 * byte)));
}

// TensorProto fields (onnx.proto): dims=1, data_type=2, float_data=4,
// int32_data=5, int64_data=7, name=8, raw_data=9.
Bytes DimsAndType(const std::vector<int64_t>& dims, int64_t data_type) {
  Bytes out;
  for (int64_t dim : dims) AppendVarintField(out, 1, static_cast<uint64_t>(dim));
  AppendVarintField(out, 2, static_cast<uint64_t>(data_type));
  AppendStringField(out, 8, "x");
  return out;
}

Error DecodeTensorError(const Bytes& bytes) {
  try {
    DecodeOnnxTensor(bytes);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "decoding did not throw";
  return Error(ErrorKind::kInternal, "no error");
}

// ---- tensors ---------------------------------------------------------------------------

TEST(OnnxTestdataDecoder, ReadsPackedAndUnpackedFloatData) {
  Bytes packed_payload;
  for (float value : {1.5f, -2.0f, 3.25f}) AppendFixed32(packed_payload, value);
  Bytes packed = DimsAndType({3}, 1);
  AppendBytesField(packed, 4, packed_payload);

  Bytes unpacked = DimsAndType({3}, 1);
  for (float value : {1.5f, -2.0f, 3.25f}) {
    AppendKey(unpacked, 4, 5);
    AppendFixed32(unpacked, value);
  }
  for (const Bytes& bytes : {packed, unpacked}) {
    Ref<Tensor> tensor = DecodeOnnxTensor(bytes);
    ASSERT_EQ(tensor->dtype(), DType::kFloat32);
    ASSERT_EQ(ShapeToString(tensor->shape()), "(3,)");
    EXPECT_EQ(tensor->data<float>()[0], 1.5f);
    EXPECT_EQ(tensor->data<float>()[1], -2.0f);
    EXPECT_EQ(tensor->data<float>()[2], 3.25f);
  }
}

TEST(OnnxTestdataDecoder, ReadsIntegerFloat16AndBoolFields) {
  Bytes int64s = DimsAndType({2}, 7);
  Bytes payload;
  AppendVarint(payload, static_cast<uint64_t>(int64_t{-7}));
  AppendVarint(payload, 1ull << 40);
  AppendBytesField(int64s, 7, payload);
  Ref<Tensor> tensor = DecodeOnnxTensor(int64s);
  ASSERT_EQ(tensor->dtype(), DType::kInt64);
  EXPECT_EQ(tensor->data<int64_t>()[0], -7);
  EXPECT_EQ(tensor->data<int64_t>()[1], int64_t{1} << 40);

  // float16 travels as its bits in int32_data; 0x3c00 is 1.0.
  Bytes halves = DimsAndType({1}, 10);
  AppendVarintField(halves, 5, 0x3c00);
  tensor = DecodeOnnxTensor(halves);
  ASSERT_EQ(tensor->dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>(tensor->data<Float16>()[0]), 1.0f);

  Bytes int8s = DimsAndType({1}, 3);
  AppendVarintField(int8s, 5, static_cast<uint64_t>(int64_t{-5}));
  tensor = DecodeOnnxTensor(int8s);
  ASSERT_EQ(tensor->dtype(), DType::kInt8);
  EXPECT_EQ(tensor->data<int8_t>()[0], -5);

  // raw_data bools: any non-zero byte is true.
  Bytes bools = DimsAndType({2, 1}, 9);
  AppendBytesField(bools, 9, Bytes{0, 7});
  tensor = DecodeOnnxTensor(bools);
  ASSERT_EQ(tensor->dtype(), DType::kBool);
  ASSERT_EQ(ShapeToString(tensor->shape()), "(2, 1)");
  EXPECT_EQ(static_cast<const uint8_t*>(tensor->host_data())[0], 0);
  EXPECT_EQ(static_cast<const uint8_t*>(tensor->host_data())[1], 1);
}

TEST(OnnxTestdataDecoder, ReadsLittleEndianRawData) {
  Bytes doubles = DimsAndType({}, 11);
  Bytes raw(8);
  const double value = -0.125;
  std::memcpy(raw.data(), &value, sizeof value);
  AppendBytesField(doubles, 9, raw);
  Ref<Tensor> tensor = DecodeOnnxTensor(doubles);
  ASSERT_EQ(tensor->dtype(), DType::kFloat64);
  ASSERT_EQ(tensor->ndim(), 0);
  EXPECT_EQ(*tensor->data<double>(), value);
}

TEST(OnnxTestdataDecoder, RejectsInconsistentTensors) {
  Bytes short_raw = DimsAndType({4}, 1);
  AppendBytesField(short_raw, 9, Bytes(15, 0));
  EXPECT_NE(DecodeTensorError(short_raw).message().find("raw_data has 15 bytes"),
            std::string::npos);

  Bytes few_values = DimsAndType({3}, 7);
  AppendVarintField(few_values, 7, 1);
  EXPECT_NE(DecodeTensorError(few_values).message().find("int64_data holds 1 values"),
            std::string::npos);

  Bytes negative = DimsAndType({-2}, 1);
  EXPECT_NE(DecodeTensorError(negative).message().find("negative dimension"), std::string::npos);

  Bytes strings = DimsAndType({1}, 8);
  EXPECT_NE(DecodeTensorError(strings).message().find("data type 8"), std::string::npos);

  // A dimension product far beyond the message's bytes is refused before any
  // allocation.
  Bytes huge = DimsAndType({1 << 20, 1 << 20, 1 << 20}, 1);
  EXPECT_EQ(DecodeTensorError(huge).kind(), ErrorKind::kLoad);
}

TEST(OnnxTestdataDecoder, RejectsMalformedWireFormat) {
  // A varint of eleven continuation bytes.
  Bytes overlong(11, 0xff);
  EXPECT_NE(DecodeTensorError(overlong).message().find("varint"), std::string::npos);
  // A length that runs past the end.
  Bytes overrun = DimsAndType({1}, 1);
  AppendKey(overrun, 9, 2);
  AppendVarint(overrun, 1000);
  EXPECT_NE(DecodeTensorError(overrun).message().find("overruns"), std::string::npos);
  // Field number 0 and wire types 6 and 7 do not exist.
  EXPECT_EQ(DecodeTensorError(Bytes{0x00}).kind(), ErrorKind::kLoad);
  EXPECT_EQ(DecodeTensorError(Bytes{0x0e}).kind(), ErrorKind::kLoad);
  // A group start (wire type 3) of an unknown field, 15, which would be skipped.
  EXPECT_NE(DecodeTensorError(Bytes{0x7b}).message().find("group"), std::string::npos);
}

// ---- models ----------------------------------------------------------------------------

TEST(OnnxTestdataDecoder, ReadsModelGraphAndOpsets) {
  // AttributeProto: name=1, f=2, i=3, s=4, floats=7, ints=8, type=20.
  Bytes ints_attribute;
  AppendStringField(ints_attribute, 1, "perm");
  Bytes packed_ints;
  for (uint64_t value : {2, 0, 1}) AppendVarint(packed_ints, value);
  AppendBytesField(ints_attribute, 8, packed_ints);
  AppendVarintField(ints_attribute, 20, 7);
  Bytes float_attribute;
  AppendStringField(float_attribute, 1, "alpha");
  AppendKey(float_attribute, 2, 5);
  AppendFixed32(float_attribute, 0.5f);
  Bytes string_attribute;
  AppendStringField(string_attribute, 1, "mode");
  AppendStringField(string_attribute, 4, "edge");
  Bytes empty_ints_attribute;  // an empty list is known only by its type
  AppendStringField(empty_ints_attribute, 1, "axes");
  AppendVarintField(empty_ints_attribute, 20, 7);

  // NodeProto: input=1, output=2, op_type=4, attribute=5.
  Bytes node;
  AppendStringField(node, 1, "x");
  AppendStringField(node, 1, "");
  AppendStringField(node, 2, "y");
  AppendStringField(node, 4, "Transpose");
  for (const Bytes& attribute :
       {ints_attribute, float_attribute, string_attribute, empty_ints_attribute}) {
    AppendBytesField(node, 5, attribute);
  }
  // GraphProto: node=1, input=11, output=12 (ValueInfoProto.name=1).
  Bytes graph, input_info, output_info;
  AppendStringField(input_info, 1, "x");
  AppendStringField(output_info, 1, "y");
  AppendBytesField(graph, 1, node);
  AppendBytesField(graph, 11, input_info);
  AppendBytesField(graph, 12, output_info);
  // ModelProto: ir_version=1, graph=7, opset_import=8 (domain=1, version=2).
  Bytes opset, model;
  AppendStringField(opset, 1, "");
  AppendVarintField(opset, 2, 13);
  AppendVarintField(model, 1, 8);
  AppendBytesField(model, 8, opset);
  AppendBytesField(model, 7, graph);

  const OnnxModel decoded = DecodeOnnxModel(model);
  EXPECT_EQ(decoded.OpsetVersion(), 13);
  EXPECT_EQ(decoded.OpsetVersion("ai.onnx.ml"), 0);
  ASSERT_EQ(decoded.graph.nodes.size(), 1u);
  const OnnxNode& decoded_node = decoded.graph.nodes[0];
  EXPECT_EQ(decoded_node.op_type, "Transpose");
  EXPECT_EQ(decoded_node.inputs, (std::vector<std::string>{"x", ""}));
  EXPECT_EQ(decoded_node.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(decoded.graph.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(decoded.graph.outputs, (std::vector<std::string>{"y"}));
  ASSERT_NE(decoded_node.FindAttribute("perm"), nullptr);
  EXPECT_EQ(std::get<std::vector<int64_t>>(decoded_node.FindAttribute("perm")->value),
            (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(std::get<float>(decoded_node.FindAttribute("alpha")->value), 0.5f);
  EXPECT_EQ(std::get<std::string>(decoded_node.FindAttribute("mode")->value), "edge");
  EXPECT_TRUE(std::get<std::vector<int64_t>>(decoded_node.FindAttribute("axes")->value).empty());
  EXPECT_EQ(decoded_node.FindAttribute("missing"), nullptr);
}

TEST(OnnxTestdataDecoder, ReadsARealTestCase) {
  if (!std::filesystem::is_directory(kDataDirectory)) {
    GTEST_FAIL() << kDataDirectory << " does not exist: install libonnx-testdata";
  }
  const OnnxModel model = ReadOnnxModelFile((kDataDirectory / "test_abs/model.onnx").string());
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].op_type, "Abs");
  EXPECT_GE(model.OpsetVersion(), 13);
  const Ref<Tensor> input =
      ReadOnnxTensorFile((kDataDirectory / "test_abs/test_data_set_0/input_0.pb").string());
  EXPECT_EQ(input->dtype(), DType::kFloat32);
  EXPECT_EQ(ShapeToString(input->shape()), "(3, 4, 5)");
}

// ---- fuzzing with real files -----------------------------------------------------------

// Decodes `bytes`; only relay::Error may come out.
template <typename Decode>
void ExpectDecodesOrThrows(const Bytes& bytes, Decode decode, const std::string& what) {
  try {
    decode(bytes);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad) << what << ": " << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << " threw a non-relay exception: " << error.what();
  }
}

template <typename Decode>
void FuzzFile(const std::filesystem::path& path, Decode decode) {
  if (!std::filesystem::is_directory(kDataDirectory)) {
    GTEST_FAIL() << kDataDirectory << " does not exist: install libonnx-testdata";
  }
  const Bytes original = ReadFileBytes(path.string());
  ASSERT_FALSE(original.empty());
  for (size_t length = 0; length < original.size(); ++length) {
    ExpectDecodesOrThrows(Bytes(original.begin(), original.begin() + length), decode,
                          "truncation to " + std::to_string(length) + " bytes");
  }
  std::mt19937 random(20240601);  // fixed: failures must reproduce
  std::uniform_int_distribution<size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte_value(0, 255);
  for (int trial = 0; trial < 3000; ++trial) {
    Bytes mutated = original;
    const int flips = 1 + trial % 4;
    for (int flip = 0; flip < flips; ++flip) {
      mutated[position(random)] = static_cast<uint8_t>(byte_value(random));
    }
    ExpectDecodesOrThrows(mutated, decode, "mutation " + std::to_string(trial));
  }
}

TEST(OnnxTestdataDecoder, SurvivesCorruptTensorFiles) {
  // A float input and an int64 (shape) input: raw_data and dims both matter.
  FuzzFile(kDataDirectory / "test_abs/test_data_set_0/input_0.pb",
           [](const Bytes& bytes) { DecodeOnnxTensor(bytes); });
  FuzzFile(kDataDirectory / "test_reshape_negative_dim/test_data_set_0/input_1.pb",
           [](const Bytes& bytes) { DecodeOnnxTensor(bytes); });
}

TEST(OnnxTestdataDecoder, SurvivesCorruptModelFiles) {
  // A node with ints, int and float attributes.
  FuzzFile(kDataDirectory / "test_averagepool_2d_pads_count_include_pad/model.onnx",
           [](const Bytes& bytes) { DecodeOnnxModel(bytes); });
  FuzzFile(kDataDirectory / "test_clip_default_int8_min/model.onnx",
           [](const Bytes& bytes) { DecodeOnnxModel(bytes); });
}

}  // namespace
}  // namespace relay::kernels::testing
