// Simulator corpora (analyze synth --simulator): every mode of a class's tables with the simulator's own
// modelled figures, a seeded subset, noise, and clear errors for what the simulator does not model.
#include <doctest/doctest.h>

#include <set>

#include "analysis/simulator_corpus.hpp"
#include "common/perf/board_model.hpp"
#include "common/run_config.hpp"

using namespace jetsweep;
using namespace jetsweep::analysis;

TEST_CASE("simulator corpus: every mode of the class, the simulator's own figures") {
  SimulatorCorpusOptions o;
  o.board_class = "orin-nano";
  o.workloads = {"lenet5/fashion-mnist"};
  auto c = simulator_corpus(o);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  auto model = perf::SimModel::nominal("orin-nano").value();
  const auto& t = model.tables();
  REQUIRE(c->rows.size() == t.mode_count());
  std::set<ModeKey> distinct;
  for (const auto& r : c->rows) distinct.insert(r.mode);
  CHECK(distinct.size() == c->rows.size());

  // One row recomputed from the simulator directly: the slowest mode.
  const perf::Settings slow{1, t.cpu_khz.front(), t.gpu_hz.front(), t.emc_hz.front(), model.calibration().gpu_tpcs};
  RunConfig rc;
  rc.device = "orin-nano";
  rc.model = "lenet5";
  rc.dataset = "fashion-mnist";
  rc.batch_size = 16;
  rc.workers = 4;
  auto em = model.epoch(rc, slow, 1, false).value();
  const ModeKey key{1, t.cpu_khz.front() / 1e3, t.gpu_hz.front() / 1e6, t.emc_hz.front() / 1e6};
  const ModeRecord* row = nullptr;
  for (const auto& r : c->rows)
    if (r.mode == key) row = &r;
  REQUIRE(row != nullptr);
  CHECK(row->workload == "lenet5/fashion-mnist");
  CHECK(row->simulated);
  CHECK(row->minibatch_ms == doctest::Approx(1e3 * (em.stall_mb_s + em.compute_mb_s)).epsilon(1e-12));
  CHECK(*row->power_mw == doctest::Approx(1e3 * em.power_w).epsilon(1e-12));
  // The modelled workload is slower at the lowest clocks than at the highest.
  const ModeKey fast{t.cores, t.cpu_khz.back() / 1e3, t.gpu_hz.back() / 1e6, t.emc_hz.back() / 1e6};
  for (const auto& r : c->rows)
    if (r.mode == fast) CHECK(r.minibatch_ms < row->minibatch_ms);
}

TEST_CASE("simulator corpus: a seeded subset, noise within its bound, every workload of the class by default") {
  SimulatorCorpusOptions o;
  o.board_class = "agx-orin";
  o.max_modes = 300;
  o.seed = 5;
  auto a = simulator_corpus(o);
  REQUIRE(a.is_ok());
  std::set<std::string> names;
  for (const auto& r : a->rows) names.insert(r.workload);
  CHECK(names.count("resnet18/cifar10") == 1);
  CHECK(names.count("lenet5/fashion-mnist") == 1);
  CHECK(a->rows.size() == 300 * names.size());
  auto b = simulator_corpus(o);
  REQUIRE(b.is_ok());
  for (size_t i = 0; i < a->rows.size(); ++i) CHECK(a->rows[i].mode == b->rows[i].mode);
  o.noise_pct = 2;
  auto noisy = simulator_corpus(o);
  REQUIRE(noisy.is_ok());
  bool differs = false;
  for (size_t i = 0; i < a->rows.size(); ++i) {
    const double f = noisy->rows[i].minibatch_ms / a->rows[i].minibatch_ms;
    CHECK(f >= 0.98 - 1e-12);
    CHECK(f <= 1.02 + 1e-12);
    differs = differs || f != 1.0;
  }
  CHECK(differs);
}

TEST_CASE("simulator corpus: unknown class, malformed or uncalibrated workload are named") {
  SimulatorCorpusOptions o;
  o.board_class = "tx2";
  auto bad_class = simulator_corpus(o);
  REQUIRE_FALSE(bad_class.is_ok());
  CHECK(bad_class.status().message().find("--device") != std::string::npos);
  CHECK(bad_class.status().message().find("tx2") != std::string::npos);
  o.board_class = "agx-orin";
  o.workloads = {"resnet18"};
  auto malformed = simulator_corpus(o);
  REQUIRE_FALSE(malformed.is_ok());
  CHECK(malformed.status().message().find("MODEL/DATASET") != std::string::npos);
  o.workloads = {"vgg99/imagenet"};
  auto unknown = simulator_corpus(o);
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().message().find("--workloads") != std::string::npos);
  CHECK(unknown.status().message().find("vgg99") != std::string::npos);
}
