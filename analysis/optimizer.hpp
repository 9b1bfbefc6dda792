// Power-mode selection under a budget (PowerTrain sec. 5): the fastest mode whose power is within a
// power budget, or the lowest-power mode within a time budget, and the sec. 5.2 quality metrics of a
// strategy against ground truth over a sweep of budgets.
// BudgetOptimizer is immutable after construction; any thread may query it concurrently.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace jetsweep::analysis {

// Answers budget queries over n candidate modes in O(log n) after an O(n log n) build: the power-time
// Pareto front sorted by power (ascending; time then strictly descending) holds every optimum.
class BudgetOptimizer {
 public:
  BudgetOptimizer(std::vector<double> time_ms, std::vector<double> power_w);
  // Minimum time with power <= budget (ties: lower power, then lower index); nullopt if none fits.
  std::optional<size_t> fastest_within_power(double budget_w) const;
  // Minimum power with time <= budget (ties: lower time, then lower index).
  std::optional<size_t> lowest_power_within_time(double budget_ms) const;
  const std::vector<size_t>& front() const { return front_; }
  size_t size() const { return time_.size(); }

 private:
  std::vector<double> time_;
  std::vector<double> power_;
  std::vector<size_t> front_;        // indices, power ascending
  std::vector<double> front_power_;  // power of front_[i]
  std::vector<double> front_time_;   // time of front_[i], strictly descending
};

// The brute-force baselines: one scan over every candidate per query, same tie rules.
std::optional<size_t> fastest_within_power_scan(const std::vector<double>& time_ms, const std::vector<double>& power_w,
                                                double budget_w);
std::optional<size_t> lowest_power_within_time_scan(const std::vector<double>& time_ms,
                                                    const std::vector<double>& power_w, double budget_ms);

// One budget of a sweep: the strategy's pick judged by the ground truth of that mode.
struct BudgetOutcome {
  double budget_w = 0;
  std::optional<size_t> optimal;      // ground-truth optimum (index into the ground-truth arrays)
  std::optional<size_t> chosen;       // strategy's pick (index into the ground-truth arrays)
  double time_penalty_pct = 0;        // 100 * (t_obs(chosen) - t_opt) / t_opt
  double excess_power_w = 0;          // max(0, p_obs(chosen) - budget)
};
struct SweepMetrics {
  std::string strategy;
  int budgets = 0;              // budgets with both a ground-truth optimum and a pick
  int infeasible = 0;           // budgets no observed mode meets, or the strategy had no pick
  double time_penalty_median_pct = 0;
  double time_penalty_q1_pct = 0;
  double time_penalty_q3_pct = 0;
  double time_penalty_mean_pct = 0;
  double excess_power_area_w = 0;   // normalised area of power above the budget: W per solution
  double over_limit_pct = 0;        // share of solutions whose observed power exceeds the budget (A/L)
  double over_limit_plus1_pct = 0;  // ... exceeds budget + 1 W (A/L+1)
  std::vector<BudgetOutcome> outcomes;
};
// `pick(budget)` returns the strategy's choice as an index into the ground-truth arrays (or nullopt).
template <class Pick>
SweepMetrics evaluate_sweep(const std::string& strategy, const std::vector<double>& budgets_w,
                            const std::vector<double>& true_time_ms, const std::vector<double>& true_power_w,
                            Pick&& pick);
SweepMetrics summarise_sweep(std::string strategy, std::vector<BudgetOutcome> outcomes, int infeasible);

// Budgets from `from` to `to` inclusive in steps of `step` (PowerTrain: 17..50 W by 1 W).
std::vector<double> budget_range(double from, double to, double step);

template <class Pick>
SweepMetrics evaluate_sweep(const std::string& strategy, const std::vector<double>& budgets_w,
                            const std::vector<double>& true_time_ms, const std::vector<double>& true_power_w,
                            Pick&& pick) {
  BudgetOptimizer truth(true_time_ms, true_power_w);
  std::vector<BudgetOutcome> outcomes;
  int infeasible = 0;
  for (double b : budgets_w) {
    BudgetOutcome o;
    o.budget_w = b;
    o.optimal = truth.fastest_within_power(b);
    o.chosen = pick(b);
    if (!o.optimal || !o.chosen) {
      ++infeasible;
      continue;
    }
    const double t_opt = true_time_ms[*o.optimal];
    o.time_penalty_pct = 100.0 * (true_time_ms[*o.chosen] - t_opt) / t_opt;
    o.excess_power_w = true_power_w[*o.chosen] > b ? true_power_w[*o.chosen] - b : 0.0;
    outcomes.push_back(o);
  }
  return summarise_sweep(strategy, std::move(outcomes), infeasible);
}

}  // namespace jetsweep::analysis
