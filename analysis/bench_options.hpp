// The options of jetsweep_analysis_bench (bench_main.cpp) and what its parts share: the synthetic transfer corpus
// and a scratch model directory. `--adaptive` lives in bench_adaptive.cpp. Single-threaded, like the bench.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis::bench {

struct BenchOptions {
  size_t reference_modes = 4368;
  int epochs = 100;
  size_t budgets = 1000;
  uint64_t seed = 1;
  bool json = false;
  bool accuracy = false;
  bool adaptive = false;
  std::vector<std::string> targets = {"lenet", "mobilenet", "yolo", "bert"};
  std::vector<int> train_modes = {15, 30, 50};
  int seeds = 10;
  bool baselines = true;   // --adaptive: the PowerTrain baselines beside the strategies
  double noise_pct = 2.0;  // the transfer corpus's noise per mode, time and power (uniform +-)
  std::string reference = "resnet";  // --accuracy, --adaptive: the synthetic corpus's reference workload
  std::string anchor = "powertrain"; // --adaptive: what the strategies correct (analysis/adaptive.hpp AdaptiveAnchor)
  size_t round_size = 2;   // --adaptive: modes per round after the first (as `analyze adaptive --round-size`)
  size_t first_round = 0;  // --adaptive: space-filling modes first, 0 = half the budget (`--first-round`)
};

// The transfer corpus of --accuracy and --adaptive: the reference (resnet unless --reference says) and the
// --targets on the synthetic AGX Orin grid, --reference-modes modes per workload, 2% noise.
Result<Corpus> transfer_corpus(const BenchOptions& opt);

// A scratch directory for reference models, removed when it goes out of scope.
struct ScratchModelDir {
  char path[40] = "/tmp/jetsweep-bench-models-XXXXXX";
  bool made = ::mkdtemp(path) != nullptr;
  ~ScratchModelDir() {
    if (made) std::filesystem::remove_all(path);
  }
};

// --adaptive: the replays over seeds, printed as a table (or --json); an error names the corpus, target and seed.
Status run_adaptive_bench(const BenchOptions& opt);

}  // namespace jetsweep::analysis::bench
