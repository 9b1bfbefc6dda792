// TcpProxy: a loopback TCP relay for fault injection. Listens on 127.0.0.1:<ephemeral>, forwards each
// connection to 127.0.0.1:<target>, and cut() drops every live connection at once (both sides see a
// reset), as a network failure would. Owns its io thread; public methods may be called from any thread.
#pragma once

#include <boost/asio.hpp>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace jetsweep::testing {

class TcpProxy {
 public:
  explicit TcpProxy(uint16_t target_port);
  ~TcpProxy();
  uint16_t port() const { return port_; }
  void cut();
  int64_t connections_accepted() const { return accepted_.load(); }

 private:
  struct Pair;
  void accept_next();
  void pump(std::shared_ptr<Pair> pair, bool client_to_server);

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t target_port_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<std::weak_ptr<Pair>> pairs_;
  std::atomic<int64_t> accepted_{0};
  std::thread thread_;
};

}  // namespace jetsweep::testing
