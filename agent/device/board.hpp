// Board identity (family, module, L4T, provenance) and the frequency tables read from the board.
// Everything is read under a root directory ("/" on a board, a fake tree in tests).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::device {

namespace fs = std::filesystem;

enum class Family { kUnknown, kT210, kT194, kT234 };
enum class Module { kUnknown, kNano, kAgxXavier, kXavierNx, kAgxOrin, kOrinNx, kOrinNano };

std::string_view family_name(Family family);  // "t210", "t194", "t234", "unknown"
std::string_view module_name(Module module);  // "Nano", "AGX Xavier", ..., "unknown"

// "# R35 (release), REVISION: 3.1, GCID: ..." -> major 35, revision "3.1".
struct L4tRelease {
  int major = 0;
  std::string revision;
  std::string raw;  // the first line of /etc/nv_tegra_release
  std::string to_string() const;  // "R35.3.1"
};
std::optional<L4tRelease> parse_l4t_release(std::string_view text);

// Identity and software provenance of one board.
struct BoardInfo {
  Family family = Family::kUnknown;
  Module module = Module::kUnknown;
  std::string family_source;              // which file decided the family
  std::string module_source;              // which rule decided the module
  std::vector<std::string> compatible;    // /proc/device-tree/compatible entries
  std::string model;                      // /proc/device-tree/model
  std::string module_part;                // e.g. "p3701-0005"
  std::string variant;                    // NVIDIA's variant of that module number: "AGX Orin 32GB", "" when unknown
  std::string carrier_part;               // e.g. "p3737-0000" (empty when not in compatible)
  std::optional<L4tRelease> l4t;
  std::string kernel;                     // /proc/sys/kernel/osrelease (= uname -r)
  std::string nvpmodel_conf_fnv1a64;      // hash of /etc/nvpmodel.conf, empty if absent
  std::optional<int> nvpmodel_mode;       // /var/lib/nvpmodel/status "pmode:000N fmode:quiet" -> N
  std::string nvpmodel_fan_mode;          // its fmode ("quiet"), "" when not given
  int l4t_major() const { return l4t ? l4t->major : 0; }
};

// Detects family, module and provenance. kNotFound when no source names a known Tegra chip.
Result<BoardInfo> detect_board(const fs::path& root = "/");

// One cpufreq policy (CPUs sharing min/max limits).
struct CpuCluster {
  std::vector<int> cpus;              // e.g. {4,5,6,7}; cpus.front() is the leader
  fs::path cpufreq_dir;               // <root>/sys/devices/system/cpu/cpu<leader>/cpufreq
  std::vector<int64_t> freqs_khz;     // scaling_available_frequencies, ascending
};

// The GPU devfreq node found through /sys/class/devfreq.
struct GpuDevfreq {
  fs::path devfreq_dir;   // .../devfreq/17000000.gv11b (resolved inside root)
  fs::path device_dir;    // the GPU device folder (holds load, railgate_enable)
  std::string of_name;    // device/of_node/name: gp10b, gv11b, ga10b or gpu
  std::vector<int64_t> freqs_hz;  // available_frequencies, ascending
};

// Frequency tables and core count of the board; the space of custom power modes.
struct FrequencyTables {
  int cores = 0;                        // CPUs that exist (cpu0..cores-1)
  std::vector<CpuCluster> clusters;
  std::vector<int64_t> cpu_khz;         // frequencies allowed on every cluster, ascending
  GpuDevfreq gpu;
  std::vector<int64_t> gpu_hz;          // = gpu.freqs_hz
  std::vector<int64_t> emc_hz;          // allowed EMC rates in Hz, ascending
  fs::path emc_table_source;            // the file the EMC rates came from
  // cores x CPU freqs x GPU freqs x EMC freqs.
  uint64_t mode_count() const;
};

// Finds the GPU devfreq node by scanning <root>/sys/class/devfreq/*.
Result<GpuDevfreq> find_gpu_devfreq(const fs::path& root);
// Reads every table; any missing or malformed source is an error naming the path.
Result<FrequencyTables> read_frequency_tables(const fs::path& root, const BoardInfo& info);

// Paths used to read and lock the EMC clock on one family.
struct EmcPaths {
  fs::path table;                     // allowed rates (kHz)
  std::optional<fs::path> table_min;  // optional bounds applied to the table (Hz)
  std::optional<fs::path> table_max;
  fs::path lock;                      // write 1 to lock
  fs::path rate;                      // write the rate (Hz) after locking
  fs::path current_rate;              // current rate (Hz) for telemetry
  bool rate_before_lock = false;      // jetson_clocks order: lock, then rate (R32+, BPMP); R28 t210 wrote the rate first
  std::optional<fs::path> cap;        // nvpmodel cap (Hz, 0 = none), when the board has one
  std::vector<fs::path> activity;     // candidates for the actmon average (first existing wins)
};

// Per-family knowledge (one implementation per family_tNNN.cpp). Immutable; any thread.
class FamilyOps {
 public:
  virtual ~FamilyOps() = default;
  virtual Family family() const = 0;
  virtual EmcPaths emc_paths(const fs::path& root, int l4t_major) const = 0;
  // Cluster layout from JETSON.md, used when cpufreq has no related_cpus file.
  virtual std::vector<std::vector<int>> default_clusters(Module module, int cores) const = 0;
  // Known devfreq folders and load files, used when /sys/class/devfreq does not list the GPU.
  virtual std::vector<std::string> gpu_devfreq_fallbacks(int l4t_major) const = 0;
  virtual std::vector<std::string> gpu_load_fallbacks(int l4t_major) const = 0;
};

// The ops of a known family; nullptr for kUnknown.
const FamilyOps* family_ops(Family family);
const FamilyOps& family_ops_t210();
const FamilyOps& family_ops_t194();
const FamilyOps& family_ops_t234();

// Reads the EMC table of a family: integers in kHz (a trailing "(kHz)" is allowed), converted to
// Hz, clipped to table_min/table_max when those files exist. Values outside 10 MHz..10 GHz fail.
Result<std::vector<int64_t>> read_emc_table_hz(const EmcPaths& paths);

// A board opened for control and telemetry: root, identity and tables.
struct Board {
  fs::path root;
  BoardInfo info;
  FrequencyTables tables;
  const FamilyOps* ops = nullptr;
};
Result<Board> open_board(const fs::path& root = "/");

}  // namespace jetsweep::device
