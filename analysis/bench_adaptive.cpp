// jetsweep_analysis_bench --adaptive: `analyze adaptive` replays over seeds on the synthetic corpus and the
// simulator pair, beside the random strategy, the PowerTrain baselines and the noise floor; medians with their
// bootstrap intervals, and what the contender flag tells (bench_main.cpp has the usage).
#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/adaptive.hpp"
#include "analysis/bench_options.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/reports.hpp"
#include "analysis/simulator_corpus.hpp"
#include "analysis/stats.hpp"

namespace jetsweep::analysis::bench {

namespace {

boost::json::value median_or_null(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  return median(v);
}

// The share of `v` above `limit`, in percent (null when empty).
boost::json::value share_over_or_null(const std::vector<double>& v, double limit) {
  if (v.empty()) return nullptr;
  return 100.0 * double(std::count_if(v.begin(), v.end(), [&](double x) { return x > limit; })) / double(v.size());
}

boost::json::value share_of(size_t part, size_t whole) {   // percent; null of nothing
  if (whole == 0) return nullptr;
  return 100.0 * double(part) / double(whole);
}

boost::json::value interval_or_null(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  const auto [lo, hi] = bootstrap_median_interval(v);  // 90 %: two strategies whose intervals overlap are not told apart
  return boost::json::array{lo, hi};
}

// The contender's predicted gain over the choice from which the bench counts a pick as flagged (percent).
constexpr double kFlagGainPct = 15.0;

// One (corpus, target, strategy) row of the adaptive table: each figure per seed.
struct AdaptiveRow {
  std::string corpus, target, strategy;
  std::vector<double> time, power, energy, precision, recall, penalty, over, over1, abstained, seconds;
  std::vector<double> penalty_true_power, penalty_true_time;   // the adaptive strategy's only
  std::vector<double> penalty_vs_mean;  // the adaptive strategy's picks judged on every mode's mean (noise-free)
  // The adaptive strategy's picks pooled over the seeds, each budget's penalty, apart by whether a contender is
  // predicted at least kFlagGainPct faster (BudgetPick): does the flag tell the uncertain choices?
  std::vector<double> flagged_penalty, other_penalty;
  // Of the flagged picks: how many contenders truly fit the budget, and how many of those are truly faster than the
  // pick (the corpus's rows): would profiling the contender have found a better mode?
  size_t flagged_contender_fits = 0, flagged_contender_better = 0;
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
        AdaptiveRow& front_row = by_strategy[r->figures.front().strategy];   // the adaptive strategy's
        const ModeValues& truth = r->oracle;
        for (const auto& p : r->picks) {   // its contender flag against each pick's penalty
          if (!p.candidate) continue;
          const bool flagged = contender_gain_pct(p) >= kFlagGainPct;
          for (const auto& oc : r->figures.front().sweep.outcomes) {
            if (oc.budget_w != p.budget_w || !oc.optimal || !oc.chosen) continue;
            (flagged ? front_row.flagged_penalty : front_row.other_penalty).push_back(oc.time_penalty_pct);
            if (!flagged) continue;
            const size_t k = *p.contender;
            if (truth.power_w[k] > p.budget_w) continue;
            ++front_row.flagged_contender_fits;
            if (truth.time_ms[k] < truth.time_ms[*p.candidate]) ++front_row.flagged_contender_better;
          }
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
                   {"seconds_median", median(r.seconds)},
                   {"flagged_picks", r.flagged_penalty.size()}, {"other_picks", r.other_penalty.size()},
                   {"flagged_penalty_median", median_or_null(r.flagged_penalty)},
                   {"other_penalty_median", median_or_null(r.other_penalty)},
                   {"flagged_penalty_over5_pct", share_over_or_null(r.flagged_penalty, 5.0)},
                   {"other_penalty_over5_pct", share_over_or_null(r.other_penalty, 5.0)},
                   {"flagged_contender_fits", r.flagged_contender_fits},
                   {"flagged_contender_better", r.flagged_contender_better}});
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
  std::cout << "\nThe contender flag (the adaptive strategy's picks over every seed and budget, each budget's penalty; "
               "flagged: an unprofiled mode that may fit is predicted at least "
            << kFlagGainPct << "% faster than the pick)\n"
            << "| corpus | target | strategy | picks | flagged % | pen flagged % | pen others % | flagged > 5% | "
               "others > 5% | flagged: contender fits % | fits and faster % |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  auto cell = [](const boost::json::value& v) {   // one decimal, "-" for null
    std::ostringstream c;
    c.setf(std::ios::fixed);
    c.precision(1);
    if (v.is_null()) c << "-";
    else c << v.to_number<double>();
    return c.str();
  };
  for (const auto& r : rows) {
    if (r.flagged_penalty.empty() && r.other_penalty.empty()) continue;
    const size_t n = r.flagged_penalty.size() + r.other_penalty.size();
    std::cout << "| " << r.corpus << " | " << r.target << " | " << r.strategy << " | " << n << " | "
              << cell(share_of(r.flagged_penalty.size(), n)) << " | "
              << cell(median_or_null(r.flagged_penalty)) << " | " << cell(median_or_null(r.other_penalty)) << " | "
              << cell(share_over_or_null(r.flagged_penalty, 5.0)) << " | "
              << cell(share_over_or_null(r.other_penalty, 5.0)) << " | "
              << cell(share_of(r.flagged_contender_fits, r.flagged_penalty.size())) << " | "
              << cell(share_of(r.flagged_contender_better, r.flagged_penalty.size())) << " |\n";
  }
}

}  // namespace

Status run_adaptive_bench(const BenchOptions& opt) {
  JS_ASSIGN_OR_RETURN(const std::vector<AdaptiveRow> rows, run_adaptive(opt));
  print_adaptive(opt, rows);
  return Status::ok();
}

}  // namespace jetsweep::analysis::bench
