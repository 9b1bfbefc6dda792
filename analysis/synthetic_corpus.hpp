// Deterministic synthetic power-mode corpora with a non-linear ground truth on realistic Jetson mode
// grids (AGX Orin: 12 cores x 29 CPU x 13 GPU x 4 EMC = 18,096 modes), for tests, benchmarks and
// experiments/corpora. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/corpus.hpp"
#include "common/status.hpp"

namespace jetsweep::analysis {

// Frequency tables of a board class (MHz), as in agent/device/sim_tables.cpp.
struct BoardGrid {
  std::string device;
  int max_cores = 0;
  std::vector<double> cpu_mhz;
  std::vector<double> gpu_mhz;
  std::vector<double> emc_mhz;
  std::vector<ModeKey> modes() const;  // sorted; cores 1..max_cores
};
Result<BoardGrid> synthetic_board(const std::string& device);  // "agx-orin", "agx-xavier", "orin-nano"
std::vector<std::string> synthetic_boards();

// A workload's ground truth. Per minibatch, GPU work and memory traffic scale with the inverse of
// their clocks (with exponents), kernel launches and pre-processing with the CPU clock, pre-processing
// with the cores given to the 4 loader workers; pre-processing is pipelined with compute (a max),
// and power follows utilisation and clock^exponent per unit on top of a baseload.
struct SyntheticWorkload {
  std::string name;
  double gpu_ms, gpu_exp;      // GPU compute at the top GPU clock
  double mem_ms, mem_exp;      // memory-bound part at the top EMC clock
  double launch_ms;            // kernel launches at the top CPU clock
  double prep_ms;              // pre-processing per minibatch with 4 cores at the top CPU clock
  double base_w, cpu_w, gpu_w, emc_w;
};
// resnet, mobilenet, yolo, lenet, bert (distinct balances of GPU, memory and CPU work).
std::vector<SyntheticWorkload> synthetic_workloads();
Result<SyntheticWorkload> synthetic_workload(const std::string& name);

struct SyntheticOptions {
  double noise_pct = 0;      // multiplicative noise (uniform +-noise_pct) on time and power
  uint64_t seed = 1;
  size_t max_modes = 0;      // 0 = every mode; else a seeded random subset of that many
  bool linear_truth = false; // time = a.cpu + b.cores + c.gpu + d.emc + e exactly (known-answer tests)
};
// The linear ground truth's coefficients: {cpu, cores, gpu, emc, intercept} in ms per minibatch.
std::vector<double> synthetic_linear_coefficients();

// Time (ms per minibatch) and power (mW) of a workload on a board in one mode, noise-free.
double synthetic_time_ms(const BoardGrid& board, const SyntheticWorkload& w, const ModeKey& m);
double synthetic_power_mw(const BoardGrid& board, const SyntheticWorkload& w, const ModeKey& m);

// 1 + a uniform deviation within +-pct% fixed by (seed, workload, mode, which): every slice of a corpus sees the
// same value for a row. `which` tells time (0) and power (1) apart.
double synthetic_noise_factor(uint64_t seed, const std::string& workload, const ModeKey& m, int which, double pct);

Corpus generate_corpus(const BoardGrid& board, const std::vector<SyntheticWorkload>& workloads,
                       const SyntheticOptions& options);

}  // namespace jetsweep::analysis
