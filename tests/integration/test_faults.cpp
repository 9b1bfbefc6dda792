// Fault-injection tests (ctest label "fault"): real PostgreSQL, real controller and agent processes; each
// fault happens mid-campaign and every test asserts exact counts: every run done exactly once, every epoch
// and minibatch row present once.
#include <cstdlib>

#include "support/fault_campaign.hpp"
#include "support/tcp_proxy.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

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

TEST_CASE("the controller killed with -9 and restarted: agents reconnect, resend, and nothing is lost or doubled") {
  TestDatabase db;
  Fleet fleet(db);
  const int kEpochs = 30;
  const auto file = write_fault_campaign(fleet, "restart", "[16, 32]", "[0, 1]", kEpochs);
  fleet.add_agent("survivor-1");
  fleet.add_agent("survivor-2");
  const int64_t id = submit_under_way(fleet, db, 2, file, 3);
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 4, kEpochs, 2 * ceil_div(kFaultSamples, 16) + 2 * ceil_div(kFaultSamples, 32));
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
  const int kEpochs = 30;
  const auto file = write_fault_campaign(fleet, "pg", "[16, 32]", "[0, 1]", kEpochs);
  fleet.add_agent("steady-1");
  fleet.add_agent("steady-2");
  const int64_t id = submit_under_way(fleet, db, 2, file, 4);
  std::string out, err;
  REQUIRE_MESSAGE(run_command("/bin/sh", {"-c", restart}, &out, &err) == 0, err);
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 4, kEpochs, 2 * ceil_div(kFaultSamples, 16) + 2 * ceil_div(kFaultSamples, 32));
  CHECK(fleet.controller().running());
  CHECK(fleet.logs().find("database unavailable") != std::string::npos);  // it did see the outage
}
