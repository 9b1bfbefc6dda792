// Storage interface of the controller: the fleet, campaigns, runs and their measurements.
// Every write is idempotent (keyed upserts / merges) so a retried or resent message is harmless.
// Implementations are used from the DbWorker thread only.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/adaptive_plan.hpp"
#include "common/api.hpp"
#include "common/campaign.hpp"
#include "common/perf/estimate.hpp"
#include "common/protocol.hpp"
#include "common/status.hpp"

namespace jetsweep::controller {

// Two clock offset estimates of one agent further apart than half their round trips together plus this (seconds)
// cannot both be right: the board's clock was stepped between them (Store::record_clock).
inline constexpr double kClockStepMarginS = 1.0;

// Whether the estimate (offset_s, rtt_s) shows a clock step since the kept one (Store::record_clock).
inline bool clock_stepped(double kept_offset_s, double kept_rtt_s, double offset_s, double rtt_s) {
  return std::abs(offset_s - kept_offset_s) > (rtt_s + kept_rtt_s) / 2 + kClockStepMarginS;
}

// An agent's boot clock offset (its boot clock minus the controller's wall clock, taken by the same probe as the
// wall clock's offset) and the boot it belongs to (proto::TimeSyncReply's boot fields; Store::record_clock).
struct BootClockOffset {
  std::string boot_id;
  double offset_s = 0;
};

// The clock offset a run started at t0_unix_s (and t0_boot_s on the boot clock of boot run_boot_id) takes: by the
// boot clock when the run was stamped in the boot of `boot` (the stores pass the run's own boot's remembered offset,
// the session its kept one), else the wall clock's kept estimate (none yet: none). PgStore states the same rule in SQL.
inline std::optional<double> run_start_offset(std::optional<double> wall_offset_s, const std::optional<BootClockOffset>& boot,
                                              double t0_unix_s, const std::string& run_boot_id,
                                              std::optional<double> t0_boot_s) {
  if (boot && t0_boot_s && !run_boot_id.empty() && run_boot_id == boot->boot_id)
    return t0_unix_s - (*t0_boot_s - boot->offset_s);
  return wall_offset_s;
}

struct Assignment {
  int64_t run_id = 0;
  RunConfig config;
};

struct RunOnAgent {
  int64_t run_id = 0;
  int64_t agent_id = 0;
};

// The board state an agent's current run executes in, else that of its last started run (runs.applied, the
// proto::BoardState JSON), for GET /api/fleet.
struct AgentApplied {
  int64_t agent_id = 0;
  int64_t run_id = 0;
  boost::json::object applied;
};

struct CreatedCampaign {
  int64_t campaign_id = 0;
  int64_t runs = 0;
};

// How a registration proves its name (controller/credentials.hpp makes the hashes; docs/SECURITY.md).
struct AgentProof {
  std::optional<std::string> presented_sha256;   // SHA-256 of the credential the agent presented, if any
  std::string issue_sha256;                      // SHA-256 of a fresh credential, kept if this registration enrolls
  bool may_enroll = true;   // the connection presented the enrollment secret (or none is set): it may enroll names
};
struct AgentRegistration {
  int64_t agent_id = 0;
  bool enrolled = false;   // issue_sha256 is the name's credential by this registration: send it to the agent
  int64_t requeued = 0;    // admit_agent: runs it held but no longer executes, requeued (or lost)
};

// What became of one result message the store took (Store::ingest_*; issue 29).
enum class IngestOutcome {
  kStored,      // written: it added or changed rows of a run its agent holds
  kDuplicate,   // everything in it was stored already (a resend after a lost ack, a journal replay): nothing written
  kSetAside,    // measured by an agent that no longer holds the run (requeued to another, lost, cancelled, or gone):
                // kept apart in set_aside_results, counted in its campaign's status, never mixed into the run's rows
};
const char* outcome_name(IngestOutcome o);   // stored | duplicate | set_aside
// set_aside_results.reason: the run's state when a result of agent `agent_id` came for it, e.g. "the run is running
// on agent 7 (agent frozen disconnected for more than 1 s)". `run_agent`: the run's agent, if any; `error`: its error.
std::string set_aside_reason(const std::string& status, std::optional<int64_t> run_agent, int64_t agent_id,
                             const std::string& error);
// set_aside_results.reason of a result the store refused (Store::set_aside_refused): "refused by the store: " and
// `why` without NUL characters, cut at a character to at most 1,000 bytes ("..." at the end when cut).
std::string refused_reason(const std::string& why);
// runs.error of a run whose 'done' or 'failed' end the store refused (Store::set_aside_refused): the end its agent
// reported, then refused_reason(why), e.g. "its agent reported it done; refused by the store: ...".
std::string refused_end_error(const proto::RunFinished& m, const std::string& why);
// The end a refused result reports when the refusal ends its run (Store::set_aside_refused): a 'done' or 'failed'
// run_finished; null for any other message, and for a 'cancelled' end (its agent shut down: the run is left to the
// requeue at the agent's next registration, as it would have been).
const proto::RunFinished* run_end_to_fail_when_refused(const proto::Body& body);
// Whether `m` is a graceful stop (a "cancelled" run_finished: its agent shut down mid-run) that the run's error
// `run_error` shows was stored: the run went back to the queue (or was then lost) for this very stop. Its replay
// (the ack was lost) is a duplicate wherever the run is now; it carries nothing measured (both stores).
bool stored_graceful_stop(const std::string& run_error, const proto::RunFinished& m);
// The run's error a graceful stop `m` leaves (requeued for it).
std::string graceful_stop_error(const proto::RunFinished& m);

// A model file the controller keeps (Store::complete_model_file); `completed_now`: this call completed the upload.
struct ModelFileInfo {
  std::string sha256;
  int64_t bytes = 0;
  int64_t chunks = 0;
  bool completed_now = false;
};
// Checks an upload's chunk sizes (`sizes`, by index from 0) and hash against what completing it claims; shared by
// every Store. kInvalidArgument naming the first difference.
Status check_model_upload(const std::string& sha256, int64_t bytes, const std::vector<int64_t>& sizes,
                          const std::string& actual_sha256);

// What a campaign report carries of its runs' epochs (Store::campaign_report).
enum class ReportEpochs { kRows, kSummaryOnly };

// One agent result message of a group commit (Store::ingest_batch) and what became of it.
struct IngestItem {
  int64_t agent_id = 0;
  proto::Body body;
  Status result;
  IngestOutcome outcome = IngestOutcome::kStored;   // when result is ok
};

// An adaptive plan ready for its next round (Store::adaptive_plans_due; issue 33).
struct DuePlan {
  int64_t plan_id = 0;
  int64_t campaign_id = 0;
  int64_t rounds = 0;                            // rounds created so far
  AdaptivePlanSpec spec;
  std::vector<PlanObservation> observations;     // its runs, all ended, by run id
  std::optional<boost::json::object> fit;        // the fit recorded with the last round, if any
};

// Storage medium a run's data names ("@NAME" or "@NAME/REL"), or "" for none (runs.storage).
std::string storage_medium_of(const std::string& data);

// The status of an adaptive plan from its stored row (both stores): the spec's budget and candidates, and the
// summary of `fit` (adaptive_planner.hpp's "summary" object), if any. `with_fit`: keep the whole fit.
api::AdaptivePlanStatus adaptive_plan_status(int64_t plan_id, const std::string& state, int64_t rounds,
                                             const AdaptivePlanSpec& spec, int64_t profiled, const std::string& error,
                                             const std::optional<boost::json::object>& fit, bool with_fit);
// One round of a plan from its stored row: `modes` its runs, `fit` the fit it was decided from (its "summary").
api::AdaptiveRoundStatus adaptive_round_status(int64_t round, int64_t modes, const boost::json::object* fit);

// A campaign with a plan still profiling is not finished (unless it was cancelled): its next round is to come.
void adaptive_unfinished(api::CampaignStatus& s);

// Queued runs of one campaign that need the same things, and how far the enrolled agents (connected, or seen in the
// last 24 hours) go towards taking them; each check holds for an agent that also passed the ones before it. Both
// stores' unrunnable() fill it (PgStore reads it from its grouping query's columns), unrunnable_of() says why.
struct UnrunnableGroup {
  int64_t n = 0;                        // queued runs in the group
  std::string device;                   // "any", a board class or an agent's name
  std::optional<std::string> storage;   // the medium the runs read from (agent --storage), none for the default
  int64_t min_mem_bytes = 0;            // the model's RAM need
  std::string mode;                     // the nvpmodel mode whose GPU mask the runs need; empty: any
  bool device_fits = false;             // an enrolled agent is `device`
  bool storage_fits = false;            // ... and offers `storage`
  bool mem_fits = false;                // ... and has min_mem_bytes of RAM
  bool model_fits = false;              // ... and is of a class the model fits on
  bool runnable = false;                // ... and runs `mode` or may reboot into it
};
BOOST_DESCRIBE_STRUCT(UnrunnableGroup, (),
                      (n, device, storage, min_mem_bytes, mode, device_fits, storage_fits, mem_fits, model_fits, runnable))

// Why the group's runs wait, naming the first check no agent passed; nullopt when an agent can take them.
std::optional<api::Unrunnable> unrunnable_of(const UnrunnableGroup& g);

class Store {
 public:
  virtual ~Store() = default;
  // Applies the numbered migrations not yet recorded in schema_migrations.
  virtual Status migrate() = 0;
  // Marks every agent disconnected (controller start: nobody is connected yet), and starts the lease of every agent
  // that was connected or holds runs afresh: an agent cannot have been seen while the controller was down, so an
  // outage of any length never requeues the runs of agents about to reconnect (issue 29).
  virtual Status reset_connections() = 0;

  // Records the agent and its facts. A name enrolled with a credential is accepted only when presented_sha256
  // matches it (else kPermissionDenied, and nothing changes); a name without one (new, or revoked) is enrolled
  // with issue_sha256 when proof.may_enroll (else kPermissionDenied). Idempotent under retry: a name whose
  // credential is already issue_sha256 (this registration enrolled it, and the answer was lost) is accepted and
  // reported enrolled again, so the agent still receives the credential.
  virtual Result<AgentRegistration> register_agent(const proto::Register& reg, const AgentProof& proof) = 0;
  // An agent's registration as one use case, in one transaction (issue 32): register_agent, and the runs it held
  // but no longer executes (all but reg.current_run and reg.journal_runs) requeued as requeue_agent_runs does,
  // `why` their reason. Retried after any failure it completes with the credential the agent receives, or leaves
  // no trace.
  virtual Result<AgentRegistration> admit_agent(const proto::Register& reg, const AgentProof& proof,
                                                const std::string& why) = 0;
  // Forgets the credential of agent `name` (`jetsweep agents revoke`): its next registration enrolls it again.
  // kNotFound when there is no such agent; false when it had no credential.
  virtual Result<bool> revoke_agent_credential(const std::string& name) = 0;
  virtual Status set_agent_connected(int64_t agent_id, bool connected) = 0;
  // Requeues runs assigned to the agent except `keep_runs` (still executing, or with results waiting in its
  // journal). A run that has used up its attempts becomes 'lost' instead, with the reason kept.
  virtual Result<int64_t> requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                             const std::string& why) = 0;
  // Requeues (or loses) runs of agents disconnected for longer than `lease_s`, except agents away rebooting
  // their board (record_reboot) until their expected return; past it, the reason names the reboot.
  virtual Result<int64_t> requeue_orphaned_runs(double lease_s) = 0;
  // Keeps the agent's clock offset estimate with the smallest round trip (refreshed after 10 minutes), unless the
  // new one contradicts it: offsets more than kClockStepMarginS apart beyond half their round trips together mean the
  // board's clock was stepped (NTP setting it), and the new one is kept whatever its round trip. A kept estimate is
  // also the offset of the agent's started runs that have none (they started before any estimate).
  // `boot`, from the same probe (none from agents that do not send it), is kept with a kept estimate, and also when it
  // is of another boot than the kept one (the board rebooted); the kept boot's offset is also that boot's, remembered
  // past the boot. A run started with a boot clock reading (RunStarted::t0_boot_s) of a boot with a remembered offset
  // is placed by it: its offset is t0_unix_s - (t0_boot_s - boot offset), the wall clock's offset at its start
  // whatever steps the wall clock took since the probe; any other run takes the wall clock's. A boot whose offset is
  // remembered for the first time places again the runs stamped in it (read before its first probe).
  virtual Status record_clock(int64_t agent_id, double offset_s, double rtt_s,
                              const std::optional<BootClockOffset>& boot) = 0;
  // A probe's boot clock offset whose wall clock offset was refused (a board more than kMaxClockOffsetSeconds off,
  // before NTP): remembered for its boot if that boot has none yet (record_clock's rule then places its runs); the
  // agent's kept estimates are left as they are. An unknown agent: nothing.
  virtual Status record_boot_offset(int64_t agent_id, const BootClockOffset& boot) = 0;
  // active | paused | cancelled; cancelling also cancels the campaign's queued runs and asks for its
  // executing runs to be stopped (cancel_requested; see runs_to_stop).
  virtual Status set_campaign_state(int64_t campaign_id, const std::string& state) = 0;
  // Claims the oldest queued run the agent's class can take in the first active campaign by priority, then age;
  // of that campaign's, one whose power mode applies on the board as booted (the agent's live_modes, or no
  // named mode) before one that needs a reboot. Clears partial results of earlier attempts. Idempotent under retry:
  // `claim_key` (minted once per claim by the caller; "" for none) marks the run, and a retry that finds the
  // agent's run still assigned under that key returns it unchanged instead of claiming another (issue 32).
  virtual Result<std::optional<Assignment>> claim_run(int64_t agent_id, const std::string& device_class,
                                                      const std::string& claim_key) = 0;
  // Cancels a queued run, or marks an executing one for stopping; returns the run's state; not_found.
  virtual Result<api::RunCancelled> cancel_run(int64_t run_id) = 0;
  // Executing runs whose cancel was requested, with their agents (the controller sends them cancel_run).
  virtual Result<std::vector<RunOnAgent>> runs_to_stop() = 0;
  // Puts a claimed run back (e.g. the agent vanished before it could be sent).
  virtual Status unclaim_run(int64_t run_id, int64_t agent_id) = 0;

  // Ingest, each message one transaction. A result of a run the agent holds (assigned or running) is written
  // (kStored), or is kDuplicate when all of it was stored already. A result of a run the agent does not hold, or
  // holds no more (ended: done, failed, lost, cancelled), is kDuplicate when it ended on this agent and all of it is
  // stored for the run, or when the same frame was set aside already; else kSetAside: kept apart with the reason,
  // never written into the run's rows. "Stored" goes by key (run and epoch, minibatch indices, sample times, the
  // run's end status): an agent resends the frames it journaled unchanged, and a re-executed run starts clean.
  // A run's final state never changes after it ended. kDbError for data the store cannot keep.
  // start_run: the state the run executes in, as the agent applied and read it back (run_started).
  virtual Result<IngestOutcome> start_run(int64_t agent_id, const proto::RunStarted& m) = 0;
  virtual Result<IngestOutcome> ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) = 0;
  virtual Result<IngestOutcome> ingest_epoch(int64_t agent_id, const proto::EpochResult& m) = 0;
  virtual Result<IngestOutcome> ingest_samples(int64_t agent_id, const proto::SampleChunk& m) = 0;
  virtual Result<IngestOutcome> finish_run(int64_t agent_id, const proto::RunFinished& m) = 0;
  // The agent reboots its board for its run `m.run_id` (an nvpmodel mode with other GPU masks): the reboot is
  // recorded once per (run, requested_unix_s) and the agent is away, its runs held, for m.expected_back_s. A
  // reboot for a run the agent does not hold is not recorded (kDuplicate when it was, else kSetAside).
  virtual Result<IngestOutcome> record_reboot(int64_t agent_id, const proto::RebootPending& m) = 0;
  // A result message the ingest methods refused (kDbError: a value the store cannot keep) kept apart in
  // set_aside_results, its reason "refused by the store: " + `why`, instead of being dropped once acknowledged: kSetAside,
  // or kDuplicate when the same frame was kept already. A result of a run that does not exist is kSetAside, kept
  // nowhere (as the ingest methods do); a message that is not a result is kInternal. A refused run_finished reporting
  // 'done' or 'failed' for a run its agent holds also ends the run 'failed' (error: refused_end_error), or it would
  // stay running until its agent registers again; should the store refuse that too, the copy is still kept and the
  // run left as it was. One transaction.
  virtual Result<IngestOutcome> set_aside_refused(int64_t agent_id, const proto::Body& body, const std::string& why) = 0;
  // Group commit of result messages (run_started, minibatches, epoch, samples, run_finished, reboot_pending), in order, each
  // item's result and outcome set. kUnavailable when nothing may be taken as written and the whole batch is to be retried
  // (safe: every write is idempotent). This default writes them one by one (store.cpp); PgStore in one
  // transaction, redone with a savepoint per message when one fails (pg_ingest.cpp).
  virtual Status ingest_batch(std::vector<IngestItem>& items);

  // What a campaign estimate needs (perf::estimate_campaign does the matching): the epoch times measured so
  // far grouped by class, model, dataset, batch size and power mode; every agent's class; enrolled boards.
  virtual Result<perf::EstimateInputs> estimate_inputs() = 0;
  // The enrolled boards (connected or seen in 24 h, one agent per board) with their gating and reported tables,
  // by name: a submitted campaign is expanded and checked against their tables (perf::fleet_tables).
  virtual Result<std::vector<perf::BoardGatingFacts>> enrolled_board_facts() = 0;
  // Idempotent under retry: `request_key` (minted once per submission by the caller; "" for none) is kept with
  // the campaign, and a retry with the same key returns the campaign the first attempt created (issue 32).
  virtual Result<CreatedCampaign> create_campaign(const Campaign& c, const std::string& source_file,
                                                  const std::string& source_yaml, const std::string& request_key) = 0;
  // `ref` is a campaign id or a name (latest campaign with that name); not_found otherwise.
  virtual Result<int64_t> resolve_campaign(const std::string& ref) = 0;
  // not_found when there is no such campaign.
  virtual Result<api::CampaignStatus> campaign_status(int64_t campaign_id) = 0;
  virtual Result<std::vector<api::CampaignStatus>> list_campaigns() = 0;   // by id
  // `epochs`: every run with its epoch rows, or with their summary only (?epochs=none, the text report: a
  // 5,000-epoch campaign's rows are neither read nor sent; the summary equals summarize_epochs of the rows).
  virtual Result<api::CampaignReport> campaign_report(int64_t campaign_id, ReportEpochs epochs) = 0;
  virtual Result<std::vector<api::AgentInfo>> list_agents() = 0;           // by id
  // The dashboard's run page: one run as in its campaign's report, with its campaign; not_found when none.
  virtual Result<api::RunDetail> run_detail(int64_t run_id) = 0;
  // The run's telemetry samples by t_s, t_unix_s on the controller's clock (as the report's epoch windows);
  // not_found when there is no such run.
  virtual Result<std::vector<api::RunSample>> run_samples(int64_t run_id) = 0;
  // For every agent with a run that reported its applied state: that of its executing run (assigned or running)
  // if it reported one, else that of the run it started last. By agent id; agents without one are absent.
  virtual Result<std::vector<AgentApplied>> agents_applied() = 0;

  // Adaptive plans (sql/026; issue 33). Plans ready for their next round: profiling, of an active campaign, none of
  // their runs queued, assigned or running; with the figures of their ended runs.
  virtual Result<std::vector<DuePlan>> adaptive_plans_due() = 0;
  // Creates round `round` of the plan, its runs (one per mode) queued, with `fit` (the predictor it was chosen
  // from) in one transaction. Idempotent: when the plan has that round already (a retry, or a controller that
  // restarted while choosing it) nothing changes and it returns false. kNotFound for no such plan.
  virtual Result<bool> add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                          const boost::json::object& fit) = 0;
  // Ends a profiling plan: "done" with its final `fit`, or "failed" with `error` (a plan ended already is left as
  // it is). kNotFound for no such plan.
  virtual Status finish_adaptive_plan(int64_t plan_id, const std::string& state, const boost::json::object& fit,
                                      const std::string& error) = 0;

  // Model files (sql/023), by SHA-256, in chunks of proto::kModelChunkBytes. put_model_chunk keeps chunk `index` of
  // an upload (a chunk stored already is kept: idempotent; nothing changes for a completed file).
  virtual Status put_model_chunk(const std::string& sha256, int64_t index, const std::string& data) = 0;
  // Completes an upload: its chunks 0..n-1 must be full but the last and hold `bytes` bytes that hash to sha256
  // (check_model_upload), else kInvalidArgument and the upload's chunks are dropped (it starts again). Completing a
  // completed file returns it (completed_now false); one with another size is kInvalidArgument.
  virtual Result<ModelFileInfo> complete_model_file(const std::string& sha256, int64_t bytes) = 0;
  // A completed file; nullopt when there is none (or its upload is unfinished).
  virtual Result<std::optional<ModelFileInfo>> model_file(const std::string& sha256) = 0;
  // Chunk `index` of a completed file; kNotFound when there is no such file or chunk.
  virtual Result<std::string> model_file_chunk(const std::string& sha256, int64_t index) = 0;
};

}  // namespace jetsweep::controller
