#include "agent/device/power_control.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "common/log.hpp"

namespace jetsweep::device {

namespace {

fs::path cpu_dir(const fs::path& root, int cpu) {
  return under(root, "/sys/devices/system/cpu") / ("cpu" + std::to_string(cpu));
}

std::string list_values(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + std::to_string(v[i]);
  return out;
}

int64_t floor_in(const std::vector<int64_t>& table, int64_t v) {
  int64_t best = table.front();
  for (int64_t t : table) {
    if (t <= v) best = t;
  }
  return best;
}

int64_t ceil_in(const std::vector<int64_t>& table, int64_t v) {
  for (int64_t t : table) {
    if (t >= v) return t;
  }
  return table.back();
}

bool in_table(const std::vector<int64_t>& table, int64_t v) {
  return std::find(table.begin(), table.end(), v) != table.end();
}

std::optional<size_t> cluster_of(const FrequencyTables& t, int cpu) {
  for (size_t i = 0; i < t.clusters.size(); ++i) {
    const auto& c = t.clusters[i].cpus;
    if (std::find(c.begin(), c.end(), cpu) != c.end()) return i;
  }
  return std::nullopt;
}

// cpu0 may have no online file: it is always online.
Result<bool> cpu_online(const fs::path& root, int cpu) {
  fs::path p = cpu_dir(root, cpu) / "online";
  if (cpu == 0 && !exists_file(p)) return true;
  JS_ASSIGN_OR_RETURN(int64_t v, read_int(p));
  return v != 0;
}

// The number in ".../cpuN/..." or ".../policyN/..." of a cpufreq path.
std::optional<int> cpu_index_in_path(std::string_view path) {
  for (std::string_view key : {std::string_view("/cpu"), std::string_view("/policy")}) {
    size_t at = 0;
    while ((at = path.find(key, at)) != std::string_view::npos) {
      size_t b = at + key.size(), e = b;
      while (e < path.size() && path[e] >= '0' && path[e] <= '9') ++e;
      if (e > b && (e == path.size() || path[e] == '/')) return static_cast<int>(*parse_int(path.substr(b, e - b)));
      at = e;
    }
  }
  return std::nullopt;
}

// EMC lock rate for jetson_clocks: the nvpmodel cap if one is set (rounded down into the table),
// else the table maximum.
int64_t emc_pin_rate(const Board& board) {
  const auto& table = board.tables.emc_hz;
  EmcPaths paths = board.ops->emc_paths(board.root, board.info.l4t_major());
  if (paths.cap) {
    if (auto cap = read_int(*paths.cap); cap.is_ok() && *cap > 0) return floor_in(table, *cap);
  }
  return table.back();
}

void add_pin(const Board& board, DeviceTarget& target) {
  target.disable_cpuidle = true;
  target.gpu_railgate_off = true;
  for (auto& c : target.clusters) c.min_khz = c.max_khz;
  if (target.gpu_min_max_hz) target.gpu_min_max_hz->first = target.gpu_min_max_hz->second;
  if (!target.emc_lock_hz) {
    if (target.emc_cap_hz && *target.emc_cap_hz > 0) target.emc_lock_hz = floor_in(board.tables.emc_hz, *target.emc_cap_hz);
    else target.emc_lock_hz = emc_pin_rate(board);
  }
}

// Whether `mode`'s GPU masks are the board's (see plan_named_mode); what is in force goes to `target`'s notes.
Status check_mode_gating(const Board& board, const NvpmodelConf& conf, const NvpMode& mode, GatingRule gating,
                         DeviceTarget& target) {
  JS_ASSIGN_OR_RETURN(GpuGating want, mode.gating(conf.source));
  if (want.empty()) return Status::ok();
  JS_ASSIGN_OR_RETURN(BoardGating have, read_board_gating(board.root, &conf, board.info.l4t_major()));
  const std::string what = "nvpmodel mode " + mode.name + " (id " + std::to_string(mode.id) + ", " + conf.source +
                           ":" + std::to_string(mode.line) + ") gates the GPU with " + want.to_string();
  auto check = [&](const char* name, const std::optional<int64_t>& w, const std::optional<int64_t>& h,
                   const std::string& source, const char* file) -> Status {
    if (!w) return Status::ok();
    if (!h)
      return invalid_argument(what + ", but the board shows no " + name + " (no " + file +
                              " under /sys/devices/gpu.0 or /sys/devices/platform/gpu.0 of " + board.root.string() +
                              "): cannot tell whether that gating is in force");
    if (*w != *h && gating == GatingRule::kAsBooted) {
      target.gating_differs = true;
      target.notes.push_back(what + "; the board runs with " + name + " " + std::to_string(*h) + " (" + source +
                             "): its cores and clocks applied on that gating");
      return Status::ok();
    }
    if (*w != *h)
      return invalid_argument(what + ", but the board runs with " + name + " " + std::to_string(*h) + " (" + source +
                              "). GPU masks change only at boot: this mode needs `nvpmodel -m " +
                              std::to_string(mode.id) + "` and a reboot, which this agent may not do (start it with "
                              "--allow-reboot, or set the mode on the board and reboot it by hand)");
    target.notes.push_back(std::string("GPU gating ") + name + " " + std::to_string(*h) + " in force (" + source + ")");
    return Status::ok();
  };
  JS_RETURN_IF_ERROR(check("TPC_PG_MASK", want.tpc_pg_mask, have.gating.tpc_pg_mask, have.tpc_source, "tpc_pg_mask"));
  JS_RETURN_IF_ERROR(check("FBP_PG_MASK", want.fbp_pg_mask, have.gating.fbp_pg_mask, have.fbp_source, "fbp_pg_mask"));
  return Status::ok();
}

// A PARAM TYPE=HWMON setting ("VDDIN_OC_LIMIT WARN 4000"): the PARAM names "<device>/hwmon curr1_max" (kept as
// "<device>/hwmon/curr1_max"); the file is curr1_max in the hwmonN folder under it that has one, as nvpmodel
// finds it (hwmon numbers change between boots).
Status plan_hwmon_limit(const Board& board, const NvpParam& param, const NvpSetting& s, const std::string& where,
                        DeviceTarget& target) {
  const std::string* p = param.path_of(s.arg);
  if (!p) return invalid_argument(where + ": " + s.param + " " + s.arg + " has no line in its PARAM TYPE=HWMON block");
  auto value = parse_int(s.value);
  if (!value || *value < 0)
    return invalid_argument(where + ": " + s.param + " " + s.arg + " '" + s.value + "' is not a non-negative limit");
  const fs::path spec = under(board.root, *p);
  const fs::path dir = spec.parent_path();
  for (const auto& hw : list_prefixed(dir, "hwmon")) {
    if (exists_file(hw / spec.filename())) {
      target.hwmon_limits.push_back({hw / spec.filename(), std::to_string(*value)});
      return Status::ok();
    }
  }
  return invalid_argument(where + ": " + s.param + " " + s.arg + ": no hwmon folder under " + dir.string() + " has " +
                          spec.filename().string());
}

// Leaves out the clusters whose CPUs all end up offline (they need no clocks).
void drop_offline_clusters(const Board& board, DeviceTarget& target) {
  std::vector<DeviceTarget::Cluster> kept;
  for (const auto& c : target.clusters) {
    bool any_online = false;
    for (int cpu : board.tables.clusters[c.index].cpus) {
      auto it = target.online.find(cpu);
      if (it != target.online.end()) {
        any_online = any_online || it->second;
      } else {
        auto on = cpu_online(board.root, cpu);
        any_online = any_online || (on.is_ok() && *on);
      }
    }
    if (any_online) kept.push_back(c);
  }
  target.clusters = std::move(kept);
}

}  // namespace

std::string PowerMode::to_string() const {
  return std::to_string(cores) + "c/" + std::to_string(cpu_khz) + "kHz/" + std::to_string(gpu_hz) + "Hz/" +
         std::to_string(emc_hz) + "Hz";
}

Result<DeviceTarget> plan_power_mode(const Board& board, const PowerMode& mode, const ApplyOptions& opts) {
  const FrequencyTables& t = board.tables;
  if (mode.cores < 1 || mode.cores > t.cores) {
    return invalid_argument("cores " + std::to_string(mode.cores) + " outside 1.." + std::to_string(t.cores) +
                            " (CPUs under " + under(board.root, "/sys/devices/system/cpu").string() + ")");
  }
  DeviceTarget target;
  for (int cpu = 0; cpu < t.cores; ++cpu) target.online[cpu] = cpu < mode.cores;
  for (size_t i = 0; i < t.clusters.size(); ++i) {
    const auto& c = t.clusters[i];
    bool used = std::any_of(c.cpus.begin(), c.cpus.end(), [&](int cpu) { return cpu < mode.cores; });
    if (!used) continue;
    if (!in_table(c.freqs_khz, mode.cpu_khz)) {
      return invalid_argument("CPU frequency " + std::to_string(mode.cpu_khz) + " kHz is not in " +
                              (c.cpufreq_dir / "scaling_available_frequencies").string() + " (" +
                              list_values(c.freqs_khz) + ")");
    }
    target.clusters.push_back({i, c.freqs_khz.front(), mode.cpu_khz});
  }
  if (!in_table(t.gpu_hz, mode.gpu_hz)) {
    return invalid_argument("GPU frequency " + std::to_string(mode.gpu_hz) + " Hz is not in " +
                            (t.gpu.devfreq_dir / "available_frequencies").string() + " (" + list_values(t.gpu_hz) + ")");
  }
  target.gpu_min_max_hz = {t.gpu_hz.front(), mode.gpu_hz};
  if (!in_table(t.emc_hz, mode.emc_hz)) {
    return invalid_argument("EMC rate " + std::to_string(mode.emc_hz) + " Hz is not in " + t.emc_table_source.string() +
                            " (Hz: " + list_values(t.emc_hz) + ")");
  }
  EmcPaths emc = board.ops->emc_paths(board.root, board.info.l4t_major());
  if (emc.cap) {
    // Keep nvpmodel's cap from clamping the lock below the requested rate.
    target.emc_cap_hz = mode.emc_hz;
    target.emc_cap_path = *emc.cap;
  }
  target.emc_lock_hz = mode.emc_hz;
  target.fan_max = opts.fan_max;
  if (opts.pin_clocks) add_pin(board, target);
  return target;
}

Result<DeviceTarget> plan_named_mode(const Board& board, std::string_view name_or_id, const ApplyOptions& opts,
                                     GatingRule gating) {
  JS_ASSIGN_OR_RETURN(NvpmodelConf conf, read_nvpmodel_conf(board.root));
  const NvpMode* mode = conf.find(name_or_id);
  if (!mode) {
    std::string names;
    for (const auto& m : conf.modes) names += (names.empty() ? "" : ", ") + std::to_string(m.id) + "=" + m.name;
    return invalid_argument("no nvpmodel mode '" + std::string(name_or_id) + "' in " + conf.source + " (modes: " + names + ")");
  }
  const FrequencyTables& t = board.tables;
  const int l4t = board.info.l4t_major();
  DeviceTarget target;
  // GPU power gating first: a mask the board does not run with needs a reboot, so nothing else matters.
  JS_RETURN_IF_ERROR(check_mode_gating(board, conf, *mode, gating, target));
  std::map<size_t, DeviceTarget::Cluster> clusters;
  std::optional<int64_t> gpu_min, gpu_max;
  bool gpu_clock_seen = false;
  for (const auto& s : mode->settings) {
    std::string where = conf.source + ":" + std::to_string(s.line);
    if (s.param == "TPC_POWER_GATING" || s.param == "FBP_POWER_GATING") continue;   // checked above
    if (const NvpParam* hw = conf.param(s.param); hw && hw->type == "HWMON") {
      JS_RETURN_IF_ERROR(plan_hwmon_limit(board, *hw, s, where, target));
      continue;
    }
    if (s.param == "GPU_POWER_CONTROL_ENABLE" || s.param == "GPU_POWER_CONTROL_DISABLE") {
      const NvpParam* param = conf.param(s.param);
      std::optional<fs::path> path = param ? param->resolve(board.root, s.arg, l4t) : std::nullopt;
      if (!path) return invalid_argument(where + ": " + s.param + " " + s.arg + " has no path in a PARAM block");
      // Written around the GPU clocks in the conf's order: ENABLE before them, DISABLE after.
      (gpu_clock_seen ? target.gpu_power_after : target.gpu_power_before).push_back({*path, s.value});
      continue;
    }
    bool handled = s.param == "CPU_ONLINE" ||
                   (s.param.rfind("CPU_", 0) == 0 && (s.arg == "MIN_FREQ" || s.arg == "MAX_FREQ")) ||
                   (s.param == "GPU" && (s.arg == "MIN_FREQ" || s.arg == "MAX_FREQ")) ||
                   (s.param == "EMC" && s.arg == "MAX_FREQ");
    if (!handled) {
      target.notes.push_back("ignored nvpmodel setting " + s.param + " " + s.arg + " " + s.value + " (" + where + ")");
      continue;
    }
    auto value = parse_int(s.value);
    if (!value) return invalid_argument(where + ": value '" + s.value + "' of " + s.param + " " + s.arg + " is not an integer");
    const NvpParam* param = conf.param(s.param);
    if (s.param == "CPU_ONLINE") {
      std::optional<int> cpu;
      if (param) {
        if (const std::string* p = param->path_of(s.arg)) cpu = cpu_index_in_path(*p);
      }
      if (!cpu && s.arg.rfind("CORE_", 0) == 0) {
        if (auto n = parse_int(s.arg.substr(5))) cpu = static_cast<int>(*n);
      }
      if (!cpu || *cpu < 0 || *cpu >= t.cores) return invalid_argument(where + ": cannot map " + s.arg + " to a CPU of this board");
      target.online[*cpu] = *value != 0;
      continue;
    }
    if (s.param.rfind("CPU_", 0) == 0 && (s.arg == "MIN_FREQ" || s.arg == "MAX_FREQ")) {
      const std::string* p = param ? param->path_of(s.arg) : nullptr;
      std::optional<int> cpu = p ? cpu_index_in_path(*p) : std::nullopt;
      if (!cpu) return invalid_argument(where + ": PARAM " + s.param + " has no " + s.arg + " path naming a CPU");
      auto idx = cluster_of(t, *cpu);
      if (!idx) return invalid_argument(where + ": cpu" + std::to_string(*cpu) + " belongs to no cpufreq cluster");
      const auto& table = t.clusters[*idx].freqs_khz;
      auto [it, inserted] = clusters.try_emplace(*idx, DeviceTarget::Cluster{*idx, table.front(), table.back()});
      if (s.arg == "MAX_FREQ") it->second.max_khz = *value < 0 ? table.back() : floor_in(table, *value);
      else it->second.min_khz = *value <= 0 ? table.front() : ceil_in(table, *value);
      continue;
    }
    if (s.param == "GPU" && (s.arg == "MIN_FREQ" || s.arg == "MAX_FREQ")) {
      gpu_clock_seen = true;
      if (s.arg == "MAX_FREQ") gpu_max = *value < 0 ? t.gpu_hz.back() : floor_in(t.gpu_hz, *value);
      else gpu_min = *value <= 0 ? t.gpu_hz.front() : ceil_in(t.gpu_hz, *value);
      continue;
    }
    if (s.param == "EMC" && s.arg == "MAX_FREQ") {
      std::optional<fs::path> cap_path;
      if (param) {
        cap_path = param->resolve(board.root, "MAX_FREQ", l4t);   // MAX_FREQ or MAX_FREQ_KNEXT (R36)
      }
      if (!cap_path) cap_path = board.ops->emc_paths(board.root, board.info.l4t_major()).cap;
      if (!cap_path) return invalid_argument(where + ": EMC MAX_FREQ set but this board has no nvpmodel EMC cap file");
      target.emc_cap_path = *cap_path;
      target.emc_cap_hz = *value < 0 ? 0 : *value;
    }
  }
  for (auto& [idx, c] : clusters) {
    c.min_khz = std::min(c.min_khz, c.max_khz);
    target.clusters.push_back(c);
  }
  if (gpu_min || gpu_max) {
    int64_t mx = gpu_max.value_or(t.gpu_hz.back());
    int64_t mn = std::min(gpu_min.value_or(t.gpu_hz.front()), mx);
    target.gpu_min_max_hz = {mn, mx};
  }
  drop_offline_clusters(board, target);
  target.fan_max = opts.fan_max;
  if (opts.pin_clocks) add_pin(board, target);
  return target;
}

Result<DeviceTarget> plan_pin_current(const Board& board, const ApplyOptions& opts) {
  const FrequencyTables& t = board.tables;
  DeviceTarget target;
  for (size_t i = 0; i < t.clusters.size(); ++i) {
    const auto& c = t.clusters[i];
    bool any_online = false;
    for (int cpu : c.cpus) {
      auto on = cpu_online(board.root, cpu);
      if (on.is_ok() && *on) any_online = true;
    }
    if (!any_online) continue;
    JS_ASSIGN_OR_RETURN(int64_t mx, read_int(c.cpufreq_dir / "scaling_max_freq"));
    target.clusters.push_back({i, mx, mx});
  }
  JS_ASSIGN_OR_RETURN(int64_t gmax, read_int(t.gpu.devfreq_dir / "max_freq"));
  target.gpu_min_max_hz = {gmax, gmax};
  target.emc_lock_hz = emc_pin_rate(board);
  target.fan_max = opts.fan_max;
  add_pin(board, target);
  return target;
}

PowerController::PowerController(Board board, fs::path state_dir, std::shared_ptr<ServiceControl> services)
    : board_(std::move(board)),
      state_dir_(std::move(state_dir)),
      services_(services ? std::move(services) : std::make_shared<SystemctlServiceControl>()) {}

Status PowerController::stop_fan_service() {
  const std::string what = std::string("fan_max: stopping ") + kFanService + " (it overrides the fan on L4T R35+)";
  // Recorded before the stop: an agent that dies right after it still has it started at the next restore.
  JS_RETURN_IF_ERROR(record_stopped_service(state_dir_, board_.root, kFanService));
  Status s = services_->stop(kFanService);
  if (s.is_ok()) return s;
  // A stop that failed and left it running leaves nothing to start on restore.
  auto still = services_->is_active(kFanService);
  if (still.is_ok() && *still) {
    Status forgot = forget_stopped_service(state_dir_, kFanService);
    if (!forgot.is_ok()) JS_LOG_WARN << "device: " << forgot.message();
  }
  return s.with_context(what);
}

Status PowerController::write(EntryRole role, const fs::path& path, const std::string& value) {
  // Files that only appear once a CPU is online are recorded here, still before their first change.
  JS_RETURN_IF_ERROR(record_originals(state_dir_, board_.root, {{role, path}}));
  JS_RETURN_IF_ERROR(write_verified(path, value));
  last_writes_.emplace_back(path, value);
  return Status::ok();
}

// See plan_apply().
struct PowerController::ApplyPlan {
  std::map<int, bool> online_now;         // CPUs whose online state could be read
  std::vector<int> to_online, to_offline;  // ascending, descending
  std::vector<std::pair<EntryRole, fs::path>> files;  // every file known now (recorded before the first write)
  fs::path railgate;
  EmcPaths emc;
  std::optional<FanControl> fan;
  bool stop_fan_service = false;

  bool will_be_online(const DeviceTarget& target, int cpu) const {
    auto it = target.online.find(cpu);
    if (it != target.online.end()) return it->second;
    auto now = online_now.find(cpu);
    return now != online_now.end() && now->second;
  }
};

Result<PowerController::ApplyPlan> PowerController::plan_apply(const DeviceTarget& target) {
  const fs::path& root = board_.root;
  const FrequencyTables& t = board_.tables;
  ApplyPlan plan;
  // Current CPU online state and the CPUs to change.
  for (int cpu = 0; cpu < t.cores; ++cpu) {
    auto on = cpu_online(root, cpu);
    if (!on.is_ok()) {
      if (target.online.count(cpu)) return on.status();
      continue;
    }
    plan.online_now[cpu] = *on;
  }
  if (auto it = target.online.find(0); it != target.online.end() && !it->second) {
    return invalid_argument("cpu0 can never be offlined (" + (cpu_dir(root, 0) / "online").string() + ")");
  }
  for (const auto& [cpu, on] : target.online) {
    if (plan.online_now[cpu] == on) continue;
    (on ? plan.to_online : plan.to_offline).push_back(cpu);
  }
  std::sort(plan.to_offline.rbegin(), plan.to_offline.rend());

  // Every file known now; clusters that are fully offline right now get checked after onlining.
  auto& files = plan.files;
  for (int cpu : plan.to_online) files.emplace_back(EntryRole::kCpuOnline, cpu_dir(root, cpu) / "online");
  for (int cpu : plan.to_offline) files.emplace_back(EntryRole::kCpuOnline, cpu_dir(root, cpu) / "online");
  for (const auto& c : target.clusters) {
    const auto& cl = t.clusters.at(c.index);
    bool online_now = std::any_of(cl.cpus.begin(), cl.cpus.end(), [&](int cpu) { return plan.online_now[cpu]; });
    if (!online_now) continue;
    files.emplace_back(EntryRole::kFreqMin, cl.cpufreq_dir / "scaling_min_freq");
    files.emplace_back(EntryRole::kFreqMax, cl.cpufreq_dir / "scaling_max_freq");
  }
  plan.railgate = t.gpu.device_dir / "railgate_enable";
  if (target.gpu_railgate_off) files.emplace_back(EntryRole::kOther, plan.railgate);
  for (const auto* list : {&target.gpu_power_before, &target.gpu_power_after, &target.hwmon_limits}) {
    for (const auto& fv : *list) files.emplace_back(EntryRole::kOther, fv.path);
  }
  if (target.gpu_min_max_hz) {
    files.emplace_back(EntryRole::kFreqMin, t.gpu.devfreq_dir / "min_freq");
    files.emplace_back(EntryRole::kFreqMax, t.gpu.devfreq_dir / "max_freq");
  }
  plan.emc = board_.ops->emc_paths(root, board_.info.l4t_major());
  if (target.emc_cap_hz) {
    if (!target.emc_cap_path) return internal_error("EMC cap value without a cap path");
    files.emplace_back(EntryRole::kOther, *target.emc_cap_path);
  }
  if (target.emc_lock_hz) {
    files.emplace_back(EntryRole::kOther, plan.emc.lock);
    files.emplace_back(EntryRole::kOther, plan.emc.rate);
  }
  if (target.fan_max) {
    plan.fan = find_fan(root);
    if (!plan.fan) {
      return io_error("no fan control under " + under(root, "/sys/devices/pwm-fan").string() + " or " +
                      under(root, "/sys/devices/platform/pwm-fan*/hwmon/hwmon*/pwm1").string());
    }
    if (plan.fan->legacy) {
      files.emplace_back(EntryRole::kOther, plan.fan->temp_control);
      files.emplace_back(EntryRole::kOther, plan.fan->target_pwm);
    } else {
      for (const auto& p : plan.fan->pwm) files.emplace_back(EntryRole::kOther, p);
    }
  }
  for (const auto& [role, path] : files) {
    if (!exists_file(path)) return io_error("missing file " + path.string() + " (needed to apply the power mode)");
  }
  // R35+: nvfancontrol.service rewrites pwm1 while it runs. It is asked before anything is written, so a
  // board whose services cannot be reached (no systemctl, no systemd, as in a container) is left as it is.
  if (plan.fan && fan_service_manages(board_, *plan.fan)) {
    auto active = services_->is_active(kFanService);
    if (!active) {
      return active.status().with_context(std::string("fan_max: cannot tell whether ") + kFanService +
                                          " runs, which overrides the fan on L4T R35+ (nothing was written)");
    }
    plan.stop_fan_service = *active;
  }
  return plan;
}

Status PowerController::write_range(const fs::path& min_path, const fs::path& max_path, int64_t min, int64_t max) {
  JS_ASSIGN_OR_RETURN(int64_t cur_max, read_int(max_path));
  if (max >= cur_max) {
    JS_RETURN_IF_ERROR(write(EntryRole::kFreqMax, max_path, std::to_string(max)));
    return write(EntryRole::kFreqMin, min_path, std::to_string(min));
  }
  JS_RETURN_IF_ERROR(write(EntryRole::kFreqMin, min_path, std::to_string(min)));
  return write(EntryRole::kFreqMax, max_path, std::to_string(max));
}

Status PowerController::write_plan(const DeviceTarget& target, const ApplyPlan& plan) {
  const fs::path& root = board_.root;
  const FrequencyTables& t = board_.tables;
  // 1. Online CPUs (ascending).
  for (int cpu : plan.to_online) JS_RETURN_IF_ERROR(write(EntryRole::kCpuOnline, cpu_dir(root, cpu) / "online", "1"));
  // 2. CPU clusters: raising writes max first, lowering writes min first.
  for (const auto& c : target.clusters) {
    const auto& cl = t.clusters.at(c.index);
    JS_RETURN_IF_ERROR(write_range(cl.cpufreq_dir / "scaling_min_freq", cl.cpufreq_dir / "scaling_max_freq", c.min_khz,
                                   c.max_khz));
  }
  // 3. cpuidle states off on every CPU that stays online.
  if (target.disable_cpuidle) {
    for (int cpu = 0; cpu < t.cores; ++cpu) {
      if (!plan.will_be_online(target, cpu)) continue;
      for (const auto& state : list_prefixed(cpu_dir(root, cpu) / "cpuidle", "state")) {
        if (exists_file(state / "disable")) JS_RETURN_IF_ERROR(write(EntryRole::kOther, state / "disable", "1"));
      }
    }
  }
  // 4. GPU: keep it powered, then its clocks.
  if (target.gpu_railgate_off) JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.railgate, "0"));
  for (const auto& fv : target.gpu_power_before) JS_RETURN_IF_ERROR(write(EntryRole::kOther, fv.path, fv.value));
  if (target.gpu_min_max_hz) {
    auto [gmin, gmax] = *target.gpu_min_max_hz;
    JS_RETURN_IF_ERROR(write_range(t.gpu.devfreq_dir / "min_freq", t.gpu.devfreq_dir / "max_freq", gmin, gmax));
  }
  for (const auto& fv : target.gpu_power_after) JS_RETURN_IF_ERROR(write(EntryRole::kOther, fv.path, fv.value));
  // 5. EMC: nvpmodel cap, then lock and rate.
  if (target.emc_cap_hz) JS_RETURN_IF_ERROR(write(EntryRole::kOther, *target.emc_cap_path, std::to_string(*target.emc_cap_hz)));
  if (target.emc_lock_hz) {
    // In the order jetson_clocks uses on the family (EmcPaths::rate_before_lock).
    const std::string rate = std::to_string(*target.emc_lock_hz);
    if (plan.emc.rate_before_lock) JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.emc.rate, rate));
    JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.emc.lock, "1"));
    if (!plan.emc.rate_before_lock) JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.emc.rate, rate));
  }
  // 5b. Over-current limits of the mode (PARAM TYPE=HWMON).
  for (const auto& fv : target.hwmon_limits) JS_RETURN_IF_ERROR(write(EntryRole::kOther, fv.path, fv.value));
  // 6. Fan.
  if (plan.fan) {
    if (plan.fan->legacy) {
      JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.fan->temp_control, "0"));
      JS_RETURN_IF_ERROR(write(EntryRole::kOther, plan.fan->target_pwm, "255"));
    } else {
      for (const auto& p : plan.fan->pwm) JS_RETURN_IF_ERROR(write(EntryRole::kOther, p, "255"));
    }
  }
  // 7. Offline CPUs (descending).
  for (int cpu : plan.to_offline) JS_RETURN_IF_ERROR(write(EntryRole::kCpuOnline, cpu_dir(root, cpu) / "online", "0"));
  return Status::ok();
}

Status PowerController::apply(const DeviceTarget& target) {
  last_writes_.clear();
  JS_ASSIGN_OR_RETURN(ApplyPlan plan, plan_apply(target));
  JS_RETURN_IF_ERROR(record_originals(state_dir_, board_.root, plan.files));
  // 0. Stop the fan service before anything is written (jetson_clocks --fan does the same).
  if (plan.stop_fan_service) JS_RETURN_IF_ERROR(stop_fan_service());
  JS_RETURN_IF_ERROR(write_plan(target, plan));
  for (const auto& note : target.notes) JS_LOG_INFO << "device: " << note;
  JS_LOG_INFO << "device: applied " << last_writes_.size() << " setting(s) on " << module_name(board_.info.module);
  return Status::ok();
}

Status PowerController::apply(const PowerMode& mode, const ApplyOptions& opts) {
  JS_ASSIGN_OR_RETURN(DeviceTarget target, plan_power_mode(board_, mode, opts));
  return apply(target);
}

Status PowerController::apply_named(std::string_view name_or_id, const ApplyOptions& opts) {
  JS_ASSIGN_OR_RETURN(DeviceTarget target, plan_named_mode(board_, name_or_id, opts));
  return apply(target);
}

Result<bool> PowerController::restore() { return restore_pending(state_dir_, nullptr, services_.get()); }

Status drop_page_cache(const fs::path& root) {
  ::sync();
  return write_raw(under(root, "/proc/sys/vm/drop_caches"), "3");
}

}  // namespace jetsweep::device
