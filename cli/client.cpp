#include "cli/client.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "common/json_parse.hpp"
#include "net/tls.hpp"

namespace jetsweep::cli {
namespace bj = boost::json;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {

Status split_url(const std::string& url, std::string& host, std::string& port, bool& tls) {
  tls = url.rfind("https://", 0) == 0;
  if (!tls && url.rfind("http://", 0) != 0)
    return invalid_argument("--controller '" + url + "': must start with http:// or https://");
  std::string rest = url.substr(tls ? 8 : 7);
  rest = rest.substr(0, rest.find('/'));
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
    return invalid_argument("--controller '" + url + "': expected " + (tls ? "https" : "http") + "://HOST:PORT");
  host = rest.substr(0, colon);
  port = rest.substr(colon + 1);
  return Status::ok();
}

// One request/response exchange on a connected stream (plain or TLS).
constexpr uint64_t kMaxResponseBytes = uint64_t{1} << 30;

template <class Stream>
HttpResult exchange(Stream& stream, const std::string& host, const std::string& port, const std::string& method,
                    const std::string& target, const std::string& body, const Headers& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, host + ":" + port);
  req.set(http::field::user_agent, "jetsweep-cli");
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty()) {
    req.body() = body;
    req.prepare_payload();
  }
  http::write(stream, req);
  beast::flat_buffer buffer;
  // Beast's default limit (8 MB) is below a long campaign's `report --json` (every epoch of every run).
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBytes);
  http::read(stream, buffer, parser);
  auto res = parser.release();
  return HttpResult{static_cast<int>(res.result_int()), res.body()};
}

}  // namespace

Result<HttpResult> http_request(const std::string& base_url, const std::string& method, const std::string& target,
                                const std::string& body, const Headers& headers, const std::string& ca_file) {
  std::string host, port;
  bool tls = false;
  JS_RETURN_IF_ERROR(split_url(base_url, host, port, tls));
  std::shared_ptr<ssl::context> context;
  if (tls) {
    JS_ASSIGN_OR_RETURN(context, net::make_client_tls_context(ca_file));
  }
  boost::asio::io_context ioc;
  tcp::resolver resolver(ioc);
  try {
    if (!tls) {
      beast::tcp_stream stream(ioc);
      stream.expires_after(std::chrono::seconds(30));
      stream.connect(resolver.resolve(host, port));
      HttpResult r = exchange(stream, host, port, method, target, body, headers);
      beast::error_code ec;
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      return r;
    }
    beast::ssl_stream<beast::tcp_stream> stream(ioc, *context);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    beast::get_lowest_layer(stream).connect(resolver.resolve(host, port));
    boost::system::error_code not_an_address;
    (void)boost::asio::ip::make_address(host, not_an_address);   // SNI carries host names only
    if (not_an_address) SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
    stream.set_verify_callback(ssl::host_name_verification(host));
    beast::error_code ec;
    stream.handshake(ssl::stream_base::client, ec);
    if (ec)
      return unavailable("controller at " + base_url + ": TLS handshake failed: " +
                         net::describe_tls_failure(ec, ca_file));
    HttpResult r = exchange(stream, host, port, method, target, body, headers);
    stream.shutdown(ec);   // the controller may just close: not an error for a finished exchange
    return r;
  } catch (const boost::system::system_error& e) {
    return unavailable("controller at " + base_url + " not reachable: " + e.code().message());
  }
}

Result<bj::value> ApiClient::call(const std::string& method, const std::string& target, const std::string& body,
                                  const Headers& headers) {
  Headers all = headers;
  if (!token_.empty()) all.emplace_back("Authorization", "Bearer " + token_);
  JS_ASSIGN_OR_RETURN(HttpResult r, http_request(base_url_, method, target, body, all, ca_file_));
  bj::error_code ec;
  auto v = json::parse_exact(r.body, ec);
  if (ec) return protocol_error("controller answered HTTP " + std::to_string(r.status) + " with a body that is not JSON");
  if (r.status >= 400) {
    auto error = api::decode<api::ErrorReply>(v, "error answer");
    const std::string message = error ? error->error : r.body;
    // The request's fault (400 bad input, 401 token, 413 too large) is an input error (exit 2); 404 not found;
    // the rest (500, 503 busy or database down) the controller's.
    const bool input_error = r.status == 400 || r.status == 401 || r.status == 413;
    return Status(r.status == 404 ? Code::kNotFound : input_error ? Code::kInvalidArgument : Code::kInternal, message);
  }
  return v;
}

}  // namespace jetsweep::cli
