#include "common/status.hpp"

namespace jetsweep {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kNotFound: return "not_found";
    case Code::kAlreadyExists: return "already_exists";
    case Code::kIoError: return "io_error";
    case Code::kDbError: return "db_error";
    case Code::kProtocolError: return "protocol_error";
    case Code::kUnavailable: return "unavailable";
    case Code::kCancelled: return "cancelled";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(code_name(code_)) + ": " + message_;
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

}  // namespace jetsweep
