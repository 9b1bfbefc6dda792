// What a client (API caller or agent) is told about a failure. Errors of the client's own input (invalid
// argument, not found, permission denied) and "busy" (unavailable) keep their messages: they are ours and name
// the place. Anything else (database, I/O, internal) becomes a short message with an error id, and the detail is
// logged once under that id: PostgreSQL's text, SQL and file paths stay in the controller's log. Any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.hpp"

namespace jetsweep::controller {

struct ClientError {
  Status status;                         // the code of the original, the message a client may see
  std::optional<std::string> error_id;   // set when the detail went to the log instead
};

// `context` says what was being done ("GET /api/campaigns/3/report", "registering agent nx-1") in the log line.
ClientError client_error(const Status& s, std::string_view context);

}  // namespace jetsweep::controller
