// PgStore: adaptive-profiling plans (sql/026; issue 33): their creation with the campaign, the plans due for a
// round with their runs' figures, a round's runs queued, a plan ended, and their status.
#include <pqxx/pqxx>

#include <map>

#include "common/board_classes.hpp"
#include "common/json_parse.hpp"
#include "controller/pg_store.hpp"
#include "controller/pg_util.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {

Result<AdaptivePlanSpec> spec_of(const pqxx::field& f, int64_t plan_id) {
  boost::system::error_code ec;
  const bj::value v = json::parse_exact(f.c_str(), ec);
  if (ec) return Status(Code::kInternal, "adaptive plan " + std::to_string(plan_id) + ": its stored spec is not JSON");
  return adaptive_plan_from_json(v, "adaptive plan " + std::to_string(plan_id));
}

}  // namespace

void pg_insert_adaptive_plans(pqxx::work& w, int64_t campaign_id, const Campaign& c) {
  for (size_t i = 0; i < c.adaptive_plans.size(); ++i) {
    const AdaptivePlanSpec& p = c.adaptive_plans[i];
    w.exec_params("INSERT INTO adaptive_plans (campaign_id, plan_index, device_class, workload, spec) "
                  "VALUES ($1, $2, $3, $4, $5::jsonb)",
                  campaign_id, static_cast<int64_t>(i), p.base.device, p.workload(), bj::serialize(to_json(p)));
  }
}

Result<std::vector<api::AdaptivePlanStatus>> pg_adaptive_plan_statuses(pqxx::work& w, int64_t campaign_id,
                                                                       bool with_fit) {
  std::vector<api::AdaptivePlanStatus> out;
  for (const auto& row : w.exec_params(
           "SELECT p.id, p.state, p.rounds, p.spec::text AS spec, coalesce(p.error, '') AS error, p.fit::text AS fit, "
           "  (SELECT count(*) FROM runs r WHERE r.adaptive_plan_id = p.id AND r.status = 'done') AS profiled "
           "FROM adaptive_plans p WHERE p.campaign_id = $1 ORDER BY p.plan_index",
           campaign_id)) {
    const int64_t id = row["id"].as<int64_t>();
    JS_ASSIGN_OR_RETURN(AdaptivePlanSpec spec, spec_of(row["spec"], id));
    out.push_back(adaptive_plan_status(id, row["state"].c_str(), row["rounds"].as<int64_t>(), spec,
                                       row["profiled"].as<int64_t>(), row["error"].c_str(), pg::opt_object(row["fit"]),
                                       with_fit));
    for (const auto& r : w.exec_params("SELECT round, runs, fit->'summary' AS summary FROM adaptive_rounds "
                                       "WHERE plan_id = $1 ORDER BY round",
                                       id)) {
      const std::optional<bj::object> summary = pg::opt_object(r["summary"]);
      const bj::object fit = summary ? bj::object{{"summary", *summary}} : bj::object{};
      out.back().history.push_back(adaptive_round_status(r["round"].as<int64_t>(), r["runs"].as<int64_t>(), &fit));
    }
  }
  return out;
}

Result<std::vector<DuePlan>> PgStore::adaptive_plans_due() {
  return guarded("reading the adaptive plans due", [&]() -> Result<std::vector<DuePlan>> {
    pqxx::read_transaction w(*conn_);
    std::vector<DuePlan> out;
    std::map<int64_t, size_t> index;
    for (const auto& row : w.exec(
             "SELECT p.id, p.campaign_id, p.rounds, p.spec::text AS spec, p.fit::text AS fit FROM adaptive_plans p "
             "JOIN campaigns c ON c.id = p.campaign_id WHERE p.state = 'profiling' AND c.state = 'active' "
             "AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.adaptive_plan_id = p.id "
             "                AND r.status IN ('queued', 'assigned', 'running')) ORDER BY p.id")) {
      DuePlan d;
      d.plan_id = row["id"].as<int64_t>();
      d.campaign_id = row["campaign_id"].as<int64_t>();
      d.rounds = row["rounds"].as<int64_t>();
      JS_ASSIGN_OR_RETURN(d.spec, spec_of(row["spec"], d.plan_id));
      d.fit = pg::opt_object(row["fit"]);
      index[d.plan_id] = out.size();
      out.push_back(std::move(d));
    }
    if (out.empty()) return out;
    std::string ids = "{";
    for (const auto& d : out) ids += (ids.size() > 1 ? "," : "") + std::to_string(d.plan_id);
    ids += "}";
    std::map<int64_t, PlanObservation*> by_run;
    for (const auto& row : w.exec_params("SELECT r.id, r.adaptive_plan_id, r.status, r.config::text AS config FROM runs r "
                                         "WHERE r.adaptive_plan_id = ANY($1::bigint[]) ORDER BY r.id",
                                         ids)) {
      const int64_t run_id = row["id"].as<int64_t>();
      boost::system::error_code ec;
      const bj::value cfg = json::parse_exact(row["config"].c_str(), ec);
      if (ec || !cfg.is_object()) return Status(Code::kInternal, "run " + std::to_string(run_id) + ": config is not JSON");
      JS_ASSIGN_OR_RETURN(RunConfig c, run_config_from_json(cfg.get_object(), "run " + std::to_string(run_id)));
      DuePlan& d = out[index.at(row["adaptive_plan_id"].as<int64_t>())];
      d.observations.push_back(PlanObservation{mode_settings_of(c), run_id, row["status"].c_str(), {}});
    }
    for (auto& d : out)
      for (auto& o : d.observations) by_run[o.run_id] = &o;
    std::map<int64_t, std::vector<EpochFigures>> epochs;
    for (const auto& row :
         w.exec_params("SELECT e.run_id, e.epoch, e.e2e_s, e.minibatches, e.minibatch_mean_ms, e.mean_power_w, e.energy_j "
                       "FROM epochs e JOIN runs r ON r.id = e.run_id "
                       "WHERE r.adaptive_plan_id = ANY($1::bigint[]) AND r.status = 'done' ORDER BY e.run_id, e.epoch",
                       ids)) {
      const pg::Row e(row);
      epochs[e.integer("run_id")].push_back({e.integer("epoch"), e.number("e2e_s"), e.integer("minibatches"),
                                             e.opt_number("minibatch_mean_ms"), e.opt_number("mean_power_w"),
                                             e.opt_number("energy_j")});
    }
    for (auto& [run_id, rows] : epochs) by_run.at(run_id)->figures = run_figures(rows);
    return out;
  });
}

Result<bool> PgStore::add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                         const bj::object& fit) {
  return guarded("adding an adaptive round", [&]() -> Result<bool> {
    pqxx::work w(*conn_);
    auto plan =
        w.exec_params("SELECT campaign_id, spec::text AS spec FROM adaptive_plans WHERE id = $1 FOR UPDATE", plan_id);
    if (plan.empty()) return not_found("no adaptive plan " + std::to_string(plan_id));
    if (!w.exec_params("SELECT 1 FROM adaptive_rounds WHERE plan_id = $1 AND round = $2", plan_id, round).empty()) {
      w.commit();
      return false;
    }
    const int64_t campaign_id = plan[0]["campaign_id"].as<int64_t>();
    JS_ASSIGN_OR_RETURN(AdaptivePlanSpec spec, spec_of(plan[0]["spec"], plan_id));
    const std::string fit_text = bj::serialize(fit);
    w.exec_params("INSERT INTO adaptive_rounds (plan_id, round, runs, fit) VALUES ($1, $2, $3, $4::jsonb)", plan_id,
                  round, static_cast<int64_t>(modes.size()), fit_text);
    int64_t ordinal = w.exec_params("SELECT coalesce(max(ordinal), -1) + 1 FROM runs WHERE campaign_id = $1",
                                    campaign_id)[0][0].as<int64_t>();
    for (const auto& m : modes) {
      const RunConfig run = with_mode(spec.base, m);
      const std::string medium = storage_medium_of(run.data);
      w.exec_params("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, min_mem_bytes, storage, "
                    "unfit_classes, adaptive_plan_id, adaptive_round) "
                    "VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8::text[], $9, $10)",
                    campaign_id, ordinal++, bj::serialize(to_json(run)), run.device, run.epochs,
                    required_memory_bytes(run), medium.empty() ? nullptr : medium.c_str(),
                    pg::text_array_literal(classes_without_room(run)), plan_id, round);
    }
    w.exec_params("UPDATE adaptive_plans SET rounds = $2 + 1, fit = $3::jsonb WHERE id = $1", plan_id, round, fit_text);
    w.exec_params("UPDATE campaigns SET run_count = run_count + $2 WHERE id = $1", campaign_id,
                  static_cast<int64_t>(modes.size()));
    w.commit();
    return true;
  });
}

Status PgStore::finish_adaptive_plan(int64_t plan_id, const std::string& state, const bj::object& fit,
                                     const std::string& error) {
  return guarded("ending an adaptive plan", [&]() -> Status {
    pqxx::work w(*conn_);
    auto r = w.exec_params("SELECT state FROM adaptive_plans WHERE id = $1 FOR UPDATE", plan_id);
    if (r.empty()) return not_found("no adaptive plan " + std::to_string(plan_id));
    if (std::string(r[0][0].c_str()) == "profiling")
      w.exec_params("UPDATE adaptive_plans SET state = $2, fit = coalesce($3::jsonb, fit), error = nullif($4, '') "
                    "WHERE id = $1",
                    plan_id, state, fit.empty() ? nullptr : bj::serialize(fit).c_str(), error);
    w.commit();
    return Status::ok();
  });
}

}  // namespace jetsweep::controller
