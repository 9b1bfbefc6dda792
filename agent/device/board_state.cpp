#include "agent/device/board_state.hpp"

#include <algorithm>
#include <cstdio>

#include "agent/device/board_telemetry.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"

namespace jetsweep::device {

namespace {

constexpr double kTolerance = 0.02;

// Online CPUs: each cpuN's online flag (cpu0 may have none: always online), else the kernel's online list.
std::vector<int> online_cpus(const fs::path& root) {
  std::vector<int> out;
  bool any_flag = false;
  for (const auto& dir : list_prefixed(under(root, "/sys/devices/system/cpu"), "cpu")) {
    auto n = numeric_suffix(dir.filename().string(), "cpu");
    if (!n) continue;
    auto flag = read_int(dir / "online");
    any_flag = any_flag || flag.is_ok();
    if ((flag.is_ok() && *flag != 0) || (!flag.is_ok() && *n == 0)) out.push_back(*n);
  }
  if (any_flag) return out;
  if (auto text = read_trimmed(under(root, "/sys/devices/system/cpu/online"))) {
    if (auto cpus = parse_cpu_list(*text)) return *cpus;
  }
  return out;
}

fs::path cpufreq(const fs::path& root, int cpu, const char* file) {
  return under(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/" + file);
}

std::string mhz(double hz_per_unit_value, double per_mhz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", hz_per_unit_value / per_mhz);
  return buf;
}

}  // namespace

proto::BoardState read_board_state(const fs::path& root, const Board* board) {
  proto::BoardState s;
  const auto cpus = online_cpus(root);
  s.cores_online = static_cast<int64_t>(cpus.size());
  bool pinned = !cpus.empty();
  for (int cpu : cpus) {
    auto mx = read_int(cpufreq(root, cpu, "scaling_max_freq"));
    auto mn = read_int(cpufreq(root, cpu, "scaling_min_freq"));
    if (mx.is_ok()) s.cpu_khz = std::max(s.cpu_khz, *mx);
    pinned = pinned && mx.is_ok() && mn.is_ok() && *mn == *mx;
  }
  if (board) {
    const fs::path& dev = board->tables.gpu.devfreq_dir;
    auto gmax = read_int(dev / "max_freq");
    auto gmin = read_int(dev / "min_freq");
    if (gmax.is_ok()) s.gpu_hz = *gmax;
    pinned = pinned && gmax.is_ok() && gmin.is_ok() && *gmin == *gmax;
    if (board->ops) {
      const EmcPaths emc = board->ops->emc_paths(board->root, board->info.l4t_major());
      if (auto rate = read_int(emc.current_rate); rate.is_ok()) s.emc_hz = *rate;
    }
    // GPU power gating as the board runs it (read back from the mask files; the conf names them, else NVIDIA's
    // places). Unreadable masks stay unset ("unknown"), never 0.
    auto conf = read_nvpmodel_conf(board->root);
    auto gating = read_board_gating(board->root, conf.is_ok() ? &*conf : nullptr, board->info.l4t_major());
    if (gating.is_ok()) {
      s.tpc_pg_mask = gating->gating.tpc_pg_mask;
      s.fbp_pg_mask = gating->gating.fbp_pg_mask;
    }
    if (auto fan = find_fan(root)) {
      bool max = false;
      if (fan->legacy) {
        auto tc = read_int(fan->temp_control);
        auto pwm = read_int(fan->target_pwm);
        max = tc.is_ok() && *tc == 0 && pwm.is_ok() && *pwm == 255;
      } else {
        max = !fan->pwm.empty();
        for (const auto& p : fan->pwm) {
          auto v = read_int(p);
          max = max && v.is_ok() && *v == 255;
        }
      }
      s.fan = max ? "max" : "auto";
    }
  }
  s.clocks_pinned = pinned;
  return s;
}

proto::ClockReading read_clocks(const fs::path& root, const Board* board) {
  proto::ClockReading c;
  const auto cpus = online_cpus(root);
  c.cores_online = static_cast<int64_t>(cpus.size());
  double sum = 0;
  int n = 0;
  for (int cpu : cpus) {
    if (auto f = read_int(cpufreq(root, cpu, "scaling_cur_freq")); f.is_ok()) {
      sum += static_cast<double>(*f);
      ++n;
    }
  }
  if (n > 0) c.cpu_khz = sum / n;
  if (board) {
    if (auto g = read_int(board->tables.gpu.devfreq_dir / "cur_freq"); g.is_ok()) c.gpu_hz = static_cast<double>(*g);
    if (board->ops) {
      const EmcPaths emc = board->ops->emc_paths(board->root, board->info.l4t_major());
      if (auto rate = read_int(emc.current_rate); rate.is_ok()) c.emc_hz = static_cast<double>(*rate);
    }
  }
  return c;
}

std::string board_throttle_reason(const fs::path& root, const proto::BoardState& applied) {
  const auto alarms = raised_overcurrent_alarms(discover_rails(root));
  if (!alarms.empty()) return "over-current alarm " + alarms.front();
  if (applied.clocks_pinned && applied.gpu_hz > 0) {
    const double target = static_cast<double>(applied.gpu_hz);
    if (auto measured = read_measured_gpu_hz(root); measured && *measured < target * (1.0 - kTolerance))
      return "GPU measured at " + mhz(*measured, 1e6) + " MHz (nafll_gpc pto_counter), pinned at " + mhz(target, 1e6) +
             " MHz";
  }
  return "";
}

std::string throttle_reason(const proto::BoardState& applied, const proto::ClockReading& c) {
  if (applied.cores_online > 0 && c.cores_online > 0 && c.cores_online != applied.cores_online)
    return "cores online " + std::to_string(c.cores_online) + ", applied " + std::to_string(applied.cores_online);
  auto check = [&](const char* what, const std::optional<double>& now, int64_t set, double per_mhz) -> std::string {
    if (!now || set <= 0) return "";
    const double target = static_cast<double>(set);
    if (applied.clocks_pinned && *now < target * (1.0 - kTolerance))
      return std::string(what) + " at " + mhz(*now, per_mhz) + " MHz, pinned at " + mhz(target, per_mhz) + " MHz";
    if (*now > target * (1.0 + kTolerance))
      return std::string(what) + " at " + mhz(*now, per_mhz) + " MHz, above its cap of " + mhz(target, per_mhz) + " MHz";
    return "";
  };
  for (auto r : {check("CPU", c.cpu_khz, applied.cpu_khz, 1e3), check("GPU", c.gpu_hz, applied.gpu_hz, 1e6)})
    if (!r.empty()) return r;
  // The EMC read back is its current rate, not a cap: it is judged only when locked (clocks pinned).
  if (!applied.clocks_pinned) return "";
  return check("EMC", c.emc_hz, applied.emc_hz, 1e6);
}

}  // namespace jetsweep::device
