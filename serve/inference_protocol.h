// The JSON bodies of the Open Inference Protocol (KServe v2) REST API:
// an infer request's inputs become relay tensors checked against the
// model's signature, results become the response body, and a model's
// signature its metadata. Requests are parsed by simdjson (a request is
// mostly numbers, which it reads several times faster than nlohmann::json
// does: bench/serve/ measures it), answers written by nlohmann::json.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "relay/tensor.h"
#include "serve/model_signature.h"

namespace relay::serve {

// A request the client got wrong: answered with `status` (4xx) and the body
// {"error": what()}.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct InferenceRequest {
  std::optional<std::string> id;    // echoed in the response
  std::vector<Ref<Tensor>> inputs;  // one per signature input, in its order
  // The outputs to answer with, as indices into the signature's outputs, in
  // the order the request names them; all of them when it names none.
  std::vector<size_t> outputs;
  // For each of `outputs`: whether to answer with its bytes rather than
  // JSON numbers (the binary data extension).
  std::vector<bool> binary_outputs;
};

// Parses an infer request's body ({"inputs": [{"name", "shape", "datatype",
// "data"}], optionally "id" and "outputs": [{"name"}]}). `data` is the
// tensor's elements in row-major order, flat or nested.
//
// Triton's binary tensor data extension, which its clients use by default:
// given `json_length` (the Inference-Header-Content-Length header), the JSON
// is the body's first `json_length` bytes, and an input with "parameters":
// {"binary_data_size": N} and no "data" takes the next N bytes after it (in
// the inputs' order), its elements little-endian and row-major (BOOL one
// byte each). An output requested with "parameters": {"binary_data": true},
// or every output under a request's "parameters": {"binary_data_output":
// true}, is answered in bytes the same way.
//
// `readable_after` is how many bytes after the body's end may be read
// (never written): with at least simdjson's padding (64), the JSON is
// parsed where it lies rather than copied first. Memory: the parser's
// buffers take about 14 bytes per JSON byte while it parses (its tape of
// 8 bytes and structural index of 4 per byte, and a string buffer); a
// thread keeps them for bodies up to kKeptParserBytes, and a larger body's
// are released when it is parsed.
//
// Throws RequestError (400) for malformed JSON, an unknown, missing or
// repeated input, a wrong datatype, shape or data length, an element that
// does not fit, or binary data that does not add up.
InferenceRequest ParseInferenceRequest(std::string_view body, const ModelSignature& signature,
                                       std::optional<size_t> json_length = std::nullopt,
                                       size_t readable_after = 0);

// The largest JSON whose parser buffers a thread keeps for the next request.
inline constexpr size_t kKeptParserBytes = size_t{1} << 20;

struct EncodedResponse {
  std::string body;
  // When an output is in bytes: the length of the JSON at the body's front,
  // for the Inference-Header-Content-Length header.
  std::optional<size_t> json_length;
};

// The response to `request`, whose model computed `outputs` (one per
// signature output, in its order).
EncodedResponse EncodeInferenceResponse(const ModelSignature& signature,
                                        const InferenceRequest& request,
                                        const std::vector<Ref<Tensor>>& outputs);

// GET /v2/models/NAME: {"name", "versions", "platform", "inputs", "outputs"}.
std::string EncodeModelMetadata(const ModelSignature& signature);

// GET /v2/models/NAME/ready: {"name", "ready": true}.
std::string EncodeModelReady(const ModelSignature& signature);

// {"error": message}
std::string EncodeError(std::string_view message);

}  // namespace relay::serve
