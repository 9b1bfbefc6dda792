// Power-mode observations: the common currency of every analysis (from a CSV corpus or PostgreSQL).
// Plain value types and pure functions; any thread.
#pragma once

#include <compare>
#include <cstdint>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::analysis {

// One power mode: active CPU cores and the CPU, GPU and memory (EMC) frequencies in MHz.
struct ModeKey {
  int cores = 0;
  double cpu_mhz = 0;
  double gpu_mhz = 0;
  double emc_mhz = 0;
  auto operator<=>(const ModeKey&) const = default;
  bool operator==(const ModeKey&) const = default;
  bool explicit_settings() const { return cores > 0 && cpu_mhz > 0 && gpu_mhz > 0 && emc_mhz > 0; }
  std::string label() const;  // "12c/2201.6/1300.5/3199"
};

// The profile of one workload in one power mode on one board class (optionally one instance).
struct ModeRecord {
  std::string device;      // board class, e.g. "agx-orin"
  std::string workload;    // e.g. "resnet18" or "lenet5/fashion-mnist"
  std::string instance;    // board instance (agent name); empty when aggregated over instances
  std::string mode_name;   // nvpmodel mode name when the run named its mode instead of settings
  ModeKey mode;
  double minibatch_ms = 0;  // mean time per minibatch over epochs 1+
  std::optional<double> power_mw;             // mean power; absent without a power sensor
  std::vector<double> epoch_minibatch_ms;     // per latter epoch (DB); empty for one-row CSV modes
  std::optional<double> epoch_s;              // mean E2E time per epoch 1+, when known
  std::optional<double> energy_j;             // mean energy per epoch 1+, when known
  int runs = 0;
  int epochs = 0;
  std::string where;  // provenance for messages: "corpus.csv:12" or "run 42"

  // Energy per minibatch in mJ (power x time), when power is known.
  std::optional<double> energy_mj() const {
    if (!power_mw) return std::nullopt;
    return *power_mw * minibatch_ms / 1000.0;
  }
};

// One training epoch of one run on one board instance (variability, per-epoch breakdowns, export).
struct EpochSample {
  std::string device;
  std::string workload;
  std::string instance;
  std::string mode_name;
  ModeKey mode;
  int64_t run_id = 0;
  int epoch = -1;                     // 0 = the warm-up epoch; -1 = unknown (treated as 1+)
  double time = 0;                    // E2E seconds per epoch, or ms per minibatch (see Corpus)
  std::optional<double> stall_s;
  std::optional<double> compute_s;
  std::optional<double> energy;       // J per epoch, or mJ per minibatch (see Corpus)
  std::optional<double> power_w;
  int minibatches = 0;
  std::map<std::string, std::string> software;  // kernel, torch_version, l4t, ...
  std::string where;
};

struct Corpus {
  std::string source;  // file name or "database"
  std::vector<ModeRecord> rows;      // one per profiled mode (epochs 1+)
  std::vector<EpochSample> epochs;   // per-epoch samples, including warm-up epochs
  bool epoch_times = false;          // EpochSample::time is E2E s per epoch (else ms per minibatch)
};

// A workload on a board class: "resnet18" or "resnet18@agx-orin".
struct WorkloadRef {
  std::string workload;
  std::string device;  // empty = the only device the workload was profiled on
  std::string to_string() const { return device.empty() ? workload : workload + "@" + device; }
};
WorkloadRef parse_workload_ref(const std::string& text);

// One row per mode of one (device, workload): instances are averaged, named-only modes dropped.
struct WorkloadData {
  std::string device;
  std::string workload;
  std::vector<ModeRecord> modes;  // sorted by mode, unique
  std::vector<std::string> notes; // e.g. dropped named modes
  const ModeRecord* find(const ModeKey& m) const;
  bool has_power() const;  // every mode has power
};

// Selects one (device, workload): kInvalidArgument naming `flag` when absent or ambiguous.
Result<WorkloadData> select_workload(const Corpus& corpus, const WorkloadRef& ref, const std::string& flag);
std::vector<std::string> workloads_of(const Corpus& corpus, const std::string& device);
std::vector<std::string> devices_of(const Corpus& corpus);

// Every mode of a board class: the cartesian product of the knob values seen for that device.
std::vector<ModeKey> mode_grid(const Corpus& corpus, const std::string& device);

}  // namespace jetsweep::analysis
