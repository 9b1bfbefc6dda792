// The t194/t234 fake boards (AGX Xavier, Xavier NX, AGX Orin, Orin Nano) as data: what FakeBoard writes for
// each. Immutable values; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/device/fake_board.hpp"

namespace jetsweep::device::testing {

// One POWER_MODEL of a generated nvpmodel.conf.
struct ConfMode {
  int id;
  std::string name;
  int cores_online;
  int64_t cpu_min_khz, cpu_max_khz;   // every cluster's limits (-1: the table's maximum)
  int64_t gpu_max_hz, emc_max_hz;     // -1 / 0: no cap
  std::string extra;                  // lines after the EMC cap
};

struct FakeRail {
  std::string name;
  int64_t mv;
  int64_t ma;
  int64_t mw;  // IIO power file (R32 only)
};

// One INA3221 of rails: IIO on R32, hwmon from R35.
struct FakeRailBank {
  bool hwmon;
  std::string device_dir;
  std::string bus_addr;
  int index;  // iio:deviceN or hwmonN (hwmon numbers differ between boots and releases)
  std::vector<FakeRail> rails;
};

// What detection must find: FakeSpec's identity fields.
struct FakeIdentity {
  const char* name;
  const char* sim_class;
  Family family;
  Module module;
  int l4t_major;
  const char* l4t;
  const char* module_part;
  int default_mode;
};

struct FakeGpu {
  std::string device_dir, devfreq_name, of_name;
  std::string gpu0_link;  // the /sys/devices/gpu.0 style link to device_dir
  std::vector<int64_t> hz;
};

struct FakeEmc {
  std::vector<int64_t> khz;
  std::string cap, activity;  // board paths of the nvpmodel cap and the actmon average
};

struct FakeMemory {
  int64_t total_kb, avail_kb;
  bool nvmap;  // NvMapMem lines in /proc/meminfo (R35+)
};

// A BPMP-EMC board: identity, CPU/GPU/EMC tables, rails, thermal zones, fan, memory and nvpmodel.conf.
struct BpmpBoard {
  FakeIdentity id;
  std::vector<std::string> compatible;  // device-tree strings, most specific first
  std::string model, release, kernel;
  std::vector<std::vector<int>> clusters;  // the cores, by cluster (all clusters the same size but the last)
  std::vector<int64_t> cpu_khz;
  FakeGpu gpu;
  FakeEmc emc;
  std::vector<FakeRailBank> rail_banks;
  double total_power_w = 0;
  std::string total_rule;
  std::vector<std::pair<std::string, int64_t>> thermal;  // zone type, millidegrees (-256000: powered off)
  std::string fan_hwmon;                                 // "": the R32 pwm-fan driver
  std::string f75308_hwmon;    // an f75308 fan controller's hwmon folder (R35 carriers), "" when none
  std::string tach_hwmon;      // a tachometer's own hwmon folder (its rpm file), "" when none
  std::vector<std::string> gpc_pto;  // BPMP clocks with a pto_counter (nafll_gpc0, ...), measured GPU clock
  FakeMemory memory{};
  std::vector<std::string> conf_clusters;  // nvpmodel.conf clock names, one per cluster
  std::vector<ConfMode> modes;
  // NVIDIA's GPU gating and power control (t234): PARAM blocks (TPC/FBP_POWER_GATING, GPU_POWER_CONTROL_*, with
  // the _KNEXT paths of the R35.4+ files), each mode's lines between CPU_ONLINE and the clocks (masks,
  // GPU_PWR_CNTL_EN; GPU_PWR_CNTL_DIS follows the GPU clocks), and the masks the board booted with.
  std::string gating_params;
  std::vector<std::string> mode_gating;   // per mode, in `modes` order; empty: no gating lines
  std::string emc_param;                  // the EMC PARAM block when it names both paths; "": MAX_FREQ <emc.cap>
  std::optional<int64_t> tpc_pg_mask_now, fbp_pg_mask_now;
};

// The Orin kinds of every NVIDIA variant (AGX Orin 64GB/32GB, Orin NX 16GB/8GB, Orin Nano 8GB/4GB; R35 and R36).
std::vector<FakeKind> orin_variant_kinds();

// The board of `kind`; every kind but kNanoR32 (std::logic_error for that one).
BpmpBoard bpmp_board(FakeKind kind);

}  // namespace jetsweep::device::testing
