#include "serve/model_server.h"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "relay/error.h"
#include "relay/version.h"
#include "serve/inference_protocol.h"

namespace relay::serve {

namespace {

constexpr const char* kJson = "application/json";

// Bodies up to this size are parsed on the HTTP loop that read them (a
// millisecond or two at most); larger ones on a parsing thread, so that a
// big body does not hold up the loop's other connections.
constexpr size_t kLargestBodyParsedOnLoop = size_t{1} << 20;

using Clock = std::chrono::steady_clock;

HttpResponse Json(int status, std::string body) {
  return HttpResponse{status, kJson, std::move(body), {}};
}

HttpResponse ErrorResponse(int status, const std::string& message) {
  HttpResponse response = Json(status, EncodeError(message));
  if (status == 503) response.headers.emplace_back("Retry-After", "1");
  return response;
}

size_t DefaultHttpThreads() {
  return std::max<size_t>(1, std::thread::hardware_concurrency() / 4);
}

// The parts of a /v2/models/... path: NAME, an optional version, and what
// follows ("" for the metadata, "ready", "infer").
struct ModelPath {
  std::string name;
  std::optional<std::string> version;
  std::string action;
};

std::optional<ModelPath> ParseModelPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/v2/models/";
  if (!path.starts_with(kPrefix)) return std::nullopt;
  path.remove_prefix(kPrefix.size());
  std::vector<std::string_view> parts;
  while (true) {
    size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  if (std::any_of(parts.begin(), parts.end(), [](std::string_view part) { return part.empty(); }))
    return std::nullopt;
  ModelPath model{std::string(parts[0]), std::nullopt, ""};
  size_t next = 1;
  if (parts.size() >= 3 && parts[1] == "versions") {
    model.version = std::string(parts[2]);
    next = 3;
  }
  if (parts.size() == next + 1 && (parts[next] == "ready" || parts[next] == "infer")) {
    model.action = std::string(parts[next]);
  } else if (parts.size() != next) {
    return std::nullopt;
  }
  return model;
}

}  // namespace

// An inference request between its arrival and its answer.
struct ModelServer::PendingInference {
  explicit PendingInference(HttpResponder responder) : responder(std::move(responder)) {}
  HttpResponder responder;
  Clock::time_point arrived = Clock::now();
  InferenceRequest request;  // its inputs handed to the workers
};

ModelServer::ModelServer(const Executable& executable, const ServerOptions& options)
    : options_(options),
      signature_(DescribeModel(executable, options.model_name)),
      http_(std::make_unique<HttpServer>(
          options.http, options.http_threads == 0 ? DefaultHttpThreads() : options.http_threads,
          [this](HttpRequest request, HttpResponder responder) {
            Handle(std::move(request), std::move(responder));
          },
          ErrorResponse,
          // Without batching, an answer comes back in about a model run;
          // with it, a batch's timeout later, too long to spin for.
          options.workers.max_batch > 0 ? 0 : options.workers.workers)),
      parsers_(std::make_unique<boost::asio::thread_pool>(
          options.http_threads == 0 ? DefaultHttpThreads() : options.http_threads)),
      workers_(executable, options.workers, metrics_) {
  if (options.workers.max_batch > 0 && !signature_.batchable) {
    throw Error(ErrorKind::kUsage,
                "--max-batch: model '" + signature_.name +
                    "' cannot be batched: every input and output needs a leading ? dimension "
                    "to concatenate requests along");
  }
}

ModelServer::~ModelServer() {
  // Parsing threads hand requests to the workers: they stop first, then
  // the workers finish every run, answering on connections that the HTTP
  // server (destroyed last) still holds.
  parsers_->join();
  workers_.Shutdown();
}

void ModelServer::Handle(HttpRequest request, HttpResponder responder) {
  const std::string& path = request.path;
  if (request.method == "GET") {
    if (path == "/v2/health/live") return responder.Send(Json(200, R"({"live":true})"));
    if (path == "/v2/health/ready") return responder.Send(Json(200, R"({"ready":true})"));
    if (path == "/v2") {
      return responder.Send(Json(
          200, R"({"name":"relay-vm","version":")" RELAY_VERSION_STRING R"(","extensions":[]})"));
    }
    if (path == "/metrics") {
      return responder.Send(HttpResponse{200,
                                         "text/plain; version=0.0.4",
                                         metrics_.Render(signature_.name, workers_.queue_length(),
                                                         in_flight_.load(), http_->stats()),
                                         {}});
    }
  }
  std::optional<ModelPath> model = ParseModelPath(path);
  const bool known_endpoint =
      model && (request.method == "GET" ? model->action != "infer"
                                        : request.method == "POST" && model->action == "infer");
  if (!known_endpoint)
    return responder.Send(ErrorResponse(404, "no endpoint " + request.method + " " + path));
  if (model->name != signature_.name) {
    return responder.Send(ErrorResponse(
        404, "unknown model '" + model->name + "' (this server serves '" + signature_.name + "')"));
  }
  if (model->version && *model->version != "1") {
    return responder.Send(ErrorResponse(
        404, "model '" + model->name + "' has no version '" + *model->version + "' (only '1')"));
  }
  if (model->action == "") return responder.Send(Json(200, EncodeModelMetadata(signature_)));
  if (model->action == "ready") return responder.Send(Json(200, EncodeModelReady(signature_)));
  Infer(std::move(request), std::move(responder));
}

void ModelServer::Infer(HttpRequest request, HttpResponder responder) {
  in_flight_.fetch_add(1);
  auto pending = std::make_shared<PendingInference>(std::move(responder));
  if (request.body.size() <= kLargestBodyParsedOnLoop) {
    ParseAndSubmit(std::move(pending), std::move(request));
    return;
  }
  boost::asio::post(*parsers_,
                    [this, pending = std::move(pending), request = std::move(request)]() mutable {
                      ParseAndSubmit(std::move(pending), std::move(request));
                    });
}

void ModelServer::ParseAndSubmit(std::shared_ptr<PendingInference> pending, HttpRequest request) {
  try {
    const std::string* content_type = request.Header("Content-Type");
    if (content_type != nullptr && content_type->starts_with("multipart/form-data"))
      throw RequestError(400, "an inference request is a JSON body, not multipart form data");
    std::optional<size_t> json_length;
    if (const std::string* text = request.Header("Inference-Header-Content-Length")) {
      size_t length = 0;
      auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), length);
      if (error != std::errc() || end != text->data() + text->size())
        throw RequestError(
            400, "Inference-Header-Content-Length must be a byte count, got '" + *text + "'");
      json_length = length;
    }
    pending->request = ParseInferenceRequest(request.body, signature_, json_length,
                                             request.body.capacity() - request.body.size());
    // The body's memory goes before the run.
    request = HttpRequest();
    Tensors inputs = std::move(pending->request.inputs);
    workers_.Submit(std::move(inputs), [this, pending](Tensors outputs, std::exception_ptr error) {
      try {
        if (error) std::rethrow_exception(error);
        EncodedResponse encoded = EncodeInferenceResponse(signature_, pending->request, outputs);
        outputs.clear();
        if (!encoded.json_length) return Finish(*pending, Json(200, std::move(encoded.body)));
        Finish(*pending, HttpResponse{200,
                                      "application/octet-stream",
                                      std::move(encoded.body),
                                      {{"Inference-Header-Content-Length",
                                        std::to_string(*encoded.json_length)}}});
      } catch (const Error& failure) {
        // The inputs were checked against the signature, so a usage error
        // here is still the request's; anything else is the model's.
        Finish(*pending,
               ErrorResponse(failure.kind() == ErrorKind::kUsage ? 400 : 500, failure.message()));
      } catch (const std::exception& failure) {
        Finish(*pending, ErrorResponse(500, std::string("internal error: ") + failure.what()));
      }
    });
  } catch (const RequestError& error) {
    Finish(*pending, ErrorResponse(error.status(), error.what()));
  } catch (const Error& error) {
    // Submit refuses once the server is shutting down.
    Finish(*pending, ErrorResponse(error.kind() == ErrorKind::kUsage ? 503 : 500, error.message()));
  } catch (const std::exception& error) {
    Finish(*pending, ErrorResponse(500, std::string("internal error: ") + error.what()));
  }
}

void ModelServer::Finish(PendingInference& pending, HttpResponse response) {
  metrics_.RecordRequest(response.status,
                         std::chrono::duration<double>(Clock::now() - pending.arrived).count());
  in_flight_.fetch_sub(1);
  pending.responder.Send(std::move(response));
}

int ModelServer::Bind() {
  return http_->Bind(options_.host, options_.port);
}

size_t ModelServer::Serve() {
  http_->Start();
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop_requested_; });
  }
  Clock::time_point deadline = Clock::now() + options_.shutdown_timeout;
  http_->BeginShutdown();
  http_->FinishShutdown(deadline);
  size_t unanswered = in_flight_.load();
  if (unanswered == 0) {
    parsers_->join();
    workers_.Shutdown();
  }
  return unanswered;
}

void ModelServer::Stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  changed_.notify_all();
}

}  // namespace relay::serve
