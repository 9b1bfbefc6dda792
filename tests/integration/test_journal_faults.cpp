// Fault tests of the agent's on-disk journal (issue 5, ctest label "fault"): real PostgreSQL, controller and
// agent processes killed with -9; every test asserts exact counts: every run done exactly once, every epoch
// and minibatch row present once.
#include <filesystem>

#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {
// Exact counts for a finished campaign of `runs` runs x `epochs` epochs.
void check_exactly_once(const TestDatabase& db, int64_t runs, int64_t epochs, int64_t minibatches_per_epoch_all_runs) {
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == runs);
  CHECK(db.count("SELECT count(*) FROM runs") == runs);
  CHECK(db.count("SELECT count(*) FROM epochs") == runs * epochs);
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, epoch FROM epochs GROUP BY run_id, epoch) e") == runs * epochs);
  CHECK(db.count("SELECT count(*) FROM minibatches") == epochs * minibatches_per_epoch_all_runs);
  CHECK(db.count("SELECT count(*) FROM epochs e WHERE e.minibatches <> (SELECT count(*) FROM minibatches m "
                 "WHERE m.run_id = e.run_id AND m.epoch = e.epoch)") == 0);
}

bool log_has(const Process& p, const std::string& text) { return p.log().find(text) != std::string::npos; }
}  // namespace

TEST_CASE("journal: an agent killed -9 mid-run and restarted with its journal finishes the campaign exactly once") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 200;
  const int kEpochs = 40;
  const std::string journal = (fleet.dir() / "journal-phoenix").string();
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "j.yaml", campaign_yaml("phoenix", (fleet.dir() / "data").string(), "[16, 32]", "0", kEpochs));
  auto& first = fleet.add_agent("phoenix", {"--journal-dir", journal});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "j.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 2; }), fleet.logs());
  first.signal(SIGKILL);
  first.wait(10s);
  CHECK(std::filesystem::exists(journal + "/journal.bin"));
  // Same name, same journal: the lock died with the process.
  auto& second = fleet.add_agent("phoenix", {"--journal-dir", journal});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 2, kEpochs, ceil_div(kSamples, 16) + ceil_div(kSamples, 32));
  // The run killed mid-run was executed again (reported cancelled from the journal, or requeued at
  // registration when all its results had been acked); the other one ran once.
  CHECK_MESSAGE(db.count("SELECT count(*) FROM runs WHERE attempts = 2") == 1, fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE attempts = 1") == 1);
  CHECK(second.running());
}

TEST_CASE("journal: results produced while the controller is down survive the agent's death and land exactly once") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 200;
  const int kEpochs = 60;   // long enough that the controller dies mid-run
  const std::string journal = (fleet.dir() / "journal-keeper").string();
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "k.yaml", campaign_yaml("keeper", (fleet.dir() / "data").string(), "16", "0", kEpochs));
  auto& first = fleet.add_agent("keeper", {"--journal-dir", journal});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "k.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 1; }), fleet.logs());
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  const int64_t run = db.count("SELECT min(id) FROM runs");
  // The agent finishes the run with nobody to send its results to: they exist only in its journal.
  REQUIRE_MESSAGE(wait_until(600s, [&] { return log_has(first, "run " + std::to_string(run) + " finished"); }),
                  fleet.logs());
  REQUIRE_MESSAGE(db.count("SELECT count(*) FROM epochs") < kEpochs, "the run ended before the controller died");
  first.signal(SIGKILL);
  first.wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  auto& second = fleet.add_agent("keeper", {"--journal-dir", journal});
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 1, kEpochs, ceil_div(kSamples, 16));
  // Nothing was re-executed: the results came from the journal.
  CHECK_MESSAGE(db.count("SELECT max(attempts) FROM runs") == 1, fleet.logs());
  // (The restarted agent appends to the first one's log file.)
  CHECK(log_has(second, "journal " + journal + ": "));
  CHECK(log_has(second, "to replay; next id"));
}
