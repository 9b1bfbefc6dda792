// Blocking HTTP/1.1 client of the controller's API: requests on the calling thread, answers decoded into the
// structs of common/api.hpp. One ApiClient per thread.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/api.hpp"
#include "common/status.hpp"

namespace jetsweep::cli {

struct HttpResult {
  int status = 0;
  std::string body;
};
using Headers = std::vector<std::pair<std::string, std::string>>;
// Blocking HTTP/1.1 request to http://HOST:PORT or https://HOST:PORT (the controller's certificate verified
// against the PEM CA `ca_file`, else the system's default CA paths, and its host name); kUnavailable when the
// controller cannot be reached or the TLS handshake fails (the message says why and which CA was trusted).
Result<HttpResult> http_request(const std::string& base_url, const std::string& method, const std::string& target,
                                const std::string& body = "", const Headers& headers = {},
                                const std::string& ca_file = "");

// An API answer: the decoded struct and the JSON it came as (printed unchanged by --json).
template <class T>
struct Answer {
  T value;
  boost::json::value json;
};

class ApiClient {
 public:
  ApiClient(std::string base_url, std::string token, std::string ca_file = "")
      : base_url_(std::move(base_url)), token_(std::move(token)), ca_file_(std::move(ca_file)) {}

  // The answer's JSON; an error answer becomes its Status (404 kNotFound, 400/401 kInvalidArgument, else
  // kInternal) with the controller's message.
  Result<boost::json::value> call(const std::string& method, const std::string& target, const std::string& body = "",
                                  const Headers& headers = {});
  // call() decoded as a T (`what` names it in a decoding error).
  template <class T>
  Result<Answer<T>> request(const std::string& method, const std::string& target, const char* what,
                            const std::string& body = "", const Headers& headers = {}) {
    JS_ASSIGN_OR_RETURN(boost::json::value json, call(method, target, body, headers));
    JS_ASSIGN_OR_RETURN(T value, api::decode<T>(json, std::string("controller's ") + what));
    return Answer<T>{std::move(value), std::move(json)};
  }

 private:
  std::string base_url_;
  std::string token_;
  std::string ca_file_;   // https: the CA that signed the controller's certificate (empty: the system's)
};

}  // namespace jetsweep::cli
