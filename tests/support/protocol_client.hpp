// ProtocolClient: an agent's end of the wire protocol (common/protocol.hpp) inside the test's own process: a
// Beast WebSocket client over loopback on the test's io_context, next to the controller it talks to. It
// sends what the test tells it to and records everything the controller sends; it answers nothing by
// itself. Io thread (the test's) only; drive it with io_drain.hpp.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/protocol.hpp"

namespace jetsweep::testing {

// A register message for a test agent: class `device_class`, plenty of memory, no storage media.
proto::Register test_register(const std::string& name, const std::string& device_class = "host");

class ProtocolClient : public std::enable_shared_from_this<ProtocolClient> {
 public:
  static std::shared_ptr<ProtocolClient> create(boost::asio::io_context& ioc);

  // Connects to ws://127.0.0.1:PORT/agent (with `secret` as the bearer token and `credential` in the credential
  // header when not empty); asynchronous: connected() or closed() tells how it went.
  void connect(uint16_t port, const std::string& secret = "", const std::string& credential = "");
  // Sends one message; messages the controller acknowledges get the next sequence id, which is returned
  // (0 for the others).
  uint64_t send(proto::Body body);
  // Sends `frame` as it is (malformed input: the controller's decoder must refuse it).
  void send_raw(std::string frame);
  void close();   // closes the TCP connection at once (an agent that vanished)

  bool connected() const { return connected_; }
  bool closed() const { return closed_; }
  size_t unsent() const { return queue_.size(); }   // frames not yet written to the socket
  const std::vector<proto::Envelope>& received() const { return received_; }

  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& env : received_)
      if (const auto* m = std::get_if<T>(&env.body)) out.push_back(*m);
    return out;
  }
  template <class T>
  size_t count() const {
    return all<T>().size();
  }
  bool acked(uint64_t id) const;

 private:
  explicit ProtocolClient(boost::asio::io_context& ioc);
  void write_next();
  void read_next();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  std::vector<proto::Envelope> received_;
  uint64_t next_id_ = 1;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace jetsweep::testing
