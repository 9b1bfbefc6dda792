// FleetTelemetry: what the controller heard from each agent lately, kept in memory only (nothing here is stored in
// PostgreSQL; a controller restart starts it empty): the last kWindowS seconds of the agent's telemetry samples
// (at most one point per kMinSpacingS seconds, so at most ~kMaxPoints points per agent; older ones are dropped),
// its newest sample, and its last heartbeat (when, and the state and run it named). Fed by AgentSession (every
// SampleChunk it receives, every heartbeat); read by GET /api/fleet, GET /metrics and the dashboard's snapshots.
// Owned by the Controller (Controller::fleet_telemetry()); io thread only, like every Controller handler: no locks.
//
// Clock: every time here (t_unix_s, heartbeat_unix_s, the `now_unix_s` arguments) is the CONTROLLER's wall clock in
// Unix seconds. A sample's time is the agent's t0_unix_s (its wall clock at t_s = 0 of the run) + t_s, minus the
// agent's measured clock offset (agent minus controller, from the clock probes) when one is known; when the chunk
// has no t0_unix_s or no offset was measured yet on this connection, the chunk's newest sample is taken to be
// "now" (its arrival) and the others are placed before it by their t_s (off by at most the chunk's delivery delay).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/api.hpp"
#include "common/protocol.hpp"
#include "controller/store.hpp"

namespace jetsweep::controller {

class FleetTelemetry {
 public:
  static constexpr double kWindowS = 300.0;      // how far back the series reaches (5 minutes)
  static constexpr double kMinSpacingS = 1.0;    // a point closer than this to the previous one is not kept
  static constexpr size_t kMaxPoints = 300;      // hard bound per agent (kWindowS / kMinSpacingS)

  // One telemetry sample, placed on the controller's clock.
  struct Point {
    double t_unix_s = 0;
    int64_t run_id = 0;                       // the run it was sampled during
    std::optional<double> power_w;            // null: the board has no power sensor
    double cpu_util_pct = 0;                  // all cores
    std::optional<double> cpu_freq_mhz;       // mean over online cores, where cpufreq exists
    int64_t mem_used_kb = 0;
    std::optional<double> temp_max_c;         // the hottest thermal zone; null: none readable, or simulated
  };

  // One agent's recent telemetry. Agents sample only while they execute a run: an idle board has no new points.
  struct Board {
    std::deque<Point> series;                     // oldest first, within kWindowS of the newest point added
    std::optional<Point> latest;                  // the newest sample received (kept even when spacing skips it)
    std::optional<double> last_heartbeat_unix_s;  // when its last heartbeat arrived (controller clock)
    std::string heartbeat_state;                  // the state that heartbeat named ("idle", "running", ...)
    std::optional<int64_t> heartbeat_run;         // and the run it named
    std::optional<int64_t> backlog_messages;      // and the agent's result messages not yet acked (issue 29)
    std::optional<int64_t> backlog_bytes;
  };

  // Adds the chunk's samples. `clock_offset_s`: the agent's measured offset (agent minus controller), if any.
  void add_samples(int64_t agent_id, const proto::SampleChunk& chunk, std::optional<double> clock_offset_s,
                   double now_unix_s);
  void heartbeat(int64_t agent_id, const proto::Heartbeat& hb, double now_unix_s);
  // A new connection of the agent: its backlog is unknown until its next heartbeat.
  void forget_backlog(int64_t agent_id);

  // The agent's record, or null when nothing was heard from it since the controller started.
  const Board* board(int64_t agent_id) const;
  // The agent's points with t_unix_s >= now_unix_s - kWindowS, oldest first (empty when none).
  std::vector<Point> recent(int64_t agent_id, double now_unix_s) const;
  // The newest sample when it is within kWindowS of now_unix_s (older ones say nothing about the board now).
  std::optional<Point> latest(int64_t agent_id, double now_unix_s) const;

 private:
  std::map<int64_t, Board> boards_;   // by agent id
};

// What GET /api/fleet (and the dashboard's snapshot) needs from the store: every agent, and the board state of
// its current or last run. Load it on a DbWorker thread (one job: `db.post<Result<FleetRows>>(ex, load_fleet_rows,
// ...)`), then join it with the telemetry on the io thread with fleet_boards().
struct FleetRows {
  std::vector<api::AgentInfo> agents;
  std::vector<AgentApplied> applied;
};
Result<FleetRows> load_fleet_rows(Store& store);
// The fleet as GET /api/fleet answers it, by agent id (io thread: reads `telemetry`).
std::vector<api::FleetBoard> fleet_boards(const FleetRows& rows, const FleetTelemetry& telemetry, double now_unix_s);

}  // namespace jetsweep::controller
