// PgStore: the read side of the API (campaign status and list, the report).
#include <pqxx/pqxx>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "common/described_json.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {
const char* kStatusSql =
    "SELECT c.id AS campaign_id, c.name, c.description, c.created_at::text AS created_at, c.run_count AS runs, "
    "  count(r.id) FILTER (WHERE r.status = 'queued') AS queued, "
    "  count(r.id) FILTER (WHERE r.status = 'assigned') AS assigned, "
    "  count(r.id) FILTER (WHERE r.status = 'running') AS running, "
    "  count(r.id) FILTER (WHERE r.status = 'done') AS done, "
    "  count(r.id) FILTER (WHERE r.status = 'failed') AS failed, "
    "  count(r.id) FILTER (WHERE r.status = 'lost') AS lost, "
    "  coalesce(sum(r.epochs), 0) AS epochs_total, "
    "  (SELECT count(*) FROM epochs e JOIN runs r2 ON r2.id = e.run_id WHERE r2.campaign_id = c.id) AS epochs_done, "
    "  count(r.id) FILTER (WHERE r.status = 'cancelled') AS cancelled, c.state, c.priority, "
    "  coalesce(sum(r.epochs) FILTER (WHERE r.status IN ('queued', 'assigned', 'running')), 0) AS open_epochs, "
    "  count(DISTINCT r.agent_id) FILTER (WHERE r.status IN ('assigned', 'running')) AS busy_agents, "
    "  (SELECT count(*) FROM epochs e JOIN runs r4 ON r4.id = e.run_id "
    "   WHERE r4.campaign_id = c.id AND r4.status IN ('assigned', 'running')) AS open_epochs_done, "
    // Wall seconds per epoch of the runs that started: real time, whatever the boards' time scale.
    "  (SELECT sum(extract(epoch FROM (coalesce(r5.finished_at, now()) - r5.started_at))) / nullif(sum(ec.n), 0) "
    "   FROM runs r5 CROSS JOIN LATERAL (SELECT count(*) AS n FROM epochs WHERE run_id = r5.id) ec "
    "   WHERE r5.campaign_id = c.id AND r5.started_at IS NOT NULL AND ec.n > 0) AS wall_per_epoch_s, "
    "  (SELECT count(*) FROM set_aside_results sa WHERE sa.campaign_id = c.id) AS set_aside_results "
    "FROM campaigns c LEFT JOIN runs r ON r.campaign_id = c.id ";

api::CampaignStatus status_row(const pqxx::row& r) {
  const pg::Row row(r);
  api::CampaignStatus o;
  // The counts from their columns; what follows, and the unrunnable runs and adaptive plans (their callers), computed.
  pg::read_columns(row, o, {"finished", "paused", "eta_s", "unrunnable_runs", "unrunnable", "adaptive"},
                   {"open_epochs", "open_epochs_done", "busy_agents", "wall_per_epoch_s"});
  const int64_t open = o.queued + o.assigned + o.running;
  o.finished = open == 0;
  // ETA in wall time: epochs still to run x wall seconds per epoch measured so far (from the runs' start and
  // finish times, so a simulated board's time scale is accounted for) / agents busy with the campaign. A
  // paused campaign has no ETA.
  o.paused = o.state == "paused";
  const std::optional<double> wall_per_epoch = row.opt_number("wall_per_epoch_s");
  if (open == 0) {
    o.eta_s = 0.0;
  } else if (!o.paused && wall_per_epoch) {
    const double remaining_epochs = static_cast<double>(row.integer("open_epochs") - row.integer("open_epochs_done"));
    const double agents = static_cast<double>(std::max<int64_t>(1, row.integer("busy_agents")));
    o.eta_s = remaining_epochs * *wall_per_epoch / agents;
  }
  return o;
}

// Queued runs of the campaign that no enrolled agent (connected, or seen in the last 24 hours) can take, and
// why: grouped by what the runs need, each group checked against the agents.
std::vector<api::Unrunnable> unrunnable(pqxx::work& w, int64_t campaign_id) {
  auto r = w.exec_params(
      "WITH enrolled AS (SELECT name, device_class, storage, mem_bytes, live_modes, may_reboot FROM agents "
      "                  WHERE connected OR last_seen > now() - interval '24 hours'), "
      "g AS (SELECT device, storage, min_mem_bytes, unfit_classes, "
      "             coalesce(config->'power_mode'->>'name', config->>'base_mode') AS mode, count(*) AS n FROM runs "
      "      WHERE campaign_id = $1 AND status = 'queued' GROUP BY 1, 2, 3, 4, 5) "
      "SELECT g.device, g.storage, g.min_mem_bytes, g.n, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name)) AS device_fits, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage))) AS storage_fits, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes) AS mem_fits, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes "
      "          AND NOT (a.device_class = ANY(g.unfit_classes))) AS model_fits, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes "
      "          AND NOT (a.device_class = ANY(g.unfit_classes)) "
      "          AND (g.mode IS NULL OR a.may_reboot OR a.live_modes = '{}' OR g.mode = ANY(a.live_modes))) AS runnable, g.mode "
      "FROM g ORDER BY g.n DESC, g.device",
      campaign_id);
  std::vector<api::Unrunnable> out;
  for (const UnrunnableGroup& g : pg::read_rows<UnrunnableGroup>(r))
    if (auto u = unrunnable_of(g)) out.push_back(std::move(*u));
  return out;
}

Result<api::CampaignStatus> status_with_unrunnable(pqxx::work& w, const pqxx::row& row) {
  api::CampaignStatus o = status_row(row);
  o.unrunnable = unrunnable(w, o.campaign_id);
  for (const auto& u : o.unrunnable) o.unrunnable_runs += u.runs;
  JS_ASSIGN_OR_RETURN(o.adaptive, pg_adaptive_plan_statuses(w, o.campaign_id, false));
  adaptive_unfinished(o);
  return o;
}
}  // namespace

Result<api::CampaignStatus> PgStore::campaign_status(int64_t campaign_id) {
  return guarded("reading campaign status", [&]() -> Result<api::CampaignStatus> {
    pqxx::work w(*conn_);
    auto r = w.exec_params(std::string(kStatusSql) + "WHERE c.id = $1 GROUP BY c.id", campaign_id);
    if (r.empty()) return not_found("no campaign " + std::to_string(campaign_id));
    JS_ASSIGN_OR_RETURN(auto o, status_with_unrunnable(w, r[0]));
    w.commit();
    return o;
  });
}

Result<std::vector<api::CampaignStatus>> PgStore::list_campaigns() {
  return guarded("listing campaigns", [&]() -> Result<std::vector<api::CampaignStatus>> {
    pqxx::work w(*conn_);
    auto r = w.exec(std::string(kStatusSql) + "GROUP BY c.id ORDER BY c.id");
    std::vector<api::CampaignStatus> out;
    for (const auto& row : r) {
      JS_ASSIGN_OR_RETURN(auto o, status_with_unrunnable(w, row));
      out.push_back(std::move(o));
    }
    w.commit();
    return out;
  });
}

namespace {
// The report's runs and epochs: of a campaign (WHERE r.campaign_id = $1), or of one run (r.id = $1).
const std::string kReportRunsSelect =
    "SELECT r.id AS run_id, r.status, a.name AS agent, r.config::text AS config, r.error, r.attempts, r.wall_s, "
    "  r.facts::text AS facts, r.applied::text AS applied, r.reference_state, r.storage AS storage_medium, r.storage_device, "
    "  r.page_cache_dropped, r.compute_device, (SELECT count(*) FROM board_reboots b WHERE b.run_id = r.id) AS reboots, "
    "  r.workload::text AS workload "
    "FROM runs r LEFT JOIN agents a ON a.id = r.agent_id ";
const std::string kReportRunsSql = kReportRunsSelect + "WHERE r.campaign_id = $1 ORDER BY r.ordinal";

// The columns of proto::EpochMeasures (named as its members), each prefixed by `prefix` and followed by ", ".
std::string epoch_measure_columns(const std::string& prefix) {
  std::string out;
  const proto::EpochMeasures measures;
  json::for_each_described(measures, [&](const char* name, const auto&) { out += prefix + name + ", "; });
  return out;
}

const std::string kReportEpochsSelect =
    "SELECT e.run_id, e.epoch, e.e2e_s, e.stall_s, e.compute_s, e.minibatches, " + epoch_measure_columns("e.") +
    "  e.cores_start, e.cores_end, e.cpu_khz_start, e.cpu_khz_end, e.gpu_hz_start, e.gpu_hz_end, e.emc_hz_start, "
    "  e.emc_hz_end, e.throttled, e.throttle_reason, "
    "  r.agent_t0_unix_s + e.t_start_s - coalesce(r.clock_offset_s, ag.clock_offset_s, 0) AS start_unix_s, "
    "  r.agent_t0_unix_s + e.t_end_s - coalesce(r.clock_offset_s, ag.clock_offset_s, 0) AS end_unix_s, "
    "  e.mb_recorded, e.stall_mean_s, e.stall_p50_s, e.stall_p95_s, e.compute_mean_s, e.compute_p50_s, e.compute_p95_s "
    "FROM epochs e JOIN runs r ON r.id = e.run_id LEFT JOIN agents ag ON ag.id = r.agent_id ";
const std::string kReportEpochsSql = kReportEpochsSelect + "WHERE r.campaign_id = $1 ORDER BY e.run_id, e.epoch";

// The clocks of an epoch row at its columns cores_`edge`, cpu_khz_`edge`, gpu_hz_`edge` and emc_hz_`edge` (edge:
// start or end); none when neither cores nor CPU was read.
std::optional<api::EpochClocks> epoch_clocks(const pg::Row& e, const std::string& edge) {
  const std::string cores = "cores_" + edge, cpu = "cpu_khz_" + edge, gpu = "gpu_hz_" + edge, emc = "emc_hz_" + edge;
  if (e.is_null(cores.c_str()) && e.is_null(cpu.c_str())) return std::nullopt;
  return api::EpochClocks{e.opt_number(cores.c_str()), e.opt_number(cpu.c_str()), e.opt_number(gpu.c_str()),
                          e.opt_number(emc.c_str())};
}

// The minibatch statistics columns of kReportEpochsSql (kept at ingest, sql/016) and the fields they fill.
constexpr std::pair<const char*, double api::MinibatchStats::*> kMinibatchStatColumns[] = {
    {"stall_mean_s", &api::MinibatchStats::stall_mean_s},     {"stall_p50_s", &api::MinibatchStats::stall_p50_s},
    {"stall_p95_s", &api::MinibatchStats::stall_p95_s},       {"compute_mean_s", &api::MinibatchStats::compute_mean_s},
    {"compute_p50_s", &api::MinibatchStats::compute_p50_s},   {"compute_p95_s", &api::MinibatchStats::compute_p95_s}};

// The rows of kReportEpochsSql (or kReportEpochsSelect), in order. Each member from the column of its name (every
// nullable column read as optional: loss is NULL when the model diverged), but the clocks, the throttle reason ("" is
// none) and the minibatch statistics, assembled from their columns; run_id is the caller's.
std::vector<api::ReportEpoch> report_epochs(const pqxx::result& rows) {
  auto out = pg::read_rows<api::ReportEpoch>(
      rows, {"clocks_start", "clocks_end", "throttle_reason", "minibatch_stats"},
      {"run_id", "throttle_reason", "cores_start", "cores_end", "cpu_khz_start", "cpu_khz_end", "gpu_hz_start",
       "gpu_hz_end", "emc_hz_start", "emc_hz_end", "mb_recorded", "stall_mean_s", "stall_p50_s", "stall_p95_s",
       "compute_mean_s", "compute_p50_s", "compute_p95_s"});
  for (size_t i = 0; i < out.size(); ++i) {
    const pg::Row e(rows[static_cast<pqxx::result::size_type>(i)]);
    api::ReportEpoch& o = out[i];
    o.clocks_start = epoch_clocks(e, "start");
    o.clocks_end = epoch_clocks(e, "end");
    if (auto reason = e.opt_text("throttle_reason"); reason && !reason->empty()) o.throttle_reason = *reason;
    // None when no minibatch was stored (then the statistics are NULL).
    bool stats = e.integer("mb_recorded") > 0;
    for (const auto& [column, field] : kMinibatchStatColumns) stats = stats && !e.is_null(column);
    if (stats) {
      api::MinibatchStats m;
      m.recorded = e.integer("mb_recorded");
      for (const auto& [column, field] : kMinibatchStatColumns) m.*field = e.number(column);
      o.minibatch_stats = m;
    }
  }
  return out;
}

// A row of kReportRunsSql (its epochs are added by the caller).
api::ReportRun report_run(const pqxx::row& r) {
  const pg::Row row(r);
  api::ReportRun o;
  // Each member from its column (applied: the state the run executed in, as its agent read it back; workload: what
  // it measured it trained), but the config (the keys a report shows), the mark of a simulated board's results and
  // the epochs (the caller's).
  pg::read_columns(row, o, {"config", "simulated", "epochs", "summary"}, {"config"});
  if (auto cfg = row.opt_object("config")) o.config = api::report_config(*cfg);
  o.simulated = api::simulated_backend(o.facts);   // results from simulated boards are marked in every report
  return o;
}
}  // namespace

namespace {

// Each run's epochs summarised in the database, as api::summarize_epochs summarises the rows (for ?epochs=none):
// epoch 0's figures; the sums over epochs 1+ added in epoch order, as the C++ loop adds them (so the means are the
// same to the last bit); the minibatches of the last epoch; the first throttled epoch; whether any epoch has energy.
const char* const kReportSummariesSql =
    "SELECT e.run_id, count(*) AS epochs, (array_agg(e.minibatches ORDER BY e.epoch DESC))[1] AS minibatches, "
    "  max(e.e2e_s) FILTER (WHERE e.epoch = 0) AS e0_e2e_s, max(e.stall_s) FILTER (WHERE e.epoch = 0) AS e0_stall_s, "
    "  max(e.compute_s) FILTER (WHERE e.epoch = 0) AS e0_compute_s, "
    "  max(e.energy_j) FILTER (WHERE e.epoch = 0) AS e0_energy_j, "
    "  count(*) FILTER (WHERE e.epoch > 0) AS later_epochs, "
    "  sum(e.e2e_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0) AS later_e2e_sum, "
    "  sum(e.stall_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0) AS later_stall_sum, "
    "  sum(e.compute_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0) AS later_compute_sum, "
    "  sum(e.energy_j ORDER BY e.epoch) FILTER (WHERE e.epoch > 0) AS later_energy_sum, "
    "  coalesce(bool_and(e.energy_j IS NOT NULL) FILTER (WHERE e.epoch > 0), true) AS later_all_energy, "
    "  count(*) FILTER (WHERE e.throttled) AS throttled_epochs, "
    "  (array_agg('epoch ' || e.epoch || ': ' || coalesce(nullif(e.throttle_reason, ''), '-') ORDER BY e.epoch) "
    "     FILTER (WHERE e.throttled))[1] AS first_throttle, "
    "  bool_or(e.energy_j IS NOT NULL) AS any_energy "
    "FROM epochs e JOIN runs r ON r.id = e.run_id WHERE r.campaign_id = $1 GROUP BY e.run_id";

// A row of kReportSummariesSql: each member from the column of its name, but the means over epochs 1 and later
// (from their sums); run_id and any_energy are the caller's.
api::RunEpochSummary report_summary(const pqxx::row& r) {
  const pg::Row row(r);
  api::RunEpochSummary s;
  pg::read_columns(row, s, {"later_e2e_s", "later_stall_s", "later_compute_s", "later_energy_j"},
                   {"run_id", "any_energy", "later_e2e_sum", "later_stall_sum", "later_compute_sum", "later_energy_sum",
                    "later_all_energy"});
  if (s.later_epochs > 0) {
    // + 0.0: the C++ loop starts its sums from +0, so a sum of -0 values is +0 there (SQL's starts from the first).
    const auto n = static_cast<double>(s.later_epochs);
    s.later_e2e_s = (row.number("later_e2e_sum") + 0.0) / n;
    s.later_stall_s = (row.number("later_stall_sum") + 0.0) / n;
    s.later_compute_s = (row.number("later_compute_sum") + 0.0) / n;
    if (row.boolean("later_all_energy")) s.later_energy_j = (row.number("later_energy_sum") + 0.0) / n;
  }
  return s;
}

}  // namespace

Result<api::CampaignReport> PgStore::campaign_report(int64_t campaign_id, ReportEpochs epochs) {
  return guarded("building the report", [&]() -> Result<api::CampaignReport> {
    pqxx::work w(*conn_);
    auto c = w.exec_params(
        "SELECT id, name, description, source_file, created_at::text AS created_at FROM campaigns WHERE id = $1",
        campaign_id);
    if (c.empty()) return not_found("no campaign " + std::to_string(campaign_id));
    const pg::Row campaign(c[0]);
    api::CampaignReport report;
    report.campaign = {campaign.integer("id"), campaign.text("name"), campaign.text("description"),
                       campaign.text("source_file"), campaign.text("created_at")};
    report.epochs_included = epochs == ReportEpochs::kRows;
    auto runs = w.exec_params(kReportRunsSql, campaign_id);
    std::map<int64_t, std::vector<api::ReportEpoch>> rows_by_run;
    std::map<int64_t, api::RunEpochSummary> summary_by_run;
    if (report.epochs_included) {
      const auto rows = w.exec_params(kReportEpochsSql, campaign_id);
      auto read = report_epochs(rows);
      for (size_t i = 0; i < read.size(); ++i) {
        report.power_sensor |= read[i].energy_j.has_value();
        rows_by_run[rows[static_cast<pqxx::result::size_type>(i)]["run_id"].as<int64_t>()].push_back(std::move(read[i]));
      }
    } else {
      for (const auto& row : w.exec_params(kReportSummariesSql, campaign_id)) {
        report.power_sensor |= row["any_energy"].as<bool>();
        summary_by_run[row["run_id"].as<int64_t>()] = report_summary(row);
      }
    }
    JS_ASSIGN_OR_RETURN(report.adaptive, pg_adaptive_plan_statuses(w, campaign_id, true));
    w.commit();
    for (const auto& row : runs) {
      api::ReportRun run = report_run(row);
      if (auto it = rows_by_run.find(run.run_id); it != rows_by_run.end()) run.epochs = std::move(it->second);
      run.summary = api::summarize_epochs(run.epochs);
      if (auto it = summary_by_run.find(run.run_id); it != summary_by_run.end()) run.summary = it->second;
      report.simulated_runs += run.simulated ? 1 : 0;
      report.runs.push_back(std::move(run));
    }
    return report;
  });
}

Result<api::RunDetail> PgStore::run_detail(int64_t run_id) {
  return guarded("reading a run", [&]() -> Result<api::RunDetail> {
    pqxx::work w(*conn_);
    auto runs = w.exec_params(kReportRunsSelect + "WHERE r.id = $1", run_id);
    if (runs.empty()) return not_found("no run " + std::to_string(run_id));
    auto c = w.exec_params("SELECT c.id, c.name FROM campaigns c JOIN runs r ON r.campaign_id = c.id WHERE r.id = $1",
                           run_id);
    auto epochs = w.exec_params(kReportEpochsSelect + "WHERE r.id = $1 ORDER BY e.epoch", run_id);
    w.commit();
    api::RunDetail out;
    static_cast<api::ReportRun&>(out) = report_run(runs[0]);
    out.epochs = report_epochs(epochs);
    out.summary = api::summarize_epochs(out.epochs);
    if (!c.empty()) {
      out.campaign_id = c[0]["id"].as<int64_t>();
      out.campaign_name = c[0]["name"].c_str();
    }
    return out;
  });
}

Result<std::vector<api::RunSample>> PgStore::run_samples(int64_t run_id) {
  return guarded("reading a run's samples", [&]() -> Result<std::vector<api::RunSample>> {
    pqxx::work w(*conn_);
    auto run = w.exec_params("SELECT campaign_id FROM runs WHERE id = $1", run_id);
    if (run.empty()) return not_found("no run " + std::to_string(run_id));
    // t_unix_s as the report's epoch windows: the agent's clock at the run's t = 0, less its clock offset.
    auto rows = w.exec_params(
        "SELECT s.t_s, r.agent_t0_unix_s + s.t_s - coalesce(r.clock_offset_s, ag.clock_offset_s, 0) AS t_unix_s, s.power_w, "
        "  s.cpu_util_pct, s.cpu_freq_mhz, s.mem_used_kb, s.disk_read_bytes, s.temp_max_c "
        "FROM samples s JOIN runs r ON r.id = s.run_id LEFT JOIN agents ag ON ag.id = r.agent_id "
        "WHERE s.campaign_id = $2 AND s.run_id = $1 ORDER BY s.t_s",   // campaign_id: its partition only
        run_id, run[0]["campaign_id"].as<int64_t>());
    w.commit();
    return pg::read_rows<api::RunSample>(rows);
  });
}

}  // namespace jetsweep::controller
