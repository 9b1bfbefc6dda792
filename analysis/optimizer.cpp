#include "analysis/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/pareto.hpp"
#include "analysis/stats.hpp"

namespace jetsweep::analysis {

BudgetOptimizer::BudgetOptimizer(std::vector<double> time_ms, std::vector<double> power_w)
    : time_(std::move(time_ms)), power_(std::move(power_w)) {
  // Front with x = power, y = time: power ascending, time strictly descending; among equal points the
  // lowest index. Its last point within a power budget is the fastest such mode.
  front_ = pareto_front(power_, time_);
  for (size_t i : front_) {
    front_power_.push_back(power_[i]);
    front_time_.push_back(time_[i]);
  }
}

std::optional<size_t> BudgetOptimizer::fastest_within_power(double budget_w) const {
  auto it = std::upper_bound(front_power_.begin(), front_power_.end(), budget_w);
  if (it == front_power_.begin()) return std::nullopt;
  return front_[static_cast<size_t>(it - front_power_.begin()) - 1];
}

std::optional<size_t> BudgetOptimizer::lowest_power_within_time(double budget_ms) const {
  // front_time_ is strictly descending: the first point with time <= budget has the lowest power.
  auto it = std::lower_bound(front_time_.begin(), front_time_.end(), budget_ms, std::greater<double>());
  if (it == front_time_.end()) return std::nullopt;
  return front_[static_cast<size_t>(it - front_time_.begin())];
}

namespace {

// The index with the lowest `objective` (then the lowest `limited`) among those with limited[i] <= budget.
std::optional<size_t> scan_best(const std::vector<double>& objective, const std::vector<double>& limited, double budget) {
  std::optional<size_t> best;
  for (size_t i = 0; i < objective.size(); ++i) {
    if (limited[i] > budget) continue;
    if (!best || objective[i] < objective[*best] || (objective[i] == objective[*best] && limited[i] < limited[*best]))
      best = i;
  }
  return best;
}

}  // namespace

std::optional<size_t> fastest_within_power_scan(const std::vector<double>& time_ms, const std::vector<double>& power_w,
                                                double budget_w) {
  return scan_best(time_ms, power_w, budget_w);
}

std::optional<size_t> lowest_power_within_time_scan(const std::vector<double>& time_ms,
                                                    const std::vector<double>& power_w, double budget_ms) {
  return scan_best(power_w, time_ms, budget_ms);
}

SweepMetrics summarise_sweep(std::string strategy, std::vector<BudgetOutcome> outcomes, int infeasible) {
  SweepMetrics m;
  m.strategy = std::move(strategy);
  m.infeasible = infeasible;
  m.budgets = static_cast<int>(outcomes.size());
  std::vector<double> penalties;
  double excess = 0;
  int over = 0, over1 = 0;
  for (const auto& o : outcomes) {
    penalties.push_back(o.time_penalty_pct);
    excess += o.excess_power_w;
    if (o.excess_power_w > 0) ++over;
    if (o.excess_power_w > 1.0) ++over1;
  }
  if (!outcomes.empty()) {
    const double n = static_cast<double>(outcomes.size());
    m.time_penalty_median_pct = median(penalties);
    m.time_penalty_q1_pct = quantile(penalties, 0.25);
    m.time_penalty_q3_pct = quantile(penalties, 0.75);
    m.time_penalty_mean_pct = mean(penalties);
    m.excess_power_area_w = excess / n;
    m.over_limit_pct = 100.0 * over / n;
    m.over_limit_plus1_pct = 100.0 * over1 / n;
  }
  m.outcomes = std::move(outcomes);
  return m;
}

std::vector<double> budget_range(double from, double to, double step) {
  std::vector<double> out;
  if (step <= 0 || to < from) return out;
  const auto n = static_cast<size_t>(std::floor((to - from) / step + 1e-9)) + 1;
  for (size_t i = 0; i < n; ++i) out.push_back(from + step * static_cast<double>(i));
  return out;
}

}  // namespace jetsweep::analysis
