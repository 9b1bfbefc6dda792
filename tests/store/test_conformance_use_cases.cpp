// The Store contracts written as shared checks (tests/support/*_checks.hpp), each run against MemoryStore and PgStore
// (issue 32): admission, retried submissions and claims, ingest outcomes, report summaries, board reboots, enrolled
// boards' tables, model files and adaptive plans. Where PostgreSQL can show more than the contract (the rows kept
// apart, the credential's hash), the PgBackend case checks that too.
#include <doctest/doctest.h>

#include "store/store_backends.hpp"
#include "support/adaptive_store_checks.hpp"
#include "support/admission_checks.hpp"
#include "support/ingest_outcome_checks.hpp"
#include "support/model_file_checks.hpp"
#include "support/reboot_store_checks.hpp"
#include "support/report_summary_checks.hpp"
#include "support/retry_checks.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

TEST_SUITE("store conformance") {

TEST_CASE_TEMPLATE("admission: one transaction, idempotent under retry, refused without a trace", B, JETSWEEP_STORES) {
  B b;
  check_admission(b.store);
  if constexpr (B::kPostgres)
    CHECK(b.db.count("SELECT count(*) FROM agent_credentials c JOIN agents a ON a.id = c.agent_id WHERE a.name = "
                     "'admitted' AND c.credential_sha256 = repeat('1', 64)") == 1);
}

TEST_CASE_TEMPLATE("a submission and a claim retried with their keys: what the first attempt did, once", B,
                   JETSWEEP_STORES) {
  B b;
  check_retried_use_cases(b.store);
}

TEST_CASE_TEMPLATE("ingest outcomes: stored, duplicate or set aside (issue 29)", B, JETSWEEP_STORES) {
  B b;
  check_ingest_outcomes(b.store);
  if constexpr (B::kPostgres) {
    // What was set aside is kept as the frame it came in, with the run's state when it came.
    CHECK(b.db.count("SELECT count(*) FROM set_aside_results") == 6);
    CHECK(b.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'epoch_result' AND "
                     "reason LIKE 'the run is running on agent %' AND frame->>'type' = 'epoch_result'") == 2);
    CHECK(b.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'run_finished' AND "
                     "reason = 'the run is done on this agent'") == 1);
    CHECK(b.db.count("SELECT count(*) FROM set_aside_results WHERE reason LIKE 'the run is queued (agent gone%'") == 1);
  }
}

TEST_CASE_TEMPLATE("a report without epoch rows carries each run's summary of them, equal to the rows' to the bit", B,
                   JETSWEEP_STORES) {
  B b;
  check_report_summaries(b.store);
}

TEST_CASE_TEMPLATE("board reboots: fewest-reboot claims, runs held while the board is away, a replay recorded once", B,
                   JETSWEEP_STORES) {
  B b;
  check_reboot_semantics(b.store, [&](double s) { b.pass(s); });
}

TEST_CASE_TEMPLATE("enrolled boards: the frequency tables each registered, replaced on registering again", B,
                   JETSWEEP_STORES) {
  B b;
  check_enrolled_board_facts(b.store);
}

TEST_CASE_TEMPLATE("model files: chunked uploads checked by size and SHA-256, kept once, served chunk by chunk", B,
                   JETSWEEP_STORES) {
  B b;
  check_model_files(b.store);
}

TEST_CASE_TEMPLATE("adaptive plans: created with the campaign, due while no run is open, each round created once", B,
                   JETSWEEP_STORES) {
  B b;
  check_adaptive_plans(b.store);
}

TEST_CASE_TEMPLATE("migrations: applied once, and again without change", B, JETSWEEP_STORES) {
  B b;   // PgBackend migrated its fresh database already
  REQUIRE(b.store.migrate().is_ok());
  REQUIRE(b.store.migrate().is_ok());
  auto campaigns = b.store.list_campaigns();
  REQUIRE(campaigns.is_ok());
  CHECK(campaigns->empty());
  CHECK(b.store.list_agents()->empty());
  CHECK(b.store.estimate_inputs()->measured.empty());
  CHECK(b.store.adaptive_plans_due()->empty());
  CHECK(b.store.campaign_status(1).status().code() == Code::kNotFound);
  CHECK(b.store.run_detail(1).status().code() == Code::kNotFound);
}

}  // TEST_SUITE
