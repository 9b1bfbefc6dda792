#include "controller/server.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "common/campaign.hpp"
#include "common/log.hpp"
#include "controller/agent_session.hpp"
#include "controller/io_thread.hpp"

namespace jetsweep::controller {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The API's largest body is a campaign's YAML: the campaign limit max_yaml_bytes (common/campaign.hpp), plus
// slack; a larger body is refused with 413 as its header announces it, before it is buffered.
constexpr size_t kRequestBodySlack = 64u << 10;
constexpr size_t kMaxRequestBody = static_cast<size_t>(kMaxCampaignYamlBytes) + kRequestBodySlack;

// A JSON error answer that ends the connection.
HttpResponse refusal(http::status status, unsigned version, const std::string& error) {
  HttpResponse res{status, version};
  res.set(http::field::content_type, "application/json");
  res.body() = "{\"error\":\"" + error + "\"}\n";
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

// One HTTP connection: reads requests in turn (keep-alive), answers API calls, upgrades agents.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket&& socket, std::shared_ptr<Controller> controller)
      : stream_(std::move(socket)), controller_(std::move(controller)) {}

  void run() {
    check_io_thread_of(stream_.get_executor(), "HttpSession::run");
    read_next();
  }

 private:
  void read_next() {
    parser_.emplace();
    parser_->body_limit(kMaxRequestBody);
    stream_.expires_after(std::chrono::seconds(60));
    auto self = shared_from_this();
    http::async_read(stream_, buffer_, *parser_, [self](beast::error_code ec, std::size_t) {
      check_io_thread_of(self->stream_.get_executor(), "HttpSession read handler");
      if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted || ec == beast::error::timeout)
        return self->shutdown();
      if (ec) {
        if (ec == http::error::body_limit)
          return self->write(refusal(http::status::payload_too_large, 11,
                                     "request body exceeds the limit of " + std::to_string(kMaxRequestBody) +
                                         " bytes (a campaign's YAML: max_yaml_bytes = " +
                                         std::to_string(kMaxCampaignYamlBytes) + ", docs/CAMPAIGNS.md)"));
        JS_LOG_DEBUG << "http read failed: " << ec.message();
        return self->shutdown();
      }
      HttpRequest req = self->parser_->release();
      if (beast::websocket::is_upgrade(req)) {
        if (req.target() != "/agent")
          return self->write(refusal(http::status::not_found, req.version(), "websocket endpoint is /agent"));
        if (!authorized(req[http::field::authorization], self->controller_->options().enroll_secret)) {
          JS_LOG_WARN << "agent connection refused: missing or wrong enrollment secret";
          return self->write(refusal(http::status::unauthorized, req.version(), "missing or wrong enrollment secret"));
        }
        self->stream_.expires_never();
        std::make_shared<AgentSession>(self->stream_.release_socket(), self->controller_)->run(std::move(req));
        return;
      }
      self->controller_->handle_api(std::move(req), [self](HttpResponse&& res) { self->write(std::move(res)); });
    });
  }

  void write(HttpResponse&& res) {
    auto shared = std::make_shared<HttpResponse>(std::move(res));
    auto self = shared_from_this();
    http::async_write(stream_, *shared, [self, shared](beast::error_code ec, std::size_t) {
      check_io_thread_of(self->stream_.get_executor(), "HttpSession write handler");
      if (ec) return self->shutdown();
      if (!shared->keep_alive()) return self->shutdown();
      self->read_next();
    });
  }

  void shutdown() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Controller> controller_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

}  // namespace

Listener::Listener(asio::io_context& ioc, std::shared_ptr<Controller> controller)
    : ioc_(ioc), controller_(std::move(controller)), acceptor_(ioc) {}

Status Listener::listen(const tcp::endpoint& endpoint) {
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return io_error("cannot listen on " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port()) +
                    ": " + ec.message());
  return Status::ok();
}

tcp::endpoint Listener::local_endpoint() const {
  beast::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void Listener::start() {
  JS_CHECK_IO_THREAD(ioc_);
  accept_next();
}

void Listener::stop() {
  JS_CHECK_IO_THREAD(ioc_);
  beast::error_code ignored;
  acceptor_.close(ignored);
}

void Listener::accept_next() {
  auto self = shared_from_this();
  acceptor_.async_accept(ioc_, [self](beast::error_code ec, tcp::socket socket) {
    check_io_thread(self->ioc_, "Listener accept handler");
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      JS_LOG_WARN << "accept failed: " << ec.message();
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<HttpSession>(std::move(socket), self->controller_)->run();
    }
    self->accept_next();
  });
}

}  // namespace jetsweep::controller
