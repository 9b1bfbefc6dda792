#include <doctest/doctest.h>

#include <sstream>

#include "controller/cli/cli.hpp"
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
  CHECK(cli::run_cli({"status", "--controller", "http://127.0.0.1:1"}, out3, err3, false) == 1);
  CHECK(err3.str().find("not reachable") != std::string::npos);
}

TEST_CASE("report text: epoch 0 apart from the mean of epochs 1+, no invented energy") {
  auto report = boost::json::parse(R"({"campaign":{"id":1,"name":"demo","source_file":"d.yaml","created_at":"now"},
    "power_sensor":false,
    "runs":[{"run_id":7,"status":"done","agent":"a1","error":"",
             "config":{"model":"lenet5","dataset":"mnist","batch_size":16,"workers":2,"prefetch":2,"epochs":3},
             "epochs":[{"epoch":0,"e2e_s":10,"stall_s":2,"compute_s":7,"minibatches":3750,"energy_j":null},
                       {"epoch":1,"e2e_s":8,"stall_s":1,"compute_s":6,"minibatches":3750,"energy_j":null},
                       {"epoch":2,"e2e_s":6,"stall_s":1,"compute_s":4,"minibatches":3750,"energy_j":null}]}]})")
                    .as_object();
  auto text = cli::format_report(report);
  CHECK(text.find("no power sensor") != std::string::npos);
  CHECK(text.find("10.000") != std::string::npos);  // epoch 0 e2e
  CHECK(text.find("7.000") != std::string::npos);   // mean e2e of epochs 1-2
  CHECK(text.find("5.000") != std::string::npos);   // mean compute of epochs 1-2
  CHECK(text.find("3750") != std::string::npos);
  CHECK(text.find("SIMULATED") == std::string::npos);
  report["simulated_runs"] = 1;
  report["runs"].as_array()[0].as_object()["simulated"] = true;
  auto sim_text = cli::format_report(report);
  CHECK(sim_text.find("SIMULATED: 1 runs come from simulated boards") != std::string::npos);
  CHECK(sim_text.find("done*") != std::string::npos);
}

TEST_CASE("status line with a progress bar") {
  auto s = boost::json::parse(R"({"campaign_id":3,"name":"x","runs":4,"done":1,"running":1,"assigned":0,"queued":2,
    "failed":0,"epochs_total":8,"epochs_done":4})").as_object();
  CHECK(cli::format_status(s, true).find("[###############...............] 50%") != std::string::npos);
  CHECK(cli::format_status(s, false).find('[') == std::string::npos);
}
