// Host telemetry: reads /proc and /sys under a root directory (so tests can use a fake tree) and
// turns them into proto::Sample rows; a Sampler thread takes samples at a fixed rate.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/device/board_telemetry.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// A small /proc or /sys file kept open and re-read from offset 0 on every read (the kernel regenerates it),
// so a sample costs no path lookup or open; reopened after a failed read (a core's cpufreq directory comes
// back when the core goes online). Not thread-safe.
class PolledFile {
 public:
  PolledFile() = default;
  explicit PolledFile(std::string path) : path_(std::move(path)) {}
  ~PolledFile();
  PolledFile(PolledFile&& other) noexcept;
  PolledFile& operator=(PolledFile&& other) noexcept;
  PolledFile(const PolledFile&) = delete;
  PolledFile& operator=(const PolledFile&) = delete;
  const std::string& path() const { return path_; }
  // The whole content, or nullopt when the file cannot be read; valid until the next read.
  std::optional<std::string_view> read();
  // The content as one number ("1234\n"), or nullopt.
  std::optional<double> read_number();

 private:
  void close();
  std::string path_;
  int fd_ = -1;
  std::string buf_;
};

// How a power value relates to time, which decides how integrate_energy turns samples into energy.
enum class PowerReading {
  kInstantaneous,     // the power at the sample's instant (INA3221 rails)
  kIntervalAverage,   // the mean power since the previous sample (RAPL energy counters, simulated boards)
};

// A source of instantaneous (or interval-average) board power. Called from the sampler thread only.
class PowerSource {
 public:
  virtual ~PowerSource() = default;
  virtual std::string name() const = 0;
  // How read_power_w's values relate to time.
  virtual PowerReading reading() const = 0;
  // Average power since the previous call (kIntervalAverage) or at t_s (kInstantaneous); nullopt when not
  // known (first call of an interval source, unreadable sensor).
  virtual std::optional<double> read_power_w(double t_s) = 0;
};

// RAPL package energy counters (/sys/class/powercap/intel-rapl:N/energy_uj), differenced per interval.
class RaplPowerSource final : public PowerSource {
 public:
  // Returns nullptr when no readable RAPL package domain exists under `root`.
  static std::unique_ptr<RaplPowerSource> open(const std::string& root);
  std::string name() const override { return "rapl"; }
  PowerReading reading() const override { return PowerReading::kIntervalAverage; }
  std::optional<double> read_power_w(double t_s) override;

 private:
  struct Domain {
    PolledFile energy_uj;
    double max_range_uj = 0;
    std::optional<double> last_uj;
  };
  std::vector<Domain> domains_;
  std::optional<double> last_t_;
};

// Jetson module power: the board's INA3221 total (VDD_IN / POM_5V_IN, or the sum of rails), by the rule
// device::total_power picks at open(); afterwards only the rails that rule uses are read (kept open, see
// PolledFile), not the whole device::TelemetryReader sample. Instantaneous; called from the sampler thread only.
class BoardPowerSource final : public PowerSource {
 public:
  // kNotFound when the board has no readable power rail.
  static Result<std::unique_ptr<BoardPowerSource>> open(const std::string& root);
  std::string name() const override { return "ina3221"; }
  PowerReading reading() const override { return PowerReading::kInstantaneous; }
  // nullopt when a rail of the rule cannot be read (never a total by another rule).
  std::optional<double> read_power_w(double t_s) override;
  const std::string& rule() const { return rule_; }

 private:
  struct RailFiles {
    std::string name;
    bool hwmon = false;   // R35+: mV x mA; R32: the power file
    PolledFile voltage_mv, current_ma, power_mw;
  };
  BoardPowerSource() = default;
  std::vector<RailFiles> rails_;
  std::string rule_;
};

// Reads host counters (/proc/stat, cpufreq, meminfo, diskstats under `root`) and the power source into
// proto::Sample rows; keeps the previous reading to compute rates. Not thread-safe (the Sampler serialises).
class HostProbe {
 public:
  explicit HostProbe(std::string root = "/", std::unique_ptr<PowerSource> power = nullptr);
  // A full sample: host counters and power.
  proto::Sample read(double t_s);
  // Power only (the cheap read for high sampling rates): the host fields repeat the last full read's values
  // (CPU and per-core utilisation, frequency, memory), disk_read_bytes is 0 (the next full read's delta
  // covers the whole interval since the previous full read, so sums stay exact).
  proto::Sample read_power(double t_s);
  bool has_power() const { return power_ != nullptr; }
  std::string power_source_name() const { return power_ ? power_->name() : "none"; }
  // How the samples' power_w relates to time (kInstantaneous when there is no power source).
  PowerReading power_reading() const { return power_ ? power_->reading() : PowerReading::kInstantaneous; }

 private:
  struct CpuTimes {
    uint64_t total = 0;
    uint64_t idle = 0;
  };
  std::vector<CpuTimes> read_cpu_times();  // [0] = aggregate, then per core
  std::optional<uint64_t> read_disk_read_bytes();
  std::optional<double> read_cpu_freq_mhz();
  std::optional<int64_t> read_mem_used_kb();
  // The hottest readable thermal zone in degrees C (zones are millidegrees; off zones read -256 C or fail).
  std::optional<double> read_temp_max_c();

  std::string root_;
  std::unique_ptr<PowerSource> power_;
  PolledFile stat_, meminfo_, diskstats_;
  // cpuN/cpufreq/scaling_cur_freq of every possible core, found on the first read (offline cores fail to
  // read and are skipped), and whether a diskstats name is a whole disk: no directory listing per sample.
  std::optional<std::vector<PolledFile>> cpufreq_;
  std::optional<std::vector<PolledFile>> thermal_zones_;   // thermal_zoneN/temp, found on the first read
  std::map<std::string, bool, std::less<>> whole_disk_;
  std::vector<CpuTimes> last_cpu_;
  std::optional<uint64_t> last_disk_;
  proto::Sample last_full_;
};

// Samples a HostProbe on its own thread at `hz`, plus on demand (sample_now) at epoch boundaries. Power is
// read in every sample; the host counters in every sample up to kHostCountersHz and in every
// ceil(hz / kHostCountersHz)-th periodic sample above it (and in every sample_now), the others repeating
// them (HostProbe::read_power): high rates cost little more than the power reads. Keeps the samples until
// they are both handed out (take_new) and no longer needed for an energy window (forget_before).
// All public methods may be called from any thread.
class Sampler {
 public:
  static constexpr double kHostCountersHz = 10;
  Sampler(HostProbe& probe, double hz);
  ~Sampler();
  void start();           // t = 0 is now; takes the first sample immediately
  void stop();
  double sample_now();    // takes a sample, returns its t_s
  double elapsed_s() const;
  // `tp` on the samples' timeline (seconds since start(); negative before it). Valid once started.
  double since_start_s(std::chrono::steady_clock::time_point tp) const;
  // Samples taken since the previous call (in time order).
  std::vector<proto::Sample> take_new();
  // What integrate_energy needs for [t0, t1] (copy, in time order): the last sample at or before t0, every
  // sample inside, and the first at or after t1 (each where it exists and has not been forgotten).
  std::vector<proto::Sample> window(double t0, double t1) const;
  // Drops the samples before the last one at or before `t` (those no window starting at or after `t` needs),
  // but only samples already handed out by take_new(): unsent samples are never lost.
  void forget_before(double t);
  // Samples held now (for tests and memory accounting).
  size_t stored() const;

 private:
  void loop();
  double take_locked(bool full);

  HostProbe& probe_;
  const double period_s_;
  const int64_t full_every_;   // periodic samples per full (host counters) read
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;
  std::thread thread_;
  // steady_clock ticks at t_s = 0: read without the lock by elapsed_s / since_start_s.
  std::atomic<std::chrono::steady_clock::rep> t0_ticks_{0};
  std::deque<proto::Sample> samples_;
  size_t taken_ = 0;   // samples_[0, taken_) were handed out by take_new()
};

// Energy over exactly [t0, t1] from samples in time order (a Sampler::window), with the share of the window
// the valid power values cover.
struct EnergyWindow {
  std::optional<double> energy_j;      // null when coverage < proto::kMinPowerCoverage, or no samples
  std::optional<double> mean_power_w;  // energy_j / (t1 - t0) when energy is known
  double coverage = 0;                 // share of [t0, t1] covered by valid power values, 0..1
};

// How each reading becomes energy:
//  kIntervalAverage: sample i's power is the mean over (t_(i-1), t_i], so power is piecewise constant; the
//    segment that overlaps t0 is clipped at t0 and the one that contains t1 is clipped at t1 (that needs the
//    first sample after t1). The first sample of the list has no interval and covers nothing.
//  kInstantaneous: power is known at the sample instants and taken as linear in between: trapezoids between
//    consecutive samples, with the power at t0 and t1 interpolated linearly from the samples either side
//    (exact for power that is linear between samples).
// A sample without power (power_w null) leaves uncovered the segment(s) its value defines: its own interval
// for kIntervalAverage, the two segments it ends for kInstantaneous; so does any part of the window before
// the first or after the last sample. When the covered share is at least proto::kMinPowerCoverage, the
// energy is the covered part's energy scaled by 1 / coverage, i.e. the covered part's mean power times the
// window's length (the missing stretches are assumed to draw the covered part's mean power); below it, null.
// An empty or reversed window (t1 <= t0) has coverage 0 and null energy.
EnergyWindow integrate_energy(const std::vector<proto::Sample>& samples, double t0, double t1, PowerReading reading);

}  // namespace jetsweep::agent
