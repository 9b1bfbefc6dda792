#include <doctest/doctest.h>

#include <sstream>

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
