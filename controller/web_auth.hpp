// WebAuth: who an HTTP request is (admin, read-only viewer, or nobody), from its Authorization header (the API
// token or the viewer token, "Bearer ...") or from the dashboard's login cookie; and the login sessions behind
// those cookies. A cookie carries a random session id (256 bits), never a token; the controller keeps only the
// id's SHA-256 with the session's role and expiry, in memory (a controller restart logs everybody out). Owned by
// the Controller; io thread only (no locks), like every Controller handler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.hpp"
#include "controller/controller.hpp"

namespace jetsweep::controller {

enum class Role { kNone, kViewer, kAdmin };
const char* role_name(Role r);   // "none" | "viewer" | "admin"

// Who presented what: the role and whether it came from the login cookie (cookie-authenticated writes need the
// CSRF header).
struct Caller {
  Role role = Role::kNone;
  bool by_cookie = false;
};

class WebAuth {
 public:
  static constexpr const char* kCookie = "jetsweep_session";
  // Cookie-authenticated requests other than GET must carry this header (any value): a cross-site form cannot
  // set it, and SameSite=Strict keeps the cookie off cross-site requests anyway.
  static constexpr const char* kCsrfHeader = "X-Jetsweep-CSRF";
  static constexpr std::chrono::seconds kSessionLifetime{12 * 3600};
  static constexpr size_t kMaxSessions = 1024;   // beyond: the session closest to expiry is dropped

  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // Empty api_token: the API is open, everyone is admin. Empty viewer_token: there is no viewer token.
  WebAuth(std::string api_token, std::string viewer_token, Clock clock = {});

  bool auth_required() const { return !api_token_.empty(); }
  // The role a presented token grants (constant-time comparisons).
  Role role_of_token(std::string_view token) const;
  // The Authorization header first (a wrong one counts as absent), then the login cookie.
  Caller identify(const HttpRequest& req);
  // A new session for `role`: its id, for the cookie.
  Result<std::string> open_session(Role role);
  void close_session(std::string_view id);
  size_t sessions() const { return sessions_.size(); }

  // The value of cookie `name` in the request's Cookie headers, if present.
  static std::optional<std::string> cookie(const HttpRequest& req, std::string_view name);
  // Set-Cookie values that set / clear the session cookie (HttpOnly; SameSite=Strict; Path=/; the server adds
  // Secure on TLS connections).
  static std::string set_cookie(const std::string& id);
  static std::string clear_cookie();

 private:
  struct Session {
    Role role = Role::kNone;
    std::chrono::steady_clock::time_point expires_at;
  };
  std::chrono::steady_clock::time_point now() const;

  std::string api_token_, viewer_token_;
  Clock clock_;
  std::map<std::string, Session> sessions_;   // by SHA-256 of the session id (hex)
};

}  // namespace jetsweep::controller
