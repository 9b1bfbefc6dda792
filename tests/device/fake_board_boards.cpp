#include "tests/device/fake_board_boards.hpp"

#include <stdexcept>

namespace jetsweep::device::testing {

namespace {

std::vector<int64_t> ladder(int64_t first, int64_t step, int64_t last) {
  std::vector<int64_t> v;
  for (int64_t f = first; f <= last; f += step) v.push_back(f);
  return v;
}

// The ladder up to `last`, then the board's own top rate.
std::vector<int64_t> ladder_then(int64_t last, int64_t top) {
  auto v = ladder(115200, 76800, last);
  v.push_back(top);
  return v;
}

const char* const kR36Release =
    "# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64, DATE: Mon May  6 17:34:21 UTC 2024\n";
// The AGX Orin GPU ladder of an R35/R36 BSP (NVPMODEL.md): NVIDIA's own mode caps 408, 612 and 816 MHz are steps
// of it (102 MHz steps from 306 MHz, then 1300.5). The PowerTrain paper's 13-step ladder (114.75 ... 1300.5 MHz)
// is an older BSP's and stays the simulated agx-orin's (agent/device/sim_tables.cpp).
const std::vector<int64_t> kOrinGpu = {306000000,  408000000,  510000000,  612000000,  714000000, 816000000,
                                       918000000, 1020000000, 1122000000, 1224000000, 1300500000};

// The t194 files' TPC gating and GPU power control blocks (no _KNEXT paths).
const char* const kT194TpcParam =
    "< PARAM TYPE=FILE NAME=TPC_POWER_GATING >\nTPC_PG_MASK /sys/devices/gpu.0/tpc_pg_mask\n\n"
    "< PARAM TYPE=FILE NAME=GPU_POWER_CONTROL_ENABLE >\nGPU_PWR_CNTL_EN /sys/devices/gpu.0/power/control\n\n"
    "< PARAM TYPE=FILE NAME=GPU_POWER_CONTROL_DISABLE >\nGPU_PWR_CNTL_DIS /sys/devices/gpu.0/power/control\n\n";

// A t194 mode's lines before its clocks: its TPC mask, then GPU power control on.
std::string t194_mode_gating(int tpc) {
  return "TPC_POWER_GATING TPC_PG_MASK " + std::to_string(tpc) + "\nGPU_POWER_CONTROL_ENABLE GPU_PWR_CNTL_EN on\n";
}

BpmpBoard agx_xavier_r32() {
  BpmpBoard b;
  b.id = {"agx-xavier-r32", "agx-xavier", Family::kT194, Module::kAgxXavier, 32, "R32.5.1", "p2972-0000", 2};
  b.compatible = {"nvidia,p2972-0000", "nvidia,galen", "nvidia,tegra194"};
  b.model = "Jetson-AGX";
  b.release = "# R32 (release), REVISION: 5.1, GCID: 27362550, BOARD: t186ref, EABI: aarch64, DATE: Wed May 19 18:16:00 UTC 2021\n";
  b.kernel = "4.9.201-tegra";
  b.clusters = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  b.cpu_khz = ladder(115200, 76800, 2265600);
  b.gpu = {"/sys/devices/17000000.gv11b", "17000000.gv11b", "gv11b", "/sys/devices/gpu.0", {}};
  b.gpu.hz = {114750000, 216750000, 318750000, 420750000,  522750000,  624750000,  675750000,
              828750000, 905250000, 1032750000, 1198500000, 1236750000, 1338750000, 1377000000};
  b.emc.khz = {204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000, 2133000};
  b.emc.cap = "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
  b.emc.activity = "/sys/kernel/actmon_avg_activity/mc_all";
  b.rail_banks = {{false, "/sys/devices/3160000.i2c/i2c-1", "1-0040", 0,
                   {{"GPU", 19144, 60, 1155}, {"CPU", 19144, 20, 385}, {"SOC", 19144, 130, 2502}}},
                  {false, "/sys/devices/3160000.i2c/i2c-1", "1-0041", 1,
                   {{"CV", 19144, 0, 0}, {"VDDRQ", 19144, 10, 192}, {"SYS5V", 4984, 540, 2692}}}};
  b.total_power_w = (1155 + 385 + 2502 + 0 + 192 + 2692) / 1000.0;
  b.total_rule = "sum(GPU+CPU+SOC+CV+VDDRQ+SYS5V)";
  b.thermal = {{"AO-therm", 26500}, {"CPU-therm", 28000}, {"GPU-therm", 28000}, {"PLL-therm", 27000},
               {"PMIC-Die", 100000}, {"Tboard_tegra", 27000}, {"Tdiode_tegra", -256000}, {"thermal-fan-est", 27450}};
  b.memory = {16202660, 15000000, false};
  b.conf_clusters = {"CPU_DENVER_0", "CPU_DENVER_1", "CPU_DENVER_2", "CPU_DENVER_3"};
  // NVIDIA's nvpmodel_t194.conf values: a 1.2 GHz CPU floor (between table entries: rounded as cpufreq does).
  b.modes = {{0, "MAXN", 8, 1200000, -1, -1, 0, ""},
             {1, "MODE_10W", 2, 1200000, 1200000, 520000000, 1065600000, ""},
             {2, "MODE_15W", 4, 1200000, 1200000, 670000000, 1331200000, ""},
             {3, "MODE_30W_ALL", 8, 1200000, 1200000, 900000000, 1600000000, ""}};
  // NVIDIA's t194 masks: MODE_10W gates 2 of the 4 TPCs (TPC_PG_MASK 5), the others none; booted in MODE_15W.
  b.gating_params = kT194TpcParam;
  b.mode_gating = {t194_mode_gating(0), t194_mode_gating(5), t194_mode_gating(0), t194_mode_gating(0)};
  b.tpc_pg_mask_now = 0;
  return b;
}

BpmpBoard xavier_nx_r35() {
  BpmpBoard b;
  b.id = {"xavier-nx-r35", "xavier-nx", Family::kT194, Module::kXavierNx, 35, "R35.3.1", "p3668-0001", 2};
  b.compatible = {"nvidia,p3509-0000+p3668-0001", "nvidia,p3668-0001", "nvidia,tegra194"};
  b.model = "NVIDIA Jetson Xavier NX Developer Kit (eMMC)";
  b.release = "# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n";
  b.kernel = "5.10.104-tegra";
  b.clusters = {{0, 1}, {2, 3}, {4, 5}};
  b.cpu_khz = ladder_then(1881600, 1907200);
  b.gpu = {"/sys/devices/17000000.gv11b", "17000000.gv11b", "gv11b", "/sys/devices/gpu.0", {}};
  b.gpu.hz = {114750000, 204000000, 306000000, 408000000,  510000000,  599250000,  701250000, 752250000,
              803250000, 854250000, 905250000, 956250000, 1007250000, 1058250000, 1109250000};
  b.emc.khz = {204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000};
  b.emc.cap = "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
  b.emc.activity = "/sys/kernel/actmon_avg_activity/mc_all";
  b.rail_banks = {{true, "/sys/devices/platform/c250000.i2c/i2c-7", "7-0040", 5,
                   {{"VDD_IN", 5000, 960, 0}, {"VDD_CPU_GPU_CV", 5000, 150, 0}, {"VDD_SOC", 5000, 250, 0}}}};
  b.total_power_w = 4.8;
  b.total_rule = "VDD_IN";
  b.thermal = {{"AO-therm", 33000}, {"CPU-therm", 35500}, {"GPU-therm", 34000}, {"PLL-therm", 33500},
               {"PMIC-Die", 100000}, {"Tdiode_tegra", -256000}, {"thermal-fan-est", 34200}};
  b.fan_hwmon = "/sys/devices/platform/pwm-fan/hwmon/hwmon3";
  b.memory = {7772000, 6500000, true};
  b.conf_clusters = {"CPU_DENVER_0", "CPU_DENVER_1", "CPU_DENVER_2"};
  // NVIDIA's p3668 file: INA3221 over-current limits per mode (mA; 20W modes warn at 4000), EMC 1866 MHz in 20W.
  const std::string oc_15w = "VDDIN_OC_LIMIT WARN 3000\nVDDIN_OC_LIMIT CRIT 5000\n";
  const std::string oc_20w = "VDDIN_OC_LIMIT WARN 4000\nVDDIN_OC_LIMIT CRIT 5000\n";
  b.modes = {{0, "MODE_15W_2CORE", 2, 1190400, 1907200, 1109250000, 1600000000, oc_15w},
             {2, "MODE_15W_6CORE", 6, 1190400, 1420800, 1109250000, 1600000000, oc_15w},
             {6, "MODE_20W_2CORE", 2, 1190400, 1907200, 1109250000, 1866000000, oc_20w}};
  // NVIDIA's p3668 masks: every mode runs 3 of the 4 TPCs (TPC_PG_MASK 1).
  b.gating_params = std::string(kT194TpcParam) +
                    "< PARAM TYPE=HWMON NAME=VDDIN_OC_LIMIT >\n"
                    "WARN /sys/devices/platform/c250000.i2c/i2c-7/7-0040/hwmon curr1_max\n"
                    "CRIT /sys/devices/platform/c250000.i2c/i2c-7/7-0040/hwmon  curr1_crit\n\n";
  b.mode_gating = {t194_mode_gating(1), t194_mode_gating(1), t194_mode_gating(1)};
  b.tpc_pg_mask_now = 1;
  return b;
}

// NVIDIA's t234 PARAM blocks for GPU gating and power control, with the R36 (_KNEXT) paths beside the older ones.
std::string orin_gating_params(bool fbp) {
  std::string s;
  if (fbp)
    s += "< PARAM TYPE=FILE NAME=FBP_POWER_GATING >\nFBP_PG_MASK /sys/devices/gpu.0/fbp_pg_mask\n"
         "FBP_PG_MASK_KNEXT /sys/devices/platform/gpu.0/fbp_pg_mask\n\n";
  return s + "< PARAM TYPE=FILE NAME=TPC_POWER_GATING >\nTPC_PG_MASK /sys/devices/gpu.0/tpc_pg_mask\n"
             "TPC_PG_MASK_KNEXT /sys/devices/platform/gpu.0/tpc_pg_mask\n\n"
             "< PARAM TYPE=FILE NAME=GPU_POWER_CONTROL_ENABLE >\nGPU_PWR_CNTL_EN /sys/devices/gpu.0/power/control\n"
             "GPU_PWR_CNTL_EN_KNEXT /sys/devices/platform/gpu.0/power/control\n\n"
             "< PARAM TYPE=FILE NAME=GPU_POWER_CONTROL_DISABLE >\nGPU_PWR_CNTL_DIS /sys/devices/gpu.0/power/control\n"
             "GPU_PWR_CNTL_DIS_KNEXT  /sys/devices/platform/gpu.0/power/control\n\n";
}

// A mode's lines between CPU_ONLINE and its clocks, in NVIDIA's order.
std::string orin_mode_gating(int64_t tpc, std::optional<int64_t> fbp) {
  return (fbp ? "FBP_POWER_GATING FBP_PG_MASK " + std::to_string(*fbp) + "\n" : std::string()) +
         "TPC_POWER_GATING TPC_PG_MASK " + std::to_string(tpc) + "\nGPU_POWER_CONTROL_ENABLE GPU_PWR_CNTL_EN on\n";
}

// The EMC block of NVIDIA's t234 files: no space after '<', the R36 cap path as MAX_FREQ_KNEXT.
const char* const kOrinEmcParam =
    "<PARAM TYPE=CLOCK NAME=EMC >\nMAX_FREQ /sys/kernel/nvpmodel_emc_cap/emc_iso_cap\n"
    "MAX_FREQ_KNEXT /sys/kernel/nvpmodel_clk_cap/emc\n\n";

BpmpBoard agx_orin(int l4t_major) {
  const bool r36 = l4t_major >= 36;
  BpmpBoard b;
  b.id = {r36 ? "agx-orin-r36" : "agx-orin-r35", "agx-orin", Family::kT234, Module::kAgxOrin, l4t_major,
          r36 ? "R36.3.0" : "R35.4.1", "p3701-0005", 2};
  b.compatible = {"nvidia,p3737-0000+p3701-0005", "nvidia,p3701-0005", "nvidia,tegra234"};
  b.model = "Jetson AGX Orin";
  b.release = r36 ? kR36Release
                  : "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 "
                    "19:57:35 UTC 2023\n";
  b.kernel = r36 ? "5.15.136-tegra" : "5.10.120-tegra";
  b.clusters = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  b.cpu_khz = ladder_then(2188800, 2201600);
  if (r36) {
    b.gpu = {"/sys/devices/platform/bus@0/17000000.gpu", "17000000.gpu", "gpu", "/sys/devices/platform/gpu.0", {}};
    b.emc.cap = "/sys/kernel/nvpmodel_clk_cap/emc";
    b.emc.activity = "/sys/kernel/debug/bpmp/debug/actmon/mc_all_avg_activity";
  } else {
    b.gpu = {"/sys/devices/17000000.ga10b", "17000000.ga10b", "ga10b", "/sys/devices/gpu.0", {}};
    b.emc.cap = "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
    b.emc.activity = "/sys/kernel/actmon_avg_activity/mc_all";
  }
  b.gpu.hz = kOrinGpu;
  b.emc.khz = {204000, 665600, 2133000, 3199000};
  const std::string i2c = r36 ? "/sys/devices/platform/bus@0/c240000.i2c/i2c-1" : "/sys/devices/platform/c240000.i2c/i2c-1";
  b.rail_banks = {{true, i2c, "1-0040", r36 ? 1 : 4,
                   {{"VDD_GPU_SOC", 4992, 481, 0}, {"VDD_CPU_CV", 4992, 80, 0}, {"VIN_SYS_5V0", 4984, 809, 0}}},
                  {true, i2c, "1-0041", r36 ? 3 : 2, {{"NC", 0, 0, 0}, {"VDDQ_VDD2_1V8AO", 1800, 167, 0}, {"NC", 0, 0, 0}}}};
  b.total_power_w = (4992.0 * 481 + 4992.0 * 80 + 4984.0 * 809) / 1e6;
  b.total_rule = "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0)";
  b.thermal = {{"cpu-thermal", 42593}, {"gpu-thermal", -256000}, {"cv0-thermal", 41000}, {"cv1-thermal", 40500},
               {"cv2-thermal", 40800}, {"soc0-thermal", 41200}, {"soc1-thermal", 41300}, {"soc2-thermal", 41100},
               {"tj-thermal", 42593}, {"tboard-thermal", 35000}, {"tdiode-thermal", 36000}};
  b.fan_hwmon = r36 ? "/sys/devices/platform/pwm-fan/hwmon/hwmon0" : "/sys/devices/platform/pwm-fan/hwmon/hwmon2";
  if (!r36) {  // an R35 carrier with an f75308 controller as well, and a separate tachometer
    b.f75308_hwmon = "/sys/bus/i2c/drivers/f75308/1-004c/hwmon/hwmon5";
    b.tach_hwmon = "/sys/class/hwmon/hwmon6";
  }
  b.gpc_pto = {"nafll_gpc0", "nafll_gpc1"};
  b.memory = {64302132, 62000000, true};
  b.conf_clusters = {"CPU_A78_0", "CPU_A78_1", "CPU_A78_2"};
  b.modes = {{0, "MAXN", 12, 729600, -1, -1, 0, ""},
             {1, "MODE_15W", 4, 729600, 1113600, 408000000, 2133000000, "DLA0_CORE MAX_FREQ 614400000\n"},
             {2, "MODE_30W", 8, 729600, 1728000, 612000000, 0, ""},
             {3, "MODE_50W", 12, 729600, 1497600, 816000000, 0, ""}};
  // NVIDIA's p3701-0000 masks: MAXN and MODE_50W 0 (8 of 8 TPCs), MODE_30W 240 (4), MODE_15W 248 (3); the board
  // boots in mode 2, so its TPC mask reads 240.
  b.gating_params = orin_gating_params(false);
  b.mode_gating = {orin_mode_gating(0, std::nullopt), orin_mode_gating(248, std::nullopt),
                   orin_mode_gating(240, std::nullopt), orin_mode_gating(0, std::nullopt)};
  b.emc_param = kOrinEmcParam;
  b.tpc_pg_mask_now = 240;
  return b;
}

BpmpBoard orin_nano_r36() {
  BpmpBoard b;
  b.id = {"orin-nano-r36", "orin-nano", Family::kT234, Module::kOrinNano, 36, "R36.3.0", "p3767-0005", 0};
  b.compatible = {"nvidia,p3768-0000+p3767-0005", "nvidia,p3767-0005", "nvidia,tegra234"};
  b.model = "NVIDIA Jetson Orin Nano Developer Kit";
  b.release = kR36Release;
  b.kernel = "5.15.136-tegra";
  b.clusters = {{0, 1, 2, 3}, {4, 5}};
  b.cpu_khz = ladder_then(1497600, 1510400);
  b.gpu = {"/sys/devices/platform/bus@0/17000000.gpu", "17000000.gpu", "gpu", "/sys/devices/platform/gpu.0", {}};
  b.gpu.hz = {306000000, 408000000, 510000000, 612000000, 624750000};
  b.emc.khz = {204000, 665600, 2133000};
  b.emc.cap = "/sys/kernel/nvpmodel_clk_cap/emc";
  b.emc.activity = "/sys/kernel/debug/bpmp/debug/actmon/mc_all_avg_activity";
  b.rail_banks = {{true, "/sys/devices/platform/bus@0/c240000.i2c/i2c-1", "1-0040", 1,
                   {{"VDD_IN", 5000, 983, 0}, {"VDD_CPU_GPU_CV", 5000, 90, 0}, {"VDD_SOC", 5000, 286, 0}}}};
  b.total_power_w = 4.915;
  b.total_rule = "VDD_IN";
  b.thermal = {{"cpu-thermal", 45500}, {"gpu-thermal", 44000}, {"cv0-thermal", -256000}, {"soc0-thermal", 43000},
               {"tj-thermal", 45500}};
  b.fan_hwmon = "/sys/devices/platform/pwm-fan/hwmon/hwmon2";
  b.gpc_pto = {"nafll_gpc0"};
  b.memory = {7802340, 6000000, true};
  b.conf_clusters = {"CPU_A78_0", "CPU_A78_1"};
  b.modes = {{0, "15W", 6, 729600, -1, -1, 0, ""}, {1, "7W", 4, 729600, 960000, 408000000, 2133000000, ""}};
  // NVIDIA's p3767-0003 masks: FBP_PG_MASK 2 in both modes, TPC_PG_MASK 240 (15W, the default) and 252 (7W).
  b.gating_params = orin_gating_params(true);
  b.mode_gating = {orin_mode_gating(240, 2), orin_mode_gating(252, 2)};
  b.emc_param = kOrinEmcParam;
  b.tpc_pg_mask_now = 240;
  b.fbp_pg_mask_now = 2;
  return b;
}

// The Orin variants of NVIDIA's p3701-0004 and p3767-000x files, written from their facts (NVPMODEL.md and the
// public copies it names): each mode's cores, CPU/GPU/EMC caps and masks, the default mode and the masks the board
// boots with (the default mode's). Frequency tables: the AGX Orin's R35 ladders cut at the module's top clock
// (AGX Orin 32GB and Orin NX 16GB GPU 918 MHz, Orin NX 8GB 765 MHz, Orin Nano 625 MHz; CPU 1984 MHz on the NX,
// 1510.4 MHz on the Nano), which NVIDIA's mode caps are steps of; the top rates are our approximation.
struct OrinVariantFacts {
  FakeKind kind;
  const char* name;
  const char* sim_class;
  Module module;
  int l4t_major;
  const char* part;
  int default_mode;
  std::vector<std::vector<int>> clusters;
  int64_t cpu_top_khz;
  int64_t gpu_top_hz;
  int64_t emc_top_khz;
  std::vector<ConfMode> modes;
  std::vector<int64_t> tpc;  // per mode
  bool fbp;                  // FBP_PG_MASK 2 in every mode (p3767)
};

const std::vector<OrinVariantFacts>& orin_variant_facts() {
  const int64_t emc = 2133000000;
  const std::vector<ConfMode> agx32 = {{0, "MAXN", 8, 729600, -1, -1, 0, ""},
                                       {1, "MODE_15W", 4, 729600, 1113600, 408000000, emc, ""},
                                       {2, "MODE_30W", 8, 729600, 1728000, 612000000, 0, ""},
                                       {3, "MODE_40W", 8, 729600, 1497600, 816000000, 0, ""}};
  const std::vector<ConfMode> nx16 = {{0, "MAXN", 8, 729600, -1, -1, 0, ""},
                                      {1, "10W", 4, 729600, 1190400, 612000000, emc, ""},
                                      {2, "15W", 4, 729600, 1651200, 612000000, 0, ""},
                                      {3, "25W", 8, 729600, 1497600, 408000000, 0, ""}};
  const std::vector<ConfMode> nx8 = {{0, "MAXN", 6, 729600, -1, -1, 0, ""},
                                     {1, "10W", 4, 729600, 1190400, 612000000, emc, ""},
                                     {2, "15W", 4, 729600, 1420800, 612000000, 0, ""},
                                     {3, "20W", 6, 729600, 1497600, 408000000, 0, ""}};
  const std::vector<ConfMode> nano8 = {{0, "15W", 6, 729600, -1, -1, 0, ""}, {1, "7W", 4, 729600, 960000, 408000000, emc, ""}};
  const std::vector<ConfMode> nano4 = {{0, "10W", 6, 729600, -1, -1, 0, ""},
                                       {1, "7W_AI", 4, 729600, 806400, 408000000, emc, ""},
                                       {2, "7W_CPU", 4, 729600, 960000, 306000000, emc, ""}};
  const std::vector<std::vector<int>> eight = {{0, 1, 2, 3}, {4, 5, 6, 7}}, six = {{0, 1, 2, 3}, {4, 5}};
  static const std::vector<OrinVariantFacts> kFacts = {
      {FakeKind::kAgxOrin32R35, "agx-orin-32gb-r35", "agx-orin", Module::kAgxOrin, 35, "p3701-0004", 2, eight, 2201600,
       918000000, 3199000, agx32, {128, 248, 240, 128}, false},
      {FakeKind::kAgxOrin32R36, "agx-orin-32gb-r36", "agx-orin", Module::kAgxOrin, 36, "p3701-0004", 2, eight, 2201600,
       918000000, 3199000, agx32, {128, 248, 240, 128}, false},
      {FakeKind::kOrinNx16R35, "orin-nx-16gb-r35", "orin-nx", Module::kOrinNx, 35, "p3767-0000", 2, eight, 1984000,
       918000000, 3199000, nx16, {240, 252, 252, 240}, true},
      {FakeKind::kOrinNx16R36, "orin-nx-16gb-r36", "orin-nx", Module::kOrinNx, 36, "p3767-0000", 2, eight, 1984000,
       918000000, 3199000, nx16, {240, 252, 252, 240}, true},
      {FakeKind::kOrinNx8R35, "orin-nx-8gb-r35", "orin-nx", Module::kOrinNx, 35, "p3767-0001", 2, six, 1984000,
       765000000, 3199000, nx8, {240, 252, 252, 240}, true},
      {FakeKind::kOrinNx8R36, "orin-nx-8gb-r36", "orin-nx", Module::kOrinNx, 36, "p3767-0001", 2, six, 1984000,
       765000000, 3199000, nx8, {240, 252, 252, 240}, true},
      {FakeKind::kOrinNano8R35, "orin-nano-8gb-r35", "orin-nano", Module::kOrinNano, 35, "p3767-0003", 0, six, 1510400,
       624750000, 2133000, nano8, {240, 252}, true},
      {FakeKind::kOrinNano4R35, "orin-nano-4gb-r35", "orin-nano", Module::kOrinNano, 35, "p3767-0004", 0, six, 1510400,
       624750000, 2133000, nano4, {252, 252, 252}, true},
      {FakeKind::kOrinNano4R36, "orin-nano-4gb-r36", "orin-nano", Module::kOrinNano, 36, "p3767-0004", 0, six, 1510400,
       624750000, 2133000, nano4, {252, 252, 252}, true}};
  return kFacts;
}

BpmpBoard orin_variant(const OrinVariantFacts& f) {
  const bool r36 = f.l4t_major >= 36;
  BpmpBoard b = f.module == Module::kAgxOrin ? agx_orin(f.l4t_major) : orin_nano_r36();
  b.id = {f.name, f.sim_class, Family::kT234, f.module, f.l4t_major, r36 ? "R36.3.0" : "R35.4.1", f.part, f.default_mode};
  const std::string carrier = f.module == Module::kAgxOrin ? "p3737-0000" : "p3768-0000";
  b.compatible = {"nvidia," + carrier + "+" + f.part, "nvidia," + std::string(f.part), "nvidia,tegra234"};
  b.model = f.name;
  if (!r36) {
    b.release = "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 "
                "19:57:35 UTC 2023\n";
    b.kernel = "5.10.120-tegra";
    b.gpu = {"/sys/devices/17000000.ga10b", "17000000.ga10b", "ga10b", "/sys/devices/gpu.0", {}};
    b.emc.cap = "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
    b.emc.activity = "/sys/kernel/actmon_avg_activity/mc_all";
    b.f75308_hwmon.clear();
    b.tach_hwmon.clear();
  }
  b.clusters = f.clusters;
  b.cpu_khz = ladder(115200, 76800, f.cpu_top_khz);  // the 76.8 MHz ladder, then the module's top rate
  if (b.cpu_khz.back() != f.cpu_top_khz) b.cpu_khz.push_back(f.cpu_top_khz);
  b.gpu.hz.clear();
  for (int64_t hz : kOrinGpu)
    if (hz <= f.gpu_top_hz) b.gpu.hz.push_back(hz);
  if (b.gpu.hz.back() != f.gpu_top_hz) b.gpu.hz.push_back(f.gpu_top_hz);
  b.emc.khz = {204000, 665600, 2133000};
  if (f.emc_top_khz > 2133000) b.emc.khz.push_back(f.emc_top_khz);
  b.conf_clusters = {"CPU_A78_0", "CPU_A78_1"};
  b.modes = f.modes;
  b.gating_params = orin_gating_params(f.fbp);
  b.mode_gating.clear();
  for (int64_t tpc : f.tpc) b.mode_gating.push_back(orin_mode_gating(tpc, f.fbp ? std::optional<int64_t>(2) : std::nullopt));
  b.tpc_pg_mask_now = f.tpc.at(static_cast<size_t>(f.default_mode));
  b.fbp_pg_mask_now = f.fbp ? std::optional<int64_t>(2) : std::nullopt;
  return b;
}

}  // namespace

std::vector<FakeKind> orin_variant_kinds() {
  std::vector<FakeKind> out = {FakeKind::kAgxOrinR35, FakeKind::kAgxOrinR36, FakeKind::kOrinNanoR36};
  for (const auto& f : orin_variant_facts()) out.push_back(f.kind);
  return out;
}

BpmpBoard bpmp_board(FakeKind kind) {
  for (const auto& f : orin_variant_facts())
    if (f.kind == kind) return orin_variant(f);
  switch (kind) {
    case FakeKind::kAgxXavierR32: return agx_xavier_r32();
    case FakeKind::kXavierNxR35: return xavier_nx_r35();
    case FakeKind::kAgxOrinR35: return agx_orin(35);
    case FakeKind::kAgxOrinR36: return agx_orin(36);
    case FakeKind::kOrinNanoR36: return orin_nano_r36();
    default: break;
  }
  throw std::logic_error("bpmp_board: not a BPMP board kind");
}

}  // namespace jetsweep::device::testing
