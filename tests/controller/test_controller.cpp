// Controller dispatch, leases, requeue and cancel, driven through the real Listener, AgentSession and
// DbWorker over a MemoryStore, with agents as in-process WebSocket clients.
#include <doctest/doctest.h>

#include <boost/beast/http.hpp>

#include "common/api.hpp"
#include "controller_fixture.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using jetsweep::controller::MemoryStore;
namespace http = boost::beast::http;

namespace {

const char* const kOneRun = "campaign: one\nmatrix: {model: lenet5, dataset: mnist, device: host}\n";
const char* const kTwoRuns = "campaign: two\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";

// The only run of a campaign.
MemoryStore::Run only_run(const ControllerFixture& f, int64_t campaign_id) {
  auto runs = f.store->runs_of(campaign_id);
  REQUIRE(runs.size() == 1);
  return runs.front();
}

// Submits a campaign of one run and waits until `agent` got it; the run's id.
int64_t assign_one_run(ControllerFixture& f, ProtocolClient& agent) {
  const int64_t campaign = f.submit(kOneRun);
  REQUIRE(f.drain_until([&] { return agent.count<proto::AssignRun>() == 1; }));
  const int64_t run_id = only_run(f, campaign).id;
  CHECK(agent.all<proto::AssignRun>()[0].run_id == run_id);
  return run_id;
}

// host-1 got a run, went away and its lease expired: the run is queued again. Returns the run and host-1's next
// registration (presenting its credential), which the caller fills in with what its journal holds.
std::pair<int64_t, proto::Register> requeued_while_away(ControllerFixture& f) {
  auto before = f.connect_agent(test_register("host-1"));
  const int64_t run_id = assign_one_run(f, *before);
  auto again = test_register("host-1");
  again.credential = before->all<proto::Registered>()[0].credential;
  before->close();
  REQUIRE(f.drain_until([&] { return !f.store->agent(ControllerFixture::registered_id(*before))->connected; }));
  f.clock.advance(31);   // past the 30 s lease: requeued
  REQUIRE(f.drain_until([&] { return f.store->run(run_id)->status == "queued"; }));
  return {run_id, again};
}

api::RunCancelled cancel(ControllerFixture& f, int64_t run_id) {
  auto res = f.api(http::verb::post, "/api/runs/" + std::to_string(run_id) + "/cancel");
  REQUIRE(res.result() == http::status::ok);
  auto reply = api::decode<api::RunCancelled>(boost::json::parse(res.body()), "cancel reply");
  REQUIRE(reply.is_ok());
  return reply.value();
}

}  // namespace

TEST_SUITE("controller") {

TEST_CASE("a queued run goes to an idle agent of its class, not to another class") {
  ControllerFixture f;
  auto host = f.connect_agent(test_register("host-1", "host"));
  auto other = f.connect_agent(test_register("orin-1", "orin-nano"));
  REQUIRE(ControllerFixture::registered_id(*host) > 0);
  CHECK(host->count<proto::AssignRun>() == 0);   // nothing queued yet

  const int64_t campaign = f.submit(kOneRun);
  REQUIRE(f.drain_until([&] { return host->count<proto::AssignRun>() == 1; }));
  const auto run = only_run(f, campaign);
  CHECK(host->all<proto::AssignRun>()[0].run_id == run.id);
  CHECK(host->all<proto::AssignRun>()[0].config.model == "lenet5");
  CHECK(run.status == "assigned");
  CHECK(run.agent_id == ControllerFixture::registered_id(*host));
  CHECK(run.attempts == 1);
  REQUIRE(f.round_trip(*other));
  CHECK(other->count<proto::AssignRun>() == 0);
}

TEST_CASE("an agent that registers while runs are queued gets one at once, and the next after finishing") {
  ControllerFixture f;
  const int64_t campaign = f.submit(kTwoRuns);
  auto agent = f.connect_agent(test_register("host-1"));
  REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
  const int64_t first = agent->all<proto::AssignRun>()[0].run_id;
  agent->send(proto::RunFinished{first, "done", "", 1.5});
  REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 2; }));
  CHECK(f.store->run(first)->status == "done");
  CHECK(f.store->run(first)->wall_s == 1.5);
  const int64_t second = agent->all<proto::AssignRun>()[1].run_id;
  CHECK(second != first);
  CHECK(f.store->run(second)->campaign_id == campaign);
}

TEST_CASE("a vanished agent's run is requeued when its lease expires, and goes to another agent") {
  ControllerFixture f;
  const int64_t campaign = f.submit(kOneRun);
  auto first = f.connect_agent(test_register("host-1"));
  const int64_t first_id = ControllerFixture::registered_id(*first);
  REQUIRE(f.drain_until([&] { return first->count<proto::AssignRun>() == 1; }));
  const int64_t run_id = only_run(f, campaign).id;

  first->close();
  REQUIRE(f.drain_until([&] { return !f.store->agent(first_id)->connected; }));
  // Within the lease the run stays with its agent, whatever the sweeps do.
  f.clock.advance(29);
  auto second = f.connect_agent(test_register("host-2"));
  REQUIRE(f.round_trip(*second));
  CHECK(second->count<proto::AssignRun>() == 0);
  CHECK(f.store->run(run_id)->status == "assigned");

  f.clock.advance(2);   // 31 s since the agent was last seen: past the 30 s lease
  REQUIRE(f.drain_until([&] { return second->count<proto::AssignRun>() == 1; }));
  CHECK(second->all<proto::AssignRun>()[0].run_id == run_id);
  const auto run = f.store->run(run_id);
  CHECK(run->status == "assigned");
  CHECK(run->agent_id == ControllerFixture::registered_id(*second));
  CHECK(run->attempts == 2);
  CHECK(run->error == "agent host-1 disconnected for more than 30 s");
}

TEST_CASE("an agent that re-registers without its run gets it requeued; with it, keeps it") {
  ControllerFixture f;
  auto before = f.connect_agent(test_register("host-1"));
  const int64_t run_id = assign_one_run(f, *before);

  auto again = test_register("host-1");   // the same agent: it presents the credential it enrolled with
  REQUIRE(before->count<proto::Registered>() == 1);
  again.credential = before->all<proto::Registered>()[0].credential;
  REQUIRE(again.credential);
  SUBCASE("without it: requeued, and assigned again to the new connection") {
    auto after = f.connect_agent(again);
    REQUIRE(f.drain_until([&] { return after->count<proto::AssignRun>() == 1 && before->closed(); }));
    CHECK(after->all<proto::AssignRun>()[0].run_id == run_id);
    CHECK(ControllerFixture::registered_id(*after) == ControllerFixture::registered_id(*before));
    const auto run = f.store->run(run_id);
    CHECK(run->status == "assigned");
    CHECK(run->attempts == 2);
    CHECK(run->error == "agent host-1 re-registered without it");
    REQUIRE(f.round_trip(*after));
    CHECK(f.store->agent(ControllerFixture::registered_id(*after))->connected);   // the old connection's end is not ours
  }
  SUBCASE("still running it: kept, and nothing new assigned") {
    auto reg = again;
    reg.current_run = run_id;
    auto after = f.connect_agent(reg);
    REQUIRE(f.round_trip(*after));
    CHECK(after->count<proto::AssignRun>() == 0);
    const auto run = f.store->run(run_id);
    CHECK(run->status == "assigned");
    CHECK(run->attempts == 1);
    CHECK(run->error.empty());
    REQUIRE(f.drain_until([&] { return before->closed(); }));   // replaced by the new connection
    REQUIRE(f.round_trip(*after));
    CHECK(f.store->agent(ControllerFixture::registered_id(*after))->connected);
  }
}

TEST_CASE("an agent whose old connection ends while its new one registers is shown connected (issue 32)") {
  auto options = test_options();
  options.sweep_interval = std::chrono::hours(1);   // no sweep's jobs in the database queue
  ControllerFixture f(options);
  auto before = f.connect_agent(test_register("host-1"));
  const int64_t id = ControllerFixture::registered_id(*before);
  REQUIRE(f.settle_db());
  auto again = test_register("host-1");
  again.credential = before->all<proto::Registered>()[0].credential;
  // The new connection's registration is written (connected) and its answer held back from the io thread; the old
  // connection ends meanwhile, and its session's "disconnected" write queues behind the registration.
  f.flaky->hold_after("admit_agent");
  auto after = ProtocolClient::create(f.ioc);
  after->connect(f.port);
  after->send(again);
  REQUIRE(f.drain_until([&] { return f.flaky->holding(); }));
  before->close();
  REQUIRE(f.drain_until([&] { return f.db->queued() >= 1; }));
  f.flaky->release();
  REQUIRE(f.drain_until([&] { return after->count<proto::Registered>() == 1; }));
  REQUIRE(f.settle_db());
  REQUIRE(f.round_trip(*after));
  CHECK(ControllerFixture::registered_id(*after) == id);
  CHECK(f.flaky->calls("set_agent_connected") >= 1);   // the old connection's end was written, and undone
  CHECK(f.store->agent(id)->connected);
  const auto agents = f.api(http::verb::get, "/api/agents");
  CHECK_MESSAGE(agents.body().find("\"connected\":true") != std::string::npos, agents.body());
}

TEST_CASE("an agent replaying journaled results of a run it lost gets no run until that run's run_finished arrived") {
  // Its run was requeued while it was away (its lease expired). Assigned again to the same agent before the old
  // attempt's results arrived, those results would be taken for the new attempt's.
  ControllerFixture f;
  auto [run_id, again] = requeued_while_away(f);

  again.journal_runs = {run_id};   // results of it still in its journal (it is not running it any more)
  auto after = f.connect_agent(again);
  REQUIRE(f.round_trip(*after));
  CHECK(after->count<proto::AssignRun>() == 0);
  CHECK(f.store->run(run_id)->status == "queued");

  after->send(proto::RunFinished{run_id, "cancelled", "agent restarted mid-run", 0});   // the end of its replay
  REQUIRE(f.drain_until([&] { return after->count<proto::AssignRun>() == 1; }));
  CHECK(after->all<proto::AssignRun>()[0].run_id == run_id);
  CHECK(f.store->run(run_id)->attempts == 2);
}

TEST_CASE("an agent whose replayed run_finished never comes may take runs again once nothing is left unacknowledged") {
  ControllerFixture f;
  auto [run_id, again] = requeued_while_away(f);

  again.journal_runs = {run_id};
  auto after = f.connect_agent(again);
  REQUIRE(f.round_trip(*after));
  // Its run_finished could not be decoded (acknowledged with an error): the agent still holds 2 messages, then none.
  after->send(proto::Heartbeat{"idle", std::nullopt, int64_t{2}, int64_t{4096}});
  REQUIRE(f.round_trip(*after));
  CHECK(after->count<proto::AssignRun>() == 0);
  after->send(proto::Heartbeat{"idle", std::nullopt, int64_t{0}, int64_t{0}});
  REQUIRE(f.drain_until([&] { return after->count<proto::AssignRun>() == 1; }));
  CHECK(after->all<proto::AssignRun>()[0].run_id == run_id);
}

TEST_CASE("cancelling a queued run through the API: it is never handed out") {
  ControllerFixture f;
  const int64_t campaign = f.submit(kTwoRuns);
  const auto runs = f.store->runs_of(campaign);
  REQUIRE(runs.size() == 2);
  const auto reply = cancel(f, runs[0].id);
  CHECK(reply.status == "cancelled");
  CHECK_FALSE(reply.stopping);
  CHECK(reply.error == "cancelled by request");

  auto agent = f.connect_agent(test_register("host-1"));
  REQUIRE(f.drain_until([&] { return agent->count<proto::AssignRun>() == 1; }));
  CHECK(agent->all<proto::AssignRun>()[0].run_id == runs[1].id);
  CHECK(f.store->run(runs[0].id)->status == "cancelled");
}

TEST_CASE("cancelling an executing run sends its agent cancel_run once; the agent's report ends it") {
  ControllerFixture f;
  auto agent = f.connect_agent(test_register("host-1"));
  const int64_t run_id = assign_one_run(f, *agent);

  const auto reply = cancel(f, run_id);
  CHECK(reply.status == "assigned");
  CHECK(reply.stopping);
  CHECK(reply.agent == std::optional<std::string>("host-1"));
  REQUIRE(f.drain_until([&] { return agent->count<proto::CancelRun>() == 1; }));
  CHECK(agent->all<proto::CancelRun>()[0].run_id == run_id);
  // Later sweeps do not ask again.
  f.controller->stop_cancelled_runs();
  REQUIRE(f.round_trip(*agent));
  CHECK(agent->count<proto::CancelRun>() == 1);

  agent->send(proto::RunFinished{run_id, "cancelled", "cancelled on request", 0.5});
  REQUIRE(f.drain_until([&] { return f.store->run(run_id)->status == "cancelled"; }));
  CHECK(f.store->run(run_id)->error == "cancelled while running");
}

}  // TEST_SUITE
