#include "analysis/adaptive.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "analysis/stats.hpp"
#include "analysis/transfer_regression.hpp"

namespace jetsweep::analysis {

namespace {

constexpr double kPowerBound = 0.6744897501960817;  // one-sided 75% normal quantile
constexpr size_t kDefaultBudgets = 12;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI); }

}  // namespace

// Time's two forms come in variants: [0] as described in create(), and one per entry k of kLoaderCores strictly
// between the candidates' fewest and most cores, where the CPU stage's cores saturate at k (the loader's workers and
// the main process use no more; beyond it, more cores add power, not speed). fit() keeps per form the variant with the
// lowest leave-one-out error.
constexpr int kLoaderCores[] = {2, 3, 4, 5, 6, 8};

struct AdaptiveProfiler::Designs {
  std::vector<Eigen::MatrixXd> time_log, time_lin;  // [0] without saturation, then one per kLoaderCores entry used
  std::vector<int> saturation;                      // the cores each variant saturates at (0: none)
  Eigen::MatrixXd power_log, power_lin;
};

Result<AdaptiveStrategy> parse_adaptive_strategy(const std::string& text) {
  if (text == "front") return AdaptiveStrategy::kFrontImprovement;
  if (text == "random") return AdaptiveStrategy::kRandom;
  return invalid_argument("--strategy: unknown strategy '" + text + "' (known: front, random)");
}

const char* to_string(AdaptiveStrategy s) { return s == AdaptiveStrategy::kRandom ? "random" : "front"; }

Result<AdaptiveAnchor> parse_adaptive_anchor(const std::string& text, const std::string& where) {
  if (text == "powertrain") return AdaptiveAnchor::kPowerTrain;
  if (text == "measured") return AdaptiveAnchor::kMeasured;
  return invalid_argument(where + ": unknown anchor '" + text + "' (known: powertrain, measured)");
}

const char* to_string(AdaptiveAnchor a) { return a == AdaptiveAnchor::kMeasured ? "measured" : "powertrain"; }

Result<AdaptiveProfiler> AdaptiveProfiler::create(std::vector<ModeKey> candidates, std::vector<double> ref_time_ms,
                                                  std::vector<double> ref_power_mw, AdaptiveOptions options) {
  if (candidates.empty()) return invalid_argument("adaptive: no candidate modes");
  if (ref_time_ms.size() != candidates.size() || ref_power_mw.size() != candidates.size())
    return invalid_argument("adaptive: the reference predictions do not match the candidate modes");
  if (options.budget < kAdaptiveMinBudget)
    return invalid_argument("--budget: " + std::to_string(options.budget) + " is below the strategy's minimum of " +
                            std::to_string(kAdaptiveMinBudget) + " modes");
  if (options.budget > candidates.size())
    return invalid_argument("--budget: " + std::to_string(options.budget) + " is more than the board's " +
                            std::to_string(candidates.size()) + " modes");
  for (double b : options.power_budgets_w)
    if (!(b > 0) || !std::isfinite(b)) return invalid_argument("--power-budgets-w: budgets must be positive watts");
  AdaptiveProfiler p;
  std::map<int, std::set<double>> values;  // knob -> distinct values, for ranks
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ModeKey& m = candidates[i];
    if (!m.explicit_settings())
      return invalid_argument("adaptive: candidate mode " + m.label() + " lacks a knob setting");
    if (!(ref_time_ms[i] > 0) || !(ref_power_mw[i] > 0) || !std::isfinite(ref_time_ms[i]) ||
        !std::isfinite(ref_power_mw[i]))
      return invalid_argument("--reference: non-positive prediction for mode " + m.label());
    values[0].insert(m.cores);
    values[1].insert(m.cpu_mhz);
    values[2].insert(m.gpu_mhz);
    values[3].insert(m.emc_mhz);
  }
  // Time: log(target) = log(reference) + ridge over log knobs and inverse knobs (time sums work / clock terms).
  // Power: the same in log space, or target = reference + ridge over dynamic-power terms in milliwatts; the fit
  // keeps whichever predicts its observations better (leave-one-out).
  // Time is also corrected in milliseconds: target = reference + ridge over the reference and work / clock terms (a
  // stage's time is its work over its clock; the CPU's work spread over its cores), sums that a product of factors
  // in log space cannot follow where the target's bottleneck differs from the reference's; fit() blends the two.
  std::vector<std::vector<double>> log_terms(9), lin_terms(8), time_lin_terms(7);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ModeKey& m = candidates[i];
    const double c = m.cores, f = m.cpu_mhz, g = m.gpu_mhz, e = m.emc_mhz;
    const double knobs[] = {std::log(c), std::log(f), std::log(g), std::log(e), 1 / c, 1 / f, 1 / g, 1 / e};
    for (size_t k = 0; k < 8; ++k) log_terms[k + 1].push_back(knobs[k]);
    const double dyn[] = {ref_power_mw[i], c * f, g, e, f, c, g * g, c * f * f};
    for (size_t k = 0; k < 8; ++k) lin_terms[k].push_back(dyn[k]);
    const double work[] = {ref_time_ms[i], 1 / f, 1 / g, 1 / e, 1 / (c * f), 1 / c, 1 / (g * e)};
    for (size_t k = 0; k < 7; ++k) time_lin_terms[k].push_back(work[k]);
    p.ref_log_time_.push_back(std::log(ref_time_ms[i]));
    p.ref_log_power_.push_back(std::log(ref_power_mw[i]));
  }
  auto designs = std::make_shared<Designs>();
  log_terms[0] = p.ref_log_time_;
  designs->time_log.push_back(design(log_terms));
  designs->time_lin.push_back(design(time_lin_terms));
  designs->saturation.push_back(0);
  // The saturating variants: log(min(cores, k)) in log space, and the CPU stage's work over min(cores, k) cores in
  // milliseconds, beside the terms above. Only for k strictly between the candidates' fewest and most cores: outside
  // that, min(cores, k) is the cores themselves or a constant, and the term repeats one already there.
  int min_cores = std::numeric_limits<int>::max(), max_cores = 0;
  for (const auto& m : candidates) {
    min_cores = std::min(min_cores, m.cores);
    max_cores = std::max(max_cores, m.cores);
  }
  for (int k : kLoaderCores) {
    if (k <= min_cores || k >= max_cores) continue;
    auto with_log = log_terms;
    auto with_lin = time_lin_terms;
    std::vector<double> log_cores, cpu_work;
    for (const auto& m : candidates) {
      const double used = std::min(double(m.cores), double(k));
      log_cores.push_back(std::log(used));
      cpu_work.push_back(1.0 / (used * m.cpu_mhz));
    }
    with_log.push_back(std::move(log_cores));
    with_lin.push_back(std::move(cpu_work));
    designs->time_log.push_back(design(with_log));
    designs->time_lin.push_back(design(with_lin));
    designs->saturation.push_back(k);
  }
  log_terms[0] = p.ref_log_power_;
  designs->power_log = design(log_terms);
  designs->power_lin = design(lin_terms);
  p.designs_ = std::move(designs);
  p.ref_power_mw_ = std::move(ref_power_mw);
  auto rank = [&](int knob, double v) {
    const auto& s = values[knob];
    if (s.size() < 2) return 0.5;
    return double(std::distance(s.begin(), s.find(v))) / double(s.size() - 1);
  };
  for (const auto& m : candidates)
    p.ranks_.push_back({rank(0, m.cores), rank(1, m.cpu_mhz), rank(2, m.gpu_mhz), rank(3, m.emc_mhz)});
  if (options.first_round == 0) options.first_round = std::max(kAdaptiveMinBudget, (options.budget + 1) / 2);
  options.first_round = std::clamp(options.first_round, kAdaptiveMinBudget, options.budget);
  p.candidates_ = std::move(candidates);
  p.options_ = std::move(options);
  return p;
}

std::optional<size_t> AdaptiveProfiler::index_of(const ModeKey& m) const {
  // Candidates come from mode_grid (sorted); fall back to a scan for any other order.
  auto it = std::lower_bound(candidates_.begin(), candidates_.end(), m);
  if (it != candidates_.end() && *it == m) return size_t(it - candidates_.begin());
  for (size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i] == m) return i;
  return std::nullopt;
}

Result<AdaptiveFit> AdaptiveProfiler::fit(const std::vector<Observation>& observed) const {
  std::vector<size_t> t_idx, p_idx;
  std::vector<double> t_y, p_y;
  for (const auto& o : observed) {
    auto i = index_of(o.mode);
    if (!i) return invalid_argument("adaptive: observed mode " + o.mode.label() + " is not a candidate mode");
    if (!(o.time_ms > 0) || !std::isfinite(o.time_ms))
      return invalid_argument("adaptive: observed mode " + o.mode.label() + " has no finite positive time");
    if (o.power_mw && !std::isfinite(*o.power_mw))
      return invalid_argument("adaptive: observed mode " + o.mode.label() + " has a non-finite power");
    t_idx.push_back(*i);
    t_y.push_back(std::log(o.time_ms));
    if (o.power_mw && *o.power_mw > 0) {
      p_idx.push_back(*i);
      p_y.push_back(std::log(*o.power_mw));
    }
  }
  if (t_idx.size() < 2) return invalid_argument("adaptive: the fit needs at least 2 profiled modes");
  AdaptiveFit f;
  f.observations = observed.size();
  const size_t n = candidates_.size();
  std::vector<double> ref_time(n);
  for (size_t i = 0; i < n; ++i) ref_time[i] = std::exp(ref_log_time_[i]);
  std::vector<double> t_obs, p_obs;
  for (double v : t_y) t_obs.push_back(std::exp(v));
  for (double v : p_y) p_obs.push_back(std::exp(v));
  // Time: both forms, blended in log space with weights by the inverse square of their leave-one-out errors (a
  // blend ranked near-front modes better than either form alone or the better one chosen per fit: docs/ANALYSIS.md);
  // the spread is the mixture's, and the error reported is the blend's own leave-one-out error (its weights and
  // each form's variant below come from every observation, so it is slightly optimistic). A form without a finite
  // error weighs nothing.
  // Each form's variant with the lowest finite leave-one-out error (the first, without saturation, on ties). Blending
  // every variant by its error, or one saturation for both forms, did no better (docs/ANALYSIS.md).
  auto best_variant = [&](const std::vector<Eigen::MatrixXd>& variants, bool log_form, int& saturation) {
    FormFit best = fit_form(variants[0], ranks_, t_idx, t_obs, ref_time, log_form);
    saturation = 0;
    for (size_t v = 1; v < variants.size(); ++v) {
      FormFit candidate = fit_form(variants[v], ranks_, t_idx, t_obs, ref_time, log_form);
      if (std::isfinite(candidate.loo_rel) && !(best.loo_rel <= candidate.loo_rel)) {  // also past a NaN best
        best = std::move(candidate);
        saturation = designs_->saturation[v];
      }
    }
    return best;
  };
  const FormFit tl = best_variant(designs_->time_log, true, f.time_log_cores_saturation);
  const FormFit tw = best_variant(designs_->time_lin, false, f.time_linear_cores_saturation);
  auto weight_of = [](double loo_rel) {
    return std::isfinite(loo_rel) ? 1.0 / std::max(loo_rel * loo_rel, 1e-12) : 0.0;
  };
  const double inv_l = weight_of(tl.loo_rel), inv_w = weight_of(tw.loo_rel);
  f.time_linear_weight = inv_l + inv_w > 0 ? inv_w / (inv_l + inv_w) : 0.0;
  const double wl = 1.0 - f.time_linear_weight, ww = f.time_linear_weight;
  auto blend = [&](double log_form_value, double linear_form_value) {
    if (ww == 0) return log_form_value;
    if (wl == 0) return linear_form_value;
    return std::exp(wl * std::log(log_form_value) + ww * std::log(linear_form_value));
  };
  f.time_ms.resize(n);
  f.log_time_sd.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double d = std::log(tl.mean[i]) - std::log(tw.mean[i]);
    f.time_ms[i] = blend(tl.mean[i], tw.mean[i]);
    f.log_time_sd[i] =
        std::sqrt(wl * tl.log_sd[i] * tl.log_sd[i] + ww * tw.log_sd[i] * tw.log_sd[i] + wl * ww * d * d);
  }
  double time_loo = 0;
  for (size_t r = 0; r < t_obs.size(); ++r)
    time_loo += std::abs(blend(std::max(tl.loo_pred[r], 1e-9), std::max(tw.loo_pred[r], 1e-9)) / t_obs[r] - 1.0);
  f.time_loo_pct = 100.0 * time_loo / double(t_obs.size());
  if (p_idx.size() >= 2) {
    FormFit pl = fit_form(designs_->power_log, ranks_, p_idx, p_obs, ref_power_mw_, true);
    FormFit pw = fit_form(designs_->power_lin, ranks_, p_idx, p_obs, ref_power_mw_, false);
    const bool linear = pw.loo_rel < pl.loo_rel;
    FormFit& best = linear ? pw : pl;
    f.power_linear = linear;
    f.power_mw = std::move(best.mean);
    f.log_power_sd = std::move(best.log_sd);
    f.power_loo_pct = 100.0 * best.loo_rel;
  }
  return f;
}

std::vector<double> AdaptiveProfiler::budgets(const AdaptiveFit& fit) const {
  if (!options_.power_budgets_w.empty()) return options_.power_budgets_w;
  if (fit.power_mw.empty()) return {};
  std::vector<double> w;
  for (double p : fit.power_mw) w.push_back(p / 1000.0);
  const double lo = quantile(w, 0.01), hi = quantile(w, 0.99);
  std::vector<double> out;
  for (size_t k = 0; k < kDefaultBudgets; ++k) out.push_back(lo + (hi - lo) * double(k) / double(kDefaultBudgets - 1));
  return out;
}

std::vector<size_t> AdaptiveProfiler::first_round(const std::vector<bool>& taken, size_t n) const {
  // The most spread of several Latin hypercubes over the knob ranks (largest smallest pairwise distance), each
  // point snapped to the nearest mode not yet taken.
  std::mt19937_64 rng(options_.seed * 0x9E3779B97F4A7C15ULL + 17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<size_t> best;
  double best_spread = -1;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::vector<std::vector<double>> pts(n, std::vector<double>(4));
    for (size_t k = 0; k < 4; ++k) {
      std::vector<size_t> perm(n);
      for (size_t i = 0; i < n; ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      for (size_t i = 0; i < n; ++i) pts[i][k] = (double(perm[i]) + u(rng)) / double(n);
    }
    std::vector<bool> used = taken;
    std::vector<size_t> picks;
    for (const auto& pt : pts) {
      size_t arg = candidates_.size();
      double dist = std::numeric_limits<double>::infinity();
      for (size_t c = 0; c < candidates_.size(); ++c) {
        if (used[c]) continue;
        double s = 0;
        for (size_t k = 0; k < 4; ++k) s += (ranks_[c][k] - pt[k]) * (ranks_[c][k] - pt[k]);
        if (s < dist) {
          dist = s;
          arg = c;
        }
      }
      if (arg == candidates_.size()) break;
      used[arg] = true;
      picks.push_back(arg);
    }
    double spread = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < picks.size(); ++i)
      for (size_t j = i + 1; j < picks.size(); ++j) {
        double s = 0;
        for (size_t k = 0; k < 4; ++k) s += std::pow(ranks_[picks[i]][k] - ranks_[picks[j]][k], 2);
        spread = std::min(spread, s);
      }
    if (spread > best_spread) {
      best_spread = spread;
      best = picks;
    }
  }
  return best;
}

namespace {

// The modes that could be on the time-power Pareto front given the fit's accuracy: no other mode is predicted to
// be better in both by more than the leave-one-out error. Expected improvement alone favours the corners of the
// knob space, where the spread is widest and no optimum lies.
std::vector<bool> near_front(const AdaptiveFit& fit) {
  const size_t c = fit.time_ms.size();
  const double eps_t = std::log1p(fit.time_loo_pct / 100.0), eps_p = std::log1p(fit.power_loo_pct / 100.0);
  std::vector<size_t> order(c);
  for (size_t i = 0; i < c; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fit.power_mw[a] < fit.power_mw[b]; });
  std::vector<double> log_p(c), prefix_min_t(c);
  double run = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < c; ++k) {
    log_p[k] = std::log(fit.power_mw[order[k]]);
    run = std::min(run, std::log(fit.time_ms[order[k]]));
    prefix_min_t[k] = run;
  }
  std::vector<bool> band(c, false);
  for (size_t k = 0; k < c; ++k) {
    const size_t i = order[k];
    // Modes with power below this one's by more than eps_p: a prefix of the order.
    const size_t below = size_t(std::lower_bound(log_p.begin(), log_p.end(), log_p[k] - eps_p) - log_p.begin());
    band[i] = below == 0 || prefix_min_t[below - 1] > std::log(fit.time_ms[i]) - eps_t;
  }
  return band;
}

}  // namespace

std::vector<size_t> AdaptiveProfiler::improvement_round(const AdaptiveFit& fit, const std::vector<Observation>& observed,
                                                        const std::vector<bool>& taken, size_t n) const {
  const size_t c = candidates_.size();
  std::vector<bool> used = taken;
  std::vector<size_t> picks;
  const std::vector<double> budgets_w = budgets(fit);
  if (fit.power_mw.empty() || budgets_w.empty()) {
    // No power model: where the time model is least sure.
    for (size_t k = 0; k < n; ++k) {
      size_t arg = c;
      for (size_t i = 0; i < c; ++i)
        if (!used[i] && (arg == c || fit.log_time_sd[i] > fit.log_time_sd[arg])) arg = i;
      if (arg == c) break;
      used[arg] = true;
      picks.push_back(arg);
    }
    return picks;
  }
  // Incumbent per budget: the log time of the fastest profiled mode within it; with none, a time beyond every
  // prediction so that any mode likely to fit counts as an improvement.
  double worst = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < c; ++i) worst = std::max(worst, std::log(fit.time_ms[i]) + 3 * fit.log_time_sd[i]);
  std::vector<double> incumbent(budgets_w.size(), worst);
  for (const auto& o : observed) {
    if (!o.power_mw) continue;
    for (size_t b = 0; b < budgets_w.size(); ++b)
      if (*o.power_mw <= budgets_w[b] * 1000.0) incumbent[b] = std::min(incumbent[b], std::log(o.time_ms));
  }
  std::vector<double> log_budget;
  for (double b : budgets_w) log_budget.push_back(std::log(b * 1000.0));
  const std::vector<bool> band = near_front(fit);
  for (size_t k = 0; k < n; ++k) {
    size_t arg = c;
    double best = -1;
    // Every mode near the front profiled: the rest compete (the budget is spent in full).
    bool any_band = false;
    for (size_t i = 0; i < c && !any_band; ++i) any_band = !used[i] && band[i];
    for (size_t i = 0; i < c; ++i) {
      if (used[i] || (any_band && !band[i])) continue;
      const double mt = std::log(fit.time_ms[i]), st = std::max(fit.log_time_sd[i], 1e-9);
      const double mp = std::log(fit.power_mw[i]), sp = std::max(fit.log_power_sd[i], 1e-9);
      double score = 0;
      for (size_t b = 0; b < budgets_w.size(); ++b) {
        const double feasible = normal_cdf((log_budget[b] - mp) / sp);
        if (feasible < 1e-6) continue;
        const double z = (incumbent[b] - mt) / st;
        score += feasible * ((incumbent[b] - mt) * normal_cdf(z) + st * normal_pdf(z));
      }
      if (score > best) {
        best = score;
        arg = i;
      }
    }
    if (arg == c) break;
    used[arg] = true;
    picks.push_back(arg);
    // Kriging believer: the pick counts as profiled at its predicted values for the rest of the batch.
    for (size_t b = 0; b < budgets_w.size(); ++b)
      if (std::log(fit.power_mw[arg]) <= log_budget[b])
        incumbent[b] = std::min(incumbent[b], std::log(fit.time_ms[arg]));
  }
  return picks;
}

Result<std::vector<size_t>> AdaptiveProfiler::propose(const std::vector<Observation>& observed,
                                                      size_t max_batch) const {
  std::vector<bool> taken(candidates_.size(), false);
  size_t count = 0;
  for (const auto& o : observed) {
    auto i = index_of(o.mode);
    if (!i) return invalid_argument("adaptive: observed mode " + o.mode.label() + " is not a candidate mode");
    if (!taken[*i]) ++count;
    taken[*i] = true;
  }
  if (count >= options_.budget || max_batch == 0) return std::vector<size_t>{};
  size_t n = std::min(max_batch, options_.budget - count);
  if (options_.strategy == AdaptiveStrategy::kRandom) {
    std::vector<size_t> free;
    for (size_t i = 0; i < candidates_.size(); ++i)
      if (!taken[i]) free.push_back(i);
    std::mt19937_64 rng(options_.seed * 0x9E3779B97F4A7C15ULL + count);
    std::vector<size_t> picks;
    for (size_t k = 0; k < n && !free.empty(); ++k) {
      std::uniform_int_distribution<size_t> d(0, free.size() - 1);
      const size_t j = d(rng);
      picks.push_back(free[j]);
      free.erase(free.begin() + std::ptrdiff_t(j));
    }
    return picks;
  }
  if (count < options_.first_round) {
    // One design for the whole first round (the same for a seed however the round is batched); its points not yet
    // profiled come first, and fresh points fill in for any the caller profiled otherwise.
    n = std::min(n, options_.first_round - count);
    std::vector<size_t> picks;
    for (size_t i : first_round(std::vector<bool>(candidates_.size(), false), options_.first_round))
      if (!taken[i] && picks.size() < n) {
        picks.push_back(i);
        taken[i] = true;
      }
    if (picks.size() < n) {
      const auto more = first_round(taken, n - picks.size());
      picks.insert(picks.end(), more.begin(), more.end());
    }
    return picks;
  }
  JS_ASSIGN_OR_RETURN(AdaptiveFit f, fit(observed));
  return improvement_round(f, observed, taken, n);
}

Result<std::vector<Observation>> AdaptiveProfiler::replay(const std::vector<Observation>& oracle, size_t round_size,
                                                         const RoundCallback& on_round) const {
  if (oracle.size() != candidates_.size())
    return invalid_argument("adaptive: the oracle does not hold one observation per candidate mode");
  std::vector<Observation> observed;
  for (;;) {
    JS_ASSIGN_OR_RETURN(auto next, propose(observed, observed.empty() ? options_.budget : std::max<size_t>(round_size, 1)));
    if (next.empty()) break;
    for (size_t i : next) observed.push_back(oracle[i]);
    if (on_round) JS_RETURN_IF_ERROR(on_round(next, observed));
  }
  return observed;
}

std::vector<BudgetPick> AdaptiveProfiler::choose(const AdaptiveFit& fit, const std::vector<Observation>& observed,
                                                 const std::vector<double>& budgets_w) const {
  std::vector<bool> measured(candidates_.size(), false);
  for (const auto& o : observed)
    if (auto i = index_of(o.mode)) measured[*i] = true;
  std::vector<BudgetPick> out;
  for (double b : budgets_w) {
    BudgetPick pick;
    pick.budget_w = b;
    for (const auto& o : observed) {
      if (!o.power_mw || *o.power_mw > b * 1000.0) continue;
      if (!pick.candidate || o.time_ms < pick.time_ms) {
        pick.candidate = index_of(o.mode);
        pick.measured = true;
        pick.time_ms = o.time_ms;
        pick.power_w = *o.power_mw / 1000.0;
      }
    }
    if (!fit.power_mw.empty()) {
      const double log_b = std::log(b * 1000.0);
      for (size_t i = 0; i < candidates_.size(); ++i) {
        if (measured[i]) continue;
        if (std::log(fit.power_mw[i]) + kPowerBound * fit.log_power_sd[i] > log_b) continue;
        if (!pick.candidate || fit.time_ms[i] < pick.time_ms) {
          pick.candidate = i;
          pick.measured = false;
          pick.time_ms = fit.time_ms[i];
          pick.power_w = fit.power_mw[i] / 1000.0;
        }
      }
      for (size_t i = 0; i < candidates_.size(); ++i) {
        if (measured[i] || (pick.candidate && (i == *pick.candidate || fit.time_ms[i] >= pick.time_ms))) continue;
        if (std::log(fit.power_mw[i]) - kPowerBound * fit.log_power_sd[i] > log_b) continue;
        if (!pick.contender || fit.time_ms[i] < pick.contender_time_ms) {
          pick.contender = i;
          pick.contender_time_ms = fit.time_ms[i];
          pick.contender_power_w = fit.power_mw[i] / 1000.0;
        }
      }
    }
    out.push_back(pick);
  }
  return out;
}

}  // namespace jetsweep::analysis
