// MemoryStore: cancel_run and the read side of the API (status, lists, report, estimate inputs), computed as
// PgStore's queries compute them (controller/pg_queries.cpp, pg_dispatch.cpp, pg_campaigns.cpp).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <optional>
#include <utility>

#include "common/described_json.hpp"
#include "controller/memory_store.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {

// PostgreSQL's percentile_cont: linear interpolation between the sorted values around p * (n - 1).
double percentile_cont(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

bool executing(const std::string& status) { return status == "assigned" || status == "running"; }

constexpr int64_t kFirstEpoch = std::numeric_limits<int64_t>::min();   // lower bound of a run's epoch keys

// A timestamp as PostgreSQL's timestamptz::text prints it in UTC: "2024-05-01 12:34:56.123456+00".
std::string timestamp_text(double unix_s) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_s));
  const auto micros = static_cast<long>(std::lround((unix_s - static_cast<double>(whole)) * 1e6) % 1000000);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06ld+00", micros);
  return std::string(buf, n) + frac;
}

// A nullable double column: non-finite values are stored as NULL.
std::optional<double> column(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? v : std::nullopt;
}

std::optional<api::EpochClocks> epoch_clocks(const std::optional<proto::ClockReading>& c) {
  if (!c) return std::nullopt;
  const std::optional<double> cores =
      c->cores_online > 0 ? std::optional<double>(static_cast<double>(c->cores_online)) : std::nullopt;
  const std::optional<double> cpu = column(c->cpu_khz);
  if (!cores && !cpu) return std::nullopt;
  return api::EpochClocks{cores, cpu, column(c->gpu_hz), column(c->emc_hz)};
}

std::optional<double> sum3(const std::optional<double>& a, const std::optional<double>& b, double c) {
  if (!a || !b) return std::nullopt;
  return *a + *b - c;
}

}  // namespace

Result<api::RunCancelled> MemoryStore::cancel_run(int64_t run_id) {
  std::lock_guard lock(mu_);
  Run* run = find_run(run_id);
  if (!run) return not_found("no run " + std::to_string(run_id));
  if (run->status == "queued") {
    run->status = "cancelled";
    run->finished_at = now();
    run->error = "cancelled by request";
  } else if (executing(run->status)) {
    run->cancel_requested = true;
  }
  api::RunCancelled o;
  o.run_id = run->id;
  o.campaign_id = run->campaign_id;
  o.status = run->status;
  o.stopping = run->cancel_requested && executing(run->status);
  if (run->agent_id)
    if (const Agent* a = find_agent(*run->agent_id)) o.agent = a->name;
  o.error = run->error;
  return o;
}

std::vector<api::Unrunnable> MemoryStore::unrunnable(int64_t campaign_id) const {
  // Queued runs grouped by what they need, each group checked against the enrolled agents (connected, or
  // seen in the last 24 hours).
  using Need = std::tuple<std::string, std::optional<std::string>, int64_t, std::vector<std::string>, std::string>;
  std::map<Need, int64_t> groups;
  for (const auto& [id, run] : runs_) {
    if (run.campaign_id != campaign_id || run.status != "queued") continue;
    auto cfg = run_config_from_json(run.config, "run");
    ++groups[{run.device, run.storage, run.min_mem_bytes, run.unfit_classes, cfg ? cfg->gating_mode() : ""}];
  }
  std::vector<const Agent*> enrolled;
  for (const auto& [id, a] : agents_)
    if (a.connected || a.last_seen > now() - 24 * 3600) enrolled.push_back(&a);
  std::vector<std::pair<Need, int64_t>> order(groups.begin(), groups.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : std::get<0>(a.first) < std::get<0>(b.first);
  });
  std::vector<api::Unrunnable> out;
  for (const auto& [need, n] : order) {
    const auto& [device, storage, min_mem, unfit, mode] = need;
    UnrunnableGroup g{n, device, storage, min_mem, mode};
    for (const Agent* a : enrolled) {
      if (device != "any" && device != a->facts.device_class && device != a->name) continue;
      g.device_fits = true;
      const auto& media = a->facts.storage;
      if (storage && std::find(media.begin(), media.end(), *storage) == media.end()) continue;
      g.storage_fits = true;
      if (a->facts.mem_bytes < min_mem) continue;
      g.mem_fits = true;
      if (std::find(unfit.begin(), unfit.end(), a->facts.device_class) != unfit.end()) continue;
      g.model_fits = true;
      const auto& live = a->facts.live_modes;
      g.runnable |= mode.empty() || a->facts.may_reboot || live.empty() || std::find(live.begin(), live.end(), mode) != live.end();
    }
    if (auto u = unrunnable_of(g)) out.push_back(std::move(*u));
  }
  return out;
}

api::CampaignStatus MemoryStore::status_of(const CampaignRow& c) const {
  api::CampaignStatus o;
  o.campaign_id = c.id;
  o.name = c.name;
  o.description = c.description;
  o.created_at = timestamp_text(c.created_at);
  o.runs = c.run_count;
  o.state = c.state;
  o.priority = c.priority;
  int64_t open_epochs = 0, open_epochs_done = 0, started_epochs = 0;
  double started_wall_s = 0;
  std::set<int64_t> busy_agents;
  for (const auto& [id, run] : runs_) {
    if (run.campaign_id != c.id) continue;
    int64_t rows = 0;
    for (auto e = epochs_.lower_bound({id, kFirstEpoch}); e != epochs_.end() && e->first.first == id; ++e) ++rows;
    const bool open = run.status == "queued" || executing(run.status);
    int64_t* counter = run.status == "queued"      ? &o.queued
                       : run.status == "assigned"  ? &o.assigned
                       : run.status == "running"   ? &o.running
                       : run.status == "done"      ? &o.done
                       : run.status == "failed"    ? &o.failed
                       : run.status == "lost"      ? &o.lost
                       : run.status == "cancelled" ? &o.cancelled
                                                   : nullptr;
    if (counter) ++*counter;
    o.epochs_total += run.epochs;
    o.epochs_done += rows;
    if (open) open_epochs += run.epochs;
    if (executing(run.status)) {
      open_epochs_done += rows;
      if (run.agent_id) busy_agents.insert(*run.agent_id);
    }
    if (run.started_at && rows > 0) {
      started_wall_s += run.finished_at.value_or(now()) - *run.started_at;
      started_epochs += rows;
    }
  }
  const int64_t open = o.queued + o.assigned + o.running;
  o.finished = open == 0;
  // ETA in wall time: epochs still to run x wall seconds per epoch so far / agents busy with the campaign.
  o.paused = o.state == "paused";
  if (open == 0) {
    o.eta_s = 0.0;
  } else if (!o.paused && started_epochs > 0) {
    const double agents = static_cast<double>(std::max<size_t>(1, busy_agents.size()));
    o.eta_s = static_cast<double>(open_epochs - open_epochs_done) * (started_wall_s / static_cast<double>(started_epochs)) / agents;
  }
  o.unrunnable = unrunnable(c.id);
  for (const auto& u : o.unrunnable) o.unrunnable_runs += u.runs;
  for (const auto& [key, kept] : set_aside_) o.set_aside_results += kept.campaign_id == c.id ? 1 : 0;
  o.adaptive = plan_statuses(c.id, false);
  adaptive_unfinished(o);
  return o;
}

Result<api::CampaignStatus> MemoryStore::campaign_status(int64_t campaign_id) {
  std::lock_guard lock(mu_);
  auto it = campaigns_.find(campaign_id);
  if (it == campaigns_.end()) return not_found("no campaign " + std::to_string(campaign_id));
  return status_of(it->second);
}

Result<std::vector<api::CampaignStatus>> MemoryStore::list_campaigns() {
  std::lock_guard lock(mu_);
  std::vector<api::CampaignStatus> out;
  for (const auto& [id, c] : campaigns_) out.push_back(status_of(c));
  return out;
}

api::ReportEpoch MemoryStore::report_epoch(const Run& run, const proto::EpochResult& e) const {
  api::ReportEpoch o;
  o.epoch = e.epoch;
  o.e2e_s = e.e2e_s;
  o.stall_s = e.stall_s;
  o.compute_s = e.compute_s;
  o.minibatches = e.minibatches;
  // The measures as the epochs table keeps them (same names; non-finite values as NULL).
  static_cast<proto::EpochMeasures&>(o) = e;
  json::for_each_described(static_cast<proto::EpochMeasures&>(o), [](const char*, auto& v) { v = column(v); });
  o.clocks_start = epoch_clocks(e.clocks_start);
  o.clocks_end = epoch_clocks(e.clocks_end);
  o.throttled = e.throttled;
  if (!e.throttle_reason.empty()) o.throttle_reason = e.throttle_reason;
  const double offset = run_clock_offset(run);
  o.start_unix_s = sum3(run.agent_t0_unix_s, o.t_start_s, offset);   // the epoch's window on the controller's clock
  o.end_unix_s = sum3(run.agent_t0_unix_s, o.t_end_s, offset);
  std::vector<double> stall, compute;   // as PgStore keeps them at ingest (sql/016 refresh_epoch_summary)
  for (auto it = minibatches_.lower_bound({run.id, e.epoch, 0});
       it != minibatches_.end() && std::get<0>(it->first) == run.id && std::get<1>(it->first) == e.epoch; ++it) {
    stall.push_back(it->second.stall_s);
    compute.push_back(it->second.compute_s);
  }
  if (!stall.empty())
    o.minibatch_stats = api::MinibatchStats{static_cast<int64_t>(stall.size()), mean(stall), percentile_cont(stall, 0.5),
                                            percentile_cont(stall, 0.95), mean(compute), percentile_cont(compute, 0.5),
                                            percentile_cont(compute, 0.95)};
  return o;
}

api::ReportRun MemoryStore::report_run(const Run& run) const {
  api::ReportRun o;
  o.run_id = run.id;
  o.status = run.status;
  if (run.agent_id)
    if (auto a = agents_.find(*run.agent_id); a != agents_.end()) o.agent = a->second.name;
  o.config = api::report_config(run.config);
  o.error = run.error;
  o.attempts = run.attempts;
  o.reboots = static_cast<int64_t>(std::count_if(reboots_.begin(), reboots_.end(), [&](const auto& kv) {
    return std::get<0>(kv.first) == run.id;
  }));
  o.wall_s = column(run.wall_s);
  o.facts = run.facts;
  if (run.applied) o.applied = proto::to_json(*run.applied);
  o.reference_state = run.reference_state;
  o.storage_medium = run.storage;
  o.storage_device = run.storage_device;
  o.page_cache_dropped = run.page_cache_dropped;
  o.compute_device = run.compute_device;
  if (run.workload) o.workload = proto::to_json(*run.workload);
  o.simulated = api::simulated_backend(o.facts);
  for (auto it = epochs_.lower_bound({run.id, kFirstEpoch}); it != epochs_.end() && it->first.first == run.id; ++it)
    o.epochs.push_back(report_epoch(run, it->second));
  o.summary = api::summarize_epochs(o.epochs);
  return o;
}

Result<api::CampaignReport> MemoryStore::campaign_report(int64_t campaign_id, ReportEpochs epochs) {
  std::lock_guard lock(mu_);
  auto it = campaigns_.find(campaign_id);
  if (it == campaigns_.end()) return not_found("no campaign " + std::to_string(campaign_id));
  const CampaignRow& c = it->second;
  api::CampaignReport report;
  report.campaign = {c.id, c.name, c.description, c.source_file, timestamp_text(c.created_at)};
  std::vector<const Run*> runs;
  for (const auto& [id, run] : runs_)
    if (run.campaign_id == campaign_id) runs.push_back(&run);
  std::sort(runs.begin(), runs.end(), [](const Run* a, const Run* b) { return a->ordinal < b->ordinal; });
  for (const Run* run : runs) {
    report.runs.push_back(report_run(*run));
    for (const auto& e : report.runs.back().epochs) report.power_sensor |= e.energy_j.has_value();
    report.simulated_runs += report.runs.back().simulated ? 1 : 0;
    if (epochs == ReportEpochs::kSummaryOnly) report.runs.back().epochs.clear();
  }
  report.epochs_included = epochs == ReportEpochs::kRows;
  report.adaptive = plan_statuses(campaign_id, true);
  return report;
}

Result<api::RunDetail> MemoryStore::run_detail(int64_t run_id) {
  std::lock_guard lock(mu_);
  const Run* run = find_run(run_id);
  if (!run) return not_found("no run " + std::to_string(run_id));
  api::RunDetail out;
  out.campaign_id = run->campaign_id;
  out.campaign_name = campaigns_.at(run->campaign_id).name;
  static_cast<api::ReportRun&>(out) = report_run(*run);
  return out;
}

Result<std::vector<api::RunSample>> MemoryStore::run_samples(int64_t run_id) {
  std::lock_guard lock(mu_);
  const Run* run = find_run(run_id);
  if (!run) return not_found("no run " + std::to_string(run_id));
  const double offset = run_clock_offset(*run);
  std::vector<api::RunSample> out;
  for (auto it = samples_.lower_bound({run_id, -std::numeric_limits<double>::infinity()});
       it != samples_.end() && it->first.first == run_id; ++it) {
    const proto::Sample& s = it->second;
    out.push_back({s.t_s, sum3(run->agent_t0_unix_s, s.t_s, offset), column(s.power_w), s.cpu_util_pct,
                   column(s.cpu_freq_mhz), s.mem_used_kb, s.disk_read_bytes, column(s.temp_max_c)});
  }
  return out;
}

Result<std::vector<api::AgentInfo>> MemoryStore::list_agents() {
  std::lock_guard lock(mu_);
  std::vector<api::AgentInfo> out;
  for (const auto& [id, a] : agents_) {
    api::AgentInfo o;
    const auto& f = a.facts;
    o.agent_id = id;
    o.name = a.name;
    o.hostname = f.hostname;
    o.cpus = f.cpus;
    o.mem_bytes = f.mem_bytes;
    o.backend = f.backend;
    o.device_class = f.device_class;
    o.kernel = f.kernel;
    o.torch_version = f.torch_version;
    o.compiler = f.compiler;
    o.git_sha = f.git_sha;
    o.connected = a.connected;
    o.last_seen = timestamp_text(a.last_seen);
    for (const auto& [run_id, run] : runs_)
      if (run.agent_id == id && executing(run.status)) {
        o.current_run = run_id;   // the lowest id: runs_ is ordered
        break;
      }
    o.accelerator = f.accelerator;
    o.not_ready = f.not_ready;
    if (!a.connected && a.away_until && *a.away_until > now()) o.rebooting_until = timestamp_text(*a.away_until);
    out.push_back(std::move(o));
  }
  return out;
}

Result<perf::EstimateInputs> MemoryStore::estimate_inputs() {
  std::lock_guard lock(mu_);
  perf::EstimateInputs in;
  // Measured epochs grouped by (class of the run's agent, model, dataset, batch size, power mode).
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, std::pair<double, int64_t>> groups;
  for (const auto& [key, e] : epochs_) {
    const Run& run = runs_.at(key.first);
    if (!run.agent_id || !agents_.count(*run.agent_id)) continue;
    auto cfg = run_config_from_json(run.config, "run " + std::to_string(run.id) + " config");
    if (!cfg) return cfg.status();
    auto& g = groups[{agents_.at(*run.agent_id).facts.device_class, cfg->model, cfg->dataset,
                      std::to_string(cfg->batch_size), perf::power_mode_key(*cfg)}];
    g.first += e.e2e_s;
    ++g.second;
  }
  for (const auto& [k, g] : groups)
    in.measured.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k), g.first, g.second});
  for (const auto& [id, a] : agents_) in.class_of_agent[a.name] = a.facts.device_class;
  for (const Agent* a : enrolled_boards()) ++in.enrolled_boards[a->facts.device_class];
  in.gating = enrolled_facts();
  return in;
}

Result<std::vector<perf::BoardGatingFacts>> MemoryStore::enrolled_board_facts() {
  std::lock_guard lock(mu_);
  return enrolled_facts();
}

std::vector<perf::BoardGatingFacts> MemoryStore::enrolled_facts() const {
  std::vector<perf::BoardGatingFacts> out;
  for (const Agent* a : enrolled_boards())
    out.push_back({a->name, a->facts.device_class, a->facts.live_modes, a->facts.may_reboot, a->facts.tables});
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  return out;
}

Result<std::vector<AgentApplied>> MemoryStore::agents_applied() {
  std::lock_guard lock(mu_);
  // As PgStore: per agent, its executing run first, then the one started last, then the highest id.
  std::map<int64_t, std::pair<std::tuple<bool, double, int64_t>, const Run*>> best;   // agent -> (rank, run)
  for (const auto& [id, run] : runs_) {
    if (!run.agent_id || !run.applied) continue;
    const auto rank = std::make_tuple(run.status == "assigned" || run.status == "running",
                                      run.started_at.value_or(-std::numeric_limits<double>::infinity()), id);
    auto it = best.find(*run.agent_id);
    if (it == best.end() || rank > it->second.first) best[*run.agent_id] = {rank, &run};
  }
  std::vector<AgentApplied> out;
  for (const auto& [agent, chosen] : best)
    out.push_back(AgentApplied{agent, chosen.second->id, proto::to_json(*chosen.second->applied)});
  return out;
}

}  // namespace jetsweep::controller
