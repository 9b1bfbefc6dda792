// The `jetsweep` command-line client: validate / submit / status / report / agents, talking to the
// controller's HTTP JSON API. Functions are pure or do blocking I/O on the calling thread.
#pragma once

#include <boost/json.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::cli {

// Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 bad input/usage).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty);

// Text renderings (also used by scripts/demo through the CLI).
std::string format_report(const boost::json::object& report);
std::string format_status(const boost::json::object& status, bool progress_bar);

struct HttpResult {
  int status = 0;
  std::string body;
};
// Blocking HTTP/1.1 request to http://HOST:PORT; kUnavailable when the controller cannot be reached.
Result<HttpResult> http_request(const std::string& base_url, const std::string& method, const std::string& target,
                                const std::string& body = "", const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace jetsweep::cli
