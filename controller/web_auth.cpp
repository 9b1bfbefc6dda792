#include "controller/web_auth.hpp"

#include <algorithm>

#include "common/text.hpp"
#include "controller/credentials.hpp"

namespace jetsweep::controller {
namespace http = boost::beast::http;

namespace {
// Constant-time equality (the length is not secret).
bool same_secret(std::string_view presented, const std::string& secret) {
  if (secret.empty()) return false;
  unsigned diff = presented.size() == secret.size() ? 0u : 1u;
  for (size_t i = 0; i < secret.size(); ++i)
    diff |= static_cast<unsigned>(secret[i] ^ (i < presented.size() ? presented[i] : 0));
  return diff == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

const char* role_name(Role r) {
  switch (r) {
    case Role::kAdmin: return "admin";
    case Role::kViewer: return "viewer";
    default: return "none";
  }
}

WebAuth::WebAuth(std::string api_token, std::string viewer_token, Clock clock)
    : api_token_(std::move(api_token)), viewer_token_(std::move(viewer_token)), clock_(std::move(clock)) {}

std::chrono::steady_clock::time_point WebAuth::now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

Role WebAuth::role_of_token(std::string_view token) const {
  if (!auth_required()) return Role::kAdmin;
  if (same_secret(token, api_token_)) return Role::kAdmin;
  if (same_secret(token, viewer_token_)) return Role::kViewer;
  return Role::kNone;
}

Caller WebAuth::identify(const HttpRequest& req) {
  if (!auth_required()) return {Role::kAdmin, false};
  const std::string_view header = req[http::field::authorization];
  const std::string_view prefix = "Bearer ";
  if (header.substr(0, prefix.size()) == prefix)
    if (const Role r = role_of_token(header.substr(prefix.size())); r != Role::kNone) return {r, false};
  const auto id = cookie(req, kCookie);
  if (!id) return {};
  auto it = sessions_.find(credential_sha256(*id));
  if (it == sessions_.end()) return {};
  if (it->second.expires_at <= now()) {
    sessions_.erase(it);
    return {};
  }
  return {it->second.role, true};
}

Result<std::string> WebAuth::open_session(Role role) {
  const auto t = now();
  for (auto it = sessions_.begin(); it != sessions_.end();) it = it->second.expires_at <= t ? sessions_.erase(it) : std::next(it);
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second.expires_at < b.second.expires_at;
    });
    sessions_.erase(oldest);
  }
  auto id = new_agent_credential();   // 256 random bits as hex, from OpenSSL's generator
  if (!id) return id.status().with_context("opening a login session");
  sessions_[credential_sha256(*id)] = {role, t + kSessionLifetime};
  return id;
}

void WebAuth::close_session(std::string_view id) { sessions_.erase(credential_sha256(id)); }

std::optional<std::string> WebAuth::cookie(const HttpRequest& req, std::string_view name) {
  const auto [first, last] = req.equal_range(http::field::cookie);
  for (auto it = first; it != last; ++it) {
    for (const auto& pair : split(it->value(), ';')) {
      const std::string_view p = trim(pair);
      const size_t eq = p.find('=');
      if (eq != std::string_view::npos && trim(p.substr(0, eq)) == name) return std::string(trim(p.substr(eq + 1)));
    }
  }
  return std::nullopt;
}

std::string WebAuth::set_cookie(const std::string& id) {
  return std::string(kCookie) + "=" + id + "; HttpOnly; SameSite=Strict; Path=/; Max-Age=" +
         std::to_string(kSessionLifetime.count());
}

std::string WebAuth::clear_cookie() { return std::string(kCookie) + "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"; }

}  // namespace jetsweep::controller
