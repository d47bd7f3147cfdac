// relay-vm serve's HTTP layer (serve/http_server.h) against clients that
// would take a thread-per-connection server down: hundreds of connections
// trickling their headers or bodies, idle keep-alive connections, more
// connections than the cap, bodies past the bytes in flight, malformed and
// conflicting framing, and pipelined requests. Each test checks that the
// normal client beside them is answered promptly and that the hostile ones
// are cut by the deadline or refused at once, as docs/serving.md says.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_server.h"
#include "serve/model_server.h"
#include "tests/serve/serve_test_support.h"

namespace relay::serve {
namespace {

using nlohmann::json;
using test_support::Named;
using test_support::RawConnection;
using test_support::RawResponse;
using test_support::RunningServer;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kRowsBody =
    R"({"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})";

std::string InferRequest(const std::string& body, const std::string& extra_headers = "") {
  return "POST /v2/models/rows/infer HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A normal client's visit: a health check and an inference on a fresh
// connection each; returns the slower one's seconds, or a large number if
// either failed.
double NormalClientSeconds(int port) {
  double slowest = 0;
  {
    Clock::time_point start = Clock::now();
    RawConnection connection(port);
    if (!connection.Send("GET /v2/health/live HTTP/1.1\r\nHost: test\r\n\r\n")) return 1e9;
    std::optional<RawResponse> live = connection.ReadResponse(std::chrono::seconds(20));
    if (!live || live->status != 200) return 1e9;
    slowest = std::max(slowest, SecondsSince(start));
  }
  {
    Clock::time_point start = Clock::now();
    RawConnection connection(port);
    if (!connection.Send(InferRequest(kRowsBody))) return 1e9;
    std::optional<RawResponse> answer = connection.ReadResponse(std::chrono::seconds(20));
    if (!answer || answer->status != 200) return 1e9;
    slowest = std::max(slowest, SecondsSince(start));
  }
  return slowest;
}

// `count` connections that send a request's first line and then one
// header line per `interval`, round robin, until Stop.
class Tricklers {
 public:
  Tricklers(int port, int count, milliseconds interval) {
    for (int index = 0; index < count; ++index) {
      connections_.push_back(std::make_unique<RawConnection>(port));
      connections_.back()->Send("POST /v2/models/rows/infer HTTP/1.1\r\n");
    }
    thread_ = std::thread([this, interval] {
      int line = 0;
      while (!stop_.load()) {
        for (const std::unique_ptr<RawConnection>& connection : connections_)
          connection->Send("X-Trickle-" + std::to_string(line) + ": 1\r\n");
        ++line;
        std::this_thread::sleep_for(interval);
      }
    });
  }
  ~Tricklers() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::unique_ptr<RawConnection>>& connections() { return connections_; }

 private:
  std::vector<std::unique_ptr<RawConnection>> connections_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

uint64_t MetricValue(int port, const std::string& series) {
  RawConnection connection(port);
  connection.Send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
  std::optional<RawResponse> metrics = connection.ReadResponse();
  if (!metrics) return ~uint64_t{0};
  size_t at = metrics->body.find(series + " ");
  return at == std::string::npos ? ~uint64_t{0}
                                 : std::stoull(metrics->body.substr(at + series.size() + 1));
}

TEST(HostileClients, ThreeHundredTricklingConnectionsLeaveOthersAnswered) {
  ServerOptions options = Named("rows");
  options.http.header_timeout = std::chrono::seconds(3);
  RunningServer running("rows.relay", options);
  Tricklers tricklers(running.port(), 300, milliseconds(200));
  for (int visit = 0; visit < 3; ++visit) {
    EXPECT_LT(NormalClientSeconds(running.port()), 1.0) << "visit " << visit;
    std::this_thread::sleep_for(milliseconds(300));
  }
  // The header deadline cuts every trickler, with a 408.
  Clock::time_point start = Clock::now();
  size_t answered_408 = 0;
  for (const std::unique_ptr<RawConnection>& connection : tricklers.connections()) {
    std::optional<RawResponse> answer = connection->ReadResponse(std::chrono::seconds(10));
    if (answer && answer->status == 408) ++answered_408;
    EXPECT_TRUE(connection->WaitForClose(std::chrono::seconds(5)));
  }
  tricklers.Stop();
  EXPECT_EQ(answered_408, 300u);
  EXPECT_LT(SecondsSince(start), 6.0);
  EXPECT_EQ(MetricValue(running.port(),
                        R"(relay_serve_connection_timeouts_total{model="rows",phase="header"})"),
            300u);
  EXPECT_LT(NormalClientSeconds(running.port()), 1.0);
}

TEST(HostileClients, NewConnectionsPastTheCapCloseTheSlowestInstead) {
  ServerOptions options = Named("rows");
  options.http.max_connections = 50;
  RunningServer running("rows.relay", options);
  // Twice the cap, each holding a partial request: the first are closed to
  // make room for the later ones.
  Tricklers tricklers(running.port(), 100, milliseconds(200));
  for (int visit = 0; visit < 3; ++visit)
    EXPECT_LT(NormalClientSeconds(running.port()), 1.0) << "visit " << visit;
  tricklers.Stop();
  size_t closed = 0;
  for (const std::unique_ptr<RawConnection>& connection : tricklers.connections())
    closed += connection->WaitForClose(milliseconds(10)) ? 1 : 0;
  EXPECT_GE(closed, 50u);
  EXPECT_GE(MetricValue(running.port(), R"(relay_serve_connections_evicted_total{model="rows"})"),
            50u);
}

TEST(HostileClients, ConnectionsPastTheCapAreRefusedAtOnceWhenNoneCanBeClosed) {
  ServerOptions options = Named("spin");
  options.http.max_connections = 2;
  options.shutdown_timeout = std::chrono::seconds(120);
  RunningServer running("spin.relay", options);
  // Two requests running hold both connections (a complete request is
  // never closed to make room).
  const std::string spin =
      R"({"inputs":[{"name":"n","shape":[],"datatype":"INT32","data":[3000000]}]})";
  std::vector<std::unique_ptr<RawConnection>> busy;
  for (int index = 0; index < 2; ++index) {
    busy.push_back(std::make_unique<RawConnection>(running.port()));
    busy.back()->Send("POST /v2/models/spin/infer HTTP/1.1\r\nContent-Length: " +
                      std::to_string(spin.size()) + "\r\n\r\n" + spin);
  }
  std::this_thread::sleep_for(milliseconds(200));
  Clock::time_point start = Clock::now();
  RawConnection refused(running.port());
  std::optional<RawResponse> answer = refused.ReadResponse(std::chrono::seconds(5));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 503) << answer->body;
  EXPECT_NE(answer->body.find("--max-connections"), std::string::npos) << answer->body;
  EXPECT_LT(SecondsSince(start), 1.0);
  for (const std::unique_ptr<RawConnection>& connection : busy) {
    std::optional<RawResponse> done = connection->ReadResponse(std::chrono::seconds(120));
    ASSERT_TRUE(done);
    EXPECT_EQ(done->status, 200) << done->body;
  }
}

TEST(HostileClients, ABodyTrickledByteByByteIsCutAtTheBodyDeadline) {
  ServerOptions options = Named("rows");
  options.http.body_timeout = milliseconds(1000);
  RunningServer running("rows.relay", options);
  RawConnection slow(running.port());
  ASSERT_TRUE(slow.Send("POST /v2/models/rows/infer HTTP/1.1\r\nContent-Length: " +
                        std::to_string(kRowsBody.size()) + "\r\n\r\n"));
  Clock::time_point start = Clock::now();
  std::optional<RawResponse> answer;
  for (size_t index = 0; index < kRowsBody.size() && !answer; ++index) {
    slow.Send(kRowsBody.substr(index, 1));
    answer = slow.ReadResponse(milliseconds(100));
  }
  ASSERT_TRUE(answer) << "no answer to a body trickled for " << SecondsSince(start) << " s";
  EXPECT_EQ(answer->status, 408);
  EXPECT_NE(answer->body.find("--body-timeout"), std::string::npos) << answer->body;
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_TRUE(slow.WaitForClose(std::chrono::seconds(2)));
}

TEST(HostileClients, IdleKeepAliveConnectionsAreClosed) {
  ServerOptions options = Named("rows");
  options.http.idle_timeout = milliseconds(500);
  RunningServer running("rows.relay", options);
  RawConnection idle(running.port());
  ASSERT_TRUE(idle.Send("GET /v2/health/live HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(idle.ReadResponse());
  Clock::time_point start = Clock::now();
  EXPECT_TRUE(idle.WaitForClose(std::chrono::seconds(5)));
  EXPECT_GT(SecondsSince(start), 0.3);
  EXPECT_LT(SecondsSince(start), 3.0);
  // A connection that never sends a byte is closed at the header deadline,
  // without an answer.
  options.http.header_timeout = milliseconds(500);
  RunningServer strict("rows.relay", options);
  RawConnection silent(strict.port());
  EXPECT_TRUE(silent.WaitForClose(std::chrono::seconds(5)));
}

TEST(HostileClients, AClientThatDoesNotReadItsAnswerIsCut) {
  ServerOptions options = Named("rows");
  options.http.write_timeout = milliseconds(500);
  RunningServer running("rows.relay", options);
  // 200,000 rows: an answer of megabytes, more than the sockets' buffers
  // hold, never read.
  std::string data = "1";
  for (int index = 1; index < 800'000; ++index) data += ",1";
  std::string body =
      R"({"inputs":[{"name":"x","shape":[200000,4],"datatype":"FP32","data":[)" + data + "]}]}";
  RawConnection stubborn(running.port());
  ASSERT_TRUE(stubborn.Send(InferRequest(body)));
  for (int wait = 0; wait < 300; ++wait) {
    if (MetricValue(running.port(),
                    R"(relay_serve_connection_timeouts_total{model="rows",phase="write"})") == 1)
      break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(MetricValue(running.port(),
                        R"(relay_serve_connection_timeouts_total{model="rows",phase="write"})"),
            1u);
  EXPECT_EQ(MetricValue(running.port(), R"(relay_serve_open_connections{model="rows"})"), 1u)
      << "only the /metrics connection is left";
}

TEST(HttpFraming, BadFramingIsRefusedAtOnce) {
  ServerOptions options = Named("rows");
  options.http.max_body_bytes = 4096;
  RunningServer running("rows.relay", options);
  const std::string start = "POST /v2/models/rows/infer HTTP/1.1\r\nHost: test\r\n";
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {start + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", 400, "Content-Length"},
      {start + "Content-Length: 5, 6\r\n\r\n", 400, "Content-Length"},
      {start + "Content-Length: -5\r\n\r\n", 400, "Content-Length"},
      {start + "Content-Length: 12abc\r\n\r\n", 400, "Content-Length"},
      {start + "Content-Length: 99999999999999999999999\r\n\r\n", 400, "Content-Length"},
      {start + "Content-Length: 1000000000\r\n\r\n", 413, "--max-body-bytes"},
      {start + "Content-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "ransfer"},
      {start + "Transfer-Encoding: gzip\r\n\r\n", 400, "chunked"},
      {start + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "chunked"},
      {start + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "chunk"},
      {start + "X-Big: " + std::string(20000, 'a') + "\r\n\r\n", 431, "headers"},
      {"GARBAGE\r\n\r\n", 400, "malformed"},
      {"GET / HTTP/9.9\r\n\r\n", 400, "malformed"},
  };
  for (const auto& [request, status, words] : cases) {
    RawConnection connection(running.port());
    Clock::time_point sent = Clock::now();
    ASSERT_TRUE(connection.Send(request));
    std::optional<RawResponse> answer = connection.ReadResponse(std::chrono::seconds(5));
    ASSERT_TRUE(answer) << request.substr(0, 120);
    EXPECT_EQ(answer->status, status) << request.substr(0, 120) << "\n" << answer->body;
    json error = json::parse(answer->body, nullptr, false);
    ASSERT_TRUE(error.is_object()) << answer->body;
    EXPECT_NE(error["error"].get<std::string>().find(words), std::string::npos) << answer->body;
    EXPECT_LT(SecondsSince(sent), 0.5) << request.substr(0, 120);
    EXPECT_NE(answer->head.find("Connection: close"), std::string::npos) << answer->head;
    EXPECT_TRUE(connection.WaitForClose(std::chrono::seconds(5)));
  }
  EXPECT_LT(NormalClientSeconds(running.port()), 1.0);
}

TEST(HttpFraming, ExpectContinueIsAnsweredBeforeTheBody) {
  RunningServer running("rows.relay", Named("rows"));
  RawConnection connection(running.port());
  ASSERT_TRUE(
      connection.Send("POST /v2/models/rows/infer HTTP/1.1\r\nExpect: 100-continue\r\n"
                      "Content-Length: " +
                      std::to_string(kRowsBody.size()) + "\r\n\r\n"));
  std::optional<RawResponse> go_on = connection.ReadResponse(std::chrono::seconds(5));
  ASSERT_TRUE(go_on);
  EXPECT_EQ(go_on->status, 100);
  ASSERT_TRUE(connection.Send(kRowsBody));
  std::optional<RawResponse> answer = connection.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200) << answer->body;
}

TEST(HttpPipelining, RequestsSentTogetherAreAnsweredInOrder) {
  RunningServer running("rows.relay", Named("rows"));
  RawConnection connection(running.port());
  const std::string second =
      R"({"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[0,0,0,10]}]})";
  ASSERT_TRUE(connection.Send("GET /v2/health/live HTTP/1.1\r\nHost: test\r\n\r\n" +
                              InferRequest(kRowsBody) +
                              "GET /v2/models/rows HTTP/1.1\r\nHost: test\r\n\r\n" +
                              InferRequest(second) + "GET /nowhere HTTP/1.1\r\n\r\n"));
  std::vector<RawResponse> answers;
  for (int index = 0; index < 5; ++index) {
    std::optional<RawResponse> answer = connection.ReadResponse();
    ASSERT_TRUE(answer) << "answer " << index;
    answers.push_back(*answer);
  }
  EXPECT_EQ(answers[0].status, 200);
  EXPECT_EQ(json::parse(answers[0].body), json({{"live", true}}));
  EXPECT_EQ(answers[1].status, 200);
  EXPECT_NEAR(json::parse(answers[1].body)["outputs"][1]["data"][0].get<double>(), 10.0, 1e-6);
  EXPECT_EQ(answers[2].status, 200);
  EXPECT_EQ(json::parse(answers[2].body)["name"], "rows");
  EXPECT_EQ(answers[3].status, 200);
  EXPECT_NEAR(json::parse(answers[3].body)["outputs"][1]["data"][0].get<double>(), 10.0, 1e-6);
  EXPECT_GT(json::parse(answers[3].body)["outputs"][0]["data"][3].get<double>(), 0.99);
  EXPECT_EQ(answers[4].status, 404);
  // Still open for more, and HTTP/1.0 closes after its answer.
  ASSERT_TRUE(connection.Send("GET /v2/health/ready HTTP/1.0\r\n\r\n"));
  std::optional<RawResponse> ready = connection.ReadResponse();
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_TRUE(connection.WaitForClose(std::chrono::seconds(5)));
}

TEST(HttpLimits, BodiesPastTheBytesInFlightAreRefusedWith503) {
  ServerOptions options = Named("rows");
  options.http.max_body_bytes = 6000;
  options.http.max_inflight_bytes = 10000;
  RunningServer running("rows.relay", options);
  // One body of 6000 bytes on its way holds the bytes ...
  RawConnection holding(running.port());
  ASSERT_TRUE(holding.Send("POST /v2/models/rows/infer HTTP/1.1\r\nContent-Length: 6000\r\n\r\n{"));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(MetricValue(running.port(), R"(relay_serve_inflight_bytes{model="rows"})"), 6000u);
  // ... so a second is refused at once, declared or chunked.
  RawConnection declared(running.port());
  ASSERT_TRUE(declared.Send("POST /v2/models/rows/infer HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"));
  std::optional<RawResponse> refused = declared.ReadResponse(std::chrono::seconds(5));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_NE(refused->head.find("Retry-After"), std::string::npos);
  RawConnection chunked(running.port());
  ASSERT_TRUE(
      chunked.Send("POST /v2/models/rows/infer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                   "\r\n1388\r\n" +
                   std::string(5000, ' ') + "\r\n"));
  std::optional<RawResponse> refused_chunked = chunked.ReadResponse(std::chrono::seconds(5));
  ASSERT_TRUE(refused_chunked);
  EXPECT_EQ(refused_chunked->status, 503) << refused_chunked->body;
  // A small one still fits.
  RawConnection small(running.port());
  ASSERT_TRUE(small.Send(InferRequest(kRowsBody)));
  std::optional<RawResponse> answer = small.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200) << answer->body;
  // Once the first finishes (a bad body: 400), its bytes are free again.
  ASSERT_TRUE(holding.Send(std::string(5999, ' ')));
  std::optional<RawResponse> first = holding.ReadResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 400);
  EXPECT_EQ(MetricValue(running.port(), R"(relay_serve_inflight_bytes{model="rows"})"), 0u);
}

TEST(HttpServer, ASecondServerOnAPortInUseFailsToStart) {
  Executable executable = Executable::Load(test_support::Fixture("rows.relay"));
  ServerOptions options = Named("rows");
  options.port = 0;
  ModelServer first(executable, options);
  options.port = first.Bind();
  ModelServer second(executable, options);
  try {
    second.Bind();
    ADD_FAILURE() << "a second server bound port " << options.port;
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(error.what()).find("address already in use"), std::string::npos)
        << error.what();
  }
}

// What a stuck connection would be diagnosed by (the HTTP fuzzer prints it
// when a connection stays open): each open connection's phase and deadline.
TEST(HttpServer, DescribesEachOpenConnection) {
  HttpServer server(
      HttpLimits{}, 1,
      [](HttpRequest, HttpResponder responder) {
        responder.Send(HttpResponse{200, "text/plain", "ok", {}});
      },
      [](int status, const std::string& message) {
        return HttpResponse{status, "text/plain", message, {}};
      });
  const int port = server.Bind("127.0.0.1", 0);
  server.Start();
  RawConnection sending(port), kept_alive(port);
  ASSERT_TRUE(sending.Send("GET /a HTTP/1.1\r\nHost: te"));
  ASSERT_TRUE(kept_alive.Send("GET /b HTTP/1.1\r\nHost: test\r\n\r\n"));
  std::optional<RawResponse> answer = kept_alive.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  std::string described;
  for (auto start = Clock::now(); SecondsSince(start) < 10;) {
    described = server.DescribeConnections();
    if (described.find("phase header") != std::string::npos &&
        described.find("phase idle") != std::string::npos)
      break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(described.find("phase header, deadline header, timed out none"), std::string::npos)
      << described;
  EXPECT_NE(described.find("phase idle, deadline idle"), std::string::npos) << described;
  server.BeginShutdown();
  server.FinishShutdown(Clock::now() + std::chrono::seconds(5));
}

}  // namespace
}  // namespace relay::serve
