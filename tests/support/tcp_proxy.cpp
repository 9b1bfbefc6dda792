#include "support/tcp_proxy.hpp"

#include <array>

namespace jetsweep::testing {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct TcpProxy::Pair {
  explicit Pair(asio::io_context& ioc) : client(ioc), server(ioc) {}
  tcp::socket client;
  tcp::socket server;
  std::array<char, 65536> up{};
  std::array<char, 65536> down{};
  void close() {
    boost::system::error_code ec;
    // SO_LINGER 0 turns the close into a reset: the peers see an abrupt failure, not a clean FIN.
    client.set_option(asio::socket_base::linger(true, 0), ec);
    server.set_option(asio::socket_base::linger(true, 0), ec);
    client.close(ec);
    server.close(ec);
  }
};

TcpProxy::TcpProxy(uint16_t target_port)
    : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), target_port_(target_port) {
  port_ = acceptor_.local_endpoint().port();
  accept_next();
  thread_ = std::thread([this] { ioc_.run(); });
}

TcpProxy::~TcpProxy() {
  asio::post(ioc_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
  cut();
  ioc_.stop();
  thread_.join();
}

void TcpProxy::cut() {
  asio::post(ioc_, [this] {
    std::lock_guard lock(mu_);
    for (auto& w : pairs_)
      if (auto p = w.lock()) p->close();
    pairs_.clear();
  });
}

void TcpProxy::accept_next() {
  auto pair = std::make_shared<Pair>(ioc_);
  acceptor_.async_accept(pair->client, [this, pair](boost::system::error_code ec) {
    if (ec) return;
    ++accepted_;
    pair->server.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), target_port_),
                               [this, pair](boost::system::error_code ec2) {
                                 if (ec2) return pair->close();
                                 {
                                   std::lock_guard lock(mu_);
                                   pairs_.push_back(pair);
                                 }
                                 pump(pair, true);
                                 pump(pair, false);
                               });
    accept_next();
  });
}

void TcpProxy::pump(std::shared_ptr<Pair> pair, bool client_to_server) {
  tcp::socket& from = client_to_server ? pair->client : pair->server;
  tcp::socket& to = client_to_server ? pair->server : pair->client;
  auto& buf = client_to_server ? pair->up : pair->down;
  from.async_read_some(asio::buffer(buf), [this, pair, client_to_server, &to, &buf](boost::system::error_code ec,
                                                                                     std::size_t n) {
    if (ec) return pair->close();
    asio::async_write(to, asio::buffer(buf.data(), n), [this, pair, client_to_server](boost::system::error_code ec2,
                                                                                      std::size_t) {
      if (ec2) return pair->close();
      pump(pair, client_to_server);
    });
  });
}

}  // namespace jetsweep::testing
