#include "agent/device/run_mode.hpp"

namespace jetsweep::device {

std::string RunModeRequest::to_string() const {
  if (!name.empty()) return "nvpmodel " + name + (pin_clocks ? " (clocks pinned)" : "");
  std::string s;
  auto add = [&](const char* key, int64_t v) {
    if (v > 0) s += (s.empty() ? "" : " ") + std::string(key) + "=" + std::to_string(v);
  };
  add("cores", cores);
  add("cpu_khz", cpu_khz);
  add("gpu_hz", gpu_hz);
  add("emc_hz", emc_hz);
  return s + " (others as is)" + (pin_clocks ? " (clocks pinned)" : "");
}

Result<DeviceTarget> plan_run_mode(const Board& board, const RunModeRequest& r) {
  ApplyOptions opts;
  opts.pin_clocks = r.pin_clocks;
  if (!r.name.empty()) {
    if (r.cores || r.cpu_khz || r.gpu_hz || r.emc_hz)
      return invalid_argument("power mode: give either a named mode or explicit settings, not both");
    return plan_named_mode(board, r.name, opts);
  }
  const FrequencyTables& t = board.tables;
  if (t.cpu_khz.empty() || t.gpu_hz.empty() || t.emc_hz.empty())
    return invalid_argument("board under " + board.root.string() + " has an empty frequency table");
  // Values not requested are filled with table maxima only to pass validation, then left out.
  PowerMode m;
  m.cores = static_cast<int>(r.cores > 0 ? r.cores : t.cores);
  m.cpu_khz = r.cpu_khz > 0 ? r.cpu_khz : t.cpu_khz.back();
  m.gpu_hz = r.gpu_hz > 0 ? r.gpu_hz : t.gpu_hz.back();
  m.emc_hz = r.emc_hz > 0 ? r.emc_hz : t.emc_hz.back();
  if (r.cores > t.cores)
    return invalid_argument("cores " + std::to_string(r.cores) + " outside 1.." + std::to_string(t.cores) + " (CPUs under " +
                            (board.root / "sys/devices/system/cpu").string() + ")");
  JS_ASSIGN_OR_RETURN(DeviceTarget target, plan_power_mode(board, m, ApplyOptions{}));
  if (r.cores <= 0) target.online.clear();
  if (r.cpu_khz <= 0) target.clusters.clear();
  if (r.gpu_hz <= 0) target.gpu_min_max_hz.reset();
  if (r.emc_hz <= 0) {
    target.emc_cap_hz.reset();
    target.emc_cap_path.reset();
    target.emc_lock_hz.reset();
  }
  if (r.pin_clocks) {
    target.disable_cpuidle = true;
    target.gpu_railgate_off = true;
    for (auto& c : target.clusters) c.min_khz = c.max_khz;
    if (target.gpu_min_max_hz) target.gpu_min_max_hz->first = target.gpu_min_max_hz->second;
  }
  return target;
}

std::string device_class_of(const BoardInfo& info) {
  switch (info.module) {
    case Module::kNano: return "nano";
    case Module::kXavierNx: return "xavier-nx";
    case Module::kAgxXavier: return "agx-xavier";
    case Module::kAgxOrin: return "agx-orin";
    case Module::kOrinNx: return "orin-nx";
    case Module::kOrinNano: return "orin-nano";
    case Module::kUnknown: break;
  }
  return "jetson-" + std::string(family_name(info.family));
}

}  // namespace jetsweep::device
