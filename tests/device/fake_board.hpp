// Fake Jetson sysfs/procfs/debugfs trees in a temp directory, laid out like the real boards
// (symlinked devfreq/i2c/cpufreq folders, unstable hwmonN numbers, IIO vs hwmon rails,
// debugfs EMC files, nvpmodel.conf, device-tree strings, one thermal zone powered off).
// One FakeBoard per test; not shared between threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/device/board.hpp"

namespace jetsweep::device::testing {

namespace fs = std::filesystem;

enum class FakeKind {
  kNanoR32, kAgxXavierR32, kXavierNxR35, kAgxOrinR35, kAgxOrinR36, kOrinNanoR36,
  // The other Orin variants (tests/device/fake_board_boards.cpp: orin_variant_kinds()).
  kAgxOrin32R35, kAgxOrin32R36, kOrinNx16R35, kOrinNx16R36, kOrinNx8R35, kOrinNx8R36, kOrinNano8R35, kOrinNano4R35,
  kOrinNano4R36
};

std::vector<FakeKind> all_fake_kinds();

// A new directory jetsweep-TAG-XXXXXX under the temp dir (the caller removes it).
fs::path make_temp_dir(const char* tag);

struct BpmpBoard;  // tests/device/fake_board_boards.hpp

// What a correct reader should find on the fake board.
struct FakeSpec {
  FakeKind kind = FakeKind::kNanoR32;
  std::string name;               // "nano-r32", ...
  std::string sim_class;          // matching sim_board_tables() class
  Family family = Family::kUnknown;
  Module module = Module::kUnknown;
  int l4t_major = 0;
  std::string l4t;                // "R32.7.1"
  std::string module_part;
  int cores = 0;
  std::vector<std::vector<int>> clusters;
  std::vector<int64_t> cpu_khz;
  std::vector<int64_t> gpu_hz;
  std::vector<int64_t> emc_hz;    // after the board's own clipping
  std::string gpu_of_name;
  std::string gpu_load_path;      // board path of the GPU load file
  std::vector<std::string> rail_names;
  double total_power_w = 0;
  std::string total_rule;
  std::vector<std::string> mode_names;  // nvpmodel names in file order
  int default_mode = 0;
  std::string emc_cap_path;       // board path of the nvpmodel EMC cap
  bool legacy_fan = false;
  int fan_pwm_files = 0;          // R35+ pwm files a fan at full speed writes (pwm-fan pwm1, f75308 pwmN)
  std::optional<double> fan_rpm;  // what the tachometer reads, where the board has one
  std::optional<double> gpu_measured_hz;  // the lowest nafll_gpc pto_counter, where the board has them
  int live_thermal_zones = 0;     // zones that are not powered off
};

class FakeBoard {
 public:
  explicit FakeBoard(FakeKind kind);
  ~FakeBoard();
  FakeBoard(const FakeBoard&) = delete;
  FakeBoard& operator=(const FakeBoard&) = delete;

  const fs::path& root() const { return root_; }
  const fs::path& state_dir() const { return state_dir_; }
  const FakeSpec& spec() const { return spec_; }
  // The board the device layer detects in this tree (std::runtime_error naming the status when it fails).
  Board board() const;

  // Board paths are absolute board paths ("/sys/..."), placed under root().
  fs::path path(std::string_view board_path) const;
  void write(std::string_view board_path, std::string_view content);
  std::string read(std::string_view board_path) const;
  void remove(std::string_view board_path);
  // Relative symlink at `link` pointing to `target` (both board paths).
  void symlink(std::string_view link, std::string_view target);
  // Rewrites /proc/stat with per-CPU (busy, idle) jiffies.
  void set_proc_stat(const std::vector<std::pair<uint64_t, uint64_t>>& busy_idle);

  // Every file, directory and symlink under root(): relative path -> "F:<content>", "L:<target>", "D".
  std::map<std::string, std::string> snapshot() const;

 private:
  void build_nano_r32();
  void build_bpmp_board(const BpmpBoard& board);  // the t194/t234 boards, from fake_board_boards.cpp

  void add_common(const std::string& compatible, const std::string& model, const std::string& release,
                  const std::string& kernel);
  void add_cpus(int cores, const std::vector<std::vector<int>>& clusters, const std::vector<int64_t>& khz);
  void add_gpu(const std::string& device_dir, const std::string& devfreq_name, const std::string& of_name,
               const std::vector<int64_t>& hz, const std::string& gpu0_link);
  void add_bpmp_emc(const std::vector<int64_t>& khz, const std::string& cap_path, const std::string& activity_path);
  struct RailSpec {
    std::string name;
    int64_t mv;
    int64_t ma;
    int64_t mw;  // IIO power file (R32 only)
  };
  void add_iio_rails(const std::string& device_dir, const std::string& bus_addr, int iio_index,
                     const std::vector<RailSpec>& rails);
  void add_hwmon_rails(const std::string& device_dir, const std::string& bus_addr, int hwmon_index,
                       const std::vector<RailSpec>& rails);
  void add_thermal(const std::vector<std::pair<std::string, int64_t>>& zones);
  void add_fan_legacy();
  void add_fan_hwmon(const std::string& hwmon_dir);

  fs::path root_;
  fs::path state_dir_;
  FakeSpec spec_;
};

// A fake `systemctl` executable for one unit: a /bin/sh script in its own temp directory that appends each call
// as "ARGS|WATCHED" to a log (WATCHED: the content of `watch` at that moment, "-" without one), keeps the unit's
// state in a file and exits as systemctl does (is-active: 0 active, 3 inactive; stop, start: 0 and change the
// state). One per test; not shared between threads.
class FakeSystemctl {
 public:
  explicit FakeSystemctl(bool active, fs::path watch = {});
  ~FakeSystemctl();
  FakeSystemctl(const FakeSystemctl&) = delete;
  FakeSystemctl& operator=(const FakeSystemctl&) = delete;

  const fs::path& path() const { return exe_; }
  bool active() const;
  // From now on `verb` (is-active, stop, start) prints `stderr_text` to stderr and exits `exit_code`.
  void fail(const std::string& verb, int exit_code, const std::string& stderr_text);
  void heal(const std::string& verb);
  // Every call so far, in order: "stop nvfancontrol|120".
  std::vector<std::string> calls() const;

 private:
  fs::path dir_;
  fs::path exe_;
};

// First difference between two snapshots ("" when equal).
std::string diff_snapshots(const std::map<std::string, std::string>& before,
                           const std::map<std::string, std::string>& after);

}  // namespace jetsweep::device::testing
