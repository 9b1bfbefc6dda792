// GET /api/fleet (every board with its recent telemetry) and GET /metrics (Prometheus text exposition 0.0.4 of the
// fleet, the queue, dispatch, ingest and the database). Io thread, like every Controller handler; the store rows
// each needs are read in one DbWorker job.
#include <boost/json.hpp>
#include <map>
#include <set>

#include "common/api.hpp"
#include "controller/agent_session.hpp"
#include "controller/api_call.hpp"
#include "controller/fleet_telemetry.hpp"
#include "controller/metrics.hpp"

namespace jetsweep::controller {
namespace http = boost::beast::http;
namespace bj = boost::json;
using metrics::Labels;
using metrics::Registry;

void Controller::api_fleet(const ApiCall& call) {
  auto self = shared_from_this();
  db_.post<Result<FleetRows>>(executor(), load_fleet_rows, [self, call](Result<FleetRows> r) {
    if (!r) return call.fail(r.status());
    call.reply(http::status::ok, api::to_json(fleet_boards(r.value(), self->fleet_telemetry_, proto::unix_now_s())));
  });
}

namespace {

// The store rows one scrape needs (read in one DbWorker job).
struct ScrapeRows {
  FleetRows fleet;
  std::vector<api::CampaignStatus> campaigns;
};

Result<ScrapeRows> load_scrape_rows(Store& s) {
  ScrapeRows rows;
  JS_ASSIGN_OR_RETURN(rows.fleet, load_fleet_rows(s));
  JS_ASSIGN_OR_RETURN(rows.campaigns, s.list_campaigns());
  return rows;
}

// A number in the applied board state (0 = not known on the board: not reported).
std::optional<double> applied_number(const api::FleetBoard& b, const char* key) {
  if (!b.applied) return std::nullopt;
  const auto* v = b.applied->if_contains(key);
  if (!v || !v->is_number()) return std::nullopt;
  const double x = v->to_number<double>();
  return x > 0 ? std::optional<double>(x) : std::nullopt;
}

void add_agent_counts(Registry& reg, const std::vector<api::FleetBoard>& boards) {
  const char* help = "Agents known to the controller, by state (idle, busy, offline; as /api/agents) and board class";
  reg.declare("jetsweep_agents", help, "gauge");
  std::map<std::pair<std::string, std::string>, int> counts;   // (class, state)
  std::set<std::string> classes;
  for (const auto& b : boards) {
    ++counts[{b.device_class, b.state}];
    classes.insert(b.device_class);
  }
  // Every state of every class present, zeros included, so a state emptied shows 0 rather than vanishing.
  for (const auto& cls : classes)
    for (const char* state : {"idle", "busy", "offline"})
      reg.gauge("jetsweep_agents", help, {{"state", state}, {"device_class", cls}}, counts[{cls, state}]);
}

void add_board_gauges(Registry& reg, const std::vector<api::FleetBoard>& boards) {
  for (const auto& b : boards) {
    const Labels l = {{"name", b.name}, {"device_class", b.device_class}};
    reg.gauge("jetsweep_board_connected", "1 when the board's agent is connected", l, b.connected ? 1 : 0);
    reg.gauge("jetsweep_board_ready", "1 when the board passed its readiness checks", l, b.ready() ? 1 : 0);
    if (b.last_heartbeat_unix_s)
      reg.gauge("jetsweep_board_last_heartbeat_timestamp_seconds",
                "When the board's last heartbeat arrived (Unix seconds, controller clock)", l, *b.last_heartbeat_unix_s);
    if (b.latest) {
      // Agents sample only while they run something: an idle board's gauges vanish 5 minutes after its last run.
      if (b.latest->power_w)
        reg.gauge("jetsweep_board_power_watts", "Board power, newest sample (boards with a power sensor)", l,
                  *b.latest->power_w);
      reg.gauge("jetsweep_board_cpu_utilization_percent", "CPU utilisation over all cores, newest sample", l,
                b.latest->cpu_util_pct);
      if (b.latest->cpu_freq_mhz)
        reg.gauge("jetsweep_board_cpu_frequency_hertz", "Mean CPU frequency of the online cores, newest sample", l,
                  *b.latest->cpu_freq_mhz * 1e6);
      if (b.latest->temp_max_c)
        reg.gauge("jetsweep_board_temperature_max_celsius",
                  "Hottest thermal zone, newest sample (boards with readable zones; none on simulated boards)", l,
                  *b.latest->temp_max_c);
      reg.gauge("jetsweep_board_memory_used_bytes", "Memory in use, newest sample", l,
                static_cast<double>(b.latest->mem_used_kb) * 1024.0);
      reg.gauge("jetsweep_board_sample_timestamp_seconds", "Time of the newest sample (Unix seconds, controller clock)",
                l, b.latest->t_unix_s);
    }
    const char* applied_help = "Applied by the board's current or last run and read back: ";
    if (auto v = applied_number(b, "cpu_khz"))
      reg.gauge("jetsweep_board_applied_cpu_frequency_hertz", std::string(applied_help) + "CPU frequency cap", l, *v * 1e3);
    if (auto v = applied_number(b, "gpu_hz"))
      reg.gauge("jetsweep_board_applied_gpu_frequency_hertz", std::string(applied_help) + "GPU frequency cap", l, *v);
    if (auto v = applied_number(b, "emc_hz"))
      reg.gauge("jetsweep_board_applied_emc_frequency_hertz", std::string(applied_help) + "EMC (memory) rate", l, *v);
    if (auto v = applied_number(b, "cores_online"))
      reg.gauge("jetsweep_board_applied_cores_online", std::string(applied_help) + "CPU cores online", l, *v);
    if (b.power_mode) {
      Labels with_mode = l;
      with_mode.emplace_back("mode", *b.power_mode);
      reg.gauge("jetsweep_board_power_mode_info", std::string(applied_help) + "power mode (value always 1)", with_mode, 1);
    }
  }
}

void add_run_counts(Registry& reg, const std::vector<api::CampaignStatus>& campaigns) {
  std::map<std::string, int64_t> runs = {{"queued", 0}, {"assigned", 0}, {"running", 0}, {"done", 0},
                                         {"failed", 0}, {"lost", 0},     {"cancelled", 0}};
  for (const auto& c : campaigns) {
    runs["queued"] += c.queued;
    runs["assigned"] += c.assigned;
    runs["running"] += c.running;
    runs["done"] += c.done;
    runs["failed"] += c.failed;
    runs["lost"] += c.lost;
    runs["cancelled"] += c.cancelled;
  }
  for (const auto& [state, n] : runs)
    reg.gauge("jetsweep_runs", "Runs of every campaign, by state (as the sums of /api/campaigns)", {{"state", state}},
              static_cast<double>(n));
  const char* queue_help = "Queued runs of each unfinished campaign (queue depth)";
  reg.declare("jetsweep_campaign_queued_runs", queue_help, "gauge");
  for (const auto& c : campaigns) {
    if (c.finished) continue;
    const Labels l = {{"campaign_id", std::to_string(c.campaign_id)}, {"campaign", c.name}, {"state", c.state}};
    reg.gauge("jetsweep_campaign_queued_runs", queue_help, l, static_cast<double>(c.queued));
    reg.gauge("jetsweep_campaign_executing_runs", "Assigned and running runs of each unfinished campaign", l,
              static_cast<double>(c.assigned + c.running));
    reg.gauge("jetsweep_campaign_unrunnable_runs", "Queued runs of each unfinished campaign that no agent can take", l,
              static_cast<double>(c.unrunnable_runs));
  }
}

void add_db_worker(Registry& reg, const std::string& worker, const DbWorker& db) {
  const Labels l = {{"worker", worker}};
  reg.histogram("jetsweep_db_latency_seconds",
                "Duration of each database call (every attempt, retries included), by DbWorker", l, db.latency());
  reg.declare("jetsweep_db_errors_total", "Database calls that returned an error, by DbWorker and status code", "counter");
  for (const auto& [code, n] : db.errors_by_code()) {
    Labels with_code = l;
    with_code.emplace_back("code", code);
    reg.counter("jetsweep_db_errors_total", "", with_code, static_cast<double>(n));
  }
  reg.gauge("jetsweep_db_queue_jobs", "Jobs waiting for each DbWorker", l, static_cast<double>(db.queued()));
}

void add_controller_metrics(Registry& reg, const metrics::ControllerMetrics& m) {
  reg.histogram("jetsweep_dispatch_latency_seconds",
                "From a run claim posted to the database to its assign_run sent to the agent", {}, m.dispatch_s.snapshot());
  reg.counter("jetsweep_clock_probes_discarded_total",
              "Clock probes discarded because their reply waited behind results (reading paused, or a slow round trip)",
              {}, static_cast<double>(m.clock_probes_discarded.value()));
  const char* messages_help = "Ingest messages committed to the database and acknowledged, by message type";
  const char* duplicates_help = "Ingest messages acknowledged as duplicates (all of it stored already: resends), by type";
  const char* set_aside_help =
      "Ingest messages set aside: measured by an agent that no longer held the run (kept in set_aside_results), by type";
  const char* rows_help = "Rows stored (type minibatches: minibatch rows; samples: telemetry samples), by message type";
  const char* seconds_help = "From an ingest message's arrival to its commit, by message type";
  reg.declare("jetsweep_ingest_messages_total", messages_help, "counter");
  reg.declare("jetsweep_ingest_duplicates_total", duplicates_help, "counter");
  reg.declare("jetsweep_ingest_set_aside_total", set_aside_help, "counter");
  reg.declare("jetsweep_ingest_rows_total", rows_help, "counter");
  reg.declare("jetsweep_ingest_latency_seconds", seconds_help, "histogram");
  for (const auto& [type, per] : m.ingest_by_type()) {
    reg.counter("jetsweep_ingest_messages_total", messages_help, {{"type", type}}, static_cast<double>(per.messages.value()));
    reg.counter("jetsweep_ingest_duplicates_total", duplicates_help, {{"type", type}},
                static_cast<double>(per.duplicates.value()));
    reg.counter("jetsweep_ingest_set_aside_total", set_aside_help, {{"type", type}},
                static_cast<double>(per.set_aside.value()));
    if (type == "minibatches" || type == "samples")
      reg.counter("jetsweep_ingest_rows_total", rows_help, {{"type", type}}, static_cast<double>(per.rows.value()));
    reg.histogram("jetsweep_ingest_latency_seconds", seconds_help, {{"type", type}}, per.seconds.snapshot());
  }
}

HttpResponse text_response(const HttpRequest& req, std::string body) {
  HttpResponse res{http::status::ok, req.version()};
  res.set(http::field::server, "jetsweep-controller");
  res.set(http::field::content_type, metrics::kContentType);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

}  // namespace

void Controller::add_flow_gauges(metrics::Registry& reg, const std::vector<api::FleetBoard>& boards) const {
  // Back-pressure per agent (issue 29): what the agent still holds unacknowledged (from its heartbeats), and on
  // this side what waits for the database and whether reading is paused for it; and over all agents, the bytes
  // waiting against the controller's limit (IngestBudget).
  reg.gauge("jetsweep_ingest_bytes_in_flight", "Bytes of agents' results read and waiting for the database, all agents", {},
            static_cast<double>(ingest_budget_.bytes()));
  reg.gauge("jetsweep_ingest_bytes_in_flight_peak", "The most bytes of agents' results waiting at once since the start",
            {}, static_cast<double>(ingest_budget_.peak_bytes()));
  reg.gauge("jetsweep_ingest_bytes_limit", "Bytes of agents' results that may wait for the database (--max-ingest-mb)",
            {}, static_cast<double>(ingest_budget_.max_bytes()));
  size_t waiting = 0;
  for (const auto& [id, weak] : agents_)
    if (auto session = weak.lock(); session && session->open() && session->waiting_for_budget()) ++waiting;
  reg.gauge("jetsweep_ingest_connections_waiting", "Agent connections waiting for room under the ingest byte limit", {},
            static_cast<double>(waiting));
  for (const auto& b : boards) {
    const metrics::Labels l = {{"name", b.name}, {"device_class", b.device_class}};
    if (b.backlog_messages)
      reg.gauge("jetsweep_board_agent_backlog_messages", "Result messages the agent holds not yet acknowledged", l,
                static_cast<double>(*b.backlog_messages));
    if (b.backlog_bytes)
      reg.gauge("jetsweep_board_agent_backlog_bytes", "Bytes of result messages the agent holds not yet acknowledged",
                l, static_cast<double>(*b.backlog_bytes));
    auto it = agents_.find(b.agent_id);
    auto session = it == agents_.end() ? nullptr : it->second.lock();
    if (!session || !session->open()) continue;
    reg.gauge("jetsweep_board_ingest_in_flight", "The agent's results read and waiting for the database", l,
              static_cast<double>(session->ingest_in_flight()));
    reg.gauge("jetsweep_board_reading_paused", "1 while the controller stops reading the agent until the database catches up",
              l, session->reading() ? 0 : 1);
  }
}

void Controller::api_metrics(const ApiCall& call) {
  auto self = shared_from_this();
  db_.post<Result<ScrapeRows>>(executor(), load_scrape_rows, [self, call](Result<ScrapeRows> r) {
    if (!r) return call.fail(r.status());
    Registry reg;
    const auto boards = fleet_boards(r->fleet, self->fleet_telemetry_, proto::unix_now_s());
    add_agent_counts(reg, boards);
    reg.gauge("jetsweep_agent_sessions", "Agent connections registered with this controller process", {},
              static_cast<double>(self->agents_.size()));
    add_run_counts(reg, r->campaigns);
    add_controller_metrics(reg, self->metrics_);
    add_db_worker(reg, "main", self->db_);
    for (size_t i = 0; i < self->ingest_.size(); ++i) add_db_worker(reg, "ingest-" + std::to_string(i), *self->ingest_[i]);
    add_board_gauges(reg, boards);
    self->add_flow_gauges(reg, boards);
    call.respond(text_response(*call.req, reg.text()));
  });
}

}  // namespace jetsweep::controller
