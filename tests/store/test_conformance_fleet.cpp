// The Store contract of the fleet and the queue, held by MemoryStore and PgStore alike (issue 32): credentials and
// their revocation, connections and leases, clock estimates, the claim order, pausing and cancelling, requeues that
// use up attempts, unclaiming. store_backends.hpp says how each store is made.
#include <doctest/doctest.h>

#include "store/store_backends.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

TEST_SUITE("store conformance") {

TEST_CASE_TEMPLATE("claims follow priority, then campaign age, then run id; only runs the agent fits", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  const int64_t old = f.campaign("campaign: old\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n");
  const int64_t urgent = f.campaign("campaign: urgent\npriority: 5\nmatrix: {model: lenet5, dataset: mnist, device: any}\n");
  const int64_t other = f.campaign("campaign: other\npriority: 9\nmatrix: {model: lenet5, dataset: mnist, device: orin-nano}\n");
  const int64_t host = f.agent("host-1");
  const auto old_runs = f.run_ids(old);
  CHECK(f.claim(host) == f.run_ids(urgent).at(0));   // priority 5 first; 'other' is not for hosts
  CHECK(f.claim(host) == old_runs.at(0));
  CHECK(f.claim(host) == old_runs.at(1));
  CHECK(f.claim(host) == std::nullopt);
  CHECK(f.status(f.run_ids(other).at(0)) == "queued");
  const auto assigned = f.run(old_runs[0]);
  CHECK(assigned.status == "assigned");
  CHECK(assigned.agent == std::optional<std::string>("host-1"));
  CHECK(assigned.attempts == 1);
  REQUIRE(assigned.facts);
  CHECK(assigned.facts->at("backend") == "host");   // the agent's facts as they were when it claimed
  CHECK(f.s().resolve_campaign("old").value() == old);
  CHECK(f.s().resolve_campaign(std::to_string(urgent)).value() == urgent);
  CHECK(f.s().resolve_campaign("nope").status().code() == Code::kNotFound);
}

TEST_CASE_TEMPLATE("queued runs no enrolled agent can take are reported by the first need none meets, largest group "
                   "first", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.agent("nano-1", "nano");   // 8 GiB, no storage media
  const auto unrunnable = [&](int64_t campaign) {
    auto s = f.s().campaign_status(campaign);
    REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    std::vector<std::string> reasons;
    int64_t runs = 0;
    for (const auto& u : s->unrunnable) {
      reasons.push_back(u.reason);
      runs += u.runs;
    }
    CHECK(runs == s->unrunnable_runs);
    return reasons;
  };
  const int64_t two = f.campaign(
      "campaign: two\nmatrix: {model: lenet5, dataset: mnist, device: [xavier-nx, nano], data: \"@ssd\", "
      "batch_size: [8, 16]}\n");
  const int64_t more = f.campaign(
      "campaign: more\nmatrix: {model: lenet5, dataset: mnist, device: [nano, xavier-nx], batch_size: [8, 16, 32]}\n");
  CHECK(unrunnable(two) == std::vector<std::string>{
                               "2 runs need storage @ssd; no agent of 'nano' offers it (agent --storage ssd=DIR)",
                               "2 runs need device 'xavier-nx'; no enrolled agent is one"});
  CHECK(unrunnable(more) == std::vector<std::string>{"3 runs need device 'xavier-nx'; no enrolled agent is one"});
  const int64_t memory =
      f.campaign("campaign: memory\nmatrix: {model: lenet5, dataset: mnist, device: any, min_memory_mb: 65536}\n");
  CHECK(unrunnable(memory) ==
        std::vector<std::string>{"1 run needs 65536 MiB of RAM; no agent has that much"});
  const int64_t model = f.campaign("campaign: model\nmatrix: {model: resnet18, dataset: cifar10, device: any}\n");
  CHECK(unrunnable(model) ==
        std::vector<std::string>{"1 run needs a board their model fits on; the enrolled boards run out of memory"});
  // An agent that meets every need takes them off the list; a group some agent can take was never on it.
  f.agent("host-1", "host", 'b');
  CHECK(unrunnable(model).empty());
  CHECK(unrunnable(memory).size() == 1);
}

TEST_CASE_TEMPLATE("a paused campaign hands out nothing; cancelling it cancels queued runs and stops executing ones", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  REQUIRE(f.s().set_campaign_state(f.c, "paused").is_ok());
  CHECK(f.s().campaign_status(f.c)->state == "paused");
  CHECK(f.claim(f.agent("host-2")) == std::nullopt);
  CHECK(f.s().set_campaign_state(f.c, "stopped").code() == Code::kInvalidArgument);
  CHECK(f.s().set_campaign_state(f.c + 100, "active").code() == Code::kNotFound);
  auto stop = f.s().runs_to_stop();
  REQUIRE(stop.is_ok());
  CHECK(stop->empty());

  REQUIRE(f.s().set_campaign_state(f.c, "cancelled").is_ok());
  CHECK(f.status(f.runs[1]) == "cancelled");
  CHECK(f.run(f.runs[1]).error == "campaign cancelled");
  CHECK(f.status(f.runs[0]) == "assigned");
  stop = f.s().runs_to_stop();
  REQUIRE(stop.is_ok());
  REQUIRE(stop->size() == 1);
  CHECK(stop->at(0).run_id == f.runs[0]);
  CHECK(stop->at(0).agent_id == f.host);
  CHECK(f.s().set_campaign_state(f.c, "active").code() == Code::kInvalidArgument);
  REQUIRE(f.s().finish_run(f.host, {f.runs[0], "cancelled", "stopped", 2.0}).is_ok());
  CHECK(f.status(f.runs[0]) == "cancelled");
  CHECK(f.run(f.runs[0]).error == "cancelled while running");
  stop = f.s().runs_to_stop();
  REQUIRE(stop.is_ok());
  CHECK(stop->empty());
  auto status = f.s().campaign_status(f.c);
  REQUIRE(status.is_ok());
  CHECK(status->state == "cancelled");
  CHECK(status->cancelled == 2);
  CHECK(status->finished);
}

TEST_CASE_TEMPLATE("requeued runs use up their attempts and are then lost, with the reason", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kOneRun);
  const int64_t host = f.host, run = f.runs[0];
  CHECK(f.s().requeue_agent_runs(host, {run}, "kept").value() == 0);
  CHECK(f.status(run) == "assigned");
  CHECK(f.s().requeue_agent_runs(host, {}, "agent gone").value() == 1);
  CHECK(f.status(run) == "queued");
  CHECK(f.run(run).agent == std::nullopt);
  CHECK(f.run(run).error == "agent gone");
  REQUIRE(f.claim(host) == run);
  CHECK(f.run(run).attempts == 2);
  CHECK(f.s().requeue_agent_runs(host, {}, "agent gone again").value() == 1);
  CHECK(f.status(run) == "lost");
  CHECK(f.run(run).error == "lost after 2 attempts; last: agent gone again");
  CHECK(f.claim(host) == std::nullopt);
  CHECK(f.s().requeue_agent_runs(host, {}, "nothing left").value() == 0);
}

TEST_CASE_TEMPLATE("unclaiming gives the attempt back, or cancels a run whose cancel was requested", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t host = f.host, run = f.runs[0];
  REQUIRE(f.s().unclaim_run(run, host).is_ok());
  CHECK(f.status(run) == "queued");
  CHECK(f.run(run).attempts == 0);
  REQUIRE(f.claim(host) == run);
  auto cancelled = f.s().cancel_run(run);
  REQUIRE(cancelled.is_ok());
  CHECK(cancelled->stopping);
  CHECK(cancelled->agent == std::optional<std::string>("host-1"));
  auto stop = f.s().runs_to_stop();
  REQUIRE(stop.is_ok());
  REQUIRE(stop->size() == 1);
  CHECK(stop->at(0).run_id == run);
  REQUIRE(f.s().unclaim_run(run, host).is_ok());
  CHECK(f.status(run) == "cancelled");
  CHECK(f.run(run).error == "cancelled before it started");
  // A queued run is cancelled at once.
  auto queued = f.s().cancel_run(f.runs[1]);
  REQUIRE(queued.is_ok());
  CHECK_FALSE(queued->stopping);
  CHECK(f.status(f.runs[1]) == "cancelled");
  CHECK(f.s().cancel_run(9999).status().code() == Code::kNotFound);
}

TEST_CASE_TEMPLATE("runs of an agent disconnected for longer than the lease are requeued; a controller start restarts "
                   "every lease", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.start(kTwoRuns);
  const int64_t host = f.host, run = f.runs[0];
  f.pass(2.0);
  CHECK(f.s().requeue_orphaned_runs(1.5).value() == 0);   // connected: no lease runs
  REQUIRE(f.s().set_agent_connected(host, false).is_ok());
  CHECK_FALSE(f.s().list_agents()->at(0).connected);
  f.pass(2.0);
  // The controller restarts: the agent could not have been seen while it was down, so its lease starts again.
  REQUIRE(f.s().reset_connections().is_ok());
  CHECK(f.s().requeue_orphaned_runs(1.5).value() == 0);
  CHECK(f.status(run) == "assigned");
  f.pass(2.0);
  CHECK(f.s().requeue_orphaned_runs(1.5).value() == 1);
  CHECK(f.status(run) == "queued");
  CHECK(f.run(run).error == "agent host-1 disconnected for more than 1.5 s");
  // Reconnected, it holds its next run through any wait.
  REQUIRE(f.s().set_agent_connected(host, true).is_ok());
  CHECK(f.s().list_agents()->at(0).connected);
  REQUIRE(f.claim(host) == run);
  f.pass(2.0);
  CHECK(f.s().requeue_orphaned_runs(1.5).value() == 0);
  // reset_connections marks every agent disconnected.
  REQUIRE(f.s().reset_connections().is_ok());
  CHECK_FALSE(f.s().list_agents()->at(0).connected);
}

TEST_CASE_TEMPLATE("credentials: a name enrolled is refused without its credential until revoked", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  const std::string a(64, 'a'), b(64, 'b');
  const int64_t id = f.agent("board-1", "host", 'a');
  auto refused = f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{std::nullopt, b});
  CHECK(refused.status().code() == Code::kPermissionDenied);
  auto wrong = f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{b, b});
  CHECK(wrong.status().code() == Code::kPermissionDenied);
  auto proper = f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{a, b});
  REQUIRE(proper.is_ok());
  CHECK(proper->agent_id == id);
  CHECK_FALSE(proper->enrolled);
  // A new name without the enrollment secret may not enroll.
  auto unsecret = f.s().register_agent(conformance_agent("board-2"), controller::AgentProof{std::nullopt, b, false});
  CHECK(unsecret.status().code() == Code::kPermissionDenied);
  CHECK(f.s().list_agents()->size() == 1);

  CHECK(f.s().revoke_agent_credential("board-1").value() == true);
  CHECK(f.s().revoke_agent_credential("board-1").value() == false);
  CHECK(f.s().revoke_agent_credential("nobody").status().code() == Code::kNotFound);
  // Revoked: the next registration enrolls the name again, under the same agent, with its new credential.
  auto again = f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{std::nullopt, b});
  REQUIRE(again.is_ok());
  CHECK(again->agent_id == id);
  CHECK(again->enrolled);
  CHECK(f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{a, a}).status().code() ==
        Code::kPermissionDenied);
  CHECK(f.s().register_agent(conformance_agent("board-1"), controller::AgentProof{b, a}).is_ok());
}

TEST_CASE_TEMPLATE("clock estimates: the one with the smallest round trip is kept and puts samples and epochs on the "
                   "controller's clock", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kOneRun);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, std::nullopt).is_ok());
  REQUIRE(f.s().record_clock(f.host, 0.9, 0.200, std::nullopt).is_ok());   // a slower probe that agrees with it: ignored
  REQUIRE(f.s().record_clock(9999, 1.0, 0.001, std::nullopt).is_ok());     // an unknown agent: nothing to keep
  const auto run = f.claim(f.host);
  REQUIRE(run);
  const auto facts = f.run(*run).facts;
  REQUIRE(facts);
  CHECK(facts->at("clock_offset_s").as_double() == 0.5);
  CHECK(facts->at("clock_rtt_s").as_double() == 0.010);
  proto::RunStarted started;
  started.run_id = *run;
  started.compute_device = "cpu";
  started.t0_unix_s = 1000.0;
  REQUIRE(f.s().start_run(f.host, started).is_ok());
  proto::SampleChunk samples;
  samples.run_id = *run;
  samples.t0_unix_s = 1000.0;
  samples.samples.resize(2);
  samples.samples[0].t_s = 0.25;
  samples.samples[1].t_s = 1.25;
  samples.samples[1].power_w = 7.5;
  REQUIRE(f.s().ingest_samples(f.host, samples).is_ok());
  proto::EpochResult e = conformance_epoch(*run, 0);
  e.t_start_s = 0.0;
  e.t_end_s = 2.0;
  REQUIRE(f.s().ingest_epoch(f.host, e).is_ok());
  auto read = f.s().run_samples(*run);
  REQUIRE(read.is_ok());
  REQUIRE(read->size() == 2);
  CHECK(read->at(0).t_s == 0.25);
  // The offset is the agent's clock minus the controller's: 1000 + 0.25 - 0.5 on the controller's clock.
  CHECK(read->at(0).t_unix_s == std::optional<double>(999.75));
  CHECK(read->at(1).t_unix_s == std::optional<double>(1000.75));
  CHECK(read->at(1).power_w == std::optional<double>(7.5));
  CHECK_FALSE(read->at(0).power_w.has_value());
  const auto epochs = f.run(*run).epochs;
  REQUIRE(epochs.size() == 1);
  CHECK(epochs[0].start_unix_s == std::optional<double>(999.5));
  CHECK(epochs[0].end_unix_s == std::optional<double>(1001.5));
  CHECK(f.s().run_samples(9999).status().code() == Code::kNotFound);
}

// `run`'s start stored, at t0_unix_s on its agent's wall clock (and t0_boot_s on boot `boot_id`'s boot clock when
// given), and its epoch 0 over t_s 0-2.
template <class F>
void start_with_epoch(F& f, int64_t run, double t0_unix_s, const std::string& boot_id = "",
                      std::optional<double> t0_boot_s = std::nullopt) {
  proto::RunStarted started;
  started.run_id = run;
  started.compute_device = "cpu";
  started.t0_unix_s = t0_unix_s;
  started.boot_id = boot_id;
  started.t0_boot_s = t0_boot_s;
  REQUIRE(f.s().start_run(f.host, started).is_ok());
  CHECK(f.s().start_run(f.host, started).value() == controller::IngestOutcome::kDuplicate);   // a resend
  proto::EpochResult e = conformance_epoch(run, 0);
  e.t_start_s = 0.0;
  e.t_end_s = 2.0;
  REQUIRE(f.s().ingest_epoch(f.host, e).is_ok());
}

// The start of `run`'s one epoch on the controller's clock, as the report gives it.
template <class F>
std::optional<double> epoch_start_unix_s(F& f, int64_t run) {
  const auto epochs = f.run(run).epochs;
  REQUIRE(epochs.size() == 1);
  return epochs[0].start_unix_s;
}

// A board's clock stepped (NTP setting a Jetson's clock long after boot): the estimate after the step is kept at once
// although its round trip is slower, and each run stays on the offset its agent had when its run_started was stored.
TEST_CASE_TEMPLATE("clock estimates: a clock step on the board moves the runs after it, not those before", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kTwoRuns);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, std::nullopt).is_ok());
  const auto first = f.claim(f.host);
  REQUIRE(first);
  start_with_epoch(f, *first, 1000.0);
  REQUIRE(f.s().finish_run(f.host, {*first, "done", "", 2.0}).is_ok());
  CHECK(epoch_start_unix_s(f, *first) == std::optional<double>(999.5));
  // The board's clock jumps 300 s ahead; the next probe is slower than the kept one but cannot agree with it.
  REQUIRE(f.s().record_clock(f.host, 300.5, 0.050, std::nullopt).is_ok());
  CHECK(epoch_start_unix_s(f, *first) == std::optional<double>(999.5));   // the run before the step has not moved
  const auto second = f.claim(f.host);
  REQUIRE(second);
  const auto facts = f.run(*second).facts;   // the agent's row as the claim found it
  REQUIRE(facts);
  CHECK(facts->at("clock_offset_s").as_double() == 300.5);
  start_with_epoch(f, *second, 1310.0);
  CHECK(epoch_start_unix_s(f, *second) == std::optional<double>(1009.5));   // 1310 - 300.5: ten seconds after the first
  // A resent run_started changes nothing, even after another estimate.
  REQUIRE(f.s().record_clock(f.host, 300.4, 0.005, std::nullopt).is_ok());
  proto::RunStarted again;
  again.run_id = *second;
  again.compute_device = "cpu";
  again.t0_unix_s = 1310.0;
  CHECK(f.s().start_run(f.host, again).value() == controller::IngestOutcome::kDuplicate);
  CHECK(epoch_start_unix_s(f, *second) == std::optional<double>(1009.5));
  CHECK(epoch_start_unix_s(f, *first) == std::optional<double>(999.5));
}

TEST_CASE_TEMPLATE("clock estimates: a run started before any estimate takes the first one kept, then stays", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kOneRun);
  f.host = f.agent("host-1");
  const auto run = f.claim(f.host);
  REQUIRE(run);
  start_with_epoch(f, *run, 1000.0);
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1000.0));   // no estimate yet: the agent's clock as it is
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, std::nullopt).is_ok());
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(999.5));
  REQUIRE(f.s().record_clock(f.host, 300.5, 0.050, std::nullopt).is_ok());   // a step after the run started
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(999.5));
  REQUIRE(f.s().record_clock(f.host, 300.5, 0.001, std::nullopt).is_ok());   // a better estimate of the new offset
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(999.5));
}

// The boot clock (CLOCK_BOOTTIME) beside the wall clock: the agent's kept probe gives both offsets, and a run
// stamped on the boot clock of that boot is placed by it, so a step of the wall clock between the probe and the
// run's start moves nothing. Times below: the controller's clock T; the agent's wall clock T + 0.5 until it steps;
// its boot clock (boot "b1") T - 900.
TEST_CASE_TEMPLATE("clock estimates: a run stamped on the boot clock is placed by it, whatever step the wall clock "
                   "took since the probe", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kTwoRuns);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, controller::BootClockOffset{"b1", -900.0}).is_ok());
  const auto first = f.claim(f.host);
  REQUIRE(first);
  const auto facts = f.run(*first).facts;   // the boot is no fact of the board
  REQUIRE(facts);
  CHECK_FALSE(facts->contains("boot_id"));
  CHECK_FALSE(facts->contains("boot_offset_s"));
  // The wall clock stepped 300 s ahead after the probe; the run starts at T = 1010 (wall 1310.5, boot 110).
  start_with_epoch(f, *first, 1310.5, "b1", 110.0);
  CHECK(epoch_start_unix_s(f, *first) == std::optional<double>(1010.0));   // by the wall clock's offset: 1310
  REQUIRE(f.s().finish_run(f.host, {*first, "done", "", 2.0}).is_ok());
  // A run of another boot (a journal replayed after a reboot the controller has no probe of): the wall clock's offset.
  const auto second = f.claim(f.host);
  REQUIRE(second);
  start_with_epoch(f, *second, 1320.5, "b0", 50.0);
  CHECK(epoch_start_unix_s(f, *second) == std::optional<double>(1320.0));
  // Later estimates move neither.
  REQUIRE(f.s().record_clock(f.host, 300.5, 0.050, controller::BootClockOffset{"b1", -900.0}).is_ok());
  CHECK(epoch_start_unix_s(f, *first) == std::optional<double>(1010.0));
  CHECK(epoch_start_unix_s(f, *second) == std::optional<double>(1320.0));
}

TEST_CASE_TEMPLATE("clock estimates: a run stamped on the boot clock before any estimate takes the boot offset of the "
                   "first one kept", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kOneRun);
  f.host = f.agent("host-1");
  const auto run = f.claim(f.host);
  REQUIRE(run);
  start_with_epoch(f, *run, 1310.5, "b1", 110.0);   // T = 1010 with the wall clock 300.5 s ahead
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1310.5));   // no estimate yet: the agent's clock as it is
  // The first probe comes after another step of 100 s: the wall clock's offset would put the run at 910.
  REQUIRE(f.s().record_clock(f.host, 400.5, 0.010, controller::BootClockOffset{"b1", -900.0}).is_ok());
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1010.0));
}

TEST_CASE_TEMPLATE("clock estimates: a new boot's offset is kept even from a slower probe, and remembered after a kept "
                   "probe without one", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kTwoRuns);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, controller::BootClockOffset{"b1", -900.0}).is_ok());
  // The board rebooted (boot "b2", its boot clock T + 500); the first probe of the new boot is slower and agrees with
  // the kept wall clock estimate, which stays.
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.200, controller::BootClockOffset{"b2", 500.0}).is_ok());
  const auto run = f.claim(f.host);
  REQUIRE(run);
  CHECK(f.run(*run).facts->at("clock_rtt_s").as_double() == 0.010);
  start_with_epoch(f, *run, 1310.5, "b2", 1510.0);   // T = 1010 after a step of 300 s since the probe
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1010.0));
  REQUIRE(f.s().finish_run(f.host, {*run, "done", "", 2.0}).is_ok());
  // A faster probe from an agent that sends no boot clock (replaced by an older binary): kept without a boot; the
  // offset of boot "b2" is still that boot's.
  REQUIRE(f.s().record_clock(f.host, 300.5, 0.001, std::nullopt).is_ok());
  const auto next = f.claim(f.host);
  REQUIRE(next);
  start_with_epoch(f, *next, 1400.5, "b2", 1700.0);   // by the wall clock's offset it would be 1100
  CHECK(epoch_start_unix_s(f, *next) == std::optional<double>(1200.0));   // 1700 - 500
}

// A boot's offset is remembered past the boot (sql/031). Times: the controller's clock T. Boot "b1": wall T + 0.5,
// boot clock T - 900. After a reboot, boot "b2": the board's wall clock came back 1000 s behind (no RTC battery), its
// boot clock T + 500.
TEST_CASE_TEMPLATE("clock estimates: a run of an earlier boot is placed by that boot's offset; one of a new boot read "
                   "before its first probe is placed again by it", B, JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kTwoRuns);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_clock(f.host, 0.5, 0.010, controller::BootClockOffset{"b1", -900.0}).is_ok());
  // The board rebooted; its first run of boot "b2" is read before the new boot's first probe: by the wall clock's
  // kept offset (boot "b1"'s wall clock), T = 9.5 instead of 1010.
  const auto fresh = f.claim(f.host);
  REQUIRE(fresh);
  start_with_epoch(f, *fresh, 10.0, "b2", 1510.0);
  CHECK(epoch_start_unix_s(f, *fresh) == std::optional<double>(9.5));
  // The new boot's first probe (the wall clock stepped: kept at once) places it again by the boot clock.
  REQUIRE(f.s().record_clock(f.host, -1000.0, 0.050, controller::BootClockOffset{"b2", 500.0}).is_ok());
  CHECK(epoch_start_unix_s(f, *fresh) == std::optional<double>(1010.0));
  REQUIRE(f.s().finish_run(f.host, {*fresh, "done", "", 2.0}).is_ok());
  // A run of boot "b1" resent from the journal after the reboot (started at T = 1000): by boot "b1"'s offset, not by
  // the wall clock's offset of boot "b2" (which would put it at 2000.5).
  const auto replayed = f.claim(f.host);
  REQUIRE(replayed);
  start_with_epoch(f, *replayed, 1000.5, "b1", 100.0);
  CHECK(epoch_start_unix_s(f, *replayed) == std::optional<double>(1000.0));
  // Later probes of boot "b2" move neither.
  REQUIRE(f.s().record_clock(f.host, -1000.0, 0.001, controller::BootClockOffset{"b2", 500.01}).is_ok());
  CHECK(epoch_start_unix_s(f, *fresh) == std::optional<double>(1010.0));
  CHECK(epoch_start_unix_s(f, *replayed) == std::optional<double>(1000.0));
}

// A board more than kMaxClockOffsetSeconds off (a Jetson that booted at 1970 before NTP): its probes' wall offsets are
// refused, their boot offsets remembered (the first for each boot); its runs are placed by its boot clock.
TEST_CASE_TEMPLATE("clock estimates: a boot offset of a probe refused for its wall offset places that boot's runs", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  f.c = f.campaign(kOneRun);
  f.host = f.agent("host-1");
  REQUIRE(f.s().record_boot_offset(9999, controller::BootClockOffset{"b3", 1.0}).is_ok());   // an unknown agent
  const auto run = f.claim(f.host);
  REQUIRE(run);
  // T = 1.8e9 at the run's start; the board's wall clock reads 60 s after the epoch, its boot clock 30 s after boot.
  start_with_epoch(f, *run, 60.0, "b3", 30.0);
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(60.0));   // no estimate: the agent's clock as it is
  REQUIRE(f.s().record_boot_offset(f.host, controller::BootClockOffset{"b3", 30.0 - 1.8e9}).is_ok());
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1.8e9));
  // A later refused probe of the same boot changes nothing (the first is kept; a kept probe's would replace it).
  REQUIRE(f.s().record_boot_offset(f.host, controller::BootClockOffset{"b3", 35.0 - 1.8e9}).is_ok());
  CHECK(epoch_start_unix_s(f, *run) == std::optional<double>(1.8e9));
}

TEST_CASE_TEMPLATE("two agents of one board take one run at a time; status and agent lists count them", B,
                   JETSWEEP_STORES) {
  StoreCase<B> f;
  const int64_t c = f.campaign(kTwoRuns);
  auto a = conformance_agent("a"), b = conformance_agent("b");
  a.facts.board_id = b.facts.board_id = "board-7";
  const int64_t ida = f.s().register_agent(a, controller::AgentProof{std::nullopt, std::string(64, 'a')})->agent_id;
  const int64_t idb = f.s().register_agent(b, controller::AgentProof{std::nullopt, std::string(64, 'b')})->agent_id;
  const auto first = f.claim(ida);
  REQUIRE(first);
  CHECK(f.claim(idb) == std::nullopt);
  auto status = f.s().campaign_status(c);
  REQUIRE(status.is_ok());
  CHECK(status->queued == 1);
  CHECK(status->assigned == 1);
  CHECK_FALSE(status->finished);
  auto agents = f.s().list_agents();
  REQUIRE(agents.is_ok());
  REQUIRE(agents->size() == 2);
  CHECK(agents->at(0).current_run == first);
  CHECK(agents->at(1).current_run == std::nullopt);
  REQUIRE(f.s().finish_run(ida, {*first, "done", "", 1.0}).is_ok());
  CHECK(f.claim(idb).has_value());   // the board is free again
  auto listed = f.s().list_campaigns();
  REQUIRE(listed.is_ok());
  REQUIRE(listed->size() == 1);
  CHECK(listed->at(0).done == 1);
  CHECK(listed->at(0).assigned == 1);
}

}  // TEST_SUITE
