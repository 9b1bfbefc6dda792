// What every Store keeps of adaptive-profiling plans (issue 33; Store::adaptive_plans_due, add_adaptive_round,
// finish_adaptive_plan, and the plans in campaign_status): a plan is created with its campaign, due while none of
// its runs is open, a round is created once (its runs with it) however often it is recorded, the figures of its
// finished runs are those analysis reads (epochs 1+, the recorded minibatch mean), and an ended plan stays ended.
// Run against MemoryStore and PgStore (tests/store). One test thread.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "common/campaign.hpp"
#include "controller/store.hpp"

namespace jetsweep::testing {

// Round 0's two runs on a fresh agent: the first (mode `first_mode`) done with two epochs, minibatches recorded in
// epoch 1 (their mean 50 ms, E2E / minibatches 500 ms) and 12.5 W; the second failed. Returns the first's id.
inline int64_t finish_round_zero(controller::Store& store, const ModeSettings& first_mode) {
  proto::Register reg;
  reg.name = "orin-a";
  reg.facts.hostname = "orin-a.test";
  reg.facts.cpus = 12;
  reg.facts.mem_bytes = int64_t{64} << 30;
  reg.facts.backend = "sim";
  reg.facts.device_class = "agx-orin";
  reg.facts.board_id = "sim:agx-orin/a";
  auto agent = store.register_agent(reg, controller::AgentProof{std::string(64, 'c'), std::string(64, 'c')});
  REQUIRE_MESSAGE(agent.is_ok(), agent.status().to_string());
  const int64_t a = agent->agent_id;
  auto first = store.claim_run(a, "agx-orin", "");
  REQUIRE(first.is_ok());
  REQUIRE(first->has_value());
  CHECK(mode_settings_of((*first)->config) == first_mode);
  proto::EpochResult e0;
  e0.run_id = (*first)->run_id;
  e0.epoch = 0;
  e0.e2e_s = 5.0;
  e0.minibatches = 2;
  e0.mean_power_w = 99.0;   // the warm-up epoch: not in the figures
  REQUIRE(store.ingest_epoch(a, e0).is_ok());
  proto::EpochResult e1 = e0;
  e1.epoch = 1;
  e1.e2e_s = 1.0;            // E2E / minibatches = 500 ms; the recorded minibatches' mean is 50 ms
  e1.mean_power_w = 12.5;
  REQUIRE(store.ingest_epoch(a, e1).is_ok());
  REQUIRE(store.ingest_minibatches(a, {e1.run_id, 1, 0, {0.01, 0.02}, {0.04, 0.03}, {}}).is_ok());
  REQUIRE(store.finish_run(a, proto::RunFinished{e1.run_id, "done", "", 6.0}).is_ok());
  auto second = store.claim_run(a, "agx-orin", "");
  REQUIRE(second.is_ok());
  REQUIRE(second->has_value());
  REQUIRE(store.finish_run(a, proto::RunFinished{(*second)->run_id, "failed", "out of memory", 1.0}).is_ok());

  return e1.run_id;
}

// The history of a plan whose round 0 queued 2 modes, decided from the fit check_adaptive_plans records with it.
inline void check_round_zero_history(const api::AdaptivePlanStatus& plan) {
  REQUIRE(plan.history.size() == 1);
  const api::AdaptiveRoundStatus& r0 = plan.history[0];
  CHECK(r0.round == 0);
  CHECK(r0.modes == 2);
  CHECK(r0.observations == 2);
  CHECK(r0.time_loo_pct == std::optional<double>(7.5));
  CHECK(r0.power_loo_pct == std::optional<double>(2.5));
  CHECK(r0.front_size == std::optional<int64_t>(4));
  CHECK(r0.front_changed == std::optional<int64_t>(1));
}

inline void check_adaptive_plans(controller::Store& store) {
  namespace bj = boost::json;
  const std::string yaml =
      "campaign: adaptive\nmatrix:\n  device: agx-orin\n  model: lenet5\n  dataset: mnist\n  epochs: 2\n"
      "  power_mode: {generate: adaptive, budget: 6, reference: ref.csv, every: 4, cores: [4, 8]}\n";
  auto parsed = parse_campaign(yaml, "adaptive.yaml");
  REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  REQUIRE(parsed->adaptive_plans.size() == 1);
  const AdaptivePlanSpec& spec = parsed->adaptive_plans[0];
  auto created = store.create_campaign(*parsed, "adaptive.yaml", yaml, "");
  REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
  const int64_t campaign = created->campaign_id;
  CHECK(created->runs == 0);

  auto status = store.campaign_status(campaign);
  REQUIRE(status.is_ok());
  REQUIRE(status->adaptive.size() == 1);
  CHECK(status->adaptive[0].state == "profiling");
  CHECK(status->adaptive[0].rounds == 0);
  CHECK(status->adaptive[0].budget == 6);
  CHECK(status->adaptive[0].candidates == static_cast<int64_t>(spec.candidates.size()));
  CHECK_FALSE(status->finished);   // its first round is still to come

  auto due = store.adaptive_plans_due();
  REQUIRE(due.is_ok());
  REQUIRE(due->size() == 1);
  const int64_t plan = (*due)[0].plan_id;
  CHECK((*due)[0].campaign_id == campaign);
  CHECK((*due)[0].spec.candidates == spec.candidates);
  CHECK((*due)[0].spec.base == spec.base);
  CHECK((*due)[0].observations.empty());
  CHECK_FALSE((*due)[0].fit.has_value());

  // Round 0, recorded twice (a retry, a restarted controller): created once.
  const std::vector<ModeSettings> modes = {spec.candidates[0], spec.candidates[1]};
  const bj::object fit0{{"summary", bj::object{{"observations", 2}, {"time_loo_pct", 7.5}, {"power_loo_pct", 2.5},
                                                {"front_size", 4}, {"front_changed", 1}}}};
  auto added = store.add_adaptive_round(plan, 0, modes, fit0);
  REQUIRE_MESSAGE(added.is_ok(), added.status().to_string());
  CHECK(*added);
  auto again = store.add_adaptive_round(plan, 0, {spec.candidates[2]}, fit0);
  REQUIRE(again.is_ok());
  CHECK_FALSE(*again);
  CHECK(store.add_adaptive_round(plan + 1000, 0, modes, fit0).status().code() == Code::kNotFound);
  status = store.campaign_status(campaign);
  REQUIRE(status.is_ok());
  CHECK(status->runs == 2);
  CHECK(status->queued == 2);
  CHECK(status->adaptive[0].rounds == 1);
  check_round_zero_history(status->adaptive[0]);
  due = store.adaptive_plans_due();
  REQUIRE(due.is_ok());
  CHECK(due->empty());   // its round's runs are open

  const int64_t done_run = finish_round_zero(store, modes[0]);
  due = store.adaptive_plans_due();
  REQUIRE(due.is_ok());
  REQUIRE(due->size() == 1);
  const auto& obs = (*due)[0].observations;
  REQUIRE(obs.size() == 2);
  CHECK(obs[0].run_id == done_run);
  CHECK(obs[0].status == "done");
  CHECK(obs[0].mode == modes[0]);
  REQUIRE(obs[0].figures.minibatch_ms.has_value());
  CHECK(*obs[0].figures.minibatch_ms == doctest::Approx(50.0));
  REQUIRE(obs[0].figures.power_w.has_value());
  CHECK(*obs[0].figures.power_w == doctest::Approx(12.5));
  CHECK(obs[1].status == "failed");
  CHECK(obs[1].mode == modes[1]);
  CHECK_FALSE(obs[1].figures.minibatch_ms.has_value());
  CHECK((*due)[0].rounds == 1);
  REQUIRE((*due)[0].fit.has_value());
  CHECK(*(*due)[0].fit == fit0);

  // Ended: done with its fit; a later end changes nothing; the campaign is finished.
  const bj::object final_fit{{"summary", bj::object{{"observations", 1}, {"time_loo_pct", 4.5}, {"front_size", 3}}},
                             {"front", bj::array{0, 2, 5}}};
  REQUIRE(store.finish_adaptive_plan(plan, "done", final_fit, "").is_ok());
  REQUIRE(store.finish_adaptive_plan(plan, "failed", {}, "too late").is_ok());
  CHECK(store.finish_adaptive_plan(plan + 1000, "done", {}, "").code() == Code::kNotFound);
  status = store.campaign_status(campaign);
  REQUIRE(status.is_ok());
  REQUIRE(status->adaptive.size() == 1);
  const auto& p = status->adaptive[0];
  CHECK(p.state == "done");
  CHECK(p.error.empty());
  CHECK(p.profiled == 1);
  REQUIRE(p.time_loo_pct.has_value());
  CHECK(*p.time_loo_pct == doctest::Approx(4.5));
  CHECK(p.front_size == std::optional<int64_t>(3));
  CHECK(p.fit.empty());   // the status carries the summary only
  REQUIRE(p.history.size() == 1);   // the plan's end adds no round
  CHECK(p.history[0].modes == 2);
  CHECK_FALSE(p.front_changed.has_value());   // the latest fit's summary, not round 0's
  CHECK(status->finished);
  due = store.adaptive_plans_due();
  REQUIRE(due.is_ok());
  CHECK(due->empty());
}

}  // namespace jetsweep::testing
