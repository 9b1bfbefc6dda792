// jetsweep_analysis_bench: PowerTrain transfer on 50 modes vs training the reference model, and the
// budget optimiser over every AGX Orin mode (18,096) vs a brute-force scan, on the synthetic corpus.
// With --accuracy instead: transfer accuracy of powertrain against powertrain-paper over seeds, on a
// corpus of --reference-modes modes per workload (--reference, resnet by default -> each target), median and worst MAPE
// per K.
// With --adaptive instead: `analyze adaptive` replays (budget 15) over seeds, --reference -> each target on the 4,368-mode
// synthetic corpus and resnet18/cifar10 -> lenet5/fashion-mnist on the simulator's AGX Orin modes, beside the random
// strategy and PowerTrain with 15 and 50 random modes; medians over seeds, the time per replay (bench_adaptive.cpp).
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
#include <iostream>
#include <string>

#include "analysis/bench_options.hpp"
#include "analysis/nn_predictor.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/prediction.hpp"
#include "analysis/reports.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"

using namespace jetsweep::analysis;
using jetsweep::Result;
using jetsweep::Status;

namespace jetsweep::analysis::bench {

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

}  // namespace jetsweep::analysis::bench

namespace {

using bench::BenchOptions;
using bench::ScratchModelDir;
using bench::transfer_corpus;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
    const Status st = bench::run_adaptive_bench(opt);
    if (!st.ok()) {
      std::cerr << st.to_string() << "\n";
      return 1;
    }
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
