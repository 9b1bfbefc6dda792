// Board telemetry: INA3221 rails (IIO and hwmon drivers), total power, GPU/EMC load, per-core
// CPU frequency and utilisation, RAM, temperatures and fan, as one plain BoardSample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "agent/device/board.hpp"
#include "agent/device/power_control.hpp"
#include "common/status.hpp"

namespace jetsweep::device {

struct Rail {
  std::string name;                   // label as the board names it: VDD_IN, GPU, NC, ...
  std::optional<double> voltage_mv;
  std::optional<double> current_ma;
  std::optional<double> power_mw;     // R32: in_powerK_input; R35+: mV * mA / 1000
};

struct CoreSample {
  int cpu = 0;
  bool online = true;
  std::optional<double> freq_khz;
  std::optional<double> util_pct;     // from /proc/stat deltas; absent on the first read
};

struct Temperature {
  std::string name;                   // thermal zone type (or tegrastats name)
  double celsius = 0;
};

// One telemetry sample. Plain value type.
struct BoardSample {
  double t_s = 0;                     // reader: CLOCK_MONOTONIC seconds; tegrastats: line time (UTC epoch) if printed
  std::optional<double> total_power_w;
  std::string total_power_rule;       // "VDD_IN", or "sum(GPU+CPU+...)"
  std::vector<Rail> rails;
  std::optional<double> gpu_load_pct;   // sysfs load is per-mille: pct = load / 10
  std::optional<double> gpu_freq_hz;
  std::optional<double> emc_util_pct;   // actmon mc_all (kHz) / EMC rate (kHz), or tegrastats EMC_FREQ %
  std::optional<double> emc_freq_hz;
  std::optional<double> emc_activity;   // raw actmon mc_all
  std::vector<CoreSample> cores;
  std::optional<double> cpu_util_pct;   // mean over online cores with a utilisation
  std::optional<double> ram_used_mb;    // reader: MemTotal - MemAvailable
  std::optional<double> ram_total_mb;
  std::optional<double> swap_used_mb;
  std::optional<double> swap_total_mb;
  std::optional<double> nvmap_mb;       // NvMapMemUsed in /proc/meminfo (R35+), if present
  std::vector<Temperature> temps;       // zones reading -256 C or unreadable are left out
  std::optional<double> fan_pwm;        // 0-255
  std::optional<double> fan_rpm;
  std::vector<std::string> errors;      // files that could not be read this time (path: reason)
};

// Total module power: the VDD_IN or POM_5V_IN rail where present; otherwise the sum of rails,
// skipping NC channels and rails already fed by another present rail (Orin: VDDQ_VDD2_1V8AO is
// fed by VIN_SYS_5V0).
struct TotalPower {
  std::optional<double> watts;
  std::string rule;
};
TotalPower total_power(const std::vector<Rail>& rails);

// Where one rail is read from.
struct RailSource {
  std::string name;
  fs::path power;     // R32 only
  fs::path voltage;
  fs::path current;
  bool hwmon = false;
};

// Discovers sensors once (open) and reads them on every read(). Keeps /proc/stat counters
// between reads for utilisation. Not thread-safe: owned and called by one sampler thread.
class TelemetryReader {
 public:
  static Result<TelemetryReader> open(const fs::path& root, const BoardInfo& info);
  static Result<TelemetryReader> open(const fs::path& root = "/");

  BoardSample read();

  const std::vector<RailSource>& rail_sources() const { return rails_; }
  const std::optional<fs::path>& gpu_load_path() const { return gpu_load_; }

 private:
  struct CpuTimes {
    uint64_t total = 0;
    uint64_t idle = 0;
  };

  // Per-core frequency, online state and utilisation (from /proc/stat deltas since the last read).
  void read_cpus(BoardSample& s);

  fs::path root_;
  int cores_ = 0;
  std::vector<RailSource> rails_;
  std::optional<fs::path> gpu_load_;
  std::optional<fs::path> gpu_cur_freq_;
  std::optional<fs::path> emc_rate_;
  std::optional<fs::path> emc_activity_;
  std::vector<fs::path> thermal_zones_;
  std::optional<FanControl> fan_;
  std::map<int, CpuTimes> prev_times_;
};

// Rails under <root>/sys/bus/i2c/drivers/ina3221x (IIO, R32) and .../ina3221 (hwmon, R35+).
std::vector<RailSource> discover_rails(const fs::path& root);

boost::json::object to_json(const BoardSample& sample);

}  // namespace jetsweep::device
