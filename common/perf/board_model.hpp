// The performance and power model of a simulated Jetson board instance: per-epoch mean minibatch
// stall/compute times, framework overhead, module power and CPU utilisation for a run config and
// power mode, plus deterministic per-instance and per-epoch variation. Immutable after create();
// any thread may call it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/board_classes.hpp"
#include "common/perf/calibration.hpp"
#include "common/run_config.hpp"
#include "common/status.hpp"

namespace jetsweep::perf {

// Mean figures of one epoch of one run on one instance.
struct EpochModel {
  int64_t minibatches = 0;
  double stall_mb_s = 0;           // mean fetch stall per minibatch
  double compute_mb_s = 0;         // mean compute per minibatch
  double overhead_s = 0;           // rest of the epoch (loader start, framework)
  double first_compute_extra_s = 0;  // added to minibatch 0 of epoch 0
  double cold_stall_s = 0;         // extra stall of epoch 0 when the page cache is cold
  double power_w = 0;              // mean module power during the epoch
  double cpu_util_pct = 0;
  double e2e_s() const {
    return static_cast<double>(minibatches) * (stall_mb_s + compute_mb_s) + overhead_s + first_compute_extra_s +
           cold_stall_s;
  }
};

// Deterministic pseudo-random numbers (SplitMix64): same seed, same sequence on every platform.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();     // [0, 1)
  double symmetric();   // (-1, 1), triangular around 0
 private:
  uint64_t state_;
};

uint64_t hash64(std::string_view text);   // FNV-1a 64

class SimModel {
 public:
  // `instance` names the board instance (its hash fixes the instance's deviation).
  static Result<SimModel> create(std::string_view board_class, std::string_view instance);
  // The class's typical board: no instance deviation (time and power factors 1) and no epoch-to-epoch
  // variation, for estimates.
  static Result<SimModel> nominal(std::string_view board_class);

  const ClassCalibration& calibration() const { return class_; }
  const BoardClassTables& tables() const { return tables_; }
  const std::string& instance() const { return instance_; }
  double instance_time_factor() const { return time_factor_; }
  double instance_power_factor() const { return power_factor_; }

  // Number of minibatches per epoch: ceil(samples / batch_size), capped by max_minibatches.
  Result<int64_t> minibatches_per_epoch(const RunConfig& config) const;
  // Mean figures of epoch `epoch` (0-based) of `config` in power mode `s`. Fails with a message naming
  // the model, dataset and class when the workload is not calibrated or does not fit on the class.
  // storage_mb_s: read throughput of the medium the data is on for a cold epoch 0 (0 = the class's default
  // storage, ClassCalibration::storage_mb_s).
  // compute_scale multiplies the compute time per minibatch (a TorchScript model modelled as a calibrated one:
  // agent/sim/sim_executor.cpp).
  Result<EpochModel> epoch(const RunConfig& config, const Settings& s, int64_t epoch, bool cold_cache,
                           double storage_mb_s = 0, double compute_scale = 1) const;
  // Seed of the per-epoch, per-minibatch and per-sample variation of one epoch of a run on this
  // instance (same instance, workload, batch, workers, seed, repetition and epoch -> same seed).
  uint64_t epoch_seed(const RunConfig& config, int64_t epoch) const;

 private:
  SimModel() = default;

  ClassCalibration class_;
  BoardClassTables tables_;
  std::string instance_;
  double time_factor_ = 1;
  double power_factor_ = 1;
};

}  // namespace jetsweep::perf
