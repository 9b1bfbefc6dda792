// The fixture of test_pg_nullable.cpp (included by it only): a database populated with one campaign whose run
// carries every nullable figure (or none, sparse), and every read path's answer over it (Reads).
#pragma once

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "analysis/analyze_cli.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"
#include "cli/cli.hpp"
#include "controller/pg_store.hpp"
#include "support/test_database.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
namespace bj = boost::json;

namespace {

using CsvRows = std::vector<std::map<std::string, std::string>>;

constexpr double kT0 = 1.7e9;          // the agent's clock at t_s = 0 of the run
constexpr double kClockOffset = 0.25;  // agent minus controller
constexpr double kBootAtT0 = 5000.0;   // the agent's boot clock (boot "b1") at kT0 on its wall clock

const char* const kCampaignYaml =
    "campaign: nullable\nmatrix:\n  device: agx-orin\n  model: lenet5\n  dataset: mnist\n  epochs: 2\n"
    "  batch_size: 32\n  workers: 2\n  prefetch: 2\n  data: [\"@ssd\", \"@nvme\"]\n  power_mode: MAXN\n";

// An epoch as an agent sends it without any optional figure (no sensor, no clocks, a diverged loss).
proto::EpochResult sparse_epoch(int64_t run_id, int64_t epoch) {
  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = epoch;
  e.e2e_s = 10.0 + static_cast<double>(epoch);
  e.stall_s = 2.0;
  e.compute_s = 7.0;
  e.minibatches = 2;
  e.loss = std::numeric_limits<double>::quiet_NaN();
  return e;
}

// The same epoch with every optional figure.
proto::EpochResult full_epoch(int64_t run_id, int64_t epoch) {
  proto::EpochResult e = sparse_epoch(run_id, epoch);
  e.copy_s = 0.5;
  e.energy_j = 50.0;
  e.mean_power_w = 5.0;
  e.loss = 0.5;
  e.read_mb_s = 80.0;
  e.read_iops = 300.0;
  e.cache_start_frac = 0.1;
  e.cache_end_frac = 0.9;
  e.t_start_s = 20.0 * static_cast<double>(epoch);
  e.t_end_s = *e.t_start_s + e.e2e_s;
  e.power_coverage = 0.95;
  e.paused_before_s = epoch == 0 ? 0.0 : 1.5;
  e.clocks_start = e.clocks_end = proto::ClockReading{12, 2201600.0, 1300500000.0, 3199000000.0};
  return e;
}

// A fresh database holding one finished run ("@ssd") on agent orin-1, and one queued run ("@nvme") that no agent
// can take. Full: every nullable column set through the Store API; sparse: every optional figure left out of the
// agent's messages (what the protocol itself stores as NULL).
struct Populated {
  explicit Populated(bool sparse = false) : sparse_(sparse) {
    REQUIRE(store.migrate().is_ok());
    proto::Register reg;
    reg.name = "orin-1";
    reg.facts.hostname = "orin-host";
    reg.facts.cpus = 12;
    reg.facts.mem_bytes = int64_t{32} << 30;
    reg.facts.backend = "jetson";
    reg.facts.device_class = "agx-orin";
    reg.facts.kernel = "5.10";   // facts also carry torch_version, compiler, git_sha (empty here)
    reg.facts.storage = {"ssd"};
    reg.facts.accelerator = "cuda:0 (Orin)";
    reg.facts.tables = BoardTables{"board", 12, {115200, 2201600}, {306000000, 1300500000}, {204000000, 3199000000}};
    auto registered = store.register_agent(reg, controller::AgentProof{std::nullopt, std::string(64, 'a')});
    REQUIRE_MESSAGE(registered.is_ok(), registered.status().to_string());
    agent_id = registered->agent_id;
    // The boot clock's offset from the same probe (agent boot clock minus controller), but from a sparse agent's.
    const std::optional<controller::BootClockOffset> boot =
        sparse_ ? std::nullopt : std::optional(controller::BootClockOffset{"b1", kBootAtT0 - (kT0 - kClockOffset)});
    REQUIRE(store.record_clock(agent_id, kClockOffset, 0.01, boot).is_ok());
    auto parsed = parse_campaign(kCampaignYaml, "nullable.yaml");
    REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
    auto created = store.create_campaign(parsed.value(), "nullable.yaml", kCampaignYaml, "");
    REQUIRE(created.is_ok());
    campaign_id = created->campaign_id;
    auto claimed = store.claim_run(agent_id, "agx-orin", "");
    REQUIRE((claimed.is_ok() && claimed->has_value()));
    run_id = (*claimed)->run_id;
    run_results();
  }
  void run_results() {
    proto::RunStarted started;
    started.run_id = run_id;
    if (!sparse_) started.applied = proto::BoardState{"MAXN", 0, 12, 2201600, 1300500000, 3199000000, true, "max"};
    started.storage_medium = "ssd";
    started.storage_device = "nvme0n1";
    started.page_cache_dropped = true;
    started.compute_device = "cuda:0 (Orin)";
    started.t0_unix_s = kT0;
    if (!sparse_) {
      started.boot_id = "b1";
      started.t0_boot_s = kBootAtT0;
      started.workload = proto::WorkloadFacts{};
      started.workload->parameters = 61706;
      started.workload->dataset_fingerprint = std::string(64, 'd');
    }
    REQUIRE(store.start_run(agent_id, started).is_ok());
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      const std::vector<double> copy_s = sparse_ ? std::vector<double>{} : std::vector<double>{0.25, 0.25};
      REQUIRE(store.ingest_minibatches(agent_id, {run_id, epoch, 0, {1.0, 1.0}, {3.5, 3.5}, copy_s}).is_ok());
      REQUIRE(store.ingest_epoch(agent_id, sparse_ ? sparse_epoch(run_id, epoch) : full_epoch(run_id, epoch)).is_ok());
    }
    proto::SampleChunk samples;
    samples.run_id = run_id;
    samples.samples.push_back({0.5, 50.0, {50.0, 50.0}, 2201.6, 1000, 0, 5.0, 45.5});
    if (sparse_)
      samples.samples.back().cpu_freq_mhz = samples.samples.back().power_w = samples.samples.back().temp_max_c =
          std::nullopt;
    REQUIRE(store.ingest_samples(agent_id, samples).is_ok());
    REQUIRE(store.finish_run(agent_id, {run_id, "done", "", 25.0}).is_ok());
  }
  void exec(const std::string& sql) const {
    pqxx::connection c(db.dsn());
    pqxx::nontransaction(c).exec(sql);
  }
  bool sparse_;
  TestDatabase db;
  controller::PgStore store{db.dsn()};
  int64_t agent_id = 0, campaign_id = 0, run_id = 0;
};

// What every read path gives back.
struct Reads {
  api::CampaignReport report;       // Store::campaign_report (GET /api/campaigns/ID/report)
  bj::object report_wire;           // its JSON as the controller sends it
  api::CampaignReport report_cli;   // that JSON read back by the CLI
  std::string report_text;          // `jetsweep report`
  api::CampaignStatus status;       // campaign_status, read back by the CLI
  std::string status_text;          // `jetsweep status`
  std::vector<api::CampaignStatus> campaigns;
  std::vector<api::AgentInfo> agents;
  perf::EstimateInputs estimate;
  api::RunCancelled cancelled;      // cancel_run of the finished run (changes nothing, reads the run back)
  std::vector<controller::RunOnAgent> to_stop;
  std::vector<api::RunSample> samples;   // run_samples (GET /api/runs/ID/samples), read back through its JSON
  analysis::Corpus corpus;          // `jetsweep analyze --db`
  CsvRows mode_csv, epoch_csv;      // `jetsweep export --db`, `export --db --per-epoch`
};

template <class T>
T round_trip(const T& value, const std::string& what) {
  T out;
  const bj::value wire = bj::parse(bj::serialize(api::to_json(value)));
  const Status s = api::from_json(wire, what, out);
  REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  return out;
}

CsvRows exported(const std::string& dsn, bool per_epoch) {
  std::vector<std::string> args = {"--db", dsn};
  if (per_epoch) args.push_back("--per-epoch");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(analysis::export_main(args, out, err) == 0, err.str());
  std::istringstream in(out.str());
  std::string line;
  auto header = analysis::split_record(std::getline(in, line) ? line : "", "header");
  REQUIRE(header.is_ok());
  CsvRows rows;
  while (std::getline(in, line)) {
    auto cells = analysis::split_record(line, "row");
    REQUIRE(cells.is_ok());
    REQUIRE(cells->size() == header->size());
    rows.emplace_back();
    for (size_t i = 0; i < cells->size(); ++i) rows.back()[header.value()[i]] = cells.value()[i];
  }
  return rows;
}

#define JS_READ(var, expr)                                              \
  auto var = (expr);                                                    \
  REQUIRE_MESSAGE(var.is_ok(), #expr << ": " << var.status().to_string())

Reads read_everything(Populated& f) {
  Reads r;
  JS_READ(report, f.store.campaign_report(f.campaign_id, controller::ReportEpochs::kRows));
  r.report = report.value();
  r.report_wire = api::to_json(r.report);
  r.report_cli = round_trip(r.report, "report");
  r.report_text = cli::format_report(r.report_cli);
  JS_READ(status, f.store.campaign_status(f.campaign_id));
  r.status = round_trip(status.value(), "status");
  r.status_text = cli::format_status(r.status, true);
  JS_READ(campaigns, f.store.list_campaigns());
  r.campaigns = campaigns.value();
  JS_READ(agents, f.store.list_agents());
  for (const auto& a : agents.value()) r.agents.push_back(round_trip(a, "agent"));
  JS_READ(estimate, f.store.estimate_inputs());
  r.estimate = estimate.value();
  JS_READ(cancelled, f.store.cancel_run(f.run_id));
  r.cancelled = round_trip(cancelled.value(), "cancelled");
  JS_READ(to_stop, f.store.runs_to_stop());
  r.to_stop = to_stop.value();
  JS_READ(samples, f.store.run_samples(f.run_id));
  for (const auto& s : samples.value()) r.samples.push_back(round_trip(s, "sample"));
  JS_READ(corpus, analysis::load_corpus_from_db(f.db.dsn(), {}));
  r.corpus = corpus.value();
  r.mode_csv = exported(f.db.dsn(), false);
  r.epoch_csv = exported(f.db.dsn(), true);
  REQUIRE(r.report.runs.size() == 2);
  REQUIRE(r.report.runs[0].epochs.size() == 2);
  REQUIRE(r.corpus.epochs.size() == 2);
  REQUIRE(r.epoch_csv.size() == 2);
  return r;
}

// The finished run's epochs, as the Store gave them and as the CLI read them from the JSON.
std::vector<api::ReportEpoch> epochs_of(const Reads& r) {
  auto out = r.report.runs[0].epochs;
  for (const auto& e : r.report_cli.runs[0].epochs) out.push_back(e);
  return out;
}
const bj::object& wire_run(const Reads& r) { return r.report_wire.at("runs").as_array()[0].as_object(); }
const bj::object& wire_epoch(const Reads& r) { return wire_run(r).at("epochs").as_array()[0].as_object(); }
bool absent(const bj::object& o, const char* key) { return !o.contains(key) || o.at(key).is_null(); }
bool csv_empty(const CsvRows& rows, const char* column) {
  for (const auto& row : rows)
    if (row.at(column) != "") return false;
  return !rows.empty();
}

}  // namespace
