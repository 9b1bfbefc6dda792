// Fault-injection tests (ctest label "fault"): real PostgreSQL, real controller and agent processes; each
// fault happens mid-campaign and every test asserts exact counts: every run done exactly once, every epoch
// and minibatch row present once.
#include <cstdlib>

#include "support/fault_campaign.hpp"
#include "support/tcp_proxy.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kFourRunEpochs = 30;

// The four-run campaign `name` (batch sizes [16, 32] x workers [0, 1], 30 epochs) on two agents `agent_prefix`-1
// and -2, submitted and under way past `min_epochs` epoch rows; returns the campaign id.
int64_t start_four_runs(Fleet& fleet, const TestDatabase& db, const std::string& name, const std::string& agent_prefix,
                        int64_t min_epochs) {
  const auto file = write_fault_campaign(fleet, name, "[16, 32]", "[0, 1]", kFourRunEpochs);
  fleet.add_agent(agent_prefix + "-1");
  fleet.add_agent(agent_prefix + "-2");
  return submit_under_way(fleet, db, 2, file, min_epochs);
}

// Each of the four runs done once, with every epoch and minibatch row once.
void check_four_runs_once(const TestDatabase& db) {
  check_exactly_once(db, 4, kFourRunEpochs, 2 * ceil_div(kFaultSamples, 16) + 2 * ceil_div(kFaultSamples, 32));
}

}  // namespace

TEST_CASE("an agent killed mid-run: its run is requeued, finished by another agent, and counted once") {
  TestDatabase db;
  Fleet fleet(db, {"--lease-s", "1"});
  const int kEpochs = 40;
  const auto file = write_fault_campaign(fleet, "long", "16", "0", kEpochs);
  auto& doomed = fleet.add_agent("doomed");
  const int64_t id = submit_under_way(fleet, db, 1, file, 2);
  doomed.signal(SIGKILL);
  doomed.wait(10s);
  fleet.add_agent("rescuer");
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 1, kEpochs, ceil_div(kFaultSamples, 16));
  CHECK(db.count("SELECT attempts FROM runs") == 2);
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.name = 'rescuer'") == 1);
}

TEST_CASE("an agent frozen past its lease: its run goes to another agent, and what it measured after is set aside") {
  TestDatabase db;
  Fleet fleet(db, {"--lease-s", "1"});
  const int kEpochs = 30;
  const auto file = write_fault_campaign(fleet, "frozen", "16", "0", kEpochs);
  auto& frozen = fleet.add_agent("frozen");
  const int64_t id = submit_under_way(fleet, db, 1, file, 2);
  frozen.signal(SIGSTOP);   // silent but connected: the controller's watchdog closes it, the lease requeues its run
  fleet.add_agent("rescuer");
  const std::string on_rescuer = "SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.name = 'rescuer'";
  const bool taken = wait_until(120s, [&] { return db.count(on_rescuer) == 1; });
  frozen.signal(SIGCONT);   // it carries on with the run it no longer holds, reconnects and sends what it measured
  REQUIRE_MESSAGE(taken, fleet.logs());
  const std::string frozen_finished = "SELECT count(*) FROM set_aside_results s JOIN agents a ON a.id = s.agent_id "
                                      "WHERE a.name = 'frozen' AND s.message_type = 'run_finished'";
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id) && db.count(frozen_finished) == 1; }), fleet.logs());
  // The run's rows are the rescuer's alone, once each; the frozen agent's epochs after the freeze are set aside.
  check_exactly_once(db, 1, kEpochs, ceil_div(kFaultSamples, 16));
  CHECK(db.count(on_rescuer) == 1);
  const int64_t set_aside = db.count("SELECT count(*) FROM set_aside_results");
  MESSAGE(set_aside << " set aside: " << db.text("SELECT string_agg(message_type || ' ' || reason, '; ') FROM "
                                                 "(SELECT DISTINCT message_type, reason FROM set_aside_results) d"));
  CHECK(db.count("SELECT count(*) FROM set_aside_results s JOIN agents a ON a.id = s.agent_id "
                 "WHERE a.name = 'frozen' AND s.message_type = 'epoch_result'") >= 1);
  CHECK(db.count("SELECT count(*) FROM set_aside_results s JOIN agents a ON a.id = s.agent_id WHERE a.name <> 'frozen'") == 0);
  CHECK(db.count("SELECT count(*) FROM set_aside_results WHERE reason NOT LIKE 'the run is % on agent %' "
                 "AND reason NOT LIKE 'the run is queued%'") == 0);
  // Reported where a user looks: the campaign's status (API and CLI).
  CHECK(fleet.status(id).at("set_aside_results").as_int64() == set_aside);
  const std::string status = fleet.cli({"status", std::to_string(id)});
  CHECK_MESSAGE(status.find("set aside: " + std::to_string(set_aside) + " result message") != std::string::npos, status);
}

TEST_CASE("the controller killed with -9 and restarted: agents reconnect, resend, and nothing is lost or doubled") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t id = start_four_runs(fleet, db, "restart", "survivor", 3);
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_four_runs_once(db);
}

TEST_CASE("agent connections cut mid-run (twice): agents reconnect, resend, and every row lands once") {
  TestDatabase db;
  Fleet fleet(db);
  TcpProxy proxy(static_cast<uint16_t>(fleet.port()));
  const int kEpochs = 30;
  const auto file = write_fault_campaign(fleet, "cut", "[16, 32]", "0", kEpochs);
  fleet.add_agent("flaky-1", {}, proxy.port());
  fleet.add_agent("flaky-2", {}, proxy.port());
  const int64_t id = submit_under_way(fleet, db, 2, file, 0);
  for (int64_t threshold : {3, 12}) {
    REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= threshold; }), fleet.logs());
    const int64_t before = proxy.connections_accepted();
    proxy.cut();
    // Both agents come back through the proxy (capped, jittered backoff).
    REQUIRE_MESSAGE(wait_until(60s, [&] { return proxy.connections_accepted() >= before + 2; }), fleet.logs());
  }
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 2, kEpochs, ceil_div(kFaultSamples, 16) + ceil_div(kFaultSamples, 32));
  CHECK(db.count("SELECT max(attempts) FROM runs") == 1);  // the runs carried on: nothing was re-executed
  CHECK(fleet.logs().find("resending") != std::string::npos);
}

TEST_CASE("PostgreSQL restarted mid-campaign: the controller rides it out and nothing is lost or doubled") {
  const char* restart = std::getenv("JETSWEEP_TEST_PG_RESTART");
  REQUIRE_MESSAGE(restart != nullptr, "JETSWEEP_TEST_PG_RESTART is not set: run the tests through scripts/test");
  TestDatabase db;
  Fleet fleet(db);
  const int64_t id = start_four_runs(fleet, db, "pg", "steady", 4);
  std::string out, err;
  REQUIRE_MESSAGE(run_command("/bin/sh", {"-c", restart}, &out, &err) == 0, err);
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_four_runs_once(db);
  CHECK(fleet.controller().running());
  CHECK(fleet.logs().find("database unavailable") != std::string::npos);  // it did see the outage
}
