// Adaptive-profiling plan specs: settings, JSON codec, a profiled run's figures.
#include "common/adaptive_plan.hpp"

#include <tuple>

#include "common/json_fields.hpp"

namespace jetsweep {
namespace bj = boost::json;

bool ModeSettings::operator<(const ModeSettings& o) const {
  return std::tie(cores, cpu_khz, gpu_hz, emc_hz) < std::tie(o.cores, o.cpu_khz, o.gpu_hz, o.emc_hz);
}

ModeSettings mode_settings_of(const RunConfig& c) {
  const PowerModeRequest& pm = c.power_mode;
  return {pm.cores, pm.cpu_khz, pm.gpu_hz, pm.emc_hz};
}

RunConfig with_mode(RunConfig base, const ModeSettings& m) {
  base.power_mode = PowerModeRequest{"", m.cores, m.cpu_khz, m.gpu_hz, m.emc_hz};
  return base;
}

bj::object to_json(const AdaptivePlanSpec& s) {
  bj::array candidates;
  candidates.reserve(s.candidates.size());
  for (const auto& m : s.candidates) candidates.push_back(bj::array{m.cores, m.cpu_khz, m.gpu_hz, m.emc_hz});
  return {{"base", to_json(s.base)},
          {"candidates", std::move(candidates)},
          {"budget", s.budget},
          {"reference", s.reference},
          {"reference_workload", s.reference_workload},
          {"strategy", s.strategy},
          {"anchor", s.anchor},
          {"power_budgets_w", bj::array(s.power_budgets_w.begin(), s.power_budgets_w.end())},
          {"seed", s.seed},
          {"cross_board", s.cross_board},
          {"where", s.where}};
}

Result<AdaptivePlanSpec> adaptive_plan_from_json(const bj::value& v, const std::string& where) {
  if (!v.is_object()) return invalid_argument(where + ": expected an object");
  json::FieldReader r(v.get_object(), where);
  AdaptivePlanSpec s;
  const bj::object* base = r.object("base");
  const bj::array* candidates = r.array("candidates");
  s.budget = r.integer("budget");
  s.reference = r.string("reference");
  s.reference_workload = r.string("reference_workload");
  s.strategy = r.string("strategy");
  s.anchor = r.opt_string("anchor").value_or("measured");   // a plan stored before the key: as it was planned
  s.power_budgets_w = r.number_array("power_budgets_w");
  s.seed = r.integer("seed");
  s.cross_board = r.boolean("cross_board");
  s.where = r.string("where");
  if (!r.ok()) return r.status();
  if (s.anchor != "powertrain" && s.anchor != "measured")
    return invalid_argument(where + " field 'anchor': '" + s.anchor + "' is not powertrain or measured");
  JS_ASSIGN_OR_RETURN(s.base, run_config_from_json(*base, where + " field 'base'"));
  for (size_t i = 0; i < candidates->size(); ++i) {
    const bj::value& c = (*candidates)[i];
    if (!c.is_array() || c.get_array().size() != 4)
      return invalid_argument(where + " field 'candidates' element " + std::to_string(i) +
                              ": expected [cores, cpu_khz, gpu_hz, emc_hz]");
    int64_t k[4];
    for (size_t j = 0; j < 4; ++j) {
      auto n = json::as_integer(c.get_array()[j]);
      if (!n) return invalid_argument(where + " field 'candidates' element " + std::to_string(i) + ": not integers");
      k[j] = *n;
    }
    s.candidates.push_back({k[0], k[1], k[2], k[3]});
  }
  return s;
}

RunFigures run_figures(const std::vector<EpochFigures>& epochs) {
  double time_sum = 0, power_sum = 0;
  int time_n = 0, power_n = 0;
  for (const auto& e : epochs) {
    if (e.epoch == 0) continue;   // the warm-up epoch (the papers' convention)
    std::optional<double> ms = e.minibatch_mean_ms;
    if (!ms && e.minibatches > 0) ms = 1000.0 * e.e2e_s / static_cast<double>(e.minibatches);
    if (!ms) continue;
    time_sum += *ms;
    ++time_n;
    std::optional<double> w = e.mean_power_w;
    if (!w && e.energy_j && e.e2e_s > 0) w = *e.energy_j / e.e2e_s;
    if (w) {
      power_sum += *w;
      ++power_n;
    }
  }
  RunFigures f;
  if (time_n > 0) f.minibatch_ms = time_sum / time_n;
  if (power_n > 0) f.power_w = power_sum / power_n;
  return f;
}

}  // namespace jetsweep
