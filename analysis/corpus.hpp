// Power-mode observations: the common currency of every analysis (from a CSV corpus or PostgreSQL).
// Plain value types and pure functions; any thread.
#pragma once

#include <compare>
#include <cstdint>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
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
  bool any_setting() const { return cores > 0 || cpu_mhz > 0 || gpu_mhz > 0 || emc_mhz > 0; }
  std::string label() const;  // "12c/2201.6/1300.5/3199"; unknown settings as "-" ("4c/-/-/-")
};

// ---------------------------------------------------------------------------------------------
// Configuration axes. Every row carries the configuration it was measured in as axis name -> value
// text; analyses group by the full configuration and never pool rows that differ in any axis, unless
// the user pools explicitly (--pool-over). An axis a row does not carry (a CSV corpus without that
// column) is not a distinguishing axis.
using AxisMap = std::map<std::string, std::string>;

// The configuration axes, in label order: mode, pin_clocks, fan, batch_size, workers, prefetch,
// threads, seed, storage, max_minibatches, drop_caches.
const std::vector<std::string>& config_axes();
bool is_config_axis(const std::string& name);
// The mode axis value: the mode's label when its settings are known (wholly or partly), else the named
// mode, else "default".
std::string mode_axis_value(const ModeKey& mode, const std::string& mode_name);
// Canonical value text: booleans as true/false, whole numbers without a fraction; others unchanged.
std::string canonical_axis_value(const std::string& axis, const std::string& value);
// The axes without the mode axis (the configuration of a workload across power modes).
AxisMap without_mode(const AxisMap& axes);
// One axis as a label token: "bs16", "w4", "pf2", "pin", "@ssd", ...
std::string axis_token(const std::string& axis, const std::string& value);
// "8c/2265.6/1377/2133 pin bs16 w4 pf2": the axes in `show` (every axis when null), plus clocks pinned,
// a fan setting other than auto and dropped caches whenever they hold (they change results).
std::string config_label(const AxisMap& axes, const std::set<std::string>* show = nullptr);
// "batch_size=16, workers=4" (every axis, for messages).
std::string config_text(const AxisMap& axes);

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
  AxisMap axes;             // the full configuration (mode included), see config_axes()
  bool simulated = false;   // measured on a simulated board (agent --sim)
  std::optional<bool> throttled;  // some epoch left the applied clocks (database only)
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
  AxisMap axes;                       // the full configuration (mode included), see config_axes()
  bool simulated = false;             // measured on a simulated board (agent --sim)
  int repetition = 0;                 // repetition of the configuration (pooled: the same configuration)
  // Provenance and state columns carried for `export --per-epoch` (absent when the source lacks them).
  std::string dataset;
  std::optional<double> minibatch_ms;    // mean time per minibatch of this epoch (DB: from its minibatches)
  std::optional<double> power_coverage;  // share of the epoch window with valid power samples
  std::optional<double> paused_before_s;  // the run waited this long before the epoch began (agent back-pressure)
  std::optional<bool> throttled;         // a clock or the thermal state left the applied setting
  std::string throttle_reason;
  std::optional<double> t_start_s, t_end_s;        // window on the run's (agent monotonic) timeline
  std::optional<double> start_unix_s, end_unix_s;  // window on the controller's clock
  std::string storage_device;
  std::optional<double> copy_s;                // host-to-device copies of the epoch (GPU runs)
  std::string compute_device;            // what the run trained on: "cpu", "cuda:0 (NAME)", "simulated"
  std::string dataset_fingerprint;       // the bytes the run read (runs.workload; "" = not recorded)
  std::optional<bool> page_cache_dropped;
  std::optional<bool> reference_state;   // the run named no power mode (the class's reference state)
  std::string where;
};
// An epoch sample of the row's board, workload, instance, mode, configuration and simulated mark (figures unset).
EpochSample epoch_sample_of(const ModeRecord& r);


struct Corpus {
  std::string source;  // file name or "database"
  std::vector<ModeRecord> rows;      // one per profiled mode (epochs 1+)
  std::vector<EpochSample> epochs;   // per-epoch samples, including warm-up epochs
  bool epoch_times = false;          // EpochSample::time is E2E s per epoch (else ms per minibatch)
  // Set by select_configurations: what the user selected (--where) and pooled explicitly (--pool-over).
  std::vector<std::pair<std::string, std::string>> selected;
  std::vector<std::string> pooled_over;
};

// --where AXIS=VALUE[,AXIS=VALUE..]: axes are config_axes() and "simulated". kInvalidArgument naming
// the flag on a malformed item or an unknown axis.
Result<std::vector<std::pair<std::string, std::string>>> parse_where(const std::string& text);
// --pool-over AXIS[,AXIS..]: config_axes() only.
Result<std::vector<std::string>> parse_pool_over(const std::string& text);
// Keeps the rows and epochs that match every --where item (the "mode" axis matches the mode's label or
// its name; a row without the axis does not match) and removes the pooled axes from every row, so that
// rows differing only in them fall into one group. kInvalidArgument when nothing matches.
Status select_configurations(Corpus& corpus, const std::vector<std::pair<std::string, std::string>>& where,
                             const std::vector<std::string>& pool_over);
// The axes whose value (absent counted as a value) differs between the corpus' rows or epochs.
std::set<std::string> varying_axes(const Corpus& corpus);

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
  AxisMap config;          // the configuration shared by every mode (the axes without "mode")
  bool simulated = false;  // measured on simulated boards
  std::vector<ModeRecord> modes;  // sorted by mode, unique
  std::vector<std::string> notes; // e.g. dropped named modes
  const ModeRecord* find(const ModeKey& m) const;
  bool has_power() const;  // every mode has power
};

// Selects one (device, workload): kInvalidArgument naming `flag` when absent or ambiguous, and when the
// workload was measured in more than one configuration besides the power mode (or on simulated and
// real boards): the message lists the configurations and how to choose one (--where) or pool (--pool-over).
Result<WorkloadData> select_workload(const Corpus& corpus, const WorkloadRef& ref, const std::string& flag);
std::vector<std::string> workloads_of(const Corpus& corpus, const std::string& device);
std::vector<std::string> devices_of(const Corpus& corpus);

// Every mode of a board class: the cartesian product of the knob values seen for that device.
std::vector<ModeKey> mode_grid(const Corpus& corpus, const std::string& device);

}  // namespace jetsweep::analysis
