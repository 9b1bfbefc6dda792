// One HTTP request the Controller is answering (ApiCall) and its route table entry (ApiRoute): private to the
// controller library, shared by the files that define Controller's handlers (controller.cpp, api_*.cpp).
// Io thread only, like every Controller handler.
#pragma once

#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/api.hpp"
#include "common/status.hpp"
#include "controller/client_error.hpp"
#include "controller/controller.hpp"

namespace jetsweep::controller {

// A JSON answer to `req` (keep-alive as the request asks).
HttpResponse json_response(const HttpRequest& req, boost::beast::http::status status, const boost::json::value& body);
// The HTTP status of a Status's code (400, 404, 403, 503, else 500).
boost::beast::http::status status_for(const Status& s);
// The non-empty segments of a request target's path (the query string cut off).
std::vector<std::string> split_path(std::string_view target);

// Who may call a route: anyone (health, the dashboard's page and assets, login), or a holder of the API token.
enum class RouteAccess { kPublic, kToken };

// One API request being answered: the request, its path segments and the responder (called once).
struct Controller::ApiCall {
  std::shared_ptr<HttpRequest> req;
  std::vector<std::string> parts;   // the path's segments: "api", "campaigns", REF, ...
  std::function<void(HttpResponse&&)> respond;

  void reply(boost::beast::http::status status, const boost::json::value& body) const {
    respond(json_response(*req, status, body));
  }
  void fail(boost::beast::http::status status, const std::string& message) const {
    reply(status, api::to_json(api::ErrorReply{message, std::nullopt}));
  }
  // Server-side failures (database, internal) are answered with a short message and an error id; the detail
  // goes to the log (controller/client_error.hpp).
  void fail(const Status& s) const {
    const ClientError e = client_error(s, std::string(to_string(req->method())) + " " + std::string(req->target()));
    reply(status_for(e.status), api::to_json(api::ErrorReply{e.status.message(), e.error_id}));
  }
  template <class T>
  void reply(const Result<T>& r) const {
    if (!r) return fail(r.status());
    reply(boost::beast::http::status::ok, api::to_json(r.value()));
  }
  void no_such_endpoint() const {
    fail(boost::beast::http::status::not_found,
         "no such endpoint: " + std::string(to_string(req->method())) + " " + std::string(req->target()));
  }
};

// The route table: method and path pattern ("*" matches any one segment) -> handler, and who may call it.
struct Controller::ApiRoute {
  boost::beast::http::verb method;
  std::vector<std::string_view> pattern;
  void (Controller::*handler)(const ApiCall&);
  RouteAccess access = RouteAccess::kToken;
};

}  // namespace jetsweep::controller
