#include "controller/pg_store.hpp"

#include <pqxx/pqxx>
#include <pqxx/tablewriter>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <tuple>

#include "common/board_classes.hpp"
#include "common/json_fields.hpp"
#include "common/perf/estimate.hpp"
#include "common/log.hpp"

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

bj::value field_number(const pqxx::field& f) {
  if (f.is_null()) return nullptr;
  return f.as<double>();
}

bj::value field_text(const pqxx::field& f) {
  if (f.is_null()) return nullptr;
  return bj::string(f.c_str());
}

bj::value parse_json_field(const pqxx::field& f) {
  if (f.is_null()) return nullptr;
  bj::error_code ec;
  auto v = bj::parse(f.c_str(), ec);
  if (ec) return nullptr;
  return v;
}

}  // namespace

PgStore::PgStore(std::string dsn, int max_attempts) : dsn_(std::move(dsn)), max_attempts_(max_attempts) {}

namespace {
// SET clause that sends a run back to the queue, or declares it lost once it has used its attempts, or
// cancelled when a cancel was requested; $why must be bound by the caller's statement as `why_param`.
std::string requeue_or_lose(int max_attempts, const std::string& why_param) {
  const std::string cancelled = "runs.cancel_requested";
  const std::string lost = "runs.attempts >= " + std::to_string(max_attempts);
  const std::string ends = "(" + cancelled + " OR " + lost + ")";
  return "status = CASE WHEN " + cancelled + " THEN 'cancelled' WHEN " + lost + " THEN 'lost' ELSE 'queued' END, "
         "agent_id = CASE WHEN " + ends + " THEN runs.agent_id ELSE NULL END, "
         "finished_at = CASE WHEN " + ends + " THEN now() ELSE NULL END, "
         "queued_at = now(), "
         "error = CASE WHEN " + cancelled + " THEN 'cancelled by request; its agent stopped with: ' || " + why_param +
         " WHEN " + lost + " THEN 'lost after ' || runs.attempts || ' attempts; last: ' || " + why_param +
         " ELSE " + why_param + " END";
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

// Idempotent ingest of one message's rows into `table` for a run the agent owns. Rows of runs the agent does
// not own are dropped (a requeued run belongs to its new agent). The common case, rows never seen before,
// is one COPY straight into the table; a resend (the `present` query, with $1 = run id, finds a row of
// the chunk) or a race caught as a unique violation goes through a staging table merged with ON CONFLICT
// DO NOTHING. The run's row is locked FOR SHARE so it cannot be reassigned mid-ingest. `also` runs in the
// same transaction. Marks an assigned run running.
Status copy_owned_rows(pqxx::connection& conn, int64_t agent_id, int64_t run_id, const std::string& table,
                       const std::string& present, const CopyText& rows,
                       const std::function<void(pqxx::work&)>& also) {
  for (int attempt = 0;; ++attempt) {
    try {
      pqxx::work w(conn);
      auto owned = w.exec_params("SELECT 1 FROM runs WHERE id = $1 AND agent_id = $2 FOR SHARE", run_id, agent_id);
      if (owned.empty()) {
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

// The boards the controller counts as enrolled: agents connected now or seen in the last 24 hours, one per
// physical board (agents sharing a board_id count once: the connected one, else the one seen last). A CTE
// prefix: use as
// kEnrolledBoardsSql + " SELECT ... FROM enrolled ...".
const char* const kEnrolledBoardsSql =
    "WITH enrolled AS (SELECT DISTINCT ON (CASE WHEN board_id = '' THEN name ELSE board_id END) name, device_class "
    "  FROM agents WHERE connected OR last_seen > now() - interval '24 hours' "
    "  ORDER BY CASE WHEN board_id = '' THEN name ELSE board_id END, connected DESC, last_seen DESC, name)";

// PostgreSQL array literal of strings, each quoted and escaped.
std::string text_array_literal(const std::vector<std::string>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    s += i ? ",\"" : "\"";
    for (char ch : v[i]) {
      if (ch == '"' || ch == '\\') s += '\\';
      s += ch;
    }
    s += '"';
  }
  return s + "}";
}

// Storage medium a run's data names ("@NAME" or "@NAME/REL"), or "" for none.
std::string storage_medium(const std::string& data) {
  if (data.empty() || data[0] != '@') return "";
  return data.substr(1, data.find('/') == std::string::npos ? std::string::npos : data.find('/') - 1);
}

std::string array_literal(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}
}  // namespace
PgStore::~PgStore() = default;

bool PgStore::connected() const { return conn_ && conn_->is_open(); }

Status PgStore::connect() {
  try {
    conn_ = std::make_unique<pqxx::connection>(dsn_);
    pqxx::nontransaction n(*conn_);
    n.exec("SET client_min_messages TO WARNING");
    return Status::ok();
  } catch (const pqxx::broken_connection& e) {
    conn_.reset();
    return unavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
  } catch (const std::exception& e) {
    conn_.reset();
    return db_error(std::string("cannot connect to PostgreSQL: ") + e.what());
  }
}

template <class Fn>
auto PgStore::guarded(const char* what, Fn&& fn) -> decltype(fn()) {
  if (!connected()) {
    Status s = connect();
    if (!s.is_ok()) return s.with_context(what);
  }
  try {
    return fn();
  } catch (const pqxx::broken_connection& e) {
    conn_.reset();
    return unavailable(std::string(what) + ": connection to PostgreSQL lost: " + e.what());
  } catch (const pqxx::in_doubt_error& e) {
    conn_.reset();
    return unavailable(std::string(what) + ": commit in doubt: " + e.what());
  } catch (const pqxx::transaction_rollback& e) {
    // Deadlock or serialization failure between the dispatch and ingest connections: nothing was written,
    // so the caller retries.
    return unavailable(std::string(what) + ": transaction rolled back: " + e.what());
  } catch (const pqxx::sql_error& e) {
    // Admin shutdown / cannot-connect-now surface as sql_error with class 57 or 08: retryable.
    const std::string state = e.sqlstate();
    if (state.rfind("57", 0) == 0 || state.rfind("08", 0) == 0) {
      conn_.reset();
      return unavailable(std::string(what) + ": " + e.what());
    }
    return db_error(std::string(what) + ": " + e.what() + " [sqlstate " + state + "]");
  } catch (const std::exception& e) {
    if (conn_ && !conn_->is_open()) conn_.reset();
    return db_error(std::string(what) + ": " + e.what());
  }
}

Status PgStore::migrate() {
  return guarded("applying migrations", [&]() -> Status {
    pqxx::work w(*conn_);
    // One controller migrates at a time.
    w.exec("SELECT pg_advisory_xact_lock(7202604)");
    w.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
           "applied_at timestamptz NOT NULL DEFAULT now())");
    size_t count = 0;
    const Migration* all = migrations(count);
    for (size_t i = 0; i < count; ++i) {
      auto r = w.exec_params("SELECT 1 FROM schema_migrations WHERE version = $1", all[i].version);
      if (!r.empty()) continue;
      JS_LOG_INFO << "applying migration " << all[i].name;
      w.exec(all[i].sql);
      w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", all[i].version, all[i].name);
    }
    w.commit();
    return Status::ok();
  });
}

Status PgStore::reset_connections() {
  return guarded("resetting agent connections", [&]() -> Status {
    pqxx::work w(*conn_);
    w.exec("UPDATE agents SET connected = false, last_seen = now() WHERE connected");
    w.commit();
    return Status::ok();
  });
}

Result<int64_t> PgStore::register_agent(const proto::Register& reg) {
  return guarded("registering agent", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    const auto& f = reg.facts;
    auto r = w.exec_params(
        "INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, compiler, "
        "git_sha, storage, board_id, accelerator, not_ready, connected, last_seen) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,"
        "$11::text[],$12,$13,$14::text[],true,now()) "
        "ON CONFLICT (name) DO UPDATE SET hostname = EXCLUDED.hostname, cpus = EXCLUDED.cpus, "
        "mem_bytes = EXCLUDED.mem_bytes, backend = EXCLUDED.backend, device_class = EXCLUDED.device_class, "
        "kernel = EXCLUDED.kernel, torch_version = EXCLUDED.torch_version, compiler = EXCLUDED.compiler, "
        "git_sha = EXCLUDED.git_sha, storage = EXCLUDED.storage, board_id = EXCLUDED.board_id, "
        "accelerator = EXCLUDED.accelerator, not_ready = EXCLUDED.not_ready, connected = true, "
        "last_seen = now() RETURNING id",
        reg.name, f.hostname, f.cpus, f.mem_bytes, f.backend, f.device_class, f.kernel, f.torch_version, f.compiler,
        f.git_sha, text_array_literal(f.storage), f.board_id, f.accelerator, text_array_literal(f.not_ready));
    w.commit();
    return r[0][0].as<int64_t>();
  });
}

Status PgStore::set_agent_connected(int64_t agent_id, bool connected) {
  return guarded("updating agent connection", [&]() -> Status {
    pqxx::work w(*conn_);
    w.exec_params("UPDATE agents SET connected = $2, last_seen = now() WHERE id = $1", agent_id, connected);
    w.commit();
    return Status::ok();
  });
}

Result<int64_t> PgStore::requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                            const std::string& why) {
  return guarded("requeueing agent runs", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    auto r = w.exec_params("UPDATE runs SET " + requeue_or_lose(max_attempts_, "$3::text") +
                               " WHERE runs.agent_id = $1 AND runs.status IN ('assigned', 'running') "
                               "AND NOT (runs.id = ANY($2::bigint[]))",
                           agent_id, array_literal(keep_runs), why);
    w.commit();
    return static_cast<int64_t>(r.affected_rows());
  });
}

Result<int64_t> PgStore::requeue_orphaned_runs(double lease_s) {
  return guarded("requeueing orphaned runs", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    auto r = w.exec_params(
        "UPDATE runs SET " +
            requeue_or_lose(max_attempts_, "('agent ' || a.name || ' disconnected for more than ' || $1 || ' s')") +
            " FROM agents a WHERE runs.agent_id = a.id AND runs.status IN ('assigned', 'running') "
            "AND NOT a.connected AND a.last_seen < now() - make_interval(secs => $1::double precision)",
        lease_s);
    w.commit();
    return static_cast<int64_t>(r.affected_rows());
  });
}

Status PgStore::record_clock(int64_t agent_id, double offset_s, double rtt_s) {
  return guarded("recording the clock offset", [&]() -> Status {
    pqxx::work w(*conn_);
    w.exec_params("UPDATE agents SET clock_offset_s = $2, clock_rtt_s = $3, clock_measured_at = now() "
                  "WHERE id = $1 AND (clock_rtt_s IS NULL OR $3 <= clock_rtt_s "
                  "  OR clock_measured_at < now() - interval '10 minutes')",
                  agent_id, offset_s, rtt_s);
    w.commit();
    return Status::ok();
  });
}

Status PgStore::set_campaign_state(int64_t campaign_id, const std::string& state) {
  if (state != "active" && state != "paused" && state != "cancelled")
    return invalid_argument("campaign state must be active, paused or cancelled, not '" + state + "'");
  return guarded("changing the campaign state", [&]() -> Status {
    pqxx::work w(*conn_);
    auto r = w.exec_params("UPDATE campaigns SET state = $2 WHERE id = $1 AND state <> 'cancelled' RETURNING id",
                           campaign_id, state);
    if (r.empty()) {
      auto exists = w.exec_params("SELECT state FROM campaigns WHERE id = $1", campaign_id);
      if (exists.empty()) return not_found("no campaign " + std::to_string(campaign_id));
      if (state != "cancelled") return invalid_argument("campaign " + std::to_string(campaign_id) + " is cancelled");
    }
    if (state == "cancelled") {
      w.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now(), error = 'campaign cancelled' "
                    "WHERE campaign_id = $1 AND status = 'queued'",
                    campaign_id);
      w.exec_params("UPDATE runs SET cancel_requested = true "
                    "WHERE campaign_id = $1 AND status IN ('assigned', 'running')",
                    campaign_id);
    }
    w.commit();
    return Status::ok();
  });
}

Result<bj::object> PgStore::cancel_run(int64_t run_id) {
  return guarded("cancelling a run", [&]() -> Result<bj::object> {
    pqxx::work w(*conn_);
    w.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now(), error = 'cancelled by request' "
                  "WHERE id = $1 AND status = 'queued'",
                  run_id);
    w.exec_params("UPDATE runs SET cancel_requested = true WHERE id = $1 AND status IN ('assigned', 'running')", run_id);
    auto r = w.exec_params("SELECT r.id, r.campaign_id, r.status, r.cancel_requested, a.name, r.error FROM runs r "
                           "LEFT JOIN agents a ON a.id = r.agent_id WHERE r.id = $1",
                           run_id);
    w.commit();
    if (r.empty()) return not_found("no run " + std::to_string(run_id));
    bj::object o;
    o["run_id"] = r[0][0].as<int64_t>();
    o["campaign_id"] = r[0][1].as<int64_t>();
    o["status"] = r[0][2].c_str();
    o["stopping"] = r[0][3].as<bool>() && (std::string(r[0][2].c_str()) == "assigned" || std::string(r[0][2].c_str()) == "running");
    o["agent"] = field_text(r[0][4]);
    o["error"] = r[0][5].c_str();
    return o;
  });
}

Result<std::vector<RunOnAgent>> PgStore::runs_to_stop() {
  return guarded("listing runs to stop", [&]() -> Result<std::vector<RunOnAgent>> {
    pqxx::nontransaction n(*conn_);
    auto r = n.exec("SELECT id, agent_id FROM runs WHERE cancel_requested AND status IN ('assigned', 'running') "
                    "AND agent_id IS NOT NULL");
    std::vector<RunOnAgent> out;
    for (const auto& row : r) out.push_back({row[0].as<int64_t>(), row[1].as<int64_t>()});
    return out;
  });
}

Result<std::optional<Assignment>> PgStore::claim_run(int64_t agent_id, const std::string& device_class) {
  return guarded("claiming a run", [&]() -> Result<std::optional<Assignment>> {
    pqxx::work w(*conn_);
    // The agent, and whether another agent of its board is busy (one run per physical board).
    auto me = w.exec_params(
        "SELECT name, mem_bytes, storage::text, board_id <> '' AND EXISTS (SELECT 1 FROM runs busy JOIN agents other "
        "  ON other.id = busy.agent_id WHERE other.id <> $1 AND other.board_id = agents.board_id "
        "  AND busy.status IN ('assigned', 'running')) FROM agents WHERE id = $1",
        agent_id);
    if (me.empty() || me[0][3].as<bool>()) {
      w.commit();
      return std::optional<Assignment>();
    }
    const std::string name = me[0][0].c_str();
    const int64_t mem_bytes = me[0][1].as<int64_t>();
    const std::string storage = me[0][2].c_str();
    // In every campaign with queued runs, the lowest-id queued run the agent can take, looked up per device
    // value it matches (index runs_queued_by_campaign: three short range scans); the first by campaign
    // priority, then campaign age. One statement, however many campaigns.
    const std::string pick_one =
        "(SELECT id FROM runs WHERE campaign_id = c.id AND status = 'queued' AND device = $DEVICE AND "
        "min_mem_bytes <= $2 AND (storage IS NULL OR storage = ANY($3::text[])) AND NOT ($4 = ANY(unfit_classes)) "
        "ORDER BY id LIMIT 1)";
    auto with_device = [&](const std::string& param) {
      std::string q = pick_one;
      q.replace(q.find("$DEVICE"), 7, param);
      return q;
    };
    const std::string pick =
        "SELECT pick.id FROM (SELECT c.id, c.priority FROM campaigns c WHERE c.state = 'active' AND EXISTS "
        "(SELECT 1 FROM runs q WHERE q.campaign_id = c.id AND q.status = 'queued')) c "
        "CROSS JOIN LATERAL (SELECT min(id) AS id FROM (" + with_device("'any'") + " UNION ALL " + with_device("$4") +
        " UNION ALL " + with_device("$1") + ") candidates) pick "
        "WHERE pick.id IS NOT NULL ORDER BY c.priority DESC, c.id LIMIT 1";
    pqxx::result r;
    // The status guard makes the update safe against any other writer (claims themselves all run on the
    // one dispatch connection, so they never race each other); should it miss, look again.
    for (int attempt = 0; attempt < 3 && r.empty(); ++attempt) {
      auto p = w.exec_params(pick, name, mem_bytes, storage, device_class);
      if (p.empty()) break;
      r = w.exec_params(
          "UPDATE runs SET status = 'assigned', agent_id = $1, assigned_at = now(), attempts = attempts + 1, "
          "  started_at = NULL, finished_at = NULL, wall_s = NULL, agent_t0_unix_s = NULL, applied = NULL, "
          "  reference_state = NULL, storage_device = NULL, page_cache_dropped = NULL, compute_device = NULL, "
          "  facts = (SELECT to_jsonb(a) - 'id' - 'connected' - 'first_seen' - 'last_seen' FROM agents a WHERE a.id = $1) "
          "WHERE id = $2 AND status = 'queued' RETURNING id, config::text",
          agent_id, p[0][0].as<int64_t>());
    }
    if (r.empty()) {
      w.commit();
      return std::optional<Assignment>();
    }
    const int64_t run_id = r[0][0].as<int64_t>();
    // A re-executed run starts clean: drop rows of an earlier, interrupted attempt.
    w.exec_params("DELETE FROM minibatches WHERE run_id = $1", run_id);
    w.exec_params("DELETE FROM epochs WHERE run_id = $1", run_id);
    w.exec_params("DELETE FROM samples WHERE run_id = $1", run_id);
    w.commit();
    bj::error_code ec;
    auto cfg_json = bj::parse(r[0][1].c_str(), ec);
    if (ec || !cfg_json.is_object()) return db_error("run " + std::to_string(run_id) + ": stored config is not a JSON object");
    auto cfg = run_config_from_json(cfg_json.get_object(), "run " + std::to_string(run_id) + " config");
    if (!cfg) return cfg.status();
    return std::optional<Assignment>(Assignment{run_id, std::move(cfg).value()});
  });
}

Status PgStore::unclaim_run(int64_t run_id, int64_t agent_id) {
  return guarded("unclaiming a run", [&]() -> Status {
    pqxx::work w(*conn_);
    // A run whose cancel was requested meanwhile is cancelled, not queued again (its campaign may never
    // hand it out again).
    w.exec_params("UPDATE runs SET status = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'queued' END, "
                  "agent_id = CASE WHEN cancel_requested THEN agent_id ELSE NULL END, "
                  "finished_at = CASE WHEN cancel_requested THEN now() ELSE NULL END, "
                  "error = CASE WHEN cancel_requested THEN 'cancelled before it started' ELSE error END, "
                  "attempts = greatest(attempts - 1, 0) "
                  "WHERE id = $1 AND agent_id = $2 AND status = 'assigned'",
                  run_id, agent_id);
    w.commit();
    return Status::ok();
  });
}

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
        "WHERE EXISTS (SELECT 1 FROM runs WHERE id = $1 AND agent_id = $10 FOR SHARE) "
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
      w.exec_params("UPDATE runs SET " + requeue_or_lose(max_attempts_, "$3::text") +
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

Result<CreatedCampaign> PgStore::create_campaign(const Campaign& c, const std::string& source_file,
                                                 const std::string& source_yaml) {
  return guarded("storing the campaign", [&]() -> Result<CreatedCampaign> {
    pqxx::work w(*conn_);
    auto r = w.exec_params(
        "INSERT INTO campaigns (name, description, source_file, source_yaml, run_count, priority) "
        "VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
        c.name, c.description, source_file, source_yaml, static_cast<int64_t>(c.runs.size()), c.priority);
    const int64_t id = r[0][0].as<int64_t>();
    // "CLASS/*": one run per enrolled board of the class (by name), in place of the pattern. Each run's
    // board class (for the queue order of named modes): its device's, or its named board's.
    const Campaign* campaign = &c;
    Campaign expanded;
    std::vector<std::string> expanded_classes;   // per expanded run: the CLASS/* class, else ""
    std::map<std::string, std::string> class_of_agent;
    for (const auto& row : w.exec("SELECT name, device_class FROM agents")) class_of_agent[row[0].c_str()] = row[1].c_str();
    auto class_of = [&](const std::string& device) {
      std::string cls = device_target_class(device);
      if (cls.empty() && class_of_agent.count(device)) cls = class_of_agent[device];
      return cls;
    };
    if (std::any_of(c.runs.begin(), c.runs.end(), [](const RunConfig& run) { return is_every_instance(run.device); })) {
      std::map<std::string, std::vector<std::string>> boards;
      expanded.dispatch_by_power_mode = c.dispatch_by_power_mode;
      for (const auto& run : c.runs) {
        if (!is_every_instance(run.device)) {
          expanded.runs.push_back(run);
          continue;
        }
        const std::string cls = device_target_class(run.device);
        auto it = boards.find(cls);
        if (it == boards.end()) {
          std::vector<std::string> names;
          for (const auto& row :
               w.exec_params(std::string(kEnrolledBoardsSql) + " SELECT name FROM enrolled WHERE device_class = $1 ORDER BY name", cls))
            names.emplace_back(row[0].c_str());
          if (names.empty())
            return invalid_argument("campaign '" + c.name + "': '" + run.device + "' matches no board: no agent of class '" +
                                    cls + "' is connected or was seen in the last 24 hours (start them, then submit)");
          it = boards.emplace(cls, std::move(names)).first;
        }
        for (const auto& name : it->second) {
          expanded.runs.push_back(run);
          expanded.runs.back().device = name;
          expanded_classes.resize(expanded.runs.size());
          expanded_classes.back() = cls;   // the pattern's class, whatever the board's name says
        }
      }
      expanded_classes.resize(expanded.runs.size());
      if (static_cast<int64_t>(expanded.runs.size()) > kMaxRunsPerCampaign)
        return invalid_argument("campaign '" + c.name + "': more than " + std::to_string(kMaxRunsPerCampaign) +
                                " runs once 'CLASS/*' is expanded");
      campaign = &expanded;
      w.exec_params("UPDATE campaigns SET run_count = $2 WHERE id = $1", id, static_cast<int64_t>(expanded.runs.size()));
    }
    w.exec("CREATE TEMP TABLE IF NOT EXISTS runs_stage (seq integer, ordinal integer, config jsonb, device text, "
           "epochs integer, min_mem_bytes bigint, storage text, unfit_classes text[]) ON COMMIT DELETE ROWS");
    {
      // Queued in dispatch order (ids follow it), each keeping its ordinal in the expansion.
      pqxx::stream_to copy(w, "runs_stage");
      int64_t seq = 0;
      std::vector<std::string> classes(campaign->runs.size());
      for (size_t i = 0; i < classes.size(); ++i)
        classes[i] = i < expanded_classes.size() && !expanded_classes[i].empty() ? expanded_classes[i]
                                                                                  : class_of(campaign->runs[i].device);
      for (size_t ordinal : dispatch_order(*campaign, classes)) {
        const RunConfig& run = campaign->runs[ordinal];
        const std::string medium = storage_medium(run.data);
        copy << std::make_tuple(seq++, static_cast<int64_t>(ordinal), bj::serialize(to_json(run)), run.device, run.epochs,
                                required_memory_bytes(run), medium.empty() ? nullptr : medium.c_str(),
                                text_array_literal(classes_without_room(run)));
      }
      copy.complete();
    }
    w.exec_params("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, min_mem_bytes, storage, unfit_classes) "
                  "SELECT $1, ordinal, config, device, epochs, min_mem_bytes, storage, unfit_classes FROM runs_stage "
                  "ORDER BY seq",
                  id);
    w.commit();
    return CreatedCampaign{id, static_cast<int64_t>(campaign->runs.size())};
  });
}

// Each run's epoch time is the mean e2e time of the epochs measured for the most specific match: same board
// class, model, dataset, batch size and power mode; else without the power mode; else without the batch
// size; else the model and dataset on any class; else the papers' calibrated board model where it covers the
// run. A class's runs are spread over its enrolled boards; a CLASS/* run runs on each of them at once; runs
// on a named board stay on it. Classes run side by side, so the campaign takes as long as the busiest.
Result<bj::object> PgStore::estimate_campaign(const Campaign& c) {
  return guarded("estimating the campaign", [&]() -> Result<bj::object> {
    pqxx::work w(*conn_);
    auto measured = w.exec(
        "SELECT a.device_class, r.config->>'model', r.config->>'dataset', r.config->>'batch_size', "
        "  concat(r.config->'power_mode'->>'name', '/', r.config->'power_mode'->>'cores', '/', "
        "         r.config->'power_mode'->>'cpu_khz', '/', r.config->'power_mode'->>'gpu_hz', '/', "
        "         r.config->'power_mode'->>'emc_hz'), sum(e.e2e_s), count(*) "
        "FROM epochs e JOIN runs r ON r.id = e.run_id JOIN agents a ON a.id = r.agent_id "
        "GROUP BY 1, 2, 3, 4, 5");
    // level 0: class|model|dataset|bs|mode, 1: class|model|dataset|bs, 2: class|model|dataset, 3: model|dataset
    auto keys_of = [](const std::string& cls, const std::string& model, const std::string& dataset,
                      const std::string& bs, const std::string& mode) {
      return std::array<std::string, 4>{cls + "|" + model + "|" + dataset + "|" + bs + "|" + mode,
                                        cls + "|" + model + "|" + dataset + "|" + bs, cls + "|" + model + "|" + dataset,
                                        model + "|" + dataset};
    };
    std::map<std::string, std::pair<double, int64_t>> sums[4];
    for (const auto& row : measured) {
      const auto keys = keys_of(row[0].c_str(), row[1].c_str(), row[2].c_str(), row[3].c_str(), row[4].c_str());
      for (int l = 0; l < 4; ++l) {
        sums[l][keys[static_cast<size_t>(l)]].first += row[5].as<double>();
        sums[l][keys[static_cast<size_t>(l)]].second += row[6].as<int64_t>();
      }
    }
    std::map<std::string, std::string> class_of_agent;
    for (const auto& row : w.exec("SELECT name, device_class FROM agents")) class_of_agent[row[0].c_str()] = row[1].c_str();
    std::map<std::string, int64_t> boards;  // enrolled boards per class
    int64_t all_boards = 0;
    for (const auto& row : w.exec(std::string(kEnrolledBoardsSql) + " SELECT device_class, count(*) FROM enrolled GROUP BY 1")) {
      boards[row[0].c_str()] = row[1].as<int64_t>();
      all_boards += row[1].as<int64_t>();
    }
    w.commit();
    struct PerTarget {
      std::string board_class;   // "" for any
      bool every_board = false;  // CLASS/*: one copy per board, in parallel
      int64_t runs = 0;
      double seconds = 0;        // training time of one copy of each run
      int64_t unmatched = 0;
    };
    std::map<std::string, PerTarget> per_target;  // a class, CLASS/*, a named board, or "any"
    int64_t matched_at[4] = {0, 0, 0, 0}, unmatched = 0, modelled = 0;
    sim::RunTimeModel run_time;
    for (const auto& run : c.runs) {
      std::string cls = device_target_class(run.device);
      const bool named = cls.empty() && run.device != "any";
      if (named) cls = class_of_agent.count(run.device) ? class_of_agent[run.device] : "";
      auto& t = per_target[named || is_every_instance(run.device) ? run.device : cls.empty() ? "any" : cls];
      t.board_class = cls;
      t.every_board = is_every_instance(run.device);
      ++t.runs;
      const std::string mode = run.power_mode_name + "/" + (run.cores > 0 ? std::to_string(run.cores) : "") + "/" +
                               (run.cpu_khz > 0 ? std::to_string(run.cpu_khz) : "") + "/" +
                               (run.gpu_hz > 0 ? std::to_string(run.gpu_hz) : "") + "/" +
                               (run.emc_hz > 0 ? std::to_string(run.emc_hz) : "");
      const auto keys = keys_of(cls, run.model, run.dataset, std::to_string(run.batch_size), mode);
      int level = cls.empty() ? 3 : 0;
      for (; level < 4; ++level) {
        auto it = sums[level].find(keys[static_cast<size_t>(level)]);
        if (it == sums[level].end() || it->second.second == 0) continue;
        t.seconds += static_cast<double>(run.epochs) * it->second.first / static_cast<double>(it->second.second);
        ++matched_at[level];
        break;
      }
      if (level == 4 && !cls.empty() && cls != "host") {
        if (auto s = run_time.run_seconds(run, cls)) {
          t.seconds += s.value();
          ++modelled;
          continue;
        }
      }
      if (level == 4) {
        ++t.unmatched;
        ++unmatched;
      }
    }
    bj::object o;
    o["campaign"] = c.name;
    bj::array targets;
    // Per class: runs for the class or for one of its named boards share its boards; CLASS/* runs occupy
    // every board at once; runs for any board spread over the whole fleet.
    std::map<std::string, double> class_shared, class_each;
    double named_max = 0, any_seconds = 0;
    int64_t total_runs = 0;
    for (const auto& [target, t] : per_target) {
      bj::object x;
      const bool is_named = class_of_agent.count(target) > 0;
      const int64_t class_boards = boards.count(t.board_class) ? boards.at(t.board_class) : 0;
      const int64_t n = target == "any" ? all_boards : is_named ? 1 : class_boards;
      const int64_t copies = t.every_board ? n : 1;
      x["device"] = target;
      x["runs"] = t.runs * copies;
      x["runs_without_measurement"] = t.unmatched * copies;
      x["run_seconds"] = t.seconds * static_cast<double>(copies);
      x["boards"] = n;
      total_runs += t.runs * copies;
      if (n > 0) x["wall_s"] = t.every_board ? t.seconds : t.seconds / static_cast<double>(n);
      else x["wall_s"] = nullptr;
      if (target == "any") any_seconds += t.seconds;
      else if (t.every_board) class_each[t.board_class] += t.seconds;
      else class_shared[t.board_class] += t.seconds;
      if (is_named) named_max = std::max(named_max, t.seconds);
      targets.push_back(std::move(x));
    }
    double wall = named_max;
    for (const auto& [cls, each] : class_each) wall = std::max(wall, each);
    for (const auto& [cls, shared] : class_shared) {
      const int64_t n = boards.count(cls) ? boards.at(cls) : 0;
      if (n > 0) wall = std::max(wall, shared / static_cast<double>(n) + (class_each.count(cls) ? class_each.at(cls) : 0.0));
    }
    if (all_boards > 0) wall += any_seconds / static_cast<double>(all_boards);
    o["runs"] = total_runs;
    o["per_device"] = std::move(targets);
    o["estimated_wall_s"] = wall;
    bj::object how;
    how["same_class_model_dataset_batch_mode"] = matched_at[0];
    how["same_class_model_dataset_batch"] = matched_at[1];
    how["same_class_model_dataset"] = matched_at[2];
    how["same_model_dataset_any_class"] = matched_at[3];
    how["papers_model"] = modelled;
    how["without_measurement"] = unmatched;
    o["runs_estimated_from"] = std::move(how);
    return o;
  });
}

Result<int64_t> PgStore::resolve_campaign(const std::string& ref) {
  return guarded("looking up the campaign", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    bool numeric = !ref.empty() && ref.find_first_not_of("0123456789") == std::string::npos && ref.size() < 18;
    pqxx::result r = numeric ? w.exec_params("SELECT id FROM campaigns WHERE id = $1", std::stoll(ref))
                             : w.exec_params("SELECT id FROM campaigns WHERE name = $1 ORDER BY id DESC LIMIT 1", ref);
    w.commit();
    if (r.empty()) return not_found("no campaign '" + ref + "'");
    return r[0][0].as<int64_t>();
  });
}

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
    "   WHERE r5.campaign_id = c.id AND r5.started_at IS NOT NULL AND ec.n > 0) "
    "FROM campaigns c LEFT JOIN runs r ON r.campaign_id = c.id ";

bj::object status_row(const pqxx::row& row) {
  bj::object o;
  o["campaign_id"] = row[0].as<int64_t>();
  o["name"] = row[1].c_str();
  o["description"] = row[2].c_str();
  o["created_at"] = row[3].c_str();
  o["runs"] = row[4].as<int64_t>();
  o["queued"] = row[5].as<int64_t>();
  o["assigned"] = row[6].as<int64_t>();
  o["running"] = row[7].as<int64_t>();
  o["done"] = row[8].as<int64_t>();
  o["failed"] = row[9].as<int64_t>();
  o["lost"] = row[10].as<int64_t>();
  o["epochs_total"] = row[11].as<int64_t>();
  o["epochs_done"] = row[12].as<int64_t>();
  o["cancelled"] = row[13].as<int64_t>();
  o["state"] = row[14].c_str();
  o["priority"] = row[15].as<int64_t>();
  const int64_t open = row[5].as<int64_t>() + row[6].as<int64_t>() + row[7].as<int64_t>();
  o["finished"] = open == 0;
  // ETA in wall time: epochs still to run x wall seconds per epoch measured so far (from the runs' start and
  // finish times, so a simulated board's time scale is accounted for) / agents busy with the campaign. A
  // paused campaign has no ETA.
  o["paused"] = o["state"] == "paused";
  if (o["state"] == "paused" && open > 0) {
    o["eta_s"] = nullptr;
  } else if (!row[20].is_null() && open > 0) {
    const double remaining_epochs = static_cast<double>(row[17].as<int64_t>() - row[19].as<int64_t>());
    const double agents = std::max<int64_t>(1, row[18].as<int64_t>());
    o["eta_s"] = remaining_epochs * row[20].as<double>() / agents;
  } else {
    o["eta_s"] = open == 0 ? bj::value(0.0) : bj::value(nullptr);
  }
  return o;
}
}  // namespace

namespace {
// Queued runs of the campaign that no enrolled agent (connected, or seen in the last 24 hours) can take, and
// why, as [{runs, reason}]: grouped by what the runs need, each group checked against the agents.
bj::array unrunnable(pqxx::work& w, int64_t campaign_id) {
  auto r = w.exec_params(
      "WITH enrolled AS (SELECT name, device_class, storage, mem_bytes FROM agents "
      "                  WHERE connected OR last_seen > now() - interval '24 hours'), "
      "g AS (SELECT device, storage, min_mem_bytes, unfit_classes, count(*) AS n FROM runs "
      "      WHERE campaign_id = $1 AND status = 'queued' GROUP BY device, storage, min_mem_bytes, unfit_classes) "
      "SELECT g.device, g.storage, g.min_mem_bytes, g.n, "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name)), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage))), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes), "
      "  EXISTS (SELECT 1 FROM enrolled a WHERE g.device IN ('any', a.device_class, a.name) "
      "          AND (g.storage IS NULL OR g.storage = ANY(a.storage)) AND a.mem_bytes >= g.min_mem_bytes "
      "          AND NOT (a.device_class = ANY(g.unfit_classes))) "
      "FROM g ORDER BY g.n DESC, g.device",
      campaign_id);
  bj::array out;
  for (const auto& row : r) {
    if (row[7].as<bool>()) continue;
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
    } else {
      reason = runs + "a board their model fits on; the enrolled boards of '" + device + "' run out of memory";
    }
    bj::object o;
    o["runs"] = n;
    o["reason"] = reason;
    out.emplace_back(std::move(o));
  }
  return out;
}

bj::object status_with_unrunnable(pqxx::work& w, const pqxx::row& row) {
  bj::object o = status_row(row);
  bj::array why = unrunnable(w, row[0].as<int64_t>());
  int64_t total = 0;
  for (const auto& u : why) total += u.as_object().at("runs").as_int64();
  o["unrunnable_runs"] = total;
  o["unrunnable"] = std::move(why);
  return o;
}
}  // namespace

Result<bj::object> PgStore::campaign_status(int64_t campaign_id) {
  return guarded("reading campaign status", [&]() -> Result<bj::object> {
    pqxx::work w(*conn_);
    auto r = w.exec_params(std::string(kStatusSql) + "WHERE c.id = $1 GROUP BY c.id", campaign_id);
    if (r.empty()) return not_found("no campaign " + std::to_string(campaign_id));
    auto o = status_with_unrunnable(w, r[0]);
    w.commit();
    return o;
  });
}

Result<bj::array> PgStore::list_campaigns() {
  return guarded("listing campaigns", [&]() -> Result<bj::array> {
    pqxx::work w(*conn_);
    auto r = w.exec(std::string(kStatusSql) + "GROUP BY c.id ORDER BY c.id");
    bj::array out;
    for (const auto& row : r) out.emplace_back(status_with_unrunnable(w, row));
    w.commit();
    return out;
  });
}

Result<bj::object> PgStore::campaign_report(int64_t campaign_id) {
  return guarded("building the report", [&]() -> Result<bj::object> {
    pqxx::work w(*conn_);
    auto c = w.exec_params("SELECT id, name, description, source_file, created_at::text FROM campaigns WHERE id = $1",
                           campaign_id);
    if (c.empty()) return not_found("no campaign " + std::to_string(campaign_id));
    bj::object campaign;
    campaign["id"] = c[0][0].as<int64_t>();
    campaign["name"] = c[0][1].c_str();
    campaign["description"] = c[0][2].c_str();
    campaign["source_file"] = c[0][3].c_str();
    campaign["created_at"] = c[0][4].c_str();

    auto runs = w.exec_params(
        "SELECT r.id, r.status, a.name, r.config::text, r.error, r.attempts, r.wall_s, r.facts::text, r.applied::text, "
        "  r.reference_state, r.storage, r.storage_device, r.page_cache_dropped, r.compute_device "
        "FROM runs r LEFT JOIN agents a ON a.id = r.agent_id WHERE r.campaign_id = $1 ORDER BY r.ordinal",
        campaign_id);
    auto epochs = w.exec_params(
        "SELECT e.run_id, e.epoch, e.e2e_s, e.stall_s, e.compute_s, e.minibatches, e.energy_j, e.mean_power_w, e.loss, "
        "  e.read_mb_s, e.read_iops, e.cache_start_frac, e.cache_end_frac, e.t_start_s, e.t_end_s, e.power_coverage, "
        "  e.cores_start, e.cores_end, e.cpu_khz_start, e.cpu_khz_end, e.gpu_hz_start, e.gpu_hz_end, e.emc_hz_start, "
        "  e.emc_hz_end, e.throttled, e.throttle_reason, "
        "  r.agent_t0_unix_s + e.t_start_s - coalesce(ag.clock_offset_s, 0), "
        "  r.agent_t0_unix_s + e.t_end_s - coalesce(ag.clock_offset_s, 0) "
        "FROM epochs e JOIN runs r ON r.id = e.run_id LEFT JOIN agents ag ON ag.id = r.agent_id "
        "WHERE r.campaign_id = $1 ORDER BY e.run_id, e.epoch",
        campaign_id);
    w.commit();
    std::map<int64_t, bj::array> by_run;
    bool any_energy = false;
    for (const auto& e : epochs) {
      bj::object o;
      o["epoch"] = e[1].as<int64_t>();
      o["e2e_s"] = e[2].as<double>();
      o["stall_s"] = e[3].as<double>();
      o["compute_s"] = e[4].as<double>();
      o["minibatches"] = e[5].as<int64_t>();
      o["energy_j"] = field_number(e[6]);
      o["mean_power_w"] = field_number(e[7]);
      o["loss"] = field_number(e[8]);   // NULL when the model diverged
      o["read_mb_s"] = field_number(e[9]);
      o["read_iops"] = field_number(e[10]);
      o["cache_start_frac"] = field_number(e[11]);
      o["cache_end_frac"] = field_number(e[12]);
      o["t_start_s"] = field_number(e[13]);
      o["t_end_s"] = field_number(e[14]);
      o["power_coverage"] = field_number(e[15]);
      auto clocks = [&](int cores, int cpu, int gpu, int emc) -> bj::value {
        if (e[cores].is_null() && e[cpu].is_null()) return nullptr;
        bj::object c;
        c["cores_online"] = field_number(e[cores]);
        c["cpu_khz"] = field_number(e[cpu]);
        c["gpu_hz"] = field_number(e[gpu]);
        c["emc_hz"] = field_number(e[emc]);
        return c;
      };
      o["clocks_start"] = clocks(16, 18, 20, 22);
      o["clocks_end"] = clocks(17, 19, 21, 23);
      o["throttled"] = e[24].as<bool>();
      if (!e[25].is_null() && e[25].size() > 0) o["throttle_reason"] = e[25].c_str();
      o["start_unix_s"] = field_number(e[26]);   // the epoch's window on the controller's clock
      o["end_unix_s"] = field_number(e[27]);
      any_energy |= !e[6].is_null();
      by_run[e[0].as<int64_t>()].emplace_back(std::move(o));
    }
    bj::array out_runs;
    int64_t simulated_runs = 0;
    for (const auto& row : runs) {
      bj::object o;
      const int64_t run_id = row[0].as<int64_t>();
      o["run_id"] = run_id;
      o["status"] = row[1].c_str();
      o["agent"] = field_text(row[2]);
      bj::value cfg = parse_json_field(row[3]);
      bj::object config;
      if (cfg.is_object()) {
        for (const char* k : {"model", "dataset", "data", "batch_size", "workers", "prefetch", "epochs", "threads",
                              "seed", "repetition", "device", "power_mode", "pin_clocks", "fan_max", "drop_caches",
                              "sample_hz", "max_minibatches", "accelerator", "timing"})
          if (auto it = cfg.get_object().find(k); it != cfg.get_object().end()) config[k] = it->value();
      }
      o["config"] = std::move(config);
      o["error"] = row[4].c_str();
      o["attempts"] = row[5].as<int64_t>();
      o["wall_s"] = field_number(row[6]);
      o["facts"] = parse_json_field(row[7]);
      // The state the run executed in, as its agent applied and read it back (null until it started).
      o["applied"] = parse_json_field(row[8]);
      o["reference_state"] = row[9].is_null() ? bj::value(nullptr) : bj::value(row[9].as<bool>());
      o["storage_medium"] = field_text(row[10]);
      o["storage_device"] = field_text(row[11]);
      o["page_cache_dropped"] = row[12].is_null() ? bj::value(nullptr) : bj::value(row[12].as<bool>());
      o["compute_device"] = field_text(row[13]);   // what it trained on: "cpu", "cuda:0 (NAME)", "simulated"
      // Results from simulated boards are marked in every report.
      const bool simulated = o["facts"].is_object() && o["facts"].as_object().contains("backend") &&
                             o["facts"].as_object().at("backend") == "sim";
      o["simulated"] = simulated;
      simulated_runs += simulated ? 1 : 0;
      auto it = by_run.find(run_id);
      o["epochs"] = it == by_run.end() ? bj::array() : std::move(it->second);
      out_runs.emplace_back(std::move(o));
    }
    bj::object report;
    report["campaign"] = std::move(campaign);
    report["power_sensor"] = any_energy;
    report["simulated_runs"] = simulated_runs;
    report["runs"] = std::move(out_runs);
    return report;
  });
}

Result<bj::array> PgStore::list_agents() {
  return guarded("listing agents", [&]() -> Result<bj::array> {
    pqxx::work w(*conn_);
    auto r = w.exec(
        "SELECT a.id, a.name, a.hostname, a.cpus, a.mem_bytes, a.backend, a.device_class, a.kernel, a.torch_version, "
        "a.compiler, a.git_sha, a.connected, a.last_seen::text, "
        "(SELECT min(id) FROM runs WHERE agent_id = a.id AND status IN ('assigned', 'running')), "
        "a.accelerator, array_to_json(a.not_ready)::text "
        "FROM agents a ORDER BY a.id");
    w.commit();
    bj::array out;
    for (const auto& row : r) {
      bj::object o;
      o["agent_id"] = row[0].as<int64_t>();
      o["name"] = row[1].c_str();
      o["hostname"] = row[2].c_str();
      o["cpus"] = row[3].as<int64_t>();
      o["mem_bytes"] = row[4].as<int64_t>();
      o["backend"] = row[5].c_str();
      o["device_class"] = row[6].c_str();
      o["kernel"] = row[7].c_str();
      o["torch_version"] = row[8].c_str();
      o["compiler"] = row[9].c_str();
      o["git_sha"] = row[10].c_str();
      o["connected"] = row[11].as<bool>();
      o["last_seen"] = row[12].c_str();
      o["current_run"] = row[13].is_null() ? bj::value(nullptr) : bj::value(row[13].as<int64_t>());
      o["accelerator"] = row[14].c_str();
      o["not_ready"] = parse_json_field(row[15]);
      o["ready"] = o["not_ready"].is_array() && o["not_ready"].as_array().empty();
      out.emplace_back(std::move(o));
    }
    return out;
  });
}

}  // namespace jetsweep::controller
