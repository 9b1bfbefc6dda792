// The controller's HTTP JSON API, defined once: a plain struct per route's request and response, and one
// JSON codec for them (to_json / from_json), used by the controller to answer, by the `jetsweep` CLI to read
// and by anything else that talks to the API. The JSON is the wire format the dashboard and scripts read:
// field names are fixed and an absent value (std::nullopt) travels as null unless a field says otherwise.
// Pure; any thread.
//
// Routes (all under /api; every route but health needs the API token when one is set):
//   GET  /api/health                              -> Health
//   GET  /api/agents                              -> std::vector<AgentInfo>
//   GET  /api/campaigns                           -> std::vector<CampaignStatus>
//   POST /api/campaigns[?max_runs=..]  (YAML)      -> CreatedCampaignReply (HTTP 201)     request: CampaignSubmission
//   POST /api/campaigns/estimate       (YAML)      -> CampaignEstimate                    request: CampaignSubmission
//   GET  /api/campaigns/REF                       -> CampaignStatus
//   GET  /api/campaigns/REF/report                -> CampaignReport
//   GET  /api/campaigns/A/compare/B               -> CampaignComparison (common/compare.hpp)
//   POST /api/campaigns/REF/{pause,resume,cancel} -> CampaignStatus                      request: CampaignStateChange
//   POST /api/runs/ID/cancel                      -> RunCancelled                        request: RunCancelRequest
//   POST /api/agents/NAME/revoke                  -> AgentRevoked
//   GET  /api/runs/ID                             -> RunDetail (the run as in its report + campaign_id)
//   GET  /api/runs/ID/samples                     -> std::vector<RunSample>
//   POST /api/login    ({"token":..} or token=..) -> SessionInfo + Set-Cookie jetsweep_session (public)
//   POST /api/logout                              -> SessionInfo (clears the cookie; public)
//   GET  /api/session                             -> SessionInfo (public)
//   GET  /api/fleet                               -> std::vector<FleetBoard> (controller/api_metrics.cpp)
//   GET  /metrics                                 -> Prometheus text exposition 0.0.4 (not JSON; API token)
//   GET  /api/events                              -> text/event-stream of `snapshot` events (controller/live_hub.hpp)
//   GET  /, /ui/NAME                              -> the dashboard (controller/web/; public)
//   any error                                     -> ErrorReply (HTTP 400 / 401 / 403 / 404 / 413 / 500 / 503)
#pragma once

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/campaign.hpp"
#include "common/protocol.hpp"
#include "common/status.hpp"
#include "common/wire_rules.hpp"

namespace jetsweep::api {

// ---- requests (carried by the path, headers and body rather than JSON) ----

// POST /api/campaigns and /api/campaigns/estimate: the campaign YAML as the body; the X-Jetsweep-Source
// header names the file in its errors; the query string holds the dry-run caps (submission only).
struct CampaignSubmission {
  std::string source_file = "campaign.yaml";
  std::string yaml;
  std::optional<DryRunCaps> dry_run;
};
inline constexpr const char* kSourceHeader = "X-Jetsweep-Source";

// POST /api/campaigns/REF/ACTION: REF is a campaign id or name; ACTION pause | resume | cancel.
struct CampaignStateChange {
  std::string ref;
  std::string action;
  // The campaign state the action sets: paused | active | cancelled ("" for an unknown action).
  std::string state() const;
};

// POST /api/runs/ID/cancel.
struct RunCancelRequest {
  int64_t run_id = 0;
};

// Request targets, shared by the client and the route table.
std::string campaign_path(const std::string& ref);                 // /api/campaigns/REF
std::string campaign_report_path(const std::string& ref);          // /api/campaigns/REF/report
std::string campaign_action_path(const CampaignStateChange& c);    // /api/campaigns/REF/ACTION
std::string run_cancel_path(const std::string& run_ref);           // /api/runs/ID/cancel
std::string agent_revoke_path(const std::string& name);           // /api/agents/NAME/revoke

// ---- responses ----

// Every error answer. error_id is set (and only then present in the JSON) when the controller logged the detail
// of a server-side failure under that id instead of answering with it.
struct ErrorReply {
  std::string error;
  std::optional<std::string> error_id;
};
BOOST_DESCRIBE_STRUCT(ErrorReply, (), (error, error_id))
JS_WIRE_RULES(ErrorReply, (&ErrorReply::error), (&ErrorReply::error_id))

struct Health {
  bool ok = true;
  int64_t agents_connected = 0;
  int64_t db_queue = 0;
  int64_t ingest_queue = 0;
};
BOOST_DESCRIBE_STRUCT(Health, (), (ok, agents_connected, db_queue, ingest_queue))
JS_WIRE_RULES_ALL_REQUIRED(Health, (), ())

struct AgentInfo {
  int64_t agent_id = 0;
  std::string name;
  std::string hostname;
  int64_t cpus = 0;
  int64_t mem_bytes = 0;
  std::string backend;
  std::string device_class;
  std::string kernel;
  std::string torch_version;
  std::string compiler;
  std::string git_sha;
  bool connected = false;
  std::string last_seen;
  std::optional<int64_t> current_run;     // the run it holds (assigned or running)
  // Disconnected because it rebooted its board for its run (--allow-reboot): the controller holds the run and the
  // board until then (as last_seen). Null otherwise.
  std::optional<std::string> rebooting_until;
  std::string accelerator;
  std::vector<std::string> not_ready;     // failed readiness checks, "name: detail"
  bool ready() const { return not_ready.empty(); }   // travels as "ready"
};
BOOST_DESCRIBE_STRUCT(AgentInfo, (),
                      (agent_id, name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version,
                       compiler, git_sha, connected, last_seen, current_run, rebooting_until, accelerator, not_ready))
JS_WIRE_RULES_ALL_REQUIRED(AgentInfo, (), ())
JS_WIRE_COMPUTED(AgentInfo, "ready", &AgentInfo::ready, &AgentInfo::not_ready)

// Queued runs no enrolled agent can take, and why.
struct Unrunnable {
  int64_t runs = 0;
  std::string reason;
};
BOOST_DESCRIBE_STRUCT(Unrunnable, (), (runs, reason))
JS_WIRE_RULES_ALL_REQUIRED(Unrunnable, (), ())

// One round of an adaptive-profiling plan: the modes it queued and the summary of the fit it was decided from
// (absent figures: that fit had fewer than two profiled modes). JSON derived from this description.
struct AdaptiveRoundStatus {
  int64_t round = 0;
  int64_t modes = 0;                     // runs the round queued
  int64_t observations = 0;              // modes profiled when it was decided
  std::optional<double> time_loo_pct, power_loo_pct;
  std::optional<int64_t> front_size, front_changed;
};
BOOST_DESCRIBE_STRUCT(AdaptiveRoundStatus, (),
                      (round, modes, observations, time_loo_pct, power_loo_pct, front_size, front_changed))

// One adaptive-profiling plan of a campaign (issue 33): its progress and the summary of its latest fit.
struct AdaptivePlanStatus {
  int64_t plan_id = 0;
  std::string device;          // board class
  std::string workload;        // MODEL/DATASET
  std::string state;           // profiling | done | failed
  int64_t rounds = 0;          // rounds created
  int64_t budget = 0;          // modes to profile
  int64_t profiled = 0;        // runs of the plan done
  int64_t candidates = 0;
  std::string error;           // why it failed
  // From the latest fit (absent before the second profiled mode): leave-one-out MAPE of the predictor, size of the
  // predicted time-power Pareto front and how many modes entered or left it since the fit before.
  std::optional<double> time_loo_pct, power_loo_pct;
  std::optional<int64_t> front_size, front_changed;
  boost::json::object fit;     // the whole latest fit (controller/adaptive_planner.hpp); {} in campaign lists
  std::vector<AdaptiveRoundStatus> history;   // every round, in order: how the predictor and its front moved
};
BOOST_DESCRIBE_STRUCT(AdaptivePlanStatus, (),
                      (plan_id, device, workload, state, rounds, budget, profiled, candidates, error, time_loo_pct,
                       power_loo_pct, front_size, front_changed, fit, history))
// history: absent from controllers before issue 33's round history.
JS_WIRE_RULES_ALL_REQUIRED(AdaptivePlanStatus, (&AdaptivePlanStatus::history), ())

struct CampaignStatus {
  int64_t campaign_id = 0;
  std::string name;
  std::string description;
  std::string created_at;
  int64_t runs = 0;
  int64_t queued = 0;
  int64_t assigned = 0;
  int64_t running = 0;
  int64_t done = 0;
  int64_t failed = 0;
  int64_t lost = 0;
  int64_t epochs_total = 0;
  int64_t epochs_done = 0;
  int64_t cancelled = 0;
  std::string state;          // active | paused | cancelled
  int64_t priority = 0;
  bool finished = false;      // nothing queued, assigned or running
  bool paused = false;
  std::optional<double> eta_s;   // wall seconds left; null while paused or before anything was measured
  int64_t unrunnable_runs = 0;
  std::vector<Unrunnable> unrunnable;
  // Result messages kept apart: measured by an agent after its run had been taken from it (requeued to another
  // agent, lost, cancelled). Not in any run's rows; 0 means nothing measured was left out (docs/OPERATIONS.md).
  int64_t set_aside_results = 0;
  // Its adaptive-profiling plans (a campaign with a plan still profiling is not finished).
  std::vector<AdaptivePlanStatus> adaptive;
};
BOOST_DESCRIBE_STRUCT(CampaignStatus, (),
                      (campaign_id, name, description, created_at, runs, queued, assigned, running, done, failed, lost,
                       epochs_total, epochs_done, cancelled, state, priority, finished, paused, eta_s, unrunnable_runs,
                       unrunnable, set_aside_results, adaptive))
// Absent from older controllers: set_aside_results (issue 29), adaptive (issue 33).
JS_WIRE_RULES_ALL_REQUIRED(CampaignStatus, (&CampaignStatus::set_aside_results, &CampaignStatus::adaptive), ())

struct CreatedCampaignReply {
  int64_t campaign_id = 0;
  std::string name;
  int64_t runs = 0;
  int64_t adaptive_plans = 0;   // adaptive-profiling plans: their runs come in rounds, not counted in `runs`
};
BOOST_DESCRIBE_STRUCT(CreatedCampaignReply, (), (campaign_id, name, runs, adaptive_plans))
JS_WIRE_RULES_ALL_REQUIRED(CreatedCampaignReply, (&CreatedCampaignReply::adaptive_plans), ())   // from issue 33

// The answer to revoking an agent's credential (`jetsweep agents revoke NAME`).
struct AgentRevoked {
  std::string name;
  bool had_credential = false;   // false: it was not enrolled with one (nothing changed)
  bool disconnected = false;     // it was connected and its connection was closed
};
BOOST_DESCRIBE_STRUCT(AgentRevoked, (), (name, had_credential, disconnected))
JS_WIRE_RULES_ALL_REQUIRED(AgentRevoked, (), ())

struct RunCancelled {
  int64_t run_id = 0;
  int64_t campaign_id = 0;
  std::string status;
  bool stopping = false;              // executing; its agent is asked to stop it
  std::optional<std::string> agent;
  std::string error;
};
BOOST_DESCRIBE_STRUCT(RunCancelled, (), (run_id, campaign_id, status, stopping, agent, error))
JS_WIRE_RULES_ALL_REQUIRED(RunCancelled, (), ())

struct EstimateTarget {
  std::string device;                 // a class, CLASS/*, a named board, or "any"
  int64_t runs = 0;
  int64_t runs_without_measurement = 0;
  double run_seconds = 0;             // training time of its runs, all copies
  int64_t boards = 0;
  std::optional<double> wall_s;       // null when no board can run them
};
BOOST_DESCRIBE_STRUCT(EstimateTarget, (), (device, runs, runs_without_measurement, run_seconds, boards, wall_s))
JS_WIRE_RULES_ALL_REQUIRED(EstimateTarget, (), ())

// How many runs each source of epoch times covered, most specific first.
struct EstimateSources {
  int64_t same_class_model_dataset_batch_mode = 0;
  int64_t same_class_model_dataset_batch = 0;
  int64_t same_class_model_dataset = 0;
  int64_t same_model_dataset_any_class = 0;
  int64_t papers_model = 0;
  int64_t without_measurement = 0;
};
BOOST_DESCRIBE_STRUCT(EstimateSources, (),
                      (same_class_model_dataset_batch_mode, same_class_model_dataset_batch, same_class_model_dataset,
                       same_model_dataset_any_class, papers_model, without_measurement))
JS_WIRE_RULES_ALL_REQUIRED(EstimateSources, (), ())

struct CampaignEstimate {
  std::string campaign;
  int64_t runs = 0;
  std::vector<EstimateTarget> per_device;
  double estimated_wall_s = 0;
  EstimateSources runs_estimated_from;
  std::vector<std::string> gating_refused;   // perf::gating_refusals: runs no enrolled board can run as booted
  std::vector<std::string> mode_tables;      // Campaign::mode_tables as the controller expanded it (its boards' tables)
};
BOOST_DESCRIBE_STRUCT(CampaignEstimate, (),
                      (campaign, runs, per_device, estimated_wall_s, runs_estimated_from, gating_refused, mode_tables))
// gating_refused, mode_tables: absent from older controllers.
JS_WIRE_RULES_ALL_REQUIRED(CampaignEstimate, (&CampaignEstimate::gating_refused, &CampaignEstimate::mode_tables), ())

struct ReportCampaign {
  int64_t id = 0;
  std::string name;
  std::string description;
  std::string source_file;
  std::string created_at;
};
BOOST_DESCRIBE_STRUCT(ReportCampaign, (), (id, name, description, source_file, created_at))
JS_WIRE_RULES_ALL_REQUIRED(ReportCampaign, (), ())

// Clocks of a board at an epoch's start or end (each null when not read).
struct EpochClocks {
  std::optional<double> cores_online;
  std::optional<double> cpu_khz;
  std::optional<double> gpu_hz;
  std::optional<double> emc_hz;
};
BOOST_DESCRIBE_STRUCT(EpochClocks, (), (cores_online, cpu_khz, gpu_hz, emc_hz))

// Statistics of the minibatch times stored for an epoch (seconds), kept when the epoch or its minibatches land
// (sql/016), so no report reads minibatches. Medians and p95 interpolate linearly (percentile_cont).
struct MinibatchStats {
  int64_t recorded = 0;   // minibatches stored for the epoch (== minibatches when none was lost or skipped)
  double stall_mean_s = 0, stall_p50_s = 0, stall_p95_s = 0;
  double compute_mean_s = 0, compute_p50_s = 0, compute_p95_s = 0;
};
BOOST_DESCRIBE_STRUCT(MinibatchStats, (),
                      (recorded, stall_mean_s, stall_p50_s, stall_p95_s, compute_mean_s, compute_p50_s, compute_p95_s))
JS_WIRE_RULES_ALL_REQUIRED(MinibatchStats, (), ())

// An epoch as a report shows it: its times, its measures (proto::EpochMeasures, the same names as on the wire and
// in the epochs table), its clocks and its window on the controller's clock.
struct ReportEpoch : proto::EpochMeasures {
  int64_t epoch = 0;
  double e2e_s = 0;
  double stall_s = 0;
  double compute_s = 0;
  int64_t minibatches = 0;
  std::optional<EpochClocks> clocks_start;
  std::optional<EpochClocks> clocks_end;
  bool throttled = false;
  std::optional<std::string> throttle_reason;   // omitted (not null) when there is none
  std::optional<double> start_unix_s;           // the epoch's window on the controller's clock
  std::optional<double> end_unix_s;
  std::optional<MinibatchStats> minibatch_stats;   // null when no minibatch of the epoch was stored
};
BOOST_DESCRIBE_STRUCT(ReportEpoch, (proto::EpochMeasures),
                      (epoch, e2e_s, stall_s, compute_s, minibatches, clocks_start, clocks_end, throttled,
                       throttle_reason, start_unix_s, end_unix_s, minibatch_stats))
JS_WIRE_RULES_ALL_REQUIRED(ReportEpoch, (), (&ReportEpoch::throttle_reason))
JS_WIRE_BASES_AFTER(ReportEpoch, &ReportEpoch::minibatches)   // the measures between the times and the clocks

// A run's epochs as the text report shows them: epoch 0 apart from the mean of epochs 1 and later (the papers'
// convention: epoch 0 carries start-up costs). Computed from the epochs (summarize_epochs) by the store that
// reads them, so a report without its per-epoch rows (?epochs=none) still carries it.
struct RunEpochSummary {
  int64_t epochs = 0;
  int64_t minibatches = 0;   // of the last epoch
  std::optional<double> e0_e2e_s, e0_stall_s, e0_compute_s, e0_energy_j;
  int64_t later_epochs = 0;
  std::optional<double> later_e2e_s, later_stall_s, later_compute_s;
  std::optional<double> later_energy_j;   // null unless every later epoch has an energy figure
  int64_t throttled_epochs = 0;
  std::optional<std::string> first_throttle;   // "epoch N: REASON" of the first throttled epoch
};
BOOST_DESCRIBE_STRUCT(RunEpochSummary, (),
                      (epochs, minibatches, e0_e2e_s, e0_stall_s, e0_compute_s, e0_energy_j, later_epochs, later_e2e_s,
                       later_stall_s, later_compute_s, later_energy_j, throttled_epochs, first_throttle))
JS_WIRE_RULES_ALL_REQUIRED(RunEpochSummary, (), ())

struct ReportRun {
  int64_t run_id = 0;
  std::string status;
  std::optional<std::string> agent;
  // The run's configuration as stored (the RunConfig keys a report shows), passed through as JSON.
  boost::json::object config;
  std::string error;
  int64_t attempts = 0;
  // Board reboots this run asked for (an nvpmodel mode whose GPU masks differ from the booted ones), all attempts.
  int64_t reboots = 0;
  std::optional<double> wall_s;
  // The agent's facts when it ran (its agents row) and the state it executed in (proto::BoardState as
  // JSON): stored JSON documents passed through; null until assigned / started.
  std::optional<boost::json::object> facts;
  std::optional<boost::json::object> applied;
  std::optional<bool> reference_state;
  std::optional<std::string> storage_medium;
  std::optional<std::string> storage_device;
  std::optional<bool> page_cache_dropped;
  std::optional<std::string> compute_device;   // "cpu", "cuda:0 (NAME)", "simulated"
  // What its agent measured it trained (proto::WorkloadFacts as JSON: model hash, parameters, forward MACs, dataset
  // fingerprint); null until it started, or from agents older than the field.
  std::optional<boost::json::object> workload;
  bool simulated = false;                      // its facts say backend "sim"
  std::vector<ReportEpoch> epochs;             // empty in a report asked for without them (?epochs=none)
  RunEpochSummary summary;
};
BOOST_DESCRIBE_STRUCT(ReportRun, (),
                      (run_id, status, agent, config, error, attempts, reboots, wall_s, facts, applied, reference_state,
                       storage_medium, storage_device, page_cache_dropped, compute_device, workload, simulated, epochs,
                       summary))
JS_WIRE_RULES_ALL_REQUIRED(ReportRun, (&ReportRun::reboots), ())   // reboots: absent from older controllers

// The keys of a stored run config that a report shows (model, dataset, ..., timing), picked from `stored`.
boost::json::object report_config(const boost::json::object& stored);
// The summary of a run's epochs (any order).
RunEpochSummary summarize_epochs(const std::vector<ReportEpoch>& epochs);

// Whether an agent's facts say its runs were on a simulated board (backend "sim"): such results are marked.
bool simulated_backend(const std::optional<boost::json::object>& facts);

struct CampaignReport {
  ReportCampaign campaign;
  bool power_sensor = false;    // some epoch has an energy figure
  int64_t simulated_runs = 0;
  bool epochs_included = true;   // false: asked for without per-epoch rows (?epochs=none; each run's summary only)
  std::vector<ReportRun> runs;
  // Its adaptive-profiling plans with their whole fits (controller/adaptive_planner.hpp): the predictor over every
  // candidate, measured points apart, the front and the pick per power budget.
  std::vector<AdaptivePlanStatus> adaptive;
};
BOOST_DESCRIBE_STRUCT(CampaignReport, (), (campaign, power_sensor, simulated_runs, epochs_included, runs, adaptive))
JS_WIRE_RULES_ALL_REQUIRED(CampaignReport, (&CampaignReport::adaptive), ())   // adaptive: from issue 33
// ?epochs=none: the report without per-epoch rows (a 5,000-epoch campaign's would be hundreds of MB).
inline constexpr const char* kReportWithoutEpochs = "epochs=none";

// ---- the dashboard's routes (controller/api_web.cpp; codec in common/api_web.cpp) ----

// GET /api/runs/ID: one run as in its campaign's report, and its campaign. Travels flat: the ReportRun's fields
// (its base) then "campaign_id" and "campaign_name".
struct RunDetail : ReportRun {
  int64_t campaign_id = 0;
  std::string campaign_name;
};
BOOST_DESCRIBE_STRUCT(RunDetail, (ReportRun), (campaign_id, campaign_name))
JS_WIRE_RULES(RunDetail, (&RunDetail::campaign_id, &RunDetail::campaign_name), ())

// GET /api/runs/ID/samples: one telemetry sample of the run (ordered by t_s).
struct RunSample {
  double t_s = 0;                       // seconds since the run started on its agent
  std::optional<double> t_unix_s;       // on the controller's clock; null when the run's start time is unknown
  std::optional<double> power_w;
  double cpu_util_pct = 0;
  std::optional<double> cpu_freq_mhz;
  int64_t mem_used_kb = 0;
  int64_t disk_read_bytes = 0;
  std::optional<double> temp_max_c;     // the hottest thermal zone (C); null: no readable zone, or simulated
};
BOOST_DESCRIBE_STRUCT(RunSample, (),
                      (t_s, t_unix_s, power_w, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, temp_max_c))
JS_WIRE_RULES_ALL_REQUIRED(RunSample, (), ())

// GET /api/session: who the presented credentials (cookie or Authorization) are.
struct SessionInfo {
  std::string role = "none";            // admin | viewer | none
  bool auth_required = true;            // false: the controller has no API token (everyone is admin)
};
BOOST_DESCRIBE_STRUCT(SessionInfo, (), (role, auth_required))
JS_WIRE_RULES_ALL_REQUIRED(SessionInfo, (), ())

std::string run_path(const std::string& run_ref);                  // /api/runs/ID
std::string run_samples_path(const std::string& run_ref);          // /api/runs/ID/samples

// ---- fleet (GET /api/fleet; controller/api_metrics.cpp; codec in common/api_fleet.cpp) ----

// One telemetry point of a board, on the controller's clock (Unix seconds). Agents sample only while they execute
// a run.
struct FleetPoint {
  double t_unix_s = 0;
  std::optional<double> power_w;        // null: no power sensor
  double cpu_util_pct = 0;
  std::optional<double> cpu_freq_mhz;
  std::optional<double> temp_max_c;     // the hottest thermal zone (C); null: none readable, or simulated
};
BOOST_DESCRIBE_STRUCT(FleetPoint, (), (t_unix_s, power_w, cpu_util_pct, cpu_freq_mhz, temp_max_c))
JS_WIRE_RULES_ALL_REQUIRED(FleetPoint, (), ())

// A board's newest sample (the controller keeps it while it is at most 5 minutes old).
struct FleetLatest {
  double t_unix_s = 0;
  std::optional<double> power_w;
  double cpu_util_pct = 0;
  std::optional<double> cpu_freq_mhz;
  int64_t mem_used_kb = 0;
  std::optional<double> temp_max_c;
};
BOOST_DESCRIBE_STRUCT(FleetLatest, (), (t_unix_s, power_w, cpu_util_pct, cpu_freq_mhz, mem_used_kb, temp_max_c))
JS_WIRE_RULES_ALL_REQUIRED(FleetLatest, (), ())

// One board (agent) of the fleet: the store's agent row, the board state of its current or last run, and what
// the controller heard from it lately (kept in memory: controller/fleet_telemetry.hpp).
struct FleetBoard {
  int64_t agent_id = 0;
  std::string name;
  std::string device_class;
  bool connected = false;
  std::string state;                              // idle | busy | offline (fleet_state)
  std::optional<int64_t> current_run;
  bool simulated = false;                         // its backend is "sim"
  std::vector<std::string> not_ready;             // failed readiness checks; "ready" travels as not_ready empty
  bool ready() const { return not_ready.empty(); }
  std::string last_seen;                          // the store's last_seen (registration or disconnect)
  std::optional<double> last_heartbeat_unix_s;    // its last heartbeat since the controller started; null: none
  std::optional<int64_t> backlog_messages;        // results it holds unacknowledged (its last heartbeat; null: none
  std::optional<int64_t> backlog_bytes;           // said, or not connected)
  std::optional<boost::json::object> applied;     // proto::BoardState JSON of its current or last started run
  std::optional<std::string> power_mode;          // applied mode_name; null when none was named
  std::optional<FleetLatest> latest;
  std::vector<FleetPoint> series;                 // the last 5 minutes, oldest first, at most ~300 points
};
BOOST_DESCRIBE_STRUCT(FleetBoard, (),
                      (agent_id, name, device_class, connected, state, simulated, not_ready, last_seen, current_run,
                       last_heartbeat_unix_s, backlog_messages, backlog_bytes, applied, power_mode, latest, series))
JS_WIRE_RULES_ALL_REQUIRED(FleetBoard, (), ())
JS_WIRE_COMPUTED(FleetBoard, "ready", &FleetBoard::ready, &FleetBoard::simulated)

// The fleet state of an agent: "offline" when not connected, "busy" when it holds a run, else "idle" (the same
// rule for /api/fleet and the agents-by-state metric, so they agree with /api/agents).
std::string fleet_state(bool connected, const std::optional<int64_t>& current_run);
inline constexpr const char* kFleetPath = "/api/fleet";

boost::json::object to_json(const FleetPoint& v);
boost::json::object to_json(const FleetLatest& v);
boost::json::object to_json(const FleetBoard& v);
Status from_json(const boost::json::value& v, const std::string& where, FleetPoint& out);
Status from_json(const boost::json::value& v, const std::string& where, FleetLatest& out);
Status from_json(const boost::json::value& v, const std::string& where, FleetBoard& out);

// ---- codec ----
// to_json gives the wire object; from_json checks every field and names `where` and the field in its error
// (kProtocolError), e.g. "campaign report field 'runs[3]' field 'status': missing".

boost::json::object to_json(const ErrorReply& v);
boost::json::object to_json(const Health& v);
boost::json::object to_json(const AgentInfo& v);
boost::json::object to_json(const Unrunnable& v);
boost::json::object to_json(const AdaptivePlanStatus& v);
boost::json::object to_json(const CampaignStatus& v);
boost::json::object to_json(const CreatedCampaignReply& v);
boost::json::object to_json(const RunCancelled& v);
boost::json::object to_json(const AgentRevoked& v);
boost::json::object to_json(const EstimateTarget& v);
boost::json::object to_json(const EstimateSources& v);
boost::json::object to_json(const CampaignEstimate& v);
boost::json::object to_json(const ReportCampaign& v);
boost::json::object to_json(const EpochClocks& v);
boost::json::object to_json(const MinibatchStats& v);
boost::json::object to_json(const RunEpochSummary& v);
boost::json::object to_json(const ReportEpoch& v);
boost::json::object to_json(const ReportRun& v);
boost::json::object to_json(const CampaignReport& v);
boost::json::object to_json(const RunDetail& v);
boost::json::object to_json(const RunSample& v);
boost::json::object to_json(const SessionInfo& v);
template <class T>
boost::json::array to_json(const std::vector<T>& items) {
  boost::json::array out;
  out.reserve(items.size());
  for (const auto& item : items) out.emplace_back(to_json(item));
  return out;
}

Status from_json(const boost::json::value& v, const std::string& where, ErrorReply& out);
Status from_json(const boost::json::value& v, const std::string& where, Health& out);
Status from_json(const boost::json::value& v, const std::string& where, AgentInfo& out);
Status from_json(const boost::json::value& v, const std::string& where, Unrunnable& out);
Status from_json(const boost::json::value& v, const std::string& where, AdaptivePlanStatus& out);
Status from_json(const boost::json::value& v, const std::string& where, CampaignStatus& out);
Status from_json(const boost::json::value& v, const std::string& where, CreatedCampaignReply& out);
Status from_json(const boost::json::value& v, const std::string& where, RunCancelled& out);
Status from_json(const boost::json::value& v, const std::string& where, AgentRevoked& out);
Status from_json(const boost::json::value& v, const std::string& where, EstimateTarget& out);
Status from_json(const boost::json::value& v, const std::string& where, EstimateSources& out);
Status from_json(const boost::json::value& v, const std::string& where, CampaignEstimate& out);
Status from_json(const boost::json::value& v, const std::string& where, ReportCampaign& out);
Status from_json(const boost::json::value& v, const std::string& where, EpochClocks& out);
Status from_json(const boost::json::value& v, const std::string& where, MinibatchStats& out);
Status from_json(const boost::json::value& v, const std::string& where, RunEpochSummary& out);
Status from_json(const boost::json::value& v, const std::string& where, ReportEpoch& out);
Status from_json(const boost::json::value& v, const std::string& where, ReportRun& out);
Status from_json(const boost::json::value& v, const std::string& where, CampaignReport& out);
Status from_json(const boost::json::value& v, const std::string& where, RunDetail& out);
Status from_json(const boost::json::value& v, const std::string& where, RunSample& out);
Status from_json(const boost::json::value& v, const std::string& where, SessionInfo& out);
template <class T>
Status from_json(const boost::json::value& v, const std::string& where, std::vector<T>& out) {
  if (!v.is_array()) return protocol_error(where + ": expected an array");
  out.clear();
  out.reserve(v.get_array().size());
  for (size_t i = 0; i < v.get_array().size(); ++i) {
    T item;
    JS_RETURN_IF_ERROR(from_json(v.get_array()[i], where + "[" + std::to_string(i) + "]", item));
    out.push_back(std::move(item));
  }
  return Status::ok();
}

// Decodes `v` as a T: `auto r = api::decode<CampaignReport>(body, "campaign report");`.
template <class T>
Result<T> decode(const boost::json::value& v, const std::string& where) {
  T out;
  JS_RETURN_IF_ERROR(from_json(v, where, out));
  return out;
}

}  // namespace jetsweep::api
