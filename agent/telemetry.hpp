// Host telemetry: reads /proc and /sys under a root directory (so tests can use a fake tree) and
// turns them into proto::Sample rows; a Sampler thread takes samples at a fixed rate.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/device/telemetry.hpp"
#include "common/protocol.hpp"

namespace jetsweep::agent {

// A source of instantaneous (or interval-average) board power. Called from the sampler thread only.
class PowerSource {
 public:
  virtual ~PowerSource() = default;
  virtual std::string name() const = 0;
  // Average power since the previous call (or instantaneous); nullopt when not yet known.
  virtual std::optional<double> read_power_w(double t_s) = 0;
};

// RAPL package energy counters (/sys/class/powercap/intel-rapl:N/energy_uj), differenced per interval.
class RaplPowerSource final : public PowerSource {
 public:
  // Returns nullptr when no readable RAPL package domain exists under `root`.
  static std::unique_ptr<RaplPowerSource> open(const std::string& root);
  std::string name() const override { return "rapl"; }
  std::optional<double> read_power_w(double t_s) override;

 private:
  struct Domain {
    std::string energy_path;
    double max_range_uj = 0;
    std::optional<double> last_uj;
  };
  std::vector<Domain> domains_;
  std::optional<double> last_t_;
};

// Jetson module power: total_power_w of the board's INA3221 rails (VDD_IN / POM_5V_IN, or the sum of
// rails) read through device::TelemetryReader. Instantaneous; called from the sampler thread only.
class BoardPowerSource final : public PowerSource {
 public:
  // kNotFound when the board has no readable power rail.
  static Result<std::unique_ptr<BoardPowerSource>> open(const std::string& root);
  std::string name() const override { return "ina3221"; }
  std::optional<double> read_power_w(double t_s) override;
  const std::string& rule() const { return rule_; }

 private:
  explicit BoardPowerSource(device::TelemetryReader reader) : reader_(std::move(reader)) {}
  device::TelemetryReader reader_;
  std::string rule_;
};

// Reads host counters; keeps the previous reading to compute rates. Not thread-safe (the Sampler serialises).
class HostProbe {
 public:
  explicit HostProbe(std::string root = "/", std::unique_ptr<PowerSource> power = nullptr);
  proto::Sample read(double t_s);
  bool has_power() const { return power_ != nullptr; }
  std::string power_source_name() const { return power_ ? power_->name() : "none"; }

 private:
  struct CpuTimes {
    uint64_t total = 0;
    uint64_t idle = 0;
  };
  std::vector<CpuTimes> read_cpu_times() const;  // [0] = aggregate, then per core
  std::optional<uint64_t> read_disk_read_bytes() const;

  std::string root_;
  std::unique_ptr<PowerSource> power_;
  std::vector<CpuTimes> last_cpu_;
  std::optional<uint64_t> last_disk_;
};

// Samples a HostProbe on its own thread at `hz`, plus on demand (sample_now) at epoch boundaries.
// All public methods may be called from any thread.
class Sampler {
 public:
  Sampler(HostProbe& probe, double hz);
  ~Sampler();
  void start();           // t = 0 is now; takes the first sample immediately
  void stop();
  double sample_now();    // takes a sample, returns its t_s
  double elapsed_s() const;
  // Samples taken since the previous call (in time order).
  std::vector<proto::Sample> take_new();
  // All samples so far (copy).
  std::vector<proto::Sample> all() const;

 private:
  void loop();
  double take_locked();

  HostProbe& probe_;
  const double period_s_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;
  std::thread thread_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<proto::Sample> samples_;
  size_t taken_ = 0;
};

// Energy over (t0, t1] = sum of p_i * (t_i - t_(i-1)) over the samples in the window, with the first
// interval clipped at t0. nullopt when a sample in the window has no power, or the window has none.
std::optional<double> integrate_energy_j(const std::vector<proto::Sample>& samples, double t0, double t1);

}  // namespace jetsweep::agent
