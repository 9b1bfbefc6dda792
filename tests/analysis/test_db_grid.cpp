// Analysis from PostgreSQL of campaigns whose runs differ in more than the power mode (db_fixture.hpp): the
// simulated "grid" of two modes x two worker settings must come out as four groups, pooled or selected
// only when asked, and exported with every axis; the "gpu" campaign's GPU, CPU, paper and pipelined runs are
// never pooled either. Fails (does not skip) when JETSWEEP_TEST_DSN is unset.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "db_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep::testing;
namespace bj = boost::json;

TEST_CASE_FIXTURE(GridCampaign,
                  "db grid: two modes x two worker settings are four variability groups, never pooled") {
  const bj::object vo = json_of(analyze({"variability", "--db", dsn(), "--campaign", "grid", "--json"}));
  const auto& groups = vo.at("groups").as_array();
  REQUIRE(groups.size() == 4);
  std::set<std::string> labels;
  for (const auto& gv : groups) {
    const auto& g = gv.as_object();
    CHECK(g.at("simulated").as_bool());
    CHECK(g.at("instances").as_array().size() == 2);
    CHECK(g.at("time").as_object().at("n").to_number<int>() == 8);  // 2 instances x 2 repetitions x epochs 1, 2
    const auto& cfg = g.at("config").as_object();
    CHECK(cfg.at("batch_size").to_number<int>() == 16);
    const int workers = cfg.at("workers").to_number<int>();
    CHECK((workers == 2 || workers == 4));
    const std::string mode(cfg.at("mode").as_string());
    CHECK((mode == "8c/2265.6/1377/2133" || mode == "4c/1190.4/675.75/1331.2"));  // named and partial: applied state
    // Epoch time within a group spreads only by the instances' 1% and the repetitions: no pooled modes or workers.
    CHECK(g.at("time").as_object().at("max_deviation_pct").to_number<double>() < 1.0);
    const std::string label(g.at("config_label").as_string());
    CHECK(label.find(mode) == 0);
    CHECK(label.find(" w" + std::to_string(workers)) != std::string::npos);
    labels.insert(label);
  }
  CHECK(labels.size() == 4);
  // Software: simulated instances are not compared (their kernel strings differ by instance name).
  for (const auto& cls : vo.at("classes").as_array()) {
    const auto& co = cls.as_object();
    CHECK_FALSE(co.at("software_differs").as_bool());
    CHECK(co.at("simulated_instances").as_array().size() == 2);
  }
  auto text = analyze({"variability", "--db", dsn(), "--campaign", "grid"});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("agx-xavier  lenet5/mnist  8c/2265.6/1377/2133 w2 (simulated)") != std::string::npos);
  CHECK(text.out.find("agx-xavier  lenet5/mnist  4c/1190.4/675.75/1331.2 w4 (simulated)") != std::string::npos);
  CHECK(text.out.find("SOFTWARE DIFFERS") == std::string::npos);
}

TEST_CASE_FIXTURE(GridCampaign,
                  "db grid: --pool-over pools and --where selects explicitly, naming unknown axes and values") {
  auto pooled = analyze({"variability", "--db", dsn(), "--campaign", "grid", "--pool-over", "workers", "--json"});
  CHECK(groups_of(pooled) == 2);
  CHECK(bj::parse(pooled.out).as_object().at("pooled_over").as_array().size() == 1);
  auto pooled_text = analyze({"variability", "--db", dsn(), "--pool-over", "workers"});
  REQUIRE(pooled_text.rc == 0);
  CHECK(pooled_text.out.find("POOLED over workers") != std::string::npos);
  CHECK(groups_of(analyze({"variability", "--db", dsn(), "--where", "workers=4", "--json"})) == 2);
  CHECK(groups_of(analyze({"variability", "--db", dsn(), "--where", "workers=4,mode=MAXN", "--json"})) == 1);
  auto unknown_axis = analyze({"variability", "--db", dsn(), "--where", "colour=red"});
  CHECK(unknown_axis.rc == 2);
  CHECK(unknown_axis.err.find("--where: unknown axis 'colour'") != std::string::npos);
  auto no_match = analyze({"variability", "--db", dsn(), "--where", "workers=7"});
  CHECK(no_match.rc == 2);
  CHECK(no_match.err.find("workers=7 (values: 2, 4)") != std::string::npos);
}

TEST_CASE_FIXTURE(GridCampaign, "db grid: pareto and optimize work across modes only, refusing two worker settings") {
  // Refused, naming both ways out.
  auto refused = analyze({"pareto", "--db", dsn(), "--workload", "lenet5"});
  CHECK(refused.rc == 2);
  CHECK(refused.err.find("2 configurations besides the power mode") != std::string::npos);
  CHECK(refused.err.find("w2") != std::string::npos);
  CHECK(refused.err.find("w4") != std::string::npos);
  CHECK(refused.err.find("--where workers=2") != std::string::npos);
  CHECK(refused.err.find("--pool-over workers") != std::string::npos);
  CHECK(analyze({"optimize", "--db", dsn(), "--workload", "lenet5", "--power-budget-w", "100"}).rc == 2);
  const bj::object co =
      json_of(analyze({"pareto", "--db", dsn(), "--workload", "lenet5", "--where", "workers=2", "--json"}));
  CHECK(co.at("modes").to_number<int>() == 2);
  CHECK(co.at("simulated").as_bool());
  CHECK(co.at("config").as_object().at("workers").to_number<int>() == 2);
  auto chosen_text = analyze({"pareto", "--db", dsn(), "--workload", "lenet5", "--where", "workers=2"});
  REQUIRE(chosen_text.rc == 0);
  CHECK(chosen_text.out.find("Pareto front of lenet5/mnist on agx-xavier w2 (simulated)") != std::string::npos);
  const bj::object opt = json_of(analyze({"optimize", "--db", dsn(), "--workload", "lenet5", "--pool-over", "workers",
                                          "--power-budget-w", "100", "--json"}));
  CHECK(opt.at("pooled_over").as_array()[0].as_string() == "workers");
}

TEST_CASE_FIXTURE(GridCampaign, "db grid: epochs form one group per configuration") {
  const bj::object eo = json_of(analyze({"epochs", "--db", dsn(), "--workload", "lenet5", "--json"}));
  CHECK(eo.at("epochs").as_array().size() == 48);
  CHECK(eo.at("groups").as_array().size() == 4);
  for (const auto& g : eo.at("groups").as_array()) CHECK(g.as_object().at("epochs_later").to_number<int>() == 8);
}

TEST_CASE_FIXTURE(GridCampaign,
                  "db grid: export --per-epoch fills every axis and per-epoch column, mode columns from the applied state") {
  const Run exported = export_corpus({"--db", dsn(), "--campaign", "grid", "--per-epoch"});
  REQUIRE(exported.rc == 0);
  const auto rows = csv_rows(exported.out);
  REQUIRE(rows.size() == 48);
  for (const auto& r : rows) {
    for (const char* col : {"cores", "cpu_mhz", "gpu_mhz", "emc_mhz", "pin_clocks", "fan", "workers", "prefetch",
                            "batch_size", "threads", "seed", "dataset", "storage", "repetition", "simulated", "run_id",
                            "epoch", "warmup", "e2e_s", "stall_s", "compute_s", "energy_j", "power_w", "power_coverage",
                            "throttled", "t_start_s", "t_end_s", "start_unix_s", "end_unix_s", "storage_device",
                            "page_cache_dropped", "reference_state", "mode"})
      CHECK_MESSAGE(!r.at(col).empty(), "column " << col << " empty in " << exported.out.substr(0, 600));
    CHECK(r.at("simulated") == "true");
    CHECK(r.at("dataset") == "mnist");
    CHECK(r.at("storage") == "/data/mnist");
    CHECK(r.at("batch_size") == "16");
    if (r.at("cores") == "8") {
      CHECK(r.at("mode_name") == "MAXN");
      CHECK(r.at("cpu_mhz") == "2265.6");
    } else {
      CHECK(r.at("cores") == "4");  // the partial mode: every clock from the applied state
      CHECK(r.at("gpu_mhz") == "675.75");
      CHECK(r.at("emc_mhz") == "1331.2");
    }
    CHECK(std::stod(r.at("start_unix_s")) == doctest::Approx(1700000000.25 + std::stod(r.at("t_start_s"))));
    CHECK(r.at("warmup") == (r.at("epoch") == "0" ? "true" : "false"));
  }
}

TEST_CASE_FIXTURE(GridCampaign,
                  "db grid: the per-mode export carries the axes, and the per-epoch file reads back into four groups") {
  const Run per_mode = export_corpus({"--db", dsn(), "--campaign", "grid"});
  REQUIRE(per_mode.rc == 0);
  const auto mrows = csv_rows(per_mode.out);
  REQUIRE(mrows.size() == 8);  // 2 instances x 2 modes x 2 worker settings (repetitions pooled)
  for (const auto& r : mrows) {
    CHECK(!r.at("workers").empty());
    CHECK(r.at("simulated") == "true");
    CHECK(r.at("runs") == "2");
  }
  const Run per_epoch = export_corpus({"--db", dsn(), "--campaign", "grid", "--per-epoch"});
  REQUIRE(per_epoch.rc == 0);
  const TempDir dir;
  const std::string grid_csv = (dir / "grid.csv").string();
  std::ofstream(grid_csv) << per_epoch.out;
  CHECK(groups_of(analyze({"variability", "--csv", grid_csv, "--json"})) == 4);
  CHECK(groups_of(analyze({"variability", "--csv", grid_csv, "--pool-over", "workers", "--json"})) == 2);
  const Run as_json = export_corpus({"--db", dsn(), "--campaign", "grid", "--per-epoch", "--json"});
  REQUIRE(as_json.rc == 0);
  const bj::value exported = bj::parse(as_json.out);
  const auto& first = exported.as_object().at("rows").as_array().at(0).as_object();
  CHECK(first.at("workers").to_number<int>() > 0);
  CHECK(first.at("simulated").as_bool());
}

TEST_CASE_FIXTURE(GpuCampaign,
                  "db: runs on the GPU and the CPU, and in paper and pipelined timing, are never pooled") {
  const bj::array groups =
      json_of(analyze({"variability", "--db", dsn(), "--campaign", "gpu", "--json"})).at("groups").as_array();
  REQUIRE(groups.size() == 3);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& gv : groups) {
    const auto& cfg = gv.as_object().at("config").as_object();
    seen.emplace(std::string(cfg.at("compute").as_string()), std::string(cfg.at("timing").as_string()));
    CHECK(gv.as_object().at("time").as_object().at("max_deviation_pct").to_number<double>() < 1.0);
  }
  CHECK(seen == std::set<std::pair<std::string, std::string>>{{"cuda", "paper"}, {"cuda", "pipelined"}, {"cpu", "paper"}});
  auto text = analyze({"variability", "--db", dsn(), "--campaign", "gpu"});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("pipelined-timing") != std::string::npos);
  CHECK(text.out.find("on-cpu") != std::string::npos);
  CHECK(groups_of(analyze({"variability", "--db", dsn(), "--where", "compute=cuda", "--json"})) == 2);
  CHECK(groups_of(analyze({"variability", "--db", dsn(), "--pool-over", "timing", "--json"})) == 2);
  // Export: the axes and the copy column per epoch (null on the CPU).
  const Run exported = export_corpus({"--db", dsn(), "--campaign", "gpu", "--per-epoch"});
  REQUIRE(exported.rc == 0);
  std::istringstream lines(exported.out);
  std::string header;
  std::getline(lines, header);
  CHECK(header.find(",compute_device,compute,timing,copy_s") != std::string::npos);
  int gpu_rows = 0, cpu_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(",cuda:0 (Orin),cuda,") != std::string::npos) {
      ++gpu_rows;
      CHECK(line.find(",0.25") != std::string::npos);
    } else if (line.find(",cpu,cpu,paper,") != std::string::npos) {
      ++cpu_rows;
    }
  }
  CHECK(gpu_rows == 6);
  CHECK(cpu_rows == 3);
}
