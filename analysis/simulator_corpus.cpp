#include "analysis/simulator_corpus.hpp"

#include <algorithm>
#include <random>
#include <tuple>

#include "analysis/synthetic_corpus.hpp"
#include "common/perf/board_model.hpp"
#include "common/perf/calibration.hpp"
#include "common/run_config.hpp"

namespace jetsweep::analysis {

namespace {

struct SimWorkload {
  std::string model, dataset;
  std::string name() const { return model + "/" + dataset; }
};

Result<std::vector<SimWorkload>> workloads_of(const SimulatorCorpusOptions& o) {
  std::vector<SimWorkload> out;
  if (o.workloads.empty()) {
    for (const auto& w : perf::all_workloads())
      for (const auto& c : w.classes)
        if (c.board_class == o.board_class)
          for (const auto& d : w.datasets) out.push_back({w.model, d});
    return out;
  }
  for (const auto& text : o.workloads) {
    const auto slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
      return invalid_argument("--workloads: '" + text + "' is not MODEL/DATASET (e.g. resnet18/cifar10)");
    SimWorkload w{text.substr(0, slash), text.substr(slash + 1)};
    auto cal = perf::workload_calibration(w.model, w.dataset);
    if (!cal.is_ok()) return cal.status().with_context("--workloads");
    out.push_back(w);
  }
  return out;
}

std::vector<perf::Settings> modes_of(const BoardClassTables& t, int tpcs, const SimulatorCorpusOptions& o) {
  std::vector<perf::Settings> v;
  for (int c = 1; c <= t.cores; ++c)
    for (int64_t cpu : t.cpu_khz)
      for (int64_t gpu : t.gpu_hz)
        for (int64_t emc : t.emc_hz) v.push_back(perf::Settings{c, cpu, gpu, emc, tpcs});
  if (o.max_modes > 0 && o.max_modes < v.size()) {
    std::mt19937_64 rng(o.seed);
    std::shuffle(v.begin(), v.end(), rng);
    v.resize(o.max_modes);
  }
  std::sort(v.begin(), v.end(), [](const perf::Settings& a, const perf::Settings& b) {
    return std::tie(a.cores, a.cpu_khz, a.gpu_hz, a.emc_hz) < std::tie(b.cores, b.cpu_khz, b.gpu_hz, b.emc_hz);
  });
  return v;
}

}  // namespace

Result<Corpus> simulator_corpus(const SimulatorCorpusOptions& o) {
  auto model = perf::SimModel::nominal(o.board_class);
  if (!model.is_ok()) return model.status().with_context("--device");
  JS_ASSIGN_OR_RETURN(auto workloads, workloads_of(o));
  if (workloads.empty()) return invalid_argument("--device: the simulator models no workload on " + o.board_class);
  const auto settings = modes_of(model->tables(), model->calibration().gpu_tpcs, o);
  Corpus c;
  c.source = "simulator:" + o.board_class;
  for (const auto& w : workloads) {
    RunConfig rc;
    rc.device = o.board_class;
    rc.model = w.model;
    rc.dataset = w.dataset;
    rc.batch_size = o.batch_size;
    rc.workers = o.workers;
    for (const auto& s : settings) {
      auto em = model->epoch(rc, s, 1, /*cold_cache=*/false);
      if (!em.is_ok()) return em.status().with_context("--workloads: " + w.name());
      ModeRecord r;
      r.device = o.board_class;
      r.workload = w.name();
      r.mode = ModeKey{s.cores, static_cast<double>(s.cpu_khz) / 1e3, static_cast<double>(s.gpu_hz) / 1e6,
                       static_cast<double>(s.emc_hz) / 1e6};
      r.minibatch_ms = 1e3 * (em->stall_mb_s + em->compute_mb_s) *
                       synthetic_noise_factor(o.seed, r.workload, r.mode, 0, o.noise_pct);
      r.power_mw = 1e3 * em->power_w * synthetic_noise_factor(o.seed, r.workload, r.mode, 1, o.noise_pct);
      r.runs = 1;
      r.epochs = 1;
      r.simulated = true;
      r.where = c.source;
      EpochSample e = epoch_sample_of(r);
      e.time = r.minibatch_ms;
      e.power_w = *r.power_mw / 1e3;
      e.energy = *r.power_mw * r.minibatch_ms / 1e3;  // mJ per minibatch
      e.where = c.source;
      c.rows.push_back(std::move(r));
      c.epochs.push_back(std::move(e));
    }
  }
  return c;
}

}  // namespace jetsweep::analysis
