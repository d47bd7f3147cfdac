// `relay-vm serve` as a process: its options, its refusals, and SIGTERM /
// SIGINT stopping it gracefully (every request received is answered, exit
// status 0).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/serve/serve_test_support.h"

extern char** environ;

namespace {

using nlohmann::json;
using relay::serve::test_support::Fixture;
using relay::serve::test_support::RawConnection;

// relay-vm serve ARGUMENTS, its standard output and error read from pipes.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {RELAY_VM_BINARY, "serve"});
    int out_pipe[2];
    int err_pipe[2];
    EXPECT_EQ(pipe(out_pipe), 0);
    EXPECT_EQ(pipe(err_pipe), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_ = out_pipe[0];
    err_ = err_pipe[0];
  }
  ~ServeProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(out_);
    close(err_);
  }

  // The port from the first line, "... on http://127.0.0.1:PORT (...)".
  int ReadPort() {
    std::string line;
    char character;
    while (read(out_, &character, 1) == 1 && character != '\n') line += character;
    size_t colon = line.rfind(':');
    EXPECT_NE(colon, std::string::npos) << "no address in '" << line << "'";
    return colon == std::string::npos ? -1 : std::atoi(line.c_str() + colon + 1);
  }
  // Waits for the exit; returns the exit status, or -1 for a signal.
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string ReadAll(bool error) {
    std::string text;
    char buffer[4096];
    ssize_t got;
    while ((got = read(error ? err_ : out_, buffer, sizeof buffer)) > 0) text.append(buffer, got);
    return text;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  bool exited_ = false;
};

TEST(ServeCommand, SigtermAnswersEveryRequestReceivedThenExitsZero) {
  ServeProcess serve(
      {Fixture("spin.relay"), "--port", "0", "--workers", "2", "--shutdown-timeout", "120"});
  int port = serve.ReadPort();
  ASSERT_GT(port, 0);
  constexpr int kRequests = 6;
  constexpr int kSteps = 1'000'000;
  std::vector<std::future<httplib::Result>> answers;
  for (int index = 0; index < kRequests; ++index) {
    answers.push_back(std::async(std::launch::async, [port, index] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(60, 0);
      json body = {{"inputs",
                    {{{"name", "n"},
                      {"shape", json::array()},
                      {"datatype", "INT32"},
                      {"data", {kSteps + index}}}}}};
      return client.Post("/v2/models/spin/infer", body.dump(), "application/json");
    }));
  }
  httplib::Client metrics_client("127.0.0.1", port);
  for (int wait = 0; wait < 5000; ++wait) {
    httplib::Result metrics = metrics_client.Get("/metrics");
    if (metrics && metrics->body.find("relay_serve_inflight_requests{model=\"spin\"} 6\n") !=
                       std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(kill(serve.pid(), SIGTERM), 0);
  for (int index = 0; index < kRequests; ++index) {
    httplib::Result result = answers[index].get();
    ASSERT_TRUE(result) << "request " << index << " lost: " << httplib::to_string(result.error());
    EXPECT_EQ(result->status, 200) << result->body;
    EXPECT_EQ(json::parse(result->body)["outputs"][0]["data"], json({kSteps + index}));
  }
  EXPECT_EQ(serve.Wait(), 0);
  EXPECT_NE(serve.ReadAll(true).find("SIGTERM"), std::string::npos);
  EXPECT_NE(serve.ReadAll(false).find("stopped"), std::string::npos);
}

// The server's resident memory, from /proc/PID/status: "VmRSS" now or
// "VmHWM" at its peak, in bytes.
// Resets a process's peak resident memory (VmHWM) to its current one.
bool ResetPeakMemory(pid_t pid) {
  std::ofstream clear("/proc/" + std::to_string(pid) + "/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

size_t MemoryOf(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) << 10;
  }
  return 0;
}

TEST(ServeCommand, SigtermWithTricklingClientsExitsWithinTheDeadline) {
  ServeProcess serve({Fixture("rows.relay"), "--port", "0", "--shutdown-timeout", "3"});
  int port = serve.ReadPort();
  ASSERT_GT(port, 0);
  // Clients sending a header line, or a declared body's byte, every 100 ms.
  std::vector<std::unique_ptr<RawConnection>> headers;
  std::vector<std::unique_ptr<RawConnection>> bodies;
  for (int index = 0; index < 20; ++index) {
    headers.push_back(std::make_unique<RawConnection>(port));
    headers.back()->Send("POST /v2/models/rows/infer HTTP/1.1\r\n");
    bodies.push_back(std::make_unique<RawConnection>(port));
    bodies.back()->Send("POST /v2/models/rows/infer HTTP/1.1\r\nContent-Length: 100000\r\n\r\n");
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    for (int line = 0; !stop.load(); ++line) {
      for (auto& connection : headers)
        connection->Send("X-Line-" + std::to_string(line) + ": 1\r\n");
      for (auto& connection : bodies) connection->Send(" ");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(serve.pid(), SIGTERM), 0);
  int status = serve.Wait();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop.store(true);
  trickle.join();
  EXPECT_EQ(status, 0);
  // No trickler had delivered a request: each was cut at once.
  EXPECT_LT(seconds, 2.0);
  for (auto& connection : headers) EXPECT_TRUE(connection->WaitForClose(std::chrono::seconds(1)));
  for (auto& connection : bodies) EXPECT_TRUE(connection->WaitForClose(std::chrono::seconds(1)));
}

TEST(ServeCommand, ShutdownTimeoutEndsTheProcessWithRunsStillGoing) {
  ServeProcess serve({Fixture("spin.relay"), "--port", "0", "--shutdown-timeout", "0.5"});
  int port = serve.ReadPort();
  ASSERT_GT(port, 0);
  // A run of a thousand times the steps that take the tests' other
  // requests a moment.
  const std::string body =
      R"({"inputs":[{"name":"n","shape":[],"datatype":"INT32","data":[1000000000]}]})";
  RawConnection running(port);
  ASSERT_TRUE(running.Send("POST /v2/models/spin/infer HTTP/1.1\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body));
  httplib::Client client("127.0.0.1", port);
  for (int wait = 0; wait < 5000; ++wait) {
    httplib::Result metrics = client.Get("/metrics");
    if (metrics && metrics->body.find("relay_serve_inflight_requests{model=\"spin\"} 1\n") !=
                       std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(serve.pid(), SIGTERM), 0);
  EXPECT_EQ(serve.Wait(), 1);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(seconds, 0.4);
  EXPECT_LT(seconds, 2.5);
  EXPECT_NE(serve.ReadAll(true).find("1 request was still running after --shutdown-timeout"),
            std::string::npos);
}

TEST(ServeCommand, ASecondServerOnThePortFailsToStart) {
  ServeProcess first({Fixture("rows.relay"), "--port", "0"});
  int port = first.ReadPort();
  ASSERT_GT(port, 0);
  ServeProcess second({Fixture("rows.relay"), "--port", std::to_string(port)});
  EXPECT_EQ(second.Wait(), 2);
  std::string error = second.ReadAll(true);
  EXPECT_NE(
      error.find("cannot listen on 127.0.0.1:" + std::to_string(port) + ": address already in use"),
      std::string::npos)
      << error;
  // The first still serves every connection.
  for (int index = 0; index < 10; ++index) {
    httplib::Client client("127.0.0.1", port);
    httplib::Result ready = client.Get("/v2/models/rows/ready");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, 200);
  }
}

// Repeated large bodies, as binary tensor data and as JSON numbers: the
// server's memory comes back to where it was after the first of each, and
// a request's peak stays a small multiple of its body (docs/serving.md).
TEST(ServeCommand, MemoryStaysBoundedOverRepeatedLargeBodies) {
  // Under AddressSanitizer, freed memory waits in a quarantine of up to
  // 256 MiB before it is reused or unmapped, which would read as growth
  // here: the server gets a small one.
  const char* sanitizer_options = std::getenv("ASAN_OPTIONS");
  std::string saved = sanitizer_options ? sanitizer_options : "";
  setenv("ASAN_OPTIONS", (saved + (saved.empty() ? "" : ":") + "quarantine_size_mb=1").c_str(), 1);
  ServeProcess serve({Fixture("rows.relay"), "--port", "0"});
  if (sanitizer_options) {
    setenv("ASAN_OPTIONS", saved.c_str(), 1);
  } else {
    unsetenv("ASAN_OPTIONS");
  }
  int port = serve.ReadPort();
  ASSERT_GT(port, 0);
  constexpr size_t kRows = 1 << 20;  // 16 MiB of float32 in binary
  std::string header =
      json{{"inputs",
            {{{"name", "x"},
              {"shape", {kRows, 4}},
              {"datatype", "FP32"},
              {"parameters", {{"binary_data_size", kRows * 16}}}}}},
           {"outputs", {{{"name", "out1"}, {"parameters", {{"binary_data", true}}}}}}}
          .dump();
  std::string binary_body = header + std::string(kRows * 16, '\0');
  // About 6 MiB of JSON numbers: 393,216 rows.
  constexpr size_t kJsonRows = 3 << 17;
  std::string data;
  data.reserve(kJsonRows * 4 * 4);
  for (size_t index = 0; index < kJsonRows * 4; ++index) data += index == 0 ? "0.5" : ",0.5";
  std::string json_body = R"({"inputs":[{"name":"x","shape":[)" + std::to_string(kJsonRows) +
                          R"(,4],"datatype":"FP32","data":[)" + data +
                          R"(]}],"outputs":[{"name":"out1","parameters":{"binary_data":true}}]})";
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  auto send = [&] {
    httplib::Result binary = client.Post(
        "/v2/models/rows/infer",
        httplib::Headers{{"Inference-Header-Content-Length", std::to_string(header.size())}},
        binary_body, "application/octet-stream");
    ASSERT_TRUE(binary);
    ASSERT_EQ(binary->status, 200) << binary->body.substr(0, 200);
    httplib::Result numbers = client.Post("/v2/models/rows/infer", json_body, "application/json");
    ASSERT_TRUE(numbers);
    ASSERT_EQ(numbers->status, 200) << numbers->body.substr(0, 200);
    // out1 is each row's sum: 2.0 for the JSON rows.
    size_t json_length = std::stoul(numbers->get_header_value("Inference-Header-Content-Length"));
    float first_sum = 0;
    std::memcpy(&first_sum, numbers->body.data() + json_length, sizeof first_sum);
    EXPECT_EQ(first_sum, 2.0f);
  };
  // The first round compiles the model's kernels (LLVM's memory, once per
  // process) and sizes the allocator's pools: memory is measured from after
  // it, with the peak (VmHWM) reset there (clear_refs 5).
  send();
  const size_t before = MemoryOf(serve.pid(), "VmRSS");
  const bool peak_reset = ResetPeakMemory(serve.pid());
  send();
  const size_t after_first = MemoryOf(serve.pid(), "VmRSS");
  const size_t first_peak = MemoryOf(serve.pid(), "VmHWM");
  for (int round = 0; round < 5; ++round) send();
  const size_t after_all = MemoryOf(serve.pid(), "VmRSS");
  const size_t peak = MemoryOf(serve.pid(), "VmHWM");
  std::cerr << "RSS: after a warm-up round " << (before >> 20) << " MiB, after the next "
            << (after_first >> 20) << " MiB (peak " << (first_peak >> 20)
            << " MiB), after five more " << (after_all >> 20) << " MiB (peak " << (peak >> 20)
            << " MiB)\n";
  const size_t body = binary_body.size();
  // Nothing grows from round to round (a margin for where allocations
  // land) ...
  EXPECT_LT(after_all, after_first + body / 2);
  EXPECT_LT(peak, first_peak + body);
  // ... and a request's peak is a few times its body: the body, its
  // tensor, the model's outputs (a softmax of the same size, and the sums)
  // and the answer.
  if (peak_reset) {
    EXPECT_LT(peak - before, 6 * body);
  } else {
    std::cerr << "cannot reset the server's peak memory (/proc/PID/clear_refs): its peak per "
                 "request is not checked\n";
  }
}

TEST(ServeCommand, SigintStopsAnIdleServer) {
  ServeProcess serve({Fixture("rows.relay"), "--port", "0", "--name", "rows-v2"});
  int port = serve.ReadPort();
  httplib::Client client("127.0.0.1", port);
  httplib::Result ready = client.Get("/v2/models/rows-v2/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  ASSERT_EQ(kill(serve.pid(), SIGINT), 0);
  EXPECT_EQ(serve.Wait(), 0);
}

TEST(ServeCommand, RefusesBadOptionsWithUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "expected a model file"},
      {{Fixture("rows.relay"), "--workers", "0"}, "--workers takes a whole number from 1"},
      {{Fixture("rows.relay"), "--port", "70000"}, "--port takes"},
      {{Fixture("rows.relay"), "--batch-timeout-us", "100"}, "give --max-batch too"},
      {{Fixture("rows.relay"), "--name", "a/b"}, "--name takes letters"},
      {{Fixture("rows.relay"), "--frobnicate"}, "unknown option '--frobnicate'"},
      {{Fixture("spin.relay"), "--max-batch", "8"}, "cannot be batched"},
      {{Fixture("rows.relay"), "--header-timeout", "0"}, "--header-timeout takes seconds"},
      {{Fixture("rows.relay"), "--shutdown-timeout", "soon"}, "--shutdown-timeout takes seconds"},
      {{Fixture("rows.relay"), "--max-connections", "0"}, "--max-connections takes"},
      {{Fixture("rows.relay"), "--max-body-bytes", "1000", "--max-inflight-bytes", "999"},
       "below --max-body-bytes"},
      {{Fixture("rows.relay"), "--host", "203.0.113.9", "--port", "8000"}, "cannot listen on"},
  };
  for (const auto& [arguments, words] : cases) {
    ServeProcess serve(arguments);
    EXPECT_EQ(serve.Wait(), 2);
    std::string error = serve.ReadAll(true);
    EXPECT_NE(error.find(words), std::string::npos) << error;
  }
  ServeProcess missing({Fixture("no_such_model.relay")});
  EXPECT_EQ(missing.Wait(), 1);
}

}  // namespace
