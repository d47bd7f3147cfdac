#include "serve/http_server.h"

#include <sys/resource.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <array>
#include <cctype>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "relay/error.h"
#include "serve/http_request_body.h"

namespace relay::serve {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// After refusing a request whose body was not read, the connection reads
// and drops what the client still sends, this long and up to this much (at
// least), before closing: a close with unread bytes sends a reset, which
// can destroy the answer before the client reads it.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLeastLingerBytes = size_t{1} << 20;
// A connection's read buffer: request line and headers, then the body
// passes through it on its way into the request's string.
constexpr size_t kReadBufferBytes = size_t{64} << 10;
// accept() failing for want of descriptors is retried after this, rather
// than at once in a loop.
constexpr auto kAcceptRetry = std::chrono::milliseconds(50);
// How long a loop spins for an answer from another thread after handing a
// request over (spin_for_answers).
constexpr auto kSpinForAnswer = std::chrono::microseconds(300);

// Beast's string_view (Boost's, in the Boost this builds with) as the
// standard one.
std::string_view View(beast::string_view text) {
  return std::string_view(text.data(), text.size());
}

bool SameLetters(std::string_view first, std::string_view second) {
  if (first.size() != second.size()) return false;
  for (size_t index = 0; index < first.size(); ++index) {
    if (std::tolower(static_cast<unsigned char>(first[index])) !=
        std::tolower(static_cast<unsigned char>(second[index])))
      return false;
  }
  return true;
}

int HexDigit(char character) {
  if (character >= '0' && character <= '9') return character - '0';
  if (character >= 'a' && character <= 'f') return character - 'a' + 10;
  if (character >= 'A' && character <= 'F') return character - 'A' + 10;
  return -1;
}

// The target's path, its %XX escapes decoded (a malformed one kept as
// sent), without the query.
std::string DecodedPath(std::string_view target) {
  target = target.substr(0, target.find('?'));
  std::string path;
  path.reserve(target.size());
  for (size_t index = 0; index < target.size(); ++index) {
    if (target[index] == '%' && index + 2 < target.size() && HexDigit(target[index + 1]) >= 0 &&
        HexDigit(target[index + 2]) >= 0) {
      path += static_cast<char>(HexDigit(target[index + 1]) * 16 + HexDigit(target[index + 2]));
      index += 2;
    } else {
      path += target[index];
    }
  }
  return path;
}

std::string Seconds(std::chrono::milliseconds duration) {
  std::string text = std::to_string(static_cast<double>(duration.count()) / 1000.0);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

}  // namespace

// One event loop: its io_context, run by its own thread, and the
// connections it serves. Everything here is touched by that thread only.
struct HttpLoop {
  asio::io_context context{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  // Every open connection, owned here until it closes.
  std::unordered_map<HttpConnection*, std::shared_ptr<HttpConnection>> connections;
  // Connections that have not delivered a complete request, the longest
  // waiting first: the ones closed to make room for a new connection.
  std::list<HttpConnection*> waiting;
  // What lingering closes read and drop.
  std::array<char, 16384> discarded;
  std::thread thread;
  // Requests handed to their handler whose answer has not come back yet,
  // and until when the loop spins for them rather than sleeping.
  size_t awaiting_answers = 0;
  Clock::time_point spin_until;

  bool on_this_thread() { return context.get_executor().running_in_this_thread(); }
  // The open connections, to go through while closing some.
  std::vector<std::shared_ptr<HttpConnection>> Snapshot() const {
    std::vector<std::shared_ptr<HttpConnection>> open;
    for (const auto& entry : connections) open.push_back(entry.second);
    return open;
  }
};

class HttpServer::Impl {
 public:
  Impl(const HttpLimits& limits, size_t threads, Handler handler, ErrorResponse error_response,
       size_t spin_for_answers)
      : limits(limits),
        spin_for_answers(spin_for_answers),
        handler(std::move(handler)),
        error_response(std::move(error_response)),
        inflight(limits.max_inflight_bytes, stats.inflight_bytes) {
    for (size_t index = 0; index < std::max<size_t>(threads, 1); ++index)
      loops.push_back(std::make_unique<HttpLoop>());
  }
  ~Impl();

  void Accept();
  // On `loop`'s thread: serves a connection just accepted, or refuses it.
  void Adopt(HttpLoop& loop, tcp::socket socket);
  // Runs `work` on every loop's thread and waits for it.
  void OnEveryLoop(const std::function<void(HttpLoop&)>& work);
  void StopLoops();
  // A loop's thread: runs its handlers, sleeping when there are none,
  // except while it may spin for answers.
  void Run(HttpLoop& loop);

  const HttpLimits limits;
  const size_t spin_for_answers;
  const Handler handler;
  const ErrorResponse error_response;
  HttpStats stats;
  InflightBytes inflight;
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<HttpLoop>> loops;
  std::optional<tcp::acceptor> acceptor;  // on loops[0]
  std::optional<asio::steady_timer> accept_retry;
  size_t next_loop = 0;
  bool started = false;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  enum class Phase {
    kIdle,        // kept alive, no byte of the next request yet
    kHeader,      // reading the request line and headers
    kBody,        // reading the body
    kProcessing,  // the handler has the request; the loop must not touch the socket
    kWriting,     // writing the answer
    kLingering,   // refused: dropping what the client still sends
    kClosed,
  };

  HttpConnection(HttpServer::Impl& server, HttpLoop& loop, tcp::socket socket)
      : server_(server), loop_(loop), socket_(std::move(socket)), timer_(loop.context) {
    reservation_.Bind(server.inflight);
  }

  // The loop's thread, from here on, except Respond.
  void Start() {
    beast::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    // Writes from another thread (Respond) must never block it.
    socket_.non_blocking(true, ignored);
    ReadRequest(/*first=*/true);
  }

  // Any thread, once per request, while kProcessing.
  void Respond(HttpResponse response);

  Phase phase() const { return phase_.load(std::memory_order_acquire); }
  // Closes the connection now, unless its answer is being computed.
  void Close();
  // Its state, for a diagnosis (the loop's thread).
  std::string Describe() const;

 private:
  enum class Deadline { kNone, kIdle, kHeader, kBody, kWrite, kLinger };

  void ReadRequest(bool first);
  void ReadHeader();
  void OnHeader(beast::error_code error);
  void ReadBody();
  void OnReadFailed(beast::error_code error);
  void Dispatch();
  // On the loop: the answer awaited since Dispatch is here.
  void AnswerArrived();
  // Answers `status` with `message` and closes the connection (after
  // lingering, if the client may still be sending a body).
  void Refuse(int status, const std::string& message, bool linger);
  void RefuseForBytesInFlight();
  void StartWriting();
  void WriteSome();
  void AfterDirectWrite(beast::error_code error);
  void AfterWrite();
  void Linger();
  void DrainSome();

  void SetDeadline(std::chrono::milliseconds after, Deadline kind);
  void CancelDeadline();
  void OnDeadline(Deadline kind);

  void JoinWaiting() {
    if (in_waiting_) return;
    waiting_position_ = loop_.waiting.insert(loop_.waiting.end(), this);
    in_waiting_ = true;
  }
  void LeaveWaiting() {
    if (!in_waiting_) return;
    loop_.waiting.erase(waiting_position_);
    in_waiting_ = false;
  }
  void SetPhase(Phase phase) { phase_.store(phase, std::memory_order_release); }

  HttpServer::Impl& server_;
  HttpLoop& loop_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  Deadline deadline_ = Deadline::kNone;   // the one set and not yet fired or cancelled
  Deadline timed_out_ = Deadline::kNone;  // the deadline that cut the read in progress
  std::atomic<Phase> phase_{Phase::kHeader};
  beast::flat_buffer buffer_{kReadBufferBytes};
  std::optional<http::request_parser<BudgetedStringBody>> parser_;
  InflightReservation reservation_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool linger_ = false;
  size_t lingered_bytes_ = 0;
  http::response<http::string_body> response_;
  std::optional<http::response_serializer<http::string_body>> serializer_;
  std::list<HttpConnection*>::iterator waiting_position_;
  bool in_waiting_ = false;
  bool awaiting_answer_ = false;  // counted in loop_.awaiting_answers
};

// ---- HttpRequest, HttpResponder ---------------------------------------------

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (SameLetters(key, name)) return &value;
  }
  return nullptr;
}

HttpResponder::HttpResponder(std::shared_ptr<HttpConnection> connection)
    : connection_(std::move(connection)) {}
HttpResponder::HttpResponder(HttpResponder&&) noexcept = default;
HttpResponder& HttpResponder::operator=(HttpResponder&& other) noexcept {
  if (this != &other) {
    if (connection_) Send(HttpResponse{500, "application/json", "", {}});
    connection_ = std::move(other.connection_);
  }
  return *this;
}

HttpResponder::~HttpResponder() {
  if (!connection_) return;
  try {
    Send(HttpResponse{500,
                      "application/json",
                      R"({"error":"internal error: the request was dropped unanswered"})",
                      {}});
  } catch (...) {
  }
}

void HttpResponder::Send(HttpResponse response) {
  std::shared_ptr<HttpConnection> connection = std::move(connection_);
  if (connection) connection->Respond(std::move(response));
}

// ---- HttpConnection: reading ---------------------------------------------------

void HttpConnection::ReadRequest(bool first) {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(std::min<size_t>(
      server_.limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser_->body_limit(server_.limits.max_body_bytes);
  JoinWaiting();
  if (first || buffer_.size() > 0) {
    // A new connection, or a request sent behind the last (pipelined).
    ReadHeader();
    return;
  }
  // Idle connections keep no read buffer.
  buffer_.shrink_to_fit();
  SetPhase(Phase::kIdle);
  SetDeadline(server_.limits.idle_timeout, Deadline::kIdle);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code error) {
    if (self->phase() != Phase::kIdle) return;
    if (error) {
      self->Close();
      return;
    }
    self->ReadHeader();
  });
}

void HttpConnection::ReadHeader() {
  // Beast reads as much as the buffer's free capacity (at least 512
  // bytes): without room reserved, a body would arrive 512 bytes a read.
  buffer_.reserve(kReadBufferBytes);
  SetPhase(Phase::kHeader);
  SetDeadline(server_.limits.header_timeout, Deadline::kHeader);
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code error, size_t) {
                            if (self->phase() != Phase::kHeader) return;
                            self->OnHeader(error);
                          });
}

void HttpConnection::OnHeader(beast::error_code error) {
  if (error) {
    OnReadFailed(error);
    return;
  }
  const auto& header = parser_->get();
  version_ = header.version();
  // Only the chunked coding is read, and it must come last (RFC 9112 6.3).
  if (header.count(http::field::transfer_encoding) > 0) {
    if (!parser_->chunked()) {
      Refuse(400, "Transfer-Encoding must end with 'chunked' for a request", true);
      return;
    }
    std::string_view codings = View(header[http::field::transfer_encoding]);
    if (!SameLetters(codings, "chunked")) {
      Refuse(501,
             "only the 'chunked' transfer coding is supported, got '" + std::string(codings) + "'",
             true);
      return;
    }
  }
  if (parser_->content_length() && *parser_->content_length() > server_.limits.max_body_bytes) {
    Refuse(413,
           "the request body is " + std::to_string(*parser_->content_length()) +
               " bytes, over the limit of " + std::to_string(server_.limits.max_body_bytes) +
               " (--max-body-bytes)",
           true);
    return;
  }
  parser_->get().body().reservation = &reservation_;
  parser_->get().body().limit = server_.limits.max_body_bytes;
  if (parser_->content_length() && !reservation_.GrowTo(*parser_->content_length())) {
    RefuseForBytesInFlight();
    return;
  }
  if (parser_->is_done()) {
    Dispatch();
    return;
  }
  if (SameLetters(View(header[http::field::expect]), "100-continue") && version_ >= 11) {
    SetPhase(Phase::kBody);
    SetDeadline(server_.limits.body_timeout, Deadline::kBody);
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = shared_from_this()](beast::error_code error, size_t) {
                        if (self->phase() != Phase::kBody) return;
                        if (error) {
                          self->OnReadFailed(error);
                          return;
                        }
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

void HttpConnection::ReadBody() {
  if (phase() != Phase::kBody) {
    SetPhase(Phase::kBody);
    SetDeadline(server_.limits.body_timeout, Deadline::kBody);
  }
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code error, size_t) {
                     if (self->phase() != Phase::kBody) return;
                     if (error) {
                       self->OnReadFailed(error);
                       return;
                     }
                     self->Dispatch();
                   });
}

void HttpConnection::OnReadFailed(beast::error_code error) {
  const HttpLimits& limits = server_.limits;
  if (timed_out_ == Deadline::kHeader) {
    // Nothing sent at all: closed without a word, as an idle connection.
    if (!parser_->got_some() && buffer_.size() == 0) {
      Close();
      return;
    }
    Refuse(408,
           "the request line and headers did not arrive within " + Seconds(limits.header_timeout) +
               " (--header-timeout)",
           false);
    return;
  }
  if (timed_out_ == Deadline::kBody) {
    Refuse(408,
           "the request body did not arrive within " + Seconds(limits.body_timeout) +
               " (--body-timeout)",
           false);
    return;
  }
  if (error == http::error::header_limit || error == http::error::buffer_overflow) {
    server_.stats.malformed.fetch_add(1, std::memory_order_relaxed);
    Refuse(431,
           "the request line and headers are over " + std::to_string(limits.max_header_bytes) +
               " bytes",
           true);
  } else if (error == http::error::body_limit) {
    server_.stats.malformed.fetch_add(1, std::memory_order_relaxed);
    Refuse(413,
           "the request body is over " + std::to_string(limits.max_body_bytes) +
               " bytes (--max-body-bytes)",
           true);
  } else if (error.category() == InflightCategory()) {
    RefuseForBytesInFlight();
  } else if (error.category() == http::make_error_code(http::error::bad_method).category() &&
             error != http::error::end_of_stream && error != http::error::partial_message) {
    server_.stats.malformed.fetch_add(1, std::memory_order_relaxed);
    Refuse(400, "malformed HTTP request: " + error.message(), true);
  } else {
    // The client closed or reset the connection, or it was closed here.
    Close();
  }
}

void HttpConnection::RefuseForBytesInFlight() {
  server_.stats.inflight_full.fetch_add(1, std::memory_order_relaxed);
  Refuse(503,
         "the server holds too many request bytes already (--max-inflight-bytes " +
             std::to_string(server_.limits.max_inflight_bytes) + "); try again later",
         true);
}

void HttpConnection::Dispatch() {
  LeaveWaiting();
  CancelDeadline();
  SetPhase(Phase::kProcessing);
  keep_alive_ = parser_->keep_alive();
  version_ = parser_->get().version();
  auto message = parser_->release();
  parser_.reset();
  HttpRequest request;
  request.method = std::string(View(message.method_string()));
  request.path = DecodedPath(View(message.target()));
  for (const auto& field : message)
    request.headers.emplace_back(View(field.name_string()), View(field.value()));
  request.body = std::move(message.body().bytes);
  if (request.body.capacity() < request.body.size() + kRequestBodyPadding)
    request.body.reserve(request.body.size() + kRequestBodyPadding);
  HttpResponder responder(shared_from_this());
  try {
    server_.handler(std::move(request), std::move(responder));
  } catch (...) {
    // The handler's responder, destroyed unanswered, answers 500.
  }
  if (phase() == Phase::kProcessing) {
    // The answer comes from another thread.
    awaiting_answer_ = true;
    ++loop_.awaiting_answers;
    loop_.spin_until = Clock::now() + kSpinForAnswer;
  }
}

void HttpConnection::AnswerArrived() {
  if (!awaiting_answer_) return;
  awaiting_answer_ = false;
  --loop_.awaiting_answers;
}

void HttpConnection::Refuse(int status, const std::string& message, bool linger) {
  LeaveWaiting();
  CancelDeadline();
  keep_alive_ = false;
  linger_ = linger;
  SetPhase(Phase::kProcessing);
  Respond(server_.error_response(status, message));
}

// ---- HttpConnection: writing ---------------------------------------------------

void HttpConnection::Respond(HttpResponse response) {
  if (phase() != Phase::kProcessing) return;
  // The request's bytes are done with once it is answered (the request
  // owns the reservation until now, on whichever thread answers).
  reservation_.Reset();
  keep_alive_ = keep_alive_ && !server_.stopping.load(std::memory_order_relaxed);
  response_ = {};
  response_.version(version_);
  response_.result(static_cast<unsigned>(response.status));
  response_.set(http::field::server, "relay-vm");
  response_.set(http::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) response_.set(name, value);
  response_.body() = std::move(response.body);
  response_.keep_alive(keep_alive_);
  response_.prepare_payload();
  serializer_.emplace(response_);
  if (loop_.on_this_thread()) {
    StartWriting();
    return;
  }
  // Another thread's answer: write what the socket takes now (all of it,
  // for any answer smaller than the socket's buffer), and leave the rest,
  // and reading the next request, to the loop.
  beast::error_code error;
  while (!serializer_->is_done()) {
    http::write_some(socket_, *serializer_, error);
    if (error) break;
  }
  asio::post(loop_.context, [self = shared_from_this(), error] { self->AfterDirectWrite(error); });
}

void HttpConnection::AfterDirectWrite(beast::error_code error) {
  if (phase() != Phase::kProcessing) return;
  AnswerArrived();
  if (!error) {
    SetPhase(Phase::kWriting);
    AfterWrite();
  } else if (error == asio::error::would_block || error == asio::error::try_again) {
    StartWriting();
  } else {
    SetPhase(Phase::kWriting);
    Close();
  }
}

void HttpConnection::StartWriting() {
  AnswerArrived();
  SetPhase(Phase::kWriting);
  WriteSome();
}

void HttpConnection::WriteSome() {
  // The deadline is for progress: each write that moves bytes renews it.
  SetDeadline(server_.limits.write_timeout, Deadline::kWrite);
  http::async_write_some(socket_, *serializer_,
                         [self = shared_from_this()](beast::error_code error, size_t) {
                           if (self->phase() != Phase::kWriting) return;
                           if (error) {
                             self->Close();
                           } else if (!self->serializer_->is_done()) {
                             self->WriteSome();
                           } else {
                             self->AfterWrite();
                           }
                         });
}

void HttpConnection::AfterWrite() {
  CancelDeadline();
  serializer_.reset();
  response_ = {};
  if (keep_alive_ && !server_.stopping.load(std::memory_order_relaxed)) {
    ReadRequest(/*first=*/false);
  } else if (linger_) {
    Linger();
  } else {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    Close();
  }
}

void HttpConnection::Linger() {
  SetPhase(Phase::kLingering);
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  lingered_bytes_ = 0;
  SetDeadline(std::chrono::duration_cast<std::chrono::milliseconds>(kLingerTime),
              Deadline::kLinger);
  DrainSome();
}

void HttpConnection::DrainSome() {
  socket_.async_read_some(
      asio::buffer(loop_.discarded),
      [self = shared_from_this()](beast::error_code error, size_t bytes) {
        if (self->phase() != Phase::kLingering) return;
        self->lingered_bytes_ += bytes;
        if (error || self->lingered_bytes_ >
                         std::max(kLeastLingerBytes, self->server_.limits.max_body_bytes)) {
          self->Close();
        } else {
          self->DrainSome();
        }
      });
}

void HttpConnection::Close() {
  Phase phase = this->phase();
  if (phase == Phase::kClosed || phase == Phase::kProcessing) return;
  SetPhase(Phase::kClosed);
  LeaveWaiting();
  CancelDeadline();
  beast::error_code ignored;
  socket_.close(ignored);
  serializer_.reset();
  response_ = {};
  parser_.reset();
  reservation_.Reset();
  server_.stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
  // The registry's reference may be the last but the caller's.
  std::shared_ptr<HttpConnection> self = shared_from_this();
  loop_.connections.erase(this);
}

std::string HttpConnection::Describe() const {
  static constexpr const char* kPhases[] = {"idle",    "header",    "body",  "processing",
                                            "writing", "lingering", "closed"};
  static constexpr const char* kDeadlines[] = {"none", "idle", "header", "body", "write", "linger"};
  std::string text = std::string("phase ") + kPhases[static_cast<int>(phase())] + ", deadline " +
                     kDeadlines[static_cast<int>(deadline_)] + ", timed out " +
                     kDeadlines[static_cast<int>(timed_out_)] + ", " +
                     std::to_string(buffer_.size()) + " bytes buffered";
  if (parser_) {
    text += std::string(", parser got ") + (parser_->got_some() ? "some" : "none") +
            (parser_->is_header_done() ? ", header done" : "") +
            (parser_->is_done() ? ", done" : "");
  }
  if (serializer_) text += ", answer pending";
  if (awaiting_answer_) text += ", awaiting its answer";
  if (!socket_.is_open()) text += ", socket closed";
  return text;
}

// ---- HttpConnection: deadlines -------------------------------------------------

void HttpConnection::SetDeadline(std::chrono::milliseconds after, Deadline kind) {
  timed_out_ = Deadline::kNone;
  deadline_ = kind;
  timer_.expires_after(after);
  timer_.async_wait(
      [self = shared_from_this(), generation = ++timer_generation_, kind](beast::error_code error) {
        if (!error && generation == self->timer_generation_) {
          self->deadline_ = Deadline::kNone;
          self->OnDeadline(kind);
        }
      });
}

void HttpConnection::CancelDeadline() {
  deadline_ = Deadline::kNone;
  ++timer_generation_;
  timer_.cancel();
}

void HttpConnection::OnDeadline(Deadline kind) {
  HttpStats& stats = server_.stats;
  switch (kind) {
    case Deadline::kIdle:
      stats.idle_timeouts.fetch_add(1, std::memory_order_relaxed);
      Close();
      return;
    case Deadline::kHeader:
    case Deadline::kBody:
      (kind == Deadline::kHeader ? stats.header_timeouts : stats.body_timeouts)
          .fetch_add(1, std::memory_order_relaxed);
      // The read in progress ends, and its handler answers 408
      // (OnReadFailed). Cancelling alone would not do: Beast's reads are
      // several reads each, and one issued after the cancel would wait on;
      // with the receiving side shut, every later read ends at once.
      timed_out_ = kind;
      {
        beast::error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_receive, ignored);
        socket_.cancel(ignored);
      }
      return;
    case Deadline::kWrite:
      stats.write_timeouts.fetch_add(1, std::memory_order_relaxed);
      Close();
      return;
    case Deadline::kLinger:
      Close();
      return;
    case Deadline::kNone:
      return;
  }
}

// ---- HttpServer ------------------------------------------------------------------

void HttpServer::Impl::Accept() {
  HttpLoop& target = *loops[next_loop++ % loops.size()];
  acceptor->async_accept(
      target.context, [this, &target](beast::error_code error, tcp::socket socket) {
        if (!acceptor || !acceptor->is_open() || error == asio::error::operation_aborted) return;
        if (error) {
          if (error == asio::error::no_descriptors || error == asio::error::no_buffer_space ||
              error == asio::error::no_memory || error.value() == ENFILE) {
            accept_retry->expires_after(kAcceptRetry);
            accept_retry->async_wait([this](beast::error_code waited) {
              if (!waited) Accept();
            });
            return;
          }
          Accept();
          return;
        }
        asio::post(target.context, [this, &target, socket = std::move(socket)]() mutable {
          Adopt(target, std::move(socket));
        });
        Accept();
      });
}

void HttpServer::Impl::Adopt(HttpLoop& loop, tcp::socket socket) {
  stats.accepted.fetch_add(1, std::memory_order_relaxed);
  beast::error_code ignored;
  if (stopping.load()) {
    socket.close(ignored);
    return;
  }
  uint64_t open = stats.open_connections.fetch_add(1, std::memory_order_relaxed) + 1;
  if (open > limits.max_connections) {
    if (!loop.waiting.empty()) {
      // Room is made by closing the connection that has waited longest
      // without delivering a request: under a flood of slow clients, new
      // clients (a health probe, say) are served and the slow ones cut.
      stats.evicted.fetch_add(1, std::memory_order_relaxed);
      std::shared_ptr<HttpConnection> oldest = loop.connections.at(loop.waiting.front());
      oldest->Close();
    } else {
      stats.open_connections.fetch_sub(1, std::memory_order_relaxed);
      stats.refused.fetch_add(1, std::memory_order_relaxed);
      HttpResponse refusal =
          error_response(503, "the server has " + std::to_string(limits.max_connections) +
                                  " connections open (--max-connections); try again later");
      std::string text = "HTTP/1.1 503 Service Unavailable\r\nServer: relay-vm\r\nContent-Type: " +
                         refusal.content_type +
                         "\r\nContent-Length: " + std::to_string(refusal.body.size()) +
                         "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + refusal.body;
      socket.non_blocking(true, ignored);
      socket.send(asio::buffer(text), 0, ignored);
      socket.shutdown(tcp::socket::shutdown_send, ignored);
      socket.close(ignored);
      return;
    }
  }
  auto connection = std::make_shared<HttpConnection>(*this, loop, std::move(socket));
  loop.connections.emplace(connection.get(), connection);
  connection->Start();
}

void HttpServer::Impl::OnEveryLoop(const std::function<void(HttpLoop&)>& work) {
  std::vector<std::future<void>> done;
  for (const std::unique_ptr<HttpLoop>& loop : loops) {
    auto task = std::make_shared<std::packaged_task<void()>>([&work, &loop] { work(*loop); });
    done.push_back(task->get_future());
    asio::post(loop->context, [task] { (*task)(); });
  }
  for (std::future<void>& each : done) each.wait();
}

void HttpServer::Impl::StopLoops() {
  for (const std::unique_ptr<HttpLoop>& loop : loops) {
    loop->work.reset();
    loop->context.stop();
  }
  for (const std::unique_ptr<HttpLoop>& loop : loops) {
    if (loop->thread.joinable()) loop->thread.join();
  }
}

void HttpServer::Impl::Run(HttpLoop& loop) {
  asio::io_context& context = loop.context;
  while (!context.stopped()) {
    if (loop.awaiting_answers > 0 && loop.awaiting_answers <= spin_for_answers &&
        Clock::now() < loop.spin_until) {
      // Handlers ready now, and sockets ready now, without sleeping.
      if (context.poll() == 0) std::this_thread::yield();
      continue;
    }
    context.run_one();
  }
}

HttpServer::Impl::~Impl() {
  StopLoops();
  // The loops' threads are gone: what they owned is released here.
  acceptor.reset();
  accept_retry.reset();
}

HttpServer::HttpServer(const HttpLimits& limits, size_t threads, Handler handler,
                       ErrorResponse error_response, size_t spin_for_answers)
    : impl_(std::make_unique<Impl>(limits, threads, std::move(handler), std::move(error_response),
                                   spin_for_answers)) {}

HttpServer::~HttpServer() = default;

const HttpStats& HttpServer::stats() const {
  return impl_->stats;
}

std::string HttpServer::DescribeConnections() {
  std::mutex mutex;
  std::string text;
  impl_->OnEveryLoop([&](HttpLoop& loop) {
    for (const std::shared_ptr<HttpConnection>& connection : loop.Snapshot()) {
      std::string line = connection->Describe();
      std::lock_guard<std::mutex> hold(mutex);
      text += line + "\n";
    }
  });
  return text;
}

int HttpServer::Bind(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  auto failure = [&](const beast::error_code& error) {
    std::string reason = error.message();
    if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(reason[0]));
    return Error(ErrorKind::kUsage, "cannot listen on " + where + ": " + reason);
  };
  // A connection is a descriptor: let this process open as many as the
  // system allows it.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  asio::io_context& context = impl_->loops.front()->context;
  beast::error_code error;
  tcp::resolver resolver(context);
  auto endpoints = resolver.resolve(host, std::to_string(port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error) throw failure(error);
  if (endpoints.empty()) throw Error(ErrorKind::kUsage, "cannot listen on " + where);
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor& acceptor = impl_->acceptor.emplace(context);
  acceptor.open(endpoint.protocol(), error);
  // SO_REUSEADDR lets a restarted server bind while its old connections
  // linger in TIME_WAIT; unlike SO_REUSEPORT it never lets two servers
  // listen on one port, so a second one fails here.
  if (!error) acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    impl_->acceptor.reset();
    throw failure(error);
  }
  impl_->accept_retry.emplace(context);
  return acceptor.local_endpoint().port();
}

void HttpServer::Start() {
  if (impl_->started) return;
  if (!impl_->acceptor) throw Error(ErrorKind::kInternal, "HttpServer::Start before Bind");
  impl_->started = true;
  for (const std::unique_ptr<HttpLoop>& loop : impl_->loops) {
    loop->work.emplace(loop->context.get_executor());
    loop->thread = std::thread([impl = impl_.get(), loop = loop.get()] { impl->Run(*loop); });
  }
  asio::post(impl_->loops.front()->context, [impl = impl_.get()] { impl->Accept(); });
}

void HttpServer::BeginShutdown() {
  Impl& impl = *impl_;
  impl.stopping.store(true);
  if (!impl.started) return;
  impl.OnEveryLoop([&impl](HttpLoop& loop) {
    if (&loop == impl.loops.front().get()) {
      beast::error_code ignored;
      if (impl.acceptor) impl.acceptor->close(ignored);
      if (impl.accept_retry) impl.accept_retry->cancel();
    }
    for (const std::shared_ptr<HttpConnection>& connection : loop.Snapshot()) {
      HttpConnection::Phase phase = connection->phase();
      if (phase != HttpConnection::Phase::kProcessing && phase != HttpConnection::Phase::kWriting)
        connection->Close();
    }
  });
}

size_t HttpServer::FinishShutdown(std::chrono::steady_clock::time_point deadline) {
  Impl& impl = *impl_;
  while (impl.stats.open_connections.load() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  size_t open = impl.stats.open_connections.load();
  if (impl.started) {
    impl.OnEveryLoop([](HttpLoop& loop) {
      for (const std::shared_ptr<HttpConnection>& connection : loop.Snapshot()) connection->Close();
    });
  }
  impl.StopLoops();
  return open;
}

}  // namespace relay::serve
