// The dashboard's routes: GET / and /ui/NAME (its page and assets, compiled in: web_assets.hpp), POST /api/login and
// /api/logout (the login cookie: web_auth.hpp), GET /api/session, GET /api/runs/ID[/samples] (the run page), and the
// LiveHub's snapshot for GET /api/events (streamed by controller/server.cpp and live_session.hpp). Io thread, like
// every Controller handler; store reads go to the DbWorker.
#include <boost/json.hpp>
#include <cctype>

#include "common/api.hpp"
#include "common/json_parse.hpp"
#include "common/log.hpp"
#include "common/text.hpp"
#include "controller/api_call.hpp"
#include "controller/fleet_telemetry.hpp"
#include "controller/live_hub.hpp"
#include "controller/web_assets.hpp"
#include "controller/web_auth.hpp"

namespace jetsweep::controller {
namespace http = boost::beast::http;
namespace bj = boost::json;

namespace {

// Only the controller's own origin: no inline script or style, no other hosts (the dashboard works offline).
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// A run id from the path ("ID" of /api/runs/ID...), or a 400 answered.
std::optional<int64_t> run_id_of(const Controller::ApiCall& call) {
  const std::string& ref = call.parts[2];
  const std::optional<int64_t> id = parse_int(ref);
  if (!id || *id <= 0 || ref.find_first_not_of("0123456789") != std::string::npos) {
    call.fail(http::status::bad_request, "run id '" + ref + "' is not a positive integer");
    return std::nullopt;
  }
  return id;
}

// A strong ETag of an asset (FNV-1a of its bytes), so that browsers revalidate cheaply.
std::string etag_of(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  char text[24];
  std::snprintf(text, sizeof text, "\"%016llx\"", static_cast<unsigned long long>(h));
  return text;
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() + 0 && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The token of a login body: {"token": "..."} (JSON) or token=... (an HTML form, urlencoded).
std::optional<std::string> login_token(const HttpRequest& req) {
  const std::string& body = req.body();
  boost::system::error_code ec;
  const bj::value v = json::parse_exact(body, ec);
  if (!ec) {
    if (const auto* o = v.if_object())
      if (const auto* t = o->if_contains("token"); t && t->is_string()) return std::string(t->get_string());
    return std::nullopt;
  }
  for (const auto& pair : split(body, '&'))
    if (pair.rfind("token=", 0) == 0) return percent_decoded(std::string_view(pair).substr(6));
  return std::nullopt;
}

}  // namespace

void Controller::api_run(const ApiCall& call) {
  const auto id = run_id_of(call);
  if (!id) return;
  db_.post<Result<api::RunDetail>>(executor(), [id = *id](Store& s) { return s.run_detail(id); },
                                   [call](Result<api::RunDetail> r) { call.reply(r); });
}

void Controller::api_run_samples(const ApiCall& call) {
  const auto id = run_id_of(call);
  if (!id) return;
  db_.post<Result<std::vector<api::RunSample>>>(
      executor(), [id = *id](Store& s) { return s.run_samples(id); },
      [call](Result<std::vector<api::RunSample>> r) {
        if (!r) return call.fail(r.status());
        call.reply(http::status::ok, api::to_json(r.value()));
      });
}

void Controller::api_login(const ApiCall& call) {
  if (!web_auth_->auth_required())   // an open API: nothing to log in to, no cookie
    return call.reply(http::status::ok, api::to_json(api::SessionInfo{"admin", false}));
  const auto token = login_token(*call.req);
  if (!token)
    return call.fail(http::status::bad_request, "login: expected {\"token\": \"...\"} (JSON) or token=... (a form)");
  const Role role = web_auth_->role_of_token(*token);
  if (role == Role::kNone) {
    JS_LOG_WARN << "dashboard login refused: wrong token";
    return call.fail(http::status::unauthorized, "wrong token (the API token, or the viewer token)");
  }
  auto id = web_auth_->open_session(role);
  if (!id) return call.fail(id.status());
  HttpResponse res = json_response(*call.req, http::status::ok, api::to_json(api::SessionInfo{role_name(role), true}));
  res.set(http::field::set_cookie, WebAuth::set_cookie(*id));   // Secure added on TLS connections (server.cpp)
  res.set(http::field::cache_control, "no-store");
  call.respond(std::move(res));
}

void Controller::api_logout(const ApiCall& call) {
  if (auto id = WebAuth::cookie(*call.req, WebAuth::kCookie)) web_auth_->close_session(*id);
  const Caller who = web_auth_->identify(*call.req);   // what remains (an Authorization header, or an open API)
  HttpResponse res = json_response(*call.req, http::status::ok,
                                   api::to_json(api::SessionInfo{role_name(who.role), web_auth_->auth_required()}));
  res.set(http::field::set_cookie, WebAuth::clear_cookie());
  res.set(http::field::cache_control, "no-store");
  call.respond(std::move(res));
}

void Controller::api_session(const ApiCall& call) {
  const Caller who = web_auth_->identify(*call.req);
  HttpResponse res = json_response(*call.req, http::status::ok,
                                   api::to_json(api::SessionInfo{role_name(who.role), web_auth_->auth_required()}));
  res.set(http::field::cache_control, "no-store");
  call.respond(std::move(res));
}

void Controller::serve_ui(const ApiCall& call) {
  const WebAsset* asset = web_asset(call.parts.empty() ? "index.html" : call.parts[1]);
  if (!asset) return call.fail(http::status::not_found, "no such dashboard file: " + std::string(call.req->target()));
  const std::string etag = etag_of(asset->data);
  const bool unchanged = (*call.req)[http::field::if_none_match] == etag;
  HttpResponse res{unchanged ? http::status::not_modified : http::status::ok, call.req->version()};
  res.set(http::field::server, "jetsweep-controller");
  res.set(http::field::content_type, asset->content_type);
  res.set(http::field::cache_control, "no-cache");   // revalidated each time (ETag): an upgrade shows at once
  res.set(http::field::etag, etag);
  res.set("Content-Security-Policy", kContentSecurityPolicy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("Referrer-Policy", "no-referrer");
  res.set("X-Frame-Options", "DENY");
  res.keep_alive(call.req->keep_alive());
  if (!unchanged) res.body().assign(asset->data.data(), asset->data.size());
  res.prepare_payload();
  call.respond(std::move(res));
}

void Controller::live_snapshot(std::function<void(std::optional<std::string>)> done) {
  struct Rows {
    FleetRows fleet;
    std::vector<api::CampaignStatus> campaigns;
  };
  auto self = shared_from_this();
  db_.post<Result<Rows>>(
      executor(),
      [](Store& s) -> Result<Rows> {
        Rows rows;
        JS_ASSIGN_OR_RETURN(rows.fleet, load_fleet_rows(s));
        JS_ASSIGN_OR_RETURN(rows.campaigns, s.list_campaigns());
        return rows;
      },
      [self, done = std::move(done)](Result<Rows> r) {
        if (!r) {
          JS_LOG_WARN << "dashboard snapshot: " << r.status().to_string();
          return done(std::nullopt);
        }
        api::Health h;   // as GET /api/health
        h.agents_connected = static_cast<int64_t>(self->agents_.size());
        h.db_queue = static_cast<int64_t>(self->db_.queued());
        for (auto* w : self->ingest_) h.ingest_queue += static_cast<int64_t>(w->queued());
        bj::object o;
        o["health"] = api::to_json(h);
        o["campaigns"] = api::to_json(r->campaigns);
        o["fleet"] = api::to_json(fleet_boards(r->fleet, self->fleet_telemetry_, proto::unix_now_s()));
        done(bj::serialize(o));
      });
}

}  // namespace jetsweep::controller
