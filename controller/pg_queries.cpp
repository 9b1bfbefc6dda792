// PgStore: the read side of the API (campaign status and list, the report).
#include <pqxx/pqxx>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {
const char* kStatusSql =
    "SELECT c.id, c.name, c.description, c.created_at::text, c.run_count, "
    "  count(r.id) FILTER (WHERE r.status = 'queued'), count(r.id) FILTER (WHERE r.status = 'assigned'), "
    "  count(r.id) FILTER (WHERE r.status = 'running'), count(r.id) FILTER (WHERE r.status = 'done'), "
    "  count(r.id) FILTER (WHERE r.status = 'failed'), count(r.id) FILTER (WHERE r.status = 'lost'), "
    "  coalesce(sum(r.epochs), 0), "
    "  (SELECT count(*) FROM epochs e JOIN runs r2 ON r2.id = e.run_id WHERE r2.campaign_id = c.id), "
    "  count(r.id) FILTER (WHERE r.status = 'cancelled'), c.state, c.priority, "
    "  (SELECT avg(e.e2e_s) FROM epochs e JOIN runs r3 ON r3.id = e.run_id WHERE r3.campaign_id = c.id), "
    "  coalesce(sum(r.epochs) FILTER (WHERE r.status IN ('queued', 'assigned', 'running')), 0), "
    "  count(DISTINCT r.agent_id) FILTER (WHERE r.status IN ('assigned', 'running')), "
    "  (SELECT count(*) FROM epochs e JOIN runs r4 ON r4.id = e.run_id "
    "   WHERE r4.campaign_id = c.id AND r4.status IN ('assigned', 'running')), "
    // Wall seconds per epoch of the runs that started: real time, whatever the boards' time scale.
    "  (SELECT sum(extract(epoch FROM (coalesce(r5.finished_at, now()) - r5.started_at))) / nullif(sum(ec.n), 0) "
    "   FROM runs r5 CROSS JOIN LATERAL (SELECT count(*) AS n FROM epochs WHERE run_id = r5.id) ec "
    "   WHERE r5.campaign_id = c.id AND r5.started_at IS NOT NULL AND ec.n > 0), "
    "  (SELECT count(*) FROM set_aside_results sa WHERE sa.campaign_id = c.id) "
    "FROM campaigns c LEFT JOIN runs r ON r.campaign_id = c.id ";

api::CampaignStatus status_row(const pqxx::row& row) {
  api::CampaignStatus o;
  o.campaign_id = row[0].as<int64_t>();
  o.name = row[1].c_str();
  o.description = row[2].c_str();
  o.created_at = row[3].c_str();
  o.runs = row[4].as<int64_t>();
  o.queued = row[5].as<int64_t>();
  o.assigned = row[6].as<int64_t>();
  o.running = row[7].as<int64_t>();
  o.done = row[8].as<int64_t>();
  o.failed = row[9].as<int64_t>();
  o.lost = row[10].as<int64_t>();
  o.epochs_total = row[11].as<int64_t>();
  o.epochs_done = row[12].as<int64_t>();
  o.cancelled = row[13].as<int64_t>();
  o.state = row[14].c_str();
  o.priority = row[15].as<int64_t>();
  o.set_aside_results = row[21].as<int64_t>();
  const int64_t open = o.queued + o.assigned + o.running;
  o.finished = open == 0;
  // ETA in wall time: epochs still to run x wall seconds per epoch measured so far (from the runs' start and
  // finish times, so a simulated board's time scale is accounted for) / agents busy with the campaign. A
  // paused campaign has no ETA.
  o.paused = o.state == "paused";
  const std::optional<double> wall_per_epoch = pg::opt_number(row[20]);
  if (open == 0) {
    o.eta_s = 0.0;
  } else if (!o.paused && wall_per_epoch) {
    const double remaining_epochs = static_cast<double>(row[17].as<int64_t>() - row[19].as<int64_t>());
    const double agents = static_cast<double>(std::max<int64_t>(1, row[18].as<int64_t>()));
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
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name)), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage))), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes "
      "          AND NOT (a.device_class = ANY(g.unfit_classes))), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes "
      "          AND NOT (a.device_class = ANY(g.unfit_classes)) "
      "          AND (g.mode IS NULL OR a.may_reboot OR a.live_modes = '{}' OR g.mode = ANY(a.live_modes))), g.mode "
      "FROM g ORDER BY g.n DESC, g.device",
      campaign_id);
  std::vector<api::Unrunnable> out;
  for (const auto& row : r) {
    if (row[8].as<bool>()) continue;
    const int64_t n = row[3].as<int64_t>();
    const std::string device = row[0].c_str();
    const std::string runs = std::to_string(n) + (n == 1 ? " run needs " : " runs need ");
    std::string reason;
    if (!row[4].as<bool>()) {
      reason = runs + "device '" + device + "'; no enrolled agent is one";
    } else if (!row[5].as<bool>()) {
      reason = runs + "storage @" + std::string(row[1].c_str()) + "; no agent" +
               (device == "any" ? std::string() : " of '" + device + "'") + " offers it (agent --storage " +
               row[1].c_str() + "=DIR)";
    } else if (!row[6].as<bool>()) {
      reason = runs + std::to_string(row[2].as<int64_t>() >> 20) + " MiB of RAM; no agent" +
               (device == "any" ? std::string() : " of '" + device + "'") + " has that much";
    } else if (!row[7].as<bool>()) {
      reason = runs + "a board their model fits on; the enrolled boards of '" + device + "' run out of memory";
    } else {
      reason = gating_unrunnable_reason(runs, device, row[9].c_str());
    }
    out.push_back({n, reason});
  }
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
    "SELECT r.id, r.status, a.name, r.config::text, r.error, r.attempts, r.wall_s, r.facts::text, r.applied::text, "
    "  r.reference_state, r.storage, r.storage_device, r.page_cache_dropped, r.compute_device, "
    "  (SELECT count(*) FROM board_reboots b WHERE b.run_id = r.id), r.workload::text "
    "FROM runs r LEFT JOIN agents a ON a.id = r.agent_id ";
const std::string kReportRunsSql = kReportRunsSelect + "WHERE r.campaign_id = $1 ORDER BY r.ordinal";

const std::string kReportEpochsSelect =
    "SELECT e.run_id, e.epoch, e.e2e_s, e.stall_s, e.compute_s, e.minibatches, e.energy_j, e.mean_power_w, e.loss, "
    "  e.read_mb_s, e.read_iops, e.cache_start_frac, e.cache_end_frac, e.t_start_s, e.t_end_s, e.power_coverage, "
    "  e.cores_start, e.cores_end, e.cpu_khz_start, e.cpu_khz_end, e.gpu_hz_start, e.gpu_hz_end, e.emc_hz_start, "
    "  e.emc_hz_end, e.throttled, e.throttle_reason, "
    "  r.agent_t0_unix_s + e.t_start_s - coalesce(ag.clock_offset_s, 0), "
    "  r.agent_t0_unix_s + e.t_end_s - coalesce(ag.clock_offset_s, 0), "
    "  e.mb_recorded, e.stall_mean_s, e.stall_p50_s, e.stall_p95_s, e.compute_mean_s, e.compute_p50_s, e.compute_p95_s "
    "FROM epochs e JOIN runs r ON r.id = e.run_id LEFT JOIN agents ag ON ag.id = r.agent_id ";
const std::string kReportEpochsSql = kReportEpochsSelect + "WHERE r.campaign_id = $1 ORDER BY e.run_id, e.epoch";

// The clocks of an epoch row at columns `cores`, `cpu`, `gpu`, `emc`; none when neither cores nor CPU was read.
std::optional<api::EpochClocks> epoch_clocks(const pqxx::row& e, int cores, int cpu, int gpu, int emc) {
  if (e[cores].is_null() && e[cpu].is_null()) return std::nullopt;
  return api::EpochClocks{pg::opt_number(e[cores]), pg::opt_number(e[cpu]), pg::opt_number(e[gpu]),
                          pg::opt_number(e[emc])};
}

// The nullable number columns of kReportEpochsSql and the fields they fill.
constexpr std::pair<int, std::optional<double> api::ReportEpoch::*> kEpochNumberColumns[] = {
    {6, &api::ReportEpoch::energy_j},        {7, &api::ReportEpoch::mean_power_w},
    {8, &api::ReportEpoch::loss},            {9, &api::ReportEpoch::read_mb_s},
    {10, &api::ReportEpoch::read_iops},      {11, &api::ReportEpoch::cache_start_frac},
    {12, &api::ReportEpoch::cache_end_frac}, {13, &api::ReportEpoch::t_start_s},
    {14, &api::ReportEpoch::t_end_s},        {15, &api::ReportEpoch::power_coverage}};

// A row of kReportEpochsSql. Every nullable column is read as optional (loss is NULL when the model diverged).
api::ReportEpoch report_epoch(const pqxx::row& e) {
  api::ReportEpoch o;
  o.epoch = e[1].as<int64_t>();
  o.e2e_s = e[2].as<double>();
  o.stall_s = e[3].as<double>();
  o.compute_s = e[4].as<double>();
  o.minibatches = e[5].as<int64_t>();
  for (const auto& [column, field] : kEpochNumberColumns) o.*field = pg::opt_number(e[column]);
  o.clocks_start = epoch_clocks(e, 16, 18, 20, 22);
  o.clocks_end = epoch_clocks(e, 17, 19, 21, 23);
  o.throttled = e[24].as<bool>();
  if (!e[25].is_null() && e[25].size() > 0) o.throttle_reason = e[25].c_str();
  o.start_unix_s = pg::opt_number(e[26]);   // the epoch's window on the controller's clock
  o.end_unix_s = pg::opt_number(e[27]);
  // Kept at ingest (sql/016); none when no minibatch was stored (then the statistics are NULL).
  bool stats = e[28].as<int64_t>() > 0;
  for (int c = 29; c <= 34; ++c) stats = stats && !e[c].is_null();
  if (stats)
    o.minibatch_stats = api::MinibatchStats{e[28].as<int64_t>(), e[29].as<double>(), e[30].as<double>(),
                                            e[31].as<double>(),  e[32].as<double>(), e[33].as<double>(),
                                            e[34].as<double>()};
  return o;
}

// A row of kReportRunsSql (its epochs are added by the caller).
api::ReportRun report_run(const pqxx::row& row) {
  api::ReportRun o;
  o.run_id = row[0].as<int64_t>();
  o.status = row[1].c_str();
  o.agent = pg::opt_text(row[2]);
  if (auto cfg = pg::opt_object(row[3])) o.config = api::report_config(*cfg);
  o.error = row[4].c_str();
  o.attempts = row[5].as<int64_t>();
  o.reboots = row[14].as<int64_t>();
  o.wall_s = pg::opt_number(row[6]);
  o.facts = pg::opt_object(row[7]);
  // The state the run executed in, as its agent applied and read it back (null until it started).
  o.applied = pg::opt_object(row[8]);
  o.reference_state = pg::opt_bool(row[9]);
  o.storage_medium = pg::opt_text(row[10]);
  o.storage_device = pg::opt_text(row[11]);
  o.page_cache_dropped = pg::opt_bool(row[12]);
  o.compute_device = pg::opt_text(row[13]);   // what it trained on: "cpu", "cuda:0 (NAME)", "simulated"
  o.workload = pg::opt_object(row[15]);       // what the agent measured it trained (proto::WorkloadFacts)
  o.simulated = api::simulated_backend(o.facts);   // results from simulated boards are marked in every report
  return o;
}
}  // namespace

namespace {

// Each run's epochs summarised in the database, as api::summarize_epochs summarises the rows (for ?epochs=none):
// epoch 0's figures; the sums over epochs 1+ added in epoch order, as the C++ loop adds them (so the means are the
// same to the last bit); the minibatches of the last epoch; the first throttled epoch; whether any epoch has energy.
const char* const kReportSummariesSql =
    "SELECT e.run_id, count(*), (array_agg(e.minibatches ORDER BY e.epoch DESC))[1], "
    "  max(e.e2e_s) FILTER (WHERE e.epoch = 0), max(e.stall_s) FILTER (WHERE e.epoch = 0), "
    "  max(e.compute_s) FILTER (WHERE e.epoch = 0), max(e.energy_j) FILTER (WHERE e.epoch = 0), "
    "  count(*) FILTER (WHERE e.epoch > 0), sum(e.e2e_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0), "
    "  sum(e.stall_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0), "
    "  sum(e.compute_s ORDER BY e.epoch) FILTER (WHERE e.epoch > 0), "
    "  sum(e.energy_j ORDER BY e.epoch) FILTER (WHERE e.epoch > 0), "
    "  coalesce(bool_and(e.energy_j IS NOT NULL) FILTER (WHERE e.epoch > 0), true), "
    "  count(*) FILTER (WHERE e.throttled), "
    "  (array_agg('epoch ' || e.epoch || ': ' || coalesce(nullif(e.throttle_reason, ''), '-') ORDER BY e.epoch) "
    "     FILTER (WHERE e.throttled))[1], "
    "  bool_or(e.energy_j IS NOT NULL) "
    "FROM epochs e JOIN runs r ON r.id = e.run_id WHERE r.campaign_id = $1 GROUP BY e.run_id";

// A row of kReportSummariesSql.
api::RunEpochSummary report_summary(const pqxx::row& row) {
  api::RunEpochSummary s;
  s.epochs = row[1].as<int64_t>();
  s.minibatches = row[2].as<int64_t>();
  s.e0_e2e_s = pg::opt_number(row[3]);
  s.e0_stall_s = pg::opt_number(row[4]);
  s.e0_compute_s = pg::opt_number(row[5]);
  s.e0_energy_j = pg::opt_number(row[6]);
  s.later_epochs = row[7].as<int64_t>();
  if (s.later_epochs > 0) {
    // + 0.0: the C++ loop starts its sums from +0, so a sum of -0 values is +0 there (SQL's starts from the first).
    const auto n = static_cast<double>(s.later_epochs);
    s.later_e2e_s = (row[8].as<double>() + 0.0) / n;
    s.later_stall_s = (row[9].as<double>() + 0.0) / n;
    s.later_compute_s = (row[10].as<double>() + 0.0) / n;
    if (row[12].as<bool>()) s.later_energy_j = (row[11].as<double>() + 0.0) / n;
  }
  s.throttled_epochs = row[13].as<int64_t>();
  s.first_throttle = pg::opt_text(row[14]);
  return s;
}

}  // namespace

Result<api::CampaignReport> PgStore::campaign_report(int64_t campaign_id, ReportEpochs epochs) {
  return guarded("building the report", [&]() -> Result<api::CampaignReport> {
    pqxx::work w(*conn_);
    auto c = w.exec_params("SELECT id, name, description, source_file, created_at::text FROM campaigns WHERE id = $1",
                           campaign_id);
    if (c.empty()) return not_found("no campaign " + std::to_string(campaign_id));
    api::CampaignReport report;
    report.campaign = {c[0][0].as<int64_t>(), c[0][1].c_str(), c[0][2].c_str(), c[0][3].c_str(), c[0][4].c_str()};
    report.epochs_included = epochs == ReportEpochs::kRows;
    auto runs = w.exec_params(kReportRunsSql, campaign_id);
    std::map<int64_t, std::vector<api::ReportEpoch>> rows_by_run;
    std::map<int64_t, api::RunEpochSummary> summary_by_run;
    if (report.epochs_included) {
      for (const auto& e : w.exec_params(kReportEpochsSql, campaign_id)) {
        report.power_sensor |= !e[6].is_null();
        rows_by_run[e[0].as<int64_t>()].push_back(report_epoch(e));
      }
    } else {
      for (const auto& row : w.exec_params(kReportSummariesSql, campaign_id)) {
        report.power_sensor |= row[15].as<bool>();
        summary_by_run[row[0].as<int64_t>()] = report_summary(row);
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
    out.run = report_run(runs[0]);
    for (const auto& e : epochs) out.run.epochs.push_back(report_epoch(e));
    out.run.summary = api::summarize_epochs(out.run.epochs);
    if (!c.empty()) {
      out.campaign_id = c[0][0].as<int64_t>();
      out.campaign_name = c[0][1].c_str();
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
        "SELECT s.t_s, r.agent_t0_unix_s + s.t_s - coalesce(ag.clock_offset_s, 0), s.power_w, s.cpu_util_pct, "
        "  s.cpu_freq_mhz, s.mem_used_kb, s.disk_read_bytes, s.temp_max_c "
        "FROM samples s JOIN runs r ON r.id = s.run_id LEFT JOIN agents ag ON ag.id = r.agent_id "
        "WHERE s.campaign_id = $2 AND s.run_id = $1 ORDER BY s.t_s",   // campaign_id: its partition only
        run_id, run[0][0].as<int64_t>());
    w.commit();
    std::vector<api::RunSample> out;
    out.reserve(rows.size());
    for (const auto& row : rows)
      out.push_back({row[0].as<double>(), pg::opt_number(row[1]), pg::opt_number(row[2]), row[3].as<double>(),
                     pg::opt_number(row[4]), row[5].as<int64_t>(), row[6].as<int64_t>(), pg::opt_number(row[7])});
    return out;
  });
}

}  // namespace jetsweep::controller
