// Listener: accepts TCP connections on the controller's port and hands each to an HttpSession, which
// serves the JSON API and upgrades agent connections (GET /agent with Upgrade: websocket) to an
// AgentSession. Io thread only: the listener and every connection's handlers run on the one I/O thread, no
// strands (the threading rule: README.md, "Threading"; checked by io_thread.hpp).
#pragma once

#include <boost/asio.hpp>
#include <memory>

#include "controller/controller.hpp"

namespace jetsweep::controller {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(boost::asio::io_context& ioc, std::shared_ptr<Controller> controller);
  Status listen(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void start();
  void stop();

 private:
  void accept_next();

  boost::asio::io_context& ioc_;
  std::shared_ptr<Controller> controller_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace jetsweep::controller
