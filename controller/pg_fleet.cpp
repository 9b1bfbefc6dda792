// PgStore: the fleet view's query (GET /api/fleet): the board state each agent's current or last run applied.
#include <pqxx/pqxx>

#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {

Result<std::vector<AgentApplied>> PgStore::agents_applied() {
  return guarded("listing the agents' applied board states", [&]() -> Result<std::vector<AgentApplied>> {
    pqxx::work w(*conn_);
    // Per agent, its executing run first, then the one started last (runs requeued since keep their agent_id
    // but lose applied: pg_dispatch clears it when the run is claimed again).
    auto r = w.exec(
        "SELECT DISTINCT ON (agent_id) agent_id, id AS run_id, applied::text AS applied FROM runs "
        "WHERE agent_id IS NOT NULL AND applied IS NOT NULL "
        "ORDER BY agent_id, (status IN ('assigned', 'running')) DESC, started_at DESC NULLS LAST, id DESC");
    w.commit();
    std::vector<AgentApplied> out;
    for (const auto& latest : r) {
      const pg::Row row(latest);
      auto applied = row.opt_object("applied");
      if (!applied) continue;
      out.push_back(AgentApplied{row.integer("agent_id"), row.integer("run_id"), std::move(*applied)});
    }
    return out;
  });
}

}  // namespace jetsweep::controller
