#include "controller/agent_clock.hpp"

#include <algorithm>
#include <cmath>

namespace jetsweep::controller {

double AgentClock::start_probe(double now_s, bool reading_paused) {
  probe_under_load_ = reading_paused;
  probe_t0_ = now_s;
  return now_s;
}

bool AgentClock::probe_due(double now_s, int heartbeat, int first_probes, int every_heartbeats) {
  if (probe_t0_ && now_s - *probe_t0_ > 30) probe_t0_.reset();
  if (probe_t0_) return false;
  if (!(heartbeat <= first_probes || heartbeat % every_heartbeats == 0 || retry_probe_)) return false;
  retry_probe_ = false;
  return true;
}

AgentClock::Verdict AgentClock::on_reply(const proto::TimeSyncReply& m, double t3_s, double max_rtt_s) {
  Verdict v;
  // Not the probe outstanding (one at a time): stale. t0 came back through JSON, whose parser (Boost 1.81) may
  // be off by an ulp (~0.2 us at today's Unix time); probes are at least a heartbeat apart.
  if (!probe_t0_ || std::abs(m.t0 - *probe_t0_) > 1e-5) return v;
  probe_t0_.reset();
  v.rtt_s = (t3_s - m.t0) - (m.t2 - m.t1);
  v.offset_s = ((m.t1 - m.t0) + (m.t2 - t3_s)) / 2.0;
  // The boot clock's offset by the same formula (it counts from boot, so no bound on it but finite).
  std::optional<BootClockOffset> boot;
  if (!m.boot_id.empty() && m.t1_boot && m.t2_boot) {
    const double boot_offset = ((*m.t1_boot - m.t0) + (*m.t2_boot - t3_s)) / 2.0;
    if (std::isfinite(boot_offset)) boot = BootClockOffset{m.boot_id, boot_offset};
  }
  const double rtt = v.rtt_s, offset = v.offset_s;
  if (!(rtt >= 0 && rtt <= proto::kMaxClockRttSeconds)) {
    v.kind = Verdict::Kind::kImplausible;
    return v;
  }
  // Taken under load: the reply waited behind results (in the socket or in our reading), not on the network. A link
  // slower than the bound is judged by the fastest round trip of its earlier probes (the best one is kept anyway).
  const double bound = std::max(max_rtt_s, 2 * min_rtt_s_.value_or(0));
  if (!probe_under_load_) min_rtt_s_ = std::min(min_rtt_s_.value_or(rtt), rtt);
  const bool under_load = probe_under_load_ || rtt > bound;
  probe_under_load_ = false;
  if (!(std::abs(offset) <= proto::kMaxClockOffsetSeconds)) {
    // The boot clock does not depend on the wall clock: the boot offset of a probe not taken under load is offered
    // for its boot (remembered if that boot has none), whose runs are then placed by it whatever the board's wall
    // clock said (Store::record_boot_offset).
    v.kind = Verdict::Kind::kRefused;
    if (!under_load) v.boot = boot;
    return v;
  }
  // A probe that cannot agree with the kept one, however slow, shows the board's clock was stepped (NTP setting it):
  // it replaces the kept one at once (its error is still within half its round trip), and one taken under load is
  // followed by another at the next heartbeat for a tighter estimate.
  const bool stepped = offset_s_ && best_rtt_s_ && clock_stepped(*offset_s_, *best_rtt_s_, offset, rtt);
  if (under_load && !stepped) {
    retry_probe_ = !offset_s_;   // none kept yet: another at the next heartbeat
    ++probes_discarded_;
    v.kind = Verdict::Kind::kDiscarded;
    return v;
  }
  if (stepped) {
    v.stepped_from_s = offset_s_;
    retry_probe_ = under_load;
  } else if (best_rtt_s_ && rtt >= *best_rtt_s_) {
    v.kind = Verdict::Kind::kNotBetter;
    return v;
  }
  // The boot clock does not step: a probe kept only because the wall clock stepped, slower than the kept one, keeps
  // the kept probe's boot clock offset of the same boot (the closer estimate).
  if (stepped && best_rtt_s_ && rtt > *best_rtt_s_ && boot && boot_ && boot_->boot_id == boot->boot_id) boot = boot_;
  best_rtt_s_ = rtt;
  offset_s_ = offset;
  boot_ = boot;
  for (auto& [run, clock] : runs_)   // as the store does: runs started before any offset take it
    if (!clock.offset_s) clock.offset_s = run_start_offset(offset, boot, clock.t0_unix_s, clock.boot_id, clock.t0_boot_s);
  v.kind = Verdict::Kind::kKept;
  v.boot = boot;
  return v;
}

void AgentClock::run_started(const proto::RunStarted& m) {
  if (runs_.size() >= kMaxRunOffsets && !runs_.count(m.run_id)) runs_.erase(runs_.begin());
  runs_[m.run_id] =
      RunClock{run_start_offset(offset_s_, boot_, m.t0_unix_s, m.boot_id, m.t0_boot_s), m.t0_unix_s, m.boot_id, m.t0_boot_s};
}

std::optional<double> AgentClock::run_offset_s(int64_t run_id) const {
  auto it = runs_.find(run_id);
  return it != runs_.end() && it->second.offset_s ? it->second.offset_s : offset_s_;
}

}  // namespace jetsweep::controller
