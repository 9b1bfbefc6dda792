// jetsweep_analysis_bench: PowerTrain transfer on 50 modes vs training the reference model, and the
// budget optimiser over every AGX Orin mode (18,096) vs a brute-force scan, on the synthetic corpus.
// Usage: jetsweep_analysis_bench [--reference-modes N (default 4368)] [--epochs N (default 100)]
//                                [--budgets N (default 1000)] [--seed S] [--json]
#include <boost/json.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "analysis/nn_predictor.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/prediction.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"

using namespace jetsweep::analysis;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t ref_modes = 4368;
  int epochs = 100;
  size_t n_budgets = 1000;
  uint64_t seed = 1;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << ": missing value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--reference-modes") ref_modes = std::stoul(next());
    else if (a == "--epochs") epochs = std::stoi(next());
    else if (a == "--budgets") n_budgets = std::stoul(next());
    else if (a == "--seed") seed = std::stoull(next());
    else if (a == "--json") json = true;
    else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  auto board = synthetic_board("agx-orin").value();
  auto resnet = synthetic_workload("resnet").value();
  auto mobilenet = synthetic_workload("mobilenet").value();
  SyntheticOptions so;
  so.seed = seed;
  so.noise_pct = 2.0;
  Corpus corpus = generate_corpus(board, {resnet, mobilenet}, so);

  // 1. PowerTrain: reference training (time + power) vs transfer on 50 modes.
  PredictRequest req;
  req.method = Method::kPowerTrain;
  req.target = {"mobilenet", "agx-orin"};
  req.references = {{"resnet", "agx-orin"}};
  req.train_modes = 50;
  req.seed = seed;
  req.reference_modes = ref_modes;
  req.nn.epochs = epochs;
  req.model_dir = "";  // no cache: time the reference training
  auto pt = run_prediction(corpus, req);
  if (!pt.is_ok()) {
    std::cerr << pt.status().to_string() << "\n";
    return 1;
  }
  const double ref_s = pt->reference->seconds;
  const double transfer_s = pt->fit_seconds;

  // 2. Optimiser over every mode: predictions for 18,096 modes, then budgets.
  const auto grid = board.modes();
  const double tp0 = now_s();
  auto preds = pt->predict(grid);
  const double predict_s = now_s() - tp0;
  std::vector<double> t, p;
  for (const auto& x : preds) {
    t.push_back(x.time_ms);
    p.push_back(*x.power_mw / 1000.0);
  }
  const double lo = *std::min_element(p.begin(), p.end()), hi = *std::max_element(p.begin(), p.end());
  std::vector<double> budgets;
  for (size_t i = 0; i < n_budgets; ++i) budgets.push_back(lo + (hi - lo) * static_cast<double>(i) / std::max<size_t>(1, n_budgets - 1));
  const double to0 = now_s();
  BudgetOptimizer opt(t, p);
  const double build_s = now_s() - to0;
  size_t agree = 0, checksum = 0;
  const double tq0 = now_s();
  std::vector<std::optional<size_t>> fast;
  fast.reserve(budgets.size());
  for (double b : budgets) fast.push_back(opt.fastest_within_power(b));
  const double query_s = now_s() - tq0;
  const double ts0 = now_s();
  std::vector<std::optional<size_t>> scan;
  scan.reserve(budgets.size());
  for (double b : budgets) scan.push_back(fastest_within_power_scan(t, p, b));
  const double scan_s = now_s() - ts0;
  for (size_t i = 0; i < budgets.size(); ++i) {
    if (fast[i] == scan[i]) ++agree;
    if (fast[i]) checksum += *fast[i];
  }
  const double single0 = now_s();
  BudgetOptimizer one(t, p);
  auto single = one.fastest_within_power((lo + hi) / 2);
  const double single_s = now_s() - single0;
  const double single_scan0 = now_s();
  auto single_scan = fastest_within_power_scan(t, p, (lo + hi) / 2);
  const double single_scan_s = now_s() - single_scan0;

  if (json) {
    boost::json::object o;
    o["reference_modes"] = pt->reference->modes;
    o["nn_epochs"] = epochs;
    o["reference_training_s"] = ref_s;
    o["transfer_50_modes_s"] = transfer_s;
    o["transfer_vs_reference_ratio"] = transfer_s / ref_s;
    o["time_mape_pct"] = *pt->time_mape_pct;
    o["power_mape_pct"] = *pt->power_mape_pct;
    o["predict_all_modes_s"] = predict_s;
    o["modes"] = grid.size();
    o["budgets"] = budgets.size();
    o["optimizer_build_s"] = build_s;
    o["optimizer_queries_s"] = query_s;
    o["scan_queries_s"] = scan_s;
    o["scan_vs_optimizer_ratio"] = scan_s / (build_s + query_s);
    o["single_budget_optimizer_s"] = single_s;
    o["single_budget_scan_s"] = single_scan_s;
    o["agreement"] = agree;
    o["same_single_pick"] = single == single_scan;
    std::cout << boost::json::serialize(o) << "\n";
  } else {
    std::cout << "PowerTrain (synthetic AGX Orin, resnet -> mobilenet, seed " << seed << ")\n"
              << "  reference training, time+power, " << pt->reference->modes << " modes x " << epochs
              << " epochs: " << ref_s << " s\n"
              << "  transfer on 50 modes (time+power):               " << transfer_s << " s  (ratio "
              << transfer_s / ref_s << ")\n"
              << "  held-out time_mape_pct " << *pt->time_mape_pct << ", power_mape_pct " << *pt->power_mape_pct
              << " over " << pt->held_out.size() << " modes\n"
              << "  predicting all " << grid.size() << " modes: " << predict_s << " s\n"
              << "Optimiser over " << grid.size() << " modes, " << budgets.size() << " power budgets\n"
              << "  Pareto build " << build_s * 1e3 << " ms + queries " << query_s * 1e3 << " ms = "
              << (build_s + query_s) * 1e3 << " ms\n"
              << "  brute-force scan per budget: " << scan_s * 1e3 << " ms  (ratio " << scan_s / (build_s + query_s)
              << "x)\n"
              << "  one budget: optimiser (build+query) " << single_s * 1e3 << " ms, scan " << single_scan_s * 1e3
              << " ms; picks " << (single == single_scan ? "agree" : "DIFFER") << "\n"
              << "  picks agree on " << agree << "/" << budgets.size() << " budgets (checksum " << checksum << ")\n";
  }
  return agree == budgets.size() && single == single_scan ? 0 : 1;
}
