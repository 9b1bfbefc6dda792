// Tegra210 (Jetson Nano): clk-framework debugfs EMC and the single A57 cluster.
//
// EMC table source on t210 (no BPMP): /sys/kernel/debug/clk/emc/clk_possible_rates lists every rate
// the EMC clock supports in kHz, including low rates the bandwidth manager never uses (40.8, 68 and
// 102 MHz). The table is clipped to tegra_bwmgr's emc_min_rate..emc_max_rate (Hz) when those files
// exist, which yields the 7 rates 204..1600 MHz of JETSON.md. If clk_possible_rates is missing (debugfs
// not mounted, not root) reading the tables fails with an error naming that path.
#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

class T210Ops final : public FamilyOps {
 public:
  Family family() const override { return Family::kT210; }

  EmcPaths emc_paths(const fs::path& root, int l4t_major) const override {
    EmcPaths p;
    p.table = under(root, "/sys/kernel/debug/clk/emc/clk_possible_rates");
    p.table_min = under(root, "/sys/kernel/debug/tegra_bwmgr/emc_min_rate");
    p.table_max = under(root, "/sys/kernel/debug/tegra_bwmgr/emc_max_rate");
    p.lock = under(root, "/sys/kernel/debug/clk/override.emc/clk_state");
    p.rate = under(root, "/sys/kernel/debug/clk/override.emc/clk_update_rate");
    // The EMC clock's own rate is the live one; override.emc's follows it only while the override is on.
    p.current_rate = under(root, "/sys/kernel/debug/clk/emc/clk_rate");
    if (!exists_file(p.current_rate)) p.current_rate = under(root, "/sys/kernel/debug/clk/override.emc/clk_rate");
    // L4T R32's jetson_clocks on the Nano locks first (clk_state = 1), then writes clk_update_rate; rate first
    // was the older R28 script's order.
    p.rate_before_lock = l4t_major > 0 && l4t_major < 32;
    fs::path cap = under(root, "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
    if (exists_file(cap)) p.cap = cap;
    p.activity = {under(root, "/sys/kernel/actmon_avg_activity/mc_all")};
    return p;
  }

  std::vector<std::vector<int>> default_clusters(Module /*module*/, int cores) const override {
    std::vector<int> all;
    for (int i = 0; i < cores; ++i) all.push_back(i);
    return {all};
  }

  std::vector<std::string> gpu_devfreq_fallbacks(int /*l4t_major*/) const override {
    return {"/sys/devices/gpu.0/devfreq/57000000.gpu"};
  }

  std::vector<std::string> gpu_load_fallbacks(int /*l4t_major*/) const override {
    return {"/sys/devices/gpu.0/load"};
  }
};

}  // namespace

const FamilyOps& family_ops_t210() {
  static const T210Ops kOps;
  return kOps;
}

}  // namespace jetsweep::device
