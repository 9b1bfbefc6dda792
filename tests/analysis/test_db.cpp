// Analysis from PostgreSQL: applies sql/001_init.sql and sql/003_analysis.sql (twice: the views are
// idempotent) to a fresh database made from the admin DSN in JETSWEEP_TEST_DSN, inserts a small
// campaign of two board classes and three instances, and runs every command with --db.
// Fails (does not skip) when JETSWEEP_TEST_DSN is unset.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/analyze_cli.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;
namespace bj = boost::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fresh database with the schema and analysis views, dropped afterwards.
class TestDatabase {
 public:
  TestDatabase() {
    const char* admin = std::getenv("JETSWEEP_TEST_DSN");
    REQUIRE_MESSAGE(admin != nullptr, "JETSWEEP_TEST_DSN is not set: run the tests through scripts/test");
    admin_ = admin;
    static std::atomic<int> counter{0};
    name_ = "jetsweep_analysis_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    {
      pqxx::connection c(admin_);
      pqxx::nontransaction n(c);
      n.exec("DROP DATABASE IF EXISTS " + name_);
      n.exec("CREATE DATABASE " + name_);
    }
    const auto pos = admin_.find("dbname=");
    REQUIRE(pos != std::string::npos);
    const auto end = admin_.find(' ', pos);
    dsn_ = admin_.substr(0, pos) + "dbname=" + name_ + (end == std::string::npos ? "" : admin_.substr(end));
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    w.exec(read_file(std::string(JETSWEEP_SOURCE_DIR) + "/sql/001_init.sql"));
    w.exec(read_file(std::string(JETSWEEP_SOURCE_DIR) + "/sql/003_analysis.sql"));
    w.exec(read_file(std::string(JETSWEEP_SOURCE_DIR) + "/sql/003_analysis.sql"));
    w.commit();
  }
  ~TestDatabase() {
    try {
      pqxx::connection c(admin_);
      pqxx::nontransaction n(c);
      n.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  const std::string& dsn() const { return dsn_; }

 private:
  std::string admin_, name_, dsn_;
};

struct Run {
  int rc;
  std::string out, err;
};
Run analyze(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int rc = analyze_main(args, out, err);
  return {rc, out.str(), err.str()};
}

// Ground truth of the inserted campaign: minibatch time (ms) and power (W) per mode and workload.
double truth_ms(int workload, int cores, double cpu, double gpu, double emc) {
  const double scale[] = {1.0, 1.6, 0.5};
  return scale[workload] * (200000.0 / gpu + 60000.0 / cpu + 40.0 / cores + 30000.0 / emc);
}
double truth_w(int cores, double cpu, double gpu, double emc) { return 8 + 0.004 * gpu + 0.002 * cpu + 0.3 * cores + 0.001 * emc; }

// Inserts: agents orin-1, orin-2 (agx-orin, different kernels) and nx-1 (xavier-nx); a campaign of
// 3 workloads x 12 modes on orin-1 (4 epochs each, epoch 0 slower), the first 4 modes of resnet also
// on orin-2, and one named-mode run on nx-1 with minibatch rows and power only in samples.
void populate(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  auto agent = [&](const std::string& name, const std::string& cls, const std::string& kernel) {
    return w.exec_params1("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, "
                          "torch_version, compiler, git_sha) VALUES ($1, $1, 12, 1, 'sim', $2, $3, '1.13', 'g++ 12', "
                          "'abc') RETURNING id",
                          name, cls, kernel)[0]
        .as<int64_t>();
  };
  const int64_t a1 = agent("orin-1", "agx-orin", "5.10.120"), a2 = agent("orin-2", "agx-orin", "5.10.104"),
                a3 = agent("nx-1", "xavier-nx", "5.10.104");
  const int64_t camp = w.exec1("INSERT INTO campaigns (name, source_file, source_yaml, run_count) "
                               "VALUES ('sweep', 'sweep.yaml', '', 0) RETURNING id")[0]
                           .as<int64_t>();
  const char* workloads[] = {"resnet18", "mobilenet", "lenet5"};
  const int cores[] = {2, 4, 8, 12};
  const double cpu[] = {729.6, 1497.6, 2201.6};
  const double gpu[] = {420.75, 828.75, 1300.5};
  const double emc[] = {665.6, 2133, 3199};
  int ordinal = 0;
  auto run = [&](int64_t agent_id, const std::string& agent_name, const std::string& cls, int wl, int c_, double f,
                 double g, double e, const std::string& power_mode) {
    bj::object cfg;
    cfg["model"] = workloads[wl];
    bj::value pm = bj::parse(power_mode);
    if (!pm.is_null()) cfg["power_mode"] = pm;
    bj::object facts;
    facts["device_class"] = cls;
    facts["backend"] = "sim";
    facts["name"] = agent_name;
    facts["kernel"] = agent_name == "orin-1" ? "5.10.120" : "5.10.104";
    facts["torch_version"] = "1.13";
    const int64_t run_id = w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, "
                                          "agent_id, facts) VALUES ($1, $2, $3::jsonb, $4, 4, 'done', $5, $6::jsonb) "
                                          "RETURNING id",
                                          camp, ordinal++, bj::serialize(cfg), cls, agent_id, bj::serialize(facts))[0]
                               .as<int64_t>();
    const double ms = truth_ms(wl, c_, f, g, e), watts = truth_w(c_, f, g, e);
    const int mbs = 100;
    for (int ep = 0; ep < 4; ++ep) {
      const double jitter = agent_name == "orin-2" ? 1.02 : 1.0 + 0.001 * ep;
      const double e2e = (ep == 0 ? 1.5 : jitter) * ms * mbs / 1000.0;
      w.exec_params("INSERT INTO epochs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0.5)", run_id, ep, e2e, 0.1 * e2e,
                    0.85 * e2e, mbs, watts * e2e, watts);
    }
    return run_id;
  };
  for (int wl = 0; wl < 3; ++wl)
    for (int i = 0; i < 12; ++i) {
      const int c_ = cores[i % 4];
      const double f = cpu[i % 3], g = gpu[(i / 3) % 3], e = emc[(i / 4) % 3];
      char pm[200];
      std::snprintf(pm, sizeof pm, R"({"cores": %d, "cpu_khz": %d, "gpu_hz": %lld, "emc_hz": %lld})", c_,
                    int(std::lround(f * 1000)), (long long)std::llround(g * 1e6), (long long)std::llround(e * 1e6));
      run(a1, "orin-1", "agx-orin", wl, c_, f, g, e, pm);
      if (wl == 0 && i < 4) run(a2, "orin-2", "agx-orin", wl, c_, f, g, e, pm);
    }
  // A named mode on the NX: minibatch rows give the minibatch time; power only from samples.
  const int64_t nx = run(a3, "nx-1", "xavier-nx", 2, 6, 1400, 1100, 1600, R"({"name": "15W"})");
  w.exec_params("UPDATE epochs SET mean_power_w = NULL, energy_j = NULL WHERE run_id = $1", nx);
  for (int ep = 0; ep < 4; ++ep)
    for (int i = 0; i < 3; ++i)
      w.exec_params("INSERT INTO minibatches VALUES ($1, $2, $3, 0.001, 0.009)", nx, ep, i);
  w.exec_params("INSERT INTO samples (run_id, t_s, cpu_util_pct, mem_used_kb, disk_read_bytes, power_w) VALUES "
                "($1, 1, 50, 1, 0, 7.0), ($1, 2, 50, 1, 0, 9.0)",
                nx);
  w.commit();
}

}  // namespace

TEST_CASE("db: views and corpus loading") {
  TestDatabase db;
  populate(db.dsn());
  auto c = load_corpus_from_db(db.dsn(), {});
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
  CHECK(*nx->power_mw == doctest::Approx(8000));     // mean of the samples
  CHECK(nx->epochs == 3);                            // epochs 1+
  for (const auto& r : c->rows) {
    if (r.instance != "orin-1" || r.workload != "mobilenet") continue;
    const double expect = truth_ms(1, r.mode.cores, r.mode.cpu_mhz, r.mode.gpu_mhz, r.mode.emc_mhz) * 1.002;  // mean of 1.001, 1.002, 1.003
    CHECK(r.minibatch_ms == doctest::Approx(expect).epsilon(1e-6));  // epoch 0 (x1.5) left out
    CHECK(r.epoch_minibatch_ms.size() == 3);
    CHECK(*r.power_mw / 1000 == doctest::Approx(truth_w(r.mode.cores, r.mode.cpu_mhz, r.mode.gpu_mhz, r.mode.emc_mhz)));
  }
  auto missing = load_corpus_from_db(db.dsn(), {"nope"});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("--campaign") == 0);
}

TEST_CASE("db: every command works on the campaign") {
  TestDatabase db;
  populate(db.dsn());
  const std::string dsn = db.dsn();

  auto p = analyze({"pareto", "--db", dsn, "--workload", "resnet18", "--json"});
  REQUIRE_MESSAGE(p.rc == 0, p.err);
  CHECK(bj::parse(p.out).as_object().at("modes").to_number<int>() == 12);

  auto v = analyze({"variability", "--db", dsn, "--json"});
  REQUIRE_MESSAGE(v.rc == 0, v.err);
  auto vo = bj::parse(v.out).as_object();
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

  auto lin = analyze({"predict", "--db", dsn, "--method", "linear", "--target", "lenet5@agx-orin", "--reference",
                      "resnet18,mobilenet", "--features", "inverse", "--train-modes", "6", "--json"});
  REQUIRE_MESSAGE(lin.rc == 0, lin.err);
  auto lo = bj::parse(lin.out).as_object();
  CHECK(lo.at("held_out_modes").to_number<int>() == 6);
  CHECK(lo.at("time_mape_pct").to_number<double>() < 1.0);  // the truth is linear in 1/frequency

  auto opt = analyze({"optimize", "--db", dsn, "--workload", "mobilenet", "--power-budget-w", "14", "--json"});
  REQUIRE_MESSAGE(opt.rc == 0, opt.err);
  CHECK(bj::parse(opt.out).as_object().at("chosen").is_object());

  auto ep = analyze({"epochs", "--db", dsn, "--workload", "lenet5@xavier-nx", "--json"});
  REQUIRE_MESSAGE(ep.rc == 0, ep.err);
  CHECK(bj::parse(ep.out).as_object().at("epochs").as_array().size() == 4);

  const std::string dir = (std::filesystem::temp_directory_path() / ("jetsweep-dbplot-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  CHECK(analyze({"epochs", "--db", dsn, "--workload", "resnet18", "--instance", "orin-2", "--plot", dir + "/bars.png"}).rc == 0);
  CHECK(analyze({"variability", "--db", dsn, "--workload", "resnet18", "--plot", dir + "/violin.svg", "--plot-energy",
                 dir + "/energy.png"})
            .rc == 0);
  CHECK(std::filesystem::file_size(dir + "/bars.png") > 1000);
  CHECK(std::filesystem::file_size(dir + "/violin.svg") > 1000);

  // Export: the corpus CSV, and per-epoch rows that variability reads back from CSV.
  std::ostringstream out, err;
  REQUIRE(export_main({"--db", dsn, "--campaign", "sweep", "--out", dir + "/sweep.csv"}, out, err) == 0);
  auto back = read_corpus_csv(dir + "/sweep.csv");
  REQUIRE(back.is_ok());
  CHECK(back->rows.size() == 41);
  std::ostringstream out2, err2;
  REQUIRE(export_main({"--db", dsn, "--per-epoch", "--out", dir + "/epochs.csv"}, out2, err2) == 0);
  auto v2 = analyze({"variability", "--csv", dir + "/epochs.csv", "--json"});
  REQUIRE_MESSAGE(v2.rc == 0, v2.err);
  CHECK(bj::parse(v2.out).as_object().at("warmup_epochs_excluded").to_number<int>() == 41);
  auto p2 = analyze({"pareto", "--csv", dir + "/sweep.csv", "--workload", "resnet18", "--json"});
  REQUIRE(p2.rc == 0);
  CHECK(bj::parse(p2.out).as_object().at("front") == bj::parse(p.out).as_object().at("front"));
  std::filesystem::remove_all(dir);

  auto bad = analyze({"pareto", "--db", "host=127.0.0.1 port=1 dbname=x connect_timeout=2", "--workload", "x"});
  CHECK(bad.rc == 1);
}
