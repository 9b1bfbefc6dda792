// Tegra234 (AGX Orin, Orin NX, Orin Nano): BPMP debugfs EMC, A78AE clusters of four cores;
// R36 moved the nvpmodel EMC cap and the activity monitor.
#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

class T234Ops final : public FamilyOps {
 public:
  Family family() const override { return Family::kT234; }

  // Orin keeps Xavier's BPMP debugfs EMC nodes (table, lock, rate); R36 moved the nvpmodel cap and the activity
  // monitor, so the R36 places come first on R36 and are the fallback before it.
  EmcPaths emc_paths(const fs::path& root, int l4t_major) const override {
    EmcPaths p = family_ops_t194().emc_paths(root, l4t_major);  // R35 cap (when present) and activity
    const bool r36 = l4t_major >= 36;
    fs::path cap_r36 = under(root, "/sys/kernel/nvpmodel_clk_cap/emc");
    if (exists_file(cap_r36) && (r36 || !p.cap)) p.cap = cap_r36;
    // R36's EMC activity: BPMP's actmon (NVPMODEL.md), then the cactmon debugfs node. Its unit is taken to be
    // the older actmon's (kHz of EMC busy, divided by the EMC rate for emc_util_pct): not yet checked on a board.
    const std::vector<fs::path> act_r36 = {under(root, "/sys/kernel/debug/bpmp/debug/actmon/mc_all_avg_activity"),
                                           under(root, "/sys/kernel/debug/cactmon/mc_all")};
    p.activity.insert(r36 ? p.activity.begin() : p.activity.end(), act_r36.begin(), act_r36.end());
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
