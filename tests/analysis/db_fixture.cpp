#include "db_fixture.hpp"

#include <doctest/doctest.h>

#include <pqxx/pqxx>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/text.hpp"

namespace jetsweep::testing {

namespace bj = boost::json;

namespace {

// An agents row (mem_bytes 1, git_sha 'abc').
struct Agent {
  std::string name, hostname;
  int cpus;
  std::string backend, device_class, kernel, torch_version, compiler;
};

int64_t insert_agent(pqxx::work& w, const Agent& a) {
  return w
      .exec_params1("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, "
                    "compiler, git_sha) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, 'abc') RETURNING id",
                    a.name, a.hostname, a.cpus, a.backend, a.device_class, a.kernel, a.torch_version, a.compiler)[0]
      .as<int64_t>();
}

// The facts a run records of its agent; `backend` as the agent reported it for the run.
std::string facts_json(const Agent& a, const std::string& backend) {
  bj::object facts;
  facts["device_class"] = a.device_class;
  facts["backend"] = backend;
  facts["name"] = a.name;
  facts["kernel"] = a.kernel;
  facts["torch_version"] = a.torch_version;
  return bj::serialize(facts);
}

int64_t insert_campaign(pqxx::work& w, const std::string& name, int run_count) {
  return w
      .exec_params1("INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ($1, $2, '', $3) "
                    "RETURNING id",
                    name, name + ".yaml", run_count)[0]
      .as<int64_t>();
}

// The sweep's power mode of setting i: cores, CPU, GPU and EMC clocks (MHz).
struct SweepMode {
  int cores;
  double cpu, gpu, emc;
  std::string request_json() const {
    char pm[200];
    std::snprintf(pm, sizeof pm, R"({"cores": %d, "cpu_khz": %d, "gpu_hz": %lld, "emc_hz": %lld})", cores,
                  int(std::lround(cpu * 1000)), (long long)std::llround(gpu * 1e6), (long long)std::llround(emc * 1e6));
    return pm;
  }
};

SweepMode sweep_mode(int i) {
  const int cores[] = {2, 4, 8, 12};
  const double cpu[] = {729.6, 1497.6, 2201.6};
  const double gpu[] = {420.75, 828.75, 1300.5};
  const double emc[] = {665.6, 2133, 3199};
  return {cores[i % 4], cpu[i % 3], gpu[(i / 3) % 3], emc[(i / 4) % 3]};
}

// One run of the sweep with 4 epochs of 100 minibatches at the ground truth; orin-2 runs 2% slower,
// epoch 0 1.5x slower.
int64_t insert_sweep_run(pqxx::work& w, int64_t camp, int ordinal, int64_t agent_id, const Agent& agent, int wl,
                         const SweepMode& m, const std::string& power_mode) {
  const char* workloads[] = {"resnet18", "mobilenet", "lenet5"};
  bj::object cfg;
  cfg["model"] = workloads[wl];
  bj::value pm = bj::parse(power_mode);
  if (!pm.is_null()) cfg["power_mode"] = pm;
  const std::string backend = agent.device_class == "agx-orin" ? "jetson" : "sim";  // the Orins are real boards
  const int64_t run_id = w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, "
                                        "agent_id, facts) VALUES ($1, $2, $3::jsonb, $4, 4, 'done', $5, $6::jsonb) "
                                        "RETURNING id",
                                        camp, ordinal, bj::serialize(cfg), agent.device_class, agent_id,
                                        facts_json(agent, backend))[0]
                             .as<int64_t>();
  const double ms = truth_ms(wl, m.cores, m.cpu, m.gpu, m.emc), watts = truth_w(m.cores, m.cpu, m.gpu, m.emc);
  const int mbs = 100;
  for (int ep = 0; ep < 4; ++ep) {
    const double jitter = agent.name == "orin-2" ? 1.02 : 1.0 + 0.001 * ep;
    const double e2e = (ep == 0 ? 1.5 : jitter) * ms * mbs / 1000.0;
    w.exec_params("INSERT INTO epochs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0.5)", run_id, ep, e2e, 0.1 * e2e,
                  0.85 * e2e, mbs, watts * e2e, watts);
  }
  return run_id;
}

// One run of the grid (3 epochs with windows; 4 workers give shorter epochs, the MAXN mode 30 W, else 15 W).
struct GridRun {
  int64_t agent_id;
  const Agent* agent;
  const char* request;  // the requested power mode
  const char* applied;  // the applied state
  double seconds;       // epoch time with 2 workers
  int workers, repetition, instance;
};

void insert_grid_run(pqxx::work& w, int64_t camp, int ordinal, const GridRun& g) {
  bj::object cfg;
  cfg["model"] = "lenet5";
  cfg["dataset"] = "mnist";
  cfg["data"] = "/data/mnist";
  cfg["batch_size"] = 16;
  cfg["workers"] = g.workers;
  cfg["prefetch"] = 2;
  cfg["epochs"] = 3;
  cfg["threads"] = 1;
  cfg["seed"] = 42;
  cfg["repetition"] = g.repetition;
  cfg["max_minibatches"] = 0;
  cfg["drop_caches"] = false;
  cfg["pin_clocks"] = false;
  cfg["power_mode"] = bj::parse(g.request);
  const int64_t run_id =
      w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, "
                     "applied, reference_state, storage_device, page_cache_dropped, agent_t0_unix_s) VALUES "
                     "($1, $2, $3::jsonb, 'agx-xavier', 3, 'done', $4, $5::jsonb, $6::jsonb, false, 'sda', "
                     "false, 1700000000.25) RETURNING id",
                     camp, ordinal, bj::serialize(cfg), g.agent_id, facts_json(*g.agent, g.agent->backend),
                     bj::serialize(bj::parse(g.applied)))[0]
          .as<int64_t>();
  const double speed = g.workers == 4 ? 0.8 : 1.0;  // more workers: shorter epochs
  double t = 0.5;
  for (int ep = 0; ep < 3; ++ep) {
    const double e2e =
        g.seconds * speed * (ep == 0 ? 1.4 : 1.0) * (1.0 + 0.01 * g.instance + 0.001 * g.repetition + 0.0001 * ep);
    const double watts = g.seconds == 10.0 ? 30.0 : 15.0;
    w.exec_params("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, "
                  "mean_power_w, loss, t_start_s, t_end_s, power_coverage, throttled, throttle_reason) VALUES "
                  "($1, $2, $3, $4, $5, 100, $6, $7, 0.5, $8, $9, 1.0, false, '')",
                  run_id, ep, e2e, 0.1 * e2e, 0.8 * e2e, watts * e2e, watts, t, t + e2e);
    t += e2e;
  }
}

}  // namespace

double truth_ms(int workload, int cores, double cpu, double gpu, double emc) {
  const double scale[] = {1.0, 1.6, 0.5};
  return scale[workload] * (200000.0 / gpu + 60000.0 / cpu + 40.0 / cores + 30000.0 / emc);
}

double truth_w(int cores, double cpu, double gpu, double emc) {
  return 8 + 0.004 * gpu + 0.002 * cpu + 0.3 * cores + 0.001 * emc;
}

void populate_sweep(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  const Agent orin1{"orin-1", "orin-1", 12, "sim", "agx-orin", "5.10.120", "1.13", "g++ 12"};
  const Agent orin2{"orin-2", "orin-2", 12, "sim", "agx-orin", "5.10.104", "1.13", "g++ 12"};
  const Agent nx1{"nx-1", "nx-1", 12, "sim", "xavier-nx", "5.10.104", "1.13", "g++ 12"};
  const int64_t a1 = insert_agent(w, orin1), a2 = insert_agent(w, orin2), a3 = insert_agent(w, nx1);
  const int64_t camp = insert_campaign(w, "sweep", 0);
  int ordinal = 0;
  for (int wl = 0; wl < 3; ++wl)
    for (int i = 0; i < 12; ++i) {
      const SweepMode m = sweep_mode(i);
      insert_sweep_run(w, camp, ordinal++, a1, orin1, wl, m, m.request_json());
      if (wl == 0 && i < 4) insert_sweep_run(w, camp, ordinal++, a2, orin2, wl, m, m.request_json());
    }
  // A named mode on the NX: minibatch rows give the minibatch time; power only in samples (not an epoch's own
  // power, so the epochs have none).
  const int64_t nx = insert_sweep_run(w, camp, ordinal++, a3, nx1, 2, {6, 1400, 1100, 1600}, R"({"name": "15W"})");
  w.exec_params("UPDATE epochs SET mean_power_w = NULL, energy_j = NULL WHERE run_id = $1", nx);
  // Chunked as the controller stores them (sql/016), statistics kept as at ingest.
  for (int ep = 0; ep < 4; ++ep) {
    w.exec_params("INSERT INTO minibatch_chunks VALUES ($1, $2, $3, 0, '{0.001,0.001,0.001}', '{0.009,0.009,0.009}')",
                  camp, nx, ep);
    w.exec_params("SELECT refresh_epoch_summary($1, $2, $3)", camp, nx, ep);
  }
  w.exec_params("INSERT INTO sample_chunks VALUES ($1, $2, 1, 2, '{1,2}', '{50,50}', '{NULL,NULL}', '{1,1}', '{0,0}', "
                "'{7.0,9.0}', '{NULL,NULL}', '{0,0}', '{}')",
                camp, nx);
  w.commit();
}

void populate_grid(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  const int64_t camp = insert_campaign(w, "grid", 16);
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
    const Agent agent{name, "host", 16, "sim", "agx-xavier", "6.1.0 (sim " + name + ")", "2.1", "g++ 12"};
    const int64_t agent_id = insert_agent(w, agent);
    for (const auto& m : modes)
      for (int workers : {2, 4})
        for (int rep = 0; rep < 2; ++rep)
          insert_grid_run(w, camp, ordinal++, {agent_id, &agent, m.request, m.applied, m.seconds, workers, rep, inst});
  }
  w.commit();
}

void populate_compute_and_timing(const std::string& dsn) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  const int64_t camp = insert_campaign(w, "gpu", 3);
  const Agent orin{"orin-1", "orin-1", 12, "jetson", "agx-orin", "5.10.120-tegra", "2.1", "g++ 11"};
  const int64_t agent = insert_agent(w, orin);
  struct Variant {
    const char* timing;  // "" = the default (paper)
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
    const int64_t run_id =
        w.exec_params1("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, "
                       "applied, reference_state, compute_device) VALUES ($1, $2, $3::jsonb, 'agx-orin', 3, 'done', "
                       "$4, $5::jsonb, $6::jsonb, false, $7) RETURNING id",
                       camp, ordinal++, bj::serialize(cfg), agent, facts_json(orin, orin.backend),
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

CampaignDatabase::CampaignDatabase(void (*populate)(const std::string& dsn)) {
  // The real schema: at least the twelve migrations the analysis views build on.
  REQUIRE(db_.apply_migrations(std::string(JETSWEEP_SOURCE_DIR) + "/sql") >= 12);
  populate(db_.dsn());
}

bj::object json_of(const Run& r) {
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return bj::parse(r.out).as_object();
}

int groups_of(const Run& r) { return static_cast<int>(json_of(r).at("groups").as_array().size()); }

std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const auto header = split(line, ',');
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split(line, ',');
    REQUIRE_MESSAGE(cells.size() == header.size(), "a CSV row's cells do not match the header: " << line);
    std::map<std::string, std::string> r;
    for (size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace jetsweep::testing
