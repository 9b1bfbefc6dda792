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

TEST_CASE("stats: the bootstrap interval of a median holds the median, has width where samples disagree, repeats") {
  const std::vector<double> spread = {1, 2, 3, 4, 5, 6, 7, 8, 9, 30};
  const auto [lo, hi] = bootstrap_median_interval(spread);
  CHECK(lo <= median(spread));
  CHECK(hi >= median(spread));
  CHECK(hi - lo > 1);  // ten values from 1 to 30: other samples move the median by more than one
  CHECK(bootstrap_median_interval(spread) == std::make_pair(lo, hi));  // seeded
  CHECK(bootstrap_median_interval(spread, 0.9, 2000, 7) != std::make_pair(lo, hi));  // another seed, other resamples
  const auto same = bootstrap_median_interval({5, 5, 5, 5, 5});
  CHECK(same.first == 5);
  CHECK(same.second == 5);
  CHECK(bootstrap_median_interval({7}) == std::make_pair(7.0, 7.0));
  // A level outside [0, 1] is clamped: 1 spans the resampled medians' range, which stays within the values.
  const auto all = bootstrap_median_interval(spread, 1.5);
  CHECK(all == bootstrap_median_interval(spread, 1.0));
  CHECK(all.first >= 1);
  CHECK(all.second <= 30);
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

TEST_CASE("variability: one group per full configuration; simulated instances never flag software") {
  Corpus c;
  c.epoch_times = true;
  // agx-xavier, 2 modes x 2 worker settings on two simulated instances whose kernel strings differ.
  for (const char* inst : {"x-1", "x-2"})
    for (int cores : {4, 8})
      for (const char* workers : {"2", "4"})
        for (int e = 0; e < 3; ++e) {
          EpochSample s = sample("agx-xavier", inst, e, 100.0 / cores * (workers[0] == '4' ? 0.8 : 1.0), 10,
                                 std::string("6.1.0 (sim ") + inst + ")");
          s.mode = {cores, 1000, 1000, 1000};
          s.axes = {{"mode", s.mode.label()}, {"workers", workers}, {"batch_size", "16"}};
          s.simulated = true;
          c.epochs.push_back(s);
        }
  auto rep = compute_variability(c, "");
  REQUIRE(rep.groups.size() == 4);
  for (const auto& g : rep.groups) {
    CHECK(g.simulated);
    CHECK(g.instances.size() == 2);
    CHECK(g.time.n == 4);
    CHECK(g.time.max_deviation_pct == doctest::Approx(0));  // nothing unlike pooled
    CHECK(g.config.count("workers") == 1);
    CHECK(g.mode == g.config.at("mode"));
  }
  REQUIRE(rep.classes.size() == 1);
  CHECK_FALSE(rep.classes[0].differs);
  CHECK(rep.classes[0].simulated_instances.size() == 2);
  CHECK(rep.classes[0].compared_instances == 0);

  // Pooling over workers explicitly: two groups.
  Corpus pooled = c;
  REQUIRE(select_configurations(pooled, {}, {"workers"}).is_ok());
  auto prep = compute_variability(pooled, "");
  REQUIRE(prep.groups.size() == 2);
  CHECK(prep.groups[0].time.n == 8);

  // A real instance beside a simulated one: only real instances are compared, on software facts only.
  Corpus mixed;
  mixed.epoch_times = true;
  auto real1 = sample("nano", "nano-1", 1, 50, 200, "4.9.253");
  real1.software["hostname"] = "a";  // not a software fact
  auto real2 = sample("nano", "nano-2", 1, 50, 200, "4.9.253");
  real2.software["hostname"] = "b";
  auto sim = sample("nano", "nano-sim", 1, 50, 200, "6.1.0");
  sim.simulated = true;
  mixed.epochs = {real1, real2, sim};
  auto mrep = compute_variability(mixed, "");
  REQUIRE(mrep.classes.size() == 1);
  CHECK_FALSE(mrep.classes[0].differs);
  CHECK(mrep.classes[0].compared_instances == 2);
  CHECK(mrep.classes[0].simulated_instances == std::vector<std::string>{"nano-sim"});
  // The simulated rows are a group of their own.
  CHECK(mrep.groups.size() == 2);
}

TEST_CASE("variability: boards that read different bytes are flagged; the same bytes, or none recorded, are not") {
  Corpus c;
  c.epoch_times = true;
  auto add = [&](const std::string& inst, int64_t run, const std::string& fingerprint) {
    for (int e = 0; e < 3; ++e) {
      EpochSample s = sample("xavier-nx", inst, e, 100 + e, 1000, "5.10.104");
      s.run_id = run;
      s.dataset = "mnist";
      s.dataset_fingerprint = fingerprint;
      c.epochs.push_back(s);
    }
  };
  add("nx-1", 1, "");
  add("nx-2", 2, "");
  auto none = compute_variability(c, "");
  CHECK_FALSE(none.data_fingerprints);
  CHECK(none.data_warnings.empty());
  c.epochs.clear();
  add("nx-1", 1, std::string(64, 'a'));
  add("nx-2", 2, std::string(64, 'a'));
  auto same = compute_variability(c, "");
  CHECK(same.data_fingerprints);
  CHECK(same.data_warnings.empty());
  add("nx-3", 3, std::string(64, 'f'));
  auto differs = compute_variability(c, "");
  REQUIRE(differs.data_warnings.size() == 1);   // one line per dataset, each run counted once (not per epoch)
  CHECK(differs.data_warnings[0] == "dataset 'mnist': its runs trained on different data (2 fingerprints): "
                                    "aaaaaaaaaaaa on nx-1, nx-2 (2 runs); ffffffffffff on nx-3 (1 run)");
  // A workload filter leaves other workloads' data out.
  CHECK(compute_variability(c, "resnet18/cifar10").data_warnings.empty());
  // Rows without run ids (a CSV without the column): told apart by instance and fingerprint.
  c.epochs.clear();
  add("nx-1", 0, std::string(64, 'a'));
  add("nx-2", 0, std::string(64, 'b'));
  REQUIRE(compute_variability(c, "").data_warnings.size() == 1);
}
