// PgStore: the dispatch side (claims, requeues, cancels, campaign states), on the dispatch connection.
#include <pqxx/pqxx>

#include "common/json_parse.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

Result<int64_t> PgStore::requeue_agent_runs(int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                            const std::string& why) {
  return guarded("requeueing agent runs", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    const int64_t n = requeue_agent_runs_in(w, agent_id, keep_runs, why);
    w.commit();
    return n;
  });
}

int64_t PgStore::requeue_agent_runs_in(pqxx::work& w, int64_t agent_id, const std::vector<int64_t>& keep_runs,
                                       const std::string& why) {
  auto r = w.exec_params("UPDATE runs SET " + pg::requeue_or_lose(max_attempts_, "$3::text") +
                             " WHERE runs.agent_id = $1 AND runs.status IN ('assigned', 'running') "
                             "AND NOT (runs.id = ANY($2::bigint[]))",
                         agent_id, pg::array_literal(keep_runs), why);
  return static_cast<int64_t>(r.affected_rows());
}

Result<int64_t> PgStore::requeue_orphaned_runs(double lease_s) {
  return guarded("requeueing orphaned runs", [&]() -> Result<int64_t> {
    pqxx::work w(*conn_);
    auto r = w.exec_params(
        "UPDATE runs SET " +
            pg::requeue_or_lose(max_attempts_,
                                "(CASE WHEN a.away_until IS NULL THEN 'agent ' || a.name || ' disconnected for more than ' "
                                "|| $1 || ' s' ELSE 'agent ' || a.name || ' rebooted its board and did not come back by ' "
                                "|| to_char(a.away_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' END)") +
            " FROM agents a WHERE runs.agent_id = a.id AND runs.status IN ('assigned', 'running') "
            "AND NOT a.connected AND a.last_seen < now() - make_interval(secs => $1::double precision) "
            "AND (a.away_until IS NULL OR a.away_until < now())",
        lease_s);
    w.commit();
    return static_cast<int64_t>(r.affected_rows());
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

Result<api::RunCancelled> PgStore::cancel_run(int64_t run_id) {
  return guarded("cancelling a run", [&]() -> Result<api::RunCancelled> {
    pqxx::work w(*conn_);
    w.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now(), error = 'cancelled by request' "
                  "WHERE id = $1 AND status = 'queued'",
                  run_id);
    w.exec_params("UPDATE runs SET cancel_requested = true WHERE id = $1 AND status IN ('assigned', 'running')", run_id);
    auto r = w.exec_params("SELECT r.id, r.campaign_id, r.status, r.cancel_requested, a.name AS agent, r.error FROM runs r "
                           "LEFT JOIN agents a ON a.id = r.agent_id WHERE r.id = $1",
                           run_id);
    w.commit();
    if (r.empty()) return not_found("no run " + std::to_string(run_id));
    const pg::Row row(r[0]);
    api::RunCancelled o;
    o.run_id = row.integer("id");
    o.campaign_id = row.integer("campaign_id");
    o.status = row.text("status");
    o.stopping = row.boolean("cancel_requested") && (o.status == "assigned" || o.status == "running");
    o.agent = row.opt_text("agent");
    o.error = row.text("error");
    return o;
  });
}

Result<std::vector<RunOnAgent>> PgStore::runs_to_stop() {
  return guarded("listing runs to stop", [&]() -> Result<std::vector<RunOnAgent>> {
    pqxx::nontransaction n(*conn_);
    auto r = n.exec("SELECT id, agent_id FROM runs WHERE cancel_requested AND status IN ('assigned', 'running') "
                    "AND agent_id IS NOT NULL");
    std::vector<RunOnAgent> out;
    for (const auto& row : r) out.push_back({row["id"].as<int64_t>(), row["agent_id"].as<int64_t>()});
    return out;
  });
}

namespace {

// An Assignment of run `run_id` from its stored config (JSON text).
Result<std::optional<Assignment>> assignment(int64_t run_id, const char* config_text) {
  bj::error_code ec;
  auto cfg_json = json::parse_exact(config_text, ec);
  if (ec || !cfg_json.is_object()) return db_error("run " + std::to_string(run_id) + ": stored config is not a JSON object");
  auto cfg = run_config_from_json(cfg_json.get_object(), "run " + std::to_string(run_id) + " config");
  if (!cfg) return cfg.status();
  return std::optional<Assignment>(Assignment{run_id, std::move(cfg).value()});
}

}  // namespace

Result<std::optional<Assignment>> PgStore::claim_run(int64_t agent_id, const std::string& device_class,
                                                     const std::string& claim_key) {
  return guarded("claiming a run", [&]() -> Result<std::optional<Assignment>> {
    pqxx::work w(*conn_);
    // A retry of a claim that committed: its run, as it was claimed.
    if (!claim_key.empty()) {
      auto again = w.exec_params("SELECT id, config::text AS config FROM runs WHERE agent_id = $1 AND claim_key = $2 AND "
                                 "status = 'assigned'", agent_id, claim_key);
      if (!again.empty()) {
        w.commit();
        return assignment(again[0]["id"].as<int64_t>(), again[0]["config"].c_str());
      }
    }
    // The agent, and whether another agent of its board is busy (one run per physical board).
    auto me = w.exec_params(
        "SELECT name, mem_bytes, storage::text AS storage, live_modes::text AS live_modes, may_reboot, "
        "  board_id <> '' AND EXISTS (SELECT 1 FROM runs busy JOIN agents other "
        "  ON other.id = busy.agent_id WHERE other.id <> $1 AND other.board_id = agents.board_id "
        "  AND busy.status IN ('assigned', 'running')) AS board_busy FROM agents WHERE id = $1",
        agent_id);
    if (me.empty() || me[0]["board_busy"].as<bool>()) {
      w.commit();
      return std::optional<Assignment>();
    }
    const pg::Row agent(me[0]);
    const std::string name = agent.text("name");
    const int64_t mem_bytes = agent.integer("mem_bytes");
    const std::string storage = agent.text("storage");
    const std::string live_modes = agent.text("live_modes");
    // Fewest reboots: an agent that named the modes its board applies as booted gets those runs (by their named
    // mode, else their base_mode; runs with neither run on any gating) first within the campaign; the others
    // need a reboot, so only an agent that may reboot takes them (they wait for one; status says why). Without
    // live modes, by id alone.
    const bool by_gating = live_modes != "{}";
    const bool live_only = by_gating && !agent.boolean("may_reboot");
    const std::string live_expr = "(coalesce(config->'power_mode'->>'name', config->>'base_mode') IS NULL OR "
                                  "coalesce(config->'power_mode'->>'name', config->>'base_mode') = ANY($5::text[]))";
    // In every campaign with queued runs, the lowest-id queued run the agent can take, looked up per device
    // value it matches (index runs_queued_by_campaign: three short range scans); the first by campaign
    // priority, then campaign age. One statement, however many campaigns.
    const std::string pick_one =
        std::string("(SELECT id, ") +
        (by_gating ? live_expr : "true") +
        " AS live FROM runs WHERE campaign_id = c.id AND status = 'queued' AND device = $DEVICE AND "
        "min_mem_bytes <= $2 AND (storage IS NULL OR storage = ANY($3::text[])) AND NOT ($4 = ANY(unfit_classes)) " +
        (live_only ? "AND " + live_expr + " " : "") +
        "ORDER BY " + std::string(by_gating ? "live DESC, " : "") + "id LIMIT 1)";
    auto with_device = [&](const std::string& param) {
      std::string q = pick_one;
      q.replace(q.find("$DEVICE"), 7, param);
      return q;
    };
    const std::string pick =
        "SELECT pick.id FROM (SELECT c.id, c.priority FROM campaigns c WHERE c.state = 'active' AND EXISTS "
        "(SELECT 1 FROM runs q WHERE q.campaign_id = c.id AND q.status = 'queued')) c "
        "CROSS JOIN LATERAL (SELECT id FROM (" + with_device("'any'") + " UNION ALL " + with_device("$4") +
        " UNION ALL " + with_device("$1") + ") candidates ORDER BY " + (by_gating ? "live DESC, " : "") + "id LIMIT 1) pick "
        "WHERE pick.id IS NOT NULL ORDER BY c.priority DESC, c.id LIMIT 1";
    pqxx::result r;
    // The status guard makes the update safe against any other writer (claims themselves all run on the
    // one dispatch connection, so they never race each other); should it miss, look again.
    for (int attempt = 0; attempt < 3 && r.empty(); ++attempt) {
      auto p = by_gating ? w.exec_params(pick, name, mem_bytes, storage, device_class, live_modes)
                         : w.exec_params(pick, name, mem_bytes, storage, device_class);
      if (p.empty()) break;
      r = w.exec_params(
          "UPDATE runs SET status = 'assigned', agent_id = $1, assigned_at = now(), attempts = attempts + 1, "
          "  claim_key = nullif($3, ''), "
          "  started_at = NULL, finished_at = NULL, wall_s = NULL, agent_t0_unix_s = NULL, clock_offset_s = NULL, applied = NULL, "
          "  reference_state = NULL, storage_device = NULL, page_cache_dropped = NULL, compute_device = NULL, "
          "  workload = NULL, agent_boot_id = NULL, agent_t0_boot_s = NULL, "
          "  facts = (SELECT to_jsonb(a) - 'id' - 'connected' - 'first_seen' - 'last_seen' - 'away_until' - 'tables' "
          "           - 'boot_id' - 'boot_offset_s' FROM agents a WHERE a.id = $1) "
          "WHERE id = $2 AND status = 'queued' RETURNING id, config::text AS config, campaign_id",
          agent_id, p[0]["id"].as<int64_t>(), claim_key);
    }
    if (r.empty()) {
      w.commit();
      return std::optional<Assignment>();
    }
    const pg::Row claimed(r[0]);
    const int64_t run_id = claimed.integer("id");
    // A re-executed run starts clean: drop rows of an earlier, interrupted attempt.
    const int64_t campaign_id = claimed.integer("campaign_id");
    w.exec_params("DELETE FROM minibatch_chunks WHERE campaign_id = $1 AND run_id = $2", campaign_id, run_id);
    w.exec_params("DELETE FROM epochs WHERE run_id = $1", run_id);
    w.exec_params("DELETE FROM sample_chunks WHERE campaign_id = $1 AND run_id = $2", campaign_id, run_id);
    w.commit();
    return assignment(run_id, claimed.text("config").c_str());
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

}  // namespace jetsweep::controller
