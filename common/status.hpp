// Status and Result<T>: the one error type used at every component boundary of jetsweep.
// Value types; safe to use from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace jetsweep {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad input: YAML, CLI args, message fields, file contents
  kNotFound,
  kAlreadyExists,
  kIoError,          // file system, sysfs, sockets
  kDbError,          // PostgreSQL (libpqxx exceptions converted at the boundary)
  kProtocolError,    // malformed or unexpected wire messages
  kUnavailable,      // peer or service not reachable right now; retry may succeed
  kCancelled,
  kPermissionDenied,  // authenticated but not allowed: a wrong or missing agent credential
  kInternal,
};

std::string_view code_name(Code code);

// What went wrong and where (messages name the place: file:line:col, message type, field, path). [[nodiscard]]:
// a Status nobody looks at is an error dropped silently; discard one only with (void) and a comment why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: demo.yaml:3:5: unknown key 'bach_size'"
  std::string to_string() const;
  // Returns a copy whose message is prefixed with `context: `.
  Status with_context(std::string_view context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status io_error(std::string m) { return {Code::kIoError, std::move(m)}; }
inline Status db_error(std::string m) { return {Code::kDbError, std::move(m)}; }
inline Status protocol_error(std::string m) { return {Code::kProtocolError, std::move(m)}; }
inline Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status permission_denied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
inline Status internal_error(std::string m) { return {Code::kInternal, std::move(m)}; }

// Either a T or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {}      // NOLINT(implicit)

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace jetsweep

// Early-return helpers.
#define JS_RETURN_IF_ERROR(expr)                   \
  do {                                             \
    ::jetsweep::Status js_status_ = (expr);        \
    if (!js_status_.is_ok()) return js_status_;    \
  } while (0)

#define JS_CONCAT_INNER(a, b) a##b
#define JS_CONCAT(a, b) JS_CONCAT_INNER(a, b)
#define JS_ASSIGN_OR_RETURN(lhs, expr) JS_ASSIGN_OR_RETURN_IMPL(JS_CONCAT(js_result_, __LINE__), lhs, expr)
#define JS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.is_ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
