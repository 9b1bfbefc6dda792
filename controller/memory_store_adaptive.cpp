// MemoryStore: adaptive-profiling plans, as pg_adaptive.cpp keeps them in PostgreSQL (sql/026).
#include <limits>
#include <map>

#include "controller/memory_store.hpp"

namespace jetsweep::controller {
namespace bj = boost::json;

namespace {
bool open_status(const std::string& s) { return s == "queued" || s == "assigned" || s == "running"; }
}  // namespace

std::vector<api::AdaptivePlanStatus> MemoryStore::plan_statuses(int64_t campaign_id, bool with_fit) const {
  std::vector<api::AdaptivePlanStatus> out;
  for (const auto& [id, p] : plans_) {
    if (p.campaign_id != campaign_id) continue;
    int64_t done = 0;
    for (const auto& [run_id, run] : runs_) done += run.adaptive_plan_id == id && run.status == "done" ? 1 : 0;
    out.push_back(adaptive_plan_status(id, p.state, p.rounds, p.spec, done, p.error, p.fit, with_fit));
    for (const auto& [round, fit] : p.round_fits) {
      int64_t modes = 0;
      for (const auto& [run_id, run] : runs_) modes += run.adaptive_plan_id == id && run.adaptive_round == round ? 1 : 0;
      out.back().history.push_back(adaptive_round_status(round, modes, &fit));
    }
  }
  return out;
}

Result<std::vector<DuePlan>> MemoryStore::adaptive_plans_due() {
  std::lock_guard lock(mu_);
  std::vector<DuePlan> out;
  for (const auto& [id, p] : plans_) {
    if (p.state != "profiling" || campaigns_.at(p.campaign_id).state != "active") continue;
    DuePlan d{id, p.campaign_id, p.rounds, p.spec, {}, p.fit};
    bool open = false;
    for (const auto& [run_id, run] : runs_) {
      if (run.adaptive_plan_id != id) continue;
      if (open_status(run.status)) {
        open = true;
        break;
      }
      auto cfg = run_config_from_json(run.config, "run " + std::to_string(run_id));
      if (!cfg) return cfg.status();
      PlanObservation o{mode_settings_of(*cfg), run_id, run.status, {}};
      if (run.status == "done") {
        std::vector<EpochFigures> epochs;
        for (auto e = epochs_.lower_bound({run_id, std::numeric_limits<int64_t>::min()}); e != epochs_.end() && e->first.first == run_id; ++e) {
          const proto::EpochResult& r = e->second;
          EpochFigures f{r.epoch, r.e2e_s, r.minibatches, std::nullopt, r.mean_power_w, r.energy_j};
          double sum = 0;
          int64_t n = 0;
          for (auto m = minibatches_.lower_bound({run_id, r.epoch, std::numeric_limits<int64_t>::min()});
               m != minibatches_.end() && std::get<0>(m->first) == run_id && std::get<1>(m->first) == r.epoch; ++m) {
            sum += 1000.0 * (m->second.stall_s + m->second.compute_s);
            ++n;
          }
          if (n > 0) f.minibatch_mean_ms = sum / static_cast<double>(n);
          epochs.push_back(f);
        }
        o.figures = run_figures(epochs);
      }
      d.observations.push_back(std::move(o));
    }
    if (!open) out.push_back(std::move(d));
  }
  return out;
}

Result<bool> MemoryStore::add_adaptive_round(int64_t plan_id, int64_t round, const std::vector<ModeSettings>& modes,
                                             const bj::object& fit) {
  std::lock_guard lock(mu_);
  auto it = plans_.find(plan_id);
  if (it == plans_.end()) return not_found("no adaptive plan " + std::to_string(plan_id));
  Plan& p = it->second;
  if (p.round_fits.count(round)) return false;
  p.round_fits[round] = fit;
  int64_t ordinal = -1;
  for (const auto& [id, run] : runs_)
    if (run.campaign_id == p.campaign_id) ordinal = std::max(ordinal, run.ordinal);
  for (const auto& m : modes) {
    Run& run = queue_run(p.campaign_id, ++ordinal, with_mode(p.spec.base, m));
    run.adaptive_plan_id = plan_id;
    run.adaptive_round = round;
  }
  p.rounds = round + 1;
  p.fit = fit;
  campaigns_.at(p.campaign_id).run_count += static_cast<int64_t>(modes.size());
  return true;
}

Status MemoryStore::finish_adaptive_plan(int64_t plan_id, const std::string& state, const bj::object& fit,
                                         const std::string& error) {
  std::lock_guard lock(mu_);
  auto it = plans_.find(plan_id);
  if (it == plans_.end()) return not_found("no adaptive plan " + std::to_string(plan_id));
  Plan& p = it->second;
  if (p.state != "profiling") return Status::ok();
  p.state = state;
  if (!fit.empty()) p.fit = fit;
  p.error = error;
  return Status::ok();
}

}  // namespace jetsweep::controller
