// Listener: accepts TCP connections on the controller's port and hands each to an HttpSession, which
// serves the JSON API and upgrades agent connections (GET /agent with Upgrade: websocket) to an
// AgentSession. With a TLS context (--tls-cert/--tls-key) each connection is detected as TLS or plain: TLS ones
// get https and wss; a plain one is served only from a loopback peer, anyone else gets 403 "TLS required".
// At the file-descriptor limit (EMFILE/ENFILE) accepting backs off (10 ms doubling to 1 s, reset by the next
// accepted connection) with one log line per 10 s. Io thread only: the listener and every connection's
// handlers run on the one I/O thread, no strands (the threading rule: README.md, "Threading"; checked by
// io_thread.hpp).
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <memory>
#include <optional>

#include "controller/controller.hpp"

namespace boost::asio::ssl {
class context;
}

namespace jetsweep::controller {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // tls: the server's context (net/tls.hpp); null serves plain HTTP/WebSocket only, as without --tls-cert.
  Listener(boost::asio::io_context& ioc, std::shared_ptr<Controller> controller,
           std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  Status listen(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void start();
  void stop();

 private:
  void accept_next();
  void accept_failed(const boost::system::error_code& ec);

  boost::asio::io_context& ioc_;
  std::shared_ptr<Controller> controller_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;   // the next accept after a failed one
  std::chrono::milliseconds accept_backoff_;
  int64_t accept_failures_ = 0;             // consecutive failed accepts
  int64_t unreported_failures_ = 0;         // failed accepts since the last log line about them
  std::optional<std::chrono::steady_clock::time_point> last_failure_log_;
};

}  // namespace jetsweep::controller
