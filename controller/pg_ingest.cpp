// PgStore: ingest of agents' results (idempotent: each chunk row written into a gap of what is stored, its arrays binary).
#include <pqxx/pqxx>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/described_json.hpp"
#include "common/log.hpp"
#include "controller/pg_chunks.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {

// Text form of a nullable double for parameters (nullptr = NULL).
struct NullableText {
  std::string text;
  bool null = true;
  const char* c_str() const { return null ? nullptr : text.c_str(); }
};

NullableText nullable(const std::optional<double>& v) {
  NullableText t;
  if (v && std::isfinite(*v)) {
    t.text = pqxx::to_string(*v);
    t.null = false;
  }
  return t;
}

// What an agent may do with a run it sends results for (run_access).
struct RunAccess {
  int64_t campaign = 0;
  bool holds = false;        // the agent holds the run (assigned or running): its results are written
  bool on_agent = false;     // the run is (or ended) on this agent
  bool assigned = false;     // not yet running: this result marks it running (mark_running)
  bool t0_missing = false;   // runs.agent_t0_unix_s not yet known
  std::string status;
  std::optional<int64_t> run_agent;   // the run's agent, if any
  std::string error;                  // the run's error (its last requeue's reason, say)
};

// The run's state for the agent, nullopt when there is no such run (its campaign was dropped). Locks the run's
// row FOR SHARE, so it cannot be reassigned or finished until the transaction ends. Results are append-only per
// run: only an agent holding it (assigned or running) writes them; what an agent sends for a run it does not hold
// is a duplicate or is set aside (set_aside), and is acknowledged either way, so the agent's outbox drains.
std::optional<RunAccess> run_access(pqxx::transaction_base& w, int64_t agent_id, int64_t run_id) {
  auto r = w.exec_prepared(pg::kIngestRunAccess, run_id);
  if (r.empty()) return std::nullopt;
  RunAccess a;
  const pg::Row row(r[0]);
  a.status = row.text("status");
  a.campaign = row.integer("campaign_id");
  a.t0_missing = row.boolean("t0_missing");
  a.run_agent = row.opt_integer("agent_id");
  a.on_agent = a.run_agent == agent_id;
  a.holds = a.on_agent && (a.status == "assigned" || a.status == "running");
  a.assigned = a.holds && a.status == "assigned";
  a.error = row.text("error");
  return a;
}

// A result for a run that no longer exists (its campaign was dropped, with its set-aside results): counted as set
// aside, kept nowhere; a few a minute are logged, with the count of those held back (a replay resends thousands).
IngestOutcome no_such_run(int64_t agent_id, int64_t run_id, const char* what) {
  static std::mutex log_mutex;
  static log::RateLimit logged(5, std::chrono::minutes(1));
  int64_t held_back = 0;
  bool log_it = false;
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    log_it = logged.allow(std::chrono::steady_clock::now(), held_back);
  }
  if (log_it)
    JS_LOG_INFO << "agent " << agent_id << ": " << what << " of run " << run_id
                << " not kept: there is no such run (its campaign was dropped)"
                << (held_back ? "; " + std::to_string(held_back) + " such results not logged before this one" : "");
  return IngestOutcome::kSetAside;
}

// `frame` (JSON text) as jsonb can hold it: each \u0000 escape (a NUL character in a string, which jsonb refuses)
// becomes \ufffd. Any other text is left as it is, so a resend of the same message is the same frame. A decoded
// message holds no NUL (json::FieldReader reads one as U+FFFD); this guards bodies built otherwise.
std::string jsonb_safe(const std::string& frame) {
  if (frame.find("\\u0000") == std::string::npos) return frame;
  std::string out;
  out.reserve(frame.size());
  for (size_t i = 0; i < frame.size(); ++i) {
    if (frame[i] != '\\') {
      out += frame[i];
    } else if (frame.compare(i, 6, "\\u0000") == 0) {
      out += "\\ufffd";
      i += 5;
    } else {   // any other escape, its escaped character with it (an escaped backslash before "u0000" stays)
      out += frame[i];
      if (i + 1 < frame.size()) out += frame[++i];
    }
  }
  return out;
}

// A result the agent measured for a run it does not hold (requeued to another agent, lost, cancelled): kept apart
// in set_aside_results as the frame it came in (proto::decode reads it back), never mixed into the run's rows.
// The same message set aside before is a duplicate.
IngestOutcome set_aside(pqxx::transaction_base& w, int64_t agent_id, int64_t run_id, const RunAccess& access,
                        const proto::Body& body) {
  const std::string frame = jsonb_safe(proto::encode(proto::Envelope{0, body}));
  auto fresh = w.exec_prepared(pg::kIngestSetAside, access.campaign, run_id, agent_id,
                               std::string(proto::type_name(body)),
                               set_aside_reason(access.status, access.run_agent, agent_id, access.error), frame);
  return fresh.empty() ? IngestOutcome::kDuplicate : IngestOutcome::kSetAside;
}

// A result for a run the agent does not hold: a duplicate when the run ended on this agent and `stored` (all of
// the message is in the run's rows already), else set aside.
IngestOutcome not_held(pqxx::transaction_base& w, int64_t agent_id, int64_t run_id, const RunAccess& access,
                       bool stored, const proto::Body& body) {
  if (access.on_agent && stored) return IngestOutcome::kDuplicate;
  return set_aside(w, agent_id, run_id, access, body);
}

// The first result of an assigned run shows it is running (the row is locked FOR SHARE by run_access, so
// its status is still the one read there; a later result of the same transaction sees 'running').
void mark_running(pqxx::transaction_base& w, int64_t run_id, int64_t agent_id, RunAccess& access) {
  if (!access.assigned) return;
  w.exec_prepared(pg::kIngestMarkRunning, run_id, agent_id);
  access.assigned = false;
}

// One message's writes, in the caller's transaction, and what became of it (IngestOutcome; Store's ingest
// contract); a kDbError for data the store cannot keep; SQL errors throw.
Result<IngestOutcome> write_minibatches(pqxx::transaction_base& w, int64_t agent_id, const proto::MinibatchChunk& m) {
  if (m.stall_s.empty()) return IngestOutcome::kDuplicate;
  const int64_t first = m.first_index, last = m.first_index + static_cast<int64_t>(m.stall_s.size()) - 1;
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "minibatches");
  if (!access->holds && !access->on_agent) return set_aside(w, agent_id, m.run_id, *access, m);
  // Whether the epoch has landed (the row with NULL indices), and the stored chunks overlapping [first, last]
  // (chunks never overlap, each is written into a gap: they start in it or are the last one starting before it).
  auto stored = w.exec_prepared(pg::kIngestMinibatchOverlap, access->campaign, m.run_id, m.epoch, first, last);
  bool epoch_landed = false;
  std::vector<chunks::IndexRange> covered;
  for (const auto& r : stored) {
    const pg::Row row(r);
    if (row.is_null("first_idx")) epoch_landed = row.boolean("epoch_landed");
    else covered.push_back({row.integer("first_idx"), row.integer("last_idx")});
  }
  const auto parts = chunks::uncovered(first, last, covered);
  if (!access->holds) return not_held(w, agent_id, m.run_id, *access, parts.empty(), m);
  if (!parts.empty()) {
    for (const auto& row : chunks::minibatch_rows(m, parts)) {
      const pqxx::binarystring stall(row.stall_s), compute(row.compute_s);
      if (row.copy_s)
        w.exec_prepared(pg::kIngestMinibatchRow, access->campaign, m.run_id, m.epoch, row.first_idx, stall, compute,
                        pqxx::binarystring(*row.copy_s));
      else
        w.exec_prepared(pg::kIngestMinibatchRow, access->campaign, m.run_id, m.epoch, row.first_idx, stall, compute,
                        nullptr);
    }
    // The epoch's statistics were computed when it landed: a chunk arriving after it recomputes them.
    if (epoch_landed) w.exec_params("SELECT refresh_epoch_summary($1, $2, $3)", access->campaign, m.run_id, m.epoch);
  }
  mark_running(w, m.run_id, agent_id, *access);
  return parts.empty() ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> write_run_started(pqxx::transaction_base& w, int64_t agent_id, const proto::RunStarted& m) {
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "run_started");
  if (!access->holds) return not_held(w, agent_id, m.run_id, *access, !access->t0_missing, m);
  auto applied = m.applied ? std::optional<std::string>(bj::serialize(proto::to_json(*m.applied))) : std::nullopt;
  auto workload = m.workload ? std::optional<std::string>(bj::serialize(proto::to_json(*m.workload))) : std::nullopt;
  // A resend changes nothing: no row updated. The agent's clock offset now is the run's from here on (runs.clock_offset_s,
  // sql/028): a later clock step on the board moves its later runs only. A run stamped on the boot clock of a boot
  // whose offset a probe measured (the kept one, or an earlier boot's: sql/030, sql/031) is placed by the boot clock,
  // so a step of the wall clock since that probe moves nothing either.
  const std::optional<std::string> boot_id = m.boot_id.empty() ? std::nullopt : std::optional<std::string>(m.boot_id);
  auto changed = w.exec_params(
      "UPDATE runs SET applied = $3::jsonb, reference_state = $4, storage_device = $5, page_cache_dropped = $6, "
      "  agent_t0_unix_s = $7, compute_device = $8, workload = $9::jsonb, agent_boot_id = $10, agent_t0_boot_s = $11, "
      "  clock_offset_s = coalesce((SELECT $7::double precision - ($11::double precision - b.offset_s) "
      "    FROM agent_boot_offsets b WHERE b.agent_id = $2 AND b.boot_id = $10::text), "
      "    (SELECT a.clock_offset_s FROM agents a WHERE a.id = $2)) "
      "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running') AND (applied, reference_state, "
      "  storage_device, page_cache_dropped, agent_t0_unix_s, compute_device, workload, agent_boot_id, "
      "  agent_t0_boot_s) IS DISTINCT FROM ($3::jsonb, $4::boolean, $5::text, $6::boolean, $7::double precision, "
      "  $8::text, $9::jsonb, $10::text, $11::double precision) RETURNING 1",
      m.run_id, agent_id, applied ? applied->c_str() : nullptr, m.reference_state, m.storage_device,
      m.page_cache_dropped, m.t0_unix_s, m.compute_device, workload ? workload->c_str() : nullptr, boot_id,
      m.t0_boot_s);
  mark_running(w, m.run_id, agent_id, *access);
  return changed.empty() ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> write_epoch(pqxx::transaction_base& w, int64_t agent_id, const proto::EpochResult& m) {
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "epoch");
  if (!access->holds) {
    const bool stored = access->on_agent &&
                        w.exec_params1("SELECT EXISTS (SELECT 1 FROM epochs WHERE run_id = $1 AND epoch = $2)",
                                       m.run_id, m.epoch)[0].as<bool>();
    return not_held(w, agent_id, m.run_id, *access, stored, m);
  }
  auto clock = [](const std::optional<proto::ClockReading>& c, auto field) {
    return nullable(c ? std::invoke(field, *c) : std::nullopt);
  };
  auto cores = [](const std::optional<proto::ClockReading>& c) {
    return nullable(c && c->cores_online > 0 ? std::optional<double>(static_cast<double>(c->cores_online)) : std::nullopt);
  };
  auto cores0 = cores(m.clocks_start), cores1 = cores(m.clocks_end);
  auto cpu0 = clock(m.clocks_start, &proto::ClockReading::cpu_khz), cpu1 = clock(m.clocks_end, &proto::ClockReading::cpu_khz);
  auto gpu0 = clock(m.clocks_start, &proto::ClockReading::gpu_hz), gpu1 = clock(m.clocks_end, &proto::ClockReading::gpu_hz);
  auto emc0 = clock(m.clocks_start, &proto::ClockReading::emc_hz), emc1 = clock(m.clocks_end, &proto::ClockReading::emc_hz);
  std::vector<NullableText> measures;   // $20 on, in the description's order (ingest_epoch_sql)
  json::for_each_described(static_cast<const proto::EpochMeasures&>(m),
                           [&](const char*, const std::optional<double>& v) { measures.push_back(nullable(v)); });
  std::vector<const char*> measure_params;
  for (const auto& v : measures) measure_params.push_back(v.c_str());
  auto inserted = w.exec_prepared(
      pg::kIngestEpoch, m.run_id, m.epoch, m.e2e_s, m.stall_s, m.compute_s, m.minibatches, agent_id, access->campaign,
      cores0.c_str(), cores1.c_str(), cpu0.c_str(), cpu1.c_str(), gpu0.c_str(), gpu1.c_str(), emc0.c_str(), emc1.c_str(),
      m.throttled, m.throttle_reason, nullable(m.copy_s).c_str(), pqxx::prepare::make_dynamic_params(measure_params));
  mark_running(w, m.run_id, agent_id, *access);
  return !inserted.empty() && !inserted[0][0].as<bool>() ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

Result<IngestOutcome> write_samples(pqxx::transaction_base& w, int64_t agent_id, const proto::SampleChunk& m) {
  if (m.samples.empty()) return IngestOutcome::kDuplicate;
  const auto fresh = chunks::sorted_unique(m.samples);
  const double t_min = fresh.front().t_s, t_max = fresh.back().t_s;
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "samples");
  if (!access->holds && !access->on_agent) return set_aside(w, agent_id, m.run_id, *access, m);
  const int64_t campaign = access->campaign;
  // Sample chunks never overlap in time (a partial resend is merged, below), so the ones overlapping
  // [t_min, t_max] start in it or are the last one starting before it.
  auto stored = w.exec_prepared(
      pg::kIngestSampleOverlap,
      // t_s travels as the shortest round-trip decimal, so the bounds compare exactly with stored values.
      campaign, m.run_id, chunks::number(t_min), chunks::number(t_max));
  std::vector<proto::Sample> merged = fresh;
  std::vector<double> replaced;   // t_first of the stored chunks merged with this message
  bool all_stored = !stored.empty();
  for (const auto& row : stored) {
    auto old = chunks::parse_sample_chunk({row["t_s"].c_str(), row["cpu_util_pct"].c_str(), row["cpu_freq_mhz"].c_str(),
                                           row["mem_used_kb"].c_str(), row["disk_read_bytes"].c_str(),
                                           row["power_w"].c_str(), row["temp_max_c"].c_str(), row["core_n"].c_str(),
                                           row["core_util_pct"].c_str()});
    if (!old.is_ok()) return old.status().with_context("run " + std::to_string(m.run_id));
    replaced.push_back(row["t_first"].as<double>());
    // Stored samples first: of equal t_s the stored one is kept (a resend never rewrites what landed).
    merged.insert(merged.begin(), old.value().begin(), old.value().end());
  }
  const size_t stored_count = merged.size() - fresh.size();
  merged = chunks::sorted_unique(std::move(merged));
  all_stored = all_stored && merged.size() == stored_count;
  if (!access->holds) return not_held(w, agent_id, m.run_id, *access, all_stored, m);
  if (!all_stored) {
    // Only a partial resend (new samples among stored ones) replaces chunks: by one chunk holding both.
    for (double t : replaced)
      w.exec_params("DELETE FROM sample_chunks WHERE campaign_id = $1 AND run_id = $2 AND t_first = $3::float8",
                    campaign, m.run_id, chunks::number(t));
    const chunks::SampleRow row = chunks::sample_row(replaced.empty() ? fresh : merged);
    using bytes = pqxx::binarystring;
    w.exec_prepared(pg::kIngestSampleRow, campaign, m.run_id, chunks::number(row.t_first), chunks::number(row.t_last),
                    bytes(row.t_s), bytes(row.cpu_util_pct), bytes(row.cpu_freq_mhz), bytes(row.mem_used_kb),
                    bytes(row.disk_read_bytes), bytes(row.power_w), bytes(row.temp_max_c), bytes(row.core_n),
                    bytes(row.core_util_pct));
  }
  if (m.t0_unix_s && access->t0_missing)
    w.exec_params("UPDATE runs SET agent_t0_unix_s = $3, "
                  "  clock_offset_s = (SELECT a.clock_offset_s FROM agents a WHERE a.id = $2) "
                  "WHERE id = $1 AND agent_id = $2 AND agent_t0_unix_s IS NULL",
                  m.run_id, agent_id, *m.t0_unix_s);
  mark_running(w, m.run_id, agent_id, *access);
  return all_stored ? IngestOutcome::kDuplicate : IngestOutcome::kStored;
}

// A run_finished for a run the agent no longer holds never changes it: the same end again (the run ended as the
// agent says) is a duplicate, any other is set aside (e.g. 'done' for a run the controller had declared lost).
Result<IngestOutcome> write_run_finished(pqxx::transaction_base& w, int64_t agent_id, const proto::RunFinished& m,
                                         int max_attempts) {
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "run_finished");
  if (!access->holds) {
    if (stored_graceful_stop(access->error, m)) return IngestOutcome::kDuplicate;
    return not_held(w, agent_id, m.run_id, *access, access->status == m.status, m);
  }
  if (m.status == "cancelled") {
    // Stopped at our request (cancel_run, or its campaign was cancelled): cancelled, its rows kept.
    // Otherwise the agent shut down mid-run: not the run's fault, so it goes back to the queue (or is lost
    // once it has used its attempts).
    w.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now(), wall_s = $3, "
                  "error = CASE WHEN cancel_requested THEN 'cancelled while running' ELSE 'campaign cancelled' END "
                  "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running') AND (cancel_requested "
                  "  OR campaign_id IN (SELECT id FROM campaigns WHERE state = 'cancelled'))",
                  m.run_id, agent_id, m.wall_s);
    w.exec_params("UPDATE runs SET " + pg::requeue_or_lose(max_attempts, "$3::text") +
                      " WHERE runs.id = $1 AND runs.agent_id = $2 AND runs.status IN ('assigned', 'running')",
                  m.run_id, agent_id, graceful_stop_error(m));
  } else {
    w.exec_params("UPDATE runs SET status = $3, error = $4, wall_s = $5, finished_at = now(), "
                  "started_at = coalesce(started_at, now()) "
                  "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running')",
                  m.run_id, agent_id, m.status, m.error, m.wall_s);
  }
  return IngestOutcome::kStored;
}

// A reboot the agent announced for its run: recorded once (a journal replay is the same row); the agent is away,
// its runs held by the lease sweep, until expected_back_s from now. The run stays assigned (not yet running).
Result<IngestOutcome> write_reboot(pqxx::transaction_base& w, int64_t agent_id, const proto::RebootPending& m) {
  auto access = run_access(w, agent_id, m.run_id);
  if (!access) return no_such_run(agent_id, m.run_id, "reboot_pending");
  if (!access->holds) {
    const bool stored = access->on_agent &&
                        w.exec_params1("SELECT EXISTS (SELECT 1 FROM board_reboots WHERE run_id = $1 AND agent_id = $2 "
                                       "AND requested_unix_s = $3)",
                                       m.run_id, agent_id, m.requested_unix_s)[0].as<bool>();
    return not_held(w, agent_id, m.run_id, *access, stored, m);
  }
  auto mask = [](const std::optional<int64_t>& v) {
    NullableText t;
    if (v) t.text = std::to_string(*v), t.null = false;
    return t;
  };
  const NullableText tpc0 = mask(m.tpc_pg_mask_from), tpc1 = mask(m.tpc_pg_mask_to), fbp0 = mask(m.fbp_pg_mask_from),
                     fbp1 = mask(m.fbp_pg_mask_to);
  auto fresh = w.exec_params(
      "INSERT INTO board_reboots (run_id, agent_id, requested_unix_s, mode_name, nvpmodel_id, tpc_pg_mask_from, "
      "tpc_pg_mask_to, fbp_pg_mask_from, fbp_pg_mask_to, expected_back_s) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) "
      "ON CONFLICT DO NOTHING RETURNING 1",
      m.run_id, agent_id, m.requested_unix_s, m.mode_name, m.nvpmodel_id, tpc0.c_str(), tpc1.c_str(), fbp0.c_str(),
      fbp1.c_str(), m.expected_back_s);
  // A replay after the agent came back (its ack was lost) does not send it away again.
  if (fresh.empty()) return IngestOutcome::kDuplicate;
  w.exec_params("UPDATE agents SET away_until = now() + make_interval(secs => $2::double precision) WHERE id = $1",
                agent_id, m.expected_back_s);
  return IngestOutcome::kStored;
}

// One result message's writes in `w` (the variant's alternative picks the writer); kInternal for a message
// that is not a result.
Result<IngestOutcome> write_result(pqxx::transaction_base& w, int64_t agent_id, const proto::Body& body,
                                   int max_attempts) {
  return std::visit(
      [&](const auto& m) -> Result<IngestOutcome> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::MinibatchChunk>) return write_minibatches(w, agent_id, m);
        else if constexpr (std::is_same_v<T, proto::EpochResult>) return write_epoch(w, agent_id, m);
        else if constexpr (std::is_same_v<T, proto::SampleChunk>) return write_samples(w, agent_id, m);
        else if constexpr (std::is_same_v<T, proto::RunFinished>) return write_run_finished(w, agent_id, m, max_attempts);
        else if constexpr (std::is_same_v<T, proto::RunStarted>) return write_run_started(w, agent_id, m);
        else if constexpr (std::is_same_v<T, proto::RebootPending>) return write_reboot(w, agent_id, m);
        else return internal_error("'" + std::string(proto::type_name(body)) + "' is not a result message");
      },
      body);
}

// PgStore::ingesting_ set for the scope (and restored after: ingest_batch calls ingest_batch_with_savepoints).
class IngestingScope {
 public:
  explicit IngestingScope(bool& flag) : flag_(flag), was_(flag) { flag_ = true; }
  ~IngestingScope() { flag_ = was_; }
  IngestingScope(const IngestingScope&) = delete;
  IngestingScope& operator=(const IngestingScope&) = delete;

 private:
  bool& flag_;
  bool was_;
};

}  // namespace

// A message in a transaction of its own. A second attempt follows a lost race with another transaction that
// inserted the same chunk (unique violation): it sees the committed rows and writes only what is missing.
Result<IngestOutcome> PgStore::ingest_alone(int64_t agent_id, const proto::Body& body) {
  const IngestingScope scope(ingesting_);
  return guarded("ingesting a result", [&]() -> Result<IngestOutcome> {
    for (int attempt = 0;; ++attempt) {
      try {
        pqxx::work w(*conn_);
        Result<IngestOutcome> r = write_result(w, agent_id, body, max_attempts_);
        if (!r.is_ok())   // rolled back
          return r.status().with_context("ingesting '" + std::string(proto::type_name(body)) + "'");
        w.commit();
        return r;
      } catch (const pqxx::unique_violation&) {
        if (attempt > 0) throw;
      }
    }
  });
}

namespace {

// A savepoint of `w`, rolled back when it goes out of scope unreleased (the statements since, failed or not, undone
// and the transaction usable again). Plain SQL: pqxx 6.4's subtransaction left the transaction aborted after a
// statement the server refused, so its COMMIT rolled back every other message of the batch, already reported stored.
class Savepoint {
 public:
  Savepoint(pqxx::transaction_base& w, std::string name) : w_(w), name_(std::move(name)) {
    w_.exec("SAVEPOINT " + name_);
  }
  Savepoint(const Savepoint&) = delete;
  Savepoint& operator=(const Savepoint&) = delete;
  ~Savepoint() {
    if (released_) return;
    try {
      w_.exec("ROLLBACK TO SAVEPOINT " + name_ + "; RELEASE SAVEPOINT " + name_);
    } catch (const std::exception&) {   // the connection is gone: the transaction fails as a whole anyway
    }
  }
  void release() {
    w_.exec("RELEASE SAVEPOINT " + name_);
    released_ = true;
  }

 private:
  pqxx::transaction_base& w_;
  std::string name_;
  bool released_ = false;
};

// A held run whose 'done' or 'failed' end the store refused ends 'failed', the end and the refusal its error. Behind
// a savepoint: should the store refuse this as well, the set-aside copy still commits and the run is left as it was.
void end_refused_run(pqxx::work& w, int64_t agent_id, const proto::RunFinished& m, const std::string& why) {
  Savepoint savepoint(w, "end_refused_run");
  try {
    w.exec_params("UPDATE runs SET status = 'failed', error = $3, finished_at = now(), "
                  "started_at = coalesce(started_at, now()) "
                  "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running')",
                  m.run_id, agent_id, refused_end_error(m, why));
    savepoint.release();
  } catch (const pqxx::sql_error& e) {
    // Refused for its data (SQLSTATE classes 22, 23, P0: a value, a constraint, a trigger); anything else (an
    // outage, disk full) fails the whole call, to be retried.
    const std::string state = e.sqlstate();
    if (state.rfind("22", 0) != 0 && state.rfind("23", 0) != 0 && state.rfind("P0", 0) != 0) throw;
    JS_LOG_WARN << "agent " << agent_id << ": run " << m.run_id << " whose end the store refused could not be ended "
                << "either; it stays until its agent registers again: " << log::excerpt(e.what());
  }
}

}  // namespace

// A refused result (Store::set_aside_refused), in a transaction of its own: its frame kept with the reason.
Result<IngestOutcome> PgStore::set_aside_refused(int64_t agent_id, const proto::Body& body, const std::string& why) {
  const std::optional<int64_t> run_id = proto::result_run_id(body);
  if (!run_id) return internal_error("'" + std::string(proto::type_name(body)) + "' is not a result message");
  const IngestingScope scope(ingesting_);
  return guarded("setting aside a refused result", [&]() -> Result<IngestOutcome> {
    pqxx::work w(*conn_);
    auto access = run_access(w, agent_id, *run_id);
    if (!access) return no_such_run(agent_id, *run_id, std::string(proto::type_name(body)).c_str());
    auto fresh = w.exec_prepared(pg::kIngestSetAside, access->campaign, *run_id, agent_id,
                                 std::string(proto::type_name(body)), refused_reason(why),
                                 jsonb_safe(proto::encode(proto::Envelope{0, body})));
    if (const proto::RunFinished* end = run_end_to_fail_when_refused(body); end && access->holds)
      end_refused_run(w, agent_id, *end, why);
    w.commit();
    return fresh.empty() ? IngestOutcome::kDuplicate : IngestOutcome::kSetAside;
  });
}

// Group commit: the messages in one transaction, one commit for all. First without savepoints (two round trips
// less per message); when a message fails there (its data, or a lost race on a chunk), that transaction is
// rolled back and the batch redone with a savepoint per message (ingest_batch_with_savepoints), so that each
// message gets its own result. kUnavailable (nothing committed) when the connection, the commit or any message hit
// an outage, a deadlock or a serialization failure: the caller retries the batch, which is safe (every write is
// idempotent).
Status PgStore::ingest_batch(std::vector<IngestItem>& items) {
  const IngestingScope scope(ingesting_);
  bool committed = false;
  const Status fast = guarded("ingesting a batch of results", [&]() -> Status {
    pqxx::work w(*conn_);
    for (auto& item : items) {
      try {
        Result<IngestOutcome> r = write_result(w, item.agent_id, item.body, max_attempts_);
        item.result = r.status();
        if (r.is_ok()) item.outcome = *r;
      } catch (const pqxx::transaction_rollback&) {
        throw;   // the batch's: guarded makes it kUnavailable
      } catch (const pqxx::sql_error& e) {
        const Status s = sql_failure("ingesting a batch of results", e);
        return s.code() == Code::kUnavailable ? s : Status::ok();   // else one message's: redone with savepoints
      } catch (const pqxx::broken_connection&) {
        throw;   // the connection's: guarded makes it kUnavailable
      } catch (const pqxx::in_doubt_error&) {
        throw;
      } catch (const std::exception&) {
        if (!conn_->is_open()) throw;   // the connection went: guarded makes it kUnavailable
        // A value the layout cannot store (chunks' out_of_range) or any other failure of this message:
        // redone with savepoints, where it is this message's result, not its neighbours'.
        return Status::ok();
      }
      if (!item.result.is_ok()) return Status::ok();   // rolled back; redone with savepoints
    }
    w.commit();
    committed = true;
    return Status::ok();
  });
  if (!fast.is_ok() || committed) return fast;
  return ingest_batch_with_savepoints(items);
}

// The batch with a savepoint per message: one message's failure rolls back its writes only, and is its result.
Status PgStore::ingest_batch_with_savepoints(std::vector<IngestItem>& items) {
  const IngestingScope scope(ingesting_);
  return guarded("ingesting a batch of results", [&]() -> Status {
    pqxx::work w(*conn_);
    for (auto& item : items) {
      item.result = Status::ok();
      for (int attempt = 0;; ++attempt) {
        Savepoint savepoint(w, "result");   // rolled back unless released: a failure here undoes this message only
        try {
          Result<IngestOutcome> r = write_result(w, item.agent_id, item.body, max_attempts_);
          item.result = r.status();
          if (r.is_ok()) item.outcome = *r;
          if (item.result.is_ok()) savepoint.release();
          break;
        } catch (const pqxx::unique_violation&) {
          if (attempt > 0) throw;
        } catch (const pqxx::transaction_rollback& e) {
          return unavailable(std::string("ingesting a batch of results: transaction rolled back: ") + e.what());
        } catch (const pqxx::sql_error& e) {   // this message's data: its savepoint is rolled back, the others stay
          item.result = sql_failure("ingesting a result", e);
          if (item.result.code() == Code::kUnavailable) return item.result;
          break;
        } catch (const pqxx::broken_connection&) {
          throw;   // the connection's: guarded makes it kUnavailable
        } catch (const pqxx::in_doubt_error&) {
          throw;
        } catch (const std::exception& e) {   // a value the layout cannot store (chunks), or any other
          if (!conn_->is_open()) throw;       // failure of this message alone (the connection's: kUnavailable)
          item.result = db_error(std::string("ingesting a result: ") + e.what());
          break;
        }
      }
      if (!item.result.is_ok())
        item.result = item.result.with_context("ingesting '" + std::string(proto::type_name(item.body)) + "'");
    }
    w.commit();
    return Status::ok();
  });
}

Result<IngestOutcome> PgStore::ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) {
  return ingest_alone(agent_id, m);
}
Result<IngestOutcome> PgStore::start_run(int64_t agent_id, const proto::RunStarted& m) {
  return ingest_alone(agent_id, m);
}
Result<IngestOutcome> PgStore::ingest_epoch(int64_t agent_id, const proto::EpochResult& m) {
  return ingest_alone(agent_id, m);
}
Result<IngestOutcome> PgStore::ingest_samples(int64_t agent_id, const proto::SampleChunk& m) {
  return ingest_alone(agent_id, m);
}
Result<IngestOutcome> PgStore::finish_run(int64_t agent_id, const proto::RunFinished& m) {
  return ingest_alone(agent_id, m);
}
Result<IngestOutcome> PgStore::record_reboot(int64_t agent_id, const proto::RebootPending& m) {
  return ingest_alone(agent_id, m);
}

}  // namespace jetsweep::controller
