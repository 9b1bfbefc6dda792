#include <doctest/doctest.h>

#include <ctime>
#include <sstream>
#include <vector>

#include "cli/cli.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;

TEST_CASE("validate prints the run count; invalid input exits 2 with FILE:LINE:COL") {
  testing::TempDir dir;
  testing::write_file(dir / "ok.yaml", "campaign: c\nmatrix:\n  model: lenet5\n  dataset: mnist\n  batch_size: [1, 2, 3]\n");
  testing::write_file(dir / "bad.yaml", "campaign: c\nmatrix:\n  model: lenet5\n  dataset: mnist\n  workers: many\n");
  std::ostringstream out, err;
  CHECK(cli::run_cli({"validate", (dir / "ok.yaml").string()}, out, err, false) == 0);
  CHECK(out.str().find("expands to 3 runs") != std::string::npos);
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"validate", (dir / "bad.yaml").string()}, out2, err2, false) == 2);
  CHECK(err2.str() == (dir / "bad.yaml").string() + ":5:12: 'workers' expects an integer, got 'many'\n");
  std::ostringstream out3, err3;
  CHECK(cli::run_cli({"frob"}, out3, err3, false) == 2);
  CHECK(err3.str().find("jetsweep: unknown command 'frob'") != std::string::npos);
  CHECK(cli::run_cli({"status", "--controller", "http://127.0.0.1:1"}, out3, err3, false) == 1);
  CHECK(err3.str().find("not reachable") != std::string::npos);
}

TEST_CASE("usage errors exit 2 with the messages scripts know; --help exits 0") {
  std::ostringstream out, err;
  CHECK(cli::run_cli({}, out, err, false) == 2);
  CHECK(err.str().find("Subcommands:") != std::string::npos);
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"--controller"}, out2, err2, false) == 2);
  CHECK(err2.str() == "jetsweep: --controller: missing value\n");
  std::ostringstream out3, err3;
  CHECK(cli::run_cli({"report"}, out3, err3, false) == 2);
  CHECK(err3.str().rfind("jetsweep report: expected CAMPAIGN\n", 0) == 0);
  std::ostringstream out4, err4;
  CHECK(cli::run_cli({"submit", "--dry-run", "x", "f.yaml"}, out4, err4, false) == 2);
  CHECK(err4.str().rfind("jetsweep: --dry-run 'x': ", 0) == 0);
  std::ostringstream out5, err5;
  CHECK(cli::run_cli({"submit", "f.yaml", "--dry-run"}, out5, err5, false) == 2);
  CHECK(err5.str() == "jetsweep: --dry-run needs RUNS[:EPOCHS[:MINIBATCHES]]\n");
  std::ostringstream out6, err6;
  CHECK(cli::run_cli({"--help"}, out6, err6, false) == 0);
  CHECK(out6.str().find("cancel-run") != std::string::npos);
  std::ostringstream out7, err7;
  CHECK(cli::run_cli({"help"}, out7, err7, false) == 0);
  CHECK(out7.str() == out6.str());
  std::ostringstream out8, err8;
  CHECK(cli::run_cli({"submit", "--help"}, out8, err8, false) == 0);
  CHECK(out8.str().find("--dry-run") != std::string::npos);
  std::ostringstream out9, err9;
  CHECK(cli::run_cli({"status", "a", "b"}, out9, err9, false) == 2);
  CHECK(err9.str().rfind("jetsweep status: expected [CAMPAIGN]\n", 0) == 0);
}

TEST_CASE("delegated commands (analyze, export, archive, import, drop): listed by --help, handed every argument") {
  std::vector<std::string> seen;
  const std::vector<cli::DelegatedCommand> delegated = {
      {"analyze", "analyses from the database", [&](const std::vector<std::string>& args, std::ostream& out,
                                                    std::ostream&) {
         seen = args;
         out << "analysed\n";
         return 7;
       }}};
  std::ostringstream out, err;
  CHECK(cli::run_cli({"--help"}, out, err, false, delegated) == 0);
  CHECK(out.str().find("analyze") != std::string::npos);
  CHECK(out.str().find("analyses from the database") != std::string::npos);
  // Every argument after the command reaches it as given, its own --help, `--` and flags the client also has
  // included; its exit code is the CLI's.
  const std::vector<std::vector<std::string>> cases = {
      {"variability", "--db", "dbname=x", "--json"}, {"--help"}, {"--controller", "c", "-h"}, {"status"}, {},
      {"--", "x"}, {"--"}, {"pareto", "--", "--db", "x"}};
  for (const auto& args : cases) {
    std::vector<std::string> full = {"analyze"};
    full.insert(full.end(), args.begin(), args.end());
    std::ostringstream o, e;
    seen = {"not called"};
    CHECK(cli::run_cli(full, o, e, false, delegated) == 7);
    CHECK(seen == args);
    CHECK(o.str() == "analysed\n");
  }
  // A client flag before the command is refused, not silently dropped; --help there is handed on.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--controller", "http://x:1"}, {"--token-file", "/nonexistent"}, {"--ca=f"}}) {
    std::vector<std::string> full = flags;
    full.insert(full.end(), {"analyze", "pareto"});
    std::ostringstream o, e;
    seen = {"not called"};
    CHECK(cli::run_cli(full, o, e, false, delegated) == 2);
    CHECK(seen == std::vector<std::string>{"not called"});
    CHECK(e.str().find("analyze works on the database itself") != std::string::npos);
  }
  std::ostringstream o2, e2;
  CHECK(cli::run_cli({"--help", "analyze"}, o2, e2, false, delegated) == 7);
  CHECK(seen == std::vector<std::string>{"--help"});
  std::ostringstream o3, e3;
  CHECK(cli::run_cli({"--frob", "analyze", "pareto"}, o3, e3, false, delegated) == 2);
  CHECK(e3.str() == "jetsweep: unknown flag '--frob'\n");
  // Without the delegation, the name is unknown.
  std::ostringstream o4, e4;
  CHECK(cli::run_cli({"analyze", "pareto"}, o4, e4, false) == 2);
  CHECK(e4.str().find("unknown command 'analyze'") != std::string::npos);
}

namespace {
api::ReportEpoch epoch(int64_t n, double e2e, double stall, double compute) {
  api::ReportEpoch e;
  e.epoch = n;
  e.e2e_s = e2e;
  e.stall_s = stall;
  e.compute_s = compute;
  e.minibatches = 3750;
  return e;
}
}  // namespace

TEST_CASE("report text: epoch 0 apart from the mean of epochs 1+, no invented energy") {
  api::CampaignReport report;
  report.campaign = {1, "demo", "", "d.yaml", "now"};
  api::ReportRun run;
  run.run_id = 7;
  run.status = "done";
  run.agent = "a1";
  run.config = boost::json::parse(R"({"model":"lenet5","dataset":"mnist","batch_size":16,"workers":2,"prefetch":2,
                                      "epochs":3})").as_object();
  run.epochs = {epoch(0, 10, 2, 7), epoch(1, 8, 1, 6), epoch(2, 6, 1, 4)};
  run.summary = api::summarize_epochs(run.epochs);
  run.epochs.clear();   // the text report asks for ?epochs=none: it prints the summary
  report.epochs_included = false;
  report.runs.push_back(run);
  auto text = cli::format_report(report);
  CHECK(text.find("no power sensor") != std::string::npos);
  CHECK(text.find("10.000") != std::string::npos);  // epoch 0 e2e
  CHECK(text.find("7.000") != std::string::npos);   // mean e2e of epochs 1-2
  CHECK(text.find("5.000") != std::string::npos);   // mean compute of epochs 1-2
  CHECK(text.find("3750") != std::string::npos);
  CHECK(text.find("SIMULATED") == std::string::npos);
  report.simulated_runs = 1;
  report.runs[0].simulated = true;
  auto sim_text = cli::format_report(report);
  CHECK(sim_text.find("SIMULATED: 1 runs come from simulated boards") != std::string::npos);
  CHECK(sim_text.find("done*") != std::string::npos);
  // Boards that trained on different bytes are flagged (the fingerprints their agents recorded).
  CHECK(sim_text.find("DATA:") == std::string::npos);   // no run recorded any
  report.runs[0].workload = boost::json::object{{"dataset_fingerprint", std::string(64, 'a')}};
  report.runs.push_back(report.runs[0]);
  report.runs[1].agent = "a2";
  report.runs[1].workload = boost::json::object{{"dataset_fingerprint", std::string(64, 'b')}};
  const auto differs = cli::format_report(report);
  CHECK(differs.find("DATA: dataset 'mnist': its runs trained on different data (2 fingerprints): aaaaaaaaaaaa on a1 "
                     "(1 run); bbbbbbbbbbbb on a2 (1 run)\n") != std::string::npos);
}

TEST_CASE("status line with a progress bar") {
  api::CampaignStatus s;
  s.campaign_id = 3;
  s.name = "x";
  s.runs = 4;
  s.done = 1;
  s.running = 1;
  s.queued = 2;
  s.epochs_total = 8;
  s.epochs_done = 4;
  s.state = "active";
  CHECK(cli::format_status(s, true).find("[###############...............] 50%") != std::string::npos);
  CHECK(cli::format_status(s, false).find('[') == std::string::npos);
  s.state = "paused";
  s.paused = true;
  CHECK(cli::format_status(s, false).find("[paused]; ETA paused") != std::string::npos);
}

TEST_CASE("the API token from --token-file; https:// with --ca; bad combinations are usage errors") {
  testing::TempDir dir;
  testing::write_file(dir / "token", "t0k\n");
  testing::write_file(dir / "empty", "");
  const std::string token = (dir / "token").string();
  std::ostringstream out, err;
  CHECK(cli::run_cli({"--token", "x", "--token-file", token, "status"}, out, err, false) == 2);
  CHECK(err.str() == "jetsweep: --token and --token-file exclude each other; give one\n");
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"--token-file", (dir / "empty").string(), "status"}, out2, err2, false) == 2);
  CHECK(err2.str() == "jetsweep: --token-file " + (dir / "empty").string() + ": the file is empty\n");
  // https:// is accepted; a CA file that does not exist is named (nothing listens on port 1 anyway).
  std::ostringstream out3, err3;
  CHECK(cli::run_cli({"--controller", "https://127.0.0.1:1", "--ca", (dir / "no-ca.pem").string(), "--token-file", token,
                      "status"},
                     out3, err3, false) == 1);
  CHECK(err3.str().find("--ca " + (dir / "no-ca.pem").string()) != std::string::npos);
  std::ostringstream out4, err4;
  CHECK(cli::run_cli({"--controller", "https://127.0.0.1:1", "status"}, out4, err4, false) == 1);
  CHECK(err4.str().find("not reachable") != std::string::npos);
  std::ostringstream out5, err5;
  CHECK(cli::run_cli({"--controller", "ftp://h:1", "status"}, out5, err5, false) == 2);
  CHECK(err5.str().find("must start with http:// or https://") != std::string::npos);
}

namespace {
// 2024-06-04 12:00:00 local time (the ETA is printed in local wall time).
std::time_t noon() {
  std::tm tm{};
  tm.tm_year = 124;
  tm.tm_mon = 5;
  tm.tm_mday = 4;
  tm.tm_hour = 12;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// The column at which `word` starts in each line of `text` that contains it.
std::vector<size_t> columns_of(const std::string& text, const std::string& word) {
  std::vector<size_t> cols;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (auto at = line.find(word); at != std::string::npos) cols.push_back(at);
  return cols;
}
}  // namespace

TEST_CASE("the ETA in wall time: time of day and what is left; another day names the day") {
  CHECK(cli::format_eta(3900, noon()) == "13:05 (in 1 h 5 min)");
  CHECK(cli::format_eta(40, noon()) == "12:00 (in 40 s)");
  CHECK(cli::format_eta(86400 + 7200, noon()) == "Wed 05 Jun 14:00 (in 1 d 2 h)");
  api::CampaignStatus s;
  s.campaign_id = 3;
  s.name = "x";
  s.runs = 2;
  s.queued = 2;
  s.epochs_total = 4;
  s.state = "active";
  CHECK(cli::format_status(s, false, noon()).find("; time left known after the first measured epoch") != std::string::npos);
  s.eta_s = 600;
  CHECK(cli::format_status(s, false, noon()).find("; ETA 12:10 (in 10 min)") != std::string::npos);
}

TEST_CASE("campaign list and agents: a header, aligned columns, an empty-fleet message, simulated marked") {
  api::CampaignStatus a, b;
  a.campaign_id = 3;
  a.name = "short";
  a.state = "active";
  a.runs = 4;
  a.done = 4;
  a.finished = true;
  a.epochs_total = a.epochs_done = 8;
  b.campaign_id = 12;
  b.name = "a-much-longer-name";
  b.state = "paused";
  b.paused = true;
  b.runs = 100;
  b.queued = 90;
  b.done = 10;
  b.epochs_total = 200;
  b.epochs_done = 20;
  b.unrunnable = {{5, "5 runs need a nano: none enrolled"}};
  const std::string list = cli::format_campaigns({a, b}, noon());
  CHECK(list.rfind("id  name", 0) == 0);
  CHECK(columns_of(list, "state").size() == 1);
  CHECK(columns_of(list, "finished") == columns_of(list, "paused"));   // the state column lines up
  CHECK(list.find("    cannot run: 5 runs need a nano") != std::string::npos);
  CHECK(list.find(" 10%") != std::string::npos);
  CHECK(cli::format_campaigns({}, noon()).find("no campaigns") != std::string::npos);

  const std::string empty = cli::format_agents({});
  CHECK(empty.rfind("id  name  class  state", 0) == 0);
  CHECK(empty.find("no agents have registered") != std::string::npos);
  api::AgentInfo real, sim;
  real.agent_id = 1;
  real.name = "orin-lab-7";
  real.device_class = "agx-orin";
  real.backend = "jetson";
  real.connected = true;
  real.current_run = 42;
  sim.agent_id = 2;
  sim.name = "n";
  sim.device_class = "nano";
  sim.backend = "sim";
  sim.not_ready = {"dataset: /data missing"};
  const std::string fleet = cli::format_agents({real, sim});
  CHECK(fleet.find("n [sim]") != std::string::npos);
  CHECK(fleet.find("[sim] = a simulated board") != std::string::npos);
  CHECK(fleet.find("    NOT READY: dataset: /data missing") != std::string::npos);
  CHECK(columns_of(fleet, "agx-orin") == columns_of(fleet, "nano "));
  CHECK(columns_of(fleet, "busy") == columns_of(fleet, "offline"));
  CHECK(fleet.find("orin-lab-7 [sim]") == std::string::npos);
}

TEST_CASE("compare table: matched configurations side by side with deltas; unmatched listed; simulated marked") {
  api::CampaignComparison c;
  c.a.campaign = {1, "before", "", "a.yaml", "2024-06-01"};
  c.b.campaign = {6, "after", "", "b.yaml", "2024-06-02"};
  c.a.runs = 2;
  c.b.runs = 2;
  c.b.simulated_runs = 1;
  c.b.power_sensor = c.a.power_sensor = true;
  api::ComparedConfig m;
  m.label = "agx-orin lenet5/mnist batch_size=16";
  m.a.runs = m.b.runs = 1;
  m.a.mean_epoch_s = 12.0;
  m.b.mean_epoch_s = 9.0;
  m.a.mean_power_w = 10;
  m.b.mean_power_w = 15;
  m.mean_epoch_s = api::figure_delta(m.a.mean_epoch_s, m.b.mean_epoch_s);
  m.mean_power_w = api::figure_delta(m.a.mean_power_w, m.b.mean_power_w);
  c.configurations.push_back(m);
  api::UnmatchedConfig only;
  only.label = "nano lenet5/mnist batch_size=16";
  only.figures.runs = 1;
  only.figures.simulated = true;
  only.figures.mean_epoch_s = 30;
  c.only_b.push_back(only);
  const std::string text = cli::format_comparison(c);
  CHECK(text.find("A: campaign 1 (before") != std::string::npos);
  CHECK(text.find("B: campaign 6 (after, 2024-06-02), 2 runs, SIMULATED: 1") != std::string::npos);
  CHECK(text.find("epoch 0 is the warm-up, excluded") != std::string::npos);
  CHECK(text.find("12.000") != std::string::npos);
  CHECK(text.find("-3.000") != std::string::npos);
  CHECK(text.find("-25.0%") != std::string::npos);
  CHECK(text.find("+50.0%") != std::string::npos);
  CHECK(text.find("only in B (1):") != std::string::npos);
  CHECK(text.find("1*") != std::string::npos);
  CHECK(text.find("* = simulated") != std::string::npos);
  // The header's right-aligned columns end where the row's values end.
  std::istringstream in(text);
  std::string line, header, row;
  while (std::getline(in, line)) {
    if (line.rfind("configuration", 0) == 0 && header.empty()) header = line;
    else if (line.rfind("agx-orin", 0) == 0) row = line;
  }
  REQUIRE(!header.empty());
  CHECK(header.find("epoch s A") + 9 == row.find("12.000") + 6);
}

TEST_CASE("watch: a frame with bar, counts and wall-time ETA; a plain line per change") {
  api::CampaignStatus s;
  s.campaign_id = 5;
  s.name = "sweep";
  s.state = "active";
  s.runs = 4;
  s.done = 1;
  s.running = 1;
  s.queued = 2;
  s.epochs_total = 8;
  s.epochs_done = 4;
  s.eta_s = 3900;
  const std::string frame = cli::watch_frame(s, noon());
  CHECK(frame.rfind("campaign 5 (sweep)  active  at 12:00:00\n", 0) == 0);
  CHECK(frame.find("[###############...............] 50%  epochs 4/8\n") != std::string::npos);
  CHECK(frame.find("runs 4: 1 done, 1 running, 0 assigned, 2 queued, 0 failed\n") != std::string::npos);
  CHECK(frame.find("ETA 13:05 (in 1 h 5 min)\n") != std::string::npos);
  const std::string line = cli::watch_line(s, noon());
  CHECK(line.rfind("12:00:00 campaign 5 (sweep): 4 runs:", 0) == 0);
  CHECK(line.find('\x1b') == std::string::npos);
  s.finished = true;
  CHECK(cli::watch_frame(s, noon()).find("finished") != std::string::npos);
}

TEST_CASE("compare and watch: usage errors name what they expect") {
  std::ostringstream out, err;
  CHECK(cli::run_cli({"compare", "1"}, out, err, false) == 2);
  CHECK(err.str().rfind("jetsweep compare: expected CAMPAIGN_A CAMPAIGN_B\n", 0) == 0);
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"watch", "--interval", "0"}, out2, err2, false) == 2);
  CHECK(err2.str().find("--interval") != std::string::npos);
  std::ostringstream out3, err3;
  CHECK(cli::run_cli({"watch", "1", "--controller", "http://127.0.0.1:1"}, out3, err3, false) == 1);
  CHECK(err3.str().find("not reachable") != std::string::npos);
}
