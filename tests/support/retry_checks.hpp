// Use cases retried after their first attempt took effect (issue 32): a submission and a claim carry a key the
// controller mints once, and the store answers the retry with what the first attempt did. Run against MemoryStore
// and PgStore (tests/store). One test thread.
#pragma once

#include <doctest/doctest.h>

#include "support/ingest_outcome_checks.hpp"

namespace jetsweep::testing {

inline void check_retried_use_cases(controller::Store& store) {
  const std::string yaml = "campaign: retried\nmatrix: {model: lenet5, dataset: mnist, device: host, batch_size: [8, 16]}\n";
  auto parsed = parse_campaign(yaml, "retried.yaml");
  REQUIRE(parsed.is_ok());
  const auto campaigns_named = [&](const std::string& name) {
    auto all = store.list_campaigns();
    REQUIRE(all.is_ok());
    return std::count_if(all->begin(), all->end(), [&](const api::CampaignStatus& c) { return c.name == name; });
  };
  // A submission retried with its key: the campaign its first attempt created, once.
  auto first = store.create_campaign(parsed.value(), "retried.yaml", yaml, "submission-1");
  auto again = store.create_campaign(parsed.value(), "retried.yaml", yaml, "submission-1");
  REQUIRE_MESSAGE(first.is_ok(), first.status().to_string());
  REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
  CHECK(again->campaign_id == first->campaign_id);
  CHECK(again->runs == 2);
  CHECK(campaigns_named("retried") == 1);
  // Another key (or none) is another submission.
  auto other = store.create_campaign(parsed.value(), "retried.yaml", yaml, "submission-2");
  REQUIRE(other.is_ok());
  CHECK(other->campaign_id != first->campaign_id);
  CHECK(campaigns_named("retried") == 2);
  REQUIRE(store.set_campaign_state(other->campaign_id, "cancelled").is_ok());

  // A claim retried with its key: the run the first attempt assigned, claimed once.
  auto agent = store.register_agent(OutcomeFixture::host_agent("retrier"),
                                    controller::AgentProof{std::nullopt, std::string(64, 'd'), true});
  REQUIRE(agent.is_ok());
  auto claimed = store.claim_run(agent->agent_id, "host", "claim-1");
  REQUIRE_MESSAGE(claimed.is_ok(), claimed.status().to_string());
  REQUIRE(claimed->has_value());
  const int64_t run = (*claimed)->run_id;
  auto retried = store.claim_run(agent->agent_id, "host", "claim-1");
  REQUIRE(retried.is_ok());
  REQUIRE(retried->has_value());
  CHECK((*retried)->run_id == run);
  CHECK((*retried)->config.batch_size == (*claimed)->config.batch_size);
  auto detail = store.run_detail(run);
  REQUIRE(detail.is_ok());
  CHECK(detail->attempts == 1);
  CHECK(detail->status == "assigned");
  // The next claim (another key) gets the other run; once that run has started, its key no longer names a claim.
  auto next = store.claim_run(agent->agent_id, "host", "claim-2");
  REQUIRE(next.is_ok());
  REQUIRE(next->has_value());
  CHECK((*next)->run_id != run);
  proto::RunStarted started;
  started.run_id = (*next)->run_id;
  started.t0_unix_s = 1;
  REQUIRE(store.start_run(agent->agent_id, started).is_ok());
  auto after_start = store.claim_run(agent->agent_id, "host", "claim-2");
  REQUIRE(after_start.is_ok());
  CHECK_FALSE(after_start->has_value());   // nothing else queued: the started run is not handed out again
}

}  // namespace jetsweep::testing
