// jetsweep_analysis_bench: PowerTrain transfer on 50 modes vs training the reference model, and the
// budget optimiser over every AGX Orin mode (18,096) vs a brute-force scan, on the synthetic corpus.
// With --accuracy instead: transfer accuracy of powertrain against powertrain-paper over seeds, on a
// corpus of --reference-modes modes per workload (--reference, resnet by default -> each target), median and worst MAPE
// per K.
// With --adaptive instead: `analyze adaptive` replays (budget 15) over seeds, --reference -> each target on the 4,368-mode
// synthetic corpus and resnet18/cifar10 -> lenet5/fashion-mnist on the simulator's AGX Orin modes, beside the random
// strategy and PowerTrain with 15 and 50 random modes; medians over seeds, the time per replay.
// Usage: jetsweep_analysis_bench [--reference-modes N (default 4368)] [--epochs N (default 100)]
//                                [--budgets N (default 1000)] [--seed S] [--json]
//                                [--accuracy [--targets A,B] [--train-modes 15,30,50] [--seeds N]]
//                                [--adaptive [--targets A,B] [--seeds N] [--no-baselines] [--anchor measured]
//                                            [--round-size N] [--first-round N]]
#include <CLI/CLI.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "analysis/nn_predictor.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/prediction.hpp"
#include "analysis/reports.hpp"
#include "analysis/simulator_corpus.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"

using namespace jetsweep::analysis;
using jetsweep::Result;
using jetsweep::Status;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct BenchOptions {
  size_t reference_modes = 4368;
  int epochs = 100;
  size_t budgets = 1000;
  uint64_t seed = 1;
  bool json = false;
  bool accuracy = false;
  bool adaptive = false;
  std::vector<std::string> targets = {"lenet", "mobilenet", "yolo", "bert"};
  std::vector<int> train_modes = {15, 30, 50};
  int seeds = 10;
  bool baselines = true;   // --adaptive: the PowerTrain baselines beside the strategies
  double noise_pct = 2.0;  // the transfer corpus's noise per mode, time and power (uniform +-)
  std::string reference = "resnet";  // --accuracy, --adaptive: the synthetic corpus's reference workload
  std::string anchor = "powertrain"; // --adaptive: what the strategies correct (analysis/adaptive.hpp AdaptiveAnchor)
  size_t round_size = 2;   // --adaptive: modes per round after the first (as `analyze adaptive --round-size`)
  size_t first_round = 0;  // --adaptive: space-filling modes first, 0 = half the budget (`--first-round`)
};

// One (target, K, method) cell of the accuracy table, over seeds 1..N.
struct AccuracyCell {
  std::string target, method;
  int k = 0;
  std::vector<double> time_mape, power_mape;
  double seconds = 0;   // transfer time (time + power models), summed over seeds
};

// The PowerTrain part: reference training (time + power) vs transfer on 50 modes.
struct TransferResult {
  PredictOutcome outcome;
  double reference_s = 0, transfer_s = 0;
};

// The optimiser part: predictions for every mode, then budgets answered by the optimiser and by a scan.
struct OptimiserResult {
  size_t modes = 0, budgets = 0, agree = 0, checksum = 0;
  double predict_s = 0, build_s = 0, query_s = 0, scan_s = 0, single_s = 0, single_scan_s = 0;
  bool same_single_pick = false;
};

Result<TransferResult> run_transfer(const Corpus& corpus, const BenchOptions& opt) {
  PredictRequest req;
  req.method = Method::kPowerTrain;
  req.target = {"mobilenet", "agx-orin"};
  req.references = {{"resnet", "agx-orin"}};
  req.train_modes = 50;
  req.seed = opt.seed;
  req.reference_modes = opt.reference_modes;
  req.nn.epochs = opt.epochs;
  req.model_dir = "";  // no cache: time the reference training
  JS_ASSIGN_OR_RETURN(PredictOutcome pt, run_prediction(corpus, req));
  TransferResult r;
  r.outcome = std::move(pt);
  r.reference_s = r.outcome.reference->seconds;
  r.transfer_s = r.outcome.fit_seconds;
  return r;
}

OptimiserResult run_optimiser(const PredictOutcome& pt, const std::vector<ModeKey>& grid, size_t n_budgets) {
  OptimiserResult r;
  r.modes = grid.size();
  const double tp0 = now_s();
  auto preds = pt.predict(grid);
  r.predict_s = now_s() - tp0;
  std::vector<double> t, p;
  for (const auto& x : preds) {
    t.push_back(x.time_ms);
    p.push_back(*x.power_mw / 1000.0);
  }
  const double lo = *std::min_element(p.begin(), p.end()), hi = *std::max_element(p.begin(), p.end());
  std::vector<double> budgets;
  for (size_t i = 0; i < n_budgets; ++i)
    budgets.push_back(lo + (hi - lo) * static_cast<double>(i) / std::max<size_t>(1, n_budgets - 1));
  r.budgets = budgets.size();
  const double to0 = now_s();
  BudgetOptimizer opt(t, p);
  r.build_s = now_s() - to0;
  const double tq0 = now_s();
  std::vector<std::optional<size_t>> fast;
  fast.reserve(budgets.size());
  for (double b : budgets) fast.push_back(opt.fastest_within_power(b));
  r.query_s = now_s() - tq0;
  const double ts0 = now_s();
  std::vector<std::optional<size_t>> scan;
  scan.reserve(budgets.size());
  for (double b : budgets) scan.push_back(fastest_within_power_scan(t, p, b));
  r.scan_s = now_s() - ts0;
  for (size_t i = 0; i < budgets.size(); ++i) {
    if (fast[i] == scan[i]) ++r.agree;
    if (fast[i]) r.checksum += *fast[i];
  }
  const double single0 = now_s();
  BudgetOptimizer one(t, p);
  auto single = one.fastest_within_power((lo + hi) / 2);
  r.single_s = now_s() - single0;
  const double single_scan0 = now_s();
  auto single_scan = fastest_within_power_scan(t, p, (lo + hi) / 2);
  r.single_scan_s = now_s() - single_scan0;
  r.same_single_pick = single == single_scan;
  return r;
}

void print_json(const BenchOptions& opt, const TransferResult& tr, const OptimiserResult& o) {
  boost::json::object j;
  j["reference_modes"] = tr.outcome.reference->modes;
  j["nn_epochs"] = opt.epochs;
  j["reference_training_s"] = tr.reference_s;
  j["transfer_50_modes_s"] = tr.transfer_s;
  j["transfer_vs_reference_ratio"] = tr.transfer_s / tr.reference_s;
  j["time_mape_pct"] = *tr.outcome.time_mape_pct;
  j["power_mape_pct"] = *tr.outcome.power_mape_pct;
  j["predict_all_modes_s"] = o.predict_s;
  j["modes"] = o.modes;
  j["budgets"] = o.budgets;
  j["optimizer_build_s"] = o.build_s;
  j["optimizer_queries_s"] = o.query_s;
  j["scan_queries_s"] = o.scan_s;
  j["scan_vs_optimizer_ratio"] = o.scan_s / (o.build_s + o.query_s);
  j["single_budget_optimizer_s"] = o.single_s;
  j["single_budget_scan_s"] = o.single_scan_s;
  j["agreement"] = o.agree;
  j["same_single_pick"] = o.same_single_pick;
  std::cout << boost::json::serialize(j) << "\n";
}

void print_text(const BenchOptions& opt, const TransferResult& tr, const OptimiserResult& o) {
  const PredictOutcome& pt = tr.outcome;
  std::cout << "PowerTrain (synthetic AGX Orin, resnet -> mobilenet, seed " << opt.seed << ")\n"
            << "  reference training, time+power, " << pt.reference->modes << " modes x " << opt.epochs
            << " epochs: " << tr.reference_s << " s\n"
            << "  transfer on 50 modes (time+power):               " << tr.transfer_s << " s  (ratio "
            << tr.transfer_s / tr.reference_s << ")\n"
            << "  held-out time_mape_pct " << *pt.time_mape_pct << ", power_mape_pct " << *pt.power_mape_pct
            << " over " << pt.held_out.size() << " modes\n"
            << "  predicting all " << o.modes << " modes: " << o.predict_s << " s\n"
            << "Optimiser over " << o.modes << " modes, " << o.budgets << " power budgets\n"
            << "  Pareto build " << o.build_s * 1e3 << " ms + queries " << o.query_s * 1e3 << " ms = "
            << (o.build_s + o.query_s) * 1e3 << " ms\n"
            << "  brute-force scan per budget: " << o.scan_s * 1e3 << " ms  (ratio " << o.scan_s / (o.build_s + o.query_s)
            << "x)\n"
            << "  one budget: optimiser (build+query) " << o.single_s * 1e3 << " ms, scan " << o.single_scan_s * 1e3
            << " ms; picks " << (o.same_single_pick ? "agree" : "DIFFER") << "\n"
            << "  picks agree on " << o.agree << "/" << o.budgets << " budgets (checksum " << o.checksum << ")\n";
}

// The transfer corpus of --accuracy and --adaptive: the reference (resnet unless --reference says) and the
// --targets on the synthetic AGX Orin grid, --reference-modes modes per workload, 2% noise.
Result<Corpus> transfer_corpus(const BenchOptions& opt) {
  auto board = synthetic_board("agx-orin").value();
  auto reference = synthetic_workload(opt.reference);
  if (!reference.is_ok()) return reference.status().with_context("--reference");
  std::vector<SyntheticWorkload> ws = {*reference};
  for (const auto& t : opt.targets) {
    if (t == opt.reference) return jetsweep::invalid_argument("--targets: '" + t + "' is the reference");
    auto w = synthetic_workload(t);
    if (!w.is_ok()) return w.status().with_context("--targets");
    ws.push_back(*w);
  }
  SyntheticOptions so;
  so.seed = opt.seed;
  so.noise_pct = opt.noise_pct;
  so.max_modes = opt.reference_modes;
  return generate_corpus(board, ws, so);
}

// A scratch directory for reference models, removed when it goes out of scope.
struct ScratchModelDir {
  char path[40] = "/tmp/jetsweep-bench-models-XXXXXX";
  bool made = ::mkdtemp(path) != nullptr;
  ~ScratchModelDir() {
    if (made) std::filesystem::remove_all(path);
  }
};

// Transfer accuracy over seeds: each method's reference models are trained once (cached in a scratch
// directory) and every seed re-samples the K target modes and re-fine-tunes.
Result<std::vector<AccuracyCell>> run_accuracy(const BenchOptions& opt) {
  JS_ASSIGN_OR_RETURN(const Corpus corpus, transfer_corpus(opt));
  ScratchModelDir scratch;
  if (!scratch.made) return jetsweep::io_error("cannot create a scratch model directory");
  const char* tmpl = scratch.path;
  std::vector<AccuracyCell> cells;
  for (const auto& t : opt.targets)
    for (int k : opt.train_modes)
      for (Method m : {Method::kPowerTrainPaper, Method::kPowerTrain}) {
        AccuracyCell c{t, to_string(m), k, {}, {}, 0};
        for (int seed = 1; seed <= opt.seeds; ++seed) {
          PredictRequest req;
          req.method = m;
          req.target = {t, "agx-orin"};
          req.references = {{opt.reference, "agx-orin"}};
          req.train_modes = k;
          req.seed = static_cast<uint64_t>(seed);
          req.nn.epochs = opt.epochs;
          req.model_dir = tmpl;
          auto p = run_prediction(corpus, req);
          if (p.is_ok() && (!p->time_mape_pct || !p->power_mape_pct))
            p = jetsweep::invalid_argument("no held-out modes to score (K covers the corpus)");
          if (!p.is_ok())
            return p.status().with_context(t + ", K " + std::to_string(k) + ", seed " + std::to_string(seed));
          c.time_mape.push_back(*p->time_mape_pct);
          c.power_mape.push_back(*p->power_mape_pct);
          c.seconds += p->fit_seconds;
        }
        cells.push_back(std::move(c));
      }
  return cells;
}

void print_accuracy(const BenchOptions& opt, const std::vector<AccuracyCell>& cells) {
  auto worst = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  if (opt.json) {
    boost::json::array a;
    for (const auto& c : cells)
      a.push_back({{"target", c.target}, {"method", c.method}, {"train_modes", c.k}, {"seeds", c.time_mape.size()},
                   {"time_mape_median", median(c.time_mape)}, {"time_mape_worst", worst(c.time_mape)},
                   {"power_mape_median", median(c.power_mape)}, {"power_mape_worst", worst(c.power_mape)},
                   {"transfer_s_mean", c.seconds / static_cast<double>(c.time_mape.size())}});
    std::cout << boost::json::serialize(a) << "\n";
    return;
  }
  std::cout << "PowerTrain transfer accuracy (synthetic AGX Orin, " << opt.reference_modes
            << " modes per workload, 2% noise, " << opt.reference << " -> target, " << opt.seeds << " seeds; MAPE over the held-out modes)\n"
            << "| target | K | method | time MAPE median | time worst | power median | power worst | transfer s |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  std::cout.setf(std::ios::fixed);
  std::cout.precision(1);
  for (const auto& c : cells) {
    std::cout << "| " << c.target << " | " << c.k << " | " << c.method << " | " << median(c.time_mape) << " | "
              << worst(c.time_mape) << " | " << median(c.power_mape) << " | " << worst(c.power_mape) << " | ";
    std::cout.precision(2);
    std::cout << c.seconds / static_cast<double>(c.time_mape.size()) << " |\n";
    std::cout.precision(1);
  }
}

boost::json::value median_or_null(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  return median(v);
}

boost::json::value interval_or_null(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  const auto [lo, hi] = bootstrap_median_interval(v);  // 90 %: two strategies whose intervals overlap are not told apart
  return boost::json::array{lo, hi};
}

// One (corpus, target, strategy) row of the adaptive table: each figure per seed.
struct AdaptiveRow {
  std::string corpus, target, strategy;
  std::vector<double> time, power, energy, precision, recall, penalty, over, over1, abstained, seconds;
  std::vector<double> penalty_true_power, penalty_true_time;   // the adaptive strategy's only
  std::vector<double> penalty_vs_mean;  // the adaptive strategy's picks judged on every mode's mean (noise-free)
  Status add(const AdaptiveFigures& f) {
    if (!f.time_mape_pct || !f.power_mape_pct || !f.energy_mape_pct)
      return jetsweep::internal_error(f.strategy + ": no modes left unprofiled to score");
    time.push_back(*f.time_mape_pct);
    power.push_back(*f.power_mape_pct);
    energy.push_back(*f.energy_mape_pct);
    abstained.push_back(double(f.abstained));
    precision.push_back(f.front_precision);
    recall.push_back(f.front_recall);
    penalty.push_back(f.sweep.time_penalty_median_pct);
    over.push_back(f.sweep.over_limit_pct);
    over1.push_back(f.sweep.over_limit_plus1_pct);
    seconds.push_back(f.seconds);
    if (f.penalty_true_power_pct) penalty_true_power.push_back(*f.penalty_true_power_pct);
    if (f.penalty_true_time_pct) penalty_true_time.push_back(*f.penalty_true_time_pct);
    return Status::ok();
  }
};

// Replays on one corpus: per target and seed the front strategy with the PowerTrain baselines, and the random
// strategy; the reference network is trained once per corpus (a scratch model directory).
// `clean` is the same corpus without noise: the adaptive picks are also judged on every mode's mean.
Status adaptive_rows(const Corpus& corpus, const Corpus& clean, const std::string& corpus_name,
                     const WorkloadRef& reference, const std::vector<std::string>& targets, const BenchOptions& opt,
                     std::vector<AdaptiveRow>& rows) {
  ScratchModelDir scratch;
  if (!scratch.made) return jetsweep::io_error("cannot create a scratch model directory");
  const char* tmpl = scratch.path;
  for (const auto& t : targets) {
    JS_ASSIGN_OR_RETURN(const WorkloadData mean, select_workload(clean, {t, reference.device}, "--targets"));
    std::map<ModeKey, std::pair<double, double>> mean_of;  // mode -> (ms, W) without noise
    for (const auto& m : mean.modes)
      if (m.power_mw) mean_of[m.mode] = {m.minibatch_ms, *m.power_mw / 1000.0};
    std::map<std::string, AdaptiveRow> by_strategy;
    std::vector<std::string> order;
    for (int seed = 1; seed <= opt.seeds; ++seed) {
      for (AdaptiveStrategy s : {AdaptiveStrategy::kFrontImprovement, AdaptiveStrategy::kRandom}) {
        AdaptiveQuery q;
        q.reference = reference;
        q.target = {t, reference.device};
        q.options.strategy = s;
        q.options.seed = static_cast<uint64_t>(seed);
        q.anchor = opt.anchor == "measured" ? AdaptiveAnchor::kMeasured : AdaptiveAnchor::kPowerTrain;
        q.round_size = opt.round_size;
        q.options.first_round = opt.first_round;
        q.baselines = opt.baselines && s == AdaptiveStrategy::kFrontImprovement;
        q.predict.nn.epochs = opt.epochs;
        q.predict.model_dir = tmpl;
        auto r = adaptive_report(corpus, q);
        if (!r.is_ok()) return r.status().with_context(corpus_name + ", " + t + ", seed " + std::to_string(seed));
        std::vector<double> t_mean, p_mean;
        for (const auto& m : r->oracle.modes) {
          const auto it = mean_of.find(m);
          if (it == mean_of.end()) return jetsweep::internal_error(corpus_name + ", " + t + ": a mode without its mean");
          t_mean.push_back(it->second.first);
          p_mean.push_back(it->second.second);
        }
        const SweepMetrics vs_mean = evaluate_sweep("", r->budgets_w, t_mean, p_mean, [&](double b) {
          for (const auto& p : r->picks)
            if (p.budget_w == b) return p.candidate;
          return std::optional<size_t>{};
        });
        for (const auto& f : r->figures) {
          if (!by_strategy.count(f.strategy)) order.push_back(f.strategy);
          AdaptiveRow& row = by_strategy[f.strategy];
          row.corpus = corpus_name;
          row.target = t;
          row.strategy = f.strategy;
          JS_RETURN_IF_ERROR(row.add(f));
          if (&f == &r->figures.front() && vs_mean.budgets > 0)  // the adaptive strategy's figures come first
            row.penalty_vs_mean.push_back(vs_mean.time_penalty_median_pct);
        }
      }
    }
    for (const auto& name : order) rows.push_back(std::move(by_strategy[name]));
  }
  return Status::ok();
}

// The noise floor: the decision made with every mode's true mean (the same corpus generated without noise), nothing
// profiled, judged like the strategies against the noisy rows. What a perfect model of the means pays, because the
// corpora's 2% noise per mode moves each budget's observed optimum away from its best mean. A strategy gets below it
// only by measuring those optima, or with picks that break their budgets (the penalty credits an over-budget pick's
// speed: read it beside the over-budget shares).
Status noise_floor_rows(const Corpus& noisy, const Corpus& clean, const std::string& corpus_name,
                        const std::string& device, const std::vector<std::string>& targets,
                        std::vector<AdaptiveRow>& rows) {
  for (const auto& t : targets) {
    JS_ASSIGN_OR_RETURN(const WorkloadData truth, select_workload(noisy, {t, device}, "--targets"));
    JS_ASSIGN_OR_RETURN(const WorkloadData mean, select_workload(clean, {t, device}, "--targets"));
    if (truth.modes.size() != mean.modes.size())
      return jetsweep::internal_error(corpus_name + ", " + t + ": the corpus without noise has other modes");
    ModeValues truth_values;
    std::vector<double> t_mean, p_mean;
    for (size_t i = 0; i < truth.modes.size(); ++i) {
      if (!(truth.modes[i].mode == mean.modes[i].mode) || !truth.modes[i].power_mw || !mean.modes[i].power_mw)
        return jetsweep::internal_error(corpus_name + ", " + t + ": the corpus without noise has other modes");
      truth_values.add(truth.modes[i].mode, truth.modes[i].minibatch_ms, *truth.modes[i].power_mw / 1000.0);
      t_mean.push_back(mean.modes[i].minibatch_ms);
      p_mean.push_back(*mean.modes[i].power_mw / 1000.0);
    }
    const auto& p_obs = truth_values.power_w;
    const auto budgets = budget_range(std::ceil(*std::min_element(p_obs.begin(), p_obs.end())),
                                      std::floor(*std::max_element(p_obs.begin(), p_obs.end())), 1.0);
    const BudgetOptimizer by_mean(t_mean, p_mean);
    const auto pick = [&](double b) { return by_mean.fastest_within_power(b); };
    const AdaptiveFigures f = judge_predictions("the true mean, no profiling (noise floor)", truth_values, t_mean,
                                                p_mean, std::vector<bool>(t_mean.size(), false), budgets, pick);
    const SweepMetrics vs_mean = evaluate_sweep("", budgets, t_mean, p_mean, pick);
    if (vs_mean.budgets > 0 && vs_mean.time_penalty_median_pct != 0.0)  // it is each budget's best mean
      return jetsweep::internal_error(corpus_name + ", " + t + ": the decision on the means is not their optimum");
    AdaptiveRow row;  // one figure: the corpus and its means are the same for every seed (`seeds` 1 in --json)
    row.corpus = corpus_name;
    row.target = t;
    row.strategy = f.strategy;
    JS_RETURN_IF_ERROR(row.add(f));
    rows.push_back(std::move(row));
  }
  return Status::ok();
}

Result<std::vector<AdaptiveRow>> run_adaptive(const BenchOptions& opt) {
  std::vector<AdaptiveRow> rows;
  JS_ASSIGN_OR_RETURN(const Corpus synthetic, transfer_corpus(opt));
  const std::string synthetic_name =
      "synthetic " + std::to_string(synthetic.rows.size() / (opt.targets.size() + 1)) + " modes" +
      (opt.reference == "resnet" ? "" : ", " + opt.reference + " reference");
  BenchOptions clean_opt = opt;
  clean_opt.noise_pct = 0;
  JS_ASSIGN_OR_RETURN(const Corpus synthetic_clean, transfer_corpus(clean_opt));
  JS_RETURN_IF_ERROR(
      adaptive_rows(synthetic, synthetic_clean, synthetic_name, {opt.reference, "agx-orin"}, opt.targets, opt, rows));
  JS_RETURN_IF_ERROR(noise_floor_rows(synthetic, synthetic_clean, synthetic_name, "agx-orin", opt.targets, rows));
  SimulatorCorpusOptions sim;
  sim.workloads = {"resnet18/cifar10", "lenet5/fashion-mnist"};
  sim.noise_pct = 2.0;
  sim.seed = opt.seed;
  sim.max_modes = opt.reference_modes;  // PowerTrain's corpus size (a seeded subset of the class's 18,096 modes)
  JS_ASSIGN_OR_RETURN(Corpus simulated, simulator_corpus(sim));
  const std::string simulated_name = "simulator " + std::to_string(simulated.rows.size() / 2) + " modes";
  SimulatorCorpusOptions sim_clean = sim;
  sim_clean.noise_pct = 0;
  JS_ASSIGN_OR_RETURN(const Corpus simulated_clean, simulator_corpus(sim_clean));
  JS_RETURN_IF_ERROR(adaptive_rows(simulated, simulated_clean, simulated_name, {"resnet18/cifar10", "agx-orin"},
                                   {"lenet5/fashion-mnist"}, opt, rows));
  JS_RETURN_IF_ERROR(noise_floor_rows(simulated, simulated_clean, simulated_name, "agx-orin",
                                      {"lenet5/fashion-mnist"}, rows));
  return rows;
}

void print_adaptive(const BenchOptions& opt, const std::vector<AdaptiveRow>& rows) {
  if (opt.json) {
    boost::json::array a;
    for (const auto& r : rows)
      a.push_back({{"corpus", r.corpus}, {"target", r.target}, {"strategy", r.strategy},
                   {"anchor", r.strategy.rfind("adaptive", 0) == 0 ? boost::json::value(opt.anchor) : nullptr},
                   {"round_size", opt.round_size}, {"first_round", opt.first_round},
                   {"seeds", r.time.size()},
                   {"time_mape_median", median(r.time)}, {"time_mape_worst", *std::max_element(r.time.begin(), r.time.end())},
                   {"power_mape_median", median(r.power)}, {"energy_mape_median", median(r.energy)},
                   {"front_precision_median", median(r.precision)}, {"front_recall_median", median(r.recall)},
                   {"time_penalty_median", median(r.penalty)}, {"time_penalty_median_90", interval_or_null(r.penalty)},
                   {"time_penalty_mean", mean(r.penalty)},
                   {"time_penalty_worst", *std::max_element(r.penalty.begin(), r.penalty.end())}, {"over_budget_median", median(r.over)}, {"over_budget_plus1_median", median(r.over1)},
                   {"abstained_median", median(r.abstained)},
                   {"time_penalty_true_power_median", median_or_null(r.penalty_true_power)},
                   {"time_penalty_true_time_median", median_or_null(r.penalty_true_time)},
                   {"time_penalty_vs_mean_median", median_or_null(r.penalty_vs_mean)},
                   {"time_penalty_vs_mean_median_90", interval_or_null(r.penalty_vs_mean)},
                   {"seconds_median", median(r.seconds)}});
    std::cout << boost::json::serialize(a) << "\n";
    return;
  }
  std::cout << "Adaptive profiling replays (budget 15 unless the strategy says otherwise; " << opt.seeds
            << " seeds, medians; the adaptive strategies correct the reference's "
            << (opt.anchor == "measured" ? "measured values" : "network predictions") << "; rounds of "
            << opt.round_size << " after a first round of "
            << (opt.first_round == 0 ? std::string("half the budget") : std::to_string(opt.first_round))
            << "; MAPE over the modes not profiled; penalty: median over 1 W budgets across the "
               "target's power of the pick's time against the true optimum; >B+1W: share of picks over budget by "
               "more than 1 W; no pick: budgets with an optimum where it chose nothing, left out of penalty and >B+1W; "
               "s: choosing and fitting per replay, the reference network's training excluded; pen true P / true t: "
               "the adaptive strategy's penalty with the true power / the true time of every mode; vs mean: its picks' penalty "
               "judged on every mode's mean, the corpus without its 2% noise; noise floor: the decision made with every "
               "mode's mean, judged like the others; 90%: where the median over seeds lies in 90% of 2,000 bootstrap resamples of "
               "the seeds: strategies whose intervals overlap are not told apart by this many seeds; pen mean / worst: the "
               "penalty's mean over the seeds and its worst seed)\n"
            << "| corpus | target | strategy | time MAPE | time worst | power MAPE | energy MAPE | front P | front R | "
               "penalty % | penalty 90% | pen mean % | pen worst % | >B+1W % | no pick | s | pen true P % | pen true t % | pen vs mean % | vs mean 90% |\n"
            << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::cout.setf(std::ios::fixed);
  for (const auto& r : rows) {
    std::cout.precision(1);
    std::cout << "| " << r.corpus << " | " << r.target << " | " << r.strategy << " | " << median(r.time) << " | "
              << *std::max_element(r.time.begin(), r.time.end()) << " | " << median(r.power) << " | "
              << median(r.energy) << " | ";
    std::cout.precision(2);
    std::cout << median(r.precision) << " | " << median(r.recall) << " | ";
    std::cout.precision(1);
    const auto [pen_lo, pen_hi] = bootstrap_median_interval(r.penalty);
    std::cout << median(r.penalty) << " | " << pen_lo << ".." << pen_hi << " | " << mean(r.penalty) << " | "
              << *std::max_element(r.penalty.begin(), r.penalty.end()) << " | " << median(r.over1) << " | "
              << median(r.abstained) << " | ";
    std::cout.precision(2);
    std::cout << median(r.seconds) << " | ";
    std::cout.precision(1);
    for (const auto* v : {&r.penalty_true_power, &r.penalty_true_time, &r.penalty_vs_mean}) {
      if (v->empty()) std::cout << "- | ";
      else std::cout << median(*v) << " | ";
    }
    if (r.penalty_vs_mean.empty()) {
      std::cout << "- | ";
    } else {
      const auto [lo, hi] = bootstrap_median_interval(r.penalty_vs_mean);
      std::cout << lo << ".." << hi << " | ";
    }
    std::cout << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  CLI::App app("PowerTrain transfer vs reference training, and the budget optimiser vs a brute-force scan, on the "
               "synthetic AGX Orin corpus.",
               "jetsweep_analysis_bench");
  app.add_option("--reference-modes", opt.reference_modes,
                 "reference modes trained on (--accuracy: modes per workload in the corpus)")->capture_default_str();
  app.add_option("--epochs", opt.epochs, "NN training epochs")->capture_default_str();
  app.add_option("--budgets", opt.budgets, "power budgets queried")->capture_default_str();
  app.add_option("--seed", opt.seed, "corpus and prediction seed")->capture_default_str();
  app.add_flag("--json", opt.json, "print JSON");
  app.add_flag("--accuracy", opt.accuracy, "transfer accuracy, powertrain vs powertrain-paper, over seeds");
  app.add_flag("--adaptive", opt.adaptive, "adaptive profiling replays against the PowerTrain baselines, over seeds");
  app.add_option("--reference", opt.reference, "--accuracy, --adaptive: the synthetic corpus's reference workload")
      ->capture_default_str();
  app.add_flag("!--no-baselines", opt.baselines, "--adaptive: skip the PowerTrain baselines (the strategies only)");
  app.add_option("--anchor", opt.anchor, "--adaptive: powertrain | measured, what the strategies correct")
      ->check(CLI::IsMember({"powertrain", "measured"}))
      ->capture_default_str();
  app.add_option("--round-size", opt.round_size, "--adaptive: modes per round after the first")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--first-round", opt.first_round, "--adaptive: space-filling modes first (0 = half the budget)")
      ->check(CLI::IsMember(std::vector<size_t>{0}) | CLI::Range(kAdaptiveMinBudget, size_t(15)))
      ->capture_default_str();
  app.add_option("--targets", opt.targets, "--accuracy, --adaptive: target workloads")->delimiter(',')->capture_default_str();
  app.add_option("--train-modes", opt.train_modes, "--accuracy: target modes K")->delimiter(',')->capture_default_str();
  app.add_option("--seeds", opt.seeds, "--accuracy, --adaptive: seeds 1..N")->check(CLI::PositiveNumber)->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (opt.adaptive) {
    auto rows = run_adaptive(opt);
    if (!rows.is_ok()) {
      std::cerr << rows.status().to_string() << "\n";
      return 1;
    }
    print_adaptive(opt, *rows);
    return 0;
  }
  if (opt.accuracy) {
    auto cells = run_accuracy(opt);
    if (!cells.is_ok()) {
      std::cerr << cells.status().to_string() << "\n";
      return 1;
    }
    print_accuracy(opt, *cells);
    return 0;
  }
  auto board = synthetic_board("agx-orin").value();
  SyntheticOptions so;
  so.seed = opt.seed;
  so.noise_pct = 2.0;
  const Corpus corpus = generate_corpus(board, {synthetic_workload("resnet").value(), synthetic_workload("mobilenet").value()}, so);
  auto tr = run_transfer(corpus, opt);
  if (!tr.is_ok()) {
    std::cerr << tr.status().to_string() << "\n";
    return 1;
  }
  const OptimiserResult o = run_optimiser(tr->outcome, board.modes(), opt.budgets);
  if (opt.json) print_json(opt, *tr, o);
  else print_text(opt, *tr, o);
  return o.agree == o.budgets && o.same_single_pick ? 0 : 1;
}
