// Calibration data of the simulated-board model: per board class (reference power mode, storage,
// instance spread, base load) and per workload (sensitivity shares and per-class reference epoch
// figures). Every number is sourced in docs/SIMULATION.md. Immutable data; any thread.
#pragma once

#include <boost/pfr/ops_fields.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::perf {

// One power mode of a simulated board: the first `cores` CPUs online at cpu_khz, GPU at gpu_hz,
// EMC at emc_hz. All values are entries of the class's frequency tables.
struct Settings {
  int cores = 0;
  int64_t cpu_khz = 0;
  int64_t gpu_hz = 0;
  int64_t emc_hz = 0;
  // GPU TPCs powered (the GPU masks in force; 0 = a class whose GPU is not gated). The GPU's share of the
  // compute time scales with the reference's TPCs over these (board_model.cpp).
  int tpcs = 0;
  std::string to_string() const;  // "8c/2265600kHz/1377000000Hz/2133000000Hz", "... 4tpc" when gated
  bool operator==(const Settings& o) const { return boost::pfr::eq_fields(*this, o); }
  bool operator!=(const Settings& o) const { return !(*this == o); }
};

// A predefined nvpmodel mode of a class, as caps (0 = table maximum); caps between table entries
// are rounded down to the nearest entry, as cpufreq/devfreq do (see sim_board.cpp).
struct NamedMode {
  int id = 0;
  std::string name;
  int cores = 0;
  int64_t cpu_max_khz = 0;
  int64_t gpu_max_hz = 0;
  int64_t emc_max_hz = 0;
};

// NVIDIA's GPU power-gating masks of one named mode (TPC_PG_MASK / FBP_PG_MASK; a set bit = a unit off). They
// change only at boot: a board runs a mode with other masks only after nvpmodel and a reboot.
struct ModeMasks {
  int id = 0;
  std::optional<int64_t> tpc_pg_mask;
  std::optional<int64_t> fbp_pg_mask;
  std::string to_string() const;  // "TPC_PG_MASK 240 FBP_PG_MASK 2", "none"
};

struct ClassCalibration {
  std::string board_class;
  Settings reference;              // the papers' default mode of the class (MAXN, NX: 15W): the model's unit
  int default_mode_id = 0;         // nvpmodel PM_CONFIG DEFAULT of the class: a booted board's mode and the
                                   //   reference state of runs that name no power mode (JETSON.md)
  double base_w = 0;               // module power with nothing running, at the reference mode
  double time_spread = 0;          // max/min - 1 of epoch time across instances
  double energy_spread = 0;        // max/min - 1 of epoch energy across instances
  double epoch_noise = 0;          // half-width of the epoch-to-epoch time deviation
  std::string storage;             // where the training data lives by default
  double storage_mb_s = 0;         // effective read throughput of that storage for a cold epoch 0
  double first_minibatch_s = 0;    // extra compute of the very first minibatch (kernel selection)
  int64_t os_mem_kb = 0;           // RAM used by the OS and the agent
  std::vector<NamedMode> modes;
  std::vector<ModeMasks> mode_masks;  // per named mode where NVIDIA's file gates the GPU
  int gpu_tpcs = 0;                   // TPC bits of TPC_PG_MASK for the class's GPU (Orin 8, Xavier 4; Nano 0)
  const ModeMasks* masks_of(int mode_id) const;
  // TPCs powered under `tpc_pg_mask` (a set bit = a TPC off); unset = none gated; 0 for a class without gating.
  int tpcs_on(std::optional<int64_t> tpc_pg_mask) const;
};

// Per-class reference epoch figures of one workload (epoch 1+, batch 16, 4 workers, warm cache).
struct ClassReference {
  std::string board_class;
  double compute_s = 0;
  double stall_s = 0;
  double overhead_s = 0;
  double power_w = 0;
};

struct WorkloadCalibration {
  std::string model;
  std::vector<std::string> datasets;  // datasets this calibration applies to
  int64_t train_samples = 0;          // used when known_train_samples() has no answer
  int64_t dataset_bytes = 0;
  int64_t model_mem_kb = 0;
  // Compute per minibatch = M(emc) x [gpu_share G/f_gpu + cpu_share C/f_cpu P(cores) + const_share].
  double gpu_share = 0;
  double cpu_share = 0;
  double const_share = 0;
  double emc_share = 0;              // mu of M(emc) = (1 - mu) + mu E/f_emc
  // Stall per minibatch = Ms(emc) x [stall_cpu_share C/f_cpu Q(cores) + 1 - stall_cpu_share] x W(workers).
  double stall_cpu_share = 0;
  double stall_emc_share = 0;
  double stall_w0 = 1, stall_w1 = 1, stall_w2 = 1;  // stall relative to 4 workers
  // Compute per minibatch vs batch size: (a + bs) / (a + 16) up to bs_saturation, linear beyond.
  double batch_a = 0;
  int64_t batch_saturation = 0;      // 0 = never saturates
  // Dynamic power split at the reference mode and CPU utilisation there.
  double dyn_gpu_share = 0;
  double dyn_cpu_share = 0;
  double dyn_emc_share = 0;
  double cpu_util_ref = 0;           // fraction of all cores busy at the reference mode
  std::vector<ClassReference> classes;
  std::string unsupported_reason;    // for classes not listed: why (e.g. does not fit in memory)
};

// Core-contention slopes (SIGMETRICS Sec. 5.6.5/5.6.6) and the power-vs-frequency exponent.
inline constexpr double kComputeCoreContention = 0.6;
inline constexpr double kStallCoreContention = 0.95;
inline constexpr double kDynamicPowerExponent = 1.2;
inline constexpr double kIdleFloor = 0.7;          // base load at the lowest clocks / at the reference
inline constexpr double kMinibatchJitter = 0.03;   // half-width of per-minibatch deviation
inline constexpr double kSamplePowerJitter = 0.02; // half-width of per-sample power deviation
inline constexpr double kStallBatchOffset = 4.0;   // stall per minibatch ~ (4 + bs) / (4 + 16)
inline constexpr int64_t kReferenceBatch = 16;

Result<ClassCalibration> class_calibration(std::string_view board_class);
// Effective read throughput (MB/s) of a storage medium a simulated agent offers (--storage NAME=DIR with the
// sim backend): sd 13.3, ssd 84, hdd 6.0 (derived from S23 Sec. 5.1.1 and 5.2.1, docs/SIMULATION.md).
// kInvalidArgument listing the modelled media for any other name.
Result<double> simulated_medium_mb_s(std::string_view medium);
// kInvalidArgument naming model and dataset when there is no calibration for them.
Result<WorkloadCalibration> workload_calibration(std::string_view model, std::string_view dataset);
const std::vector<WorkloadCalibration>& all_workloads();
std::vector<std::string> simulated_classes();

}  // namespace jetsweep::perf
