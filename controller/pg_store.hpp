// PostgreSQL implementation of Store (libpqxx 6.4). Owns one connection, reconnecting when it breaks.
// Sources: pg_store.cpp (connection, migrations, fleet), pg_dispatch.cpp (claims, requeues, cancels),
// pg_ingest.cpp (results), pg_campaigns.cpp (submission, estimate inputs), pg_queries.cpp (status, report).
// Used from one thread at a time (the DbWorker's).
#pragma once

#include <memory>
#include <string>

#include <pqxx/connection>
#include <pqxx/transaction>

namespace pqxx {
class sql_error;
}

#include "controller/store.hpp"

namespace jetsweep::controller {

class PgStore final : public Store {
 public:
  // `max_attempts`: how many times a run may be assigned before it is declared lost.
  explicit PgStore(std::string dsn, int max_attempts = 3);
  ~PgStore() override;

  // Opens (or re-opens) the connection; kUnavailable when the server cannot be reached.
  Status connect();
  bool connected() const;

  Status migrate() override;
  Status reset_connections() override;
  Result<AgentRegistration> register_agent(const proto::Register& reg, const AgentProof& proof) override;
  Result<AgentRegistration> admit_agent(const proto::Register& reg, const AgentProof& proof,
                                        const std::string& why) override;
  Result<bool> revoke_agent_credential(const std::string& name) override;
  Status set_agent_connected(int64_t agent_id, bool connected) override;
  Result<int64_t> requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                     const std::string& why) override;
  Result<int64_t> requeue_orphaned_runs(double lease_s) override;
  Status record_boot_offset(int64_t agent_id, const BootClockOffset& boot) override;
  Status record_clock(int64_t agent_id, double offset_s, double rtt_s,
                      const std::optional<BootClockOffset>& boot) override;
  Status set_campaign_state(int64_t campaign_id, const std::string& state) override;
  Result<std::optional<Assignment>> claim_run(int64_t agent_id, const std::string& device_class,
                                              const std::string& claim_key) override;
  Result<api::RunCancelled> cancel_run(int64_t run_id) override;
  Result<std::vector<RunOnAgent>> runs_to_stop() override;
  Status unclaim_run(int64_t run_id, int64_t agent_id) override;
  Result<IngestOutcome> ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) override;
  Result<IngestOutcome> start_run(int64_t agent_id, const proto::RunStarted& m) override;
  Result<IngestOutcome> ingest_epoch(int64_t agent_id, const proto::EpochResult& m) override;
  Result<IngestOutcome> ingest_samples(int64_t agent_id, const proto::SampleChunk& m) override;
  Result<IngestOutcome> finish_run(int64_t agent_id, const proto::RunFinished& m) override;
  Result<IngestOutcome> record_reboot(int64_t agent_id, const proto::RebootPending& m) override;
  Result<IngestOutcome> set_aside_refused(int64_t agent_id, const proto::Body& body, const std::string& why) override;
  Status ingest_batch(std::vector<IngestItem>& items) override;
  Result<CreatedCampaign> create_campaign(const Campaign& c, const std::string& source_file,
                                          const std::string& source_yaml, const std::string& request_key) override;
  Result<int64_t> resolve_campaign(const std::string& ref) override;
  Result<api::CampaignStatus> campaign_status(int64_t campaign_id) override;
  Result<std::vector<api::CampaignStatus>> list_campaigns() override;
  Result<api::CampaignReport> campaign_report(int64_t campaign_id, ReportEpochs epochs) override;
  Result<std::vector<api::AgentInfo>> list_agents() override;
  Result<api::RunDetail> run_detail(int64_t run_id) override;
  Result<std::vector<api::RunSample>> run_samples(int64_t run_id) override;
  Result<std::vector<AgentApplied>> agents_applied() override;
  Result<perf::EstimateInputs> estimate_inputs() override;
  Result<std::vector<perf::BoardGatingFacts>> enrolled_board_facts() override;
  // Adaptive plans (pg_adaptive.cpp).
  Result<std::vector<DuePlan>> adaptive_plans_due() override;
  Result<bool> add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                  const boost::json::object& fit) override;
  Status finish_adaptive_plan(int64_t plan_id, const std::string& state, const boost::json::object& fit,
                              const std::string& error) override;
  // Model files (pg_models.cpp).
  Status put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) override;
  Result<ModelFileInfo> complete_model_file(const std::string& sha256, int64_t bytes) override;
  Result<std::optional<ModelFileInfo>> model_file(const std::string& sha256) override;
  Result<std::string> model_file_chunk(const std::string& sha256, int64_t index) override;

 private:
  // Runs `fn` with a live connection, converting libpqxx exceptions to Status (kUnavailable when the
  // connection broke, so callers may retry; kDbError otherwise) with `what` as context.
  template <class Fn>
  auto guarded(const char* what, Fn&& fn) -> decltype(fn());   // defined in controller/pg_util.hpp
  // A libpqxx sql_error as a Status: kUnavailable when transient_sqlstate(), or resource_sqlstate() while
  // ingesting_ (the connection then marked to be dropped once guarded's `fn` has returned); kDbError otherwise.
  Status sql_failure(const char* what, const pqxx::sql_error& e);
  // register_agent's work inside `w` (the caller commits).
  Result<AgentRegistration> register_in(pqxx::work& w, const proto::Register& reg, const AgentProof& proof);
  // requeue_agent_runs' work inside `w` (pg_dispatch.cpp; the caller commits): how many runs.
  int64_t requeue_agent_runs_in(pqxx::work& w, int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                const std::string& why);
  // One result message in a transaction of its own (pg_ingest.cpp).
  Result<IngestOutcome> ingest_alone(int64_t agent_id, const proto::Body& body);
  Status ingest_batch_with_savepoints(std::vector<IngestItem>& items);

  std::string dsn_;
  int max_attempts_;
  std::unique_ptr<pqxx::connection> conn_;
  // Set when conn_ must be replaced; guarded drops it after its `fn` (never while a transaction may refer to it).
  bool drop_connection_ = false;
  // Set while an agent's result messages are written (pg_ingest.cpp): a resource error is then retried until the
  // server has room again, as a result is never acknowledged unstored. Any other call fails with it: an API
  // request or a claim that keeps failing must not hold the controller's main database thread for ever.
  bool ingesting_ = false;
};

// Whether a statement that failed with this SQLSTATE may succeed if retried as it is, so the use case is retried
// (kUnavailable) instead of failing: admin shutdown or cannot-connect-now (class 57, 08).
bool transient_sqlstate(const std::string& sqlstate);
// Whether it is the server short of a resource it may get back: disk full 53100, out of memory 53200, too many
// connections 53300, an I/O error 58030. Retried while ingesting (a result message is never acknowledged unstored:
// the agents keep their results until there is room); any other call fails with it. Not 53400 (a configured limit
// the statement itself exceeds: retrying cannot help).
bool resource_sqlstate(const std::string& sqlstate);

// pg_adaptive.cpp, inside the callers' transactions: a submitted campaign's plans (create_campaign), and a
// campaign's plans as its status shows them (with their whole fits when `with_fit`).
void pg_insert_adaptive_plans(pqxx::work& w, int64_t campaign_id, const Campaign& c);
Result<std::vector<api::AdaptivePlanStatus>> pg_adaptive_plan_statuses(pqxx::work& w, int64_t campaign_id,
                                                                       bool with_fit);

// The numbered migrations compiled into the binary from sql/*.sql (generated at build time).
struct Migration {
  int version;
  const char* name;
  const char* sql;
};
const Migration* migrations(size_t& count);
// sql/views.sql: the analysis views, applied after the migrations when its text changed or a migration ran.
const char* analysis_views_sql();

}  // namespace jetsweep::controller
