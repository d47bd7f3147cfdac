// The inference protocol's JSON bodies (serve/inference_protocol.h) and
// dynamic batching's tensor work (serve/request_batching.h), against
// signatures written out by hand and tensors filled by the tests.
#include "serve/inference_protocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "relay/devices.h"
#include "serve/request_batching.h"

namespace relay::serve {
namespace {

using nlohmann::json;

ModelSignature TwoInputSignature() {
  ModelSignature signature;
  signature.name = "m";
  signature.inputs = {
      {"x", DType::kFloat32, {-1, 2}}, {"flags", DType::kBool, {2}}, {"ids", DType::kInt8, {}}};
  signature.outputs = {{"out0", DType::kFloat32, {-1, 2}}, {"out1", DType::kInt64, {2}}};
  return signature;
}

json ValidBody() {
  return {{"id", "r1"},
          {"inputs",
           {{{"name", "x"}, {"shape", {2, 2}}, {"datatype", "FP32"}, {"data", {1, 2.5, -3, 4}}},
            {{"name", "flags"}, {"shape", {2}}, {"datatype", "BOOL"}, {"data", {true, false}}},
            {{"name", "ids"}, {"shape", json::array()}, {"datatype", "INT8"}, {"data", {-7}}}}}};
}

TEST(InferenceProtocol, ParsesInputsInTheSignaturesOrder) {
  InferenceRequest request = ParseInferenceRequest(ValidBody().dump(), TwoInputSignature());
  ASSERT_EQ(request.inputs.size(), 3u);
  EXPECT_EQ(request.id, "r1");
  const Tensor& x = *request.inputs[0];
  EXPECT_EQ(x.shape(), (Shape{2, 2}));
  EXPECT_EQ(x.dtype(), DType::kFloat32);
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 4),
            (std::vector<float>{1, 2.5f, -3, 4}));
  EXPECT_TRUE(request.inputs[1]->data<bool>()[0]);
  EXPECT_FALSE(request.inputs[1]->data<bool>()[1]);
  EXPECT_EQ(request.inputs[2]->ndim(), 0);
  EXPECT_EQ(*request.inputs[2]->data<int8_t>(), -7);
  EXPECT_EQ(request.outputs, (std::vector<size_t>{0, 1}));
}

TEST(InferenceProtocol, TakesNestedDataAndRequestedOutputs) {
  json body = ValidBody();
  body["inputs"][0]["data"] = {{1, 2}, {3, 4}};
  body["outputs"] = {{{"name", "out1"}}};
  InferenceRequest request = ParseInferenceRequest(body.dump(), TwoInputSignature());
  EXPECT_EQ(request.inputs[0]->data<float>()[3], 4.0f);
  EXPECT_EQ(request.outputs, (std::vector<size_t>{1}));
}

// Each bad body with the words its message must contain.
TEST(InferenceProtocol, RefusesEveryKindOfBadRequestWith400) {
  auto edited = [](auto edit) {
    json body = ValidBody();
    edit(body);
    return body.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"inputs\": [", "not valid JSON"},
      {"[1, 2]", "must be a JSON object"},
      {"{}", "has no \"inputs\""},
      {R"({"inputs": {}})", "must be an array"},
      {R"({"inputs": [], "id": 3})", "\"id\" must be a string"},
      {edited([](json& b) { b["inputs"][0]["name"] = "y"; }),
       "no input 'y' (its inputs: x, flags, ids)"},
      {edited([](json& b) { b["inputs"].erase(1); }), "input 'flags' is missing"},
      {edited([](json& b) { b["inputs"].push_back(b["inputs"][0]); }), "input 'x' is given twice"},
      {edited([](json& b) { b["inputs"][0]["datatype"] = "INT32"; }),
       "is FP32, got datatype \"INT32\""},
      {edited([](json& b) { b["inputs"][0]["datatype"] = "FLOAT"; }), "is FP32"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {4}; }), "has shape [-1, 2]"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {2, 3}; }), "got [2,3]"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {-2, 2}; }), "has shape"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {1.5, 2}; }), "has shape"},
      {edited([](json& b) { b["inputs"][0]["data"] = {1, 2, 3}; }),
       "holds 4 elements, \"data\" has 3"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {1000000000000, 2}; }),
       "holds 2000000000000 elements"},
      {edited([](json& b) { b["inputs"][0]["shape"] = {4611686018427387904, 2}; }),
       "too many elements"},
      {edited([](json& b) { b["inputs"][0]["data"][2] = "3"; }),
       "element 2 (\"3\") is not a valid float32"},
      {edited([](json& b) { b["inputs"][1]["data"][0] = 1; }), "element 0 (1) is not a valid bool"},
      {edited([](json& b) { b["inputs"][2]["data"][0] = 128; }),
       "element 0 (128) is not a valid int8"},
      {edited([](json& b) { b["inputs"][2]["data"][0] = 1.5; }), "is not a valid int8"},
      {edited([](json& b) { b["inputs"][0].erase("data"); }), "input 'x' has no \"data\""},
      {edited([](json& b) { b["outputs"] = {{{"name", "out9"}}}; }), "has no output \"out9\""},
  };
  for (const auto& [body, words] : cases) {
    try {
      ParseInferenceRequest(body, TwoInputSignature());
      ADD_FAILURE() << "accepted " << body;
    } catch (const RequestError& error) {
      EXPECT_EQ(error.status(), 400) << body;
      EXPECT_NE(std::string(error.what()).find(words), std::string::npos)
          << body << "\n  gave: " << error.what();
    }
  }
}

// uint64 elements above int64's range read and print as themselves; a
// negative one is refused.
TEST(InferenceProtocol, TakesTheWholeUInt64Range) {
  ModelSignature signature;
  signature.name = "u";
  signature.inputs = {{"big", DType::kUInt64, {3}}};
  signature.outputs = {{"big", DType::kUInt64, {3}}};
  json body = {{"inputs",
                {{{"name", "big"},
                  {"shape", {3}},
                  {"datatype", "UINT64"},
                  {"data", {18446744073709551615ull, 9223372036854775808ull, 0}}}}}};
  InferenceRequest request = ParseInferenceRequest(body.dump(), signature);
  const uint64_t* values = request.inputs[0]->data<uint64_t>();
  EXPECT_EQ(values[0], 18446744073709551615ull);
  EXPECT_EQ(values[1], 9223372036854775808ull);
  EXPECT_EQ(values[2], 0u);
  json response =
      json::parse(EncodeInferenceResponse(signature, request, {request.inputs[0]}).body);
  EXPECT_EQ(response["outputs"][0]["data"][0].get<uint64_t>(), 18446744073709551615ull);
  body["inputs"][0]["data"][2] = -1;
  try {
    ParseInferenceRequest(body.dump(), signature);
    ADD_FAILURE() << "accepted -1 as a uint64";
  } catch (const RequestError& error) {
    EXPECT_NE(std::string(error.what()).find("is not a valid uint64"), std::string::npos)
        << error.what();
  }
}

TEST(InferenceProtocol, EncodesOutputsWithShortestFloatText) {
  ModelSignature signature = TwoInputSignature();
  Ref<Tensor> first = Tensor::Empty(HostDevice(), {1, 2}, DType::kFloat32);
  first->data<float>()[0] = 0.1f;
  first->data<float>()[1] = -2.0f;
  Ref<Tensor> second = Tensor::Empty(HostDevice(), {2}, DType::kInt64);
  second->data<int64_t>()[0] = int64_t{1} << 40;
  second->data<int64_t>()[1] = -5;
  InferenceRequest request;
  request.id = "r7";
  request.outputs = {1, 0};
  std::string body = EncodeInferenceResponse(signature, request, {first, second}).body;
  EXPECT_NE(body.find("[0.1,-2.0]"), std::string::npos) << body;
  json response = json::parse(body);
  EXPECT_EQ(response["model_name"], "m");
  EXPECT_EQ(response["id"], "r7");
  ASSERT_EQ(response["outputs"].size(), 2u);
  EXPECT_EQ(response["outputs"][0]["name"], "out1");
  EXPECT_EQ(response["outputs"][0]["datatype"], "INT64");
  EXPECT_EQ(response["outputs"][0]["data"], json({int64_t{1} << 40, -5}));
  EXPECT_EQ(response["outputs"][1]["shape"], json({1, 2}));
  EXPECT_EQ(response["outputs"][1]["data"][0].get<float>(), 0.1f);
}

// Triton's binary data extension: the JSON, then the inputs' bytes.
std::string BinaryBody(json header, const std::string& bytes, size_t& json_length) {
  std::string text = header.dump();
  json_length = text.size();
  return text + bytes;
}

json BinaryHeader() {
  json header = ValidBody();
  header["inputs"][0].erase("data");
  header["inputs"][0]["parameters"] = {{"binary_data_size", 16}};
  header["inputs"][1].erase("data");
  header["inputs"][1]["parameters"] = {{"binary_data_size", 2}};
  return header;
}

std::string BinaryBytes() {
  float x[4] = {1.5f, -2, 0.25f, 8};
  std::string bytes(reinterpret_cast<const char*>(x), sizeof x);
  return bytes + std::string("\x00\x07", 2);  // flags: false, true (any nonzero byte)
}

TEST(InferenceProtocol, TakesInputsAsBinaryData) {
  size_t json_length = 0;
  std::string body = BinaryBody(BinaryHeader(), BinaryBytes(), json_length);
  InferenceRequest request = ParseInferenceRequest(body, TwoInputSignature(), json_length);
  const Tensor& x = *request.inputs[0];
  EXPECT_EQ(x.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<float>(x.data<float>(), x.data<float>() + 4),
            (std::vector<float>{1.5f, -2, 0.25f, 8}));
  EXPECT_EQ(static_cast<const uint8_t*>(request.inputs[1]->host_data())[0], 0);
  EXPECT_EQ(static_cast<const uint8_t*>(request.inputs[1]->host_data())[1], 1);
  EXPECT_EQ(*request.inputs[2]->data<int8_t>(), -7);
  EXPECT_EQ(request.binary_outputs, (std::vector<bool>{false, false}));
}

TEST(InferenceProtocol, RefusesBinaryDataThatDoesNotAddUp) {
  auto refusal = [](const std::string& body, std::optional<size_t> json_length) -> std::string {
    try {
      ParseInferenceRequest(body, TwoInputSignature(), json_length);
    } catch (const RequestError& error) {
      EXPECT_EQ(error.status(), 400);
      return error.what();
    }
    return "accepted";
  };
  size_t length = 0;
  std::string body = BinaryBody(BinaryHeader(), BinaryBytes(), length);
  EXPECT_NE(refusal(BinaryHeader().dump(), std::nullopt).find("no Inference-Header-Content-Length"),
            std::string::npos);
  EXPECT_NE(refusal(body, std::nullopt).find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal(body, body.size() + 1).find("beyond the body's"), std::string::npos);
  EXPECT_NE(refusal(body.substr(0, body.size() - 1), length).find("left in the body"),
            std::string::npos);
  EXPECT_NE(refusal(body + "x", length).find("1 bytes of binary data follow"), std::string::npos);
  auto refusal_of = [&](const json& header) {
    size_t header_length = 0;
    std::string with_bytes = BinaryBody(header, BinaryBytes(), header_length);
    return refusal(with_bytes, header_length);
  };
  json header = BinaryHeader();
  header["inputs"][0]["parameters"]["binary_data_size"] = 12;
  EXPECT_NE(refusal_of(header).find("holds 4 elements of 4 bytes, \"binary_data_size\" is 12"),
            std::string::npos);
  header = BinaryHeader();
  header["inputs"][0]["data"] = {1, 2, 3, 4};
  EXPECT_NE(refusal_of(header).find("both"), std::string::npos);
  header = BinaryHeader();
  header["inputs"][0]["parameters"]["binary_data_size"] = -4;
  EXPECT_NE(refusal_of(header).find("byte count"), std::string::npos);
}

TEST(InferenceProtocol, AnswersOutputsAsBinaryDataWhenAsked) {
  json body = ValidBody();
  body["outputs"] = {{{"name", "out1"}, {"parameters", {{"binary_data", true}}}},
                     {{"name", "out0"}}};
  InferenceRequest request = ParseInferenceRequest(body.dump(), TwoInputSignature());
  EXPECT_EQ(request.binary_outputs, (std::vector<bool>{true, false}));
  Ref<Tensor> first = Tensor::Empty(HostDevice(), {1, 2}, DType::kFloat32);
  first->data<float>()[0] = 0.5f;
  first->data<float>()[1] = 1.0f;
  Ref<Tensor> second = Tensor::Empty(HostDevice(), {2}, DType::kInt64);
  second->data<int64_t>()[0] = 3;
  second->data<int64_t>()[1] = -4;
  EncodedResponse encoded = EncodeInferenceResponse(TwoInputSignature(), request, {first, second});
  ASSERT_TRUE(encoded.json_length);
  json head = json::parse(encoded.body.substr(0, *encoded.json_length));
  EXPECT_EQ(head["outputs"][0]["parameters"]["binary_data_size"], 16);
  EXPECT_FALSE(head["outputs"][0].contains("data"));
  EXPECT_EQ(head["outputs"][1]["data"], json({0.5, 1.0}));
  ASSERT_EQ(encoded.body.size(), *encoded.json_length + 16);
  int64_t values[2];
  std::memcpy(values, encoded.body.data() + *encoded.json_length, sizeof values);
  EXPECT_EQ(values[0], 3);
  EXPECT_EQ(values[1], -4);

  body.erase("outputs");
  body["parameters"] = {{"binary_data_output", true}};
  request = ParseInferenceRequest(body.dump(), TwoInputSignature());
  EXPECT_EQ(request.binary_outputs, (std::vector<bool>{true, true}));
  EXPECT_FALSE(EncodeInferenceResponse(
                   TwoInputSignature(),
                   ParseInferenceRequest(ValidBody().dump(), TwoInputSignature()), {first, second})
                   .json_length);
}

TEST(InferenceProtocol, DescribesTheModel) {
  json metadata = json::parse(EncodeModelMetadata(TwoInputSignature()));
  EXPECT_EQ(metadata["name"], "m");
  EXPECT_EQ(metadata["inputs"][0], json({{"name", "x"}, {"datatype", "FP32"}, {"shape", {-1, 2}}}));
  EXPECT_EQ(metadata["inputs"][1]["datatype"], "BOOL");
  EXPECT_EQ(metadata["outputs"][1]["datatype"], "INT64");
  EXPECT_EQ(json::parse(EncodeError("bad \"x\""))["error"], "bad \"x\"");
}

TEST(InferenceProtocol, NamesEveryDtype) {
  for (std::string_view name : {"BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16",
                                "UINT32", "UINT64", "FP16", "FP32", "FP64"}) {
    std::optional<DType> dtype = ParseProtocolDatatype(name);
    ASSERT_TRUE(dtype) << name;
    EXPECT_EQ(ProtocolDatatype(*dtype), name);
  }
  EXPECT_FALSE(ParseProtocolDatatype("BYTES"));
}

Ref<Tensor> Rows(std::vector<float> values, int64_t columns) {
  Ref<Tensor> tensor = Tensor::Empty(
      HostDevice(), {static_cast<int64_t>(values.size()) / columns, columns}, DType::kFloat32);
  std::copy(values.begin(), values.end(), tensor->data<float>());
  return tensor;
}

TEST(RequestBatching, ConcatenatesAndSplitsByRows) {
  Tensors first = {Rows({1, 2}, 2)};
  Tensors second = {Rows({3, 4, 5, 6}, 2)};
  EXPECT_EQ(LeadingRows(second), 2);
  EXPECT_TRUE(SameTrailingShapes(first, second));
  EXPECT_FALSE(SameTrailingShapes(first, {Rows({1, 2, 3}, 3)}));
  Tensors batched = ConcatenateRows({&first, &second});
  ASSERT_EQ(batched.size(), 1u);
  EXPECT_EQ(batched[0]->shape(), (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(batched[0]->data<float>(), batched[0]->data<float>() + 6),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::optional<std::vector<Tensors>> split = SplitRows(batched, {1, 2});
  ASSERT_TRUE(split);
  EXPECT_EQ((*split)[1][0]->shape(), (Shape{2, 2}));
  EXPECT_EQ((*split)[1][0]->data<float>()[0], 3.0f);
  EXPECT_EQ((*split)[0][0]->data<float>()[1], 2.0f);
  // An output whose rows are not the requests' total cannot be split.
  EXPECT_FALSE(SplitRows({Rows({1, 2, 3, 4}, 2)}, {1, 2}));
  EXPECT_FALSE(LeadingRows({Rows({1, 2}, 2), Rows({1, 2, 3, 4}, 2)}));
}

}  // namespace
}  // namespace relay::serve
