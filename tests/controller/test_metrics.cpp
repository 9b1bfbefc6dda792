// The metrics registry and its Prometheus text exposition (controller/metrics.hpp), the in-memory fleet telemetry
// (controller/fleet_telemetry.hpp), and GET /api/fleet and GET /metrics through the controller over a MemoryStore.
#include <doctest/doctest.h>

#include <boost/beast/http.hpp>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/api.hpp"
#include "controller/fleet_telemetry.hpp"
#include "controller/metrics.hpp"
#include "controller_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using controller::FleetTelemetry;
namespace metrics = jetsweep::controller::metrics;
namespace http = boost::beast::http;

namespace {

// The value of the sample line `series` (name and labels exactly as written) in an exposition, or nullopt.
std::optional<std::string> sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ')
      return line.substr(series.size() + 1);
  return std::nullopt;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

proto::SampleChunk chunk(int64_t run, std::optional<double> t0, std::vector<double> t_s, double power = 5) {
  proto::SampleChunk c;
  c.run_id = run;
  c.t0_unix_s = t0;
  for (double t : t_s) {
    proto::Sample s;
    s.t_s = t;
    s.cpu_util_pct = 50;
    s.cpu_freq_mhz = 1200;
    s.mem_used_kb = 1000;
    s.power_w = power;
    c.samples.push_back(s);
  }
  return c;
}

constexpr const char* kToken = "secret-token";

// An API call with the bearer token `token` ("" = none), answered once drained.
controller::HttpResponse call(ControllerFixture& f, http::verb method, const std::string& target,
                              const std::string& token = kToken, const std::string& body = "") {
  controller::HttpRequest req{method, target, 11};
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.body() = body;
  req.prepare_payload();
  std::optional<controller::HttpResponse> response;
  f.controller->handle_api(std::move(req), [&](controller::HttpResponse&& r) { response = std::move(r); });
  REQUIRE(f.drain_until([&] { return response.has_value(); }));
  return std::move(*response);
}

}  // namespace

TEST_SUITE("metrics") {

TEST_CASE("exposition: HELP and TYPE once per family, samples grouped under it, labels escaped") {
  metrics::Registry reg;
  reg.gauge("jetsweep_x", "an x\\ with\nnewline", {{"name", "a\"b\\c\nd"}}, 1.5);
  reg.counter("jetsweep_y_total", "ys", {}, 3);
  reg.gauge("jetsweep_x", "ignored: the family has its help", {{"name", "plain"}}, -2);
  const std::string text = reg.text();
  CHECK(reg.invalid_samples() == 0);
  CHECK(text ==
        "# HELP jetsweep_x an x\\\\ with\\nnewline\n"
        "# TYPE jetsweep_x gauge\n"
        "jetsweep_x{name=\"a\\\"b\\\\c\\nd\"} 1.5\n"
        "jetsweep_x{name=\"plain\"} -2\n"
        "# HELP jetsweep_y_total ys\n"
        "# TYPE jetsweep_y_total counter\n"
        "jetsweep_y_total 3\n");
}

TEST_CASE("exposition: special values, and invalid names or a type clash are refused and counted") {
  CHECK(metrics::format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(metrics::format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(metrics::format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(metrics::format_value(0.1) == "0.1");
  CHECK(metrics::format_value(1e21) == "1e+21");
  CHECK(metrics::format_value(921000000) == "921000000");   // integral values written in full
  CHECK(metrics::format_value(-3) == "-3");
  CHECK(metrics::valid_metric_name("a:b_c9"));
  CHECK_FALSE(metrics::valid_metric_name("9a"));
  CHECK_FALSE(metrics::valid_metric_name("a-b"));
  CHECK_FALSE(metrics::valid_label_name("__reserved"));
  CHECK_FALSE(metrics::valid_label_name("a:b"));
  metrics::Registry reg;
  reg.gauge("bad-name", "h", {}, 1);
  reg.gauge("good", "h", {{"bad label", "v"}}, 1);
  reg.gauge("good", "h", {}, 1);
  reg.counter("good", "h", {}, 1);   // a gauge already
  reg.histogram("hist", "h", {{"le", "1"}}, metrics::HistogramSnapshot{{1}, {0, 0}, 0, 0});   // le is reserved
  CHECK(reg.invalid_samples() == 4);
  CHECK(reg.text() == "# HELP good h\n# TYPE good gauge\ngood 1\n");
}

TEST_CASE("histogram: fixed buckets written cumulative, ending with +Inf, with sum and count") {
  metrics::Histogram h({0.1, 1});
  for (double v : {0.05, 0.1, 0.5, 3.0}) h.observe(v);   // 0.1 falls in the le="0.1" bucket (upper bound inclusive)
  metrics::Registry reg;
  reg.histogram("jetsweep_h_seconds", "h", {{"worker", "main"}}, h.snapshot());
  CHECK(reg.text() ==
        "# HELP jetsweep_h_seconds h\n"
        "# TYPE jetsweep_h_seconds histogram\n"
        "jetsweep_h_seconds_bucket{worker=\"main\",le=\"0.1\"} 2\n"
        "jetsweep_h_seconds_bucket{worker=\"main\",le=\"1\"} 3\n"
        "jetsweep_h_seconds_bucket{worker=\"main\",le=\"+Inf\"} 4\n"
        "jetsweep_h_seconds_sum{worker=\"main\"} 3.65\n"
        "jetsweep_h_seconds_count{worker=\"main\"} 4\n");
  metrics::Registry declared;
  declared.declare("jetsweep_empty", "no samples yet", "counter");
  CHECK(declared.text() == "# HELP jetsweep_empty no samples yet\n# TYPE jetsweep_empty counter\n");
}

TEST_CASE("fleet telemetry: samples placed on the controller's clock by t0 and the measured offset") {
  FleetTelemetry t;
  // Agent clock 100 s ahead of the controller's: t0 = 1100 on the agent is 1000 on the controller.
  t.add_samples(7, chunk(3, 1100.0, {0, 1, 2}), 100.0, 1003.0);
  auto points = t.recent(7, 1003.0);
  REQUIRE(points.size() == 3);
  CHECK(points[0].t_unix_s == 1000.0);
  CHECK(points[2].t_unix_s == 1002.0);
  CHECK(points[2].run_id == 3);
  REQUIRE(t.latest(7, 1003.0));
  CHECK(t.latest(7, 1003.0)->t_unix_s == 1002.0);
  CHECK(t.latest(7, 1003.0)->power_w == 5.0);
  // Without an offset (or without t0) the newest sample is taken to have arrived now.
  FleetTelemetry u;
  u.add_samples(1, chunk(3, 1100.0, {10, 11}), std::nullopt, 2000.0);
  REQUIRE(u.recent(1, 2000.0).size() == 2);
  CHECK(u.recent(1, 2000.0)[0].t_unix_s == 1999.0);
  CHECK(u.recent(1, 2000.0)[1].t_unix_s == 2000.0);
  CHECK(u.board(2) == nullptr);
  CHECK(u.recent(2, 2000.0).empty());
}

TEST_CASE("fleet telemetry: one point per second, at most 5 minutes, late chunks sorted in, stale latest hidden") {
  FleetTelemetry t;
  std::vector<double> fast;
  for (int i = 0; i < 40; ++i) fast.push_back(i * 0.25);   // 4 Hz for 10 s
  t.add_samples(1, chunk(1, 0.0, fast), 0.0, 10.0);
  CHECK(t.recent(1, 10.0).size() == 10);                  // one per kMinSpacingS
  CHECK(t.board(1)->latest->t_unix_s == 9.75);            // the newest sample is kept as latest anyway
  std::vector<double> long_run;
  for (int i = 10; i < 1000; ++i) long_run.push_back(i);
  t.add_samples(1, chunk(1, 0.0, long_run), 0.0, 1000.0);
  const auto points = t.recent(1, 1000.0);
  CHECK(points.size() <= FleetTelemetry::kMaxPoints);
  CHECK(points.front().t_unix_s >= 1000.0 - FleetTelemetry::kWindowS);
  CHECK(points.back().t_unix_s == 999.0);
  // A resent chunk from earlier in the window lands in time order.
  t.add_samples(1, chunk(1, 0.0, {800.5}, 9.0), 0.0, 1000.0);
  const auto sorted = t.recent(1, 1000.0);
  CHECK(std::is_sorted(sorted.begin(), sorted.end(),
                       [](const auto& a, const auto& b) { return a.t_unix_s < b.t_unix_s; }));
  CHECK(t.latest(1, 1000.0)->t_unix_s == 999.0);
  // Ten minutes later the board says nothing about now.
  CHECK_FALSE(t.latest(1, 1600.0));
  CHECK(t.recent(1, 1600.0).empty());
  t.heartbeat(1, proto::Heartbeat{"running", 1, {}, {}}, 1600.0);
  CHECK(t.board(1)->last_heartbeat_unix_s == 1600.0);
  CHECK(t.board(1)->heartbeat_state == "running");
  CHECK(t.board(1)->heartbeat_run == 1);
}

TEST_CASE("GET /api/fleet and GET /metrics: a busy board's power, applied state, counts and latencies") {
  auto options = test_options();
  options.api_token = "secret-token";
  ControllerFixture f(options);
  auto agent = f.connect_agent(test_register("host-1"));
  auto idle = f.connect_agent(test_register("orin-1", "orin-nano"));
  REQUIRE(call(f, http::verb::post, "/api/campaigns", kToken,
               "campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n")
              .result() == http::status::created);
  REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
  const int64_t run = agent->all<proto::AssignRun>()[0].run_id;
  proto::RunStarted started;
  started.run_id = run;
  started.applied = proto::BoardState{"MAXN", 0, 4, 1420000, 921000000, 1600000000, true, "max"};
  started.t0_unix_s = proto::unix_now_s();
  agent->send(started);
  agent->send(chunk(run, started.t0_unix_s, {0, 1, 2}, 7.25));
  REQUIRE(f.round_trip(*agent));

  // The token is required.
  CHECK(call(f, http::verb::get, "/metrics", "").result() == http::status::unauthorized);
  CHECK(call(f, http::verb::get, "/api/fleet", "wrong").result() == http::status::unauthorized);

  auto fleet_res = call(f, http::verb::get, "/api/fleet");
  REQUIRE(fleet_res.result() == http::status::ok);
  auto fleet = api::decode<std::vector<api::FleetBoard>>(boost::json::parse(fleet_res.body()), "fleet");
  REQUIRE(fleet.is_ok());
  REQUIRE(fleet->size() == 2);
  const api::FleetBoard& busy = fleet->at(0);
  CHECK(busy.name == "host-1");
  CHECK(busy.state == "busy");
  CHECK(busy.current_run == run);
  CHECK(busy.power_mode == "MAXN");
  REQUIRE(busy.applied);
  CHECK(busy.applied->at("gpu_hz").to_number<double>() == 921000000.0);
  REQUIRE(busy.latest);
  CHECK(busy.latest->power_w == 7.25);
  CHECK(busy.series.size() == 3);
  CHECK(fleet->at(1).state == "idle");
  CHECK_FALSE(fleet->at(1).latest);
  CHECK(fleet->at(1).series.empty());
  // The codec reads back what it wrote, and names the place of a bad field.
  CHECK(api::to_json(*fleet) == boost::json::parse(fleet_res.body()));
  boost::json::value broken = boost::json::parse(fleet_res.body());
  broken.as_array()[0].as_object()["series"].as_array()[1].as_object().erase("cpu_util_pct");
  auto bad = api::decode<std::vector<api::FleetBoard>>(broken, "fleet");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("fleet[0] field 'series[1]'") != std::string::npos);
  CHECK(bad.status().message().find("cpu_util_pct") != std::string::npos);

  auto res = call(f, http::verb::get, "/metrics");
  REQUIRE(res.result() == http::status::ok);
  CHECK(res[http::field::content_type] == metrics::kContentType);
  const std::string text = res.body();
  const std::string board = "{name=\"host-1\",device_class=\"host\"}";
  CHECK(sample(text, "jetsweep_board_power_watts" + board) == "7.25");
  CHECK(sample(text, "jetsweep_board_applied_gpu_frequency_hertz" + board) == "921000000");
  CHECK(sample(text, "jetsweep_board_applied_cpu_frequency_hertz" + board) == "1420000000");
  CHECK(sample(text, "jetsweep_board_applied_cores_online" + board) == "4");
  CHECK(sample(text, "jetsweep_board_power_mode_info{name=\"host-1\",device_class=\"host\",mode=\"MAXN\"}") == "1");
  CHECK_FALSE(sample(text, "jetsweep_board_power_watts{name=\"orin-1\",device_class=\"orin-nano\"}"));
  CHECK(sample(text, "jetsweep_agents{state=\"busy\",device_class=\"host\"}") == "1");
  CHECK(sample(text, "jetsweep_agents{state=\"idle\",device_class=\"orin-nano\"}") == "1");
  CHECK(sample(text, "jetsweep_agents{state=\"offline\",device_class=\"host\"}") == "0");
  CHECK(sample(text, "jetsweep_runs{state=\"running\"}") == "1");
  CHECK(sample(text, "jetsweep_ingest_messages_total{type=\"run_started\"}") == "1");
  CHECK(sample(text, "jetsweep_runs{state=\"queued\"}") == "0");
  CHECK(sample(text, "jetsweep_dispatch_latency_seconds_count") == "1");
  CHECK(sample(text, "jetsweep_ingest_messages_total{type=\"samples\"}") == "1");
  CHECK(sample(text, "jetsweep_ingest_rows_total{type=\"samples\"}") == "3");
  CHECK(sample(text, "jetsweep_db_errors_total{worker=\"main\",code=\"db_error\"}") == "0");
  CHECK(sample(text, "jetsweep_db_latency_seconds_bucket{worker=\"main\",le=\"+Inf\"}").has_value());
  CHECK(occurrences(text, "# TYPE jetsweep_board_power_watts gauge\n") == 1);
  CHECK(occurrences(text, "# TYPE jetsweep_db_errors_total counter\n") == 1);
}

}  // TEST_SUITE
