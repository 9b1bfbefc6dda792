// A fresh database (the real migrations) with one campaign of one run, claimed by agent "a1" (a host agent):
// the fixture of the PgStore integration tests. One test thread.
#pragma once

#include <doctest/doctest.h>

#include "controller/pg_store.hpp"
#include "support/fleet.hpp"

namespace jetsweep::testing {

inline proto::Register host_agent(const std::string& name) {
  proto::Register reg;
  reg.name = name;
  reg.facts.hostname = "h";
  reg.facts.cpus = 4;
  reg.facts.mem_bytes = int64_t{8} << 30;
  reg.facts.backend = "host";
  reg.facts.device_class = "host";
  return reg;
}

// A fresh database with one campaign of one run, claimed by agent "a1".
struct OneClaimedRun {
  OneClaimedRun() {
    REQUIRE(store.migrate().is_ok());
    auto id = store.register_agent(host_agent("a1"), controller::AgentProof{std::nullopt, std::string(64, 'a')});
    REQUIRE(id.is_ok());
    agent_id = id->agent_id;
    auto parsed = parse_campaign("campaign: diverge\nmatrix:\n  model: lenet5\n  dataset: mnist\n  epochs: 2\n", "d.yaml");
    REQUIRE(parsed.is_ok());
    campaign = parsed.value();
    auto created = store.create_campaign(campaign, "d.yaml", "", "");
    REQUIRE(created.is_ok());
    campaign_id = created->campaign_id;
    auto claimed = store.claim_run(agent_id, "host", "");
    REQUIRE(claimed.is_ok());
    REQUIRE(claimed->has_value());
    run_id = (*claimed)->run_id;
  }
  TestDatabase db;
  controller::PgStore store{db.dsn()};
  Campaign campaign;
  int64_t agent_id = 0, campaign_id = 0, run_id = 0;
};


}  // namespace jetsweep::testing
