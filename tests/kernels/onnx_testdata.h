// Reading ONNX's node test data (Debian's libonnx-testdata): serialized
// onnx.TensorProto files (test_data_set_N/input_K.pb, output_K.pb) and the
// graph of a model.onnx (onnx.ModelProto), decoded straight from the protobuf
// wire format so that the tests need no protobuf library.
//
// Only what the node tests use is decoded: a tensor's shape, element type and
// data; a model's opset imports and its graph's nodes, inputs and outputs.
// Every other field is skipped. Field numbers follow onnx.proto (ONNX 1.12).
//
// Errors: malformed or truncated bytes, an element type relay-vm has no dtype
// for (string, bfloat16, uint16/32/64, complex), external data and data that
// does not match the shape all throw relay::Error of kind kLoad; nothing reads
// outside the given bytes. The functions share no state, so they may run on
// several threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "relay/dtype.h"
#include "relay/object.h"
#include "relay/tensor.h"

namespace relay::kernels::testing {

// An attribute value of the kinds node tests use (AttributeProto's f, i, s,
// t, floats and ints). Graphs, sparse tensors and lists of strings or tensors
// are skipped.
using OnnxAttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                        std::vector<float>, Ref<Tensor>>;

struct OnnxAttribute {
  std::string name;
  OnnxAttributeValue value;
};

struct OnnxNode {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  // Names of the node's inputs and outputs; an omitted optional input is "".
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<OnnxAttribute> attributes;

  // The attribute `name`, or nullptr when the node does not set it.
  const OnnxAttribute* FindAttribute(const std::string& name) const;
};

struct OnnxGraph {
  std::vector<OnnxNode> nodes;
  // Names of the graph's inputs and outputs, in order: input_K.pb holds the
  // K-th input and output_K.pb the K-th output.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

struct OnnxOperatorSet {
  std::string domain;
  int64_t version = 0;
};

struct OnnxModel {
  OnnxGraph graph;
  std::vector<OnnxOperatorSet> opset_imports;

  // The imported version of `domain` ("" or "ai.onnx": the default domain),
  // or 0 when the model does not import it.
  int64_t OpsetVersion(const std::string& domain = "") const;
};

// The relay-vm dtype of a TensorProto.DataType value (1 float, 2 uint8,
// 3 int8, 5 int16, 6 int32, 7 int64, 9 bool, 10 float16, 11 double), or
// nullopt for the types relay-vm lacks.
std::optional<DType> DTypeOfOnnxType(int64_t data_type);

// Decodes a serialized TensorProto into a new host tensor (raw_data is
// little-endian, as ONNX specifies). Throws kLoad as described above.
Ref<Tensor> DecodeOnnxTensor(std::span<const uint8_t> bytes);

// Decodes a serialized ModelProto. Throws kLoad as described above.
OnnxModel DecodeOnnxModel(std::span<const uint8_t> bytes);

// The whole contents of the file at `path`; throws kLoad if it cannot be read.
std::vector<uint8_t> ReadFileBytes(const std::string& path);

// DecodeOnnxTensor / DecodeOnnxModel of a file; errors name the file.
Ref<Tensor> ReadOnnxTensorFile(const std::string& path);
OnnxModel ReadOnnxModelFile(const std::string& path);

}  // namespace relay::kernels::testing
