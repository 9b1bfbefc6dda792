// What each `jetsweep analyze` command computes, as plain data: one report struct per command and the function
// that computes it from a corpus and the command's query. Printers (print_reports.hpp) format a report as text,
// JSON or a plot. Pure functions and value types; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/adaptive.hpp"
#include "analysis/corpus.hpp"
#include "analysis/db_source.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/prediction.hpp"
#include "analysis/variability.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// Text labels of configurations: the mode, every axis that varies within the data or was selected, plus pinned
// clocks, a fan setting other than auto and dropped caches whenever they hold.
struct ConfigLabels {
  std::set<std::string> show;
  explicit ConfigLabels(const Corpus& corpus);
  std::string operator()(const AxisMap& axes) const { return config_label(axes, &show); }
};

// What every report carries from its corpus: the --where selection, the --pool-over axes, the labels.
struct ReportContext {
  std::vector<std::pair<std::string, std::string>> selected;
  std::vector<std::string> pooled_over;
  ConfigLabels labels;
  explicit ReportContext(const Corpus& corpus)
      : selected(corpus.selected), pooled_over(corpus.pooled_over), labels(corpus) {}
};

// variability: epochs 1+ per board instance, workload and configuration.
struct VariabilityCommandReport {
  ReportContext context;
  VariabilityReport report;
};
// `workload` empty = every workload; kInvalidArgument when no epoch 1+ matches.
Result<VariabilityCommandReport> variability_report(const Corpus& corpus, const std::string& workload);

// pareto: the front of one workload's modes with power over two of time, power and energy (both minimised).
struct ParetoQuery {
  WorkloadRef workload;
  std::string x = "time";   // time | energy
  std::string y = "power";  // power | energy
};
struct ParetoReport {
  ReportContext context;
  WorkloadData workload;
  std::string x_unit, y_unit;     // time_ms, power_w or energy_mj
  std::vector<ModeRecord> modes;  // the workload's modes with power
  std::vector<double> x, y;       // per entry of `modes`
  std::vector<size_t> front;      // indices into `modes`
  int modes_without_power = 0;
};
Result<ParetoReport> pareto_report(const Corpus& corpus, const ParetoQuery& query);

// predict: a method's held-out accuracy on one workload.
struct PredictReport {
  ReportContext context;
  PredictRequest request;
  PredictOutcome outcome;
};
Result<PredictReport> predict_report(const Corpus& corpus, const PredictRequest& request);

// optimize: the mode a budget picks from observed or predicted values, judged by the observed optimum, and a
// sweep of power budgets against the PowerTrain baselines (MAXN, a Pareto over 50 random modes).
struct OptimizeQuery {
  WorkloadRef workload;
  std::string method = "observed";       // observed | linear | nn | powertrain | powertrain-paper
  std::optional<PredictRequest> predict;  // for the prediction methods
  std::optional<double> power_budget_w;
  std::optional<double> time_budget_ms;
  std::optional<std::vector<double>> sweep_budgets_w;  // --sweep; else a 1 W sweep for prediction methods
  uint64_t seed = 1;
  std::optional<StoredAdaptiveFit> adaptive;   // method "adaptive": the campaign's fitted predictor (db_source.hpp)
};
struct ModeValues {  // modes with time (ms per minibatch) and power (W)
  std::vector<ModeKey> modes;
  std::vector<double> time_ms, power_w;
  void add(const ModeKey& mode, double t, double p);
};
struct OptimizeReport {
  OptimizeReport(const Corpus& corpus, WorkloadData workload) : context(corpus), target(std::move(workload)) {}
  ReportContext context;
  WorkloadData target;
  std::string method;
  uint64_t seed = 1;
  std::optional<double> power_budget_w, time_budget_ms;
  ModeValues observed;    // ground truth: the target's modes with power
  ModeValues candidates;  // observed modes, or every mode of the board with predicted values
  std::map<ModeKey, size_t> observed_index;
  size_t excluded_candidates = 0;  // non-positive predicted time or power
  std::optional<PredictOutcome> prediction;
  std::optional<PredictRequest> request;
  double predict_seconds = 0, optimize_seconds = 0;
  std::optional<size_t> chosen;   // index into candidates
  std::optional<size_t> optimal;  // index into observed
  std::vector<bool> candidate_measured;   // method "adaptive": per candidate, profiled (else predicted)
  std::optional<int64_t> adaptive_plan;   // method "adaptive": the plan whose fit the candidates are
  std::optional<double> time_penalty_pct, excess_power_w;
  std::vector<double> sweep_budgets_w;
  std::vector<SweepMetrics> sweeps;  // the method, maxn, random50

  bool predicted() const { return method != "observed"; }
  std::optional<size_t> observed_of(size_t candidate) const;
};
Result<OptimizeReport> optimize_report(const Corpus& corpus, const OptimizeQuery& query);

// adaptive: an offline replay of adaptive profiling (adaptive.hpp) against the target's rows as the oracle: a
// mode's time and power are revealed only when the strategy picks it. Judged on every mode of the target, beside
// PowerTrain transfer from the same number of random modes and from 50 (the same seed).
struct AdaptiveQuery {
  WorkloadRef reference, target;
  AdaptiveOptions options;        // budget, strategy, power budgets, seed
  AdaptiveAnchor anchor = AdaptiveAnchor::kPowerTrain;  // measured: the reference's values where it has every mode
  size_t round_size = 2;          // modes per round after the first
  bool cross_board = false;       // allow a reference measured on another board class
  bool baselines = true;          // also PowerTrain with `budget` and 50 random modes
  PredictRequest predict;         // the reference network's options and cache (method powertrain)
};
// One strategy's figures over the target's modes.
struct AdaptiveFigures {
  std::string strategy;           // "adaptive (front)", "powertrain 15 random", ...
  size_t profiled = 0;
  std::optional<double> time_mape_pct, power_mape_pct, energy_mape_pct;  // over the modes not profiled
  double front_precision = 0, front_recall = 0;  // predicted Pareto front (time, power) against the true one
  size_t front_size = 0, true_front_size = 0;
  SweepMetrics sweep;             // per budget: the pick's time penalty against the true optimum, excess power
  size_t abstained = 0;           // budgets with a true optimum where the strategy chose nothing (not in `sweep`)
  // The adaptive strategy's only: the median penalty of its decision rule with the true power of every mode (what
  // its time model costs) and with the true time (what its power model and the power bound cost); each over the
  // budgets where that decision picked and a true optimum exists, and none when there is no such budget.
  std::optional<double> penalty_true_power_pct, penalty_true_time_pct;
  double seconds = 0;             // choosing and fitting, with the reference network's predictions of every mode
                                  // (its training or loading excluded)
};
// A strategy's predictions (time ms, power W per mode of `truth`; profiled modes carry their observations) and its
// pick per budget (an index into `truth`), judged against `truth`: MAPE over the modes not profiled, the predicted
// Pareto front against the true one, the sweep's penalties, the budgets with a true optimum and no pick.
AdaptiveFigures judge_predictions(std::string name, const ModeValues& truth, const std::vector<double>& time_ms,
                                  const std::vector<double>& power_w, const std::vector<bool>& profiled,
                                  const std::vector<double>& budgets_w,
                                  const std::function<std::optional<size_t>(double)>& pick);
struct AdaptiveRound {
  std::vector<ModeKey> modes;     // picked this round, in order
  double seconds = 0;             // proposing this round (fit included)
  std::optional<double> time_loo_pct, power_loo_pct;  // the fit after the round
};
struct AdaptiveReport {
  AdaptiveReport(const Corpus& corpus, WorkloadData workload) : context(corpus), target(std::move(workload)) {}
  ReportContext context;
  WorkloadData target;
  AdaptiveQuery query;
  ReferenceModelInfo reference;
  AdaptiveAnchor anchor = AdaptiveAnchor::kPowerTrain;  // what the adaptive predictor was corrected from
  ModeValues oracle;              // the target's modes with power: the candidates and the ground truth
  std::vector<double> budgets_w;  // the budgets judged (the query's, else 1 W steps across the target's power)
  std::vector<AdaptiveRound> rounds;
  std::vector<BudgetPick> picks;  // the adaptive predictor's pick per budget (candidate indices = oracle rows)
  std::vector<AdaptiveFigures> figures;  // adaptive first, then the baselines
  std::vector<std::string> notes;
  double seconds = 0;             // the whole replay, reference network included
};
Result<AdaptiveReport> adaptive_report(const Corpus& corpus, const AdaptiveQuery& query);

// epochs: stall / compute / other per epoch, epoch 0 apart, one group per board class, workload and
// configuration (means are never taken over unlike rows).
struct EpochsQuery {
  int64_t run = 0;        // 0 = any
  std::string workload;   // empty = any
  std::string device;     // empty = any
  std::string instance;   // empty = any
};
struct EpochGroup {
  std::string device, workload;
  bool simulated = false;
  AxisMap config;
  std::vector<const EpochSample*> epochs;   // in the corpus the report was made from (which must outlive it)
  // Means over epochs 1+ (absent without any), and of the warm-up epochs.
  std::optional<double> later_e2e_s, later_stall_s, later_compute_s, epoch0_e2e_s;
  size_t later_epochs = 0, warmup_epochs = 0;
};
struct EpochsReport {
  ReportContext context;
  EpochsQuery query;
  std::vector<EpochGroup> groups;  // by device, workload, simulated, configuration
};
Result<EpochsReport> epochs_report(const Corpus& corpus, const EpochsQuery& query);
// An epoch's time besides stall and compute (never negative).
double other_seconds(const EpochSample& e);

}  // namespace jetsweep::analysis
