// WsStream: one WebSocket connection over plain TCP or over TLS (Boost.Beast's ssl_stream), with the few operations
// the controller's AgentSession and the agent's connection use, so that neither cares which it is. Owns the
// stream; like the Beast stream it wraps, it is used from its executor's thread only. Header-only, C++17.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <utility>
#include <variant>

namespace jetsweep::net {

class WsStream {
 public:
  using TlsLayer = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  using Plain = boost::beast::websocket::stream<boost::beast::tcp_stream>;
  using Tls = boost::beast::websocket::stream<TlsLayer>;

  // Server side: an accepted plain socket, or a TLS stream whose handshake is done.
  WsStream(boost::asio::ip::tcp::socket&& socket) : s_(std::in_place_type<Plain>, std::move(socket)) {}  // NOLINT
  WsStream(TlsLayer&& stream) : s_(std::in_place_type<Tls>, std::move(stream)) {}                       // NOLINT
  // Client side: not yet connected; with a context: TLS.
  explicit WsStream(boost::asio::io_context& ioc) : s_(std::in_place_type<Plain>, ioc) {}
  WsStream(boost::asio::io_context& ioc, boost::asio::ssl::context& tls) : s_(std::in_place_type<Tls>, ioc, tls) {}

  bool is_tls() const { return std::holds_alternative<Tls>(s_); }
  // The TLS layer (for the client's handshake, SNI and host check); is_tls() must hold.
  TlsLayer& tls_layer() { return std::get<Tls>(s_).next_layer(); }
  boost::beast::tcp_stream& tcp() {
    return std::visit([](auto& s) -> boost::beast::tcp_stream& { return boost::beast::get_lowest_layer(s); }, s_);
  }
  boost::asio::ip::tcp::socket& socket() { return tcp().socket(); }
  boost::asio::any_io_executor get_executor() {
    return std::visit([](auto& s) -> boost::asio::any_io_executor { return s.get_executor(); }, s_);
  }

  template <class Option>
  void set_option(Option option) {
    std::visit([&](auto& s) { s.set_option(std::move(option)); }, s_);
  }
  void read_message_max(std::size_t bytes) {
    std::visit([&](auto& s) { s.read_message_max(bytes); }, s_);
  }
  void text(bool on) {
    std::visit([&](auto& s) { s.text(on); }, s_);
  }

  template <class Request, class Handler>
  void async_accept(const Request& req, Handler&& handler) {
    std::visit([&](auto& s) { s.async_accept(req, std::forward<Handler>(handler)); }, s_);
  }
  template <class Handler>
  void async_handshake(boost::beast::websocket::response_type& res, const std::string& host, const std::string& target,
                       Handler&& handler) {
    std::visit([&](auto& s) { s.async_handshake(res, host, target, std::forward<Handler>(handler)); }, s_);
  }
  template <class Buffer, class Handler>
  void async_read(Buffer& buffer, Handler&& handler) {
    std::visit([&](auto& s) { s.async_read(buffer, std::forward<Handler>(handler)); }, s_);
  }
  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    std::visit([&](auto& s) { s.async_write(buffers, std::forward<Handler>(handler)); }, s_);
  }
  template <class Handler>
  void async_close(boost::beast::websocket::close_reason reason, Handler&& handler) {
    std::visit([&](auto& s) { s.async_close(reason, std::forward<Handler>(handler)); }, s_);
  }

 private:
  std::variant<Plain, Tls> s_;
};

}  // namespace jetsweep::net
