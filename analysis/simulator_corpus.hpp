// Corpora as jetsweep's board simulator models them (common/perf SimModel on the nominal board of a class, the
// model behind `jetsweep-agent --sim`): what a simulated fleet would measure for a workload in each power mode,
// without running one. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

struct SimulatorCorpusOptions {
  std::string board_class = "agx-orin";   // a simulated class (perf::simulated_classes())
  // "model/dataset" (resnet18/cifar10, lenet5/fashion-mnist, ...); empty = every calibrated model and dataset the class runs
  std::vector<std::string> workloads;
  int64_t batch_size = 16;
  int64_t workers = 4;
  size_t max_modes = 0;   // 0 = every mode of the class's tables; else a seeded random subset of that many
  uint64_t seed = 1;
  double noise_pct = 0;   // multiplicative noise (uniform +-noise_pct) on time and power, as in synthetic corpora
};

// One row per (workload, mode): cores 1..max x the class's CPU, GPU and EMC tables, every GPU TPC powered (MAXN's
// gating, as experiments/powertrain_orin_corpus.yaml applies its modes). minibatch_ms = the modelled mean fetch
// stall + compute per minibatch of a warm epoch; power = the modelled mean module power. kInvalidArgument naming
// the class or workload the simulator does not model.
Result<Corpus> simulator_corpus(const SimulatorCorpusOptions& options);

}  // namespace jetsweep::analysis
