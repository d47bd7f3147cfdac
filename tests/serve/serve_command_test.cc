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

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using nlohmann::json;

std::string Fixture(const std::string& name) {
  return std::string(RELAY_TEST_FIXTURE_DIR) + "/serve/" + name;
}

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
  ServeProcess serve({Fixture("spin.relay"), "--port", "0", "--workers", "2"});
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
