// The operator's CLI against a real controller, PostgreSQL and simulated agents: `jetsweep compare` matches two
// campaigns' configurations, `jetsweep watch` follows a campaign to its end with plain lines when stdout is not a
// terminal (and stops on Ctrl-C), `agents` and `status` print aligned tables with their headers.
#include <signal.h>

#include "common/compare.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

// Simulated lenet5 runs on a nano and an agx-orin for each of `batch_sizes`, `repetitions` times.
std::string sim_campaign(const std::string& name, const std::string& batch_sizes, int repetitions, int epochs,
                         int minibatches) {
  return "campaign: " + name + "\nrepetitions: " + std::to_string(repetitions) +
         "\nmatrix:\n  device: [nano, agx-orin]\n  model: lenet5\n  dataset: fashion-mnist\n  batch_size: " +
         batch_sizes + "\n  workers: 0\n  epochs: " + std::to_string(epochs) +
         "\n  sample_hz: 1\n  max_minibatches: " + std::to_string(minibatches) + "\n";
}

int64_t submit_text(Fleet& fleet, const std::string& name, const std::string& yaml) {
  write_file(fleet.dir() / (name + ".yaml"), yaml);
  return submit(fleet, fleet.dir() / (name + ".yaml"));
}

}  // namespace

TEST_CASE("jetsweep compare, watch, agents and status against a simulated fleet") {
  TestDatabase db;
  Fleet fleet(db);
  CHECK(fleet.cli({"agents"}).find("no agents have registered") != std::string::npos);
  fleet.add_agent("sim-nano", {"--no-journal", "--sim", "nano/1", "--time-scale", "0"});
  fleet.add_agent("sim-orin", {"--no-journal", "--sim", "agx-orin/1", "--time-scale", "0"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  const std::string agents = fleet.cli({"agents"});
  CHECK(agents.rfind("id  name", 0) == 0);
  CHECK(agents.find("sim-nano [sim]") != std::string::npos);
  CHECK(agents.find("[sim] = a simulated board") != std::string::npos);

  const int64_t a = submit_text(fleet, "a", sim_campaign("before", "64", 1, 3, 40));
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(a); }), fleet.logs());
  // B: the same configurations twice each (repetitions pooled) plus a batch size A never ran.
  const int64_t b = submit_text(fleet, "b", sim_campaign("after", "[64, 128]", 2, 3, 40));

  // watch with stdout a file (not a terminal): plain lines, no escape sequences, exits 0 once B has finished.
  const std::string watch_log = (fleet.dir() / "watch.log").string();
  Process watch(kBin + "/jetsweep",
                {"--controller", fleet.url(), "watch", std::to_string(b), "--interval", "0.2"}, watch_log);
  CHECK_MESSAGE(watch.wait(300s) == 0, watch.log() << fleet.logs());
  const std::string watched = watch.log();
  CHECK(watched.find("campaign " + std::to_string(b) + " (after): 8 runs:") != std::string::npos);
  CHECK(watched.find("campaign " + std::to_string(b) + " finished: 8 done") != std::string::npos);
  CHECK(watched.find('\x1b') == std::string::npos);
  CHECK(fleet.finished(b));

  auto json = bj::parse(fleet.cli({"compare", std::to_string(a), std::to_string(b), "--json"})).as_object();
  auto cmp = api::decode<api::CampaignComparison>(json, "comparison");
  REQUIRE_MESSAGE(cmp.is_ok(), cmp.status().message());
  REQUIRE(cmp->configurations.size() == 2);   // bs64 on the nano and on the orin
  CHECK(cmp->only_a.empty());
  CHECK(cmp->only_b.size() == 2);             // bs128 on each
  CHECK(cmp->b.simulated_runs == 8);
  for (const auto& m : cmp->configurations) {
    CHECK(m.a.runs == 1);
    CHECK(m.b.runs == 2);
    CHECK(m.a.epochs == 2);   // epochs 1 and 2: epoch 0 is the warm-up
    CHECK(m.b.epochs == 4);
    CHECK(m.a.simulated);
    REQUIRE(m.a.energy_per_epoch_j.has_value());   // simulated boards model power
    REQUIRE(m.mean_epoch_s.abs.has_value());
    CHECK(*m.mean_epoch_s.abs == doctest::Approx(*m.b.mean_epoch_s - *m.a.mean_epoch_s));
  }
  CHECK(cmp->configurations[0].label.rfind("nano lenet5/fashion-mnist", 0) == 0);
  const std::string table = fleet.cli({"compare", "before", "after"});
  CHECK(table.find("only in B (2):") != std::string::npos);
  CHECK(table.find("SIMULATED") != std::string::npos);
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "compare", std::to_string(a), "999"}, &out, &err) == 2);
  CHECK(err.find("999") != std::string::npos);

  const std::string status = fleet.cli({"status"});
  CHECK(status.rfind("id  name", 0) == 0);
  CHECK(status.find("finished") != std::string::npos);
  // One analysis per campaign: "--campaign 1,6" points at compare.
  CHECK(run_command(kBin + "/jetsweep", {"analyze", "variability", "--db", db.dsn(), "--campaign",
                                         std::to_string(a) + "," + std::to_string(b)},
                    &out, &err) == 2);
  CHECK(err.find("jetsweep compare " + std::to_string(a) + " " + std::to_string(b)) != std::string::npos);
  // One CLI: the database commands are subcommands the binary's --help lists, and each keeps its own --help.
  REQUIRE(run_command(kBin + "/jetsweep", {"--help"}, &out, &err) == 0);
  for (const char* command : {"analyze", "export", "archive", "import", "drop", "report", "cancel-run"})
    CHECK_MESSAGE(out.find(std::string("\n  ") + command + " ") != std::string::npos, command << " missing: " << out);
  REQUIRE(run_command(kBin + "/jetsweep", {"archive", "--help"}, &out, &err) == 0);
  CHECK(out.find("Usage: jetsweep archive") != std::string::npos);
}

TEST_CASE("jetsweep watch stops on Ctrl-C and leaves the campaign running") {
  TestDatabase db;
  Fleet fleet(db);
  // No agent: the campaign stays queued, so watch can only end by Ctrl-C.
  const int64_t id = submit_text(fleet, "c", sim_campaign("waiting", "64", 1, 3, 40));
  const std::string log = (fleet.dir() / "watch.log").string();
  Process watch(kBin + "/jetsweep", {"--controller", fleet.url(), "watch", "--interval", "0.2"}, log);
  REQUIRE_MESSAGE(wait_until(60s, [&] { return watch.log().find("campaign " + std::to_string(id)) != std::string::npos; }),
                  watch.log());
  CHECK(watch.log().find("time left known after the first measured epoch") != std::string::npos);
  watch.signal(SIGINT);
  CHECK(watch.wait(30s) == 130);
  CHECK(watch.log().find("stopped (the campaign carries on)") != std::string::npos);
  CHECK_FALSE(fleet.finished(id));
}
