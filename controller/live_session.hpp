// LiveSession: one GET /api/events stream (server-sent events) over `Stream` (beast::tcp_stream, or a TLS stream
// over one), handed over by HttpSession once the request was authorised: writes the response head, subscribes to
// the LiveHub, then writes the frames the hub offers, one at a time, keeping at most the newest unsent one. It
// reads only to notice the client going away. A write that does not finish within kWriteTimeout closes it. Io
// thread only (the threading rule: README.md, "Threading").
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <string>
#include <type_traits>

#include "controller/io_thread.hpp"
#include "controller/live_hub.hpp"

namespace jetsweep::controller {

template <class Stream>
class LiveSession : public LiveSubscriber, public std::enable_shared_from_this<LiveSession<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

 public:
  static constexpr std::chrono::seconds kWriteTimeout{30};

  explicit LiveSession(Stream&& stream) : stream_(std::move(stream)) {}

  // Writes the response head and starts streaming the hub's snapshots.
  void start(LiveHub& hub) {
    check_io_thread_of(stream_.get_executor(), "LiveSession::start");
    pending_ = std::make_shared<const std::string>(
        "HTTP/1.1 200 OK\r\nServer: jetsweep-controller\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
        "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\nretry: 2000\n\n");
    boost::beast::get_lowest_layer(stream_).expires_never();   // before the read: only writes have a timeout
    read_next();
    write_next();   // the head is being written from here on; offered frames wait in pending_
    hub.subscribe(this->shared_from_this());
  }

  void offer(std::shared_ptr<const std::string> frame) override {
    if (!open_) return;
    pending_ = std::move(frame);   // replaces an unsent one: never a queue
    write_next();
  }

  void heartbeat() override {
    if (!open_ || writing_ || pending_) return;
    static const auto kComment = std::make_shared<const std::string>(": keep-alive\n\n");
    pending_ = kComment;
    write_next();
  }

  bool open() const override { return open_; }

  void close() override {
    if (!open_) return;
    open_ = false;
    pending_.reset();
    boost::beast::error_code ignored;
    auto& socket = boost::beast::get_lowest_layer(stream_).socket();
    if constexpr (kTls) {
      boost::beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](boost::beast::error_code) {
        boost::beast::error_code ignored_too;
        boost::beast::get_lowest_layer(self->stream_).socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both,
                                                                         ignored_too);
      });
    } else {
      socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    }
  }

 private:
  void write_next() {
    if (writing_ || !open_) return;
    if (!pending_) return;
    current_ = std::move(pending_);
    writing_ = true;
    boost::beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
    boost::asio::async_write(stream_, boost::asio::buffer(*current_),
                             [self = this->shared_from_this()](boost::beast::error_code ec, std::size_t) {
                               check_io_thread_of(self->stream_.get_executor(), "LiveSession write handler");
                               self->writing_ = false;
                               self->current_.reset();
                               if (ec) return self->close();
                               if (self->open_) boost::beast::get_lowest_layer(self->stream_).expires_never();
                               self->write_next();
                             });
  }

  void read_next() {
    stream_.async_read_some(boost::asio::buffer(scratch_),
                            [self = this->shared_from_this()](boost::beast::error_code ec, std::size_t) {
                              check_io_thread_of(self->stream_.get_executor(), "LiveSession read handler");
                              if (ec) return self->close();   // the client went away (or we closed)
                              self->read_next();               // anything it sends is ignored
                            });
  }

  Stream stream_;
  std::shared_ptr<const std::string> current_, pending_;   // being written; the next to write (at most one)
  bool writing_ = false, open_ = true;
  char scratch_[512];
};

}  // namespace jetsweep::controller
