// Budget optimisation: the Pareto-based optimiser equals the brute-force scan, picks the observed
// optimum on a corpus through the CLI, and the PowerTrain sec. 5.2 metrics on a hand-made case.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/analyze_cli.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis_fixture.hpp"

using namespace jetsweep::analysis;
using namespace jetsweep::testing;

TEST_CASE("optimizer: equals the brute-force scan for power and time budgets") {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    const size_t n = 1 + seed * 7 % 300;
    std::uniform_int_distribution<int> coarse(1, 40);
    std::vector<double> t(n), p(n);
    for (size_t i = 0; i < n; ++i) {
      t[i] = coarse(rng) * 10.0;
      p[i] = coarse(rng) * 1.5;
    }
    BudgetOptimizer opt(t, p);
    for (double b = 0; b <= 65; b += 0.5) {
      REQUIRE_MESSAGE(opt.fastest_within_power(b) == fastest_within_power_scan(t, p, b), "seed " << seed << " budget " << b);
      const double tb = b * 7;
      REQUIRE_MESSAGE(opt.lowest_power_within_time(tb) == lowest_power_within_time_scan(t, p, tb), "seed " << seed);
    }
  }
}

TEST_CASE("optimizer: the CLI picks the brute-force optimum on observed data") {
  const Corpus c = synthetic_corpus("agx-orin", {"yolo"}, {.noise_pct = 2, .max_modes = 3000});
  const std::string path = "/tmp/jetsweep-analysis-opt-" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream f(path);
    write_corpus_csv(f, c);
  }
  std::vector<double> t, p;
  for (const auto& r : c.rows) {
    t.push_back(r.minibatch_ms);
    p.push_back(*r.power_mw / 1000.0);
  }
  for (double budget : {12.0, 20.0, 27.5, 35.0, 60.0}) {
    const Run r = analyze({"optimize", "--csv", path, "--workload", "yolo", "--power-budget-w", std::to_string(budget),
                           "--json"});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    auto j = boost::json::parse(r.out).as_object();
    auto best = fastest_within_power_scan(t, p, budget);
    REQUIRE(best.has_value());
    const auto& chosen = j.at("chosen").as_object();
    CHECK(chosen.at("cores").to_number<int>() == c.rows[*best].mode.cores);
    CHECK(chosen.at("cpu_mhz").to_number<double>() == doctest::Approx(c.rows[*best].mode.cpu_mhz));
    CHECK(chosen.at("gpu_mhz").to_number<double>() == doctest::Approx(c.rows[*best].mode.gpu_mhz));
    CHECK(chosen.at("emc_mhz").to_number<double>() == doctest::Approx(c.rows[*best].mode.emc_mhz));
    CHECK(chosen.at("time_ms").to_number<double>() == doctest::Approx(t[*best]).epsilon(1e-5));
    CHECK(chosen.at("power_w").to_number<double>() <= budget);
  }
  // Time budget: the lowest-power mode within it.
  const Run r = analyze({"optimize", "--csv", path, "--workload", "yolo", "--time-budget", "400", "--json"});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  auto j = boost::json::parse(r.out).as_object();
  auto best = lowest_power_within_time_scan(t, p, 400);
  CHECK(j.at("chosen").as_object().at("power_w").to_number<double>() == doctest::Approx(p[*best]).epsilon(1e-5));
  std::remove(path.c_str());
}

TEST_CASE("optimizer: PowerTrain sec. 5.2 metrics on a hand-made sweep") {
  // Ground truth: three modes (time ms, power W).
  std::vector<double> t = {300, 200, 100}, p = {10, 20, 30};
  // A strategy that always picks mode 2 (like MAXN): budgets 15, 25, 35.
  auto m = evaluate_sweep("always-2", {15, 25, 35}, t, p, [](double) { return std::optional<size_t>(2); });
  CHECK(m.budgets == 3);
  // Optima: 0, 1, 2 -> penalties (100-300)/300, (100-200)/200, 0.
  CHECK(m.time_penalty_median_pct == doctest::Approx(-50));
  CHECK(m.time_penalty_mean_pct == doctest::Approx((-200.0 / 3 - 50 + 0) / 3));
  // Excess power: 15, 5, 0 -> area 20/3 W per solution; over limit 2/3, over limit + 1 W 2/3.
  CHECK(m.excess_power_area_w == doctest::Approx(20.0 / 3));
  CHECK(m.over_limit_pct == doctest::Approx(200.0 / 3));
  CHECK(m.over_limit_plus1_pct == doctest::Approx(200.0 / 3));
  // A strategy 0.5 W over at budget 25 is over the limit but not over limit + 1 W.
  std::vector<double> p2 = {10, 25.5, 30};
  auto m2 = evaluate_sweep("near", {25}, t, p2, [](double) { return std::optional<size_t>(1); });
  CHECK(m2.over_limit_pct == doctest::Approx(100));
  CHECK(m2.over_limit_plus1_pct == doctest::Approx(0));
  // Budgets below every mode are infeasible and not scored.
  auto m3 = evaluate_sweep("x", {5}, t, p, [](double) { return std::optional<size_t>(0); });
  CHECK(m3.budgets == 0);
  CHECK(m3.infeasible == 1);
  CHECK(budget_range(17, 50, 1).size() == 34);
}
