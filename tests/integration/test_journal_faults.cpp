// Fault tests of the agent's on-disk journal (issue 5, ctest label "fault"): real PostgreSQL, controller and
// agent processes killed with -9; every test asserts exact counts: every run done exactly once, every epoch
// and minibatch row present once.
#include <filesystem>

#include "support/fault_campaign.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {
bool log_has(const Process& p, const std::string& text) { return p.log().find(text) != std::string::npos; }
}  // namespace

TEST_CASE("journal: an agent killed -9 mid-run and restarted with its journal finishes the campaign exactly once") {
  TestDatabase db;
  Fleet fleet(db);
  const int kEpochs = 40;
  const std::string journal = (fleet.dir() / "journal-phoenix").string();
  const auto file = write_fault_campaign(fleet, "phoenix", "[16, 32]", "0", kEpochs);
  auto& first = fleet.add_agent("phoenix", {"--journal-dir", journal});
  const int64_t id = submit_under_way(fleet, db, 1, file, 2);
  first.signal(SIGKILL);
  first.wait(10s);
  CHECK(std::filesystem::exists(journal + "/journal.bin"));
  // Same name, same journal: the lock died with the process.
  auto& second = fleet.add_agent("phoenix", {"--journal-dir", journal});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  check_exactly_once(db, 2, kEpochs, ceil_div(kFaultSamples, 16) + ceil_div(kFaultSamples, 32));
  // The run killed mid-run was executed again (reported cancelled from the journal, or requeued at
  // registration when all its results had been acked); the other one ran once.
  CHECK_MESSAGE(db.count("SELECT count(*) FROM runs WHERE attempts = 2") == 1, fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE attempts = 1") == 1);
  CHECK(second.running());
}

TEST_CASE("journal: results produced while the controller is down survive the agent's death and land exactly once") {
  TestDatabase db;
  Fleet fleet(db);
  const int kEpochs = 60;   // long enough that the controller dies mid-run
  const std::string journal = (fleet.dir() / "journal-keeper").string();
  const auto file = write_fault_campaign(fleet, "keeper", "16", "0", kEpochs);
  auto& first = fleet.add_agent("keeper", {"--journal-dir", journal});
  const int64_t id = submit_under_way(fleet, db, 1, file, 1);
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
  check_exactly_once(db, 1, kEpochs, ceil_div(kFaultSamples, 16));
  // Nothing was re-executed: the results came from the journal.
  CHECK_MESSAGE(db.count("SELECT max(attempts) FROM runs") == 1, fleet.logs());
  // (The restarted agent appends to the first one's log file.)
  CHECK(log_has(second, "journal " + journal + ": "));
  CHECK(log_has(second, "to replay; next id"));
}
