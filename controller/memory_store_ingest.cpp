// MemoryStore: ingest of agents' results, as PgStore's (pg_ingest.cpp); the contract is Store's ingest methods.
#include <cmath>
#include <set>

#include "common/log.hpp"
#include "controller/memory_store.hpp"

namespace jetsweep::controller {

namespace {

bool holds(const MemoryStore::Run& run, int64_t agent_id) {
  return run.agent_id == agent_id && (run.status == "assigned" || run.status == "running");
}

// A result for a run that does not exist: counted as set aside, kept nowhere (PgStore's no_such_run).
IngestOutcome no_such_run(int64_t agent_id, int64_t run_id, const char* what) {
  JS_LOG_INFO << "agent " << agent_id << ": " << what << " of run " << run_id << " not kept: there is no such run";
  return IngestOutcome::kSetAside;
}

// The frame `body` is kept apart as, spelled one way whatever spelling it came in (PgStore keys by the frame as jsonb
// writes it): read back as a decoded message is (a NUL in its text as U+FFFD, json::FieldReader), then written.
std::string set_aside_frame(const proto::Body& body) {
  std::string frame = proto::encode(proto::Envelope{0, body});
  if (auto read = proto::decode(frame); read.is_ok()) frame = proto::encode(*read);
  return frame;
}

}  // namespace

IngestOutcome MemoryStore::not_held(int64_t agent_id, const Run& run, bool stored, const proto::Body& body) {
  if (run.agent_id == agent_id && stored) return IngestOutcome::kDuplicate;
  const bool fresh = set_aside_
                         .try_emplace({run.id, agent_id, set_aside_frame(body)},
                                      SetAside{run.campaign_id, std::string(proto::type_name(body)),
                                               set_aside_reason(run.status, run.agent_id, agent_id, run.error)})
                         .second;
  return fresh ? IngestOutcome::kSetAside : IngestOutcome::kDuplicate;
}

void MemoryStore::mark_running(int64_t run_id, int64_t agent_id) {
  Run* run = find_run(run_id);
  if (!run || run->agent_id != agent_id || run->status != "assigned") return;
  run->status = "running";
  if (!run->started_at) run->started_at = now();
}

Result<IngestOutcome> MemoryStore::start_run(int64_t agent_id, const proto::RunStarted& m) {
  std::lock_guard lock(mu_);
  Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "run_started");
  if (!holds(*run, agent_id)) return not_held(agent_id, *run, run->agent_t0_unix_s.has_value(), m);
  const bool same = run->applied == m.applied && run->reference_state == m.reference_state &&
                    run->storage_device == m.storage_device && run->page_cache_dropped == m.page_cache_dropped &&
                    run->agent_t0_unix_s == m.t0_unix_s && run->compute_device == m.compute_device &&
                    run->workload == m.workload && run->agent_boot_id == m.boot_id && run->agent_t0_boot_s == m.t0_boot_s;
  run->applied = m.applied;
  run->reference_state = m.reference_state;
  run->storage_device = m.storage_device;
  run->page_cache_dropped = m.page_cache_dropped;
  run->agent_t0_unix_s = m.t0_unix_s;
  run->compute_device = m.compute_device;
  run->workload = m.workload;
  run->agent_boot_id = m.boot_id;
  run->agent_t0_boot_s = m.t0_boot_s;
  if (!same) {
    const Agent* a = find_agent(agent_id);
    run->clock_offset_s = a ? run_start_offset(*a, *run) : std::nullopt;
  }
  mark_running(m.run_id, agent_id);
  return same ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) {
  std::lock_guard lock(mu_);
  if (m.stall_s.empty()) return IngestOutcome::kDuplicate;
  Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "minibatches");
  auto key = [&](size_t i) { return std::make_tuple(m.run_id, m.epoch, m.first_index + static_cast<int64_t>(i)); };
  size_t stored = 0;
  for (size_t i = 0; i < m.stall_s.size(); ++i) stored += minibatches_.count(key(i));
  if (!holds(*run, agent_id)) return not_held(agent_id, *run, stored == m.stall_s.size(), m);
  for (size_t i = 0; i < m.stall_s.size(); ++i)
    if (!std::isfinite(m.stall_s[i]) || !std::isfinite(m.compute_s[i]))
      return db_error("ingesting minibatches: null value in a NOT NULL column (minibatch " +
                      std::to_string(m.first_index + static_cast<int64_t>(i)) + ")");
  for (size_t i = 0; i < m.stall_s.size(); ++i) {
    MinibatchRow row{m.stall_s[i], m.compute_s[i], std::nullopt};
    if (!m.copy_s.empty() && std::isfinite(m.copy_s[i])) row.copy_s = m.copy_s[i];
    minibatches_.try_emplace(key(i), row);   // DO NOTHING
  }
  mark_running(m.run_id, agent_id);
  return stored == m.stall_s.size() ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::ingest_epoch(int64_t agent_id, const proto::EpochResult& m) {
  std::lock_guard lock(mu_);
  Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "epoch");
  const bool stored = epochs_.count({m.run_id, m.epoch}) > 0;
  if (!holds(*run, agent_id)) return not_held(agent_id, *run, stored, m);
  epochs_[{m.run_id, m.epoch}] = m;   // ON CONFLICT DO UPDATE
  mark_running(m.run_id, agent_id);
  return stored ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::ingest_samples(int64_t agent_id, const proto::SampleChunk& m) {
  std::lock_guard lock(mu_);
  if (m.samples.empty()) return IngestOutcome::kDuplicate;
  Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "samples");
  bool all_stored = true;
  for (const auto& s : m.samples) all_stored = all_stored && samples_.count({m.run_id, s.t_s}) > 0;
  if (!holds(*run, agent_id)) return not_held(agent_id, *run, all_stored, m);
  for (const auto& s : m.samples) samples_.try_emplace({m.run_id, s.t_s}, s);   // DO NOTHING
  if (m.t0_unix_s && !run->agent_t0_unix_s) {
    run->agent_t0_unix_s = m.t0_unix_s;
    run->clock_offset_s = agent_clock_offset(agent_id);
  }
  mark_running(m.run_id, agent_id);
  return all_stored ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::record_reboot(int64_t agent_id, const proto::RebootPending& m) {
  std::lock_guard lock(mu_);
  const Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "reboot_pending");
  const auto key = std::make_tuple(m.run_id, agent_id, m.requested_unix_s);
  if (!holds(*run, agent_id)) return not_held(agent_id, *run, reboots_.count(key) > 0, m);
  // A replay after the agent came back (its ack was lost) does not send it away again.
  if (!reboots_.emplace(key, m).second) return IngestOutcome::kDuplicate;
  if (Agent* a = find_agent(agent_id)) a->away_until = now() + m.expected_back_s;
  return IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::finish_run(int64_t agent_id, const proto::RunFinished& m) {
  std::lock_guard lock(mu_);
  Run* run = find_run(m.run_id);
  if (!run) return no_such_run(agent_id, m.run_id, "run_finished");
  if (!holds(*run, agent_id)) {
    if (stored_graceful_stop(run->error, m)) return IngestOutcome::kDuplicate;
    return not_held(agent_id, *run, run->status == m.status, m);
  }
  if (m.status == "cancelled") {
    // Stopped at our request: cancelled, its rows kept. Otherwise the agent shut down mid-run: requeued.
    const bool campaign_cancelled = campaigns_.at(run->campaign_id).state == "cancelled";
    if (run->cancel_requested || campaign_cancelled) {
      run->status = "cancelled";
      run->finished_at = now();
      run->wall_s = m.wall_s;
      run->error = run->cancel_requested ? "cancelled while running" : "campaign cancelled";
    } else {
      requeue_or_lose(*run, graceful_stop_error(m));
    }
    return IngestOutcome::kStored;
  }
  static const std::set<std::string> kStatuses = {"queued", "assigned", "running", "done", "failed", "lost"};
  if (!kStatuses.count(m.status))
    return db_error("finishing a run: new row for relation \"runs\" violates check constraint \"runs_status_check\"");
  run->status = m.status;
  run->error = m.error;
  run->wall_s = m.wall_s;
  run->finished_at = now();
  if (!run->started_at) run->started_at = now();
  return IngestOutcome::kStored;
}

Result<IngestOutcome> MemoryStore::set_aside_refused(int64_t agent_id, const proto::Body& body, const std::string& why) {
  const std::optional<int64_t> run_id = proto::result_run_id(body);
  if (!run_id) return internal_error("'" + std::string(proto::type_name(body)) + "' is not a result message");
  std::lock_guard lock(mu_);
  Run* run = find_run(*run_id);
  if (!run) return no_such_run(agent_id, *run_id, std::string(proto::type_name(body)).c_str());
  const bool fresh = set_aside_
                         .try_emplace({run->id, agent_id, set_aside_frame(body)},
                                      SetAside{run->campaign_id, std::string(proto::type_name(body)), refused_reason(why)})
                         .second;
  if (const proto::RunFinished* end = run_end_to_fail_when_refused(body); end && holds(*run, agent_id)) {
    run->status = "failed";
    run->error = refused_end_error(*end, why);
    run->finished_at = now();
    if (!run->started_at) run->started_at = now();
  }
  return fresh ? IngestOutcome::kSetAside : IngestOutcome::kDuplicate;
}

}  // namespace jetsweep::controller
