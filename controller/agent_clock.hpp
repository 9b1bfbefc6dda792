// AgentClock: one agent connection's estimate of its agent's clocks against the controller's (NTP's formula on the
// wall clock and, where the agent sends it, its boot clock), and each run's offset for its live telemetry. It decides
// which probe to send when, and which reply is kept, discarded (taken under load) or refused; it does no I/O and
// logs nothing: its AgentSession sends the probes, logs the verdicts and records them in the Store. Owned by one
// AgentSession; the I/O thread only, as its session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/protocol.hpp"
#include "controller/store.hpp"

namespace jetsweep::controller {

class AgentClock {
 public:
  // What a probe's reply decided.
  struct Verdict {
    enum class Kind {
      kStale,         // not the probe outstanding: ignored
      kImplausible,   // a round trip outside [0, kMaxClockRttSeconds]
      kRefused,       // a wall offset beyond kMaxClockOffsetSeconds (a board years off before NTP)
      kDiscarded,     // taken under load, and no clock step: its round trip measures a backlog, not the clock
      kNotBetter,     // no faster than the kept probe (an equal round trip too), and no clock step
      kKept,          // the new estimate (record it: Store::record_clock)
    };
    Kind kind = Kind::kStale;
    double offset_s = 0, rtt_s = 0;
    // kKept: the boot clock's offset kept with it. kRefused: the boot offset to offer for its boot
    // (Store::record_boot_offset), set only for a probe not taken under load.
    std::optional<BootClockOffset> boot;
    // kKept: the probe disagrees with the kept one by more than half their round trips together plus kClockStepMarginS
    // (clock_stepped): the board's clock was stepped, and this was the offset before the step.
    std::optional<double> stepped_from_s;
  };

  // A probe sent now (unix seconds) while reading was paused for ingest (`reading_paused`) or not: its t0.
  double start_probe(double now_s, bool reading_paused);
  // Reading paused for ingest: the reply of the probe outstanding will wait behind results.
  void reading_paused() { probe_under_load_ = true; }
  bool probe_outstanding() const { return probe_t0_.has_value(); }
  // At a heartbeat (the `heartbeat`th of the connection, from 1): whether to send a probe, which the caller then must
  // (start_probe). A reply lost with a dropped frame is given up here after 30 s; the first `first_probes` heartbeats
  // and every `every_heartbeats`th send one, and so does the next heartbeat after a probe discarded while none was kept
  // or a clock step kept from a probe taken under load (for a tighter estimate). Returning true clears that request.
  bool probe_due(double now_s, int heartbeat, int first_probes, int every_heartbeats);
  // The reply to a probe, read at `t3_s`; `max_rtt_s`: the round trip above which a probe counts as taken under load
  // (raised to twice the link's fastest earlier round trip, for a slow link).
  Verdict on_reply(const proto::TimeSyncReply& m, double t3_s, double max_rtt_s);

  // A run_started read on this connection: the offset its live telemetry is placed with (as runs.clock_offset_s
  // stores it). At most kMaxRunOffsets runs are held: past that the lowest run id is forgotten.
  void run_started(const proto::RunStarted& m);
  // Its run_finished read: nothing of the run follows.
  void run_finished(int64_t run_id) { runs_.erase(run_id); }
  // The offset run `run_id`'s live telemetry is placed with: the one it started under, else the current one.
  std::optional<double> run_offset_s(int64_t run_id) const;

  std::optional<double> offset_s() const { return offset_s_; }
  int64_t probes_discarded() const { return probes_discarded_; }

 private:
  std::optional<double> probe_t0_;       // the probe outstanding (its t0), if any
  bool retry_probe_ = false;             // the last probe was discarded and none is kept yet
  bool probe_under_load_ = false;        // reading paused for ingest since the outstanding probe was sent
  std::optional<double> min_rtt_s_;      // the fastest round trip of any probe not taken under load
  int64_t probes_discarded_ = 0;
  std::optional<double> best_rtt_s_;
  std::optional<double> offset_s_;       // agent minus controller, from the probe with best_rtt_s_
  std::optional<BootClockOffset> boot_;  // the agent's boot clock minus controller, from the same probe
  // The offset each run started under (by the boot clock for a run stamped in the kept probe's boot, else the one
  // kept when its run_started was read; unset until a probe is kept): a step of the board's clock mid-run does not
  // shift the run's samples, stamped from its t0_unix_s on the clock before the step.
  struct RunClock {
    std::optional<double> offset_s;
    double t0_unix_s = 0;   // its run_started's stamps, for an offset kept after it started
    std::string boot_id;
    std::optional<double> t0_boot_s;
  };
  std::map<int64_t, RunClock> runs_;
  static constexpr size_t kMaxRunOffsets = 64;
};

}  // namespace jetsweep::controller
