// The bounded load client of bench/serve/ (run.py drives it).
//
//   serve_load http --port P --model NAME (--body FILE.json | --health) --clients N --seconds S
//                   [--slow-clients M]
//   serve_load direct --program M.relay [--params P.npz] --body FILE.json --seconds S
//   serve_load protocol --program M.relay [--params P.npz] --body FILE.json --seconds S
//
// http: N threads, each with one keep-alive connection, post FILE.json to
// /v2/models/NAME/infer back to back for S seconds (after a warm-up of a
// tenth of that), and every answer must be 200. With --health instead of
// --body they GET /v2/health/live: the round trip of HTTP alone. With
// --json-length N, FILE is a binary-data request (N bytes of JSON, then the
// tensors' bytes) in every mode. direct: the same request's
// inputs run by relay::VirtualMachine::Invoke in a loop, the floor that the
// server's overhead is measured from. protocol: the request parsed into
// tensors and the answer encoded, in a loop (the JSON's share of the
// overhead). With --slow-clients M (http mode), M more connections are
// held open for the whole run, each sending a request's first line and
// then one header line a second, never finishing: the clients a
// thread-per-connection server stalls on. Each prints one JSON line:
// {"requests", "errors", "seconds", "throughput", "mean_us", "p50_us", "p90_us", "p99_us"}.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "relay/error.h"
#include "relay/runtime.h"
#include "serve/inference_protocol.h"
#include "serve/model_signature.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode;
  int port = 8000;
  std::string model = "model";
  std::string body_path;
  std::string program;
  std::string params;
  int clients = 1;
  int slow_clients = 0;
  double seconds = 5;
  bool health = false;  // GET /v2/health/live instead: HTTP's own round trip
  // The body is binary-data JSON of this length and tensors' bytes (sent
  // with Inference-Header-Content-Length).
  std::optional<size_t> json_length;
};

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "serve_load: " << message << "\n";
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options options;
  if (argc < 2) Fail("usage: serve_load http|direct ...");
  options.mode = argv[1];
  for (int index = 2; index < argc; ++index) {
    std::string argument = argv[index];
    if (argument == "--health") {
      options.health = true;
      continue;
    }
    if (index + 1 >= argc) Fail(argument + " needs a value");
    std::string value = argv[++index];
    if (argument == "--port") {
      options.port = std::stoi(value);
    } else if (argument == "--model") {
      options.model = value;
    } else if (argument == "--body") {
      options.body_path = value;
    } else if (argument == "--program") {
      options.program = value;
    } else if (argument == "--params") {
      options.params = value;
    } else if (argument == "--clients") {
      options.clients = std::stoi(value);
    } else if (argument == "--slow-clients") {
      options.slow_clients = std::stoi(value);
    } else if (argument == "--json-length") {
      options.json_length = std::stoul(value);
    } else if (argument == "--seconds") {
      options.seconds = std::stod(value);
    } else {
      Fail("unknown option " + argument);
    }
  }
  if (options.body_path.empty() && !options.health) Fail("give --body FILE.json");
  if (options.clients < 1 || options.clients > 1024) Fail("--clients takes 1 to 1024");
  if (options.slow_clients < 0 || options.slow_clients > 10000)
    Fail("--slow-clients takes 0 to 10000");
  return options;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) Fail("cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void Report(std::vector<double> latencies_us, uint64_t errors, double seconds) {
  std::sort(latencies_us.begin(), latencies_us.end());
  double sum = 0;
  for (double latency : latencies_us) sum += latency;
  auto percentile = [&](double fraction) {
    if (latencies_us.empty()) return 0.0;
    size_t index =
        std::min(latencies_us.size() - 1,
                 static_cast<size_t>(fraction * static_cast<double>(latencies_us.size())));
    return latencies_us[index];
  };
  nlohmann::json report = {
      {"requests", latencies_us.size()},
      {"errors", errors},
      {"seconds", seconds},
      {"throughput", static_cast<double>(latencies_us.size()) / seconds},
      {"mean_us", latencies_us.empty() ? 0.0 : sum / static_cast<double>(latencies_us.size())},
      {"p50_us", percentile(0.50)},
      {"p90_us", percentile(0.90)},
      {"p99_us", percentile(0.99)}};
  std::cout << report.dump() << std::endl;
}

// Connections that send a request's first line, then a header line per
// connection each second (spread over the second), and never finish, until
// destroyed.
class SlowClients {
 public:
  SlowClients(int port, int count) {
    for (int index = 0; index < count; ++index) {
      int connection = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<uint16_t>(port));
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(connection, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        Fail("a slow client could not connect");
      sockets_.push_back(connection);
      Send(connection, "POST /v2/models/slow/infer HTTP/1.1\r\n");
    }
    if (count > 0) thread_ = std::thread([this] { Trickle(); });
  }
  ~SlowClients() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (int connection : sockets_) ::close(connection);
  }

 private:
  static void Send(int connection, const std::string& text) {
    ::send(connection, text.data(), text.size(), MSG_NOSIGNAL);
  }
  void Trickle() {
    const auto gap = std::chrono::microseconds(1'000'000 / sockets_.size());
    for (size_t line = 0; !stop_.load(); ++line) {
      Send(sockets_[line % sockets_.size()], "X-Slow-" + std::to_string(line) + ": 1\r\n");
      std::this_thread::sleep_for(gap);
    }
  }

  std::vector<int> sockets_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

int RunHttp(const Options& options) {
  SlowClients slow_clients(options.port, options.slow_clients);
  const std::string body = options.health ? "" : ReadFile(options.body_path);
  const std::string path = "/v2/models/" + options.model + "/infer";
  httplib::Headers headers;
  if (options.json_length)
    headers.emplace("Inference-Header-Content-Length", std::to_string(*options.json_length));
  const auto warmup = std::chrono::duration<double>(options.seconds / 10);
  const auto measured = std::chrono::duration<double>(options.seconds);
  std::vector<std::vector<double>> latencies(options.clients);
  std::atomic<uint64_t> errors{0};
  Clock::time_point start = Clock::now();
  Clock::time_point measure_from = start + std::chrono::duration_cast<Clock::duration>(warmup);
  Clock::time_point end = measure_from + std::chrono::duration_cast<Clock::duration>(measured);
  std::vector<std::thread> threads;
  for (int client_index = 0; client_index < options.clients; ++client_index) {
    threads.emplace_back([&, client_index] {
      httplib::Client client("127.0.0.1", options.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
      while (true) {
        Clock::time_point sent = Clock::now();
        if (sent >= end) break;
        httplib::Result result = options.health ? client.Get("/v2/health/live")
                                 : options.json_length
                                     ? client.Post(path, headers, body, "application/octet-stream")
                                     : client.Post(path, body, "application/json");
        Clock::time_point answered = Clock::now();
        if (!result || result->status != 200) {
          if (errors.fetch_add(1) == 0) {
            std::cerr << "serve_load: "
                      << (result ? std::to_string(result->status) + " " + result->body
                                 : httplib::to_string(result.error()))
                      << "\n";
          }
          continue;
        }
        if (sent >= measure_from && answered <= end)
          latencies[client_index].push_back(
              std::chrono::duration<double, std::micro>(answered - sent).count());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<double> all;
  for (const std::vector<double>& each : latencies) all.insert(all.end(), each.begin(), each.end());
  Report(std::move(all), errors.load(), measured.count());
  return errors.load() == 0 ? 0 : 1;
}

int RunDirect(const Options& options) {
  relay::Executable executable = relay::Executable::Load(
      options.program, {.params_path = options.params, .gradients = {}, .byoc = {}});
  relay::serve::ModelSignature signature = relay::serve::DescribeModel(executable, options.model);
  relay::serve::InferenceRequest request = relay::serve::ParseInferenceRequest(
      ReadFile(options.body_path), signature, options.json_length);
  std::vector<relay::Value> arguments(request.inputs.begin(), request.inputs.end());
  relay::VirtualMachine machine(executable);
  Clock::time_point measure_from =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.seconds / 10));
  Clock::time_point end = measure_from + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.seconds));
  std::vector<double> latencies;
  while (true) {
    Clock::time_point started = Clock::now();
    if (started >= end) break;
    machine.Invoke("main", std::span<const relay::Value>(arguments));
    Clock::time_point finished = Clock::now();
    if (started >= measure_from)
      latencies.push_back(std::chrono::duration<double, std::micro>(finished - started).count());
  }
  Report(std::move(latencies), 0, options.seconds);
  return 0;
}

// The protocol's share of a request: parsing the body into tensors and
// encoding the model's answer to it.
int RunProtocol(const Options& options) {
  relay::Executable executable = relay::Executable::Load(
      options.program, {.params_path = options.params, .gradients = {}, .byoc = {}});
  relay::serve::ModelSignature signature = relay::serve::DescribeModel(executable, options.model);
  const std::string body = ReadFile(options.body_path);
  relay::serve::InferenceRequest request =
      relay::serve::ParseInferenceRequest(body, signature, options.json_length);
  std::vector<relay::Value> arguments(request.inputs.begin(), request.inputs.end());
  relay::VirtualMachine machine(executable);
  relay::Value result = machine.Invoke("main", std::span<const relay::Value>(arguments));
  std::vector<relay::Ref<relay::Tensor>> outputs;
  if (result->kind() == relay::ObjectKind::kTuple) {
    for (const relay::Value& field : static_cast<const relay::Tuple&>(*result).fields())
      outputs.emplace_back(static_cast<relay::Tensor*>(field.get()));
  } else {
    outputs.emplace_back(static_cast<relay::Tensor*>(result.get()));
  }
  Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options.seconds));
  std::vector<double> latencies;
  while (Clock::now() < end) {
    Clock::time_point started = Clock::now();
    relay::serve::InferenceRequest parsed =
        relay::serve::ParseInferenceRequest(body, signature, options.json_length);
    std::string answer = relay::serve::EncodeInferenceResponse(signature, parsed, outputs).body;
    latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
  }
  Report(std::move(latencies), 0, options.seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = Parse(argc, argv);
  try {
    if (options.mode == "http") return RunHttp(options);
    if (options.mode == "direct") return RunDirect(options);
    if (options.mode == "protocol") return RunProtocol(options);
  } catch (const std::exception& error) {
    Fail(error.what());
  }
  Fail("the mode is http or direct, got " + options.mode);
}
