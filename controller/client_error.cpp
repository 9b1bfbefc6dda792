#include "controller/client_error.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "common/log.hpp"

namespace jetsweep::controller {
namespace {

// "E" + seconds since the epoch (hex) + "-" + a per-process sequence number: unique per process and sortable,
// easy to grep for in the log.
std::string next_error_id() {
  static std::atomic<uint64_t> sequence{0};
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  char buf[48];
  std::snprintf(buf, sizeof buf, "E%llx-%llu", static_cast<unsigned long long>(secs),
                static_cast<unsigned long long>(sequence.fetch_add(1) + 1));
  return buf;
}

}  // namespace

ClientError client_error(const Status& s, std::string_view context) {
  switch (s.code()) {
    case Code::kOk:
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kPermissionDenied:
    case Code::kUnavailable:
    case Code::kCancelled:
      return {s, std::nullopt};
    default: break;
  }
  std::string id = next_error_id();
  JS_LOG_ERROR << "error " << id << " while " << context << ": " << s.to_string();
  const char* what = s.code() == Code::kDbError ? "database error" : "internal error";
  return {Status(s.code(), std::string(what) + " (error id " + id + "; the controller's log has the detail)"),
          std::move(id)};
}

}  // namespace jetsweep::controller
