// Issue 10 through the real processes: every run starts from a defined board state and carries the state
// it was applied in into the database, the report and the export; runs that cannot run say why; every
// shipped campaign dry-runs to the end on simulated boards.
#include <sstream>

#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

// Rows of a CSV text as maps column -> value (no quoting is used by jetsweep's exports).
std::vector<std::map<std::string, std::string>> parse_csv(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::stringstream ss(l);
    std::string cell;
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    if (!l.empty() && l.back() == ',') out.emplace_back();
    return out;
  };
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (header.empty()) {
      header = split(line);
      continue;
    }
    auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string run_jetsweep(const std::vector<std::string>& args) {
  std::string out, err;
  const int rc = run_command(kBin + "/jetsweep", args, &out, &err);
  REQUIRE_MESSAGE(rc == 0, "jetsweep " << args[0] << " exited " << rc << ": " << err);
  return out;
}

// Adds simulated AGX Xavier agents agx-1..agx-`count` (instances 1..count, no pacing) and waits until all
// are connected.
void add_xavier_agents(Fleet& fleet, int count) {
  for (int i = 1; i <= count; ++i)
    fleet.add_agent("agx-" + std::to_string(i), {"--sim", "agx-xavier/" + std::to_string(i), "--time-scale", "0"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(static_cast<size_t>(count)); }), fleet.logs());
}

// Writes the campaign file NAME.yaml into the fleet's directory and submits it; returns the campaign id.
int64_t submit_campaign(Fleet& fleet, const std::string& name, const std::string& yaml) {
  const auto file = fleet.dir() / (name + ".yaml");
  write_file(file, yaml);
  return submit(fleet, file);
}

std::string lenet_campaign(const std::string& name, const std::string& extra) {
  return "campaign: " + name + "\nmatrix:\n  device: agx-xavier\n  model: lenet5\n  dataset: mnist\n"
         "  batch_size: 16\n  workers: 4\n  epochs: 2\n  max_minibatches: 20\n  sample_hz: 10\n" + extra;
}

}  // namespace

TEST_CASE("two campaigns back to back on one board: the second names no power mode and runs in the reference state") {
  TestDatabase db;
  Fleet fleet(db);
  add_xavier_agents(fleet, 1);

  const int64_t first = submit_campaign(
      fleet, "first", lenet_campaign("first", "  power_mode: {cores: 2, cpu_khz: 2112000}\n  pin_clocks: true\n  fan_max: true\n"));
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(first); }), fleet.logs());
  const int64_t second = submit_campaign(fleet, "second", lenet_campaign("second", ""));
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(second); }), fleet.logs());
  REQUIRE(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 2);

  // Database: the applied, read-back state of each run.
  const std::string second_run = "(SELECT id FROM runs WHERE campaign_id = " + std::to_string(second) + ")";
  const std::string first_run = "(SELECT id FROM runs WHERE campaign_id = " + std::to_string(first) + ")";
  CHECK(db.count("SELECT (applied->>'cores_online')::int FROM runs WHERE id = " + first_run) == 2);
  CHECK(db.count("SELECT (applied->>'clocks_pinned')::boolean::int FROM runs WHERE id = " + first_run) == 1);
  CHECK(db.count("SELECT (applied->>'cores_online')::int FROM runs WHERE id = " + second_run) == 4);
  CHECK(db.count("SELECT (applied->>'cpu_khz')::bigint FROM runs WHERE id = " + second_run) == 1190400);
  CHECK(db.count("SELECT count(*) FROM runs WHERE applied->>'mode_name' = 'MODE_15W' AND reference_state AND NOT "
                 "(applied->>'clocks_pinned')::boolean AND applied->>'fan' = 'auto' AND id = " + second_run) == 1);
  // Per epoch: its window, power coverage and the clocks read back at its start and end.
  CHECK(db.count("SELECT count(*) FROM epochs WHERE run_id = " + second_run +
                 " AND cores_start = 4 AND cores_end = 4 AND cpu_khz_start = 1190400 AND NOT throttled "
                 "AND power_coverage = 1 AND abs((t_end_s - t_start_s) - e2e_s) < 1e-9") == 2);

  // Report: JSON carries the applied state; the text names the mode of every run.
  auto report = bj::parse(fleet.cli({"report", "--json", std::to_string(second)})).as_object();
  const auto& run = report.at("runs").as_array().at(0).as_object();
  CHECK(run.at("applied").at("cores_online").as_int64() == 4);
  CHECK(run.at("applied").at("mode_name") == "MODE_15W");
  CHECK(run.at("reference_state") == true);
  CHECK(run.at("storage_device") == "simulated ssd");
  CHECK(run.at("compute_device") == "simulated");
  CHECK(run.at("epochs").as_array().at(1).at("power_coverage").as_double() == doctest::Approx(1.0));
  CHECK(fleet.cli({"report", std::to_string(second)}).find("4c/1190.4/624.75/1331.2 MODE_15W") != std::string::npos);
  CHECK(fleet.cli({"report", std::to_string(first)}).find("2c/2112/624.75/1331.2 pin fan=max") != std::string::npos);

  // Export, per epoch: the mode columns come from the applied state, for a run that named no mode too.
  auto rows = parse_csv(run_jetsweep({"export", "--db", db.dsn(), "--campaign", std::to_string(second), "--per-epoch"}));
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    CHECK(r.at("cores") == "4");
    CHECK(r.at("cpu_mhz") == "1190.4");
    CHECK(r.at("gpu_mhz") == "624.75");
    CHECK(r.at("emc_mhz") == "1331.2");
    CHECK(r.at("mode_name") == "MODE_15W");
    CHECK(r.at("workers") == "4");
    CHECK(r.at("batch_size") == "16");
    CHECK(r.at("simulated") == "true");
  }
}

TEST_CASE("analyze variability keeps two modes x two worker settings apart: four groups") {
  TestDatabase db;
  Fleet fleet(db);
  add_xavier_agents(fleet, 2);
  const int64_t id = submit_campaign(
      fleet, "grid",
      "campaign: grid\nmatrix:\n  device: agx-xavier/*\n  model: lenet5\n  dataset: mnist\n  batch_size: 16\n"
      "  workers: [0, 4]\n  epochs: 3\n  max_minibatches: 20\n  sample_hz: 10\n  power_mode: [MAXN, MODE_15W]\n");
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(id); }), fleet.logs());
  REQUIRE(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 8);
  auto v = bj::parse(run_jetsweep({"analyze", "variability", "--db", db.dsn(), "--campaign", std::to_string(id), "--json"}));
  REQUIRE(v.is_object());
  const auto& groups = v.at("groups").as_array();
  CHECK(groups.size() == 4);
  for (const auto& g : groups) CHECK(g.at("instances").as_array().size() == 2);
  // Simulated instances never differ in software (their kernel is the host's).
  CHECK(bj::serialize(v).find("\"differs\":true") == std::string::npos);
}

TEST_CASE("status says why queued runs cannot run") {
  TestDatabase db;
  Fleet fleet(db);
  add_xavier_agents(fleet, 1);
  const int64_t id = submit_campaign(
      fleet, "stuck",
      "campaign: stuck\nmatrix:\n  device: [agx-xavier, xavier-nx]\n  model: lenet5\n  dataset: mnist\n"
      "  data: \"@ssd\"\n  batch_size: [16, 32]\n  epochs: 1\n  max_minibatches: 5\n");
  bj::object s;
  REQUIRE_MESSAGE(wait_until(60s, [&] {
                    s = fleet.status(id);
                    return s.contains("unrunnable_runs") && s.at("unrunnable_runs").as_int64() == 4;
                  }),
                  bj::serialize(s) << fleet.logs());
  const std::string why = bj::serialize(s.at("unrunnable"));
  CHECK(why.find("2 runs need storage @ssd; no agent of 'agx-xavier' offers it (agent --storage ssd=DIR)") != std::string::npos);
  CHECK(why.find("2 runs need device 'xavier-nx'; no enrolled agent is one") != std::string::npos);
  CHECK(fleet.cli({"status", std::to_string(id)}).find("cannot run: 2 runs need storage @ssd") != std::string::npos);

  // An agent that offers the medium takes them: nothing is reported for the AGX runs any more.
  fleet.add_agent("agx-ssd", {"--sim", "agx-xavier/2", "--time-scale", "0", "--storage", "ssd=/srv/ssd"});
  REQUIRE_MESSAGE(wait_until(60s, [&] {
                    s = fleet.status(id);
                    return s.at("done").as_int64() == 2 && s.at("unrunnable_runs").as_int64() == 2;
                  }),
                  bj::serialize(s) << fleet.logs());

  // Pausing a campaign shows 'paused' instead of an ETA.
  fleet.cli({"pause", std::to_string(id)});
  CHECK(fleet.cli({"status", std::to_string(id)}).find("ETA paused") != std::string::npos);
}

TEST_CASE("every campaign shipped in experiments/ dry-runs to the end on simulated boards") {
  TestDatabase db;
  Fleet fleet(db);
  const std::vector<std::string> media = {"--storage", "ssd=/srv/ssd", "--storage", "sd=/srv/sd", "--storage", "hdd=/srv/hdd"};
  for (const std::string cls : {"nano", "xavier-nx", "agx-xavier", "agx-orin", "orin-nano"}) {
    std::vector<std::string> args = {"--sim", cls + "/1", "--time-scale", "0", "--allow-reboot"};   // base_mode: MAXN
    args.insert(args.end(), media.begin(), media.end());
    fleet.add_agent(cls + "-1", args);
  }
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(5); }), fleet.logs());
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(JETSWEEP_SOURCE_DIR) + "/experiments")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    CAPTURE(entry.path().filename().string());
    // A campaign naming the user's own model (torchscript:own_model.pt) runs as README.md says: the file exported
    // next to it first (here a copy of the campaign in the fleet's directory; git ignores experiments/*.pt).
    std::filesystem::path file = entry.path();
    if (read_file(file).find("torchscript:own_model.pt") != std::string::npos) {
      file = fleet.dir() / entry.path().filename();
      std::filesystem::copy_file(entry.path(), file);
      std::string out, err;
      REQUIRE_MESSAGE(run_command("/usr/bin/python3", {std::string(JETSWEEP_SOURCE_DIR) + "/scripts/export-torchscript",
                                                       "mobilenet_v3_small", "--channels", "3", "--size", "32", "--classes",
                                                       "10", "-o", (fleet.dir() / "own_model.pt").string()},
                                      &out, &err) == 0,
                      err);
    }
    auto out = fleet.cli({"submit", "--json", "--dry-run", "6:2:20", file.string()});
    const int64_t id = bj::parse(out).as_object().at("campaign_id").as_int64();
    REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(id); }), bj::serialize(fleet.status(id)) << fleet.logs());
    auto s = fleet.status(id);
    CHECK(s.at("done").as_int64() == s.at("runs").as_int64());
    CHECK(s.at("failed").as_int64() == 0);
    CHECK(s.at("runs").as_int64() <= 6);
    CHECK(s.at("unrunnable_runs").as_int64() == 0);
  }
  CHECK(files >= 8);
  // Each run of every dry run started from a known state and recorded it.
  CHECK(db.count("SELECT count(*) FROM runs WHERE applied IS NULL") == 0);
}

TEST_CASE("jetsweep-agent doctor: a checklist with verdicts, exit 0 when ready and 1 when not; agents register it") {
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep-agent", {"doctor", "--backend", "host", "--json"}, &out, &err) == 0);
  auto ready = bj::parse(out).as_object();
  CHECK(ready.at("ready") == true);
  CHECK(ready.at("items").as_array().size() >= 4);
  TempDir empty;
  out.clear();
  CHECK(run_command(kBin + "/jetsweep-agent", {"doctor", "--root", empty.str(), "--json"}, &out, &err) == 1);
  auto board = bj::parse(out).as_object();
  CHECK(board.at("ready") == false);
  CHECK(bj::serialize(board).find("\"name\":\"board\",\"verdict\":\"fail\"") != std::string::npos);

  TestDatabase db;
  Fleet fleet(db);
  fleet.add_agent("sim-1", {"--sim", "nano/1", "--time-scale", "0"});
  fleet.add_agent("host-1", {});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  auto agents = bj::parse(fleet.cli({"agents", "--json"})).as_array();
  REQUIRE(agents.size() == 2);
  for (const auto& a : agents) {
    CHECK(a.at("ready") == true);
    CHECK(a.at("accelerator") == (a.at("name") == "sim-1" ? "simulated" : "cpu"));
  }
  // The table's "trains on" column (cli/format_tables.cpp): the sim-1 row says simulated.
  const std::string table = fleet.cli({"agents"});
  const size_t at = table.find("sim-1 [sim]");
  REQUIRE(at != std::string::npos);
  CHECK(table.find("trains on") != std::string::npos);
  CHECK(table.substr(at, table.find('\n', at) - at).find("simulated") != std::string::npos);
}
