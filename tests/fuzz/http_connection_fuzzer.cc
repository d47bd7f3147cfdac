// libFuzzer target over relay-vm serve's HTTP layer (serve/http_server.h):
// each input is what one client sends on one connection, over loopback, to
// a server that lives for the whole run, after which the client stops
// sending. The server must answer with well-formed HTTP (or nothing), close
// the connection within a moment, and go on answering others: a crash, a
// hang, a sanitizer report, a connection left open or a server that stops
// answering is a bug.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "serve/http_server.h"

namespace {

using relay::serve::HttpLimits;
using relay::serve::HttpRequest;
using relay::serve::HttpResponder;
using relay::serve::HttpResponse;
using relay::serve::HttpServer;

// Connections this fuzzer opened (Connect), to compare with the server's.
uint64_t connections_made = 0;

// The server, for the whole run (held here, so never reported as a leak).
std::unique_ptr<HttpServer>& Server() {
  static std::unique_ptr<HttpServer> server;
  return server;
}

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "http_connection_fuzzer: %s\n%s\n", what, detail.c_str());
  if (Server()) {
    const relay::serve::HttpStats& stats = Server()->stats();
    std::fprintf(stderr, "server: %llu connections open, %llu accepted of %llu, %llu refused\n",
                 static_cast<unsigned long long>(stats.open_connections.load()),
                 static_cast<unsigned long long>(stats.accepted.load()),
                 static_cast<unsigned long long>(connections_made),
                 static_cast<unsigned long long>(stats.refused.load()));
    std::fprintf(stderr, "%s", Server()->DescribeConnections().c_str());
  }
  std::abort();
}

// A server whose handler answers with what it was sent, so that every
// path through the connection (bodies, chunks, pipelining) is taken.
int ServerPort() {
  static const int port = [] {
    std::unique_ptr<HttpServer>& server = Server();
    HttpLimits limits;
    limits.max_body_bytes = size_t{1} << 20;
    limits.max_inflight_bytes = size_t{2} << 20;
    limits.header_timeout = std::chrono::milliseconds(500);
    limits.body_timeout = std::chrono::milliseconds(500);
    limits.idle_timeout = std::chrono::milliseconds(500);
    limits.write_timeout = std::chrono::milliseconds(500);
    server = std::make_unique<HttpServer>(
        limits, 1,
        [](HttpRequest request, HttpResponder responder) {
          responder.Send(HttpResponse{
              200,
              "text/plain",
              request.method + " " + request.path + " " + std::to_string(request.body.size()),
              {}});
        },
        [](int status, const std::string& message) {
          return HttpResponse{status, "text/plain", message, {}};
        });
    int bound = server->Bind("127.0.0.1", 0);
    server->Start();
    return bound;
  }();
  return port;
}

// Closes a connection the server has closed already, with a reset rather
// than a FIN, so that it leaves no TIME_WAIT state behind (see Connect).
void CloseAbruptly(int connection) {
  linger abrupt{1, 0};
  ::setsockopt(connection, SOL_SOCKET, SO_LINGER, &abrupt, sizeof abrupt);
  ::close(connection);
}

int Connect(int port) {
  ++connections_made;
  int connection = ::socket(AF_INET, SOCK_STREAM, 0);
  // A run opens hundreds of thousands of connections, and from one source
  // address the TIME_WAIT states of the closed ones would soon hold every
  // ephemeral port: new connections then reuse ports still in TIME_WAIT,
  // and the kernel stalls them for seconds. Each comes from another of
  // loopback's addresses (127.1.0.1 to 127.1.255.254) instead.
  sockaddr_in source{};
  source.sin_family = AF_INET;
  source.sin_addr.s_addr =
      htonl((127u << 24) | (1u << 16) | static_cast<uint32_t>(connections_made % 65534 + 1));
  if (::bind(connection, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0)
    Fail("cannot bind a loopback source address", "");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(connection, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    // Interrupted (by libFuzzer's alarm), the connection goes on being made.
    int error = errno;
    if (error == EINTR) {
      pollfd connecting{connection, POLLOUT, 0};
      while (::poll(&connecting, 1, -1) < 0 && errno == EINTR) {
      }
      socklen_t length = sizeof error;
      ::getsockopt(connection, SOL_SOCKET, SO_ERROR, &error, &length);
    }
    if (error != 0) Fail("cannot connect to the server", std::strerror(error));
  }
  return connection;
}

// Everything the server sends until it closes; fails if it does not close
// within 30 seconds (the deadlines above are half a second).
std::string ReadUntilClosed(int connection, const std::string& input) {
  std::string answer;
  // Generous: CI runs this beside compilers and other tests, and a
  // starved machine has held a close back for seconds. A connection the
  // server forgot stays open for good, and still fails.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  char chunk[65536];
  while (true) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    pollfd waiting{connection, POLLIN, 0};
    int ready = left > 0 ? ::poll(&waiting, 1, left) : 0;
    // libFuzzer's -timeout alarm interrupts a call now and then (EINTR).
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0)
      Fail("the server left a connection open after its client stopped sending", input);
    ssize_t got = ::recv(connection, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return answer;
    answer.append(chunk, static_cast<size_t>(got));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int port = ServerPort();
  const std::string input(reinterpret_cast<const char*>(data), size);
  int connection = Connect(port);
  size_t sent = 0;
  while (sent < input.size()) {
    ssize_t wrote = ::send(connection, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) break;  // the server refused and closed: allowed
    sent += static_cast<size_t>(wrote);
  }
  ::shutdown(connection, SHUT_WR);
  std::string answer = ReadUntilClosed(connection, input);
  CloseAbruptly(connection);
  if (!answer.empty() && answer.rfind("HTTP/1.", 0) != 0)
    Fail("an answer that is not HTTP", answer.substr(0, 200));

  // The server still answers a plain request.
  int probe = Connect(port);
  const std::string request = "GET /live HTTP/1.1\r\nConnection: close\r\n\r\n";
  if (::send(probe, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    Fail("cannot send a probe", input);
  std::string probed = ReadUntilClosed(probe, input);
  CloseAbruptly(probe);
  if (probed.rfind("HTTP/1.1 200 ", 0) != 0) Fail("the server stopped answering", probed);
  return 0;
}
