// What the server tests share: a ModelServer serving on a free loopback
// port for a test's length, and a raw TCP client that sends exactly the
// bytes a test gives it (slowly, malformed, pipelined) and reads answers
// with a deadline.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <string>
#include <utility>

#include "serve/model_server.h"

namespace relay::serve::test_support {

inline std::string Fixture(const std::string& name) {
  return std::string(RELAY_TEST_FIXTURE_DIR) + "/serve/" + name;
}

// A server on a free loopback port, serving on its own thread until the
// test ends (or calls Stop).
class RunningServer {
 public:
  RunningServer(const std::string& model, ServerOptions options)
      : server_(Executable::Load(Fixture(model)), WithFreePort(std::move(options))),
        port_(server_.Bind()),
        serving_(std::async(std::launch::async, [this] { server_.Serve(); })) {}
  ~RunningServer() {
    server_.Stop();
    serving_.wait();
  }

  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    return client;
  }
  int port() const { return port_; }
  ModelServer& server() { return server_; }
  std::future<void>& serving() { return serving_; }

 private:
  static ServerOptions WithFreePort(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    return options;
  }

  ModelServer server_;
  int port_;
  std::future<void> serving_;
};

inline ServerOptions Named(const std::string& name) {
  ServerOptions options;
  options.model_name = name;
  return options;
}

// An HTTP answer as read off the wire.
struct RawResponse {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

// One TCP connection to 127.0.0.1:port.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    int one = 1;
    ::setsockopt(socket_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~RawConnection() { ::close(socket_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  // False once the server has closed or reset the connection.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t sent = ::send(socket_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(sent));
    }
    return true;
  }

  // Whatever arrives within `timeout` after what was read so far, appended
  // to the connection's buffer; false at the end of the stream or on a
  // reset (closed() then says so) or when nothing came in time.
  bool ReadSome(std::chrono::milliseconds timeout) {
    pollfd waiting{socket_, POLLIN, 0};
    if (::poll(&waiting, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char chunk[65536];
    ssize_t got = ::recv(socket_, chunk, sizeof chunk, 0);
    if (got <= 0) {
      closed_ = true;
      return false;
    }
    buffer_.append(chunk, static_cast<size_t>(got));
    return true;
  }

  // The next whole answer (a Content-Length framed one, as the server's
  // all are), or nullopt if none arrived by `timeout`.
  std::optional<RawResponse> ReadResponse(
      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        RawResponse response;
        response.head = buffer_.substr(0, end);
        response.status = std::atoi(response.head.c_str() + response.head.find(' ') + 1);
        size_t length = 0;
        size_t at = Lowercase(response.head).find("\r\ncontent-length:");
        if (at != std::string::npos)
          length = std::strtoull(response.head.c_str() + at + 17, nullptr, 10);
        if (buffer_.size() >= end + 4 + length) {
          response.body = buffer_.substr(end + 4, length);
          buffer_.erase(0, end + 4 + length);
          return response;
        }
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadSome(left)) return std::nullopt;
    }
  }

  // Waits until the server closes the connection; false if it did not
  // within `timeout`.
  bool WaitForClose(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      ReadSome(left);
    }
    return true;
  }
  bool closed() const { return closed_; }

 private:
  static std::string Lowercase(std::string text) {
    for (char& character : text) character = static_cast<char>(std::tolower(character));
    return text;
  }

  int socket_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buffer_;
};

}  // namespace relay::serve::test_support
