// adaptive_report: adaptive profiling replayed against a corpus, the target's rows as the oracle.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/pareto.hpp"
#include "analysis/reports.hpp"
#include "analysis/stats.hpp"

namespace jetsweep::analysis {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The ground truth: the target's modes with power, in mode order (the candidates of the replay).
struct Oracle : ModeValues {
  Observation reveal(size_t i) const { return {modes[i], time_ms[i], power_w[i] * 1000.0}; }
};

}  // namespace

AdaptiveFigures judge_predictions(std::string name, const ModeValues& o, const std::vector<double>& time_ms,
                                  const std::vector<double>& power_w, const std::vector<bool>& profiled,
                                  const std::vector<double>& budgets_w,
                                  const std::function<std::optional<size_t>(double)>& pick) {
  AdaptiveFigures f;
  f.strategy = std::move(name);
  std::vector<double> t_obs, t_pred, p_obs, p_pred, e_obs, e_pred;
  std::vector<double> front_t(o.modes.size()), front_p(o.modes.size());
  for (size_t i = 0; i < o.modes.size(); ++i) {
    front_t[i] = profiled[i] ? o.time_ms[i] : time_ms[i];
    front_p[i] = profiled[i] ? o.power_w[i] : power_w[i];
    if (profiled[i]) {
      ++f.profiled;
      continue;
    }
    t_obs.push_back(o.time_ms[i]);
    t_pred.push_back(time_ms[i]);
    p_obs.push_back(o.power_w[i]);
    p_pred.push_back(power_w[i]);
    e_obs.push_back(o.time_ms[i] * o.power_w[i]);
    e_pred.push_back(time_ms[i] * power_w[i]);
  }
  if (!t_obs.empty()) {
    f.time_mape_pct = mape_pct(t_obs, t_pred);
    f.power_mape_pct = mape_pct(p_obs, p_pred);
    f.energy_mape_pct = mape_pct(e_obs, e_pred);
  }
  const auto truth = pareto_front(o.time_ms, o.power_w);
  const auto predicted = pareto_front(front_t, front_p);
  const std::set<size_t> true_set(truth.begin(), truth.end());
  size_t hits = 0;
  for (size_t i : predicted) hits += true_set.count(i);
  f.front_size = predicted.size();
  f.true_front_size = truth.size();
  f.front_precision = predicted.empty() ? 0.0 : double(hits) / double(predicted.size());
  f.front_recall = truth.empty() ? 0.0 : double(hits) / double(truth.size());
  f.sweep = evaluate_sweep(f.strategy, budgets_w, o.time_ms, o.power_w, pick);
  // Budgets with a true optimum where the strategy chose nothing: the sweep leaves them out of its figures.
  BudgetOptimizer truth_opt(o.time_ms, o.power_w);
  for (double b : budgets_w)
    if (truth_opt.fastest_within_power(b) && !pick(b)) ++f.abstained;
  return f;
}

namespace {

// The strategy's pick for budget `b` among `picks`, as judge_predictions() and evaluate_sweep take it (holds `picks` by reference).
auto pick_for(const std::vector<BudgetPick>& picks) {
  return [&picks](double b) -> std::optional<size_t> {
    for (const auto& p : picks)
      if (p.budget_w == b) return p.candidate;
    return std::nullopt;
  };
}
void pick_for(std::vector<BudgetPick>&&) = delete;  // the lambda would outlive a temporary

// The reference's measured time (ms) and power (mW) of each of `modes`; none unless it measured every one with power.
std::optional<std::pair<std::vector<double>, std::vector<double>>> measured_anchor(const WorkloadData& ref,
                                                                                   const std::vector<ModeKey>& modes) {
  std::vector<double> time_ms, power_mw;
  for (const auto& m : modes) {
    const ModeRecord* r = ref.find(m);
    if (!r || !r->power_mw || !(*r->power_mw > 0) || !(r->minibatch_ms > 0)) return std::nullopt;
    time_ms.push_back(r->minibatch_ms);
    power_mw.push_back(*r->power_mw);
  }
  return std::make_pair(std::move(time_ms), std::move(power_mw));
}

// Where the adaptive penalty comes from: the same decision with one side of the fit replaced by the truth. A median
// over the budgets that decision picked for; none (null) when it picked for none.
void attribute_penalty(AdaptiveFigures& f, const AdaptiveProfiler& profiler, const AdaptiveFit& fit,
                       const std::vector<Observation>& observed, const Oracle& o, const std::vector<double>& budgets_w) {
  AdaptiveFit true_power = fit, true_time = fit;
  for (size_t i = 0; i < o.modes.size(); ++i) {
    true_power.power_mw[i] = o.power_w[i] * 1000.0;
    true_power.log_power_sd[i] = 0;
    true_time.time_ms[i] = o.time_ms[i];
    true_time.log_time_sd[i] = 0;
  }
  auto penalty_with = [&](const AdaptiveFit& with) -> std::optional<double> {
    const auto picks = profiler.choose(with, observed, budgets_w);
    const SweepMetrics m = evaluate_sweep("", budgets_w, o.time_ms, o.power_w, pick_for(picks));
    if (m.budgets == 0) return std::nullopt;
    return m.time_penalty_median_pct;
  };
  f.penalty_true_power_pct = penalty_with(true_power);
  f.penalty_true_time_pct = penalty_with(true_time);
}

// Where the final fit's CPU stage stops gaining from cores (AdaptiveFit's saturation per time form), if anywhere.
std::optional<std::string> saturation_note(const AdaptiveFit& fit) {
  if (fit.time_log_cores_saturation == 0 && fit.time_linear_cores_saturation == 0) return std::nullopt;
  auto cores = [](int k) { return k > 0 ? std::to_string(k) + " cores" : std::string("none"); };
  return "the time fit's CPU stage stops gaining from cores past a count (chosen by leave-one-out): " +
         cores(fit.time_log_cores_saturation) + " in log space, " + cores(fit.time_linear_cores_saturation) +
         " in milliseconds";
}

// PowerTrain transfer from k random modes (as `analyze optimize --method powertrain` picks: the fastest predicted
// mode within the budget, every mode predicted).
Result<AdaptiveFigures> powertrain_baseline(const Corpus& corpus, const AdaptiveQuery& q, const Oracle& o, size_t k,
                                            const std::vector<double>& budgets_w) {
  PredictRequest req = q.predict;
  req.method = Method::kPowerTrain;
  req.target = q.target;
  req.references = {q.reference};
  req.train_modes = int(k);
  req.seed = q.options.seed;
  const auto t0 = std::chrono::steady_clock::now();
  JS_ASSIGN_OR_RETURN(PredictOutcome p, run_prediction(corpus, req));
  const auto pred = p.predict(o.modes);
  std::vector<double> t, w;
  for (const auto& m : pred) {
    t.push_back(m.time_ms);
    w.push_back(m.power_mw ? *m.power_mw / 1000.0 : std::numeric_limits<double>::infinity());
  }
  std::vector<bool> profiled(o.modes.size(), false);
  const std::set<ModeKey> trained(p.train_modes.begin(), p.train_modes.end());
  for (size_t i = 0; i < o.modes.size(); ++i) profiled[i] = trained.count(o.modes[i]) > 0;
  // Its profiled modes choose at their observed values, as the adaptive strategy's do.
  std::vector<double> t_pick = t, w_pick = w;
  for (size_t i = 0; i < o.modes.size(); ++i)
    if (profiled[i]) {
      t_pick[i] = o.time_ms[i];
      w_pick[i] = o.power_w[i];
    }
  BudgetOptimizer opt(t_pick, w_pick);
  const double fit_seconds = seconds_since(t0) - (p.reference ? p.reference->seconds : 0.0);
  AdaptiveFigures f = judge_predictions("powertrain " + std::to_string(k) + " random", o, t, w, profiled, budgets_w,
                            [&](double b) { return opt.fastest_within_power(b); });
  f.seconds = fit_seconds;
  return f;
}

}  // namespace

Result<AdaptiveReport> adaptive_report(const Corpus& corpus, const AdaptiveQuery& q) {
  const auto t_start = std::chrono::steady_clock::now();
  JS_ASSIGN_OR_RETURN(WorkloadData target, select_workload(corpus, q.target, "--target"));
  AdaptiveReport r(corpus, std::move(target));
  r.query = q;
  Oracle o;
  for (const auto& m : r.target.modes) {
    if (!m.power_mw || !(*m.power_mw > 0) || !std::isfinite(*m.power_mw) || !(m.minibatch_ms > 0) ||
        !std::isfinite(m.minibatch_ms))
      continue;
    o.modes.push_back(m.mode);
    o.time_ms.push_back(m.minibatch_ms);
    o.power_w.push_back(*m.power_mw / 1000.0);
  }
  if (o.modes.empty())
    return invalid_argument("--target: '" + r.target.workload + "' on " + r.target.device +
                            " has no power data: adaptive profiling needs measured power (a board with power rails)");
  if (o.modes.size() < r.target.modes.size())
    r.notes.push_back(std::to_string(r.target.modes.size() - o.modes.size()) +
                      " target modes without a positive power (or time) are left out of the replay");
  if (q.options.budget > o.modes.size())
    return invalid_argument("--budget: " + std::to_string(q.options.budget) + " is more than the target's " +
                            std::to_string(o.modes.size()) + " modes with power");
  JS_ASSIGN_OR_RETURN(WorkloadData ref, select_workload(corpus, q.reference, "--reference"));
  if (ref.device != r.target.device && !q.cross_board)
    return invalid_argument("--reference: '" + ref.workload + "' was measured on " + ref.device + ", the target on " +
                            r.target.device + "; a transfer across board classes needs --cross-board");
  PredictRequest req = q.predict;
  req.method = Method::kPowerTrain;
  req.target = q.target;
  req.references = {q.reference};
  req.seed = q.options.seed;
  JS_ASSIGN_OR_RETURN(ReferenceModels models, powertrain_reference(corpus, req, r.target));
  r.reference = models.info;
  r.notes.insert(r.notes.end(), models.notes.begin(), models.notes.end());
  for (size_t i = 0; i < o.modes.size(); ++i) r.oracle.add(o.modes[i], o.time_ms[i], o.power_w[i]);
  const auto t_replay = std::chrono::steady_clock::now();
  std::vector<double> anchor_ms = models.time->predict(o.modes), anchor_mw = models.power->predict(o.modes);
  if (q.anchor == AdaptiveAnchor::kMeasured) {
    if (auto measured = measured_anchor(ref, o.modes)) {
      std::tie(anchor_ms, anchor_mw) = std::move(*measured);
      r.anchor = AdaptiveAnchor::kMeasured;
    } else {
      r.notes.push_back("--anchor measured: the reference did not measure every target mode with power; its networks "
                        "anchor the replay");
    }
  }
  JS_ASSIGN_OR_RETURN(AdaptiveProfiler profiler, AdaptiveProfiler::create(o.modes, anchor_ms, anchor_mw, q.options));
  if (q.options.power_budgets_w.empty()) {
    r.budgets_w = budget_range(std::ceil(*std::min_element(o.power_w.begin(), o.power_w.end())),
                               std::floor(*std::max_element(o.power_w.begin(), o.power_w.end())), 1.0);
  } else {
    r.budgets_w = q.options.power_budgets_w;
  }
  std::vector<Observation> oracle;
  for (size_t i = 0; i < o.modes.size(); ++i) oracle.push_back(o.reveal(i));
  std::vector<bool> profiled(o.modes.size(), false);
  auto t_round = std::chrono::steady_clock::now();
  double report_fit_seconds = 0;  // the per-round fits below are for the report, not part of the strategy
  auto on_round = [&](const std::vector<size_t>& picks, const std::vector<Observation>& observed) -> Status {
    AdaptiveRound round;
    round.seconds = seconds_since(t_round);
    for (size_t i : picks) {
      profiled[i] = true;
      round.modes.push_back(o.modes[i]);
    }
    const auto t_fit = std::chrono::steady_clock::now();
    if (observed.size() >= 2) {  // the fit after the round, for the report (not timed as part of it)
      JS_ASSIGN_OR_RETURN(AdaptiveFit after, profiler.fit(observed));
      round.time_loo_pct = after.time_loo_pct;
      if (!after.power_mw.empty()) round.power_loo_pct = after.power_loo_pct;
    }
    r.rounds.push_back(std::move(round));
    report_fit_seconds += seconds_since(t_fit);
    t_round = std::chrono::steady_clock::now();
    return Status::ok();
  };
  JS_ASSIGN_OR_RETURN(std::vector<Observation> observed, profiler.replay(oracle, q.round_size, on_round));
  JS_ASSIGN_OR_RETURN(AdaptiveFit fit, profiler.fit(observed));
  if (auto note = saturation_note(fit)) r.notes.push_back(std::move(*note));
  r.picks = profiler.choose(fit, observed, r.budgets_w);
  std::vector<double> power_w;
  for (double p : fit.power_mw) power_w.push_back(p / 1000.0);
  if (power_w.size() != o.modes.size()) return internal_error("adaptive: no power model after the replay");
  AdaptiveFigures adaptive =
      judge_predictions(std::string("adaptive (") + to_string(q.options.strategy) + ")", o, fit.time_ms, power_w, profiled,
            r.budgets_w, pick_for(r.picks));
  adaptive.seconds = seconds_since(t_replay) - report_fit_seconds;
  attribute_penalty(adaptive, profiler, fit, observed, o, r.budgets_w);
  r.figures.push_back(std::move(adaptive));
  if (q.baselines) {
    for (size_t k : {q.options.budget, size_t(50)}) {
      if (k >= o.modes.size() || (k == 50 && q.options.budget == 50)) continue;
      JS_ASSIGN_OR_RETURN(auto f, powertrain_baseline(corpus, q, o, k, r.budgets_w));
      r.figures.push_back(std::move(f));
    }
  }
  r.seconds = seconds_since(t_start);
  return r;
}

}  // namespace jetsweep::analysis
