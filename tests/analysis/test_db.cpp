// Analysis from PostgreSQL on the "sweep" campaign (db_fixture.hpp): the views and corpus loading, and every
// command with --db: two board classes and three instances, plots, and the CSV export read back.
// Fails (does not skip) when JETSWEEP_TEST_DSN is unset.
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <pqxx/pqxx>

#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"
#include "db_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;
using namespace jetsweep::testing;
namespace bj = boost::json;

TEST_CASE_FIXTURE(SweepCampaign, "db: views and corpus loading") {
  auto c = load_corpus_from_db(dsn(), {});
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  CHECK(c->epoch_times);
  CHECK(c->epochs.size() == (36 + 4 + 1) * 4);
  // Mode profiles: one per (instance, workload, mode): 36 + 4 + 1.
  REQUIRE(c->rows.size() == 41);
  const ModeRecord* nx = nullptr;
  for (const auto& r : c->rows)
    if (r.device == "xavier-nx") nx = &r;
  REQUIRE(nx != nullptr);
  CHECK(nx->mode_name == "15W");
  CHECK_FALSE(nx->mode.explicit_settings());
  CHECK(nx->minibatch_ms == doctest::Approx(10.0));  // compute + stall of the minibatch rows
  CHECK_FALSE(nx->power_mw.has_value());             // no epoch power: never the run-wide sample mean (sql/012)
  CHECK(nx->epochs == 3);                            // epochs 1+
  CHECK(nx->simulated);
  CHECK(nx->axes.at("mode") == "15W");               // no applied state recorded: the requested name
  for (const auto& r : c->rows) {
    if (r.instance != "orin-1" || r.workload != "mobilenet") continue;
    const double expect = truth_ms(1, r.mode.cores, r.mode.cpu_mhz, r.mode.gpu_mhz, r.mode.emc_mhz) * 1.002;  // mean of 1.001, 1.002, 1.003
    CHECK(r.minibatch_ms == doctest::Approx(expect).epsilon(1e-6));  // epoch 0 (x1.5) left out
    CHECK(r.epoch_minibatch_ms.size() == 3);
    CHECK(*r.power_mw / 1000 == doctest::Approx(truth_w(r.mode.cores, r.mode.cpu_mhz, r.mode.gpu_mhz, r.mode.emc_mhz)));
    CHECK_FALSE(r.simulated);
    CHECK(r.axes.at("mode") == r.mode.label());
    CHECK(r.axes.at("pin_clocks") == "false");
    CHECK(r.axes.at("threads") == "1");
  }
  auto missing = load_corpus_from_db(dsn(), {"nope"});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("--campaign") == 0);
}

TEST_CASE_FIXTURE(SweepCampaign, "db: every command works on the campaign") {
  const bj::object po = json_of(analyze({"pareto", "--db", dsn(), "--workload", "resnet18", "--json"}));
  CHECK(po.at("modes").to_number<int>() == 12);

  const bj::object vo = json_of(analyze({"variability", "--db", dsn(), "--json"}));
  bool orin_flagged = false;
  for (const auto& cls : vo.at("classes").as_array())
    if (cls.as_object().at("device").as_string() == "agx-orin") orin_flagged = cls.as_object().at("software_differs").as_bool();
  CHECK(orin_flagged);
  // resnet18 in the first mode ran on both Orins: instance medians 1.002 and 1.02 of the truth.
  bool found_pair = false;
  for (const auto& g : vo.at("groups").as_array()) {
    const auto& go = g.as_object();
    if (go.at("instances").as_array().size() == 2) {
      found_pair = true;
      CHECK(go.at("instance_median_spread_pct").to_number<double>() == doctest::Approx(100 * 0.009 / 1.011).epsilon(1e-4));
    }
  }
  CHECK(found_pair);

  const bj::object lo = json_of(analyze({"predict", "--db", dsn(), "--method", "linear", "--target", "lenet5@agx-orin",
                                         "--reference", "resnet18,mobilenet", "--features", "inverse", "--train-modes",
                                         "6", "--json"}));
  CHECK(lo.at("held_out_modes").to_number<int>() == 6);
  CHECK(lo.at("time_mape_pct").to_number<double>() < 1.0);  // the truth is linear in 1/frequency

  CHECK(json_of(analyze({"optimize", "--db", dsn(), "--workload", "mobilenet", "--power-budget-w", "14", "--json"}))
            .at("chosen")
            .is_object());
  CHECK(json_of(analyze({"epochs", "--db", dsn(), "--workload", "lenet5@xavier-nx", "--json"}))
            .at("epochs")
            .as_array()
            .size() == 4);

  auto bad = analyze({"pareto", "--db", "host=127.0.0.1 port=1 dbname=x connect_timeout=2", "--workload", "x"});
  CHECK(bad.rc == 1);
}

TEST_CASE_FIXTURE(SweepCampaign, "db: epoch bars and variability violins are plotted from the database") {
  const TempDir dir;
  CHECK(analyze({"epochs", "--db", dsn(), "--workload", "resnet18", "--instance", "orin-2", "--plot",
                 dir.str() + "/bars.png"})
            .rc == 0);
  const auto violins = analyze({"variability", "--db", dsn(), "--workload", "resnet18", "--plot",
                                dir.str() + "/violin.svg", "--plot-energy", dir.str() + "/energy.png"});
  INFO(violins.err);
  CHECK(violins.rc == 0);
  CHECK(std::filesystem::file_size(dir / "bars.png") > 1000);
  CHECK(std::filesystem::file_size(dir / "violin.svg") > 1000);
}

TEST_CASE_FIXTURE(SweepCampaign, "db: the exported corpus and per-epoch rows read back as the database's") {
  const TempDir dir;
  const std::string sweep_csv = dir.str() + "/sweep.csv", epochs_csv = dir.str() + "/epochs.csv";
  REQUIRE(export_corpus({"--db", dsn(), "--campaign", "sweep", "--out", sweep_csv}).rc == 0);
  auto back = read_corpus_csv(sweep_csv);
  REQUIRE(back.is_ok());
  CHECK(back->rows.size() == 41);
  REQUIRE(export_corpus({"--db", dsn(), "--per-epoch", "--out", epochs_csv}).rc == 0);
  CHECK(json_of(analyze({"variability", "--csv", epochs_csv, "--json"})).at("warmup_epochs_excluded").to_number<int>() ==
        41);
  const bj::object from_db = json_of(analyze({"pareto", "--db", dsn(), "--workload", "resnet18", "--json"}));
  const bj::object from_csv = json_of(analyze({"pareto", "--csv", sweep_csv, "--workload", "resnet18", "--json"}));
  CHECK(from_csv.at("front") == from_db.at("front"));
}

TEST_CASE_FIXTURE(SweepCampaign, "db: variability flags boards whose runs read different bytes, from the db and its export") {
  const bj::object before = json_of(analyze({"variability", "--db", dsn(), "--json"}));
  CHECK_FALSE(before.at("data_fingerprints").as_bool());   // no run recorded one
  CHECK(before.at("data_warnings").as_array().empty());
  {
    // What agents record in run_started (runs.workload): one board read other bytes than the rest.
    pqxx::connection c(dsn());
    pqxx::work w(c);
    w.exec("UPDATE runs r SET workload = jsonb_build_object('parameters', 11689512, 'dataset_fingerprint', "
           "  CASE WHEN a.name = (SELECT min(name) FROM agents) THEN repeat('a', 64) ELSE repeat('b', 64) END) "
           "FROM agents a WHERE a.id = r.agent_id");
    w.commit();
  }
  const bj::object vo = json_of(analyze({"variability", "--db", dsn(), "--json"}));
  CHECK(vo.at("data_fingerprints").as_bool());
  bool flagged = false;
  for (const auto& line : vo.at("data_warnings").as_array())
    flagged = flagged || std::string(line.as_string()).find("its runs trained on different data (2 fingerprints)") !=
                             std::string::npos;
  CHECK(flagged);
  CHECK(analyze({"variability", "--db", dsn()}).out.find("DATA DIFFERS: dataset '") != std::string::npos);
  // The per-epoch export carries each run's fingerprint: the CSV gives the same verdict.
  const TempDir dir;
  const std::string epochs_csv = dir.str() + "/epochs.csv";
  REQUIRE(export_corpus({"--db", dsn(), "--per-epoch", "--out", epochs_csv}).rc == 0);
  const bj::object from_csv = json_of(analyze({"variability", "--csv", epochs_csv, "--json"}));
  CHECK(from_csv.at("data_warnings") == vo.at("data_warnings"));
}
