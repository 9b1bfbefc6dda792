// Issue 28 end to end: a campaign of named nvpmodel modes whose GPU masks differ, run by a real agent process on
// a fake AGX Orin tree (NVIDIA's p3701-0000 conf: MODE_30W boots with TPC_PG_MASK 240, MAXN runs on 0, MODE_15W
// on 248) through the real controller. The agent may reboot its board: it runs a fake nvpmodel (asks and records
// like NVIDIA's, the masks for the next boot taken from the board's own conf) and a fake reboot command; this
// harness plays the reboot: it stops the agent as systemd would, puts the recorded masks in the GPU's files (as
// nvpmodel.service does at boot) and starts the agent again.
#include <signal.h>

#include <fstream>
#include <sstream>

#include "agent/device/nvpmodel.hpp"
#include "device/fake_board.hpp"
#include "support/dataset_gen.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;
namespace fs = std::filesystem;
using device::testing::FakeBoard;
using device::testing::FakeKind;

namespace {

size_t lines_in(const fs::path& p) {
  const std::string text = read_file(p);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

void write_script(const fs::path& p, const std::string& text) {
  write_file(p, text);
  fs::permissions(p, fs::perms::owner_all);
}

// A fake board, its fake nvpmodel and reboot commands, and the agent process serving it.
struct RebootRig {
  explicit RebootRig(Fleet& f) : fleet(f), fb(FakeKind::kAgxOrinR35) {
    write_idx_dataset(data.string(), 256, false);
    auto conf = device::read_nvpmodel_conf(fb.root());
    REQUIRE_MESSAGE(conf.is_ok(), conf.status().to_string());
    auto booted = device::read_board_gating(fb.root(), &conf.value(), 35);
    REQUIRE_MESSAGE(booted.is_ok(), booted.status().to_string());
    files = booted.value();
    // The fake nvpmodel: `-m ID`, the prompt answered YES, the mode's masks (from the board's conf) recorded for
    // the next boot, the status file naming the mode; anything else refused as NVIDIA's is.
    std::string cases;
    for (const auto& m : conf->modes) {
      auto g = m.gating(conf->source);
      REQUIRE(g.is_ok());
      cases += "  " + std::to_string(m.id) + ") masks='" + std::to_string(g->tpc_pg_mask.value_or(-1)) + " " +
               std::to_string(g->fbp_pg_mask.value_or(-1)) + "' ;;\n";
    }
    write_script(nvpmodel, "#!/bin/sh\n[ \"$1\" = -m ] || { echo 'usage: nvpmodel -m ID' >&2; exit 2; }\n"
                           "case \"$2\" in\n" + cases + "  *) echo \"NVPM ERROR: no mode $2\" >&2; exit 1 ;;\nesac\n"
                           "echo \"NVPM WARN: Reboot required for changing to this power mode: $2\"\n"
                           "echo 'DO YOU WANT TO REBOOT NOW? enter YES/yes to confirm:'\nread answer\n"
                           "case \"$answer\" in YES|yes) ;; *) echo 'NVPM ERROR: bad input!' >&2; exit 1 ;; esac\n"
                           "printf 'pmode:%04d fmode:quiet\\n' \"$2\" > '" + fb.path("/var/lib/nvpmodel/status").string() +
                           "'\necho \"$masks\" > '" + next_boot.string() + "'\necho \"$2\" >> '" + calls.string() + "'\n");
    write_script(reboot, "#!/bin/sh\necho reboot >> '" + reboots.string() + "'\n");
  }

  // The agent as its systemd unit starts it (`extra`: more flags).
  void start_agent(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--controller", "ws://127.0.0.1:" + std::to_string(fleet.port()), "--name", "orin-1",
                                     "--backend", "jetson", "--root", fb.root().string(), "--state-dir",
                                     fb.state_dir().string(), "--journal-dir", journal.string(), "--idle-restore-s", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    agent = std::make_unique<Process>(kBin + "/jetsweep-agent", args,
                                      (fleet.dir() / ("orin-1.boot" + std::to_string(boots++) + ".log")).string());
  }
  // systemd stops the agent for the reboot; the board boots with the masks nvpmodel recorded.
  void reboot_board() {
    agent->signal(SIGTERM);
    REQUIRE_MESSAGE(agent->wait(60s) == 0, agent->log());
    std::istringstream masks(read_file(next_boot));
    int64_t tpc = -1, fbp = -1;
    masks >> tpc >> fbp;
    if (tpc >= 0) write_file(files.tpc_source, std::to_string(tpc) + "\n");
    if (fbp >= 0) write_file(files.fbp_source, std::to_string(fbp) + "\n");
    fs::remove(next_boot);
  }
  std::string logs() const {
    std::string all = fleet.logs();
    for (int b = 0; b < boots; ++b) {
      const auto p = fleet.dir() / ("orin-1.boot" + std::to_string(b) + ".log");
      all += "--- " + p.string() + "\n" + read_file(p);
    }
    return all;
  }

  Fleet& fleet;
  FakeBoard fb;
  device::BoardGating files;
  fs::path data = fleet.dir() / "mnist";
  fs::path journal = fleet.dir() / "journal-orin-1";
  fs::path nvpmodel = fleet.dir() / "nvpmodel", reboot = fleet.dir() / "reboot";
  fs::path next_boot = fleet.dir() / "next_boot_masks", calls = fleet.dir() / "nvpmodel_calls";
  fs::path reboots = fleet.dir() / "reboots_requested";
  std::unique_ptr<Process> agent;
  int boots = 0;
};

std::string orin_campaign(const std::string& name, const std::string& data, const std::string& modes, int reps) {
  return "campaign: " + name + "\nmatrix:\n  device: agx-orin\n  model: lenet5\n  dataset: mnist\n  data: " + data +
         "\n  accelerator: cpu\n  batch_size: 16\n  workers: 0\n  epochs: 1\n  max_minibatches: 4\n  sample_hz: 10\n"
         "  power_mode: " + modes + "\nrepetitions: " + std::to_string(reps) + "\n";
}

}  // namespace

TEST_CASE("a campaign of modes with three GPU gatings finishes in the fewest reboots (two), nothing lost or doubled") {
  TestDatabase db;
  Fleet fleet(db);
  RebootRig rig(fleet);
  const std::vector<std::string> may_reboot = {"--allow-reboot", "--nvpmodel-command", rig.nvpmodel.string(),
                                               "--reboot-command", rig.reboot.string(), "--reboot-timeout-s", "120"};
  rig.start_agent(may_reboot);
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), rig.logs());
  const auto file = fleet.dir() / "gating.yaml";
  write_file(file, orin_campaign("gating", rig.data.string(), "[MAXN, MODE_15W, MODE_30W]", 2));
  const int64_t campaign = submit(fleet, file);

  // The harness reboots the board whenever the agent asks, until the campaign is done.
  size_t reboots = 0;
  while (!fleet.finished(campaign)) {
    REQUIRE_MESSAGE(wait_until(240s, [&] { return fleet.finished(campaign) || lines_in(rig.reboots) > reboots; }),
                    rig.logs());
    if (lines_in(rig.reboots) > reboots) {
      ++reboots;
      REQUIRE_MESSAGE(reboots <= 2, rig.logs());
      rig.reboot_board();
      rig.start_agent(may_reboot);
    }
  }
  // Booted in MODE_30W (240): its runs first, then one reboot into MAXN (0) and one into MODE_15W (248).
  CHECK(reboots == 2);
  CHECK(read_file(rig.calls) == "0\n1\n");

  auto r = cli::http_request(fleet.url(), "GET", "/api/campaigns/" + std::to_string(campaign) + "/report");
  REQUIRE(r);
  REQUIRE(r->status == 200);
  const bj::object report = bj::parse(r->body).as_object();
  const auto& runs = report.at("runs").as_array();
  REQUIRE(runs.size() == 6);
  const std::map<std::string, int64_t> masks = {{"MAXN", 0}, {"MODE_15W", 248}, {"MODE_30W", 240}};
  int64_t reboots_reported = 0;
  for (const auto& v : runs) {
    const auto& run = v.as_object();
    const std::string mode(run.at("config").at("power_mode").at("name").as_string());
    CAPTURE(mode);
    CHECK(run.at("status").as_string() == "done");
    CHECK(run.at("attempts").as_int64() == 1);   // held while away: never requeued
    reboots_reported += run.at("reboots").as_int64();
    // The masks read back from the board: the mode's own, so the run is labelled with it.
    const auto& applied = run.at("applied").as_object();
    CHECK(applied.at("tpc_pg_mask").as_int64() == masks.at(mode));
    CHECK(applied.at("mode_name").as_string() == mode);
    CHECK(run.at("epochs").as_array().size() == 1);
  }
  CHECK(reboots_reported == 2);
  // Nothing doubled: one epoch row and four minibatch rows per run.
  CHECK(db.count("SELECT count(*) FROM epochs") == 6);
  CHECK(db.count("SELECT count(*) FROM board_reboots") == 2);
  CHECK_FALSE(fs::exists(rig.journal / "reboot_pending.json"));
  rig.agent->signal(SIGTERM);
  CHECK(rig.agent->wait(60s) == 0);
}

TEST_CASE("a mode that needs a reboot waits without permission, refused by validate; fails naming a failing reboot") {
  TestDatabase db;
  Fleet fleet(db);
  RebootRig rig(fleet);
  rig.start_agent({});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), rig.logs());
  const auto file = fleet.dir() / "maxn.yaml";
  write_file(file, orin_campaign("maxn", rig.data.string(), "MAXN", 1));
  // The board is known: validate --estimate refuses the mode, naming its masks, the board's and the way out.
  const std::string says = fleet.cli({"validate", "--estimate", file.string()}, 1);
  CHECK_MESSAGE(says.find("refused on the enrolled boards: agx-orin: 1 run(s) of nvpmodel mode MAXN (TPC_PG_MASK 0 in "
                          "NVIDIA's conf) cannot run: the 1 enrolled board(s) booted with other GPU masks (modes they run "
                          "as booted: orin-1: MODE_30W) and none may reboot") != std::string::npos, says);
  // Submitted anyway, the run waits for a board that can run it (never taken and failed), and status says why.
  const int64_t campaign = submit(fleet, file);
  const std::string why = "cannot run: 1 run needs nvpmodel mode MAXN; the enrolled boards of 'agx-orin' booted with "
                          "other GPU masks and no agent may reboot into it (start one with --allow-reboot";
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.cli({"status", std::to_string(campaign)}).find(why) != std::string::npos; }),
                  fleet.cli({"status", std::to_string(campaign)}));
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'queued' AND attempts = 0") == 1);
  CHECK(lines_in(rig.reboots) == 0);

  // Restarted with the permission, but the reboot command fails: the waiting run is taken and fails naming it.
  rig.agent->signal(SIGTERM);
  REQUIRE(rig.agent->wait(60s) == 0);
  rig.start_agent({"--allow-reboot", "--nvpmodel-command", rig.nvpmodel.string(), "--reboot-command", "false"});
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(campaign); }), rig.logs());
  auto r = cli::http_request(fleet.url(), "GET", "/api/campaigns/" + std::to_string(campaign) + "/report");
  REQUIRE(r);
  const bj::value report = bj::parse(r->body);
  const auto& run = report.at("runs").as_array().at(0).as_object();
  CHECK(run.at("status").as_string() == "failed");
  const std::string failed(run.at("error").as_string());
  CHECK_MESSAGE(failed.find("rebooting the board for nvpmodel mode MAXN failed: `false` exited 1") != std::string::npos,
                failed);
  CHECK_FALSE(fs::exists(rig.journal / "reboot_pending.json"));
  rig.agent->signal(SIGTERM);
  CHECK(rig.agent->wait(60s) == 0);
}

TEST_CASE("simulated boards follow the same rules: refused without permission, modelled reboots in the fewest") {
  TestDatabase db;
  Fleet fleet(db);
  const auto campaign_file = [&](const std::string& name, const std::string& modes, int reps) {
    const fs::path file = fleet.dir() / (name + ".yaml");
    write_file(file, "campaign: " + name + "\nmatrix:\n  device: agx-orin\n  model: resnet18\n  dataset: cifar10\n"
                     "  epochs: 1\n  max_minibatches: 20\n  power_mode: " + modes + "\nrepetitions: " +
                     std::to_string(reps) + "\n");
    return file;
  };
  // Without --allow-reboot: validate refuses the mode, and a submitted run waits, status naming the mode.
  auto& plain = fleet.add_agent("sim-plain", {"--sim", "agx-orin/plain", "--time-scale", "0"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const fs::path maxn_file = campaign_file("sim-maxn", "MAXN", 1);
  const std::string says = fleet.cli({"validate", "--estimate", maxn_file.string()}, 1);
  CHECK_MESSAGE(says.find("refused on the enrolled boards: agx-orin: 1 run(s) of nvpmodel mode MAXN (TPC_PG_MASK 0 in "
                          "NVIDIA's conf) cannot run: the 1 enrolled board(s) booted with other GPU masks (modes they run "
                          "as booted: sim-plain: MODE_30W) and none may reboot; start an agent with --allow-reboot") != std::string::npos, says);
  const int64_t waiting = submit(fleet, maxn_file);
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.status(waiting).at("unrunnable_runs").as_int64() == 1; }),
                  fleet.logs());
  plain.signal(SIGTERM);
  REQUIRE(plain.wait(60s) == 0);

  // With it: the waiting MAXN run after one modelled reboot (60 s at time scale 1), during which the agent is
  // stopped; started again, it finds the board rebooted, as a real one would be, and runs the run.
  auto& slow = fleet.add_agent("sim-orin", {"--sim", "agx-orin/1", "--time-scale", "1", "--allow-reboot"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return slow.log().find("rebooting into nvpmodel mode MAXN") != std::string::npos; }),
                  fleet.logs());
  slow.signal(SIGTERM);
  REQUIRE(slow.wait(60s) == 0);
  // Then three gatings, two repetitions, on that board (now in MAXN): MAXN's runs first, then one reboot into
  // each other mode.
  fleet.add_agent("sim-orin", {"--sim", "agx-orin/1", "--time-scale", "0.01", "--allow-reboot"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(waiting); }), fleet.logs());
  CHECK(fleet.status(waiting).at("done").as_int64() == 1);
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(waiting) +
                 " AND attempts = 1 AND (applied->>'tpc_pg_mask')::int = 0") == 1);
  const fs::path gating_file = campaign_file("sim-gating", "[MAXN, MODE_15W, MODE_30W]", 2);
  CHECK(fleet.cli({"validate", "--estimate", gating_file.string()}).find("refused") == std::string::npos);
  const int64_t campaign = submit(fleet, gating_file);
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(campaign); }), fleet.logs());
  auto r = cli::http_request(fleet.url(), "GET", "/api/campaigns/" + std::to_string(campaign) + "/report");
  REQUIRE((r && r->status == 200));
  const std::map<std::string, int64_t> masks = {{"MAXN", 0}, {"MODE_15W", 248}, {"MODE_30W", 240}};
  std::map<std::string, double> compute_s;
  int64_t reboots = 0;
  const bj::value report = bj::parse(r->body);
  for (const auto& v : report.at("runs").as_array()) {
    const auto& run = v.as_object();
    const std::string mode(run.at("config").at("power_mode").at("name").as_string());
    CAPTURE(mode);
    CHECK(run.at("status").as_string() == "done");
    CHECK(run.at("attempts").as_int64() == 1);
    CHECK(run.at("applied").at("tpc_pg_mask").as_int64() == masks.at(mode));
    reboots += run.at("reboots").as_int64();
    compute_s[mode] = run.at("epochs").as_array().at(0).at("compute_s").to_number<double>();
  }
  CHECK(reboots == 2);
  CHECK(db.count("SELECT count(*) FROM board_reboots") == 3);
  CHECK(db.count("SELECT count(*) FROM epochs") == 7);
  // ResNet-18 on 3 TPCs at 408 MHz is slower than on 4 at 612, which is slower than on 8 at MAXN's clock.
  CHECK(compute_s.at("MODE_15W") > compute_s.at("MODE_30W"));
  CHECK(compute_s.at("MODE_30W") > compute_s.at("MAXN"));
}

TEST_CASE("a board's own frequency tables: the controller checks its runs against them and generates its grids") {
  TestDatabase db;
  Fleet fleet(db);
  RebootRig rig(fleet);
  rig.start_agent({});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), rig.logs());
  const auto& spec = rig.fb.spec();
  const int64_t stored = db.count("SELECT jsonb_array_length(tables->'gpu_hz') FROM agents WHERE name = 'orin-1'");
  CHECK(stored == static_cast<int64_t>(spec.gpu_hz.size()));

  // A grid on the board by name, every 2nd value on 12 cores: drawn from the tables it read from its sysfs.
  const auto grid = fleet.dir() / "grid.yaml";
  write_file(grid, orin_campaign("grid", rig.data.string(), "{generate: grid, every: 2, cores: [12]}", 1));
  std::string text = read_file(grid);
  text.replace(text.find("device: agx-orin"), 16, "device: orin-1");
  write_file(grid, text);
  auto every_2nd = [](const std::vector<int64_t>& v) { return (v.size() + 1) / 2; };
  const size_t expected = every_2nd(spec.cpu_khz) * every_2nd(spec.gpu_hz) * every_2nd(spec.emc_hz);
  const std::string says = fleet.cli({"validate", "--estimate", grid.string()});
  CHECK_MESSAGE(says.find("the controller expanded it to " + std::to_string(expected) + " runs") != std::string::npos, says);
  CHECK_MESSAGE(says.find("power modes generated from orin-1: the tables orin-1 reported (board)") != std::string::npos, says);
  // Offline there is no board to take tables from: validate without --estimate says so (a board name, no class).
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"validate", grid.string()}, &out, &err) != 0);
  CHECK_MESSAGE(err.find("'orin-1' is neither a board class nor an enrolled board") != std::string::npos, err);

  // A GPU clock the board does not offer: refused by validate --estimate and by submit, at its place, naming the
  // board and its table; offline it passes (the papers' BSP is not the board's).
  const auto odd = fleet.dir() / "odd.yaml";
  write_file(odd, orin_campaign("odd", rig.data.string(), "{cores: 12, gpu_hz: 400000000}", 1));
  for (const std::vector<std::string> args : {std::vector<std::string>{"validate", "--estimate", odd.string()},
                                              std::vector<std::string>{"submit", odd.string()}}) {
    std::vector<std::string> full = {"--controller", fleet.url()};
    full.insert(full.end(), args.begin(), args.end());
    CHECK(run_command(kBin + "/jetsweep", full, &out, &err) != 0);
    CHECK_MESSAGE(err.find(odd.string() + ":13:15: power_mode.gpu_hz 400000000 is not in the GPU table (Hz) of every "
                           "board it may run on") != std::string::npos, err);
    CHECK_MESSAGE(err.find("orin-1's: " + std::to_string(spec.gpu_hz.front())) != std::string::npos, err);
  }
  CHECK(db.count("SELECT count(*) FROM campaigns") == 0);
  CHECK(run_command(kBin + "/jetsweep", {"validate", odd.string()}, &out, &err) == 0);
  rig.agent->signal(SIGTERM);
  CHECK(rig.agent->wait(60s) == 0);
}
