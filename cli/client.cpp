#include "cli/client.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace jetsweep::cli {
namespace bj = boost::json;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

Status split_url(const std::string& url, std::string& host, std::string& port) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return invalid_argument("--controller '" + url + "': must start with http://");
  std::string rest = url.substr(scheme.size());
  rest = rest.substr(0, rest.find('/'));
  auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
    return invalid_argument("--controller '" + url + "': expected http://HOST:PORT");
  host = rest.substr(0, colon);
  port = rest.substr(colon + 1);
  return Status::ok();
}

}  // namespace

Result<HttpResult> http_request(const std::string& base_url, const std::string& method, const std::string& target,
                                const std::string& body, const Headers& headers) {
  std::string host, port;
  JS_RETURN_IF_ERROR(split_url(base_url, host, port));
  try {
    boost::asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(resolver.resolve(host, port));
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
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return HttpResult{static_cast<int>(res.result_int()), res.body()};
  } catch (const boost::system::system_error& e) {
    return unavailable("controller at " + base_url + " not reachable: " + e.code().message());
  }
}

Result<bj::value> ApiClient::call(const std::string& method, const std::string& target, const std::string& body,
                                  const Headers& headers) {
  Headers all = headers;
  if (!token_.empty()) all.emplace_back("Authorization", "Bearer " + token_);
  JS_ASSIGN_OR_RETURN(HttpResult r, http_request(base_url_, method, target, body, all));
  bj::error_code ec;
  auto v = bj::parse(r.body, ec);
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
