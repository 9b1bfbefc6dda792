// MemoryStore: an in-memory Store with PgStore's semantics (sql/ migrations and controller/pg_store.cpp):
// the fleet, campaigns, the run queue with attempts and leases, cancels, and idempotent ingest that drops
// rows of runs the sender does not own or that have ended. For tests of the controller without PostgreSQL; its clock is
// injectable so lease expiry is tested without waiting. Owns its tables; every method locks one mutex, so
// any thread may call it (the DbWorker's, and a test inspecting it).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "controller/store.hpp"

namespace jetsweep::controller {

class MemoryStore final : public Store {
 public:
  using Clock = std::function<double()>;   // Unix seconds ("now()" of the database)

  struct Agent {
    int64_t id = 0;
    std::string name;
    proto::DeviceFacts facts;
    bool connected = false;
    double first_seen = 0, last_seen = 0;
    std::optional<double> clock_offset_s, clock_rtt_s, clock_measured_at;
    std::optional<BootClockOffset> boot;   // agents.boot_id, boot_offset_s
    std::map<std::string, double> boot_offsets;   // agent_boot_offsets: boot_id -> offset_s
    std::optional<std::string> credential_sha256;   // agent_credentials
    std::optional<double> away_until;   // rebooting its board (record_reboot) until then; cleared at registration
  };
  struct CampaignRow {
    int64_t id = 0;
    std::string name, description, source_file, source_yaml;
    int64_t run_count = 0;
    int64_t priority = 0;
    std::string state = "active";   // active | paused | cancelled
    double created_at = 0;
    std::string request_key;        // the submission's (create_campaign); "" for none
  };
  struct Run {
    int64_t id = 0;
    int64_t campaign_id = 0;
    int64_t ordinal = 0;
    boost::json::object config;
    std::string device;
    int64_t epochs = 0;
    std::string status = "queued";
    std::optional<int64_t> agent_id;
    std::optional<boost::json::object> facts;
    int64_t attempts = 0;
    std::string error;
    double queued_at = 0;
    std::optional<double> assigned_at, started_at, finished_at, wall_s, agent_t0_unix_s;
    std::optional<double> clock_offset_s;   // its agent's, when agent_t0_unix_s was stored (runs.clock_offset_s)
    std::string agent_boot_id;              // runs.agent_boot_id ("" for NULL), agent_t0_boot_s
    std::optional<double> agent_t0_boot_s;
    bool cancel_requested = false;
    int64_t min_mem_bytes = 0;
    std::optional<std::string> storage;
    std::vector<std::string> unfit_classes;
    std::optional<proto::BoardState> applied;
    std::optional<bool> reference_state, page_cache_dropped;
    std::optional<std::string> storage_device, compute_device;
    std::optional<proto::WorkloadFacts> workload;
    std::string claim_key;   // the claim that assigned it (claim_run); "" for none
    std::optional<int64_t> adaptive_plan_id, adaptive_round;
  };
  struct Plan {
    int64_t id = 0;
    int64_t campaign_id = 0;
    AdaptivePlanSpec spec;
    std::string state = "profiling";
    int64_t rounds = 0;
    std::string error;
    std::optional<boost::json::object> fit;
    std::map<int64_t, boost::json::object> round_fits;   // by round
  };
  struct MinibatchRow {
    double stall_s = 0, compute_s = 0;
    std::optional<double> copy_s;
  };

  // `max_attempts`: how many times a run may be assigned before it is declared lost. `clock`: empty = the
  // system clock.
  explicit MemoryStore(int max_attempts = 3, Clock clock = {});

  // Tests and fuzzing (fuzz/fuzz_api.cpp): this store's rows and id counters become a copy of `other`'s, so
  // a store reused for many cases starts each from the same state (max_attempts and the clock stay). Any
  // thread; `other` is not `this`.
  void copy_contents_from(const MemoryStore& other);

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
  Status record_clock(int64_t agent_id, double offset_s, double rtt_s,
                      const std::optional<BootClockOffset>& boot) override;
  Status record_boot_offset(int64_t agent_id, const BootClockOffset& boot) override;
  Status set_campaign_state(int64_t campaign_id, const std::string& state) override;
  Result<std::optional<Assignment>> claim_run(int64_t agent_id, const std::string& device_class,
                                              const std::string& claim_key) override;
  Result<api::RunCancelled> cancel_run(int64_t run_id) override;
  Result<std::vector<RunOnAgent>> runs_to_stop() override;
  Status unclaim_run(int64_t run_id, int64_t agent_id) override;
  Result<IngestOutcome> start_run(int64_t agent_id, const proto::RunStarted& m) override;
  Result<IngestOutcome> ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) override;
  Result<IngestOutcome> ingest_epoch(int64_t agent_id, const proto::EpochResult& m) override;
  Result<IngestOutcome> ingest_samples(int64_t agent_id, const proto::SampleChunk& m) override;
  Result<IngestOutcome> finish_run(int64_t agent_id, const proto::RunFinished& m) override;
  Result<IngestOutcome> record_reboot(int64_t agent_id, const proto::RebootPending& m) override;
  Result<IngestOutcome> set_aside_refused(int64_t agent_id, const proto::Body& body, const std::string& why) override;
  Result<perf::EstimateInputs> estimate_inputs() override;
  Result<std::vector<perf::BoardGatingFacts>> enrolled_board_facts() override;
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
  // Adaptive plans (memory_store_adaptive.cpp).
  Result<std::vector<DuePlan>> adaptive_plans_due() override;
  Result<bool> add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                  const boost::json::object& fit) override;
  Status finish_adaptive_plan(int64_t plan_id, const std::string& state, const boost::json::object& fit,
                              const std::string& error) override;
  // Model files (memory_store_models.cpp).
  Status put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) override;
  Result<ModelFileInfo> complete_model_file(const std::string& sha256, int64_t bytes) override;
  Result<std::optional<ModelFileInfo>> model_file(const std::string& sha256) override;
  Result<std::string> model_file_chunk(const std::string& sha256, int64_t index) override;

  // Snapshots for tests (any thread).
  std::optional<Run> run(int64_t run_id) const;
  std::optional<Agent> agent(int64_t agent_id) const;
  std::vector<Run> runs_of(int64_t campaign_id) const;
  size_t epoch_rows(int64_t run_id) const;
  size_t minibatch_rows(int64_t run_id) const;
  size_t sample_rows(int64_t run_id) const;

 private:
  // The callers hold mu_.
  double now() const;
  Run* find_run(int64_t run_id);
  Agent* find_agent(int64_t agent_id);
  // The agent's clock offset estimate now (nullopt: none yet), and the one that puts a run's times on the
  // controller's clock: the run's own, else its agent's, else 0 (as sql/views.sql).
  std::optional<double> agent_clock_offset(int64_t agent_id) const;
  double run_clock_offset(const Run& run) const;
  // The offset a run takes when its start is stored (or its agent's first estimate): by the boot clock when the run
  // was stamped in a boot with a remembered offset, else the agent's wall clock estimate (Store::record_clock).
  static std::optional<double> run_start_offset(const Agent& agent, const Run& run);
  // Remembers `boot`'s offset for the agent (replacing one there when `replace`); a boot remembered for the first time
  // places its runs again (as pg_store.cpp keep_boot_offset).
  void keep_boot_offset(Agent& agent, const BootClockOffset& boot, bool replace);
  // register_agent and requeue_agent_runs with mu_ held (admit_agent does both under one lock).
  Result<AgentRegistration> register_locked(const proto::Register& reg, const AgentProof& proof);
  int64_t requeue_agent_runs_locked(int64_t agent_id, const std::vector<int64_t>& keep_runs, const std::string& why);
  // Ingest (memory_store_ingest.cpp), as pg_ingest.cpp: a result for a run the agent does not hold is a duplicate
  // when the run ended on this agent and `stored` (all of it is in the run's rows), or when the same message was
  // set aside before; else it is set aside (set_aside_).
  IngestOutcome not_held(int64_t agent_id, const Run& run, bool stored, const proto::Body& body);
  void mark_running(int64_t run_id, int64_t agent_id);
  // Sends the run back to the queue, or declares it cancelled (cancel requested) or lost (out of attempts).
  void requeue_or_lose(Run& run, const std::string& why);
  bool board_busy(const Agent& me) const;
  std::optional<int64_t> pick_run(const Agent& me, const std::string& device_class) const;
  bool can_take(const Run& run, const Agent& me, const std::string& device_class) const;
  std::vector<const Agent*> enrolled_boards() const;
  std::vector<perf::BoardGatingFacts> enrolled_facts() const;   // enrolled_boards() by name, with their facts
  Result<Campaign> expand_every_instance(const Campaign& c, std::vector<std::string>& classes) const;
  void drop_results(int64_t run_id);
  // Read side (memory_store_queries.cpp).
  api::CampaignStatus status_of(const CampaignRow& c) const;
  std::vector<api::AdaptivePlanStatus> plan_statuses(int64_t campaign_id, bool with_fit) const;   // adaptive.cpp
  // One queued run of `cfg` (create_campaign, add_adaptive_round).
  Run& queue_run(int64_t campaign_id, int64_t ordinal, const RunConfig& cfg);
  std::vector<api::Unrunnable> unrunnable(int64_t campaign_id) const;
  api::ReportRun report_run(const Run& run) const;
  api::ReportEpoch report_epoch(const Run& run, const proto::EpochResult& e) const;

  int max_attempts_;
  Clock clock_;
  mutable std::mutex mu_;
  std::map<int64_t, Agent> agents_;
  std::map<int64_t, CampaignRow> campaigns_;
  std::map<int64_t, Run> runs_;
  std::map<std::pair<int64_t, int64_t>, proto::EpochResult> epochs_;              // (run, epoch)
  std::map<std::tuple<int64_t, int64_t, int64_t>, MinibatchRow> minibatches_;    // (run, epoch, idx)
  std::map<std::pair<int64_t, double>, proto::Sample> samples_;                  // (run, t_s)
  std::map<std::tuple<int64_t, int64_t, double>, proto::RebootPending> reboots_;  // (run, agent, requested_unix_s)
  struct SetAside {
    int64_t campaign_id = 0;
    std::string message_type, reason;
  };
  std::map<std::tuple<int64_t, int64_t, std::string>, SetAside> set_aside_;      // (run, agent, frame)
  std::map<int64_t, Plan> plans_;
  int64_t next_agent_id_ = 1, next_campaign_id_ = 1, next_run_id_ = 1, next_plan_id_ = 1;
  struct ModelFileRow {
    std::map<int64_t, std::string> chunks;
    std::optional<int64_t> bytes;   // set when the upload is complete
  };
  std::map<std::string, ModelFileRow> model_files_;
};

}  // namespace jetsweep::controller
