// Tegra194 (AGX Xavier, Xavier NX): BPMP debugfs EMC, Carmel clusters of two cores.
#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

class T194Ops final : public FamilyOps {
 public:
  Family family() const override { return Family::kT194; }

  EmcPaths emc_paths(const fs::path& root, int /*l4t_major*/) const override {
    EmcPaths p;
    p.table = under(root, "/sys/kernel/debug/bpmp/debug/emc/possible_rates");
    p.lock = under(root, "/sys/kernel/debug/bpmp/debug/clk/emc/mrq_rate_locked");
    p.rate = under(root, "/sys/kernel/debug/bpmp/debug/clk/emc/rate");
    p.current_rate = p.rate;
    fs::path cap = under(root, "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
    if (exists_file(cap)) p.cap = cap;
    p.activity = {under(root, "/sys/kernel/actmon_avg_activity/mc_all")};
    return p;
  }

  // AGX Xavier: cpu0,2,4,6 lead pairs; Xavier NX: cpu0,2,4.
  std::vector<std::vector<int>> default_clusters(Module /*module*/, int cores) const override {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < cores; i += 2) {
      std::vector<int> c{i};
      if (i + 1 < cores) c.push_back(i + 1);
      out.push_back(c);
    }
    return out;
  }

  std::vector<std::string> gpu_devfreq_fallbacks(int /*l4t_major*/) const override {
    return {"/sys/devices/17000000.gv11b/devfreq/17000000.gv11b"};
  }

  std::vector<std::string> gpu_load_fallbacks(int /*l4t_major*/) const override {
    return {"/sys/devices/gpu.0/load"};
  }
};

}  // namespace

const FamilyOps& family_ops_t194() {
  static const T194Ops kOps;
  return kOps;
}

}  // namespace jetsweep::device
