// An agent's registration as one use case (Store::admit_agent, issue 32): registered and its stale runs requeued in
// one transaction; retried after its answer was lost it completes with the credential the agent receives; refused,
// it changes nothing. Run against MemoryStore and PgStore (tests/store). One test thread.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "support/ingest_outcome_checks.hpp"

namespace jetsweep::testing {

inline void check_admission(controller::Store& store) {
  OutcomeFixture f(store);   // agents outcome-a and outcome-b (credential "c" x 64), a two-run campaign
  proto::Register reg = OutcomeFixture::host_agent("admitted");
  const std::string x(64, '1'), y(64, '2');
  const controller::AgentProof first{std::nullopt, x, true};
  auto enrolled = store.admit_agent(reg, first, "re-registered");
  REQUIRE_MESSAGE(enrolled.is_ok(), enrolled.status().to_string());
  CHECK(enrolled->enrolled);
  // The same registration retried (its answer was lost after the commit): accepted, and the credential it minted
  // is still the one to send - the board is not locked out.
  auto retried = store.admit_agent(reg, first, "re-registered");
  REQUIRE_MESSAGE(retried.is_ok(), retried.status().to_string());
  CHECK(retried->agent_id == enrolled->agent_id);
  CHECK(retried->enrolled);
  // Anyone else without the credential is refused; with it, accepted (nothing new to send).
  auto stranger = store.admit_agent(reg, controller::AgentProof{std::nullopt, y, true}, "re-registered");
  REQUIRE_FALSE(stranger.is_ok());
  CHECK(stranger.status().code() == Code::kPermissionDenied);
  auto proper = store.admit_agent(reg, controller::AgentProof{x, y, true}, "re-registered");
  REQUIRE(proper.is_ok());
  CHECK_FALSE(proper->enrolled);

  // Runs it held but no longer executes go back to the queue in the same transaction; those it still executes or
  // holds in its journal stay.
  const int64_t run1 = f.claim(enrolled->agent_id);
  const int64_t run2 = f.claim(enrolled->agent_id);
  reg.current_run = run1;
  auto kept = store.admit_agent(reg, controller::AgentProof{x, y, true}, "re-registered without it");
  REQUIRE(kept.is_ok());
  CHECK(kept->requeued == 1);
  CHECK(f.run_state(run1).status == "assigned");
  CHECK(f.run_state(run2).status == "queued");
  // A refused registration changes nothing: its runs stay with it.
  reg.current_run.reset();
  auto refused = store.admit_agent(reg, controller::AgentProof{y, y, true}, "re-registered without it");
  REQUIRE_FALSE(refused.is_ok());
  CHECK(f.run_state(run1).status == "assigned");
  reg.journal_runs = {run1};   // its results still in the journal: kept
  auto journal = store.admit_agent(reg, controller::AgentProof{x, y, true}, "re-registered without it");
  REQUIRE(journal.is_ok());
  CHECK(journal->requeued == 0);
  CHECK(f.run_state(run1).status == "assigned");
}

}  // namespace jetsweep::testing
