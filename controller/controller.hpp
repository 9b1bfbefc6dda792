// Controller: the fleet registry (which agent sessions are connected, idle or busy), run dispatch, the
// periodic lease sweep, and the HTTP JSON API. Runs on the io_context's single thread; database work goes
// to the DbWorker, parsing and expanding posted campaigns to its CampaignWorker, and both come back through
// asio::post.
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/campaign.hpp"
#include "controller/adaptive_planner.hpp"
#include "controller/campaign_worker.hpp"
#include "controller/db_worker.hpp"
#include "controller/fleet_telemetry.hpp"
#include "controller/ingest_budget.hpp"
#include "controller/metrics.hpp"

namespace jetsweep::controller {

class AgentSession;
class LiveHub;
class WebAuth;

struct ControllerOptions {
  std::chrono::milliseconds heartbeat_interval{1000};
  double lease_s = 30.0;                         // a disconnected agent's runs are requeued after this
  std::chrono::milliseconds sweep_interval{2000};
  size_t max_ingest_in_flight = 8;               // per agent connection; reading pauses beyond this
  size_t max_ingest_bytes = size_t{32} << 20;    // all connections' results waiting for the database (IngestBudget)
  size_t max_queued_frames = 1024;               // per agent connection write queue bound
  std::string enroll_secret;                     // agents must present it (Authorization: Bearer); empty = open
  std::string api_token;                         // API clients must present it; empty = open
  std::string viewer_token;                      // a read-only token (GET only; the dashboard's viewers); empty = none
  int time_sync_probes = 5;                      // clock probes right after registration ...
  int time_sync_every_heartbeats = 60;           // ... then one every N heartbeats
  double max_clock_probe_rtt_s = 0.25;           // slower probes measure load, not the clock: discarded
  CampaignLimits campaign_limits;                // bounds on parsing and expanding a posted campaign
  size_t max_campaigns_waiting = CampaignWorker::kDefaultMaxWaiting;   // beyond: 503 busy
  int64_t max_model_bytes = int64_t{1} << 30;    // the largest model file users may upload (--max-model-mb)
  // Adaptive-profiling plans (issue 33): the database their references may name campaigns of ("" = CSV
  // references only), and where their reference networks are kept ("" = retrained when the controller restarts).
  std::string analysis_dsn;
  std::string model_dir;
};

// Every torchscript:<sha256> model `campaign` names is a completed model file in `store` (api_models.cpp), else
// kInvalidArgument naming the first missing one. The DbWorker's thread.
Status check_model_files(Store& store, const Campaign& campaign);

// Constant-time comparison of a presented "Bearer <token>" Authorization header against `token`.
bool authorized(std::string_view authorization_header, const std::string& token);

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

class Controller : public std::enable_shared_from_this<Controller> {
 public:
  // `ingest` are the workers for agents' results (an agent's messages always go to the same one, so they
  // commit and are acknowledged in order); empty = all on `db`.
  Controller(boost::asio::io_context& ioc, DbWorker& db, ControllerOptions options, std::vector<DbWorker*> ingest = {});
  ~Controller();
  void start();
  void stop();

  DbWorker& db() { return db_; }
  DbWorker& ingest_db(int64_t agent_id) {
    return ingest_.empty() ? db_ : *ingest_[static_cast<size_t>(agent_id) % ingest_.size()];
  }
  const ControllerOptions& options() const { return options_; }
  CampaignWorker& campaign_worker() { return campaigns_; }
  // Every agent's recent telemetry and heartbeats, in memory (fed by AgentSession; io thread only).
  FleetTelemetry& fleet_telemetry() { return fleet_telemetry_; }
  // The bytes of results read from every agent and waiting for the database, against max_ingest_bytes (io thread).
  IngestBudget& ingest_budget() { return ingest_budget_; }
  // The controller's own instruments for GET /metrics (dispatch latency, ingest counts).
  metrics::ControllerMetrics& metrics() { return metrics_; }
  boost::asio::any_io_executor executor() { return ioc_.get_executor(); }
  // The dashboard (api_web.cpp): who a request is (tokens, login sessions), and the hub of GET /api/events.
  WebAuth& web_auth() { return *web_auth_; }
  LiveHub& live_hub() { return *live_; }

  // Agent sessions report lifecycle events (io thread).
  void on_agent_registered(const std::shared_ptr<AgentSession>& session);
  void on_agent_gone(const std::shared_ptr<AgentSession>& session);
  // Hands the agent a queued run if it is idle.
  void try_dispatch(const std::shared_ptr<AgentSession>& session);
  void dispatch_all();
  // Sends cancel_run to the agents of executing runs whose cancel was requested (once per connection).
  void stop_cancelled_runs();
  // Something may have made runs claimable (a campaign submitted or resumed, runs requeued or unclaimed, a
  // run finished and freed its board): idle agents whose last claim found nothing try again.
  void queue_changed() { ++queue_generation_; }
  // Adaptive plans due for a round (none of their runs open) get it, or end, decided on the planner's thread
  // (adaptive_rounds.cpp). Runs on every sweep and after a submission; one pass at a time.
  void plan_adaptive();

  // HTTP API (routes in common/api.hpp); `respond` is called exactly once (io thread).
  void handle_api(HttpRequest&& req, std::function<void(HttpResponse&&)> respond);

  struct ApiCall;    // one request being answered (api_call.hpp)
  struct ApiRoute;   // method + path pattern -> handler (api_call.hpp)
  struct Posted;     // a posted campaign, parsed (controller.cpp)

 private:
  void sweep();
  // Writes `agent_id` connected again if a live session of it is registered (on_agent_gone's write raced it).
  void mark_connected_if_registered(int64_t agent_id);
  // Records one plan's decision (its round's runs, or its end); `left` counts the pass's decisions to come.
  void apply_decision(AdaptiveDecision decision, std::shared_ptr<size_t> left);
  void end_planning_pass(std::shared_ptr<size_t> left);
  size_t boards_of_class(const std::string& device_class) const;

  // The route table of handle_api, and its handlers (one per route, io thread).
  static const std::vector<ApiRoute>& api_routes();
  // Answers `call` with what `job` returns from the store (an api:: struct, or an error).
  template <class T, class Job>
  void answer_from_store(const ApiCall& call, Job job);
  void api_health(const ApiCall& call);
  void api_agents(const ApiCall& call);
  void api_campaigns(const ApiCall& call);
  void api_campaign_status(const ApiCall& call);
  void api_campaign_report(const ApiCall& call);
  void api_estimate(const ApiCall& call);
  void api_submit(const ApiCall& call);
  void api_campaign_action(const ApiCall& call);
  void api_cancel_run(const ApiCall& call);
  void api_revoke_agent(const ApiCall& call);
  void api_compare(const ApiCall& call);        // api_compare.cpp: two campaigns' matched configurations
  void api_fleet(const ApiCall& call);          // api_metrics.cpp: every board with its recent telemetry
  void api_metrics(const ApiCall& call);        // api_metrics.cpp: Prometheus text exposition at /metrics
  void add_flow_gauges(metrics::Registry& reg, const std::vector<api::FleetBoard>& boards) const;   // per agent
  void api_run(const ApiCall& call);            // api_web.cpp: one run, as in its campaign's report
  void api_run_samples(const ApiCall& call);    // api_web.cpp: one run's telemetry samples
  void api_login(const ApiCall& call);          // api_web.cpp: the dashboard's login (sets its cookie)
  void api_logout(const ApiCall& call);
  void api_session(const ApiCall& call);
  void api_put_model_chunk(const ApiCall& call);   // api_models.cpp: one chunk of a model file's upload
  void api_complete_model(const ApiCall& call);    // api_models.cpp: completes it (sizes and hash checked)
  void api_model_file(const ApiCall& call);        // api_models.cpp: a stored model file's size        // api_web.cpp: who the presented credentials are
  void serve_ui(const ApiCall& call);           // api_web.cpp: the dashboard's page and assets
  // api_web.cpp: the live snapshot {"health","campaigns","fleet"} as JSON text, or nullopt (the LiveHub's query).
  void live_snapshot(std::function<void(std::optional<std::string>)> done);
  // Parses and expands the posted campaign on the CampaignWorker, then `then(posted)` (io thread); answers
  // 400 for a campaign refused, 503 when the worker is busy.
  void parse_posted(const ApiCall& call, bool apply_dry_run, std::function<void(Posted&&)> then);

  boost::asio::io_context& ioc_;
  DbWorker& db_;
  std::vector<DbWorker*> ingest_;
  ControllerOptions options_;
  CampaignWorker campaigns_;
  AdaptivePlanner planner_;
  bool planning_ = false;   // io thread: a plan_adaptive pass is under way
  size_t posts_reading_boards_ = 0;   // io thread: submissions between arrival and the CampaignWorker's queue
  FleetTelemetry fleet_telemetry_;
  IngestBudget ingest_budget_;
  metrics::ControllerMetrics metrics_;
  boost::asio::steady_timer sweep_timer_;
  std::map<int64_t, std::weak_ptr<AgentSession>> agents_;   // by agent id
  std::unique_ptr<WebAuth> web_auth_;
  std::shared_ptr<LiveHub> live_;
  bool stopped_ = false;
  uint64_t queue_generation_ = 0;
  // Keys that make a submission or a claim one use case however often DbWorker retries it (Store::create_campaign,
  // Store::claim_run): minted once per use case, before its job is posted. Random per controller process.
  std::string request_key();
  const std::string key_prefix_;
  std::atomic<uint64_t> keys_minted_{0};
  int sweeps_ = 0;
};

}  // namespace jetsweep::controller
