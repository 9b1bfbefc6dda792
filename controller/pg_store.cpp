#include "controller/pg_store.hpp"

#include <map>

#include "common/json_parse.hpp"
#include "common/log.hpp"
#include "controller/credentials.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace pg {

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

const char* const kEnrolledBoardsSql =
    "WITH enrolled AS (SELECT DISTINCT ON (CASE WHEN board_id = '' THEN name ELSE board_id END) name, device_class "
    "  FROM agents WHERE connected OR last_seen > now() - interval '24 hours' "
    "  ORDER BY CASE WHEN board_id = '' THEN name ELSE board_id END, connected DESC, last_seen DESC, name)";

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

std::string array_literal(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

std::optional<double> opt_number(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

std::optional<int64_t> opt_integer(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<int64_t>();
}

std::optional<std::string> opt_text(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return std::string(f.c_str());
}

std::optional<bool> opt_bool(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<bool>();
}

std::optional<bj::object> opt_object(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  bj::error_code ec;
  auto v = json::parse_exact(f.c_str(), ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.get_object());
}

std::optional<double> Row::opt_number(const char* column) const { return pg::opt_number(row_[column]); }
std::optional<int64_t> Row::opt_integer(const char* column) const { return pg::opt_integer(row_[column]); }
std::optional<std::string> Row::opt_text(const char* column) const { return pg::opt_text(row_[column]); }
std::optional<bool> Row::opt_bool(const char* column) const { return pg::opt_bool(row_[column]); }
std::optional<bj::object> Row::opt_object(const char* column) const { return pg::opt_object(row_[column]); }
std::vector<std::string_view> Row::columns() const {
  std::vector<std::string_view> out;
  out.reserve(row_.size());
  for (const auto& f : row_) out.emplace_back(f.name());
  return out;
}

std::vector<std::string> json_strings(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  bj::error_code ec;
  auto v = json::parse_exact(f.c_str(), ec);
  if (ec || !v.is_array()) return out;
  for (const auto& e : v.get_array())
    if (e.is_string()) out.emplace_back(e.get_string());
  return out;
}

std::map<std::string, std::string> agent_classes(pqxx::work& w) {
  std::map<std::string, std::string> out;
  for (const auto& row : w.exec("SELECT name, device_class FROM agents")) out[row["name"].c_str()] = row["device_class"].c_str();
  return out;
}

}  // namespace pg

PgStore::PgStore(std::string dsn, int max_attempts) : dsn_(std::move(dsn)), max_attempts_(max_attempts) {}
PgStore::~PgStore() = default;

bool PgStore::connected() const { return conn_ && conn_->is_open(); }

Status PgStore::connect() {
  drop_connection_ = false;
  try {
    conn_ = std::make_unique<pqxx::connection>(dsn_);
    pg::prepare_ingest_statements(*conn_);
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


bool transient_sqlstate(const std::string& sqlstate) {
  return sqlstate.rfind("57", 0) == 0 || sqlstate.rfind("08", 0) == 0;
}

bool resource_sqlstate(const std::string& sqlstate) {
  return sqlstate == "53100" || sqlstate == "53200" || sqlstate == "53300" || sqlstate == "58030";
}

Status PgStore::sql_failure(const char* what, const pqxx::sql_error& e) {
  const std::string state = e.sqlstate();
  if (transient_sqlstate(state) || (ingesting_ && resource_sqlstate(state))) {
    drop_connection_ = true;   // by guarded, after the transaction that may still refer to it
    return unavailable(std::string(what) + ": " + e.what() + " [sqlstate " + state + "]");
  }
  return db_error(std::string(what) + ": " + e.what() + " [sqlstate " + state + "]");
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
    // A database migrated by a newer controller is refused: this one would read tables it does not know the
    // meaning of (docs/OPERATIONS.md, "Upgrading"). Downgrades go through a backup taken before the upgrade.
    const int known = count > 0 ? all[count - 1].version : 0;
    auto newer = w.exec_params("SELECT version, name FROM schema_migrations WHERE version > $1 ORDER BY version", known);
    if (!newer.empty())
      return Status(Code::kDbError,
                    "the database has migration " + newer[0]["name"].as<std::string>() + " (version " +
                        newer[0]["version"].as<std::string>() + "), newer than this controller knows (up to version " +
                        std::to_string(known) + "): run the newer controller, or restore the backup taken before "
                        "upgrading (docs/OPERATIONS.md)");
    bool migrated = false;
    for (size_t i = 0; i < count; ++i) {
      auto r = w.exec_params("SELECT 1 FROM schema_migrations WHERE version = $1", all[i].version);
      if (!r.empty()) continue;
      JS_LOG_INFO << "applying migration " << all[i].name;
      w.exec(all[i].sql);
      w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", all[i].version, all[i].name);
      migrated = true;
    }
    // The analysis views (sql/views.sql), re-created in the same transaction when their definition changed or a
    // migration ran; otherwise left alone (re-creating them takes locks that would wait on a running analysis).
    w.exec("CREATE TABLE IF NOT EXISTS schema_views (name text PRIMARY KEY, definition text NOT NULL, "
           "applied_at timestamptz NOT NULL DEFAULT now())");
    const std::string views = analysis_views_sql();
    auto applied = w.exec("SELECT definition FROM schema_views WHERE name = 'analysis'");
    if (migrated || applied.empty() || applied[0][0].as<std::string>() != views) {
      JS_LOG_INFO << "applying the analysis views (sql/views.sql)";
      w.exec(views);
      w.exec_params("INSERT INTO schema_views (name, definition) VALUES ('analysis', $1) ON CONFLICT (name) DO UPDATE "
                    "SET definition = EXCLUDED.definition, applied_at = now()",
                    views);
    }
    w.commit();
    return Status::ok();
  });
}

Status PgStore::reset_connections() {
  return guarded("resetting agent connections", [&]() -> Status {
    pqxx::work w(*conn_);
    w.exec("UPDATE agents SET connected = false, last_seen = greatest(last_seen, now()) WHERE connected OR id IN "
           "(SELECT agent_id FROM runs WHERE status IN ('assigned', 'running') AND agent_id IS NOT NULL)");
    w.commit();
    return Status::ok();
  });
}

Result<AgentRegistration> PgStore::register_agent(const proto::Register& reg, const AgentProof& proof) {
  return guarded("registering agent", [&]() -> Result<AgentRegistration> {
    pqxx::work w(*conn_);
    JS_ASSIGN_OR_RETURN(AgentRegistration out, register_in(w, reg, proof));
    w.commit();
    return out;
  });
}

Result<AgentRegistration> PgStore::admit_agent(const proto::Register& reg, const AgentProof& proof, const std::string& why) {
  return guarded("registering agent", [&]() -> Result<AgentRegistration> {
    pqxx::work w(*conn_);
    JS_ASSIGN_OR_RETURN(AgentRegistration out, register_in(w, reg, proof));
    std::vector<int64_t> keep = reg.journal_runs;
    if (reg.current_run) keep.push_back(*reg.current_run);
    out.requeued = requeue_agent_runs_in(w, out.agent_id, keep, why);
    w.commit();
    return out;
  });
}

Result<AgentRegistration> PgStore::register_in(pqxx::work& w, const proto::Register& reg, const AgentProof& proof) {
  // The name's credential, locked for this transaction (registrations of one name are serialised).
  auto held = w.exec_params(
      "SELECT c.credential_sha256 FROM agents a JOIN agent_credentials c ON c.agent_id = a.id WHERE a.name = $1 "
      "FOR UPDATE OF c",
      reg.name);
  // This registration's own credential, enrolled by an attempt whose answer was lost: accepted, sent again.
  const bool own_enrollment = !held.empty() && held[0][0].c_str() == proof.issue_sha256;
  if (!held.empty() && !own_enrollment && held[0][0].c_str() != proof.presented_sha256.value_or(""))
    return permission_denied(credential_refusal(reg.name, proof.presented_sha256.has_value()));
  if (held.empty() && !proof.may_enroll) return permission_denied(enrollment_refusal(reg.name));
  const auto& f = reg.facts;
  auto r = w.exec_params(
      "INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, compiler, "
      "git_sha, storage, board_id, accelerator, not_ready, live_modes, may_reboot, tables, connected, last_seen) VALUES ("
      "$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11::text[],$12,$13,$14::text[],$15::text[],$16,$17::jsonb,true,now()) "
      "ON CONFLICT (name) DO UPDATE SET hostname = EXCLUDED.hostname, cpus = EXCLUDED.cpus, "
      "mem_bytes = EXCLUDED.mem_bytes, backend = EXCLUDED.backend, device_class = EXCLUDED.device_class, "
      "kernel = EXCLUDED.kernel, torch_version = EXCLUDED.torch_version, compiler = EXCLUDED.compiler, "
      "git_sha = EXCLUDED.git_sha, storage = EXCLUDED.storage, board_id = EXCLUDED.board_id, "
      "accelerator = EXCLUDED.accelerator, not_ready = EXCLUDED.not_ready, live_modes = EXCLUDED.live_modes, "
      "may_reboot = EXCLUDED.may_reboot, tables = EXCLUDED.tables, connected = true, away_until = NULL, last_seen = now() RETURNING id",
      reg.name, f.hostname, f.cpus, f.mem_bytes, f.backend, f.device_class, f.kernel, f.torch_version, f.compiler,
      f.git_sha, pg::text_array_literal(f.storage), f.board_id, f.accelerator, pg::text_array_literal(f.not_ready),
      pg::text_array_literal(f.live_modes), f.may_reboot,
      f.tables ? std::optional<std::string>(bj::serialize(to_json(*f.tables))) : std::nullopt);
  AgentRegistration out;
  out.agent_id = r[0][0].as<int64_t>();
  if (held.empty()) {
    w.exec_params("INSERT INTO agent_credentials (agent_id, credential_sha256) VALUES ($1, $2)", out.agent_id,
                  proof.issue_sha256);
    out.enrolled = true;
  }
  out.enrolled = out.enrolled || own_enrollment;
  return out;
}

Result<bool> PgStore::revoke_agent_credential(const std::string& name) {
  return guarded("revoking an agent credential", [&]() -> Result<bool> {
    pqxx::work w(*conn_);
    auto agent = w.exec_params("SELECT id FROM agents WHERE name = $1", name);
    if (agent.empty()) return not_found("no agent named '" + name + "'");
    auto r = w.exec_params("DELETE FROM agent_credentials WHERE agent_id = $1", agent[0][0].as<int64_t>());
    w.commit();
    return r.affected_rows() > 0;
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


namespace {

// Keeps `boot`'s offset as the agent's row for that boot (sql/031): replacing one already there when `replace`. A boot
// seen for the first time places again every run the agent stamped in it (read before it, so by the wall clock).
void keep_boot_offset(pqxx::work& w, int64_t agent_id, const BootClockOffset& boot, bool replace) {
  const bool first = !w.exec_params("INSERT INTO agent_boot_offsets (agent_id, boot_id, offset_s) VALUES ($1, $2, $3) "
                                    "ON CONFLICT (agent_id, boot_id) DO NOTHING RETURNING 1",
                                    agent_id, boot.boot_id, boot.offset_s)
                          .empty();
  if (first) {
    w.exec_params("UPDATE runs SET clock_offset_s = agent_t0_unix_s - (agent_t0_boot_s - $3) "
                  "WHERE agent_id = $1 AND agent_boot_id = $2 AND agent_t0_boot_s IS NOT NULL AND agent_t0_unix_s IS NOT NULL",
                  agent_id, boot.boot_id, boot.offset_s);
  } else if (replace) {
    w.exec_params("UPDATE agent_boot_offsets SET offset_s = $3 WHERE agent_id = $1 AND boot_id = $2", agent_id,
                  boot.boot_id, boot.offset_s);
  }
}

}  // namespace

Status PgStore::record_boot_offset(int64_t agent_id, const BootClockOffset& boot) {
  return guarded("recording a boot clock offset", [&]() -> Status {
    pqxx::work w(*conn_);
    if (!w.exec_params("SELECT 1 FROM agents WHERE id = $1", agent_id).empty()) keep_boot_offset(w, agent_id, boot, false);
    w.commit();
    return Status::ok();
  });
}

Status PgStore::record_clock(int64_t agent_id, double offset_s, double rtt_s, const std::optional<BootClockOffset>& boot) {
  return guarded("recording the clock offset", [&]() -> Status {
    pqxx::work w(*conn_);
    const std::optional<std::string> boot_id = boot ? std::optional<std::string>(boot->boot_id) : std::nullopt;
    const std::optional<double> boot_offset = boot ? std::optional<double>(boot->offset_s) : std::nullopt;
    // Store::record_clock's rule (clock_stepped in store.hpp), in SQL.
    const auto kept = w.exec_params(
        "UPDATE agents SET clock_offset_s = $2, clock_rtt_s = $3, clock_measured_at = now(), boot_id = $5, "
        "  boot_offset_s = $6 "
        "WHERE id = $1 AND (clock_rtt_s IS NULL OR clock_measured_at IS NULL OR clock_offset_s IS NULL "
        "  OR $3 <= clock_rtt_s OR clock_measured_at < now() - interval '10 minutes' "
        "  OR abs($2 - clock_offset_s) > ($3 + clock_rtt_s) / 2 + $4) RETURNING id",
        agent_id, offset_s, rtt_s, controller::kClockStepMarginS, boot_id, boot_offset);
    // The board rebooted: the new boot's offset is kept with the wall clock's kept estimate.
    const bool rebooted =
        kept.empty() && boot_id &&
        !w.exec_params("UPDATE agents SET boot_id = $2, boot_offset_s = $3 WHERE id = $1 AND boot_id IS DISTINCT FROM $2 "
                       "RETURNING 1",
                       agent_id, boot_id, boot_offset)
             .empty();
    // The kept boot's offset is also that boot's (sql/031).
    if (boot && (!kept.empty() || rebooted)) keep_boot_offset(w, agent_id, *boot, true);
    if (!kept.empty()) {
      // The offset of the agent's started runs that have none yet (started before any estimate): by the boot clock
      // for a run of a boot with a known offset, else the wall clock's.
      w.exec_params("UPDATE runs r SET clock_offset_s = coalesce((SELECT r.agent_t0_unix_s - (r.agent_t0_boot_s - "
                    "  b.offset_s) FROM agent_boot_offsets b WHERE b.agent_id = r.agent_id AND b.boot_id = r.agent_boot_id), $2) "
                    "WHERE r.agent_id = $1 AND r.agent_t0_unix_s IS NOT NULL AND r.clock_offset_s IS NULL",
                    agent_id, offset_s);
    }
    w.commit();
    return Status::ok();
  });
}

Result<std::vector<api::AgentInfo>> PgStore::list_agents() {
  return guarded("listing agents", [&]() -> Result<std::vector<api::AgentInfo>> {
    pqxx::work w(*conn_);
    auto r = w.exec(
        "SELECT a.id AS agent_id, a.name, a.hostname, a.cpus, a.mem_bytes, a.backend, a.device_class, a.kernel, a.torch_version, "
        "a.compiler, a.git_sha, a.connected, a.last_seen::text AS last_seen, "
        "(SELECT min(id) FROM runs WHERE agent_id = a.id AND status IN ('assigned', 'running')) AS current_run, "
        "a.accelerator, array_to_json(a.not_ready)::text AS not_ready, "
        "CASE WHEN NOT a.connected AND a.away_until > now() THEN a.away_until::text END AS rebooting_until "
        "FROM agents a ORDER BY a.id");
    w.commit();
    return pg::read_rows<api::AgentInfo>(r);
  });
}

}  // namespace jetsweep::controller
