// An event-driven HTTP/1.1 server (Boost.Beast's parser and serializer over
// Boost.Asio), built so that no client can monopolise it: a connection
// costs memory, never a thread, and every phase of a request has a
// deadline.
//
// - `threads` event loops, each with its own io_context and connections;
//   the listening socket hands new connections to them in turn.
// - Phases and their deadlines (HttpLimits): a new connection's request
//   line and headers within `header_timeout`; on a kept-alive connection,
//   the next request's first byte within `idle_timeout`, then its headers
//   within `header_timeout`; the body, whole, within `body_timeout`; an
//   answer that makes no progress for `write_timeout` (a client that does
//   not read) is cut. A request cut in its headers or body is answered 408.
// - At most `max_connections` open: a new one beyond that first closes the
//   oldest connection of its loop that has not delivered a complete
//   request (a slow or idle client); only if there is none is it refused,
//   at once, with a 503.
// - Framing is checked before the body is read: a body declared over
//   `max_body_bytes` is a 413, conflicting or malformed Content-Length or
//   Transfer-Encoding a 400 (501 for a transfer coding other than
//   chunked), and a body that would take the bytes held by requests past
//   `max_inflight_bytes` a 503, each answered at once and the connection
//   closed (after reading and dropping what the client was still sending,
//   for a moment, so that it sees the answer rather than a reset).
// - Keep-alive and pipelining as HTTP/1.1 has them: requests on one
//   connection are answered one at a time, in order; requests sent behind
//   the first wait in the connection's buffer.
//
// The handler runs on a loop thread and must not block: it answers through
// its HttpResponder, at once or later from any thread (inference answers
// from a worker thread, which writes the answer itself when the socket
// takes it whole, so that an answer costs no wake-up of the loop).
//
// Thread-safety: Bind, Start, BeginShutdown and FinishShutdown from one
// thread; stats() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::serve {

struct HttpLimits {
  size_t max_connections = 1024;
  size_t max_header_bytes = size_t{16} << 10;  // request line and headers
  size_t max_body_bytes = size_t{64} << 20;
  // Request bodies held at once (being read, or not yet answered), over every
  // connection: a body that would take them past this is refused (503).
  size_t max_inflight_bytes = size_t{256} << 20;
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds idle_timeout{5'000};
  std::chrono::milliseconds write_timeout{30'000};
};

// Bytes of slack after a request body's last byte, allocated and readable,
// so that simdjson parses the body where it lies instead of copying it.
inline constexpr size_t kRequestBodyPadding = 64;

struct HttpRequest {
  std::string method;  // as sent: "GET", "POST", ...
  std::string path;    // the target's path, percent-decoded, without the query
  std::vector<std::pair<std::string, std::string>> headers;
  // Its capacity is at least size() + kRequestBodyPadding.
  std::string body;

  // The value of header `name` (any case), or nullptr.
  const std::string* Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more headers
};

class HttpConnection;

// A request's answer, given once, from any thread. One destroyed without
// answering answers 500, so that no client waits for an answer forever.
class HttpResponder {
 public:
  explicit HttpResponder(std::shared_ptr<HttpConnection> connection);
  HttpResponder(HttpResponder&&) noexcept;
  HttpResponder& operator=(HttpResponder&&) noexcept;
  HttpResponder(const HttpResponder&) = delete;
  HttpResponder& operator=(const HttpResponder&) = delete;
  ~HttpResponder();

  void Send(HttpResponse response);

 private:
  std::shared_ptr<HttpConnection> connection_;
};

// What the connections did, for /metrics; every field counts since start
// except the two gauges.
struct HttpStats {
  std::atomic<uint64_t> open_connections{0};  // gauge
  std::atomic<uint64_t> inflight_bytes{0};    // gauge: request bodies held
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused{0};  // over max_connections, none to evict
  std::atomic<uint64_t> evicted{0};  // closed to make room for a new one
  std::atomic<uint64_t> header_timeouts{0};
  std::atomic<uint64_t> body_timeouts{0};
  std::atomic<uint64_t> idle_timeouts{0};
  std::atomic<uint64_t> write_timeouts{0};
  std::atomic<uint64_t> malformed{0};      // framing errors, 4xx/5xx before a handler
  std::atomic<uint64_t> inflight_full{0};  // refused for max_inflight_bytes
};

class HttpServer {
 public:
  using Handler = std::function<void(HttpRequest request, HttpResponder responder)>;
  // The body of an error the server answers itself (413, 408, ...).
  using ErrorResponse = std::function<HttpResponse(int status, const std::string& message)>;

  // `spin_for_answers`: while a loop awaits at most this many answers from
  // other threads (the inference workers, say), it spins for them a moment
  // before sleeping, as the workers spin for requests: waking a sleeping
  // thread costs tens of microseconds on a virtual machine. 0: never.
  HttpServer(const HttpLimits& limits, size_t threads, Handler handler,
             ErrorResponse error_response, size_t spin_for_answers = 0);
  // Stops the loops and closes every connection; FinishShutdown first for
  // a graceful end.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on host:port (port 0: any free port) with the port exclusive
  // to this socket; returns the port. Throws relay::Error (kUsage) when it
  // cannot, naming why ("address already in use").
  int Bind(const std::string& host, int port);
  // Starts the loops' threads; connections are served from here on.
  void Start();
  // Stops accepting; closes every connection that has not delivered a
  // complete request (idle, or still sending); requests received are
  // answered, each connection closed after its answer.
  void BeginShutdown();
  // Waits until every connection has closed or `deadline` has passed, then
  // closes the rest except those whose answer is still being computed (an
  // answer still to come writes to its socket), and stops the loops.
  // Returns how many connections were open at the deadline.
  size_t FinishShutdown(std::chrono::steady_clock::time_point deadline);

  const HttpStats& stats() const;
  // One line per open connection: its phase, pending deadline and what it
  // holds, for diagnosing a connection that stays open (tests, fuzzers).
  // Runs on the loops, so not from one of their threads; after Start.
  std::string DescribeConnections();

 private:
  friend class HttpConnection;
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace relay::serve
