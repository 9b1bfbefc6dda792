// The simulated-board model: calibration anchors, monotonicity, determinism, instance spread.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "agent/device/sim_tables.hpp"
#include "common/perf/sim_board.hpp"
#include "common/perf/board_model.hpp"
#include "support/run_checks.hpp"

using namespace jetsweep;
using namespace jetsweep::perf;

namespace {

RunConfig workload(const std::string& model, const std::string& dataset) {
  return testing::make_run(model, dataset, 16, 4, 6);
}

SimModel model_of(const std::string& cls, const std::string& instance = "ref") {
  auto m = SimModel::create(cls, instance);
  REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  return std::move(m).value();
}

EpochModel epoch_of(const SimModel& m, const RunConfig& c, const Settings& s, int64_t epoch = 1) {
  auto e = m.epoch(c, s, epoch, false);
  REQUIRE_MESSAGE(e.is_ok(), e.status().to_string());
  return e.value();
}

// Per-epoch figures without the instance and epoch deviations (they cancel in ratios anyway).
double compute_epoch(const SimModel& m, const RunConfig& c, const Settings& s) {
  auto e = epoch_of(m, c, s);
  return e.compute_mb_s * static_cast<double>(e.minibatches);
}
double stall_epoch(const SimModel& m, const RunConfig& c, const Settings& s) {
  auto e = epoch_of(m, c, s);
  return e.stall_mb_s * static_cast<double>(e.minibatches);
}

// |a - b| <= rel x |b| (doctest::Approx adds an absolute scale of 1, too loose for ratios).
bool near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

// Mode of SIGMETRICS'23 Table 3 on the AGX Xavier, as table entries.
Settings agx(int cores, int64_t cpu_mhz_khz, int64_t gpu_hz, int64_t emc_hz) { return {cores, cpu_mhz_khz, gpu_hz, emc_hz}; }

}  // namespace

TEST_CASE("every class: reference mode and named modes are entries of its frequency tables") {
  for (const auto& cls : simulated_classes()) {
    CAPTURE(cls);
    auto t = jetsweep::device::sim_board_tables(cls);
    REQUIRE(t.is_ok());
    auto cal = class_calibration(cls);
    REQUIRE(cal.is_ok());
    auto in = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    CHECK(in(t->cpu_khz, cal->reference.cpu_khz));
    CHECK(in(t->gpu_hz, cal->reference.gpu_hz));
    CHECK(in(t->emc_hz, cal->reference.emc_hz));
    CHECK(cal->reference.cores == t->cores);
    auto board = SimBoard::open(cls);
    REQUIRE(board.is_ok());
    for (const auto& m : cal->modes) {
      RunConfig c;
      c.power_mode.name = m.name;
      auto s = board->resolve(c);
      REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
      CHECK(in(t->cpu_khz, s->cpu_khz));
      CHECK(in(t->gpu_hz, s->gpu_hz));
      CHECK(in(t->emc_hz, s->emc_hz));
      c.power_mode.name = std::to_string(m.id);
      CHECK(board->resolve(c).value() == s.value());
    }
  }
}

TEST_CASE("minibatches per epoch = ceil(samples / batch size), capped by max_minibatches") {
  SimModel m = model_of("agx-xavier");
  RunConfig c = workload("lenet5", "fashion-mnist");
  CHECK(m.minibatches_per_epoch(c).value() == 3750);
  c.batch_size = 64;
  CHECK(m.minibatches_per_epoch(c).value() == 938);
  c.max_minibatches = 100;
  CHECK(m.minibatches_per_epoch(c).value() == 100);
  CHECK(m.minibatches_per_epoch(workload("resnet18", "cifar10")).value() == 3125);
  CHECK(m.minibatches_per_epoch(workload("mobilenet_v3", "gld23k")).value() == 1443);  // ceil(23080 / 16)
  CHECK(m.minibatches_per_epoch(workload("vgg11", "cifar10")).status().message().find("no simulation calibration") == 0);
}

TEST_CASE("GPU-bound models: higher GPU frequency, lower compute time, on every class that trains them") {
  struct Case {
    std::string model, dataset, cls;
  };
  for (const auto& k : std::vector<Case>{{"resnet18", "cifar10", "agx-xavier"}, {"resnet18", "cifar10", "agx-orin"},
                                         {"resnet18", "cifar10", "orin-nano"}, {"mobilenet_v3", "gld23k", "agx-xavier"},
                                         {"mobilenet_v3", "gld23k", "xavier-nx"}, {"mobilenet_v3", "gld23k", "agx-orin"}}) {
    CAPTURE(k.model);
    CAPTURE(k.cls);
    SimModel m = model_of(k.cls);
    RunConfig c = workload(k.model, k.dataset);
    Settings s = m.calibration().reference;
    double previous = 0;
    for (int64_t f : m.tables().gpu_hz) {
      s.gpu_hz = f;
      const double t = compute_epoch(m, c, s);
      if (previous > 0) CHECK(t < previous);
      previous = t;
    }
  }
}

TEST_CASE("LeNet: more cores and a faster CPU lower the time; the GPU clock barely matters") {
  for (const auto& cls : simulated_classes()) {
    CAPTURE(cls);
    SimModel m = model_of(cls);
    RunConfig c = workload("lenet5", "mnist");
    Settings s = m.calibration().reference;
    auto e2e = [&](const Settings& x) { return epoch_of(m, c, x).e2e_s(); };
    double previous = 0;
    for (int cores = 1; cores <= m.tables().cores; ++cores) {
      s.cores = cores;
      const double t = e2e(s);
      if (previous > 0) CHECK(t <= previous);
      previous = t;
    }
    s.cores = 1;
    const double one = e2e(s);
    s.cores = m.tables().cores;
    CHECK(e2e(s) < one * 0.9);
    s = m.calibration().reference;
    previous = 0;
    for (int64_t f : m.tables().cpu_khz) {
      s.cpu_khz = f;
      const double t = compute_epoch(m, c, s);
      if (previous > 0) CHECK(t < previous);
      previous = t;
    }
  }
  // SIGMETRICS'23 Sec. 5.6.6: modes m -> g (GPU 420 -> 1377 MHz) improve LeNet's compute by <= 6.8%.
  SimModel m = model_of("agx-xavier");
  RunConfig c = workload("lenet5", "mnist");
  const double mode_m = compute_epoch(m, c, agx(8, 2265600, 420750000, 2133000000));
  const double mode_g = compute_epoch(m, c, agx(8, 2265600, 1377000000, 2133000000));
  CHECK(mode_g < mode_m);
  CHECK(mode_g > mode_m * (1 - 0.08));
}

TEST_CASE("AGX Xavier anchors of SIGMETRICS'23 Sec. 5.6 are reproduced") {
  SimModel m = model_of("agx-xavier");
  const Settings b = agx(8, 1190400, 675750000, 1331200000);  // Table 3 b: 8c/1200/670/1333
  const Settings c_ = agx(8, 1190400, 905250000, 1331200000); // c: GPU 900
  const Settings d = agx(8, 1190400, 905250000, 1600000000);  // d: EMC 1600
  const Settings e = agx(8, 2112000, 905250000, 1600000000);  // e: CPU 2100
  const Settings f = agx(2, 2112000, 905250000, 1600000000);  // f: 2 cores
  const Settings g = m.calibration().reference;               // g: MAXN
  const Settings h = agx(8, 2265600, 1377000000, 1065600000); // h: EMC 1066
  RunConfig lenet = workload("lenet5", "mnist");
  RunConfig resnet = workload("resnet18", "cifar10");
  RunConfig mobilenet = workload("mobilenet_v3", "gld23k");
  // Sec. 5.6.4: b -> c cuts ResNet compute by 22.3% (632 s -> 491 s), MobileNet by 12.6%.
  CHECK(near(1 - compute_epoch(m, resnet, c_) / compute_epoch(m, resnet, b), 0.223, 0.25));
  CHECK(near(1 - compute_epoch(m, mobilenet, c_) / compute_epoch(m, mobilenet, b), 0.126, 0.25));
  CHECK(near(compute_epoch(m, resnet, b), 632, 0.25));
  // Sec. 5.6.6: d -> e cuts LeNet compute by 36.8%; e -> f raises it by 35.9%.
  CHECK(near(1 - compute_epoch(m, lenet, e) / compute_epoch(m, lenet, d), 0.368, 0.15));
  CHECK(near(compute_epoch(m, lenet, f) / compute_epoch(m, lenet, e) - 1, 0.359, 0.25));
  // Sec. 5.6.5: d -> e cuts the stall by 31-38.7%; e -> f raises LeNet's by 54.4%.
  const double stall_drop = 1 - stall_epoch(m, lenet, e) / stall_epoch(m, lenet, d);
  CHECK(stall_drop > 0.30);
  CHECK(stall_drop < 0.40);
  CHECK(near(stall_epoch(m, lenet, f) / stall_epoch(m, lenet, e) - 1, 0.544, 0.25));
  // Sec. 5.6.7: h -> g (EMC 1066 -> 2133 MHz) cuts compute by 33.4% / 25.8% / 28%.
  CHECK(near(1 - compute_epoch(m, lenet, g) / compute_epoch(m, lenet, h), 0.334, 0.1));
  CHECK(near(1 - compute_epoch(m, mobilenet, g) / compute_epoch(m, mobilenet, h), 0.28, 0.1));
  CHECK(near(1 - stall_epoch(m, lenet, g) / stall_epoch(m, lenet, h), 0.344, 0.1));
}

TEST_CASE("power: AGX base load 7.5 W, LeNet mostly base load, ResNet 31 W, MAXN vs GPU 114.75 MHz") {
  SimModel m = model_of("agx-xavier");
  const Settings g = m.calibration().reference;
  const double pf = m.instance_power_factor();
  CHECK(m.calibration().base_w == doctest::Approx(7.527));
  auto lenet = epoch_of(m, workload("lenet5", "mnist"), g);
  const double base_share = 7.527 * pf / lenet.power_w;   // Sec. 5.6.2: 65-80% for LeNet
  CHECK(base_share > 0.65);
  CHECK(base_share < 0.80);
  auto resnet_g = epoch_of(m, workload("resnet18", "cifar10"), g);
  CHECK(near(resnet_g.power_w / pf, 31.0, 0.01));
  Settings low = g;
  low.gpu_hz = 114750000;
  auto resnet_low = epoch_of(m, workload("resnet18", "cifar10"), low);
  // Sec. 5.6: MAXN is 10.3x faster, draws 3.6x the power and uses 0.4x the energy.
  const double power_ratio = resnet_g.power_w / resnet_low.power_w;
  CHECK(power_ratio > 3.0);
  CHECK(power_ratio < 4.5);
  const double energy_ratio = (resnet_g.power_w * resnet_g.e2e_s()) / (resnet_low.power_w * resnet_low.e2e_s());
  CHECK(energy_ratio > 0.3);
  CHECK(energy_ratio < 0.55);
  CHECK(resnet_low.e2e_s() / resnet_g.e2e_s() > 7.0);
}

TEST_CASE("reference epochs match the published per-class figures") {
  struct Anchor {
    std::string cls, model, dataset;
    double e2e_s, power_w;
  };
  for (const auto& a : std::vector<Anchor>{{"agx-xavier", "lenet5", "mnist", 31.4, 11.1},
                                           {"nano", "lenet5", "mnist", 80.6, 5.0},          // 670 epochs in 15 h, 5 W
                                           {"agx-xavier", "resnet18", "cifar10", 349, 31.0},
                                           {"agx-xavier", "mobilenet_v3", "gld23k", 298, 25.0},
                                           {"xavier-nx", "mobilenet_v3", "gld23k", 576, 11.0},
                                           {"agx-orin", "resnet18", "cifar10", 349 / 2.73, 51.1}}) {
    CAPTURE(a.cls);
    CAPTURE(a.model);
    SimModel m = model_of(a.cls);
    auto e = epoch_of(m, workload(a.model, a.dataset), m.calibration().reference);
    const double noise = m.calibration().epoch_noise;
    CHECK(near(e.e2e_s() / m.instance_time_factor(), a.e2e_s, noise + 0.005));
    CHECK(near(e.power_w / m.instance_power_factor(), a.power_w, 0.005));
  }
  // Devices that cannot train a model say so.
  auto nano = model_of("nano");
  auto r = nano.epoch(workload("resnet18", "cifar10"), nano.calibration().reference, 1, false);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("runs out of memory") != std::string::npos);
}

TEST_CASE("instances: deterministic per id, spread across ids within the published range") {
  for (const auto& cls : simulated_classes()) {
    CAPTURE(cls);
    RunConfig c = workload("lenet5", "mnist");
    SimModel a1 = model_of(cls, "d1");
    SimModel a2 = model_of(cls, "d1");
    const Settings ref = a1.calibration().reference;
    CHECK(a1.instance_time_factor() == a2.instance_time_factor());
    CHECK(epoch_of(a1, c, ref).e2e_s() == epoch_of(a2, c, ref).e2e_s());
    CHECK(epoch_of(a1, c, ref).power_w == epoch_of(a2, c, ref).power_w);
    double tmin = 1e9, tmax = 0, emin = 1e18, emax = 0;
    std::set<double> distinct;
    for (int i = 0; i < 40; ++i) {
      SimModel m = model_of(cls, "d" + std::to_string(i));
      const double t = m.instance_time_factor();
      const double e = t * m.instance_power_factor();
      distinct.insert(t);
      tmin = std::min(tmin, t);
      tmax = std::max(tmax, t);
      emin = std::min(emin, e);
      emax = std::max(emax, e);
    }
    const double spread = a1.calibration().time_spread;
    CHECK(distinct.size() == 40);
    CHECK(tmax / tmin - 1 <= spread + 1e-9);
    CHECK(tmax / tmin - 1 >= 0.7 * spread);   // 40 draws cover most of the range
    CHECK(emax / emin - 1 <= a1.calibration().energy_spread + 0.002);
  }
}

TEST_CASE("epoch-to-epoch variation is small and epoch 0 is slower") {
  SimModel m = model_of("nano", "d2");
  RunConfig c = workload("lenet5", "mnist");
  const Settings ref = m.calibration().reference;
  double lo = 1e9, hi = 0;
  for (int64_t e = 1; e < 50; ++e) {
    const double t = epoch_of(m, c, ref, e).e2e_s();
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  CHECK(hi > lo);
  const double n = m.calibration().epoch_noise;
  CHECK(hi / lo <= (1 + n) / (1 - n) + 1e-12);  // S23 Sec. 5.4.1: within 1%
  auto warm0 = m.epoch(c, ref, 0, false).value();
  auto cold0 = m.epoch(c, ref, 0, true).value();
  CHECK(warm0.e2e_s() > hi);
  CHECK(cold0.e2e_s() > warm0.e2e_s());
  CHECK(near(cold0.cold_stall_s, 46.0 / 13.3, 1e-9));  // 46 MB from the SD card
}
