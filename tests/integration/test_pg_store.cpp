// PgStore against a real PostgreSQL (a fresh database per test, made by the real migrations): the typed
// queries read every nullable column safely.
#include <doctest/doctest.h>

#include "controller/pg_store.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

proto::Register host_agent(const std::string& name) {
  proto::Register reg;
  reg.name = name;
  reg.facts.hostname = "h";
  reg.facts.cpus = 4;
  reg.facts.mem_bytes = int64_t{8} << 30;
  reg.facts.backend = "host";
  reg.facts.device_class = "host";
  return reg;
}

}  // namespace

TEST_CASE("an epoch with a NULL loss (a diverged model) is reported as null, not an error") {
  TestDatabase db;
  controller::PgStore store(db.dsn());
  REQUIRE(store.migrate().is_ok());
  auto agent_id = store.register_agent(host_agent("a1"));
  REQUIRE(agent_id.is_ok());
  auto campaign = parse_campaign("campaign: diverge\nmatrix:\n  model: lenet5\n  dataset: mnist\n  epochs: 2\n", "d.yaml");
  REQUIRE(campaign.is_ok());
  auto created = store.create_campaign(campaign.value(), "d.yaml", "");
  REQUIRE(created.is_ok());
  auto claimed = store.claim_run(agent_id.value(), "host");
  REQUIRE(claimed.is_ok());
  REQUIRE(claimed->has_value());
  const int64_t run_id = (*claimed)->run_id;

  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = 0;
  e.e2e_s = 2.0;
  e.stall_s = 0.5;
  e.compute_s = 1.5;
  e.minibatches = 10;
  e.loss = std::numeric_limits<double>::quiet_NaN();   // stored as NULL
  REQUIRE(store.ingest_epoch(agent_id.value(), e).is_ok());
  e.epoch = 1;
  e.loss = 0.25;
  REQUIRE(store.ingest_epoch(agent_id.value(), e).is_ok());
  CHECK(db.count("SELECT count(*) FROM epochs WHERE loss IS NULL") == 1);

  auto report = store.campaign_report(created->campaign_id);
  REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  REQUIRE(report->runs.size() == 1);
  const auto& run = report->runs[0];
  CHECK(run.status == "running");
  CHECK(run.agent == std::optional<std::string>("a1"));
  CHECK_FALSE(run.wall_s.has_value());
  CHECK_FALSE(run.applied.has_value());
  REQUIRE(run.epochs.size() == 2);
  CHECK_FALSE(run.epochs[0].loss.has_value());
  CHECK(run.epochs[1].loss == std::optional<double>(0.25));
  CHECK_FALSE(run.epochs[0].energy_j.has_value());
  CHECK_FALSE(run.epochs[0].clocks_start.has_value());
  CHECK_FALSE(report->power_sensor);
  const auto wire = api::to_json(report.value());
  CHECK(wire.at("runs").as_array()[0].as_object().at("epochs").as_array()[0].as_object().at("loss").is_null());

  auto status = store.campaign_status(created->campaign_id);
  REQUIRE(status.is_ok());
  CHECK(status->running == 1);
  CHECK(status->epochs_done == 2);
  CHECK_FALSE(status->finished);
  auto agents = store.list_agents();
  REQUIRE(agents.is_ok());
  REQUIRE(agents->size() == 1);
  CHECK(agents->front().current_run == std::optional<int64_t>(run_id));
  CHECK(agents->front().ready());
  auto inputs = store.estimate_inputs();
  REQUIRE(inputs.is_ok());
  REQUIRE(inputs->measured.size() == 1);
  CHECK(inputs->measured[0].epochs == 2);
  CHECK(inputs->measured[0].power_mode == perf::power_mode_key(campaign->runs[0]));
}
