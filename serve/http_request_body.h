// The body type the HTTP layer (http_server.cc) reads requests into: a
// Beast Body whose bytes are a std::string (1) reserved once to a declared
// Content-Length plus kRequestBodyPadding, so that the body is neither
// reallocated while it arrives nor copied for simdjson, and (2) charged to
// the server's cap on request bytes in flight as it grows, so that a body
// the cap cannot hold is refused before it is read, not after.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "serve/http_server.h"

namespace relay::serve {

// The cap on request bytes in flight over every connection.
class InflightBytes {
 public:
  InflightBytes(size_t limit, std::atomic<uint64_t>& gauge) : limit_(limit), held_(gauge) {}

  // Takes `bytes` more if that stays within the limit.
  bool TryTake(size_t bytes) {
    uint64_t held = held_.load(std::memory_order_relaxed);
    do {
      if (held + bytes > limit_) return false;
    } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }
  void Give(size_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t>& held_;
};

// One request's share of InflightBytes; given back when reset or destroyed.
class InflightReservation {
 public:
  InflightReservation() = default;
  InflightReservation(const InflightReservation&) = delete;
  InflightReservation& operator=(const InflightReservation&) = delete;
  ~InflightReservation() { Reset(); }

  void Bind(InflightBytes& pool) {
    Reset();
    pool_ = &pool;
  }
  // Holds at least `bytes` in all; false when the cap cannot take them.
  bool GrowTo(size_t bytes) {
    if (bytes <= held_) return true;
    if (pool_ == nullptr || !pool_->TryTake(bytes - held_)) return false;
    held_ = bytes;
    return true;
  }
  void Reset() {
    if (pool_ != nullptr && held_ > 0) pool_->Give(held_);
    held_ = 0;
  }

 private:
  InflightBytes* pool_ = nullptr;
  size_t held_ = 0;
};

// The error a body reports when the cap cannot hold it (answered 503).
inline const boost::system::error_category& InflightCategory() {
  static const struct : boost::system::error_category {
    const char* name() const noexcept override { return "relay.serve.inflight"; }
    std::string message(int) const override { return "too many request bytes in flight"; }
  } category;
  return category;
}

struct BudgetedStringBody {
  struct value_type {
    std::string bytes;
    // Set by the connection once the headers are read, before the body.
    InflightReservation* reservation = nullptr;
    size_t limit = 0;  // max_body_bytes
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, boost::beast::error_code& error) {
      error = {};
      if (!length) return;  // chunked: charged as it grows, in put
      if (!Charge(static_cast<size_t>(*length), error)) return;
      body_.bytes.reserve(static_cast<size_t>(*length) + kRequestBodyPadding);
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& error) {
      error = {};
      const size_t size = body_.bytes.size();
      const size_t added = boost::asio::buffer_size(buffers);
      if (size + added > body_.limit) {
        error = boost::beast::http::error::body_limit;
        return 0;
      }
      if (size + added + kRequestBodyPadding > body_.bytes.capacity()) {
        // A chunked body: grows by doubling, within the limit.
        size_t capacity =
            std::min(std::max(size + added, 2 * body_.bytes.capacity()), body_.limit) +
            kRequestBodyPadding;
        if (!Charge(capacity - kRequestBodyPadding, error)) return 0;
        body_.bytes.reserve(capacity);
      }
      for (auto buffer = boost::asio::buffer_sequence_begin(buffers);
           buffer != boost::asio::buffer_sequence_end(buffers); ++buffer) {
        boost::asio::const_buffer piece(*buffer);
        body_.bytes.append(static_cast<const char*>(piece.data()), piece.size());
      }
      return added;
    }

    void finish(boost::beast::error_code& error) { error = {}; }

   private:
    bool Charge(size_t bytes, boost::beast::error_code& error) {
      if (body_.reservation == nullptr || body_.reservation->GrowTo(bytes)) return true;
      error = boost::beast::error_code(1, InflightCategory());
      return false;
    }

    value_type& body_;
  };
};

}  // namespace relay::serve
