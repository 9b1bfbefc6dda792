// Analysis from PostgreSQL: applies every sql/NNN_*.sql migration in numeric order (the real schema, as
// the controller's migrate does) to a fresh database made from the admin DSN in JETSWEEP_TEST_DSN,
// inserts small campaigns, and runs every command with --db: two board classes and three instances;
// and a simulated campaign of two modes x two worker settings that must come out as four groups.
// Fails (does not skip) when JETSWEEP_TEST_DSN is unset.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

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
    // Every migration sql/NNN_name.sql, in numeric order, in one transaction (as PgStore::migrate).
    std::vector<std::pair<int, std::string>> files;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(JETSWEEP_SOURCE_DIR) + "/sql")) {
      const std::string name = entry.path().filename().string();
      if (name.size() < 5 || entry.path().extension() != ".sql" || name[3] != '_' ||
          !std::all_of(name.begin(), name.begin() + 3, [](char ch) { return ch >= '0' && ch <= '9'; }))
        continue;
      files.emplace_back(std::stoi(name.substr(0, 3)), entry.path().string());
    }
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 12);
    REQUIRE(files.front().first == 1);
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    w.exec("SET client_min_messages TO WARNING");
    for (const auto& [version, path] : files) w.exec(read_file(path));
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

// Inserts: agents orin-1, orin-2 (real agx-orin boards, different kernels) and nx-1 (simulated xavier-nx); a campaign of
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
    facts["backend"] = cls == "agx-orin" ? "jetson" : "sim";  // the Orins are real boards
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
  // A named mode on the NX: minibatch rows give the minibatch time; power only in samples (not an epoch's own
  // power, so the epochs have none).
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

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) {
      out.push_back(cell);
      cell.clear();
    } else cell += ch;
  }
  out.push_back(cell);
  return out;
}

// Rows of a CSV text as column -> value maps.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const auto header = split_csv_line(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split_csv_line(line);
    REQUIRE(cells.size() == header.size());
    std::map<std::string, std::string> r;
    for (size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

// A simulated AGX Xavier campaign "grid": two instances (their agents put their names into the kernel
// string, as simulated agents did), lenet5/mnist in two power modes (the named MAXN and a partial
// {cores: 4, cpu_khz: ..} whose other clocks are only known from the applied state) x workers 2 and 4,
// two repetitions each, 3 epochs per run with windows, power coverage and clocks read back.
void populate_grid(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  const int64_t camp = w.exec1("INSERT INTO campaigns (name, source_file, source_yaml, run_count) "
                               "VALUES ('grid', 'grid.yaml', '', 16) RETURNING id")[0]
                           .as<int64_t>();
  struct Mode {
    const char* request;
    const char* applied;
    double seconds;
  };
  const Mode modes[] = {
      {R"({"name": "MAXN"})",
       R"({"mode_name": "MAXN", "nvpmodel_id": 0, "cores_online": 8, "cpu_khz": 2265600, "gpu_hz": 1377000000,
           "emc_hz": 2133000000, "clocks_pinned": false, "fan": "auto"})",
       10.0},
      {R"({"cores": 4, "cpu_khz": 1190400})",
       R"({"mode_name": "", "cores_online": 4, "cpu_khz": 1190400, "gpu_hz": 675750000, "emc_hz": 1331200000,
           "clocks_pinned": false, "fan": "auto"})",
       25.0},
  };
  int ordinal = 0;
  for (int inst = 1; inst <= 2; ++inst) {
    const std::string name = "xavier-" + std::to_string(inst);
    const int64_t agent = w.exec_params1("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, "
                                         "kernel, torch_version, compiler, git_sha) VALUES ($1, 'host', 16, 1, 'sim', "
                                         "'agx-xavier', $2, '2.1', 'g++ 12', 'abc') RETURNING id",
                                         name, "6.1.0 (sim " + name + ")")[0]
                              .as<int64_t>();
    for (const auto& m : modes)
      for (int workers : {2, 4})
        for (int rep = 0; rep < 2; ++rep) {
          bj::object cfg;
          cfg["model"] = "lenet5";
          cfg["dataset"] = "mnist";
          cfg["data"] = "/data/mnist";
          cfg["batch_size"] = 16;
          cfg["workers"] = workers;
          cfg["prefetch"] = 2;
          cfg["epochs"] = 3;
          cfg["threads"] = 1;
          cfg["seed"] = 42;
          cfg["repetition"] = rep;
          cfg["max_minibatches"] = 0;
          cfg["drop_caches"] = false;
          cfg["pin_clocks"] = false;
          cfg["power_mode"] = bj::parse(m.request);
          bj::object facts;
          facts["device_class"] = "agx-xavier";
          facts["backend"] = "sim";
          facts["name"] = name;
          facts["kernel"] = "6.1.0 (sim " + name + ")";
          facts["torch_version"] = "2.1";
          const int64_t run_id =
              w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, "
                             "applied, reference_state, storage_device, page_cache_dropped, agent_t0_unix_s) VALUES "
                             "($1, $2, $3::jsonb, 'agx-xavier', 3, 'done', $4, $5::jsonb, $6::jsonb, false, 'sda', "
                             "false, 1700000000.25) RETURNING id",
                             camp, ordinal++, bj::serialize(cfg), agent, bj::serialize(facts),
                             bj::serialize(bj::parse(m.applied)))[0]
                  .as<int64_t>();
          const double speed = workers == 4 ? 0.8 : 1.0;  // more workers: shorter epochs
          double t = 0.5;
          for (int ep = 0; ep < 3; ++ep) {
            const double e2e = m.seconds * speed * (ep == 0 ? 1.4 : 1.0) * (1.0 + 0.01 * inst + 0.001 * rep + 0.0001 * ep);
            const double watts = m.seconds == 10.0 ? 30.0 : 15.0;
            w.exec_params("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, "
                          "mean_power_w, loss, t_start_s, t_end_s, power_coverage, throttled, throttle_reason) VALUES "
                          "($1, $2, $3, $4, $5, 100, $6, $7, 0.5, $8, $9, 1.0, false, '')",
                          run_id, ep, e2e, 0.1 * e2e, 0.8 * e2e, watts * e2e, watts, t, t + e2e);
            t += e2e;
          }
        }
  }
  w.commit();
}

// One AGX Orin "gpu": the same model, mode and workers trained on the GPU with paper and pipelined timing
// and on the CPU (accelerator: cpu), one run each on one jetson agent, 3 epochs; GPU runs carry copy_s.
void populate_compute_and_timing(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  const int64_t camp = w.exec1("INSERT INTO campaigns (name, source_file, source_yaml, run_count) "
                               "VALUES ('gpu', 'gpu.yaml', '', 3) RETURNING id")[0]
                           .as<int64_t>();
  const int64_t agent = w.exec1("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, "
                                "torch_version, compiler, git_sha) VALUES ('orin-1', 'orin-1', 12, 1, 'jetson', "
                                "'agx-orin', '5.10.120-tegra', '2.1', 'g++ 11', 'abc') RETURNING id")[0]
                            .as<int64_t>();
  struct Variant {
    const char* timing;   // "" = the default (paper)
    const char* device;
    double seconds;
  };
  const Variant variants[] = {{"", "cuda:0 (Orin)", 4.0}, {"pipelined", "cuda:0 (Orin)", 3.0}, {"", "cpu", 40.0}};
  int ordinal = 0;
  for (const auto& v : variants) {
    bj::object cfg;
    cfg["model"] = "resnet18";
    cfg["dataset"] = "cifar10";
    cfg["batch_size"] = 32;
    cfg["workers"] = 2;
    cfg["prefetch"] = 2;
    cfg["epochs"] = 3;
    cfg["power_mode"] = bj::parse(R"({"name": "MAXN"})");
    if (*v.timing) cfg["timing"] = v.timing;
    bj::object facts;
    facts["device_class"] = "agx-orin";
    facts["backend"] = "jetson";
    facts["name"] = "orin-1";
    facts["kernel"] = "5.10.120-tegra";
    facts["torch_version"] = "2.1";
    const int64_t run_id =
        w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, "
                       "applied, reference_state, compute_device) VALUES ($1, $2, $3::jsonb, 'agx-orin', 3, 'done', "
                       "$4, $5::jsonb, $6::jsonb, false, $7) RETURNING id",
                       camp, ordinal++, bj::serialize(cfg), agent, bj::serialize(facts),
                       R"({"mode_name": "MAXN", "nvpmodel_id": 0, "cores_online": 12, "cpu_khz": 2201600,
                           "gpu_hz": 1300500000, "emc_hz": 3199000000, "clocks_pinned": false, "fan": "auto"})",
                       v.device)[0]
            .as<int64_t>();
    const bool gpu = std::string(v.device) != "cpu";
    for (int ep = 0; ep < 3; ++ep) {
      const double e2e = v.seconds * (1.0 + 0.001 * ep);
      w.exec_params("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, "
                    "mean_power_w, loss, power_coverage, copy_s) VALUES ($1, $2, $3, $4, $5, 100, $6, 20, 0.5, 1.0, "
                    "$7::double precision)",
                    run_id, ep, e2e, 0.1 * e2e, 0.8 * e2e, 20 * e2e, gpu ? "0.25" : nullptr);
    }
  }
  w.commit();
}

int groups_of(const Run& r) {
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return static_cast<int>(bj::parse(r.out).as_object().at("groups").as_array().size());
}

}  // namespace

TEST_CASE("db: two modes x two worker settings are four variability groups, never pooled") {
  TestDatabase db;
  populate_grid(db.dsn());
  const std::string dsn = db.dsn();

  auto v = analyze({"variability", "--db", dsn, "--campaign", "grid", "--json"});
  REQUIRE_MESSAGE(v.rc == 0, v.err);
  auto vo = bj::parse(v.out).as_object();
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
  auto text = analyze({"variability", "--db", dsn, "--campaign", "grid"});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("agx-xavier  lenet5/mnist  8c/2265.6/1377/2133 w2 (simulated)") != std::string::npos);
  CHECK(text.out.find("agx-xavier  lenet5/mnist  4c/1190.4/675.75/1331.2 w4 (simulated)") != std::string::npos);
  CHECK(text.out.find("SOFTWARE DIFFERS") == std::string::npos);

  // Explicit pooling and selection.
  auto pooled = analyze({"variability", "--db", dsn, "--campaign", "grid", "--pool-over", "workers", "--json"});
  CHECK(groups_of(pooled) == 2);
  CHECK(bj::parse(pooled.out).as_object().at("pooled_over").as_array().size() == 1);
  auto pooled_text = analyze({"variability", "--db", dsn, "--pool-over", "workers"});
  REQUIRE(pooled_text.rc == 0);
  CHECK(pooled_text.out.find("POOLED over workers") != std::string::npos);
  CHECK(groups_of(analyze({"variability", "--db", dsn, "--where", "workers=4", "--json"})) == 2);
  CHECK(groups_of(analyze({"variability", "--db", dsn, "--where", "workers=4,mode=MAXN", "--json"})) == 1);
  auto unknown_axis = analyze({"variability", "--db", dsn, "--where", "colour=red"});
  CHECK(unknown_axis.rc == 2);
  CHECK(unknown_axis.err.find("--where: unknown axis 'colour'") != std::string::npos);
  auto no_match = analyze({"variability", "--db", dsn, "--where", "workers=7"});
  CHECK(no_match.rc == 2);
  CHECK(no_match.err.find("workers=7 (values: 2, 4)") != std::string::npos);

  // Across modes only: pareto refuses a workload measured in two worker settings, naming both ways out.
  auto refused = analyze({"pareto", "--db", dsn, "--workload", "lenet5"});
  CHECK(refused.rc == 2);
  CHECK(refused.err.find("2 configurations besides the power mode") != std::string::npos);
  CHECK(refused.err.find("w2") != std::string::npos);
  CHECK(refused.err.find("w4") != std::string::npos);
  CHECK(refused.err.find("--where workers=2") != std::string::npos);
  CHECK(refused.err.find("--pool-over workers") != std::string::npos);
  CHECK(analyze({"optimize", "--db", dsn, "--workload", "lenet5", "--power-budget-w", "100"}).rc == 2);
  auto chosen = analyze({"pareto", "--db", dsn, "--workload", "lenet5", "--where", "workers=2", "--json"});
  REQUIRE_MESSAGE(chosen.rc == 0, chosen.err);
  auto co = bj::parse(chosen.out).as_object();
  CHECK(co.at("modes").to_number<int>() == 2);
  CHECK(co.at("simulated").as_bool());
  CHECK(co.at("config").as_object().at("workers").to_number<int>() == 2);
  auto chosen_text = analyze({"pareto", "--db", dsn, "--workload", "lenet5", "--where", "workers=2"});
  REQUIRE(chosen_text.rc == 0);
  CHECK(chosen_text.out.find("Pareto front of lenet5/mnist on agx-xavier w2 (simulated)") != std::string::npos);
  auto opt = analyze({"optimize", "--db", dsn, "--workload", "lenet5", "--pool-over", "workers", "--power-budget-w",
                      "100", "--json"});
  REQUIRE_MESSAGE(opt.rc == 0, opt.err);
  CHECK(bj::parse(opt.out).as_object().at("pooled_over").as_array()[0].as_string() == "workers");

  // epochs: one group per configuration.
  auto ep = analyze({"epochs", "--db", dsn, "--workload", "lenet5", "--json"});
  REQUIRE_MESSAGE(ep.rc == 0, ep.err);
  auto eo = bj::parse(ep.out).as_object();
  CHECK(eo.at("epochs").as_array().size() == 48);
  CHECK(eo.at("groups").as_array().size() == 4);
  for (const auto& g : eo.at("groups").as_array()) CHECK(g.as_object().at("epochs_later").to_number<int>() == 8);

  // export --per-epoch: every matrix axis and per-epoch column filled, mode columns from the applied state.
  const std::string dir = (std::filesystem::temp_directory_path() / ("jetsweep-grid-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  std::ostringstream out, err;
  REQUIRE(export_main({"--db", dsn, "--campaign", "grid", "--per-epoch"}, out, err) == 0);
  const auto rows = csv_rows(out.str());
  REQUIRE(rows.size() == 48);
  for (const auto& r : rows) {
    for (const char* col : {"cores", "cpu_mhz", "gpu_mhz", "emc_mhz", "pin_clocks", "fan", "workers", "prefetch",
                            "batch_size", "threads", "seed", "dataset", "storage", "repetition", "simulated", "run_id",
                            "epoch", "warmup", "e2e_s", "stall_s", "compute_s", "energy_j", "power_w", "power_coverage",
                            "throttled", "t_start_s", "t_end_s", "start_unix_s", "end_unix_s", "storage_device",
                            "page_cache_dropped", "reference_state", "mode"})
      CHECK_MESSAGE(!r.at(col).empty(), "column " << col << " empty in " << out.str().substr(0, 600));
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
  // The per-mode export carries the axes too, and the per-epoch file reads back into the same four groups.
  std::ostringstream mout, merr;
  REQUIRE(export_main({"--db", dsn, "--campaign", "grid"}, mout, merr) == 0);
  const auto mrows = csv_rows(mout.str());
  REQUIRE(mrows.size() == 8);  // 2 instances x 2 modes x 2 worker settings (repetitions pooled)
  for (const auto& r : mrows) {
    CHECK(!r.at("workers").empty());
    CHECK(r.at("simulated") == "true");
    CHECK(r.at("runs") == "2");
  }
  {
    std::ofstream f(dir + "/grid.csv");
    f << out.str();
  }
  CHECK(groups_of(analyze({"variability", "--csv", dir + "/grid.csv", "--json"})) == 4);
  CHECK(groups_of(analyze({"variability", "--csv", dir + "/grid.csv", "--pool-over", "workers", "--json"})) == 2);
  std::ostringstream jout, jerr;
  REQUIRE(export_main({"--db", dsn, "--campaign", "grid", "--per-epoch", "--json"}, jout, jerr) == 0);
  const bj::value exported = bj::parse(jout.str());
  const auto& first = exported.as_object().at("rows").as_array().at(0).as_object();
  CHECK(first.at("workers").to_number<int>() > 0);
  CHECK(first.at("simulated").as_bool());
  std::filesystem::remove_all(dir);
}

TEST_CASE("db: runs on the GPU and the CPU, and in paper and pipelined timing, are never pooled") {
  TestDatabase db;
  populate_compute_and_timing(db.dsn());
  const std::string dsn = db.dsn();
  auto v = analyze({"variability", "--db", dsn, "--campaign", "gpu", "--json"});
  REQUIRE_MESSAGE(v.rc == 0, v.err);
  const bj::value parsed = bj::parse(v.out);
  const auto& groups = parsed.as_object().at("groups").as_array();
  REQUIRE(groups.size() == 3);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& gv : groups) {
    const auto& cfg = gv.as_object().at("config").as_object();
    seen.emplace(std::string(cfg.at("compute").as_string()), std::string(cfg.at("timing").as_string()));
    CHECK(gv.as_object().at("time").as_object().at("max_deviation_pct").to_number<double>() < 1.0);
  }
  CHECK(seen == std::set<std::pair<std::string, std::string>>{{"cuda", "paper"}, {"cuda", "pipelined"}, {"cpu", "paper"}});
  auto text = analyze({"variability", "--db", dsn, "--campaign", "gpu"});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("pipelined-timing") != std::string::npos);
  CHECK(text.out.find("on-cpu") != std::string::npos);
  CHECK(groups_of(analyze({"variability", "--db", dsn, "--where", "compute=cuda", "--json"})) == 2);
  CHECK(groups_of(analyze({"variability", "--db", dsn, "--pool-over", "timing", "--json"})) == 2);
  // Export: the axes and the copy column per epoch (null on the CPU).
  std::ostringstream out, err;
  REQUIRE(export_main({"--db", dsn, "--campaign", "gpu", "--per-epoch"}, out, err) == 0);
  std::istringstream lines(out.str());
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
