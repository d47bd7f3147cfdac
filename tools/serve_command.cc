// relay-vm serve MODEL [--params P.npz] [--byoc LIST] [--name NAME] [--host HOST] [--port PORT]
//   [--workers N] [--max-batch ROWS [--batch-timeout-us T]] [--max-body-bytes B]
//   [--max-connections N] [--max-inflight-bytes B] [--http-threads N]
//   [--header-timeout S] [--body-timeout S] [--idle-timeout S] [--write-timeout S]
//   [--shutdown-timeout S]
//
// Serves the program's @main over the Open Inference Protocol's REST API
// (serve/model_server.h) until SIGTERM or SIGINT, then stops accepting,
// answers every request already received, and exits 0; if requests are
// still running after --shutdown-timeout, it says how many and exits 1.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>

#include "relay/error.h"
#include "relay/runtime.h"
#include "serve/model_server.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

struct ServeCommandOptions {
  std::string path;
  std::string params;
  std::string byoc;  // external codegens (docs/byoc.md)
  std::string name;
  serve::ServerOptions server;
};

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm serve: " + message);
}

// A duration in seconds, decimals allowed ("0.5"), from `low` to `high`.
std::chrono::milliseconds ParseSeconds(std::string_view option, const std::string& text, double low,
                                       double high) {
  double seconds = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (error != std::errc() || end != text.data() + text.size() || !(seconds >= low) ||
      !(seconds <= high)) {
    std::ostringstream range;
    range << low << " to " << high;
    UsageError(std::string(option) + " takes seconds from " + range.str() + ", got '" + text + "'");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 + 0.5));
}

int64_t ParseCount(std::string_view option, const std::string& text, int64_t low, int64_t high) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    UsageError(std::string(option) + " takes a whole number from " + std::to_string(low) + " to " +
               std::to_string(high) + ", got '" + text + "'");
  }
  return value;
}

// Model names go into URL paths and metric labels: keep them plain.
bool IsModelName(const std::string& name) {
  return !name.empty() && name.size() <= 128 &&
         std::all_of(name.begin(), name.end(), [](char character) {
           return std::isalnum(static_cast<unsigned char>(character)) || character == '_' ||
                  character == '-' || character == '.';
         });
}

ServeCommandOptions ParseOptions(std::span<const std::string_view> arguments) {
  ServeCommandOptions options;
  bool timeout_given = false;
  bool inflight_given = false;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= arguments.size()) UsageError(std::string(argument) + " needs a value");
      return std::string(arguments[++index]);
    };
    if (argument == "--params") {
      options.params = value();
    } else if (argument == "--byoc") {
      options.byoc = value();
    } else if (argument == "--name") {
      options.name = value();
      if (!IsModelName(options.name))
        UsageError("--name takes letters, digits, '_', '-' and '.', got '" + options.name + "'");
    } else if (argument == "--host") {
      options.server.host = value();
    } else if (argument == "--port") {
      options.server.port = static_cast<int>(ParseCount(argument, value(), 0, 65535));
    } else if (argument == "--workers") {
      options.server.workers.workers = static_cast<size_t>(ParseCount(argument, value(), 1, 256));
    } else if (argument == "--max-batch") {
      options.server.workers.max_batch = ParseCount(argument, value(), 1, 1 << 20);
    } else if (argument == "--batch-timeout-us") {
      options.server.workers.batch_timeout =
          std::chrono::microseconds(ParseCount(argument, value(), 0, 10'000'000));
      timeout_given = true;
    } else if (argument == "--max-body-bytes") {
      options.server.http.max_body_bytes =
          static_cast<size_t>(ParseCount(argument, value(), 1, int64_t{1} << 40));
    } else if (argument == "--max-inflight-bytes") {
      options.server.http.max_inflight_bytes =
          static_cast<size_t>(ParseCount(argument, value(), 1, int64_t{1} << 42));
      inflight_given = true;
    } else if (argument == "--max-connections" || argument == "--connections") {
      // (--connections: the name from when each connection had a thread.)
      options.server.http.max_connections =
          static_cast<size_t>(ParseCount(argument, value(), 1, 1'000'000));
    } else if (argument == "--http-threads") {
      options.server.http_threads = static_cast<size_t>(ParseCount(argument, value(), 1, 256));
    } else if (argument == "--header-timeout") {
      options.server.http.header_timeout = ParseSeconds(argument, value(), 0.001, 3600);
    } else if (argument == "--body-timeout") {
      options.server.http.body_timeout = ParseSeconds(argument, value(), 0.001, 86400);
    } else if (argument == "--idle-timeout") {
      options.server.http.idle_timeout = ParseSeconds(argument, value(), 0.001, 86400);
    } else if (argument == "--write-timeout") {
      options.server.http.write_timeout = ParseSeconds(argument, value(), 0.001, 86400);
    } else if (argument == "--shutdown-timeout") {
      options.server.shutdown_timeout = ParseSeconds(argument, value(), 0, 86400);
    } else if (argument.starts_with("-")) {
      UsageError("unknown option '" + std::string(argument) + "'");
    } else if (options.path.empty()) {
      options.path = std::string(argument);
    } else {
      UsageError("expected one model file, got '" + options.path + "' and '" +
                 std::string(argument) + "'");
    }
  }
  if (options.path.empty()) UsageError("expected a model file, e.g. 'relay-vm serve model.onnx'");
  serve::HttpLimits& http = options.server.http;
  if (!inflight_given) {
    // The default holds four bodies of the largest size taken.
    http.max_inflight_bytes = std::max(http.max_inflight_bytes, 4 * http.max_body_bytes);
  } else if (http.max_inflight_bytes < http.max_body_bytes) {
    UsageError("--max-inflight-bytes (" + std::to_string(http.max_inflight_bytes) +
               ") is below --max-body-bytes (" + std::to_string(http.max_body_bytes) +
               "): a body of the largest size taken could never be held");
  }
  if (timeout_given && options.server.workers.max_batch == 0)
    UsageError("--batch-timeout-us is for dynamic batching: give --max-batch too");
  if (options.name.empty()) {
    options.name = std::filesystem::path(options.path).stem().string();
    if (!IsModelName(options.name))
      UsageError("the file's name '" + options.name + "' is no model name: give --name");
  }
  options.server.model_name = options.name;
  return options;
}

}  // namespace

int RunServeCommand(std::span<const std::string_view> arguments, std::ostream& out,
                    std::ostream& err) {
  ServeCommandOptions options = ParseOptions(arguments);
  Executable executable = Executable::Load(
      options.path, {.params_path = options.params, .gradients = {}, .byoc = options.byoc});

  // SIGTERM and SIGINT are taken by one thread with sigwait, never by a
  // handler: every thread started from here on inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);  // the command's own "done" to the signal thread
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  serve::ModelServer server(executable, options.server);
  int port = server.Bind();
  const size_t workers = options.server.workers.workers;
  out << "relay-vm serve: model '" << options.name << "' on http://" << options.server.host << ":"
      << port << " (" << workers << (workers == 1 ? " worker" : " workers");
  if (options.server.workers.max_batch > 0) {
    out << ", batches of up to " << options.server.workers.max_batch << " rows within "
        << options.server.workers.batch_timeout.count() << " us";
  }
  out << ")" << std::endl;

  std::thread signal_thread([&] {
    int received = 0;
    sigwait(&signals, &received);
    if (received != SIGUSR1) {
      err << "relay-vm serve: " << (received == SIGINT ? "SIGINT" : "SIGTERM")
          << ": finishing the requests received, then stopping" << std::endl;
    }
    server.Stop();
  });
  size_t unanswered = server.Serve();
  pthread_kill(signal_thread.native_handle(), SIGUSR1);
  signal_thread.join();
  if (unanswered > 0) {
    // Their runs cannot be interrupted; the process ends without them, as
    // an orchestrator's SIGKILL would a moment later.
    err << "relay-vm serve: " << unanswered << (unanswered == 1 ? " request was" : " requests were")
        << " still running after --shutdown-timeout; exiting without answering them" << std::endl;
    out << std::flush;
    std::_Exit(1);
  }
  out << "relay-vm serve: stopped" << std::endl;
  return kExitSuccess;
}

}  // namespace relay::tools
