#include "controller/fleet_telemetry.hpp"

#include <algorithm>

namespace jetsweep::controller {

namespace {

FleetTelemetry::Point point_of(const proto::Sample& s, int64_t run_id, double t_unix_s) {
  FleetTelemetry::Point p;
  p.t_unix_s = t_unix_s;
  p.run_id = run_id;
  p.power_w = s.power_w;
  p.cpu_util_pct = s.cpu_util_pct;
  p.cpu_freq_mhz = s.cpu_freq_mhz;
  p.mem_used_kb = s.mem_used_kb;
  p.temp_max_c = s.temp_max_c;
  return p;
}

bool earlier(const FleetTelemetry::Point& a, const FleetTelemetry::Point& b) { return a.t_unix_s < b.t_unix_s; }

}  // namespace

void FleetTelemetry::add_samples(int64_t agent_id, const proto::SampleChunk& chunk,
                                 std::optional<double> clock_offset_s, double now_unix_s) {
  if (chunk.samples.empty()) return;
  Board& b = boards_[agent_id];
  // The controller-clock time of t_s = 0 of the run (see the header).
  double base = 0;
  if (chunk.t0_unix_s && clock_offset_s) {
    base = *chunk.t0_unix_s - *clock_offset_s;
  } else {
    double newest_t_s = chunk.samples.front().t_s;
    for (const auto& s : chunk.samples) newest_t_s = std::max(newest_t_s, s.t_s);
    base = now_unix_s - newest_t_s;
  }
  bool appended_out_of_order = false;
  for (const auto& s : chunk.samples) {
    const Point p = point_of(s, chunk.run_id, base + s.t_s);
    if (!b.latest || p.t_unix_s >= b.latest->t_unix_s) b.latest = p;
    if (!b.series.empty() && p.t_unix_s >= b.series.back().t_unix_s &&
        p.t_unix_s < b.series.back().t_unix_s + kMinSpacingS)
      continue;   // too close to the previous point: the series keeps one point per kMinSpacingS
    if (!b.series.empty() && p.t_unix_s < b.series.back().t_unix_s) appended_out_of_order = true;
    b.series.push_back(p);
  }
  // A resent (journal replay) or late chunk lands before newer points: keep the series in time order.
  if (appended_out_of_order) std::stable_sort(b.series.begin(), b.series.end(), earlier);
  const double oldest_kept = std::max(now_unix_s, b.series.back().t_unix_s) - kWindowS;
  while (!b.series.empty() && (b.series.front().t_unix_s < oldest_kept || b.series.size() > kMaxPoints))
    b.series.pop_front();
}

void FleetTelemetry::forget_backlog(int64_t agent_id) {
  if (auto it = boards_.find(agent_id); it != boards_.end()) it->second.backlog_messages = it->second.backlog_bytes = std::nullopt;
}

void FleetTelemetry::heartbeat(int64_t agent_id, const proto::Heartbeat& hb, double now_unix_s) {
  Board& b = boards_[agent_id];
  b.last_heartbeat_unix_s = now_unix_s;
  b.heartbeat_state = hb.state;
  b.heartbeat_run = hb.run_id;
  b.backlog_messages = hb.backlog_messages;
  b.backlog_bytes = hb.backlog_bytes;
}

const FleetTelemetry::Board* FleetTelemetry::board(int64_t agent_id) const {
  auto it = boards_.find(agent_id);
  return it == boards_.end() ? nullptr : &it->second;
}

std::vector<FleetTelemetry::Point> FleetTelemetry::recent(int64_t agent_id, double now_unix_s) const {
  std::vector<Point> out;
  const Board* b = board(agent_id);
  if (!b) return out;
  for (const auto& p : b->series)
    if (p.t_unix_s >= now_unix_s - kWindowS) out.push_back(p);
  return out;
}

std::optional<FleetTelemetry::Point> FleetTelemetry::latest(int64_t agent_id, double now_unix_s) const {
  const Board* b = board(agent_id);
  if (!b || !b->latest || b->latest->t_unix_s < now_unix_s - kWindowS) return std::nullopt;
  return b->latest;
}

Result<FleetRows> load_fleet_rows(Store& store) {
  FleetRows rows;
  JS_ASSIGN_OR_RETURN(rows.agents, store.list_agents());
  JS_ASSIGN_OR_RETURN(rows.applied, store.agents_applied());
  return rows;
}

std::vector<api::FleetBoard> fleet_boards(const FleetRows& rows, const FleetTelemetry& telemetry, double now_unix_s) {
  std::map<int64_t, const AgentApplied*> applied;
  for (const auto& a : rows.applied) applied[a.agent_id] = &a;
  std::vector<api::FleetBoard> out;
  out.reserve(rows.agents.size());
  for (const auto& a : rows.agents) {
    api::FleetBoard b;
    b.agent_id = a.agent_id;
    b.name = a.name;
    b.device_class = a.device_class;
    b.connected = a.connected;
    b.state = api::fleet_state(a.connected, a.current_run);
    b.current_run = a.current_run;
    b.simulated = a.backend == "sim";
    b.not_ready = a.not_ready;
    b.last_seen = a.last_seen;
    if (auto it = applied.find(a.agent_id); it != applied.end()) {
      b.applied = it->second->applied;
      if (const auto* mode = b.applied->if_contains("mode_name"); mode && mode->is_string() && !mode->get_string().empty())
        b.power_mode = std::string(mode->get_string());
    }
    if (const FleetTelemetry::Board* t = telemetry.board(a.agent_id)) {
      b.last_heartbeat_unix_s = t->last_heartbeat_unix_s;
      if (a.connected) b.backlog_messages = t->backlog_messages, b.backlog_bytes = t->backlog_bytes;
    }
    if (auto p = telemetry.latest(a.agent_id, now_unix_s))
      b.latest = api::FleetLatest{p->t_unix_s, p->power_w, p->cpu_util_pct, p->cpu_freq_mhz, p->mem_used_kb,
                                  p->temp_max_c};
    for (const auto& p : telemetry.recent(a.agent_id, now_unix_s))
      b.series.push_back(api::FleetPoint{p.t_unix_s, p.power_w, p.cpu_util_pct, p.cpu_freq_mhz, p.temp_max_c});
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace jetsweep::controller
