// Fault-injection tests (ctest label "fault"): real PostgreSQL, real controller and agent processes; each
// fault happens mid-campaign and every test asserts exact counts: every run done exactly once, every epoch
// and minibatch row present once.
#include <cstdlib>

#include "support/fleet.hpp"
#include "support/tcp_proxy.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {
// Exact counts for a finished campaign of `runs` runs x `epochs` epochs over `samples` samples.
void check_exactly_once(const TestDatabase& db, int64_t runs, int64_t epochs, int64_t minibatches_per_epoch_all_runs) {
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == runs);
  CHECK(db.count("SELECT count(*) FROM epochs") == runs * epochs);
  CHECK(db.count("SELECT count(*) FROM minibatches") == epochs * minibatches_per_epoch_all_runs);
  CHECK(db.count("SELECT count(*) FROM epochs e WHERE e.minibatches <> (SELECT count(*) FROM minibatches m "
                 "WHERE m.run_id = e.run_id AND m.epoch = e.epoch)") == 0);
}
}  // namespace

TEST_CASE("an agent killed mid-run: its run is requeued, finished by another agent, and counted once") {
  TestDatabase db;
  Fleet fleet(db, {"--lease-s", "1"});
  const int64_t kSamples = 200;
  const int kEpochs = 40;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "long.yaml", campaign_yaml("long", (fleet.dir() / "data").string(), "16", "0", kEpochs));
  auto& doomed = fleet.add_agent("doomed");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "long.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 2; }), fleet.logs());
  doomed.signal(SIGKILL);
  doomed.wait(10s);
  fleet.add_agent("rescuer");
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 1);
  CHECK(db.count("SELECT attempts FROM runs") == 2);
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.name = 'rescuer'") == 1);
  CHECK(db.count("SELECT count(*) FROM epochs") == kEpochs);
  CHECK(db.count("SELECT count(*) FROM minibatches") == kEpochs * ceil_div(kSamples, 16));
}

TEST_CASE("the controller killed with -9 and restarted: agents reconnect, resend, and nothing is lost or doubled") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 200;
  const int kEpochs = 30;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "c.yaml", campaign_yaml("restart", (fleet.dir() / "data").string(), "[16, 32]", "[0, 1]", kEpochs));
  fleet.add_agent("survivor-1");
  fleet.add_agent("survivor-2");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "c.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 3; }), fleet.logs());
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 4);
  CHECK(db.count("SELECT count(*) FROM epochs") == 4 * kEpochs);
  const int64_t per_epoch = 2 * ceil_div(kSamples, 16) + 2 * ceil_div(kSamples, 32);
  CHECK(db.count("SELECT count(*) FROM minibatches") == kEpochs * per_epoch);
}


TEST_CASE("agent connections cut mid-run (twice): agents reconnect, resend, and every row lands once") {
  TestDatabase db;
  Fleet fleet(db);
  TcpProxy proxy(static_cast<uint16_t>(fleet.port()));
  const int64_t kSamples = 200;
  const int kEpochs = 30;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "cut.yaml", campaign_yaml("cut", (fleet.dir() / "data").string(), "[16, 32]", "0", kEpochs));
  fleet.add_agent("flaky-1", {}, proxy.port());
  fleet.add_agent("flaky-2", {}, proxy.port());
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "cut.yaml");
  for (int64_t threshold : {3, 12}) {
    REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= threshold; }), fleet.logs());
    const int64_t before = proxy.connections_accepted();
    proxy.cut();
    // Both agents come back through the proxy (capped, jittered backoff).
    REQUIRE_MESSAGE(wait_until(60s, [&] { return proxy.connections_accepted() >= before + 2; }), fleet.logs());
  }
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 2, kEpochs, ceil_div(kSamples, 16) + ceil_div(kSamples, 32));
  CHECK(db.count("SELECT max(attempts) FROM runs") == 1);  // the runs carried on: nothing was re-executed
  CHECK(fleet.logs().find("resending") != std::string::npos);
}

TEST_CASE("PostgreSQL restarted mid-campaign: the controller rides it out and nothing is lost or doubled") {
  const char* restart = std::getenv("JETSWEEP_TEST_PG_RESTART");
  REQUIRE_MESSAGE(restart != nullptr, "JETSWEEP_TEST_PG_RESTART is not set: run the tests through scripts/test");
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 200;
  const int kEpochs = 30;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "pg.yaml", campaign_yaml("pg", (fleet.dir() / "data").string(), "[16, 32]", "[0, 1]", kEpochs));
  fleet.add_agent("steady-1");
  fleet.add_agent("steady-2");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "pg.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 4; }), fleet.logs());
  std::string out, err;
  REQUIRE_MESSAGE(run_command("/bin/sh", {"-c", restart}, &out, &err) == 0, err);
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 4, kEpochs, 2 * ceil_div(kSamples, 16) + 2 * ceil_div(kSamples, 32));
  CHECK(fleet.controller().running());
  CHECK(fleet.logs().find("database unavailable") != std::string::npos);  // it did see the outage
}
