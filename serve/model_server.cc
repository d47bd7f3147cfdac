#include "serve/model_server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "relay/error.h"
#include "relay/version.h"
#include "serve/inference_protocol.h"

namespace relay::serve {

namespace {

constexpr const char* kJson = "application/json";

// How much of a body past --max-body-bytes is read and dropped at least
// before the 413 goes out (see the infer handler).
constexpr size_t kMostDiscardedBytes = size_t{1} << 20;

using Clock = std::chrono::steady_clock;

}  // namespace

// httplib::Server with a deeper listen backlog: Debian's libcpp-httplib is
// built with a backlog of 5 connections, and a burst of clients connecting
// at once overflows it (Linux then drops their handshakes, and clients see
// connections fail).
class ModelServer::HttpServer : public httplib::Server {
 public:
  void DeepenBacklog() {
    // Linux lets listen() on a listening socket change its backlog.
    ::listen(svr_sock_, SOMAXCONN);
  }
};

namespace {

// The body's length as its Content-Length header says (0 without one).
uint64_t DeclaredLength(const httplib::Request& request) {
  return std::strtoull(request.get_header_value("Content-Length").c_str(), nullptr, 10);
}

void Answer(httplib::Response& response, int status, const std::string& body) {
  response.status = status;
  response.set_content(body, kJson);
}

}  // namespace

ModelServer::ModelServer(const Executable& executable, const ServerOptions& options)
    : options_(options),
      signature_(DescribeModel(executable, options.model_name)),
      workers_(executable, options.workers, metrics_),
      http_(std::make_unique<HttpServer>()) {
  if (options.workers.max_batch > 0 && !signature_.batchable) {
    throw Error(ErrorKind::kUsage,
                "--max-batch: model '" + signature_.name +
                    "' cannot be batched: every input and output needs a leading ? dimension "
                    "to concatenate requests along");
  }
  size_t threads = options.connection_threads;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options.max_body_bytes);
  http_->set_keep_alive_max_count(size_t{1} << 30);
  http_->set_keep_alive_timeout(2);
  http_->set_tcp_nodelay(true);
  AddRoutes();
}

ModelServer::~ModelServer() = default;

std::string ModelServer::BodyTooLarge() const {
  return "the request body is over " + std::to_string(options_.max_body_bytes) +
         " bytes (--max-body-bytes)";
}

void ModelServer::AddRoutes() {
  // Any 4xx or 5xx that a handler did not answer itself (no route, a body
  // over the limit, a malformed HTTP request) gets a JSON error too.
  http_->set_error_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    std::string message;
    if (response.status == 404) {
      message = "no endpoint " + request.method + " " + request.path;
    } else if (response.status == 413) {
      message = BodyTooLarge();
    } else {
      message = "HTTP status " + std::to_string(response.status);
    }
    response.set_content(EncodeError(message), kJson);
  });
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        std::string message = "internal error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& exception) {
          message += std::string(": ") + exception.what();
        } catch (...) {
        }
        Answer(response, 500, EncodeError(message));
      });

  http_->Get("/v2/health/live", [](const httplib::Request&, httplib::Response& response) {
    Answer(response, 200, R"({"live":true})");
  });
  http_->Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& response) {
    Answer(response, 200, R"({"ready":true})");
  });
  http_->Get("/v2", [](const httplib::Request&, httplib::Response& response) {
    Answer(response, 200,
           R"({"name":"relay-vm","version":")" RELAY_VERSION_STRING R"(","extensions":[]})");
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(
        metrics_.Render(signature_.name, workers_.queue_length(), in_flight_.load()),
        "text/plain; version=0.0.4");
  });

  // The model's own endpoints: NAME must be the served model's, and a
  // version, if given, its only one ("1").
  auto known_model = [this](const httplib::Request& request, httplib::Response& response) {
    const std::string name = request.matches[1];
    const std::string version = request.matches[2];
    if (name != signature_.name) {
      Answer(response, 404,
             EncodeError("unknown model '" + name + "' (this server serves '" + signature_.name +
                         "')"));
      return false;
    }
    if (request.matches[2].matched && version != "1") {
      Answer(response, 404,
             EncodeError("model '" + name + "' has no version '" + version + "' (only '1')"));
      return false;
    }
    return true;
  };
  const std::string model_path = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  http_->Get(model_path,
             [this, known_model](const httplib::Request& request, httplib::Response& response) {
               if (known_model(request, response))
                 Answer(response, 200, EncodeModelMetadata(signature_));
             });
  http_->Get(model_path + "/ready",
             [this, known_model](const httplib::Request& request, httplib::Response& response) {
               if (known_model(request, response))
                 Answer(response, 200, EncodeModelReady(signature_));
             });
  // The body is read here rather than by httplib, which would parse a body
  // sent as application/x-www-form-urlencoded (curl -d's default) as a form
  // and refuse one over 8 KiB.
  http_->Post(model_path + "/infer", [this, known_model](const httplib::Request& request,
                                                         httplib::Response& response,
                                                         const httplib::ContentReader& reader) {
    Clock::time_point start = Clock::now();
    in_flight_.fetch_add(1);
    if (known_model(request, response)) {
      try {
        if (request.is_multipart_form_data())
          throw RequestError(400, "an inference request is a JSON body, not multipart form data");
        std::string body;
        bool over_limit = false;
        size_t discarded = 0;
        bool read = reader([&](const char* data, size_t length) {
          over_limit = over_limit || body.size() + length > options_.max_body_bytes;
          if (!over_limit) {
            body.append(data, length);
            return true;
          }
          // Past the limit the rest is read and dropped (up to as much
          // again, and at least 1 MiB), so that the client, still sending,
          // gets the 413 rather than a connection reset by unread bytes.
          discarded += length;
          return discarded <= std::max(options_.max_body_bytes, kMostDiscardedBytes);
        });
        // httplib's reader also stops at the limit (set_payload_max_length),
        // with an empty body.
        if (over_limit || DeclaredLength(request) > options_.max_body_bytes)
          throw RequestError(413, BodyTooLarge());
        if (!read) throw RequestError(400, "the request body could not be read");
        std::optional<size_t> json_length;
        if (request.has_header("Inference-Header-Content-Length")) {
          const std::string text = request.get_header_value("Inference-Header-Content-Length");
          size_t length = 0;
          auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), length);
          if (error != std::errc() || end != text.data() + text.size())
            throw RequestError(
                400, "Inference-Header-Content-Length must be a byte count, got '" + text + "'");
          json_length = length;
        }
        InferenceRequest inference = ParseInferenceRequest(body, signature_, json_length);
        Tensors outputs = workers_.Run(std::move(inference.inputs));
        EncodedResponse encoded = EncodeInferenceResponse(signature_, inference, outputs);
        if (encoded.json_length) {
          response.status = 200;
          response.set_header("Inference-Header-Content-Length",
                              std::to_string(*encoded.json_length));
          response.set_content(std::move(encoded.body), "application/octet-stream");
        } else {
          Answer(response, 200, encoded.body);
        }
      } catch (const RequestError& error) {
        Answer(response, error.status(), EncodeError(error.what()));
      } catch (const Error& error) {
        // The inputs were checked against the signature, so a usage error
        // here is still the request's; anything else is the model's.
        Answer(response, error.kind() == ErrorKind::kUsage ? 400 : 500,
               EncodeError(error.message()));
      } catch (const std::exception& error) {
        Answer(response, 500, EncodeError(std::string("internal error: ") + error.what()));
      }
    }
    metrics_.RecordRequest(response.status,
                           std::chrono::duration<double>(Clock::now() - start).count());
    in_flight_.fetch_sub(1);
  });
}

int ModelServer::Bind() {
  int port = options_.port == 0
                 ? http_->bind_to_any_port(options_.host)
                 : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port < 0) {
    throw Error(ErrorKind::kUsage, "cannot listen on " + options_.host + ":" +
                                       std::to_string(options_.port) +
                                       " (address in use, or not this machine's?)");
  }
  http_->DeepenBacklog();
  return port;
}

void ModelServer::Serve() {
  bool listening = true;
  std::thread listener([&] {
    http_->listen_after_bind();
    std::lock_guard lock(mutex_);
    listening = false;
    changed_.notify_all();
  });
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stop_requested_ || !listening; });
  // httplib's stop() has no effect before its loop has started, so it is
  // repeated until the loop has ended (it joins its HTTP threads first,
  // which answers every request they hold).
  while (listening) {
    lock.unlock();
    http_->stop();
    lock.lock();
    changed_.wait_for(lock, std::chrono::milliseconds(10), [&] { return !listening; });
  }
  lock.unlock();
  listener.join();
  workers_.Shutdown();
}

void ModelServer::Stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  changed_.notify_all();
}

}  // namespace relay::serve
