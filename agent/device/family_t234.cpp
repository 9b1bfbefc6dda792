// Tegra234 (AGX Orin, Orin NX, Orin Nano): BPMP debugfs EMC, A78AE clusters of four cores;
// R36 moved the nvpmodel EMC cap and the activity monitor.
#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

class T234Ops final : public FamilyOps {
 public:
  Family family() const override { return Family::kT234; }

  EmcPaths emc_paths(const fs::path& root, int l4t_major) const override {
    EmcPaths p;
    p.table = under(root, "/sys/kernel/debug/bpmp/debug/emc/possible_rates");
    p.lock = under(root, "/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked");
    p.rate = under(root, "/sys/kernel/debug/bpmp/debug/clk/emc/rate");
    p.current_rate = p.rate;
    fs::path cap_r36 = under(root, "/sys/kernel/nvpmodel_clk_cap/emc");
    fs::path cap_r35 = under(root, "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
    fs::path first = l4t_major >= 36 ? cap_r36 : cap_r35;
    fs::path second = l4t_major >= 36 ? cap_r35 : cap_r36;
    if (exists_file(first)) p.cap = first;
    else if (exists_file(second)) p.cap = second;
    fs::path act_r36 = under(root, "/sys/kernel/debug/cactmon/mc_all");
    fs::path act_r35 = under(root, "/sys/kernel/actmon_avg_activity/mc_all");
    p.activity = l4t_major >= 36 ? std::vector<fs::path>{act_r36, act_r35} : std::vector<fs::path>{act_r35, act_r36};
    return p;
  }

  // AGX Orin: cpu0,4,8; Orin NX: cpu0,4; Orin Nano (6 cores): 0-3 and 4-5.
  std::vector<std::vector<int>> default_clusters(Module /*module*/, int cores) const override {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < cores; i += 4) {
      std::vector<int> c;
      for (int j = i; j < i + 4 && j < cores; ++j) c.push_back(j);
      out.push_back(c);
    }
    return out;
  }

  std::vector<std::string> gpu_devfreq_fallbacks(int l4t_major) const override {
    if (l4t_major >= 36) return {"/sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu"};
    return {"/sys/devices/17000000.ga10b/devfreq/17000000.ga10b"};
  }

  std::vector<std::string> gpu_load_fallbacks(int l4t_major) const override {
    if (l4t_major >= 36) return {"/sys/devices/platform/gpu.0/load", "/sys/devices/gpu.0/load"};
    return {"/sys/devices/gpu.0/load", "/sys/devices/platform/gpu.0/load"};
  }
};

}  // namespace

const FamilyOps& family_ops_t234() {
  static const T234Ops kOps;
  return kOps;
}

}  // namespace jetsweep::device
