#include "controller/server.hpp"

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <type_traits>

#include "common/campaign.hpp"
#include "common/log.hpp"
#include "controller/agent_session.hpp"
#include "controller/api_call.hpp"
#include "controller/io_thread.hpp"
#include "controller/live_session.hpp"
#include "controller/web_auth.hpp"
#include "net/tls.hpp"

namespace jetsweep::controller {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

// The API's largest body is a campaign's YAML: the campaign limit max_yaml_bytes (common/campaign.hpp), plus
// slack; a larger body is refused with 413 as its header announces it, before it is buffered.
constexpr size_t kRequestBodySlack = 64u << 10;
constexpr size_t kMaxRequestBody = static_cast<size_t>(kMaxCampaignYamlBytes) + kRequestBodySlack;

// Accept backoff at the file-descriptor limit (and on any other accept error).
constexpr std::chrono::milliseconds kAcceptBackoffInitial{10};
constexpr std::chrono::milliseconds kAcceptBackoffMax{1000};
constexpr std::chrono::seconds kAcceptFailureLogEvery{10};

// What a plain (non-TLS) client that is not on loopback is told when the controller serves TLS.
constexpr const char* kTlsRequired =
    "this controller requires TLS from non-loopback clients: use https://HOST:PORT for the API and wss://HOST:PORT "
    "for agents (with --ca FILE)";

// A JSON error answer that ends the connection.
HttpResponse refusal(http::status status, unsigned version, const std::string& error) {
  HttpResponse res{status, version};
  res.set(http::field::content_type, "application/json");
  res.body() = "{\"error\":\"" + error + "\"}\n";
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

std::string peer_of(tcp::socket& socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
}

// One HTTP connection over `Stream` (beast::tcp_stream, or TlsStream after detection): reads requests in turn
// (keep-alive), answers API calls, upgrades agents. `tls_required`: a plain connection from a non-loopback peer
// to a TLS controller, whose every request is answered 403.
template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  HttpSession(Stream&& stream, std::shared_ptr<Controller> controller, bool tls_required, beast::flat_buffer&& buffer)
      : stream_(std::move(stream)),
        controller_(std::move(controller)),
        tls_required_(tls_required),
        buffer_(std::move(buffer)) {}

  void run() {
    check_io_thread_of(stream_.get_executor(), "HttpSession::run");
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
      auto self = this->shared_from_this();
      stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                              // (`used` defaulted: Boost 1.81's C++20 constraint on this overload checks the
                              // handler against void(error_code) as well.)
                              [self](beast::error_code ec, std::size_t used = 0) {
                                check_io_thread_of(self->stream_.get_executor(), "HttpSession TLS handshake handler");
                                if (ec) {
                                  JS_LOG_INFO << "TLS handshake with "
                                              << peer_of(beast::get_lowest_layer(self->stream_).socket())
                                              << " failed: " << ec.message();
                                  return;
                                }
                                self->buffer_.consume(used);
                                self->read_next();
                              });
    } else {
      read_next();
    }
  }

 private:
  void read_next() {
    parser_.emplace();
    parser_->body_limit(tls_required_ ? 0 : kMaxRequestBody);
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(60));
    auto self = this->shared_from_this();
    http::async_read(stream_, buffer_, *parser_, [self](beast::error_code ec, std::size_t) {
      check_io_thread_of(self->stream_.get_executor(), "HttpSession read handler");
      if (self->tls_required_ && (!ec || ec == http::error::body_limit))
        return self->write(refusal(http::status::forbidden, 11, kTlsRequired));
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
      if (beast::websocket::is_upgrade(req)) return self->upgrade(std::move(req));
      if (req.method() == http::verb::get && split_path(req.target()) == std::vector<std::string>{"api", "events"})
        return self->events(std::move(req));
      self->controller_->handle_api(std::move(req), [self](HttpResponse&& res) { self->write(std::move(res)); });
    });
  }

  // An agent's WebSocket upgrade: checked, then the stream goes to an AgentSession.
  void upgrade(HttpRequest&& req) {
    if (req.target() != "/agent")
      return write(refusal(http::status::not_found, req.version(), "websocket endpoint is /agent"));
    // The enrollment secret admits any agent; an enrolled agent's credential header admits it to register that name
    // only (checked at registration: AgentSession, Store::register_agent).
    if (!authorized(req[http::field::authorization], controller_->options().enroll_secret) &&
        !proto::is_credential_text(req[proto::kCredentialHeader])) {
      JS_LOG_WARN << "agent connection refused: missing or wrong enrollment secret";
      return write(refusal(http::status::unauthorized, req.version(), "missing or wrong enrollment secret"));
    }
    beast::get_lowest_layer(stream_).expires_never();
    if constexpr (kTls) {
      std::make_shared<AgentSession>(net::WsStream(std::move(stream_)), controller_)->run(std::move(req));
    } else {
      std::make_shared<AgentSession>(stream_.release_socket(), controller_)->run(std::move(req));
    }
  }

  // GET /api/events: authorised as the API (the token, the viewer token or the login cookie), then the stream goes
  // to a LiveSession subscribed to the controller's LiveHub.
  void events(HttpRequest&& req) {
    if (controller_->web_auth().identify(req).role == Role::kNone)
      return write(refusal(http::status::unauthorized, req.version(),
                           "missing or wrong API token (Authorization: Bearer ..., or log in on the dashboard)"));
    std::make_shared<LiveSession<Stream>>(std::move(stream_))->start(controller_->live_hub());
  }

  void write(HttpResponse&& res) {
    // The login cookie is marked Secure on TLS connections (the browser then never sends it over plain http).
    if constexpr (kTls) {
      if (auto it = res.find(http::field::set_cookie); it != res.end()) {
        std::string cookie(it->value());
        if (cookie.find("; Secure") == std::string::npos) res.set(http::field::set_cookie, cookie + "; Secure");
      }
    }
    auto shared = std::make_shared<HttpResponse>(std::move(res));
    auto self = this->shared_from_this();
    http::async_write(stream_, *shared, [self, shared](beast::error_code ec, std::size_t) {
      check_io_thread_of(self->stream_.get_executor(), "HttpSession write handler");
      if (ec) return self->shutdown();
      if (!shared->keep_alive()) return self->shutdown();
      self->read_next();
    });
  }

  void shutdown() {
    beast::error_code ignored;
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      auto self = this->shared_from_this();
      stream_.async_shutdown([self](beast::error_code) {
        beast::error_code ignored_too;
        beast::get_lowest_layer(self->stream_).socket().shutdown(tcp::socket::shutdown_both, ignored_too);
      });
    } else {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  std::shared_ptr<Controller> controller_;
  bool tls_required_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

// A new connection to a TLS controller: TLS (https, wss) or plain (loopback only), told apart by its first bytes.
class DetectSession : public std::enable_shared_from_this<DetectSession> {
 public:
  DetectSession(tcp::socket&& socket, std::shared_ptr<Controller> controller, std::shared_ptr<asio::ssl::context> tls)
      : stream_(std::move(socket)), controller_(std::move(controller)), tls_(std::move(tls)) {}

  void run() {
    stream_.expires_after(std::chrono::seconds(30));
    auto self = shared_from_this();
    beast::async_detect_ssl(stream_, buffer_, [self](beast::error_code ec, bool is_tls) {
      check_io_thread_of(self->stream_.get_executor(), "DetectSession handler");
      if (ec) {
        JS_LOG_DEBUG << "connection from " << peer_of(self->stream_.socket()) << " closed before a request: " << ec.message();
        return;
      }
      if (is_tls) {
        std::make_shared<HttpSession<TlsStream>>(TlsStream(std::move(self->stream_), *self->tls_), self->controller_,
                                                 false, std::move(self->buffer_))
            ->run();
        return;
      }
      beast::error_code ep_ec;
      const auto peer = self->stream_.socket().remote_endpoint(ep_ec);
      const bool loopback = !ep_ec && net::is_loopback(peer.address());
      if (!loopback)
        JS_LOG_WARN << "plain (non-TLS) connection from " << peer_of(self->stream_.socket())
                    << " refused: TLS is required from non-loopback clients";
      std::make_shared<HttpSession<beast::tcp_stream>>(std::move(self->stream_), self->controller_, !loopback,
                                                       std::move(self->buffer_))
          ->run();
    });
  }

 private:
  beast::tcp_stream stream_;
  std::shared_ptr<Controller> controller_;
  std::shared_ptr<asio::ssl::context> tls_;
  beast::flat_buffer buffer_;
};

}  // namespace

Listener::Listener(asio::io_context& ioc, std::shared_ptr<Controller> controller, std::shared_ptr<asio::ssl::context> tls)
    : ioc_(ioc),
      controller_(std::move(controller)),
      tls_(std::move(tls)),
      acceptor_(ioc),
      retry_timer_(ioc),
      accept_backoff_(kAcceptBackoffInitial) {}

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
  retry_timer_.cancel();
}

void Listener::accept_next() {
  auto self = shared_from_this();
  acceptor_.async_accept(ioc_, [self](beast::error_code ec, tcp::socket socket) {
    check_io_thread(self->ioc_, "Listener accept handler");
    if (ec == asio::error::operation_aborted) return;
    if (ec) return self->accept_failed(ec);
    if (self->accept_failures_ > 0) {
      JS_LOG_INFO << "accepting connections again after " << self->accept_failures_ << " failed accepts";
      self->accept_failures_ = 0;
      self->unreported_failures_ = 0;
      self->accept_backoff_ = kAcceptBackoffInitial;
    }
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (self->tls_)
      std::make_shared<DetectSession>(std::move(socket), self->controller_, self->tls_)->run();
    else
      std::make_shared<HttpSession<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), self->controller_, false,
                                                       beast::flat_buffer())
          ->run();
    self->accept_next();
  });
}

// A failed accept (typically EMFILE/ENFILE: out of file descriptors; the connection stays in the backlog):
// retried after a doubling pause, so that the loop does not spin, with one log line per kAcceptFailureLogEvery.
void Listener::accept_failed(const boost::system::error_code& ec) {
  ++accept_failures_;
  ++unreported_failures_;
  const auto now = std::chrono::steady_clock::now();
  if (!last_failure_log_ || now - *last_failure_log_ >= kAcceptFailureLogEvery) {
    const bool fd_limit = ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system;
    JS_LOG_WARN << "accept failed: " << ec.message()
                << (fd_limit ? " (the file-descriptor limit: raise LimitNOFILE / ulimit -n, or close connections)" : "")
                << "; " << unreported_failures_ << " failure" << (unreported_failures_ == 1 ? "" : "s")
                << (last_failure_log_ ? " since the last report" : "") << ", retrying in " << accept_backoff_.count()
                << " ms (backing off up to " << kAcceptBackoffMax.count() << " ms)";
    last_failure_log_ = now;
    unreported_failures_ = 0;
  }
  retry_timer_.expires_after(accept_backoff_);
  accept_backoff_ = std::min(kAcceptBackoffMax, accept_backoff_ * 2);
  auto self = shared_from_this();
  retry_timer_.async_wait([self](beast::error_code ec) {
    check_io_thread(self->ioc_, "Listener accept retry");
    if (ec || !self->acceptor_.is_open()) return;
    self->accept_next();
  });
}

}  // namespace jetsweep::controller
