// The Store contract of results, held by MemoryStore and PgStore alike (issue 32): ingest idempotent by key, rows of
// runs the sender does not own kept out, results append-only once a run ended, a re-executed run starting clean,
// group commits equal to their messages one by one, and the board state each agent's run executes in.
#include <doctest/doctest.h>

#include "store/store_backends.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

std::string outcome_of(const controller::IngestItem& item) {
  REQUIRE_MESSAGE(item.result.is_ok(), item.result.to_string());
  return controller::outcome_name(item.outcome);
}

proto::BoardState board_state(int64_t cores) {
  proto::BoardState s;
  s.mode_name = "MODE_" + std::to_string(cores);
  s.nvpmodel_id = cores;
  s.cores_online = cores;
  s.cpu_khz = 1'420'800;
  s.gpu_hz = 921'600'000;
  s.emc_hz = 1'600'000'000;
  s.clocks_pinned = true;
  s.fan = "max";
  return s;
}

}  // namespace

TEST_SUITE("store conformance") {

TEST_CASE_TEMPLATE("ingest is idempotent by key and drops rows of runs the sender does not own", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kOneRun);
  const int64_t owner = f.host, run = f.runs[0];
  const int64_t stranger = f.agent("host-2", "host", 'b');
  REQUIRE(f.s().ingest_epoch(stranger, conformance_epoch(run, 0)).is_ok());
  CHECK(f.epoch_rows(run) == 0);
  CHECK(f.status(run) == "assigned");
  REQUIRE(f.s().ingest_epoch(owner, conformance_epoch(run, 0, 2.0)).is_ok());
  REQUIRE(f.s().ingest_epoch(owner, conformance_epoch(run, 0, 3.0)).is_ok());   // a resend updates the row
  CHECK(f.epoch_rows(run) == 1);
  CHECK(f.status(run) == "running");
  proto::MinibatchChunk mb{run, 0, 0, {0.1, 0.2, 0.3}, {1, 1, 1}, {}};
  REQUIRE(f.s().ingest_minibatches(owner, mb).is_ok());
  mb.first_index = 2;   // overlaps the last row: that one is kept as it was
  REQUIRE(f.s().ingest_minibatches(owner, mb).is_ok());
  CHECK(f.minibatch_rows(run) == 5);
  proto::SampleChunk samples;
  samples.run_id = run;
  samples.t0_unix_s = 1234.5;
  samples.samples.resize(2);
  samples.samples[1].t_s = 0.1;
  REQUIRE(f.s().ingest_samples(owner, samples).is_ok());
  REQUIRE(f.s().ingest_samples(owner, samples).is_ok());
  CHECK(f.sample_rows(run) == 2);
  CHECK(f.s().run_samples(run)->at(0).t_unix_s == std::optional<double>(1234.5));

  auto report = f.s().campaign_report(f.c, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  REQUIRE(report->runs.size() == 1);
  REQUIRE(report->runs[0].epochs.size() == 1);
  CHECK(report->runs[0].epochs[0].e2e_s == 3.0);
  REQUIRE(report->runs[0].epochs[0].minibatch_stats);
  CHECK(report->runs[0].epochs[0].minibatch_stats->recorded == 5);
  CHECK_FALSE(report->runs[0].simulated);

  // The agent shut down mid-run: requeued, and its next attempt starts clean.
  REQUIRE(f.s().finish_run(owner, {run, "cancelled", "agent stopping", 1.0}).is_ok());
  CHECK(f.status(run) == "queued");
  CHECK(f.run(run).error == "cancelled on its agent: agent stopping");
  REQUIRE(f.claim(stranger) == run);
  CHECK(f.epoch_rows(run) == 0);
  CHECK(f.minibatch_rows(run) == 0);
  CHECK(f.sample_rows(run) == 0);
  REQUIRE(f.s().finish_run(owner, {run, "done", "", 1.0}).is_ok());   // not the owner any more
  CHECK(f.status(run) == "assigned");
  REQUIRE(f.s().finish_run(stranger, {run, "done", "", 1.0}).is_ok());
  CHECK(f.status(run) == "done");
  CHECK(f.run(run).agent == std::optional<std::string>("host-2"));
}

TEST_CASE_TEMPLATE("results are append-only: nothing is stored for a run once it has finished, however it ended", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t owner = f.host, run = f.runs[0];
  REQUIRE(f.s().ingest_epoch(owner, conformance_epoch(run, 0, 2.0)).is_ok());
  REQUIRE(f.s().ingest_minibatches(owner, {run, 0, 0, {0.1}, {1}, {}}).is_ok());
  REQUIRE(f.s().finish_run(owner, {run, "done", "", 5.0}).is_ok());
  // After run_finished: an epoch overwrite, a new epoch, minibatches (resent and new), samples and run_started are
  // all dropped, yet accepted (a resend after a lost ack must still be acknowledged).
  CHECK(f.s().ingest_epoch(owner, conformance_epoch(run, 0, 99.0)).is_ok());
  CHECK(f.s().ingest_epoch(owner, conformance_epoch(run, 1, 99.0)).is_ok());
  CHECK(f.s().ingest_minibatches(owner, {run, 0, 0, {0.1, 0.2}, {1, 1}, {}}).is_ok());
  CHECK(f.s().ingest_minibatches(owner, {run, 0, 5, {0.1}, {1}, {}}).is_ok());
  proto::SampleChunk samples;
  samples.run_id = run;
  samples.t0_unix_s = 1234.5;
  samples.samples.resize(1);
  CHECK(f.s().ingest_samples(owner, samples).is_ok());
  proto::RunStarted started;
  started.run_id = run;
  started.compute_device = "cuda:0 (forged)";
  started.t0_unix_s = 1234.5;
  CHECK(f.s().start_run(owner, started).is_ok());
  CHECK(f.epoch_rows(run) == 1);
  CHECK(f.run(run).epochs.at(0).e2e_s == 2.0);
  CHECK(f.minibatch_rows(run) == 1);
  CHECK(f.sample_rows(run) == 0);
  CHECK_FALSE(f.run(run).compute_device.has_value());
  // A second run_finished changes nothing either.
  CHECK(f.s().finish_run(owner, {run, "failed", "rewritten", 1.0}).is_ok());
  CHECK(f.status(run) == "done");
  CHECK(f.run(run).wall_s == std::optional<double>(5.0));
  CHECK(f.run(run).error.empty());

  // A cancelled run keeps what it measured, and nothing more.
  const int64_t second = f.runs.at(1);
  REQUIRE(f.claim(owner) == second);
  REQUIRE(f.s().cancel_run(second).is_ok());
  REQUIRE(f.s().finish_run(owner, {second, "cancelled", "stopped", 1.0}).is_ok());
  REQUIRE(f.status(second) == "cancelled");
  CHECK(f.s().ingest_epoch(owner, conformance_epoch(second, 0)).is_ok());
  CHECK(f.epoch_rows(second) == 0);
}

TEST_CASE_TEMPLATE("a group commit stores what its messages one by one would, each with its own outcome", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t owner = f.host, run = f.runs[0];
  const int64_t stranger = f.agent("host-2", "host", 'b');
  proto::RunStarted started;
  started.run_id = run;
  started.compute_device = "cpu";
  started.t0_unix_s = 2000.0;
  started.applied = board_state(4);
  proto::SampleChunk samples;
  samples.run_id = run;
  samples.t0_unix_s = 2000.0;
  samples.samples.resize(3);
  samples.samples[1].t_s = 0.5;
  samples.samples[2].t_s = 1.0;
  std::vector<controller::IngestItem> batch;
  const auto add = [&](int64_t agent, proto::Body body) {
    controller::IngestItem item;
    item.agent_id = agent;
    item.body = std::move(body);
    batch.push_back(std::move(item));
  };
  add(owner, started);
  add(owner, proto::MinibatchChunk{run, 0, 0, {0.1, 0.2}, {1, 1}, {}});
  add(owner, conformance_epoch(run, 0, 2.0));
  add(owner, conformance_epoch(run, 0, 2.0));                  // resent within the batch
  add(stranger, conformance_epoch(run, 1, 9.0));               // not its run
  add(owner, samples);
  add(owner, proto::RunFinished{run, "done", "", 3.0});
  add(owner, conformance_epoch(run, 1, 2.0));                  // after its end, never landed
  REQUIRE(f.s().ingest_batch(batch).is_ok());
  std::vector<std::string> outcomes;
  for (const auto& item : batch) outcomes.push_back(outcome_of(item));
  CHECK(outcomes == std::vector<std::string>{"stored", "stored", "stored", "duplicate", "set_aside", "stored", "stored",
                                             "set_aside"});
  CHECK(f.status(run) == "done");
  CHECK(f.run(run).compute_device == std::optional<std::string>("cpu"));
  CHECK(f.epoch_rows(run) == 1);
  CHECK(f.minibatch_rows(run) == 2);
  CHECK(f.sample_rows(run) == 3);
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 2);
  // The same batch again (its answer was lost): everything is a duplicate, nothing changes.
  REQUIRE(f.s().ingest_batch(batch).is_ok());
  outcomes.clear();
  for (const auto& item : batch) outcomes.push_back(outcome_of(item));
  CHECK(outcomes == std::vector<std::string>(8, "duplicate"));
  CHECK(f.epoch_rows(run) == 1);
  CHECK(f.minibatch_rows(run) == 2);
  CHECK(f.sample_rows(run) == 3);
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 2);
  std::vector<controller::IngestItem> empty;
  CHECK(f.s().ingest_batch(empty).is_ok());
}

TEST_CASE_TEMPLATE("each agent's board state: its executing run's, else the one it started last", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t other = f.agent("host-2", "host", 'b');
  auto applied = f.s().agents_applied();
  REQUIRE(applied.is_ok());
  CHECK(applied->empty());   // claimed, not started: nothing applied yet
  const auto start = [&](int64_t agent, int64_t run, int64_t cores) {
    proto::RunStarted started;
    started.run_id = run;
    started.compute_device = "cpu";
    started.t0_unix_s = 3000.0;
    started.applied = board_state(cores);
    REQUIRE(f.s().start_run(agent, started).is_ok());
  };
  start(f.host, f.runs[0], 4);
  applied = f.s().agents_applied();
  REQUIRE(applied.is_ok());
  REQUIRE(applied->size() == 1);
  CHECK(applied->at(0).agent_id == f.host);
  CHECK(applied->at(0).run_id == f.runs[0]);
  CHECK(applied->at(0).applied == proto::to_json(board_state(4)));
  CHECK(f.run(f.runs[0]).applied == std::optional<boost::json::object>(proto::to_json(board_state(4))));
  // Its run ends and the next starts on the same agent with two cores: the executing one is shown.
  REQUIRE(f.s().finish_run(f.host, {f.runs[0], "done", "", 1.0}).is_ok());
  REQUIRE(f.claim(f.host) == f.runs[1]);
  start(f.host, f.runs[1], 2);
  applied = f.s().agents_applied();
  REQUIRE(applied->size() == 1);
  CHECK(applied->at(0).run_id == f.runs[1]);
  CHECK(applied->at(0).applied.at("cores_online") == 2);
  // Both ended: the one started last.
  REQUIRE(f.s().finish_run(f.host, {f.runs[1], "done", "", 1.0}).is_ok());
  applied = f.s().agents_applied();
  REQUIRE(applied->size() == 1);
  CHECK(applied->at(0).run_id == f.runs[1]);
  CHECK(applied->at(0).agent_id != other);
}

TEST_CASE_TEMPLATE("estimate inputs: epochs measured per class, workload and mode; every agent's class and boards", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  f.agent("nano-1", "orin-nano", 'b');
  REQUIRE(f.s().ingest_epoch(f.host, conformance_epoch(f.runs[0], 0, 2.0)).is_ok());
  REQUIRE(f.s().ingest_epoch(f.host, conformance_epoch(f.runs[0], 1, 3.0)).is_ok());
  auto inputs = f.s().estimate_inputs();
  REQUIRE(inputs.is_ok());
  REQUIRE(inputs->measured.size() == 1);
  const auto& m = inputs->measured[0];
  CHECK(m.board_class == "host");
  CHECK(m.model == "lenet5");
  CHECK(m.dataset == "mnist");
  CHECK(m.batch_size == "8");
  CHECK(m.power_mode == "////");
  CHECK(m.epochs == 2);
  CHECK(m.sum_e2e_s == doctest::Approx(5.0));
  CHECK(inputs->class_of_agent == std::map<std::string, std::string>{{"host-1", "host"}, {"nano-1", "orin-nano"}});
  CHECK(inputs->enrolled_boards == std::map<std::string, int64_t>{{"host", 1}, {"orin-nano", 1}});
  CHECK(inputs->gating.size() == 2);
}

TEST_CASE_TEMPLATE("a graceful stop replayed after its ack was lost is a duplicate, not a result set aside (issue 29)", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kOneRun);
  const int64_t run = f.runs[0];
  const int64_t other = f.agent("host-2", "host", 'b');
  const proto::RunFinished stop{run, "cancelled", "agent stopping", 1.5};
  const auto outcome = [&](int64_t agent, const proto::RunFinished& m) {
    auto r = f.s().finish_run(agent, m);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return std::string(controller::outcome_name(*r));
  };
  CHECK(outcome(f.host, stop) == "stored");   // the agent shut down mid-run: the run goes back to the queue
  CHECK(f.status(run) == "queued");
  // Its journal replays the same run_finished (the ack was lost): nothing measured, nothing to keep apart.
  CHECK(outcome(f.host, stop) == "duplicate");
  REQUIRE(f.claim(other) == run);
  CHECK(outcome(f.host, stop) == "duplicate");   // also once another agent has the run
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 0);
  // A run_finished that was never stored is still kept apart: another end, or another stop.
  CHECK(outcome(f.host, {run, "cancelled", "a different stop", 1.0}) == "set_aside");
  CHECK(outcome(f.host, {run, "done", "", 9.0}) == "set_aside");
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 2);
  CHECK(f.status(run) == "assigned");
}

TEST_CASE_TEMPLATE("a message set aside is kept once whatever its spelling: a NUL in its text, or the U+FFFD it reads as",
                   B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kOneRun);
  const int64_t run = f.runs[0];
  const int64_t other = f.agent("host-2", "host", 'b');
  REQUIRE(f.s().finish_run(f.host, {run, "cancelled", "agent stopping", 1.5}).is_ok());   // back to the queue
  REQUIRE(f.claim(other) == run);
  const auto outcome = [&](const std::string& error) {
    auto r = f.s().finish_run(f.host, {run, "failed", error, 1.0});
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return std::string(controller::outcome_name(*r));
  };
  // Built with the NUL (an agent's own body), then as a newer controller decodes the same frame (U+FFFD).
  CHECK(outcome(std::string("disk \0 gone", 11)) == "set_aside");
  CHECK(outcome("disk \xEF\xBF\xBD gone") == "duplicate");
  CHECK(outcome(std::string("disk \0 gone", 11)) == "duplicate");
  CHECK(outcome("disk gone") == "set_aside");   // another message
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 2);
  CHECK(f.status(run) == "assigned");
}

TEST_CASE_TEMPLATE("a result the store refuses is kept apart with the reason, not dropped (issue 32)", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kOneRun);
  const int64_t run = f.runs[0];
  const proto::RunFinished bad{run, "finished", "", 2.0};   // no such run status: the store cannot keep it
  auto refused = f.s().finish_run(f.host, bad);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Code::kDbError);
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 0);
  const auto keep = [&](const proto::Body& body) {
    auto r = f.s().set_aside_refused(f.host, body, refused.status().message());
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return std::string(controller::outcome_name(*r));
  };
  CHECK(keep(bad) == "set_aside");
  CHECK(keep(bad) == "duplicate");   // the agent resent it (its ack was lost)
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 1);
  CHECK(f.status(run) == "assigned");   // the run itself is unchanged
  CHECK(keep(proto::RunFinished{run + 1000, "finished", "", 2.0}) == "set_aside");   // no such run: kept nowhere
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 1);
  CHECK(f.s().set_aside_refused(f.host, proto::Heartbeat{}, "x").status().code() == Code::kInternal);
  // The run goes on as if the refused message had not come.
  REQUIRE(f.s().finish_run(f.host, {run, "done", "", 3.0}).is_ok());
  CHECK(f.status(run) == "done");
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 1);
}

}  // TEST_SUITE

TEST_CASE_TEMPLATE("a refused 'done' or 'failed' end of a held run ends it failed, naming the end and the refusal", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t first = f.runs[0], second = f.runs[1];
  const std::string why = "ERROR:  value out of range";
  const auto keep = [&](int64_t agent, const proto::RunFinished& m) {
    auto r = f.s().set_aside_refused(agent, m, why);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return std::string(controller::outcome_name(*r));
  };
  const proto::RunFinished done{first, "done", "", 12.5};
  CHECK(keep(f.host, done) == "set_aside");
  // Ended, instead of running until its agent registers again; the copy kept apart as for any refused result.
  CHECK(f.status(first) == "failed");
  CHECK(f.run(first).error == "its agent reported it done; refused by the store: " + why);
  CHECK(f.run(first).error == controller::refused_end_error(done, why));
  CHECK(keep(f.host, done) == "duplicate");
  CHECK(f.status(first) == "failed");
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 1);
  // A 'cancelled' end (the agent shut down) is left to the requeue at its agent's next registration.
  REQUIRE(f.claim(f.host) == second);
  CHECK(keep(f.host, {second, "cancelled", "agent stopping", 1.0}) == "set_aside");
  CHECK(f.status(second) == "assigned");
  // An end from an agent that does not hold the run changes nothing.
  const int64_t other = f.agent("host-2", "host", 'b');
  CHECK(keep(other, {second, "failed", "out of memory", 2.0}) == "set_aside");
  CHECK(f.status(second) == "assigned");
  CHECK(f.s().campaign_status(f.c)->set_aside_results == 3);
  // The agent's own 'failed' end, refused: the run ends failed with that reason too.
  CHECK(keep(f.host, {second, "failed", "out of memory", 2.0}) == "set_aside");
  CHECK(f.status(second) == "failed");
  CHECK(f.run(second).error == "its agent reported it failed; refused by the store: " + why);
}
