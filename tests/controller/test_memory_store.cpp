// MemoryStore keeps PgStore's semantics: the queue order and fit, attempts and leases, cancels, and ingest
// that drops rows of runs the sender does not own.
#include <doctest/doctest.h>

#include "controller/memory_store.hpp"
#include "support/manual_clock.hpp"
#include "support/protocol_client.hpp"
#include "support/admission_checks.hpp"
#include "support/ingest_outcome_checks.hpp"
#include "support/model_file_checks.hpp"
#include "support/adaptive_store_checks.hpp"
#include "support/reboot_store_checks.hpp"
#include "support/report_summary_checks.hpp"
#include "support/retry_checks.hpp"

using namespace jetsweep;
using jetsweep::controller::MemoryStore;
using jetsweep::testing::ManualClock;
using jetsweep::testing::test_register;

namespace {

// A registration presenting no credential (its fresh one is all 'a').
const controller::AgentProof kFirstContact{std::nullopt, std::string(64, 'a')};

struct StoreFixture {
  ManualClock clock;
  MemoryStore store{2, [this] { return clock.now(); }};   // two attempts per run

  int64_t agent(const std::string& name, const std::string& cls = "host") {
    auto id = store.register_agent(test_register(name, cls), kFirstContact);
    REQUIRE(id.is_ok());
    return id->agent_id;
  }
  int64_t campaign(const std::string& yaml) {
    auto c = parse_campaign(yaml, "test.yaml");
    REQUIRE(c.is_ok());
    auto created = store.create_campaign(c.value(), "test.yaml", yaml, "");
    REQUIRE(created.is_ok());
    return created->campaign_id;
  }
  std::optional<int64_t> claim(int64_t agent_id, const std::string& cls = "host") {
    auto a = store.claim_run(agent_id, cls, "");
    REQUIRE(a.is_ok());
    if (!a.value()) return std::nullopt;
    return a.value()->run_id;
  }
  std::string status(int64_t run_id) { return store.run(run_id)->status; }

  // The usual start: campaign `yaml`, agent host-1 that claimed its first run.
  void start(const std::string& yaml) {
    c = campaign(yaml);
    host = agent("host-1");
    runs = store.runs_of(c);
    REQUIRE(claim(host) == runs.at(0).id);
  }
  int64_t c = 0, host = 0;
  std::vector<MemoryStore::Run> runs;
};

const char* const kOneRun = "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";
const char* const kTwoRuns = "campaign: c\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";

proto::EpochResult epoch_of(int64_t run_id, int64_t epoch, double e2e_s = 1) {
  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = epoch;
  e.e2e_s = e.compute_s = e2e_s;
  e.minibatches = 1;
  return e;
}

}  // namespace

TEST_SUITE("memory store") {

TEST_CASE("claims follow priority, then campaign age, then run id; only runs the agent fits") {
  StoreFixture f;
  const int64_t old = f.campaign("campaign: old\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n");
  const int64_t urgent = f.campaign("campaign: urgent\npriority: 5\nmatrix: {model: lenet5, dataset: mnist, device: any}\n");
  const int64_t other = f.campaign("campaign: other\npriority: 9\nmatrix: {model: lenet5, dataset: mnist, device: orin-nano}\n");
  const int64_t host = f.agent("host-1");
  const auto old_runs = f.store.runs_of(old);
  CHECK(f.claim(host) == f.store.runs_of(urgent)[0].id);   // priority 5 first; 'other' is not for hosts
  CHECK(f.claim(host) == old_runs[0].id);
  CHECK(f.claim(host) == old_runs[1].id);
  CHECK(f.claim(host) == std::nullopt);
  CHECK(f.status(f.store.runs_of(other)[0].id) == "queued");
  const auto assigned = f.store.run(old_runs[0].id);
  CHECK(assigned->agent_id == host);
  CHECK(assigned->attempts == 1);
  REQUIRE(assigned->facts);
  CHECK(assigned->facts->at("backend") == "sim");
}

TEST_CASE("a paused campaign hands out nothing; cancelling it cancels queued runs and stops executing ones") {
  StoreFixture f;
  f.start(kTwoRuns);
  const auto& [c, host, runs] = std::tie(f.c, f.host, f.runs);
  REQUIRE(f.store.set_campaign_state(c, "paused").is_ok());
  CHECK(f.claim(f.agent("host-2")) == std::nullopt);
  CHECK(f.store.set_campaign_state(c, "stopped").code() == Code::kInvalidArgument);
  CHECK(f.store.set_campaign_state(c + 100, "active").code() == Code::kNotFound);

  REQUIRE(f.store.set_campaign_state(c, "cancelled").is_ok());
  CHECK(f.status(runs[1].id) == "cancelled");
  CHECK(f.store.run(runs[1].id)->error == "campaign cancelled");
  CHECK(f.status(runs[0].id) == "assigned");
  auto stop = f.store.runs_to_stop();
  REQUIRE(stop.is_ok());
  REQUIRE(stop->size() == 1);
  CHECK(stop->at(0).run_id == runs[0].id);
  CHECK(stop->at(0).agent_id == host);
  CHECK(f.store.set_campaign_state(c, "active").code() == Code::kInvalidArgument);
  REQUIRE(f.store.finish_run(host, {runs[0].id, "cancelled", "stopped", 2.0}).is_ok());
  CHECK(f.status(runs[0].id) == "cancelled");
  CHECK(f.store.run(runs[0].id)->error == "cancelled while running");
}

TEST_CASE("requeued runs use up their attempts and are then lost, with the reason") {
  StoreFixture f;
  f.start(kOneRun);
  const int64_t host = f.host, run = f.runs[0].id;
  CHECK(f.store.requeue_agent_runs(host, {run}, "kept").value() == 0);
  CHECK(f.store.requeue_agent_runs(host, {}, "agent gone").value() == 1);
  CHECK(f.status(run) == "queued");
  CHECK(f.store.run(run)->agent_id == std::nullopt);
  CHECK(f.store.run(run)->error == "agent gone");
  REQUIRE(f.claim(host) == run);
  CHECK(f.store.run(run)->attempts == 2);
  CHECK(f.store.requeue_agent_runs(host, {}, "agent gone again").value() == 1);
  CHECK(f.status(run) == "lost");
  CHECK(f.store.run(run)->error == "lost after 2 attempts; last: agent gone again");
  CHECK(f.claim(host) == std::nullopt);
}

TEST_CASE("unclaiming gives the attempt back, or cancels a run whose cancel was requested") {
  StoreFixture f;
  f.start(kTwoRuns);
  const auto& [c, host, runs] = std::tie(f.c, f.host, f.runs);
  REQUIRE(f.store.unclaim_run(runs[0].id, host).is_ok());
  CHECK(f.status(runs[0].id) == "queued");
  CHECK(f.store.run(runs[0].id)->attempts == 0);
  REQUIRE(f.claim(host) == runs[0].id);
  auto cancelled = f.store.cancel_run(runs[0].id);
  REQUIRE(cancelled.is_ok());
  CHECK(cancelled->stopping);
  CHECK(cancelled->agent == std::optional<std::string>("host-1"));
  REQUIRE(f.store.unclaim_run(runs[0].id, host).is_ok());
  CHECK(f.status(runs[0].id) == "cancelled");
  CHECK(f.store.run(runs[0].id)->error == "cancelled before it started");
  CHECK(f.store.cancel_run(9999).status().code() == Code::kNotFound);
}

TEST_CASE("runs of an agent disconnected for longer than the lease are requeued, by the injected clock") {
  StoreFixture f;
  f.start(kOneRun);
  const int64_t host = f.host, run = f.runs[0].id;
  f.clock.advance(100);
  CHECK(f.store.requeue_orphaned_runs(30).value() == 0);   // connected: no lease runs
  REQUIRE(f.store.set_agent_connected(host, false).is_ok());
  f.clock.advance(30);
  CHECK(f.store.requeue_orphaned_runs(30).value() == 0);   // exactly the lease: not yet
  f.clock.advance(0.5);
  CHECK(f.store.requeue_orphaned_runs(30).value() == 1);
  CHECK(f.status(run) == "queued");
  CHECK(f.store.run(run)->error == "agent host-1 disconnected for more than 30 s");
}

TEST_CASE("board reboots: fewest-reboot claims, runs held while the board is away, a replay recorded once") {
  StoreFixture f;
  testing::check_reboot_semantics(f.store, [&](double s) { f.clock.advance(s); });
}

TEST_CASE("model files: chunked uploads checked by size and SHA-256, kept once, served chunk by chunk (issue 31)") {
  StoreFixture f;
  testing::check_model_files(f.store);
}

TEST_CASE("enrolled boards: the frequency tables each registered, replaced on registering again") {
  StoreFixture f;
  testing::check_enrolled_board_facts(f.store);
}

TEST_CASE("ingest outcomes: stored, duplicate or set aside, as PgStore's (issue 29)") {
  StoreFixture f;
  testing::check_ingest_outcomes(f.store);
}

TEST_CASE("a submission and a claim retried with their keys: what the first attempt did, once (issue 32)") {
  StoreFixture f;
  testing::check_retried_use_cases(f.store);
}

TEST_CASE("a report without epoch rows carries each run's summary of them, as PgStore's (issue 32)") {
  StoreFixture f;
  testing::check_report_summaries(f.store);
}

TEST_CASE("admission: one transaction, idempotent under retry, refused without a trace, as PgStore's (issue 32)") {
  StoreFixture f;
  testing::check_admission(f.store);
}

TEST_CASE("ingest is idempotent and drops rows of runs the sender does not own") {
  StoreFixture f;
  f.start(kOneRun);
  const int64_t c = f.c, owner = f.host, run = f.runs[0].id;
  const int64_t stranger = f.agent("host-2");
  REQUIRE(f.store.ingest_epoch(stranger, epoch_of(run, 0)).is_ok());
  CHECK(f.store.epoch_rows(run) == 0);
  CHECK(f.status(run) == "assigned");
  REQUIRE(f.store.ingest_epoch(owner, epoch_of(run, 0, 2.0)).is_ok());
  REQUIRE(f.store.ingest_epoch(owner, epoch_of(run, 0, 3.0)).is_ok());   // a resend updates the row
  CHECK(f.store.epoch_rows(run) == 1);
  CHECK(f.status(run) == "running");
  proto::MinibatchChunk mb{run, 0, 0, {0.1, 0.2, 0.3}, {1, 1, 1}, {}};
  REQUIRE(f.store.ingest_minibatches(owner, mb).is_ok());
  mb.first_index = 2;   // overlaps the last row: that one is kept as it was
  REQUIRE(f.store.ingest_minibatches(owner, mb).is_ok());
  CHECK(f.store.minibatch_rows(run) == 5);
  proto::SampleChunk samples;
  samples.run_id = run;
  samples.t0_unix_s = 1234.5;
  samples.samples.resize(2);
  samples.samples[1].t_s = 0.1;
  REQUIRE(f.store.ingest_samples(owner, samples).is_ok());
  REQUIRE(f.store.ingest_samples(owner, samples).is_ok());
  CHECK(f.store.sample_rows(run) == 2);
  CHECK(f.store.run(run)->agent_t0_unix_s == 1234.5);

  auto report = f.store.campaign_report(c, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  REQUIRE(report->runs.size() == 1);
  REQUIRE(report->runs[0].epochs.size() == 1);
  CHECK(report->runs[0].epochs[0].e2e_s == 3.0);
  CHECK(report->runs[0].simulated);
  CHECK(report->simulated_runs == 1);

  // The agent shut down mid-run: requeued, and its next attempt starts clean.
  REQUIRE(f.store.finish_run(owner, {run, "cancelled", "agent stopping", 1.0}).is_ok());
  CHECK(f.status(run) == "queued");
  CHECK(f.store.run(run)->error == "cancelled on its agent: agent stopping");
  REQUIRE(f.claim(stranger) == run);
  CHECK(f.store.epoch_rows(run) == 0);
  CHECK(f.store.minibatch_rows(run) == 0);
  CHECK(f.store.sample_rows(run) == 0);
  REQUIRE(f.store.finish_run(owner, {run, "done", "", 1.0}).is_ok());   // not the owner any more
  CHECK(f.status(run) == "assigned");
  REQUIRE(f.store.finish_run(stranger, {run, "done", "", 1.0}).is_ok());
  CHECK(f.status(run) == "done");
}

TEST_CASE("results are append-only: nothing is stored for a run once it has finished, however it ended") {
  StoreFixture f;
  f.start(kTwoRuns);
  const int64_t owner = f.host, run = f.runs[0].id;
  REQUIRE(f.store.ingest_epoch(owner, epoch_of(run, 0, 2.0)).is_ok());
  REQUIRE(f.store.ingest_minibatches(owner, {run, 0, 0, {0.1}, {1}, {}}).is_ok());
  REQUIRE(f.store.finish_run(owner, {run, "done", "", 5.0}).is_ok());
  // After run_finished: an epoch overwrite, a new epoch, minibatches, samples and run_started are all dropped,
  // yet accepted (a resend after a lost ack must still be acknowledged).
  CHECK(f.store.ingest_epoch(owner, epoch_of(run, 0, 99.0)).is_ok());
  CHECK(f.store.ingest_epoch(owner, epoch_of(run, 1, 99.0)).is_ok());
  CHECK(f.store.ingest_minibatches(owner, {run, 0, 1, {0.1, 0.2}, {1, 1}, {}}).is_ok());
  proto::SampleChunk samples;
  samples.run_id = run;
  samples.t0_unix_s = 1234.5;
  samples.samples.resize(1);
  CHECK(f.store.ingest_samples(owner, samples).is_ok());
  proto::RunStarted started;
  started.run_id = run;
  started.compute_device = "cuda:0 (forged)";
  started.t0_unix_s = 1234.5;
  CHECK(f.store.start_run(owner, started).is_ok());
  CHECK(f.store.epoch_rows(run) == 1);
  CHECK(f.store.minibatch_rows(run) == 1);
  CHECK(f.store.sample_rows(run) == 0);
  auto report = f.store.campaign_report(f.c, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  REQUIRE(report->runs.at(0).epochs.size() == 1);
  CHECK(report->runs[0].epochs[0].e2e_s == 2.0);
  CHECK_FALSE(f.store.run(run)->compute_device.has_value());
  CHECK_FALSE(f.store.run(run)->agent_t0_unix_s.has_value());
  // A second run_finished changes nothing either.
  CHECK(f.store.finish_run(owner, {run, "failed", "rewritten", 1.0}).is_ok());
  CHECK(f.status(run) == "done");
  CHECK(f.store.run(run)->wall_s == 5.0);
  CHECK(f.store.run(run)->error.empty());

  // A cancelled run keeps what it measured, and nothing more.
  const int64_t second = f.runs.at(1).id;
  REQUIRE(f.claim(owner) == second);
  REQUIRE(f.store.cancel_run(second).is_ok());
  REQUIRE(f.store.finish_run(owner, {second, "cancelled", "stopped", 1.0}).is_ok());
  REQUIRE(f.status(second) == "cancelled");
  CHECK(f.store.ingest_epoch(owner, epoch_of(second, 0)).is_ok());
  CHECK(f.store.epoch_rows(second) == 0);
}

TEST_CASE("two agents of one board take one run at a time; status and agent lists count them") {
  StoreFixture f;
  const int64_t c = f.campaign(kTwoRuns);
  auto a = test_register("a"), b = test_register("b");
  a.facts.board_id = b.facts.board_id = "board-7";
  const int64_t ida = f.store.register_agent(a, kFirstContact)->agent_id;
  const int64_t idb = f.store.register_agent(b, kFirstContact)->agent_id;
  const auto first = f.claim(ida);
  REQUIRE(first);
  CHECK(f.claim(idb) == std::nullopt);
  auto status = f.store.campaign_status(c);
  REQUIRE(status.is_ok());
  CHECK(status->queued == 1);
  CHECK(status->assigned == 1);
  CHECK_FALSE(status->finished);
  auto agents = f.store.list_agents();
  REQUIRE(agents.is_ok());
  REQUIRE(agents->size() == 2);
  CHECK(agents->at(0).current_run == first);
  CHECK(agents->at(1).current_run == std::nullopt);
  CHECK(f.store.resolve_campaign("c").value() == c);
  CHECK(f.store.resolve_campaign(std::to_string(c)).value() == c);
  CHECK(f.store.resolve_campaign("nope").status().code() == Code::kNotFound);
}

}  // TEST_SUITE

TEST_CASE("adaptive plans: created with the campaign, due while no run is open, each round created once (issue 33)") {
  StoreFixture f;
  testing::check_adaptive_plans(f.store);
}
