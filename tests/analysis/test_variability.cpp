// Variability (SIGMETRICS'23 sec. 5.4): per-instance distributions over epochs 1+, spread of the
// instance medians, and classes whose instances run different software.
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/stats.hpp"
#include "analysis/variability.hpp"

using namespace jetsweep::analysis;

namespace {
EpochSample sample(const std::string& dev, const std::string& inst, int epoch, double t, double e,
                   const std::string& kernel) {
  EpochSample s;
  s.device = dev;
  s.workload = "lenet5/mnist";
  s.instance = inst;
  s.mode = {6, 1400, 1100, 1600};
  s.epoch = epoch;
  s.time = t;
  s.energy = e;
  s.software = {{"kernel", kernel}, {"torch_version", "1.13"}};
  return s;
}
}  // namespace

TEST_CASE("stats: median, deviation, CV and MAPE") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 2, 3}) == doctest::Approx(2.5));
  CHECK(max_deviation_from_median_pct({100, 101, 95}) == doctest::Approx(5));
  CHECK(coefficient_of_variation_pct({10, 10, 10}) == 0);
  CHECK(coefficient_of_variation_pct({9, 11}) == doctest::Approx(100 * std::sqrt(2.0) / 10));
  CHECK(mape_pct({100, 200}, {110, 180}) == doctest::Approx(10));
  CHECK(quantile({1, 2, 3, 4, 5}, 0.25) == doctest::Approx(2));
}

TEST_CASE("variability: per instance and per class, warm-up excluded, software differences flagged") {
  Corpus c;
  c.epoch_times = true;
  // nx-1: epochs 1+ 100, 102, 98 (epoch 0 = 150 excluded); nx-2: 110, 110, 110 on another kernel.
  for (auto [e, t] : std::vector<std::pair<int, double>>{{0, 150}, {1, 100}, {2, 102}, {3, 98}})
    c.epochs.push_back(sample("xavier-nx", "nx-1", e, t, t * 10, "5.10.104"));
  for (int e = 0; e < 4; ++e) c.epochs.push_back(sample("xavier-nx", "nx-2", e, e == 0 ? 160 : 110, 1100, "5.10.120"));
  for (int e = 0; e < 3; ++e) c.epochs.push_back(sample("nano", "nano-1", e, 50 + e, 200, "4.9"));
  for (int e = 0; e < 3; ++e) c.epochs.push_back(sample("nano", "nano-2", e, 50 + e, 200, "4.9"));
  auto rep = compute_variability(c, "");
  CHECK(rep.warmup_epochs_excluded == 4);
  CHECK(rep.time_unit == "s per epoch");
  REQUIRE(rep.groups.size() == 2);
  const auto& nx = rep.groups[1].device == "xavier-nx" ? rep.groups[1] : rep.groups[0];
  REQUIRE(nx.instances.size() == 2);
  const auto& i1 = nx.instances[0];
  CHECK(i1.instance == "nx-1");
  CHECK(i1.time.n == 3);
  CHECK(i1.time.median == doctest::Approx(100));
  CHECK(i1.time.max_deviation_pct == doctest::Approx(2));
  CHECK(i1.time.cv_pct == doctest::Approx(2));
  CHECK(i1.energy->median == doctest::Approx(1000));
  CHECK(nx.instances[1].time.cv_pct == 0);
  // Instance medians 100 and 110: median 105, max deviation 5/105.
  CHECK(nx.instance_median_spread_pct == doctest::Approx(100.0 * 5 / 105));
  REQUIRE(rep.classes.size() == 2);
  for (const auto& cls : rep.classes) {
    if (cls.device == "xavier-nx") {
      CHECK(cls.differs);
      CHECK(cls.differing_keys == std::vector<std::string>{"kernel"});
    } else {
      CHECK_FALSE(cls.differs);
    }
  }
  CHECK(compute_variability(c, "resnet").groups.empty());
}
