// The controller's use cases driven through every failure point (issue 32): each Store call they make fails once,
// before it reaches the store or after the store did it (the answer lost), through FlakyStore; DbWorker retries
// it. After each, a campaign runs to its end as without the fault: nothing lost, nothing doubled (no second
// campaign, claim or row), no agent locked out, no run stuck.
#include <doctest/doctest.h>

#include <boost/beast/http.hpp>

#include "common/api.hpp"
#include "controller_fixture.hpp"
#include "common/text.hpp"
#include "support/stderr_capture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
namespace http = boost::beast::http;

namespace {

const char* const kTwoRuns = "campaign: two\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";
constexpr int kEpochs = 2;

proto::EpochResult epoch_of(int64_t run_id, int e) {
  proto::EpochResult epoch;
  epoch.run_id = run_id;
  epoch.epoch = e;
  epoch.e2e_s = epoch.compute_s = 1.0 + e;
  epoch.minibatches = 2;
  return epoch;
}

// A one-run campaign submitted and its run assigned to agent host-1.
struct AssignedRun {
  explicit AssignedRun(ControllerFixture& f)
      : campaign(f.submit("campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n")),
        agent(f.connect_agent(test_register("host-1"))) {
    REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
    run_id = agent->all<proto::AssignRun>()[0].run_id;
  }
  int64_t campaign;
  std::shared_ptr<ProtocolClient> agent;
  int64_t run_id = 0;
};

// The agent's results for run `run_id`, each waited for until acknowledged: run_started, an epoch and a minibatch
// chunk per epoch, run_finished.
void execute(ControllerFixture& f, ProtocolClient& agent, int64_t run_id) {
  std::vector<uint64_t> ids;
  proto::RunStarted started;
  started.run_id = run_id;
  started.compute_device = "cpu";
  started.t0_unix_s = 1000;
  ids.push_back(agent.send(started));
  for (int e = 0; e < kEpochs; ++e) {
    ids.push_back(agent.send(proto::MinibatchChunk{run_id, e, 0, {0.01, 0.02}, {1, 1}, {}}));
    ids.push_back(agent.send(epoch_of(run_id, e)));
  }
  ids.push_back(agent.send(proto::RunFinished{run_id, "done", "", 3.0}));
  REQUIRE(f.drain_until([&] {
    return agent.closed() || std::all_of(ids.begin(), ids.end(), [&](uint64_t id) { return agent.acked(id); });
  }));
  REQUIRE_FALSE(agent.closed());
}

// The two-run campaign submitted, executed by one agent to its end, and checked: one campaign, each run done once
// with every row once, the agent able to register again with the credential it was given.
void campaign_to_its_end(ControllerFixture& f) {
  const int64_t campaign = f.submit(kTwoRuns);
  REQUIRE(campaign > 0);
  auto agent = f.connect_agent(test_register("host-1"));
  REQUIRE(ControllerFixture::registered_id(*agent) > 0);
  for (size_t n = 1; n <= 2; ++n) {
    REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == n || agent->closed(); }));
    REQUIRE(agent->count<proto::AssignRun>() == n);
    execute(f, *agent, agent->all<proto::AssignRun>()[n - 1].run_id);
  }
  REQUIRE(f.round_trip(*agent));
  CHECK(agent->count<proto::AssignRun>() == 2);   // nothing more to hand out

  auto listed = f.api(http::verb::get, "/api/campaigns");
  CHECK(boost::json::parse(listed.body()).as_array().size() == 1);   // not submitted twice
  const auto runs = f.store->runs_of(campaign);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    CAPTURE(run.id);
    CHECK(run.status == "done");
    CHECK(run.attempts == 1);   // claimed once
    CHECK(f.store->epoch_rows(run.id) == kEpochs);
    CHECK(f.store->minibatch_rows(run.id) == 2 * kEpochs);
  }
  // Its going is recorded (set_agent_connected), and it is not locked out: it comes back with its credential and
  // is admitted.
  const int64_t agent_id = ControllerFixture::registered_id(*agent);
  auto again = test_register("host-1");
  again.credential = agent->all<proto::Registered>().at(0).credential;
  REQUIRE(again.credential.has_value());
  agent->close();
  REQUIRE(f.drain_until([&] { return !f.store->agent(agent_id)->connected; }));
  auto back = f.connect_agent(again);
  CHECK(ControllerFixture::registered_id(*back) == agent_id);
  CHECK(f.drain_until([&] { return f.store->agent(agent_id)->connected; }));
}

}  // namespace

TEST_SUITE("controller") {

TEST_CASE("each use case's store call failing once, before or after it took effect: nothing lost, doubled or stuck") {
  // The calls a campaign's life makes: submit (the fleet's tables, the campaign), registration, connection
  // state, claiming, and ingest (results written in group commits).
  for (const char* method : {"enrolled_board_facts", "create_campaign", "admit_agent", "set_agent_connected",
                             "claim_run", "ingest_batch"}) {
    for (const auto when : {FlakyStore::When::kBefore, FlakyStore::When::kAfter}) {
      const std::string method_name = method;
      CAPTURE(method_name);
      const std::string when_name = FlakyStore::when_name(when);
    CAPTURE(when_name);
      ControllerFixture f;
      f.flaky->fail(method, when);
      campaign_to_its_end(f);
      CHECK(f.flaky->failed(method) == 1);   // the fault did happen
    }
  }
}

TEST_CASE("a lease-expiry requeue failing before or after it took effect: the run is requeued once, run once more") {
  for (const auto when : {FlakyStore::When::kBefore, FlakyStore::When::kAfter}) {
    const std::string when_name = FlakyStore::when_name(when);
    CAPTURE(when_name);
    ControllerFixture f;
    const int64_t campaign = f.submit("campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n");
    auto first = f.connect_agent(test_register("host-1"));
    REQUIRE(f.drain_until([&] { return first->count<proto::AssignRun>() == 1; }));
    const int64_t run_id = first->all<proto::AssignRun>()[0].run_id;
    first->close();
    REQUIRE(f.drain_until([&] { return !f.store->agent(ControllerFixture::registered_id(*first))->connected; }));
    // Sweeps run only while the test drains the io_context: once the jobs already posted have run, the next
    // requeue_orphaned_runs is a sweep's after the lease expired, the one that requeues the run.
    REQUIRE(f.settle_db());
    REQUIRE(f.store->run(run_id)->status == "assigned");
    f.flaky->fail("requeue_orphaned_runs", when);
    f.clock.advance(31);   // past the 30 s lease
    auto second = f.connect_agent(test_register("host-2"));
    REQUIRE(f.drain_until([&] { return second->count<proto::AssignRun>() == 1; }));
    CHECK(f.flaky->failed("requeue_orphaned_runs") == 1);
    CHECK(second->all<proto::AssignRun>()[0].run_id == run_id);
    execute(f, *second, run_id);
    const auto run = f.store->run(run_id);
    CHECK(run->status == "done");
    CHECK(run->attempts == 2);
    CHECK(f.store->epoch_rows(run_id) == kEpochs);
    CHECK(f.store->runs_of(campaign).size() == 1);
  }
}

TEST_CASE("a run's cancel failing before or after it took effect: the agent is told once, the run ends cancelled") {
  for (const auto when : {FlakyStore::When::kBefore, FlakyStore::When::kAfter}) {
    const std::string when_name = FlakyStore::when_name(when);
    CAPTURE(when_name);
    ControllerFixture f;
    f.submit("campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n");
    auto agent = f.connect_agent(test_register("host-1"));
    REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
    const int64_t run_id = agent->all<proto::AssignRun>()[0].run_id;
    f.flaky->fail("cancel_run", when);
    auto res = f.api(http::verb::post, "/api/runs/" + std::to_string(run_id) + "/cancel");
    CHECK(res.result() == http::status::ok);
    CHECK(f.flaky->failed("cancel_run") == 1);
    REQUIRE(f.drain_until([&] { return agent->count<proto::CancelRun>() >= 1; }));
    f.controller->stop_cancelled_runs();
    REQUIRE(f.round_trip(*agent));
    CHECK(agent->count<proto::CancelRun>() == 1);
    agent->send(proto::RunFinished{run_id, "cancelled", "cancelled on request", 0.5});
    REQUIRE(f.drain_until([&] { return f.store->run(run_id)->status == "cancelled"; }));
    CHECK(f.store->run(run_id)->attempts == 1);
  }
}

TEST_CASE("a result the store refuses is acknowledged once kept apart; a batch refused whole is written one by one") {
  StderrCapture log;
  ControllerFixture f;
  AssignedRun assigned(f);
  const int64_t campaign = assigned.campaign, run_id = assigned.run_id;
  auto& agent = assigned.agent;
  // The group commit fails whole (none of its messages in particular): written again one by one, where the epoch
  // is refused, and once more alone, refused again; it is kept apart (the first attempt at that meets an outage,
  // retried), then acknowledged.
  f.flaky->refuse("ingest_batch");
  f.flaky->refuse("ingest_epoch", 2);
  f.flaky->fail("set_aside_refused", FlakyStore::When::kBefore);
  const uint64_t id = agent->send(epoch_of(run_id, 0));
  REQUIRE(f.drain_until([&] { return agent->acked(id) || agent->closed(); }));
  CHECK(f.flaky->failed("ingest_batch") == 1);
  CHECK(f.flaky->failed("ingest_epoch") == 2);
  CHECK(f.flaky->calls("set_aside_refused") == 2);
  CHECK(f.store->epoch_rows(run_id) == 0);
  CHECK(f.store->campaign_status(campaign)->set_aside_results == 1);
  CHECK(agent->count<proto::Error>() == 0);
  const std::string text = log.text();
  CHECK(text.find("writing them one by one") != std::string::npos);
  CHECK(text.find("'epoch_result' of run " + std::to_string(run_id) + " refused by the store") != std::string::npos);
  CHECK(text.find("kept apart in set_aside_results") != std::string::npos);
  // Nothing else is lost or held: the agent sends the epoch again and finishes the run.
  execute(f, *agent, run_id);
  CHECK(f.store->run(run_id)->status == "done");
  CHECK(f.store->epoch_rows(run_id) == kEpochs);
  CHECK(f.store->campaign_status(campaign)->set_aside_results == 1);
}

TEST_CASE("a result refused once but not again is stored, not set aside") {
  ControllerFixture f;
  AssignedRun assigned(f);
  const int64_t campaign = assigned.campaign, run_id = assigned.run_id;
  auto& agent = assigned.agent;
  f.flaky->refuse("ingest_batch");
  f.flaky->refuse("ingest_epoch");   // the one-by-one try: refused; the try alone: stored
  const uint64_t id = agent->send(epoch_of(run_id, 0));
  REQUIRE(f.drain_until([&] { return agent->acked(id) || agent->closed(); }));
  CHECK(f.flaky->failed("ingest_epoch") == 1);
  CHECK(f.store->epoch_rows(run_id) == 1);
  execute(f, *agent, run_id);
  CHECK(f.flaky->calls("set_aside_refused") == 0);
  CHECK(f.store->run(run_id)->status == "done");
  CHECK(f.store->epoch_rows(run_id) == kEpochs);
  CHECK(f.store->campaign_status(campaign)->set_aside_results == 0);
}

TEST_CASE("a refused result's reason is cut at a character, at most 1,000 bytes") {
  CHECK(controller::refused_reason("ERROR:  x") == "refused by the store: ERROR:  x");
  std::string why;
  for (int i = 0; i < 600; ++i) why += "\xc3\xbc";   // u-umlaut, two bytes each
  const std::string r = controller::refused_reason(why);
  CHECK(r.size() <= 1000);
  CHECK(r.size() > 990);
  CHECK(r.substr(r.size() - 3) == "...");
  CHECK_FALSE(invalid_utf8_at(r).has_value());
}

}  // TEST_SUITE
