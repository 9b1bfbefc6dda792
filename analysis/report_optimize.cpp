// optimize_report: the budget optimiser on observed or predicted values, judged by the observed optimum.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "analysis/reports.hpp"

namespace jetsweep::analysis {

void ModeValues::add(const ModeKey& mode, double t, double p) {
  modes.push_back(mode);
  time_ms.push_back(t);
  power_w.push_back(p);
}

std::optional<size_t> OptimizeReport::observed_of(size_t candidate) const {
  auto it = observed_index.find(candidates.modes[candidate]);
  if (it == observed_index.end()) return std::nullopt;
  return it->second;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Candidates from a prediction of every mode of the target's board.
Status predict_candidates(const Corpus& corpus, const OptimizeQuery& q, OptimizeReport& r) {
  PredictRequest request = *q.predict;
  request.target = {r.target.workload, r.target.device};
  JS_ASSIGN_OR_RETURN(PredictOutcome prediction, run_prediction(corpus, request));
  const auto t0 = std::chrono::steady_clock::now();
  const auto predictions = prediction.predict(mode_grid(corpus, r.target.device));
  r.predict_seconds = seconds_since(t0);
  for (const auto& p : predictions) {
    // A linear model can extrapolate to non-positive times far from its training modes.
    if (!p.power_mw || !(p.time_ms > 0) || !(*p.power_mw > 0)) {
      ++r.excluded_candidates;
      continue;
    }
    r.candidates.add(p.mode, p.time_ms, *p.power_mw / 1000.0);
  }
  if (r.candidates.modes.empty())
    return invalid_argument("--method: '" + q.method +
                            "' predicted no usable mode (no power model, or non-positive predictions)");
  r.prediction = std::move(prediction);
  r.request = std::move(request);
  return Status::ok();
}

std::optional<size_t> pick_within(const BudgetOptimizer& opt, const OptimizeReport& r) {
  if (r.power_budget_w) return opt.fastest_within_power(*r.power_budget_w);
  if (r.time_budget_ms) return opt.lowest_power_within_time(*r.time_budget_ms);
  return std::nullopt;
}

// MAXN: every knob at its maximum; when that mode was not profiled, the profiled mode closest to it (largest sum
// of knob / knob maximum).
size_t maxn_mode(const std::vector<ModeKey>& modes) {
  ModeKey top;
  for (const auto& m : modes) {
    top.cores = std::max(top.cores, m.cores);
    top.cpu_mhz = std::max(top.cpu_mhz, m.cpu_mhz);
    top.gpu_mhz = std::max(top.gpu_mhz, m.gpu_mhz);
    top.emc_mhz = std::max(top.emc_mhz, m.emc_mhz);
  }
  auto closeness = [&](const ModeKey& m) {
    return m.cores / double(top.cores) + m.cpu_mhz / top.cpu_mhz + m.gpu_mhz / top.gpu_mhz + m.emc_mhz / top.emc_mhz;
  };
  size_t best = 0;
  for (size_t i = 1; i < modes.size(); ++i)
    if (closeness(modes[i]) > closeness(modes[best])) best = i;
  return best;
}

// The sweep of power budgets for the method and the PowerTrain sec. 5.1 baselines: MAXN, and a Pareto over 50
// randomly profiled modes.
void sweep_budgets(OptimizeReport& r, const BudgetOptimizer& opt) {
  const ModeValues& obs = r.observed;
  const auto& budgets = r.sweep_budgets_w;
  r.sweeps.push_back(evaluate_sweep(r.method, budgets, obs.time_ms, obs.power_w, [&](double b) -> std::optional<size_t> {
    auto c = opt.fastest_within_power(b);
    if (!c) return std::nullopt;
    return r.observed_of(*c);
  }));
  const size_t maxn = maxn_mode(obs.modes);
  r.sweeps.push_back(
      evaluate_sweep("maxn", budgets, obs.time_ms, obs.power_w, [&](double) { return std::optional<size_t>(maxn); }));
  ModeValues random;
  std::vector<size_t> random_index;
  for (const auto& m : sample_modes(obs.modes, 50, r.seed)) {
    const size_t i = r.observed_index.at(m);
    random_index.push_back(i);
    random.add(m, obs.time_ms[i], obs.power_w[i]);
  }
  BudgetOptimizer random_opt(random.time_ms, random.power_w);
  r.sweeps.push_back(evaluate_sweep("random50", budgets, obs.time_ms, obs.power_w, [&](double b) -> std::optional<size_t> {
    auto c = random_opt.fastest_within_power(b);
    if (!c) return std::nullopt;
    return random_index[*c];
  }));
}

}  // namespace

Result<OptimizeReport> optimize_report(const Corpus& corpus, const OptimizeQuery& q) {
  JS_ASSIGN_OR_RETURN(WorkloadData target, select_workload(corpus, q.workload, "--workload"));
  OptimizeReport r(corpus, std::move(target));
  r.method = q.method;
  r.seed = q.seed;
  r.power_budget_w = q.power_budget_w;
  r.time_budget_ms = q.time_budget_ms;
  for (const auto& m : r.target.modes) {
    if (!m.power_mw) continue;
    r.observed_index[m.mode] = r.observed.modes.size();
    r.observed.add(m.mode, m.minibatch_ms, *m.power_mw / 1000.0);
  }
  if (q.adaptive) {   // the campaign's own fit: its profiled modes measured, the others predicted
    const StoredAdaptiveFit& f = *q.adaptive;
    if (f.modes.empty()) return invalid_argument("--method: adaptive plan " + std::to_string(f.plan_id) + " has no fitted mode");
    for (size_t i = 0; i < f.modes.size(); ++i) {
      r.candidates.add(f.modes[i], f.time_ms[i], f.power_w[i]);
      r.candidate_measured.push_back(f.measured[i]);
    }
    r.excluded_candidates = f.failed_modes;
    r.adaptive_plan = f.plan_id;
  } else if (!r.predicted()) {
    if (r.observed.modes.empty())
      return invalid_argument("--workload: '" + r.target.workload + "' has no modes with power data");
    r.candidates = r.observed;
  } else {
    JS_RETURN_IF_ERROR(predict_candidates(corpus, q, r));
  }
  const auto t_build = std::chrono::steady_clock::now();
  BudgetOptimizer opt(r.candidates.time_ms, r.candidates.power_w);
  r.chosen = pick_within(opt, r);
  r.optimize_seconds = seconds_since(t_build);
  if (!r.observed.modes.empty()) r.optimal = pick_within(BudgetOptimizer(r.observed.time_ms, r.observed.power_w), r);
  if (r.chosen && r.optimal && r.power_budget_w) {
    if (auto oi = r.observed_of(*r.chosen)) {
      const auto& t = r.observed.time_ms;
      r.time_penalty_pct = 100.0 * (t[*oi] - t[*r.optimal]) / t[*r.optimal];
      r.excess_power_w = std::max(0.0, r.observed.power_w[*oi] - *r.power_budget_w);
    }
  }
  if (q.sweep_budgets_w) {
    r.sweep_budgets_w = *q.sweep_budgets_w;
  } else if (r.predicted() && !r.observed.modes.empty()) {
    const auto& p = r.observed.power_w;
    r.sweep_budgets_w = budget_range(std::ceil(*std::min_element(p.begin(), p.end())),
                                     std::floor(*std::max_element(p.begin(), p.end())), 1.0);
  }
  if (!r.sweep_budgets_w.empty() && !r.observed.modes.empty()) sweep_budgets(r, opt);
  return r;
}

}  // namespace jetsweep::analysis
