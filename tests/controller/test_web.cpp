// The dashboard's server side: its page and assets, login cookies, the viewer token, CSRF, GET /api/runs/ID[/samples]
// and the live event stream (GET /api/events), through Controller::handle_api and the real Listener over a
// MemoryStore. No sleeps: the tests drain the io_context until what they wait for arrives.
#include <doctest/doctest.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "common/api.hpp"
#include "controller/live_hub.hpp"
#include "controller/web_auth.hpp"
#include "controller_fixture.hpp"
#include "support/io_drain.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using jetsweep::controller::HttpRequest;
using jetsweep::controller::HttpResponse;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

const char* const kAdminToken = "admin-token-0123456789";
const char* const kViewerToken = "viewer-token-9876543210";
const char* const kOneRun = "campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";

controller::ControllerOptions with_tokens() {
  auto o = test_options();
  o.api_token = kAdminToken;
  o.viewer_token = kViewerToken;
  return o;
}

// A request through Controller::handle_api with the given headers.
HttpResponse call(ControllerFixture& f, http::verb method, const std::string& target,
                  std::vector<std::pair<std::string, std::string>> headers = {}, const std::string& body = "") {
  HttpRequest req{method, target, 11};
  for (auto& [k, v] : headers) req.insert(k, v);
  req.body() = body;
  req.prepare_payload();
  std::optional<HttpResponse> response;
  f.controller->handle_api(std::move(req), [&](HttpResponse&& r) { response = std::move(r); });
  REQUIRE(f.drain_until([&] { return response.has_value(); }));
  return std::move(*response);
}

std::pair<std::string, std::string> bearer(const std::string& token) { return {"Authorization", "Bearer " + token}; }

// The session cookie a login answer sets ("jetsweep_session=ID"), for a Cookie header.
std::string cookie_of(const HttpResponse& res) {
  const std::string set(res[http::field::set_cookie]);
  return set.substr(0, set.find(';'));
}

std::string login(ControllerFixture& f, const std::string& token) {
  auto res = call(f, http::verb::post, "/api/login", {}, "{\"token\":\"" + token + "\"}");
  REQUIRE(res.result() == http::status::ok);
  return cookie_of(res);
}

api::SessionInfo session_of(const HttpResponse& res) {
  auto s = api::decode<api::SessionInfo>(boost::json::parse(res.body()), "session");
  REQUIRE(s.is_ok());
  return s.value();
}

// A raw HTTP client of the controller's listener for GET /api/events: sends the request, then collects
// everything the stream delivers.
struct EventClient {
  explicit EventClient(ControllerFixture& f) : stream(f.ioc) {}
  void open(ControllerFixture& f, const std::string& extra_headers) {
    stream.socket().connect({asio::ip::address_v4::loopback(), f.port});
    request = "GET /api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n" + extra_headers + "\r\n";
    asio::async_write(stream, asio::buffer(request), [](beast::error_code, size_t) {});
    read_more();
  }
  void read_more() {
    stream.async_read_some(asio::buffer(chunk), [this](beast::error_code ec, size_t n) {
      received.append(chunk, n);
      if (ec) {
        closed = true;
        return;
      }
      read_more();
    });
  }
  size_t count(const std::string& what) const {
    size_t n = 0;
    for (size_t at = received.find(what); at != std::string::npos; at = received.find(what, at + 1)) ++n;
    return n;
  }
  // The data of the last complete snapshot event.
  boost::json::object last_snapshot() const {
    const size_t at = received.rfind("event: snapshot\ndata: ");
    REQUIRE(at != std::string::npos);
    const size_t start = at + std::string("event: snapshot\ndata: ").size();
    return boost::json::parse(received.substr(start, received.find("\n\n", start) - start)).as_object();
  }
  beast::tcp_stream stream;
  std::string request, received;
  char chunk[4096];
  bool closed = false;
};

// A fake subscriber of the hub: records what it is offered.
struct FakeSubscriber : controller::LiveSubscriber {
  void offer(std::shared_ptr<const std::string> frame) override { frames.push_back(*frame); }
  void heartbeat() override { ++heartbeats; }
  void close() override { is_open = false; }
  bool open() const override { return is_open; }
  std::vector<std::string> frames;
  int heartbeats = 0;
  bool is_open = true;
};

}  // namespace

TEST_SUITE("web") {

TEST_CASE("the dashboard's page and assets are public, typed, cached by ETag and under a strict CSP") {
  ControllerFixture f(with_tokens());
  auto page = call(f, http::verb::get, "/");
  REQUIRE(page.result() == http::status::ok);
  CHECK(page[http::field::content_type] == "text/html; charset=utf-8");
  CHECK(page.body().find("<script src=\"/ui/app.js\"") != std::string::npos);
  const std::string csp(page["Content-Security-Policy"]);
  CHECK(csp.find("script-src 'self'") != std::string::npos);
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("unsafe-inline") == std::string::npos);
  CHECK(page[http::field::cache_control] == "no-cache");
  CHECK(page.body().find("<script>") == std::string::npos);   // no inline script

  auto js = call(f, http::verb::get, "/ui/app.js");
  CHECK(js.result() == http::status::ok);
  CHECK(js[http::field::content_type] == "text/javascript; charset=utf-8");
  auto chart = call(f, http::verb::get, "/ui/chart.min.js");
  CHECK(chart.result() == http::status::ok);
  CHECK(chart.body().find("Chart.js v3") != std::string::npos);
  CHECK(call(f, http::verb::get, "/ui/style.css")[http::field::content_type] == "text/css; charset=utf-8");
  CHECK(call(f, http::verb::get, "/ui/nothing.js").result() == http::status::not_found);

  const std::string etag(js[http::field::etag]);
  REQUIRE(!etag.empty());
  auto again = call(f, http::verb::get, "/ui/app.js", {{"If-None-Match", etag}});
  CHECK(again.result() == http::status::not_modified);
  CHECK(again.body().empty());
}

TEST_CASE("login sets an HttpOnly SameSite=Strict cookie that is not the token; it authorises reads; logout ends it") {
  ControllerFixture f(with_tokens());
  CHECK(session_of(call(f, http::verb::get, "/api/session")).role == "none");
  CHECK(session_of(call(f, http::verb::get, "/api/session")).auth_required);
  CHECK(call(f, http::verb::get, "/api/campaigns").result() == http::status::unauthorized);

  auto wrong = call(f, http::verb::post, "/api/login", {}, "{\"token\":\"nope\"}");
  CHECK(wrong.result() == http::status::unauthorized);
  CHECK(wrong[http::field::set_cookie].empty());
  CHECK(call(f, http::verb::post, "/api/login", {}, "{}").result() == http::status::bad_request);

  auto ok = call(f, http::verb::post, "/api/login", {}, std::string("{\"token\":\"") + kAdminToken + "\"}");
  REQUIRE(ok.result() == http::status::ok);
  CHECK(session_of(ok).role == "admin");
  const std::string set(ok[http::field::set_cookie]);
  CHECK(set.rfind("jetsweep_session=", 0) == 0);
  CHECK(set.find("HttpOnly") != std::string::npos);
  CHECK(set.find("SameSite=Strict") != std::string::npos);
  CHECK(set.find("Path=/") != std::string::npos);
  CHECK(set.find(kAdminToken) == std::string::npos);
  const std::string cookie = cookie_of(ok);

  CHECK(call(f, http::verb::get, "/api/campaigns", {{"Cookie", "other=1; " + cookie}}).result() == http::status::ok);
  CHECK(session_of(call(f, http::verb::get, "/api/session", {{"Cookie", cookie}})).role == "admin");
  CHECK(call(f, http::verb::get, "/api/campaigns", {{"Cookie", "jetsweep_session=forged"}}).result() ==
        http::status::unauthorized);

  auto out = call(f, http::verb::post, "/api/logout", {{"Cookie", cookie}});
  CHECK(out.result() == http::status::ok);
  CHECK(std::string(out[http::field::set_cookie]).find("Max-Age=0") != std::string::npos);
  CHECK(call(f, http::verb::get, "/api/campaigns", {{"Cookie", cookie}}).result() == http::status::unauthorized);
}

TEST_CASE("a form login works; writes by cookie need the CSRF header") {
  ControllerFixture f(with_tokens());
  auto form = call(f, http::verb::post, "/api/login", {{"Content-Type", "application/x-www-form-urlencoded"}},
                   std::string("x=1&token=") + "admin%2Dtoken-0123456789");   // percent-encoded '-'
  REQUIRE(form.result() == http::status::ok);
  const std::string cookie = cookie_of(form);
  auto refused = call(f, http::verb::post, "/api/campaigns", {{"Cookie", cookie}}, kOneRun);
  CHECK(refused.result() == http::status::forbidden);
  CHECK(f.store->runs_of(1).empty());
  CHECK(call(f, http::verb::post, "/api/campaigns", {{"Cookie", cookie}, {"X-Jetsweep-CSRF", "1"}}, kOneRun).result() ==
        http::status::created);
  // A token in the Authorization header needs no CSRF header (no browser sends it on its own).
  CHECK(call(f, http::verb::post, "/api/campaigns", {bearer(kAdminToken)}, kOneRun).result() == http::status::created);
}

TEST_CASE("a viewer may read but not write, by token or by its login; the admin token still writes") {
  ControllerFixture f(with_tokens());
  CHECK(call(f, http::verb::get, "/api/campaigns", {bearer(kViewerToken)}).result() == http::status::ok);
  auto refused = call(f, http::verb::post, "/api/campaigns", {bearer(kViewerToken)}, kOneRun);
  CHECK(refused.result() == http::status::forbidden);
  CHECK(refused.body().find("read-only") != std::string::npos);
  CHECK(call(f, http::verb::post, "/api/campaigns", {bearer(kAdminToken)}, kOneRun).result() == http::status::created);

  const std::string viewer = login(f, kViewerToken);
  CHECK(session_of(call(f, http::verb::get, "/api/session", {{"Cookie", viewer}})).role == "viewer");
  CHECK(call(f, http::verb::get, "/api/campaigns/1", {{"Cookie", viewer}}).result() == http::status::ok);
  CHECK(call(f, http::verb::post, "/api/campaigns/1/pause", {{"Cookie", viewer}, {"X-Jetsweep-CSRF", "1"}}).result() ==
        http::status::forbidden);

  const std::string admin = login(f, kAdminToken);
  auto no_csrf = call(f, http::verb::post, "/api/campaigns/1/pause", {{"Cookie", admin}});
  CHECK(no_csrf.result() == http::status::forbidden);
  CHECK(no_csrf.body().find("X-Jetsweep-CSRF") != std::string::npos);
  auto paused = call(f, http::verb::post, "/api/campaigns/1/pause", {{"Cookie", admin}, {"X-Jetsweep-CSRF", "1"}});
  CHECK(paused.result() == http::status::ok);
  CHECK(f.store->runs_of(1).size() == 1);
}

TEST_CASE("an open API (no token): everyone is admin, login sets no cookie") {
  ControllerFixture f;
  const auto s = session_of(call(f, http::verb::get, "/api/session"));
  CHECK(s.role == "admin");
  CHECK_FALSE(s.auth_required);
  auto res = call(f, http::verb::post, "/api/login", {}, "{\"token\":\"anything\"}");
  CHECK(res.result() == http::status::ok);
  CHECK(res[http::field::set_cookie].empty());
}

TEST_CASE("GET /api/runs/ID is the run as in its report plus its campaign; /samples its telemetry on the controller's clock") {
  ControllerFixture f;
  CHECK(call(f, http::verb::get, "/api/runs/abc").result() == http::status::bad_request);
  CHECK(call(f, http::verb::get, "/api/runs/99").result() == http::status::not_found);
  CHECK(call(f, http::verb::get, "/api/runs/99/samples").result() == http::status::not_found);

  auto agent = f.connect_agent(test_register("host-1"));
  const int64_t campaign = f.submit(kOneRun);
  REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
  const int64_t run = agent->all<proto::AssignRun>()[0].run_id;
  const int64_t agent_id = ControllerFixture::registered_id(*agent);
  proto::RunStarted started;
  started.run_id = run;
  started.compute_device = "simulated";
  started.t0_unix_s = 1000;
  REQUIRE(f.store->start_run(agent_id, started).is_ok());
  proto::EpochResult e;
  e.run_id = run;
  e.epoch = 0;
  e.e2e_s = 2;
  e.stall_s = 0.5;
  e.compute_s = 1;
  e.minibatches = 3;
  REQUIRE(f.store->ingest_epoch(agent_id, e).is_ok());
  proto::SampleChunk chunk;
  chunk.run_id = run;
  chunk.t0_unix_s = 1000;
  chunk.samples = {{0.5, 40, {}, 1400.0, 1000, 10, 5.5}, {1.5, 60, {}, std::nullopt, 1100, 20, std::nullopt}};
  REQUIRE(f.store->ingest_samples(agent_id, chunk).is_ok());

  auto res = call(f, http::verb::get, "/api/runs/" + std::to_string(run));
  REQUIRE(res.result() == http::status::ok);
  auto detail = api::decode<api::RunDetail>(boost::json::parse(res.body()), "run");
  REQUIRE(detail.is_ok());
  CHECK(detail->campaign_id == campaign);
  CHECK(detail->campaign_name == "one");
  CHECK(detail->run_id == run);
  CHECK(detail->status == "running");
  CHECK(detail->compute_device == "simulated");
  REQUIRE(detail->epochs.size() == 1);
  CHECK(detail->epochs[0].stall_s == 0.5);
  // The same run as the campaign's report has it.
  auto report = boost::json::parse(call(f, http::verb::get, "/api/campaigns/" + std::to_string(campaign) + "/report").body());
  auto flat = boost::json::parse(res.body()).as_object();
  flat.erase("campaign_id");
  flat.erase("campaign_name");
  CHECK(boost::json::value(flat) == report.at("runs").at(0));

  auto samples_res = call(f, http::verb::get, "/api/runs/" + std::to_string(run) + "/samples");
  REQUIRE(samples_res.result() == http::status::ok);
  auto samples = api::decode<std::vector<api::RunSample>>(boost::json::parse(samples_res.body()), "samples");
  REQUIRE(samples.is_ok());
  REQUIRE(samples->size() == 2);
  CHECK(samples->at(0).t_s == 0.5);
  CHECK(samples->at(0).t_unix_s == 1000.5);   // no clock offset measured: the agent's clock as is
  CHECK(samples->at(0).power_w == 5.5);
  CHECK(samples->at(0).cpu_freq_mhz == 1400.0);
  CHECK(samples->at(1).power_w == std::nullopt);
  CHECK(samples->at(1).cpu_freq_mhz == std::nullopt);
  CHECK(samples->at(1).mem_used_kb == 1100);
  CHECK(samples->at(1).disk_read_bytes == 20);
}

TEST_CASE("GET /api/events streams snapshots: on connect, on change; refused without credentials; closed on stop") {
  ControllerFixture f(with_tokens());
  EventClient refused(f);
  refused.open(f, "");
  REQUIRE(f.drain_until([&] { return refused.closed; }));
  CHECK(refused.received.rfind("HTTP/1.1 401", 0) == 0);

  EventClient viewer(f), admin(f);
  viewer.open(f, "Authorization: Bearer " + std::string(kViewerToken) + "\r\n");
  const std::string cookie = login(f, kAdminToken);
  admin.open(f, "Cookie: " + cookie + "\r\n");
  REQUIRE(f.drain_until([&] { return viewer.count("event: snapshot\n") >= 1 && admin.count("event: snapshot\n") >= 1; }));
  CHECK(viewer.received.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(viewer.received.find("Content-Type: text/event-stream") != std::string::npos);
  auto first = viewer.last_snapshot();
  CHECK(first.at("campaigns").as_array().empty());
  CHECK(first.at("fleet").as_array().empty());
  CHECK(first.at("health").at("ok") == true);

  call(f, http::verb::post, "/api/campaigns", {bearer(kAdminToken)}, kOneRun);
  REQUIRE(f.drain_until([&] {
    return !viewer.last_snapshot().at("campaigns").as_array().empty() &&
           !admin.last_snapshot().at("campaigns").as_array().empty();
  }));
  CHECK(viewer.last_snapshot().at("campaigns").at(0).at("name") == "one");
  CHECK(f.controller->live_hub().subscribers() == 2);

  f.controller->stop();
  REQUIRE(f.drain_until([&] { return viewer.closed && admin.closed; }));
  CHECK(f.controller->live_hub().subscribers() == 0);
}

TEST_CASE("the live hub: one query for every subscriber, snapshots only when changed, heartbeats, stop closes") {
  asio::io_context ioc{1};
  int queries = 0;
  std::function<void(std::optional<std::string>)> pending;
  auto hub = std::make_shared<controller::LiveHub>(
      ioc.get_executor(),
      [&](std::function<void(std::optional<std::string>)> done) {
        ++queries;
        pending = std::move(done);
      },
      std::chrono::milliseconds(1), 1);
  auto a = std::make_shared<FakeSubscriber>(), b = std::make_shared<FakeSubscriber>(),
       c = std::make_shared<FakeSubscriber>();
  hub->subscribe(a);
  hub->subscribe(b);
  CHECK(queries == 1);   // b joined while the first query ran
  auto answer = [&](const std::string& json) {
    REQUIRE(pending);
    auto done = std::move(pending);
    pending = nullptr;
    done(json);
  };
  answer("{\"x\":1}");
  REQUIRE(a->frames.size() == 1);
  CHECK(a->frames[0] == "event: snapshot\ndata: {\"x\":1}\n\n");
  CHECK(b->frames == a->frames);
  hub->subscribe(c);   // a snapshot exists: c gets it at once, no query
  CHECK(c->frames == a->frames);
  CHECK(queries == 1);

  REQUIRE(drain_until(ioc, [&] { return pending != nullptr; }));   // the next interval's query
  CHECK(queries == 2);
  answer("{\"x\":1}");   // unchanged: nothing sent
  CHECK(a->frames.size() == 1);
  REQUIRE(drain_until(ioc, [&] { return pending != nullptr; }));
  answer("{\"x\":2}");
  CHECK(a->frames.size() == 2);
  CHECK(c->frames.size() == 2);
  REQUIRE(drain_until(ioc, [&] { return a->heartbeats > 0; }));

  b->is_open = false;   // a subscriber gone: no longer counted or fed
  REQUIRE(drain_until(ioc, [&] { return pending != nullptr; }));
  CHECK(hub->subscribers() == 2);
  answer("{\"x\":3}");
  CHECK(b->frames.size() == 2);
  hub->stop();
  CHECK_FALSE(a->is_open);
  CHECK_FALSE(c->is_open);
  auto late = std::make_shared<FakeSubscriber>();
  hub->subscribe(late);
  CHECK_FALSE(late->is_open);
}

TEST_CASE("WebAuth: sessions expire, the oldest goes beyond the bound, cookies are parsed from every Cookie header") {
  auto now = std::chrono::steady_clock::time_point{};
  controller::WebAuth auth(kAdminToken, kViewerToken, [&] { return now; });
  auto id = auth.open_session(controller::Role::kViewer);
  REQUIRE(id.is_ok());
  HttpRequest req{http::verb::get, "/api/campaigns", 11};
  req.insert(http::field::cookie, "a=b");
  req.insert(http::field::cookie, "jetsweep_session=" + *id);
  CHECK(auth.identify(req).role == controller::Role::kViewer);
  CHECK(auth.identify(req).by_cookie);
  now += controller::WebAuth::kSessionLifetime;
  CHECK(auth.identify(req).role == controller::Role::kNone);
  CHECK(auth.sessions() == 0);
  for (size_t i = 0; i < controller::WebAuth::kMaxSessions + 5; ++i) REQUIRE(auth.open_session(controller::Role::kAdmin).is_ok());
  CHECK(auth.sessions() == controller::WebAuth::kMaxSessions);
  CHECK(auth.role_of_token(kAdminToken) == controller::Role::kAdmin);
  CHECK(auth.role_of_token(kViewerToken) == controller::Role::kViewer);
  CHECK(auth.role_of_token("") == controller::Role::kNone);
}

}  // TEST_SUITE
