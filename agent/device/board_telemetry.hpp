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
  // INA3221 over-current limits (R32 IIO warn/crit_current_limit_K, R35+ hwmon currK_max / currK_crit) and, on
  // R35+, their alarms (currK_max_alarm / currK_crit_alarm): a raised alarm means the board throttles itself.
  std::optional<double> warn_limit_ma;
  std::optional<double> crit_limit_ma;
  bool warn_alarm = false;
  bool crit_alarm = false;
  // A rail known only by its power (tegrastats).
  static Rail with_power(std::string name, double mw) {
    Rail r;
    r.name = std::move(name);
    r.power_mw = mw;
    return r;
  }
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
  std::vector<double> gpu_cluster_load_pct;  // per GPU cluster where tegrastats prints several (GR3D, GR3D2)
  std::optional<double> gpu_freq_hz;   // devfreq cur_freq (the requested clock) or tegrastats GR3D_FREQ
  // The GPU clock as measured (BPMP debugfs nafll_gpcN/pto_counter, Hz): the lowest non-zero GPC reading.
  std::optional<double> gpu_measured_freq_hz;
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
  std::optional<double> fan_rpm;        // the fan's tachometer (see FanControl::tach)
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
  fs::path warn_limit, crit_limit;   // may be absent on a board
  fs::path warn_alarm, crit_alarm;   // R35+ only (empty on R32)
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
  bool gpu_measured_ = false;  // the board has nafll_gpc pto_counter files
  std::optional<fs::path> emc_rate_;
  std::optional<fs::path> emc_activity_;
  std::vector<fs::path> thermal_zones_;
  std::optional<FanControl> fan_;
  std::map<int, CpuTimes> prev_times_;
};

// Rails under <root>/sys/bus/i2c/drivers/ina3221x (IIO, R32) and .../ina3221 (hwmon, R35+).
std::vector<RailSource> discover_rails(const fs::path& root);
// Reads one rail (power, limits, alarms); unreadable files go to `errors` with their path.
Rail read_rail(const RailSource& src, std::vector<std::string>* errors);
// The over-current alarms raised now, "VDD_IN curr1_crit_alarm (path)" each; empty when none (or no alarm files).
std::vector<std::string> raised_overcurrent_alarms(const std::vector<RailSource>& rails);

// The measured GPU clock: the lowest non-zero nafll_gpc0/gpc1 pto_counter under
// <root>/sys/kernel/debug/bpmp/debug/clk/ (Hz); nothing when the board has no such file or every GPC reads 0.
std::optional<double> read_measured_gpu_hz(const fs::path& root);

boost::json::object to_json(const BoardSample& sample);

}  // namespace jetsweep::device
