// The API's JSON codec: every struct round-trips, the wire keeps its field names and nulls, and a bad
// answer is reported naming the field.
#include <doctest/doctest.h>

#include "common/api.hpp"

using namespace jetsweep;
namespace bj = boost::json;

namespace {

api::CampaignReport sample_report() {
  api::CampaignReport r;
  r.campaign = {4, "demo", "a demo", "demo.yaml", "2024-01-01 00:00:00+00"};
  r.power_sensor = true;
  r.simulated_runs = 1;
  api::ReportRun run;
  run.run_id = 11;
  run.status = "done";
  run.agent = "sim-1";
  run.config = bj::parse(R"({"model":"lenet5","dataset":"mnist","power_mode":{"name":"15W"}})").as_object();
  run.attempts = 1;
  run.wall_s = 12.5;
  run.facts = bj::parse(R"({"backend":"sim"})").as_object();
  run.applied = bj::parse(R"({"mode_name":"15W","cores_online":4})").as_object();
  run.reference_state = false;
  run.compute_device = "simulated";
  run.simulated = true;
  api::ReportEpoch e;
  e.epoch = 0;
  e.e2e_s = 3.5;
  e.stall_s = 1;
  e.compute_s = 2.5;
  e.minibatches = 100;
  e.energy_j = 40;
  e.loss = std::nullopt;   // diverged
  e.clocks_start = api::EpochClocks{4.0, 1420800.0, std::nullopt, std::nullopt};
  e.throttled = true;
  e.throttle_reason = "gpu clock fell";
  run.epochs.push_back(e);
  run.epochs.push_back(e);
  run.epochs.back().epoch = 1;
  run.epochs.back().throttled = false;
  run.epochs.back().throttle_reason.reset();
  run.summary = api::summarize_epochs(run.epochs);
  r.runs.push_back(run);
  return r;
}

}  // namespace

TEST_CASE("campaign report: round trip, nulls on the wire, absent throttle_reason omitted") {
  const auto report = sample_report();
  const bj::object o = api::to_json(report);
  const auto& epochs = o.at("runs").as_array()[0].as_object().at("epochs").as_array();
  CHECK(epochs[0].as_object().at("loss").is_null());
  CHECK(epochs[0].as_object().at("clocks_end").is_null());
  CHECK(epochs[0].as_object().at("throttle_reason") == "gpu clock fell");
  CHECK_FALSE(epochs[1].as_object().contains("throttle_reason"));
  CHECK(o.at("runs").as_array()[0].as_object().at("storage_medium").is_null());
  auto back = api::decode<api::CampaignReport>(bj::parse(bj::serialize(o)), "report");
  REQUIRE(back.is_ok());
  CHECK(bj::serialize(api::to_json(back.value())) == bj::serialize(o));
  CHECK_FALSE(back->runs[0].epochs[0].loss.has_value());
  CHECK(back->runs[0].epochs[0].clocks_start->cpu_khz == 1420800.0);
  CHECK(back->runs[0].applied->at("mode_name") == "15W");
  CHECK(back->runs[0].summary.first_throttle == std::optional<std::string>("epoch 0: gpu clock fell"));
}

TEST_CASE("run summary: epoch 0 apart, means of the later epochs, energy only where every later epoch has it") {
  std::vector<api::ReportEpoch> epochs(4);
  for (int i = 0; i < 4; ++i) {
    epochs[i].epoch = 3 - i;   // any order
    epochs[i].e2e_s = 10.0 - i;
    epochs[i].stall_s = 1;
    epochs[i].compute_s = 2.0 * i;
    epochs[i].minibatches = 100 + i;
    epochs[i].energy_j = 5.0;
  }
  epochs[1].throttled = true;   // epoch 2
  epochs[2].throttled = true;   // epoch 1: the first
  epochs[2].throttle_reason = "cpu clock fell";
  auto s = api::summarize_epochs(epochs);
  CHECK(s.epochs == 4);
  CHECK(s.minibatches == 100);   // of epoch 3, the last
  CHECK(s.e0_e2e_s == 7.0);
  CHECK(s.later_epochs == 3);
  CHECK(s.later_e2e_s == doctest::Approx(9.0));
  CHECK(s.later_compute_s == doctest::Approx(2.0));
  CHECK(s.later_energy_j == 5.0);
  CHECK(s.throttled_epochs == 2);
  CHECK(s.first_throttle == std::optional<std::string>("epoch 1: cpu clock fell"));
  epochs[0].energy_j.reset();
  CHECK_FALSE(api::summarize_epochs(epochs).later_energy_j.has_value());
  CHECK(api::summarize_epochs({}).epochs == 0);
}

TEST_CASE("campaign status and lists round-trip; key order is the wire's") {
  api::CampaignStatus s;
  s.campaign_id = 2;
  s.name = "x";
  s.state = "paused";
  s.paused = true;
  s.unrunnable = {{3, "3 runs need storage @ssd"}};
  s.unrunnable_runs = 3;
  const std::string wire = bj::serialize(api::to_json(std::vector<api::CampaignStatus>{s}));
  CHECK(wire.rfind(R"([{"campaign_id":2,"name":"x","description":"","created_at":"","runs":0,)", 0) == 0);
  CHECK(wire.find(R"("eta_s":null,"unrunnable_runs":3,"unrunnable":[{"runs":3,"reason":"3 runs need storage @ssd"}])") !=
        std::string::npos);
  auto back = api::decode<std::vector<api::CampaignStatus>>(bj::parse(wire), "campaigns");
  REQUIRE(back.is_ok());
  REQUIRE(back->size() == 1);
  CHECK(back->front().unrunnable[0].reason == "3 runs need storage @ssd");
  CHECK_FALSE(back->front().eta_s.has_value());
}

TEST_CASE("agents, cancel, estimate, health and errors round-trip") {
  api::AgentInfo a;
  a.agent_id = 1;
  a.name = "nx-1";
  a.not_ready = {"fan: no control"};
  auto ao = api::to_json(a);
  CHECK(ao.at("ready") == false);
  CHECK(ao.at("current_run").is_null());
  auto a2 = api::decode<api::AgentInfo>(ao, "agent");
  REQUIRE(a2.is_ok());
  CHECK(a2->not_ready == a.not_ready);

  api::RunCancelled c{5, 2, "running", true, std::nullopt, ""};
  auto c2 = api::decode<api::RunCancelled>(api::to_json(c), "cancel");
  REQUIRE(c2.is_ok());
  CHECK(c2->stopping);
  CHECK_FALSE(c2->agent.has_value());

  api::CampaignEstimate e;
  e.campaign = "c";
  e.per_device = {{"agx-orin", 4, 1, 100.0, 0, std::nullopt}};
  e.runs_estimated_from.papers_model = 3;
  const auto eo = api::to_json(e);
  CHECK(eo.at("per_device").as_array()[0].as_object().at("wall_s").is_null());
  auto e2 = api::decode<api::CampaignEstimate>(eo, "estimate");
  REQUIRE(e2.is_ok());
  CHECK(e2->runs_estimated_from.papers_model == 3);

  CHECK(api::decode<api::Health>(api::to_json(api::Health{true, 2, 0, 1}), "health")->ingest_queue == 1);
  CHECK(api::decode<api::ErrorReply>(bj::parse(R"({"error":"no campaign 'x'"})"), "error")->error == "no campaign 'x'");
}

TEST_CASE("decoding names the place and the field") {
  auto bad = bj::parse(R"({"campaign":{"id":1,"name":"n","description":"","source_file":"f","created_at":"t"},
    "power_sensor":false,"simulated_runs":0,"epochs_included":true,"runs":[{"run_id":"seven"}]})");
  auto r = api::decode<api::CampaignReport>(bad, "campaign report");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Code::kProtocolError);
  CHECK(r.status().message().find("campaign report field 'runs[0]'") != std::string::npos);
  CHECK(r.status().message().find("field 'run_id': expected an integer, got string") != std::string::npos);
  CHECK(api::decode<api::CampaignStatus>(bj::parse("[]"), "status").status().message() ==
        "status: expected an object");
  // A required list missing is an error, never an empty list: an agent without its readiness checks is not "ready".
  bj::object agent = api::to_json(api::AgentInfo{});
  agent.erase("not_ready");
  const auto no_checks = api::decode<api::AgentInfo>(agent, "agent");
  REQUIRE_FALSE(no_checks.is_ok());
  CHECK(no_checks.status().message() == "agent field 'not_ready': missing");
  auto missing = api::decode<api::CreatedCampaignReply>(bj::parse(R"({"campaign_id":1,"name":"n"})"), "submission");
  CHECK(missing.status().message().find("field 'runs': missing") != std::string::npos);
}

TEST_CASE("request targets") {
  CHECK(api::campaign_path("demo") == "/api/campaigns/demo");
  CHECK(api::campaign_report_path("3") == "/api/campaigns/3/report");
  CHECK(api::campaign_action_path({"3", "resume"}) == "/api/campaigns/3/resume");
  CHECK(api::CampaignStateChange{"3", "pause"}.state() == "paused");
  CHECK(api::CampaignStateChange{"3", "frob"}.state().empty());
  CHECK(api::run_cancel_path("9") == "/api/runs/9/cancel");
}

TEST_CASE("adaptive plan status: the round history round-trips; older answers without it decode; bad rounds named") {
  api::CampaignStatus s;
  s.campaign_id = 5;
  api::AdaptivePlanStatus p;
  p.plan_id = 9;
  p.state = "profiling";
  p.rounds = 2;
  p.history = {{0, 8, 0, std::nullopt, std::nullopt, std::nullopt, std::nullopt}, {1, 2, 8, 12.5, 3.25, 6, 2}};
  s.adaptive.push_back(p);
  const std::string wire = bj::serialize(api::to_json(s));
  CHECK(wire.find(R"("history":[{"round":0,"modes":8,"observations":0,"time_loo_pct":null,"power_loo_pct":null,)"
                  R"("front_size":null,"front_changed":null},{"round":1,"modes":2,"observations":8,"time_loo_pct":1.25E1,)"
                  R"("power_loo_pct":3.25E0,"front_size":6,"front_changed":2}])") != std::string::npos);
  auto back = api::decode<api::CampaignStatus>(bj::parse(wire), "status");
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  REQUIRE(back->adaptive.size() == 1);
  const auto& h = back->adaptive[0].history;
  REQUIRE(h.size() == 2);
  CHECK(h[0].round == 0);
  CHECK_FALSE(h[0].time_loo_pct.has_value());
  CHECK(h[1].modes == 2);
  CHECK(h[1].observations == 8);
  CHECK(h[1].time_loo_pct == std::optional<double>(12.5));
  CHECK(h[1].front_changed == std::optional<int64_t>(2));

  bj::value older = bj::parse(wire);   // a controller from before the history
  older.at("adaptive").as_array()[0].as_object().erase("history");
  auto old_back = api::decode<api::CampaignStatus>(older, "status");
  REQUIRE_MESSAGE(old_back.is_ok(), old_back.status().to_string());
  CHECK(old_back->adaptive[0].history.empty());

  bj::value bad = bj::parse(wire);
  bad.at("adaptive").as_array()[0].as_object()["history"].as_array()[1].as_object()["modes"] = "two";
  auto r = api::decode<api::CampaignStatus>(bad, "status");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() ==
        "status field 'adaptive[0]' field 'history[1]', field 'modes': expected an integer, got string");
}
