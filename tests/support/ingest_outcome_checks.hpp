// What every Store makes of each result message (issue 29, "no ambiguous drops"; Store's ingest contract): written
// (kStored), a resend of what is stored (kDuplicate), or measured by an agent that no longer holds the run
// (kSetAside: kept apart, counted in the campaign's status, never in the run's rows); a run's end never changes
// after it ended. Run against MemoryStore and PgStore (tests/store). One test thread.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "common/campaign.hpp"
#include "controller/store.hpp"

namespace jetsweep::testing {

// Two host agents and a two-run campaign in `store`, with what the checks below call on it.
struct OutcomeFixture {
  explicit OutcomeFixture(controller::Store& s) : store(s) {
    a = agent("outcome-a");
    b = agent("outcome-b");
    const std::string yaml =
        "campaign: outcomes\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";
    auto parsed = parse_campaign(yaml, "outcomes.yaml");
    REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
    auto created = store.create_campaign(parsed.value(), "outcomes.yaml", yaml, "");
    REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
    campaign = created->campaign_id;
  }
  // A host agent's registration.
  static proto::Register host_agent(const std::string& name) {
    proto::Register reg;
    reg.name = name;
    reg.facts.hostname = name + ".test";
    reg.facts.cpus = 4;
    reg.facts.mem_bytes = int64_t{8} << 30;
    reg.facts.backend = "host";
    reg.facts.device_class = "host";
    return reg;
  }
  int64_t agent(const std::string& name) {
    auto r = store.register_agent(host_agent(name), controller::AgentProof{std::nullopt, std::string(64, 'c'), true});
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return r->agent_id;
  }
  int64_t claim(int64_t agent_id) {
    auto c = store.claim_run(agent_id, "host", "");
    REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
    REQUIRE(c->has_value());
    return (*c)->run_id;
  }
  static std::string outcome(const Result<controller::IngestOutcome>& r) {
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return controller::outcome_name(*r);
  }
  static proto::EpochResult epoch(int64_t run, int64_t n, double e2e) {
    proto::EpochResult e;
    e.run_id = run;
    e.epoch = n;
    e.e2e_s = e2e;
    e.stall_s = 0.1;
    e.compute_s = e2e - 0.1;
    e.minibatches = 2;
    return e;
  }
  int64_t set_aside() {
    auto s = store.campaign_status(campaign);
    REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    return s->set_aside_results;
  }
  api::ReportRun run_state(int64_t run) {
    auto d = store.run_detail(run);
    REQUIRE_MESSAGE(d.is_ok(), d.status().to_string());
    return static_cast<const api::ReportRun&>(*d);
  }

  controller::Store& store;
  int64_t a = 0, b = 0, campaign = 0;
};

// Run 1 on agent a: each message stored once, its resend a duplicate; agent b's results for it set aside; after it
// ended, resends of what landed are duplicates, a contradicting end or a result that never landed set aside.
inline int64_t check_outcomes_of_one_run(OutcomeFixture& f, controller::Store& store) {
  const int64_t a = f.a, b = f.b;
  auto outcome = &OutcomeFixture::outcome;
  auto epoch = &OutcomeFixture::epoch;
  const int64_t run1 = f.claim(a);
  proto::RunStarted started;
  started.run_id = run1;
  started.compute_device = "cpu";
  started.t0_unix_s = 1000.0;
  proto::WorkloadFacts workload;
  workload.parameters = 61706;
  workload.forward_macs = 416520;
  workload.dataset_fingerprint = std::string(64, 'e');
  workload.dataset_files = 2;
  workload.dataset_bytes = 47040024;
  started.workload = workload;
  CHECK(outcome(store.start_run(a, started)) == "stored");
  CHECK(outcome(store.start_run(a, started)) == "duplicate");
  // What the agent measured it trained is kept as sent (proto::WorkloadFacts JSON) and reported.
  REQUIRE(f.run_state(run1).workload.has_value());
  CHECK(*f.run_state(run1).workload == proto::to_json(workload));
  CHECK(outcome(store.ingest_epoch(a, epoch(run1, 0, 2.0))) == "stored");
  CHECK(outcome(store.ingest_epoch(a, epoch(run1, 0, 2.0))) == "duplicate");
  CHECK(outcome(store.ingest_minibatches(a, {run1, 0, 0, {0.1, 0.2}, {1, 1}, {}})) == "stored");
  CHECK(outcome(store.ingest_minibatches(a, {run1, 0, 0, {0.1, 0.2}, {1, 1}, {}})) == "duplicate");
  CHECK(outcome(store.ingest_minibatches(a, {run1, 0, 1, {0.2, 0.3}, {1, 1}, {}})) == "stored");   // one row new
  proto::SampleChunk samples;
  samples.run_id = run1;
  samples.samples.resize(2);
  samples.samples[1].t_s = 0.5;
  CHECK(outcome(store.ingest_samples(a, samples)) == "stored");
  CHECK(outcome(store.ingest_samples(a, samples)) == "duplicate");
  CHECK(f.set_aside() == 0);

  CHECK(outcome(store.ingest_epoch(b, epoch(run1, 1, 9.0))) == "set_aside");
  CHECK(outcome(store.ingest_epoch(b, epoch(run1, 1, 9.0))) == "duplicate");
  CHECK(f.set_aside() == 1);

  CHECK(outcome(store.finish_run(a, {run1, "done", "", 3.0})) == "stored");
  CHECK(outcome(store.finish_run(a, {run1, "done", "", 3.0})) == "duplicate");
  CHECK(outcome(store.finish_run(a, {run1, "failed", "late", 4.0})) == "set_aside");
  CHECK(f.run_state(run1).status == "done");
  CHECK(f.run_state(run1).wall_s == 3.0);
  CHECK(outcome(store.ingest_epoch(a, epoch(run1, 0, 2.0))) == "duplicate");
  CHECK(outcome(store.ingest_minibatches(a, {run1, 0, 0, {0.1, 0.2}, {1, 1}, {}})) == "duplicate");
  CHECK(outcome(store.ingest_samples(a, samples)) == "duplicate");
  CHECK(outcome(store.start_run(a, started)) == "duplicate");
  CHECK(outcome(store.ingest_epoch(a, epoch(run1, 1, 2.5))) == "set_aside");
  CHECK(f.set_aside() == 3);
  return run1;
}

inline void check_ingest_outcomes(controller::Store& store) {
  OutcomeFixture f(store);
  const int64_t a = f.a, b = f.b;
  auto outcome = &OutcomeFixture::outcome;
  auto epoch = &OutcomeFixture::epoch;
  const int64_t run1 = check_outcomes_of_one_run(f, store);

  // A run taken from its agent (requeued while it was away) and given to another: the first agent's results for
  // it are set aside, the new agent's stored.
  const int64_t run2 = f.claim(a);
  proto::RunStarted started2;
  started2.run_id = run2;
  started2.t0_unix_s = 1000.0;
  started2.workload = proto::WorkloadFacts{};
  started2.workload->dataset_fingerprint = std::string(64, 'f');
  CHECK(outcome(store.start_run(a, started2)) == "stored");
  REQUIRE(f.run_state(run2).workload.has_value());
  CHECK(outcome(store.ingest_epoch(a, epoch(run2, 0, 2.0))) == "stored");
  auto requeued = store.requeue_agent_runs(a, {}, "agent gone past its lease");
  REQUIRE(requeued.is_ok());
  CHECK(*requeued == 1);
  CHECK(outcome(store.ingest_epoch(a, epoch(run2, 1, 2.0))) == "set_aside");
  CHECK(f.claim(b) == run2);
  CHECK_FALSE(f.run_state(run2).workload.has_value());   // a re-executed run starts clean
  CHECK(outcome(store.ingest_epoch(b, epoch(run2, 0, 2.2))) == "stored");
  CHECK(outcome(store.ingest_epoch(a, epoch(run2, 0, 2.0))) == "set_aside");
  CHECK(outcome(store.finish_run(a, {run2, "done", "", 3.0})) == "set_aside");
  CHECK(f.run_state(run2).status == "running");
  CHECK(f.set_aside() == 6);

  // A run that does not exist (its campaign dropped): not kept anywhere, so not in any campaign's count.
  CHECK(outcome(store.ingest_epoch(a, epoch(run2 + 1000, 0, 2.0))) == "set_aside");
  CHECK(f.set_aside() == 6);

  // The runs' rows hold only what their holders sent.
  auto report = store.campaign_report(f.campaign, controller::ReportEpochs::kRows);
  REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  REQUIRE(report->runs.size() == 2);
  for (const auto& r : report->runs) {
    REQUIRE(r.epochs.size() == 1);
    CHECK(r.epochs[0].e2e_s == (r.run_id == run1 ? 2.0 : 2.2));
  }
}

}  // namespace jetsweep::testing
