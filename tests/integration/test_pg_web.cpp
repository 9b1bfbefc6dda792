// PgStore's reads for the dashboard's run page against a real PostgreSQL (a fresh database per test): one run as
// in its campaign's report (GET /api/runs/ID) and its telemetry samples on the controller's clock
// (GET /api/runs/ID/samples), agreeing with MemoryStore's (tests/controller/test_web.cpp).
#include <doctest/doctest.h>

#include "controller/pg_store.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

proto::Register sim_agent(const std::string& name) {
  proto::Register reg;
  reg.name = name;
  reg.facts.hostname = "h";
  reg.facts.cpus = 4;
  reg.facts.mem_bytes = int64_t{8} << 30;
  reg.facts.backend = "sim";
  reg.facts.device_class = "host";
  return reg;
}

}  // namespace

TEST_CASE("PgStore: run_detail is the run as its campaign's report has it; run_samples its samples in time order") {
  TestDatabase db;
  controller::PgStore store{db.dsn()};
  REQUIRE(store.migrate().is_ok());
  auto agent = store.register_agent(sim_agent("a1"), controller::AgentProof{std::nullopt, std::string(64, 'a')});
  REQUIRE(agent.is_ok());
  auto parsed = parse_campaign("campaign: web\nmatrix: {model: lenet5, dataset: mnist, batch_size: [8, 16]}\n", "w.yaml");
  REQUIRE(parsed.is_ok());
  auto created = store.create_campaign(parsed.value(), "w.yaml", "", "");
  REQUIRE(created.is_ok());
  auto claimed = store.claim_run(agent->agent_id, "host", "");
  REQUIRE(claimed.is_ok());
  REQUIRE(claimed->has_value());
  const int64_t run_id = (*claimed)->run_id;

  CHECK(store.run_detail(run_id + 1000).status().code() == Code::kNotFound);
  CHECK(store.run_samples(run_id + 1000).status().code() == Code::kNotFound);
  auto empty = store.run_samples(run_id);
  REQUIRE(empty.is_ok());
  CHECK(empty->empty());

  proto::RunStarted started;
  started.run_id = run_id;
  started.compute_device = "simulated";
  started.t0_unix_s = 2000;
  REQUIRE(store.start_run(agent->agent_id, started).is_ok());
  REQUIRE(store.record_clock(agent->agent_id, 0.25, 0.001, std::nullopt).is_ok());   // the agent's clock is 0.25 s ahead
  for (int64_t epoch : {0, 1}) {
    proto::EpochResult e;
    e.run_id = run_id;
    e.epoch = epoch;
    e.e2e_s = 2.0 + static_cast<double>(epoch);
    e.stall_s = 0.5;
    e.compute_s = 1.0;
    e.minibatches = 4;
    e.energy_j = 10.0;
    e.t_start_s = 3.0 * static_cast<double>(epoch);
    e.t_end_s = e.t_start_s.value() + e.e2e_s;
    REQUIRE(store.ingest_epoch(agent->agent_id, e).is_ok());
  }
  proto::SampleChunk chunk;
  chunk.run_id = run_id;
  chunk.t0_unix_s = 2000;
  chunk.samples = {{1.5, 60, {}, std::nullopt, 1100, 20, std::nullopt}, {0.5, 40, {10, 70}, 1400.0, 1000, 10, 5.5}};
  REQUIRE(store.ingest_samples(agent->agent_id, chunk).is_ok());

  auto detail = store.run_detail(run_id);
  REQUIRE_MESSAGE(detail.is_ok(), detail.status().to_string());
  CHECK(detail->campaign_id == created->campaign_id);
  CHECK(detail->campaign_name == "web");
  auto report = store.campaign_report(created->campaign_id, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  REQUIRE(report->runs.size() == 2);
  // Identical to the report's entry for the run, field by field (compared as the JSON the API sends).
  CHECK(api::to_json(static_cast<const api::ReportRun&>(*detail)) == api::to_json(report->runs[0]));
  CHECK(detail->simulated);
  CHECK(detail->compute_device == std::optional<std::string>("simulated"));
  REQUIRE(detail->epochs.size() == 2);
  CHECK(detail->epochs[1].e2e_s == 3.0);

  auto samples = store.run_samples(run_id);
  REQUIRE_MESSAGE(samples.is_ok(), samples.status().to_string());
  REQUIRE(samples->size() == 2);
  CHECK(samples->at(0).t_s == 0.5);                                   // ordered by t_s
  CHECK(samples->at(0).t_unix_s == std::optional<double>(2000.25));   // agent t0 + t_s - clock offset
  CHECK(samples->at(0).power_w == std::optional<double>(5.5));
  CHECK(samples->at(0).cpu_freq_mhz == std::optional<double>(1400.0));
  CHECK(samples->at(0).cpu_util_pct == 40);
  CHECK(samples->at(1).power_w == std::nullopt);
  CHECK(samples->at(1).cpu_freq_mhz == std::nullopt);
  CHECK(samples->at(1).mem_used_kb == 1100);
  CHECK(samples->at(1).disk_read_bytes == 20);
  // The second run has no samples and is not started: no Unix times either.
  auto other = store.run_detail(report->runs[1].run_id);
  REQUIRE(other.is_ok());
  CHECK(other->status == "queued");
  CHECK(api::to_json(static_cast<const api::ReportRun&>(*other)) == api::to_json(report->runs[1]));
}
