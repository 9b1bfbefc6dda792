// PgStore: ingest of agents' results (idempotent: COPY, merged through staging tables on resends).
#include <pqxx/pqxx>
#include <pqxx/tablewriter>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>

#include "common/log.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {

// Text form of a nullable double for COPY / parameters (nullptr = NULL).
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

// Rows in PostgreSQL's COPY text format, built in one buffer (numbers as shortest round-trip decimals).
class CopyText {
 public:
  static std::string number(double v) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  }
  void field(int64_t v) {
    sep();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    text_.append(buf, r.ptr);
  }
  void field(double v) {
    sep();
    if (!std::isfinite(v)) return null();  // the agent never sends these; NOT NULL columns reject them loudly
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    text_.append(buf, r.ptr);
  }
  void field(const std::optional<double>& v) {
    if (v && std::isfinite(*v)) return field(*v);
    sep();
    null();
  }
  void array(const std::vector<double>& v) {
    sep();
    text_ += '{';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) text_ += ',';
      if (!std::isfinite(v[i])) {
        text_ += "NULL";
        continue;
      }
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
      text_.append(buf, r.ptr);
    }
    text_ += '}';
  }
  void end_row() {
    text_ += '\n';
    first_ = true;
  }
  const std::string& text() const { return text_; }

 private:
  void sep() {
    if (!first_) text_ += '\t';
    first_ = false;
  }
  void null() { text_ += "\\N"; }
  std::string text_;
  bool first_ = true;
};

// The first result of an assigned run shows it is running.
void mark_running(pqxx::work& w, int64_t run_id, int64_t agent_id) {
  w.exec_params("UPDATE runs SET status = 'running', started_at = coalesce(started_at, now()) "
                "WHERE id = $1 AND agent_id = $2 AND status = 'assigned'",
                run_id, agent_id);
}

// Whether the agent may add results to the run now: it owns the run, which is assigned or running. Locks the
// run's row FOR SHARE, so it cannot be reassigned or finished until the transaction ends. Results are
// append-only per run: for a run of the agent's that has ended (done, failed, cancelled, lost) nothing is
// written and the drop is logged; rows of runs the agent does not own are dropped silently (a requeued run
// belongs to its new agent). Either way the message is still acknowledged, so the agent's outbox drains.
bool accepts_results(pqxx::work& w, int64_t agent_id, int64_t run_id, const char* what) {
  auto r = w.exec_params("SELECT status FROM runs WHERE id = $1 AND agent_id = $2 FOR SHARE", run_id, agent_id);
  if (r.empty()) return false;
  const std::string status = r[0][0].c_str();
  if (status == "assigned" || status == "running") return true;
  JS_LOG_INFO << "agent " << agent_id << ": " << what << " of run " << run_id << " dropped: the run is " << status
              << " (results are append-only)";
  return false;
}

// Idempotent ingest of one message's rows into `table` for a run the agent owns. Rows of runs the agent does
// not own, or of ended runs, are dropped (accepts_results). The common case, rows never seen before, is one
// COPY straight into the table; a resend (the `present` query, with $1 = run id, finds a row of the chunk) or
// a race caught as a unique violation goes through a staging table merged with ON CONFLICT DO NOTHING.
// `also` runs in the same transaction. Marks an assigned run running.
Status copy_owned_rows(pqxx::connection& conn, int64_t agent_id, int64_t run_id, const std::string& table,
                       const std::string& present, const CopyText& rows,
                       const std::function<void(pqxx::work&)>& also) {
  for (int attempt = 0;; ++attempt) {
    try {
      pqxx::work w(conn);
      if (!accepts_results(w, agent_id, run_id, table.c_str())) {
        w.commit();
        return Status::ok();
      }
      const bool merge = attempt > 0 || !w.exec_params(present, run_id).empty();
      const std::string target = merge ? table + "_stage" : table;
      if (merge)
        w.exec("CREATE TEMP TABLE IF NOT EXISTS " + target + " (LIKE " + table + ") ON COMMIT DELETE ROWS");
      {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        // tablewriter is the libpqxx 6.4 API that accepts preformatted COPY text (stream_to formats per row).
        pqxx::tablewriter copy(w, target);
#pragma GCC diagnostic pop
        copy.write_raw_line(rows.text());
        copy.complete();
      }
      if (merge) w.exec("INSERT INTO " + table + " SELECT * FROM " + target + " ON CONFLICT DO NOTHING");
      if (also) also(w);
      mark_running(w, run_id, agent_id);
      w.commit();
      return Status::ok();
    } catch (const pqxx::unique_violation&) {
      if (attempt > 0) throw;
    }
  }
}


}  // namespace

Status PgStore::ingest_minibatches(int64_t agent_id, const proto::MinibatchChunk& m) {
  return guarded("ingesting minibatches", [&]() -> Status {
    if (m.stall_s.empty()) return Status::ok();
    CopyText text;
    for (size_t i = 0; i < m.stall_s.size(); ++i) {
      text.field(m.run_id);
      text.field(m.epoch);
      text.field(m.first_index + static_cast<int64_t>(i));
      text.field(m.stall_s[i]);
      text.field(m.compute_s[i]);
      text.field(m.copy_s.empty() ? std::optional<double>() : std::optional<double>(m.copy_s[i]));
      text.end_row();
    }
    const std::string present =
        "SELECT 1 FROM minibatches WHERE run_id = $1 AND epoch = " + std::to_string(m.epoch) + " AND idx BETWEEN " +
        std::to_string(m.first_index) + " AND " + std::to_string(m.first_index + static_cast<int64_t>(m.stall_s.size()) - 1) +
        " LIMIT 1";
    return copy_owned_rows(*conn_, agent_id, m.run_id, "minibatches", present, text, nullptr);
  });
}

Status PgStore::start_run(int64_t agent_id, const proto::RunStarted& m) {
  return guarded("recording a run's applied state", [&]() -> Status {
    pqxx::work w(*conn_);
    if (!accepts_results(w, agent_id, m.run_id, "run_started")) return Status::ok();   // rolled back: it only read
    auto applied = m.applied ? std::optional<std::string>(bj::serialize(proto::to_json(*m.applied))) : std::nullopt;
    w.exec_params(
        "UPDATE runs SET applied = $3::jsonb, reference_state = $4, storage_device = $5, page_cache_dropped = $6, "
        "  agent_t0_unix_s = $7, compute_device = $8 "
        "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running')",
        m.run_id, agent_id, applied ? applied->c_str() : nullptr, m.reference_state, m.storage_device,
        m.page_cache_dropped, m.t0_unix_s, m.compute_device);
    mark_running(w, m.run_id, agent_id);
    w.commit();
    return Status::ok();
  });
}

Status PgStore::ingest_epoch(int64_t agent_id, const proto::EpochResult& m) {
  return guarded("ingesting an epoch", [&]() -> Status {
    pqxx::work w(*conn_);
    if (!accepts_results(w, agent_id, m.run_id, "epoch")) return Status::ok();   // rolled back: it only read
    auto energy = nullable(m.energy_j);
    auto power = nullable(m.mean_power_w);
    auto mb_s = nullable(m.read_mb_s);
    auto iops = nullable(m.read_iops);
    auto cache0 = nullable(m.cache_start_frac);
    auto cache1 = nullable(m.cache_end_frac);
    auto loss = nullable(m.loss);
    auto t0 = nullable(m.t_start_s);
    auto t1 = nullable(m.t_end_s);
    auto coverage = nullable(m.power_coverage);
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
    w.exec_params(
        "INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, mean_power_w, loss, "
        "  read_mb_s, read_iops, cache_start_frac, cache_end_frac, t_start_s, t_end_s, power_coverage, cores_start, "
        "  cores_end, cpu_khz_start, cpu_khz_end, gpu_hz_start, gpu_hz_end, emc_hz_start, emc_hz_end, throttled, "
        "  throttle_reason, copy_s) "
        "SELECT $1, $2, $3, $4, $5, $6, $7::double precision, $8::double precision, $9::double precision, "
        "  $11::double precision, $12::double precision, $13::double precision, $14::double precision, "
        "  $15::double precision, $16::double precision, $17::double precision, "
        "  $18::double precision::integer, $19::double precision::integer, $20::double precision, "
        "  $21::double precision, $22::double precision, $23::double precision, $24::double precision, "
        "  $25::double precision, $26, $27, $28::double precision "
        "WHERE EXISTS (SELECT 1 FROM runs WHERE id = $1 AND agent_id = $10) "
        "ON CONFLICT (run_id, epoch) DO UPDATE SET e2e_s = EXCLUDED.e2e_s, stall_s = EXCLUDED.stall_s, "
        "compute_s = EXCLUDED.compute_s, minibatches = EXCLUDED.minibatches, energy_j = EXCLUDED.energy_j, "
        "mean_power_w = EXCLUDED.mean_power_w, loss = EXCLUDED.loss, read_mb_s = EXCLUDED.read_mb_s, "
        "read_iops = EXCLUDED.read_iops, cache_start_frac = EXCLUDED.cache_start_frac, "
        "cache_end_frac = EXCLUDED.cache_end_frac, t_start_s = EXCLUDED.t_start_s, t_end_s = EXCLUDED.t_end_s, "
        "power_coverage = EXCLUDED.power_coverage, cores_start = EXCLUDED.cores_start, cores_end = EXCLUDED.cores_end, "
        "cpu_khz_start = EXCLUDED.cpu_khz_start, cpu_khz_end = EXCLUDED.cpu_khz_end, "
        "gpu_hz_start = EXCLUDED.gpu_hz_start, gpu_hz_end = EXCLUDED.gpu_hz_end, "
        "emc_hz_start = EXCLUDED.emc_hz_start, emc_hz_end = EXCLUDED.emc_hz_end, throttled = EXCLUDED.throttled, "
        "throttle_reason = EXCLUDED.throttle_reason, copy_s = EXCLUDED.copy_s",
        m.run_id, m.epoch, m.e2e_s, m.stall_s, m.compute_s, m.minibatches, energy.c_str(), power.c_str(), loss.c_str(),
        agent_id, mb_s.c_str(), iops.c_str(), cache0.c_str(), cache1.c_str(), t0.c_str(), t1.c_str(), coverage.c_str(),
        cores0.c_str(), cores1.c_str(), cpu0.c_str(), cpu1.c_str(), gpu0.c_str(), gpu1.c_str(), emc0.c_str(), emc1.c_str(),
        m.throttled, m.throttle_reason, nullable(m.copy_s).c_str());
    mark_running(w, m.run_id, agent_id);
    w.commit();
    return Status::ok();
  });
}

Status PgStore::ingest_samples(int64_t agent_id, const proto::SampleChunk& m) {
  return guarded("ingesting samples", [&]() -> Status {
    if (m.samples.empty()) return Status::ok();
    CopyText text;
    double t_min = m.samples.front().t_s, t_max = t_min;
    for (const auto& s : m.samples) {
      t_min = std::min(t_min, s.t_s);
      t_max = std::max(t_max, s.t_s);
      text.field(m.run_id);
      text.field(s.t_s);
      text.field(s.cpu_util_pct);
      text.field(s.cpu_freq_mhz);
      text.field(s.mem_used_kb);
      text.field(s.disk_read_bytes);
      text.field(s.power_w);
      text.array(s.core_util_pct);
      text.field(s.temp_max_c);   // sql/015: the table's last column
      text.end_row();
    }
    // t_s travels as the shortest round-trip decimal, so the range bounds compare exactly with stored rows.
    const std::string present = "SELECT 1 FROM samples WHERE run_id = $1 AND t_s BETWEEN " + CopyText::number(t_min) +
                                " AND " + CopyText::number(t_max) + " LIMIT 1";
    std::optional<double> t0 = m.t0_unix_s;
    return copy_owned_rows(*conn_, agent_id, m.run_id, "samples", present, text, [&](pqxx::work& w) {
      if (t0)
        w.exec_params("UPDATE runs SET agent_t0_unix_s = $3 WHERE id = $1 AND agent_id = $2 AND agent_t0_unix_s IS NULL",
                      m.run_id, agent_id, *t0);
    });
  });
}

Status PgStore::finish_run(int64_t agent_id, const proto::RunFinished& m) {
  return guarded("finishing a run", [&]() -> Status {
    pqxx::work w(*conn_);
    if (m.status == "cancelled") {
      // Stopped at our request (cancel_run, or its campaign was cancelled): cancelled, its rows kept.
      // Otherwise the agent shut down mid-run: not the run's fault, so it goes back to the queue (or is lost
      // once it has used its attempts).
      w.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now(), wall_s = $3, "
                    "error = CASE WHEN cancel_requested THEN 'cancelled while running' ELSE 'campaign cancelled' END "
                    "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running') AND (cancel_requested "
                    "  OR campaign_id IN (SELECT id FROM campaigns WHERE state = 'cancelled'))",
                    m.run_id, agent_id, m.wall_s);
      w.exec_params("UPDATE runs SET " + pg::requeue_or_lose(max_attempts_, "$3::text") +
                        " WHERE runs.id = $1 AND runs.agent_id = $2 AND runs.status IN ('assigned', 'running')",
                    m.run_id, agent_id, "cancelled on its agent: " + m.error);
    } else {
      w.exec_params("UPDATE runs SET status = $3, error = $4, wall_s = $5, finished_at = now(), "
                    "started_at = coalesce(started_at, now()) "
                    "WHERE id = $1 AND agent_id = $2 AND status IN ('assigned', 'running')",
                    m.run_id, agent_id, m.status, m.error, m.wall_s);
    }
    w.commit();
    return Status::ok();
  });
}

}  // namespace jetsweep::controller
