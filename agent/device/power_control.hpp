// Applying power modes, pinning clocks (jetson_clocks), fan, page-cache drop, and restore.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/device/board.hpp"
#include "agent/device/fan_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/service_control.hpp"
#include "common/status.hpp"

namespace jetsweep::device {

// A custom power mode: the first `cores` CPUs online, every online cluster capped at cpu_khz,
// the GPU capped at gpu_hz and the EMC locked at emc_hz. Values must be in the board's tables.
struct PowerMode {
  int cores = 0;
  int64_t cpu_khz = 0;
  int64_t gpu_hz = 0;
  int64_t emc_hz = 0;
  std::string to_string() const;  // "8c/2265600kHz/1377000000Hz/2133000000Hz"
};

struct ApplyOptions {
  // DVFS off as jetson_clocks does it: min = max for CPU clusters and GPU, cpuidle states
  // disabled on online CPUs, GPU railgate_enable = 0, EMC locked.
  bool pin_clocks = false;
  // Fan to full: R32 temp_control=0 and target_pwm=255; R35+ pwm1=255 on every pwm-fan hwmon, with
  // nvfancontrol.service stopped first when it is active (started again on restore).
  bool fan_max = false;
};

// Resolved per-file goals of one apply (what will be written). Built by the plan_* functions.
struct DeviceTarget {
  struct Cluster {
    size_t index = 0;     // into FrequencyTables::clusters
    int64_t min_khz = 0;
    int64_t max_khz = 0;
  };
  std::map<int, bool> online;            // cpu -> online (absent = leave as is)
  std::vector<Cluster> clusters;         // clusters to set (absent = leave as is)
  std::optional<std::pair<int64_t, int64_t>> gpu_min_max_hz;
  std::optional<int64_t> emc_cap_hz;     // nvpmodel cap file value (0 = no cap)
  std::optional<fs::path> emc_cap_path;
  std::optional<int64_t> emc_lock_hz;
  bool disable_cpuidle = false;
  bool gpu_railgate_off = false;
  bool fan_max = false;
  // nvpmodel's GPU_POWER_CONTROL_ENABLE ("on": the GPU kept powered while its clocks are written) and
  // GPU_POWER_CONTROL_DISABLE ("auto" after them), in the conf's order around the GPU clocks.
  struct FileValue {
    fs::path path;
    std::string value;
  };
  std::vector<FileValue> gpu_power_before, gpu_power_after;
  // nvpmodel's PARAM TYPE=HWMON settings (Xavier NX R35: VDDIN_OC_LIMIT WARN 4000 / CRIT 5000, INA3221
  // over-current limits in mA): the currK_max / currK_crit file inside the PARAM's hwmon folder.
  std::vector<FileValue> hwmon_limits;
  // GatingRule::kAsBooted only: the mode's masks are not the board's, so the board runs the mode's cores and
  // clocks on another GPU gating (and is not "in" that mode).
  bool gating_differs = false;
  std::vector<std::string> notes;        // e.g. nvpmodel settings that were ignored
};

// What plan_named_mode does with a mode whose GPU masks are not the board's.
enum class GatingRule {
  kRequireBooted,  // refuse it (a named mode: its masks need nvpmodel and a reboot)
  kAsBooted,       // plan its cores and clocks on the gating in force, noted (the reference state as a base)
};

// Validates `mode` against the board's tables (cores 1..N, every value in its table) and builds
// the target. kInvalidArgument names the table file and the value.
Result<DeviceTarget> plan_power_mode(const Board& board, const PowerMode& mode, const ApplyOptions& opts);
// Builds the target of a named nvpmodel mode (name or id) from <root>/etc/nvpmodel.conf.
// -1 caps mean "table maximum"; a cap between table entries is rounded down to the nearest
// table frequency (a minimum is rounded up), which is what cpufreq/devfreq do with such a cap.
// Paths come from the conf's ARG or ARG_KNEXT line, whichever the board has (R36: KNEXT). A mode that gates
// the GPU (TPC_PG_MASK, FBP_PG_MASK) is applied only when the board already runs with those masks (read back
// from the mask files): masks change at boot, so otherwise kInvalidArgument names the mode, both masks and the
// `nvpmodel -m ID` + reboot it needs. HWMON over-current limits and clocks of other engines (DLA, PVA) are
// listed in the target's notes, not written.
Result<DeviceTarget> plan_named_mode(const Board& board, std::string_view name_or_id, const ApplyOptions& opts,
                                     GatingRule gating = GatingRule::kRequireBooted);
// jetson_clocks without arguments: pins each online cluster and the GPU at their current max,
// EMC locked at the nvpmodel cap (if set and in the table) or the table maximum.
Result<DeviceTarget> plan_pin_current(const Board& board, const ApplyOptions& opts);

// Changes board settings, recording every file's original content (and every service it stops) in
// <state_dir>/device-restore.state before its first change. Owns that state file.
// Not thread-safe: one thread (the agent's control thread) calls it.
class PowerController {
 public:
  // `services` stops and starts nvfancontrol around fan_max on L4T R35+; null = systemctl from PATH.
  PowerController(Board board, fs::path state_dir, std::shared_ptr<ServiceControl> services = nullptr);

  const Board& board() const { return board_; }
  const fs::path& state_dir() const { return state_dir_; }

  // Writes the target in a safe order (online CPUs, CPU min/max per cluster, cpuidle, GPU,
  // EMC, fan, then offline CPUs) and reads back every value. Nothing is written when a value
  // is out of table or a file is missing. A failed write stops the apply and returns kIoError
  // naming the path and value; the state file then still allows restore().
  // fan_max on L4T R35+ (or the R35 fan layout): when nvfancontrol is active it is stopped, and
  // recorded, before anything is written (as jetson_clocks --fan does); when its state cannot be
  // queried (no systemctl, or no systemd reachable, as in a container) the apply fails naming the
  // command, with nothing written, rather than letting the service override the fan.
  Status apply(const DeviceTarget& target);
  Status apply(const PowerMode& mode, const ApplyOptions& opts);
  Status apply_named(std::string_view name_or_id, const ApplyOptions& opts);

  // Puts every recorded file back, starts the services apply() stopped, and removes the state file
  // (see restore_pending).
  Result<bool> restore();

  // Every (path, value) written by the last apply, in order.
  const std::vector<std::pair<fs::path, std::string>>& last_writes() const { return last_writes_; }

 private:
  struct ApplyPlan;
  Status write(EntryRole role, const fs::path& path, const std::string& value);
  // Writes min and max of a frequency range in the order that keeps min <= max (raising: max first).
  Status write_range(const fs::path& min_path, const fs::path& max_path, int64_t min, int64_t max);
  // What apply() will change and the files it needs, checked before anything is written.
  Result<ApplyPlan> plan_apply(const DeviceTarget& target);
  // apply()'s writes, in order: CPUs online, CPU clusters, cpuidle, GPU, EMC, fan, CPUs offline.
  Status write_plan(const DeviceTarget& target, const ApplyPlan& plan);

  Status stop_fan_service();

  Board board_;
  fs::path state_dir_;
  std::shared_ptr<ServiceControl> services_;
  std::vector<std::pair<fs::path, std::string>> last_writes_;
};

// sync() then "3" into <root>/proc/sys/vm/drop_caches.
Status drop_page_cache(const fs::path& root = "/");

}  // namespace jetsweep::device
