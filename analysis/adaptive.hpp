// Adaptive profiling (issue 33): which power modes of a new workload to profile next, and the workload's
// time/power predictor from the modes profiled so far. The model is a transfer from a reference workload: the
// target is the reference network's prediction corrected by a ridge regression on knob terms (time in log space and
// in milliseconds, the two blended by their leave-one-out errors; power in log space or in watts, whichever predicts
// better by leave-one-out), the penalty chosen by leave-one-out; each time form also comes in variants whose CPU stage
// stops gaining from cores past a count (the data loader's saturation), the variant chosen by leave-one-out; each
// form's predictive spread comes from the ridge posterior scaled by the leave-one-out error (time's: the two forms'
// mixture).
// The strategies: a space-filling first round (Latin hypercube over the knobs' value ranks), then rounds that pick
// the modes of largest constrained expected improvement of the optimum under the power budgets (summed over the
// budgets, batch by kriging believer), or for comparison uniformly at random. Deterministic for a seed.
// An AdaptiveProfiler owns the candidate set and the reference predictions; it is immutable after construction and
// any thread may call it; an AdaptiveFit is a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

enum class AdaptiveStrategy { kFrontImprovement, kRandom };
// "front" | "random"
Result<AdaptiveStrategy> parse_adaptive_strategy(const std::string& text);
const char* to_string(AdaptiveStrategy s);

// What the target's predictor is corrected from (its anchor): the reference's PowerTrain networks, trained on every
// reference mode (the default: a smooth function of the knobs), or the reference's own measured values where it
// measured every candidate (each carries its measurement's noise; measured worse in the replay, docs/ANALYSIS.md).
enum class AdaptiveAnchor { kPowerTrain, kMeasured };
// "powertrain" | "measured"; `where` names the flag or YAML key in the error.
Result<AdaptiveAnchor> parse_adaptive_anchor(const std::string& text, const std::string& where);
const char* to_string(AdaptiveAnchor a);

// The fewest modes a plan may profile: the first round must fit the correction's knob terms.
inline constexpr size_t kAdaptiveMinBudget = 6;

struct AdaptiveOptions {
  AdaptiveStrategy strategy = AdaptiveStrategy::kFrontImprovement;
  size_t budget = 15;                 // modes to profile in all (>= kAdaptiveMinBudget)
  size_t first_round = 0;             // space-filling modes first; 0 = ceil(budget / 2), at least kAdaptiveMinBudget
  std::vector<double> power_budgets_w;  // empty = twelve budgets across the predicted power range
  uint64_t seed = 1;
};

// A profiled mode of the target.
struct Observation {
  ModeKey mode;
  double time_ms = 0;
  std::optional<double> power_mw;  // absent: the board measured no power
};

// The target's predictor after some observations: mean and spread (log space) per candidate.
struct AdaptiveFit {
  std::vector<double> time_ms, power_mw;          // predicted per candidate (the model's mean)
  std::vector<double> log_time_sd, log_power_sd;  // predictive standard deviation of the log
  double time_loo_pct = 0, power_loo_pct = 0;     // leave-one-out MAPE over the observations
  bool power_linear = false;                      // power corrected in watts rather than in log space
  double time_linear_weight = 0;                  // the share of time's form corrected in milliseconds (rest: log)
  int time_log_cores_saturation = 0;              // the cores each time form's CPU stage saturates at (0: none),
  int time_linear_cores_saturation = 0;           // chosen by leave-one-out
  size_t observations = 0;
};

// One power budget's decision: the fastest mode expected to stay within it.
struct BudgetPick {
  double budget_w = 0;
  std::optional<size_t> candidate;  // index into candidates(); nullopt = nothing expected to fit
  bool measured = false;            // the pick was profiled (its values are observations, not predictions)
  double time_ms = 0, power_w = 0;  // the values the decision used
  // The fastest unprofiled mode predicted faster than the pick that may still fit: its power at the other side of
  // the bound (one-sided 25 %) is within the budget. Profiling it decides between the two; nullopt = none.
  std::optional<size_t> contender;
  double contender_time_ms = 0, contender_power_w = 0;  // its predicted values
};

// How much faster the contender is predicted than the pick, in percent; 0 without both.
inline double contender_gain_pct(const BudgetPick& p) {
  return p.contender && p.candidate && p.contender_time_ms > 0 ? 100.0 * (p.time_ms / p.contender_time_ms - 1.0) : 0.0;
}

class AdaptiveProfiler {
 public:
  // `candidates`: every mode of the target's board; `ref_time_ms`/`ref_power_mw`: the reference workload's
  // predictions for them (same order, positive). kInvalidArgument naming --budget below kAdaptiveMinBudget or
  // above the candidates, and on mismatched or non-positive inputs.
  static Result<AdaptiveProfiler> create(std::vector<ModeKey> candidates, std::vector<double> ref_time_ms,
                                         std::vector<double> ref_power_mw, AdaptiveOptions options);

  // The next modes to profile (indices into candidates()), at most `max_batch` and never past the budget: the
  // first round while fewer than first_round modes are profiled, then the strategy's picks. Empty once the
  // budget is spent. Observations must be of candidates; kInvalidArgument otherwise.
  Result<std::vector<size_t>> propose(const std::vector<Observation>& observed, size_t max_batch) const;
  // The predictor from the observations (at least 2 with time; power modelled when at least 2 have power).
  Result<AdaptiveFit> fit(const std::vector<Observation>& observed) const;
  // Per budget: the fastest profiled mode within it, or an unprofiled one whose predicted power, raised to its
  // one-sided 75% predictive bound, fits and whose predicted time beats it; and the contender (BudgetPick).
  std::vector<BudgetPick> choose(const AdaptiveFit& fit, const std::vector<Observation>& observed,
                                 const std::vector<double>& budgets_w) const;
  // The budgets the strategy aims at: the options' or twelve across the fit's predicted power range (1st-99th pct).
  std::vector<double> budgets(const AdaptiveFit& fit) const;

  // Offline replay against known values (oracle[i]: candidate i's observation): rounds of propose-and-reveal,
  // the first round whole and then `round_size` modes each, until the budget is spent. `on_round` sees each round's
  // picks and every observation so far. Returns the observations in the order profiled.
  using RoundCallback = std::function<Status(const std::vector<size_t>&, const std::vector<Observation>&)>;
  Result<std::vector<Observation>> replay(const std::vector<Observation>& oracle, size_t round_size,
                                          const RoundCallback& on_round = {}) const;

  const std::vector<ModeKey>& candidates() const { return candidates_; }
  const AdaptiveOptions& options() const { return options_; }
  std::optional<size_t> index_of(const ModeKey& m) const;

 private:
  AdaptiveProfiler() = default;
  std::vector<size_t> first_round(const std::vector<bool>& taken, size_t n) const;
  std::vector<size_t> improvement_round(const AdaptiveFit& fit, const std::vector<Observation>& observed,
                                        const std::vector<bool>& taken, size_t n) const;

  std::vector<ModeKey> candidates_;
  std::vector<double> ref_log_time_, ref_log_power_;   // log of the reference's predictions
  std::vector<double> ref_power_mw_;
  struct Designs;                           // the regressions' design matrices over the candidates (adaptive.cpp)
  std::shared_ptr<const Designs> designs_;
  std::vector<std::vector<double>> ranks_;     // knob value ranks in [0, 1] per candidate (space filling)
  AdaptiveOptions options_;
};

}  // namespace jetsweep::analysis
