// Every API record's JSON, byte for byte (issue 32: one definition per record; the API's JSON unchanged). The
// documents below were written by the hand-written codecs of common/api*.cpp before those were derived from the
// records' descriptions; a derived codec must write exactly these bytes and read them back to the same record.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/api.hpp"
#include "common/json_parse.hpp"
#include "support/pinned_texts.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

struct Pinned {
  std::string json;                                              // to_json of the record, serialised
  std::function<std::string(const std::string&)> round_trip;     // decode, then to_json again
};

template <class T>
Pinned pin(const T& v) {
  return {bj::serialize(api::to_json(v)), [](const std::string& text) {
            auto back = api::decode<T>(json::parse_exact(text), "pinned");
            REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
            return bj::serialize(api::to_json(back.value()));
          }};
}

api::ReportEpoch full_epoch() {
  api::ReportEpoch e;
  e.epoch = 2, e.e2e_s = 12.5, e.stall_s = 0.25, e.compute_s = 11.0, e.minibatches = 938;
  e.energy_j = 123.5, e.mean_power_w = 9.875, e.loss = 0.5, e.read_mb_s = 85.5, e.read_iops = 1200.0;
  e.cache_start_frac = 0.0, e.cache_end_frac = 1.0, e.t_start_s = 3.0, e.t_end_s = 15.5, e.power_coverage = 0.75;
  e.paused_before_s = 2.5;
  e.clocks_start = api::EpochClocks{6.0, 1510400.0, 624750000.0, 2133000000.0};
  e.clocks_end = api::EpochClocks{4.0, std::nullopt, std::nullopt, std::nullopt};
  e.throttled = true, e.throttle_reason = "cpu0 at 1190400 kHz";
  e.start_unix_s = 1764600000.5, e.end_unix_s = 1764600013.0;
  e.minibatch_stats = api::MinibatchStats{938, 0.001, 0.0005, 0.003, 0.011, 0.0105, 0.0125};
  return e;
}

api::ReportRun full_run() {
  api::ReportRun r;
  r.run_id = 5, r.status = "done", r.agent = "orin-1";
  r.config = bj::object{{"model", "resnet18"}, {"batch_size", 32}};
  r.error = "", r.attempts = 2, r.reboots = 1, r.wall_s = 125.5;
  r.facts = bj::object{{"backend", "jetson"}};
  r.applied = bj::object{{"mode_name", "MAXN"}};
  r.reference_state = false, r.storage_medium = "ssd", r.storage_device = "nvme0n1", r.page_cache_dropped = true;
  r.compute_device = "cuda:0 (Orin)";
  r.workload = bj::object{{"model_sha256", ""}};
  r.simulated = false;
  r.epochs = {full_epoch(), api::ReportEpoch{}};
  r.summary = api::summarize_epochs(r.epochs);
  return r;
}

api::AdaptivePlanStatus plan() {
  api::AdaptivePlanStatus p;
  p.plan_id = 3, p.device = "agx-orin", p.workload = "resnet18/cifar10", p.state = "profiling", p.rounds = 2;
  p.budget = 15, p.profiled = 8, p.candidates = 4368, p.error = "";
  p.time_loo_pct = 4.25, p.front_size = 12, p.front_changed = 3;
  p.fit = bj::object{{"modes", 4368}};
  p.history = {api::AdaptiveRoundStatus{1, 5, 0, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
               api::AdaptiveRoundStatus{2, 3, 5, 4.25, 1.5, 12, 3}};
  return p;
}

std::vector<Pinned> records() {
  std::vector<Pinned> out;
  out.push_back(pin(api::ErrorReply{"no such campaign", std::nullopt}));
  out.push_back(pin(api::ErrorReply{"internal error", std::string("e-17")}));
  out.push_back(pin(api::Health{true, 3, 1, 2}));
  api::AgentInfo a;
  a.agent_id = 4, a.name = "orin-1", a.hostname = "orin-1.lab", a.cpus = 12, a.mem_bytes = 68719476736;
  a.backend = "jetson", a.device_class = "agx-orin", a.kernel = "5.15", a.torch_version = "2.3.0";
  a.compiler = "GCC 11.4", a.git_sha = "abc123", a.connected = true, a.last_seen = "2026-12-02T06:00:00Z";
  a.current_run = 17, a.rebooting_until = "2026-12-02T06:02:00Z", a.accelerator = "cuda:0 (Orin)";
  a.not_ready = {"clocks: not root"};
  out.push_back(pin(a));
  out.push_back(pin(api::AgentInfo{}));
  out.push_back(pin(api::Unrunnable{3, "no agx-orin board enrolled"}));
  api::CampaignStatus c;
  c.campaign_id = 9, c.name = "sweep", c.description = "d", c.created_at = "2026-12-02", c.runs = 10, c.queued = 1;
  c.assigned = 2, c.running = 3, c.done = 2, c.failed = 1, c.lost = 1, c.epochs_total = 50, c.epochs_done = 20;
  c.cancelled = 0, c.state = "active", c.priority = 5, c.finished = false, c.paused = false, c.eta_s = 3600.5;
  c.unrunnable_runs = 3, c.unrunnable = {api::Unrunnable{3, "no board"}}, c.set_aside_results = 4;
  c.adaptive = {plan()};
  out.push_back(pin(c));
  out.push_back(pin(api::CampaignStatus{}));
  out.push_back(pin(api::CreatedCampaignReply{9, "sweep", 10, 2}));
  out.push_back(pin(api::AgentRevoked{"orin-1", true, false}));
  out.push_back(pin(api::RunCancelled{5, 9, "cancelled", true, std::string("orin-1"), ""}));
  out.push_back(pin(api::RunCancelled{5, 9, "done", false, std::nullopt, "the run has ended"}));
  api::CampaignEstimate est;
  est.campaign = "sweep", est.runs = 10, est.estimated_wall_s = 7200.25;
  est.per_device = {api::EstimateTarget{"agx-orin", 6, 1, 3600.5, 2, 1800.25},
                    api::EstimateTarget{"nano", 4, 4, 0, 0, std::nullopt}};
  est.runs_estimated_from = api::EstimateSources{1, 2, 3, 4, 5, 6};
  est.gating_refused = {"run 3: MODE_X"};
  est.mode_tables = {"agx-orin: board"};
  out.push_back(pin(est));
  out.push_back(pin(api::CampaignEstimate{}));
  out.push_back(pin(api::ReportCampaign{9, "sweep", "d", "sweep.yaml", "2026-12-02"}));
  out.push_back(pin(full_epoch()));
  out.push_back(pin(api::ReportEpoch{}));
  out.push_back(pin(full_run()));
  out.push_back(pin(api::ReportRun{}));
  api::CampaignReport report;
  report.campaign = api::ReportCampaign{9, "sweep", "d", "sweep.yaml", "2026-12-02"};
  report.power_sensor = true, report.simulated_runs = 1, report.epochs_included = true;
  report.runs = {full_run()};
  report.adaptive = {plan()};
  out.push_back(pin(report));
  out.push_back(pin(api::CampaignReport{}));
  out.push_back(pin(plan()));
  out.push_back(pin(api::AdaptivePlanStatus{}));
  out.push_back(pin(api::RunDetail{full_run(), 9, "sweep"}));
  out.push_back(pin(api::RunSample{1.5, 1764600001.5, 7.75, 42.25, 1190.5, 1048576, 4096, 51.5}));
  out.push_back(pin(api::RunSample{}));
  out.push_back(pin(api::SessionInfo{"viewer", true}));
  api::FleetBoard board;
  board.agent_id = 4, board.name = "orin-1", board.device_class = "agx-orin", board.connected = true;
  board.state = "busy", board.current_run = 17, board.simulated = false, board.not_ready = {"clocks: not root"};
  board.last_seen = "2026-12-02T06:00:00Z", board.last_heartbeat_unix_s = 1764600000.5;
  board.backlog_messages = 12, board.backlog_bytes = 40960;
  board.applied = bj::object{{"mode_name", "MAXN"}}, board.power_mode = "MAXN";
  board.latest = api::FleetLatest{1764600000.25, 30.5, 75.25, 2201.5, 4194304, 61.5};
  board.series = {api::FleetPoint{1764600000.0, 30.0, 70.5, 2201.5, 60.5},
                  api::FleetPoint{1764600001.0, std::nullopt, 71.5, std::nullopt, std::nullopt}};
  out.push_back(pin(board));
  out.push_back(pin(api::FleetBoard{}));
  return out;
}

const char* const kPinned[] = {
#include "api_json.inc"
};

}  // namespace

TEST_CASE("every API record's JSON is byte for byte what the hand-written codecs wrote, and reads back the same") {
  const auto all = records();
  std::vector<std::string> texts;
  for (const auto& p : all) texts.push_back(p.json);
  testing::write_pins_if_asked("JETSWEEP_WRITE_API_JSON", texts);   // regenerates api_json.inc
  REQUIRE(all.size() == std::size(kPinned));
  for (size_t i = 0; i < all.size(); ++i) {
    CAPTURE(i);
    CHECK(all[i].json == kPinned[i]);
    CHECK(all[i].round_trip(kPinned[i]) == kPinned[i]);
  }
}
