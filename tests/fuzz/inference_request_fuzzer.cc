// libFuzzer target over the inference protocol's request parser
// (serve/inference_protocol.h), the part of `relay-vm serve` that reads
// what any client sends.
//
// Any body may be refused, but only with a RequestError of a 4xx status: a
// crash, a hang, a sanitizer report or another exception is a bug. An
// accepted request must hold one tensor per input, of its dtype and of a
// shape that fits, and its answer must encode.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "relay/devices.h"
#include "serve/inference_protocol.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "inference_request_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// A model with an input of every kind the parser distinguishes: a leading
// `?`, a fixed extent, a scalar, bools, small integers and halves.
const relay::serve::ModelSignature& Signature() {
  static const relay::serve::ModelSignature signature = [] {
    relay::serve::ModelSignature model;
    model.name = "m";
    model.inputs = {{"x", relay::DType::kFloat32, {-1, 3}},
                    {"mask", relay::DType::kBool, {2}},
                    {"ids", relay::DType::kInt8, {}},
                    {"h", relay::DType::kFloat16, {-1}},
                    {"n", relay::DType::kUInt8, {-1, -1}}};
    model.outputs = {{"out0", relay::DType::kFloat32, {-1, 3}}, {"out1", relay::DType::kInt64, {}}};
    return model;
  }();
  return signature;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const relay::serve::ModelSignature& signature = Signature();
  std::string_view body(reinterpret_cast<const char*>(data), size);
  // A body starting "B" and two bytes is a binary-data request whose JSON
  // is as long as those bytes say (the Inference-Header-Content-Length).
  std::optional<size_t> json_length;
  if (size >= 3 && data[0] == 'B') {
    json_length = data[1] | (size_t{data[2]} << 8);
    body.remove_prefix(3);
  }
  relay::serve::InferenceRequest request;
  try {
    request = relay::serve::ParseInferenceRequest(body, signature, json_length);
  } catch (const relay::serve::RequestError& error) {
    if (error.status() < 400 || error.status() >= 500)
      Fail("a refusal's status is no 4xx", error.what());
    if (std::string(error.what()).empty()) Fail("a refusal without a message", std::string(body));
    return 0;
  } catch (const std::exception& error) {
    Fail("an exception other than RequestError", error.what());
  }
  if (request.inputs.size() != signature.inputs.size()) Fail("inputs missing", std::string(body));
  for (size_t index = 0; index < request.inputs.size(); ++index) {
    const relay::Tensor& tensor = *request.inputs[index];
    const relay::serve::TensorSpec& spec = signature.inputs[index];
    if (tensor.dtype() != spec.dtype || tensor.shape().size() != spec.shape.size())
      Fail("an input of the wrong dtype or rank", std::string(body));
    for (size_t axis = 0; axis < spec.shape.size(); ++axis) {
      if (spec.shape[axis] != -1 && tensor.shape()[axis] != spec.shape[axis])
        Fail("an input of the wrong shape", std::string(body));
    }
  }
  for (size_t output : request.outputs) {
    if (output >= signature.outputs.size()) Fail("an output out of range", std::string(body));
  }
  if (request.binary_outputs.size() != request.outputs.size())
    Fail("binary_outputs does not match outputs", std::string(body));
  // Answer with outputs of the signature's kinds.
  relay::Ref<relay::Tensor> first =
      relay::Tensor::Empty(relay::HostDevice(), {1, 3}, relay::DType::kFloat32);
  relay::Ref<relay::Tensor> second =
      relay::Tensor::Empty(relay::HostDevice(), {}, relay::DType::kInt64);
  for (int index = 0; index < 3; ++index) first->data<float>()[index] = 0.5f * index;
  *second->data<int64_t>() = -1;
  relay::serve::EncodeInferenceResponse(signature, request, {first, second});
  return 0;
}
