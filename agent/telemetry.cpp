#include "agent/telemetry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <type_traits>
#include <utility>

#include "agent/device/fs_util.hpp"

namespace jetsweep::agent {
namespace fs = std::filesystem;

namespace {
fs::path under(const std::string& root, const std::string& abs) { return fs::path(root) / abs.substr(1); }

// Whitespace-separated fields of a line, parsed in place (no streams: this runs up to hundreds of times a
// second).
class Fields {
 public:
  explicit Fields(std::string_view line) : rest_(line) {}
  std::string_view next() {
    size_t b = 0;
    while (b < rest_.size() && std::isspace(static_cast<unsigned char>(rest_[b]))) ++b;
    size_t e = b;
    while (e < rest_.size() && !std::isspace(static_cast<unsigned char>(rest_[e]))) ++e;
    std::string_view out = rest_.substr(b, e - b);
    rest_.remove_prefix(e);
    return out;
  }
  template <typename T>
  std::optional<T> number() {
    const std::string_view f = next();
    T v{};
    if constexpr (std::is_same_v<T, double>) {   // no std::from_chars for double before GCC 11
      if (f.empty() || !jetsweep::device::from_chars_double(f.data(), f.data() + f.size(), v)) return std::nullopt;
    } else {
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || f.empty()) return std::nullopt;
    }
    return v;
  }

 private:
  std::string_view rest_;
};

// Calls f(line) for each line of `text`.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (!f(line)) return;
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}
}  // namespace

PolledFile::~PolledFile() { close(); }

PolledFile::PolledFile(PolledFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), buf_(std::move(other.buf_)) {}

PolledFile& PolledFile::operator=(PolledFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    buf_ = std::move(other.buf_);
  }
  return *this;
}

void PolledFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::optional<std::string_view> PolledFile::read() {
  if (path_.empty()) return std::nullopt;
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return std::nullopt;
  }
  if (buf_.size() < 4096) buf_.resize(4096);
  size_t used = 0;
  for (;;) {
    const ssize_t n = ::pread(fd_, buf_.data() + used, buf_.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      close();   // gone (an offline core's sysfs node): reopen on the next read
      return std::nullopt;
    }
    used += static_cast<size_t>(n);
    if (n == 0 || used < buf_.size()) break;
    buf_.resize(buf_.size() * 2);   // larger than the buffer (many cores): read the rest
  }
  return std::string_view(buf_.data(), used);
}

std::optional<double> PolledFile::read_number() {
  auto text = read();
  if (!text) return std::nullopt;
  Fields f(*text);
  auto v = f.number<double>();
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::unique_ptr<RaplPowerSource> RaplPowerSource::open(const std::string& root) {
  auto src = std::unique_ptr<RaplPowerSource>(new RaplPowerSource());
  fs::path base = under(root, "/sys/class/powercap");
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return nullptr;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(base, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    const std::string name = p.filename().string();
    // Package domains only ("intel-rapl:0"), not their sub-domains ("intel-rapl:0:0"): no double counting.
    if (name.rfind("intel-rapl:", 0) != 0 || std::count(name.begin(), name.end(), ':') != 1) continue;
    Domain d;
    d.energy_uj = PolledFile((p / "energy_uj").string());
    if (!d.energy_uj.read_number()) continue;  // unreadable (non-root on recent kernels)
    d.max_range_uj = PolledFile((p / "max_energy_range_uj").string()).read_number().value_or(0);
    src->domains_.push_back(std::move(d));
  }
  if (src->domains_.empty()) return nullptr;
  return src;
}

std::optional<double> RaplPowerSource::read_power_w(double t_s) {
  double total_j = 0;
  bool complete = last_t_.has_value();
  for (auto& d : domains_) {
    auto now = d.energy_uj.read_number();
    if (!now) return std::nullopt;
    if (d.last_uj) {
      double delta = *now - *d.last_uj;
      if (delta < 0 && d.max_range_uj > 0) delta += d.max_range_uj;  // counter wrapped
      total_j += delta * 1e-6;
    } else {
      complete = false;
    }
    d.last_uj = now;
  }
  std::optional<double> out;
  if (complete && t_s > *last_t_) out = total_j / (t_s - *last_t_);
  last_t_ = t_s;
  return out;
}

Result<std::unique_ptr<BoardPowerSource>> BoardPowerSource::open(const std::string& root) {
  auto reader = device::TelemetryReader::open(root);
  if (!reader) return reader.status();
  device::BoardSample first = reader->read();
  if (!first.total_power_w) {
    std::string why = first.errors.empty() ? std::string("no INA3221 rail found") : first.errors.front();
    return not_found("no board power reading under " + root + ": " + why);
  }
  auto src = std::unique_ptr<BoardPowerSource>(new BoardPowerSource());
  src->rule_ = first.total_power_rule;
  // The rails the rule names: one total rail ("VDD_IN"), or the summed ones ("sum(GPU+CPU+SOC)").
  std::set<std::string> used;
  if (src->rule_.rfind("sum(", 0) == 0 && src->rule_.back() == ')') {
    std::string_view names(src->rule_);
    names = names.substr(4, names.size() - 5);
    while (!names.empty()) {
      const size_t plus = names.find('+');
      used.emplace(names.substr(0, plus));
      names = plus == std::string_view::npos ? std::string_view() : names.substr(plus + 1);
    }
  } else {
    used.insert(src->rule_);
  }
  for (const auto& r : reader->rail_sources()) {
    if (!used.count(r.name)) continue;
    RailFiles f;
    f.name = r.name;
    f.hwmon = r.hwmon;
    f.voltage_mv = PolledFile(r.voltage.string());
    f.current_ma = PolledFile(r.current.string());
    f.power_mw = PolledFile(r.power.string());
    src->rails_.push_back(std::move(f));
    if (src->rule_.rfind("sum(", 0) != 0) break;   // a total rail: the first of that name, as total_power takes
  }
  if (src->rails_.empty()) return not_found("no board power rail under " + root + " for rule " + src->rule_);
  return src;
}

std::optional<double> BoardPowerSource::read_power_w(double) {
  std::vector<device::Rail> rails;
  for (auto& f : rails_) {
    device::Rail r;
    r.name = f.name;
    if (f.hwmon) {
      r.voltage_mv = f.voltage_mv.read_number();
      r.current_ma = f.current_ma.read_number();
      if (r.voltage_mv && r.current_ma) r.power_mw = *r.voltage_mv * *r.current_ma / 1000.0;
    } else {
      r.power_mw = f.power_mw.read_number();
    }
    if (!r.power_mw) return std::nullopt;
    rails.push_back(std::move(r));
  }
  const device::TotalPower total = device::total_power(rails);
  if (total.rule != rule_) return std::nullopt;
  return total.watts;
}

HostProbe::HostProbe(std::string root, std::unique_ptr<PowerSource> power)
    : root_(std::move(root)),
      power_(std::move(power)),
      stat_(under(root_, "/proc/stat").string()),
      meminfo_(under(root_, "/proc/meminfo").string()),
      diskstats_(under(root_, "/proc/diskstats").string()) {}

std::vector<HostProbe::CpuTimes> HostProbe::read_cpu_times() {
  std::vector<CpuTimes> out;
  auto text = stat_.read();
  if (!text) return out;
  for_each_line(*text, [&](std::string_view line) {
    if (line.rfind("cpu", 0) != 0) return false;
    Fields f(line);
    f.next();   // label
    // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
    uint64_t v[8] = {};
    for (auto& x : v) x = f.number<uint64_t>().value_or(0);
    CpuTimes t;
    t.idle = v[3] + v[4];
    t.total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    out.push_back(t);
    return true;
  });
  return out;
}

std::optional<uint64_t> HostProbe::read_disk_read_bytes() {
  auto text = diskstats_.read();
  if (!text) return std::nullopt;
  uint64_t sectors = 0;
  for_each_line(*text, [&](std::string_view line) {
    Fields f(line);
    auto major = f.number<uint64_t>(), minor = f.number<uint64_t>();
    const std::string_view name = f.next();
    auto reads = f.number<uint64_t>(), merged = f.number<uint64_t>(), sectors_read = f.number<uint64_t>();
    if (!major || !minor || name.empty() || !reads || !merged || !sectors_read) return true;
    auto known = whole_disk_.find(name);
    if (known == whole_disk_.end()) {
      // Whole disks only (partitions have no /sys/block entry); skip virtual and stacked devices.
      const std::string n(name);
      const bool skip = n.rfind("loop", 0) == 0 || n.rfind("ram", 0) == 0 || n.rfind("zram", 0) == 0 ||
                        n.rfind("dm-", 0) == 0 || n.rfind("md", 0) == 0;
      std::error_code ec;
      known = whole_disk_.emplace(n, !skip && fs::exists(under(root_, "/sys/block/" + n), ec)).first;
    }
    if (known->second) sectors += *sectors_read;
    return true;
  });
  return sectors * 512;
}

std::optional<double> HostProbe::read_cpu_freq_mhz() {
  if (!cpufreq_) {
    cpufreq_.emplace();
    std::error_code ec;
    fs::path cpu_dir = under(root_, "/sys/devices/system/cpu");
    std::vector<std::string> paths;
    if (fs::is_directory(cpu_dir, ec)) {
      for (const auto& e : fs::directory_iterator(cpu_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() < 4 || name.rfind("cpu", 0) != 0 || !std::isdigit(static_cast<unsigned char>(name[3])))
          continue;
        paths.push_back((e.path() / "cpufreq/scaling_cur_freq").string());
      }
    }
    std::sort(paths.begin(), paths.end());
    for (auto& p : paths) cpufreq_->emplace_back(std::move(p));
  }
  // Mean current frequency over cores that expose cpufreq.
  double sum_khz = 0;
  int n = 0;
  for (auto& f : *cpufreq_) {
    if (auto khz = f.read_number()) {
      sum_khz += *khz;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum_khz / n / 1000.0;
}

std::optional<int64_t> HostProbe::read_mem_used_kb() {
  auto text = meminfo_.read();
  if (!text) return std::nullopt;
  std::optional<int64_t> total, available;
  for_each_line(*text, [&](std::string_view line) {
    Fields f(line);
    const std::string_view key = f.next();
    if (key == "MemTotal:") total = f.number<int64_t>();
    else if (key == "MemAvailable:") available = f.number<int64_t>();
    return !(total && available);
  });
  if (!total || !available) return std::nullopt;
  return *total - *available;
}

std::optional<double> HostProbe::read_temp_max_c() {
  if (!thermal_zones_) {
    thermal_zones_.emplace();
    std::error_code ec;
    // Jetsons (JETSON.md) and PCs alike: /sys/class/thermal/thermal_zoneN links to /sys/devices/virtual/thermal.
    std::vector<std::string> paths;
    for (const char* dir : {"/sys/devices/virtual/thermal", "/sys/class/thermal"}) {
      const fs::path d = under(root_, dir);
      if (!fs::is_directory(d, ec)) continue;
      for (const auto& e : fs::directory_iterator(d, ec))
        if (e.path().filename().string().rfind("thermal_zone", 0) == 0) paths.push_back((e.path() / "temp").string());
      if (!paths.empty()) break;
    }
    std::sort(paths.begin(), paths.end());
    for (auto& p : paths) thermal_zones_->emplace_back(std::move(p));
  }
  std::optional<double> hottest;
  for (auto& f : *thermal_zones_) {
    const auto milli = f.read_number();
    // -256 C marks a zone that is off (Jetson); anything below -40 C or above 150 C is not a running chip.
    if (!milli || *milli <= -40000 || *milli >= 150000) continue;
    if (!hottest || *milli / 1000.0 > *hottest) hottest = *milli / 1000.0;
  }
  return hottest;
}

// A power reading the controller accepts, [0, proto::kMaxPowerWatts], or none: a reading outside is a glitch
// (a RAPL counter reset between two reads close in time, a corrupt rail file), not a measurement; sending it
// would store a wrong number, and the controller refuses it anyway (as read_temp_max_c skips absurd zones).
namespace {
std::optional<double> plausible_power(std::optional<double> w) {
  if (w && !(*w >= 0.0 && *w <= proto::kMaxPowerWatts)) return std::nullopt;
  return w;
}
}  // namespace

proto::Sample HostProbe::read(double t_s) {
  proto::Sample s;
  s.t_s = t_s;
  auto cpu = read_cpu_times();
  if (!cpu.empty() && last_cpu_.size() == cpu.size()) {
    uint64_t dt = cpu[0].total - last_cpu_[0].total;
    uint64_t di = cpu[0].idle - last_cpu_[0].idle;
    if (dt > 0) s.cpu_util_pct = 100.0 * static_cast<double>(dt - std::min(di, dt)) / static_cast<double>(dt);
    for (size_t i = 1; i < cpu.size(); ++i) {
      const uint64_t ct = cpu[i].total - last_cpu_[i].total;
      const uint64_t ci = cpu[i].idle - last_cpu_[i].idle;
      s.core_util_pct.push_back(ct > 0 ? 100.0 * static_cast<double>(ct - std::min(ci, ct)) / static_cast<double>(ct) : 0.0);
    }
  }
  last_cpu_ = std::move(cpu);
  s.cpu_freq_mhz = read_cpu_freq_mhz();
  s.temp_max_c = read_temp_max_c();
  if (auto used = read_mem_used_kb()) s.mem_used_kb = *used;
  auto disk = read_disk_read_bytes();
  if (disk && last_disk_ && *disk >= *last_disk_) s.disk_read_bytes = static_cast<int64_t>(*disk - *last_disk_);
  last_disk_ = disk;
  if (power_) s.power_w = plausible_power(power_->read_power_w(t_s));
  last_full_ = s;
  return s;
}

proto::Sample HostProbe::read_power(double t_s) {
  proto::Sample s = last_full_;
  s.t_s = t_s;
  s.disk_read_bytes = 0;
  s.power_w = power_ ? plausible_power(power_->read_power_w(t_s)) : std::nullopt;
  return s;
}

Sampler::Sampler(HostProbe& probe, double hz)
    : probe_(probe),
      period_s_(1.0 / hz),
      full_every_(hz > kHostCountersHz ? static_cast<int64_t>(std::ceil(hz / kHostCountersHz - 1e-9)) : 1) {}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  t0_ticks_.store(std::chrono::steady_clock::now().time_since_epoch().count());
  samples_.clear();
  taken_ = 0;
  running_ = true;
  take_locked(true);
  thread_ = std::thread([this] { loop(); });
}

void Sampler::stop() {
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double Sampler::since_start_s(std::chrono::steady_clock::time_point tp) const {
  const std::chrono::steady_clock::time_point t0{std::chrono::steady_clock::duration(t0_ticks_.load())};
  return std::chrono::duration<double>(tp - t0).count();
}

double Sampler::elapsed_s() const { return since_start_s(std::chrono::steady_clock::now()); }

double Sampler::take_locked(bool full) {
  double t = elapsed_s();
  samples_.push_back(full ? probe_.read(t) : probe_.read_power(t));
  return t;
}

double Sampler::sample_now() {
  std::lock_guard lock(mu_);
  return take_locked(true);
}

void Sampler::loop() {
  auto next = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(period_s_));
  std::unique_lock lock(mu_);
  for (int64_t k = 1; running_; ++k) {
    next += period;
    // A periodic timer, not synchronisation: wakes at the next sampling instant or on stop().
    if (cv_.wait_until(lock, next, [&] { return !running_; })) break;
    take_locked(k % full_every_ == 0);
  }
}

std::vector<proto::Sample> Sampler::take_new() {
  std::lock_guard lock(mu_);
  std::vector<proto::Sample> out(samples_.begin() + static_cast<long>(taken_), samples_.end());
  taken_ = samples_.size();
  return out;
}

namespace {
bool before_sample(double t, const proto::Sample& s) { return t < s.t_s; }
bool sample_before(const proto::Sample& s, double t) { return s.t_s < t; }
}  // namespace

std::vector<proto::Sample> Sampler::window(double t0, double t1) const {
  std::lock_guard lock(mu_);
  // The last sample at or before t0 (else the first), through the first at or after t1 (else the last).
  auto first = std::upper_bound(samples_.begin(), samples_.end(), t0, before_sample);
  if (first != samples_.begin()) --first;
  auto last = std::lower_bound(first, samples_.end(), t1, sample_before);
  if (last != samples_.end()) ++last;
  return std::vector<proto::Sample>(first, last);
}

void Sampler::forget_before(double t) {
  std::lock_guard lock(mu_);
  auto keep = std::upper_bound(samples_.begin(), samples_.end(), t, before_sample);
  if (keep == samples_.begin()) return;   // no sample at or before t: all still needed
  --keep;                                 // the last sample at or before t stays (it starts t's window)
  const size_t drop = std::min(static_cast<size_t>(keep - samples_.begin()), taken_);
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<long>(drop));
  taken_ -= drop;
}

size_t Sampler::stored() const {
  std::lock_guard lock(mu_);
  return samples_.size();
}

EnergyWindow integrate_energy(const std::vector<proto::Sample>& samples, double t0, double t1, PowerReading reading) {
  EnergyWindow w;
  if (!(t1 > t0) || samples.empty()) return w;
  const double length = t1 - t0;
  // Segments [t_(i-1), t_i] that can overlap the window start at the last sample at or before t0.
  auto it = std::upper_bound(samples.begin(), samples.end(), t0, before_sample);
  size_t i = it == samples.begin() ? 1 : static_cast<size_t>(it - samples.begin());
  double covered = 0, energy = 0;
  for (; i < samples.size(); ++i) {
    const proto::Sample& a = samples[i - 1];
    const proto::Sample& b = samples[i];
    if (a.t_s >= t1) break;
    const double lo = std::max(a.t_s, t0), hi = std::min(b.t_s, t1);
    if (!(hi > lo)) continue;
    if (reading == PowerReading::kIntervalAverage) {
      if (!b.power_w) continue;
      energy += *b.power_w * (hi - lo);
    } else {
      if (!a.power_w || !b.power_w) continue;
      // Linear between the two instants (b.t_s > a.t_s here, as hi > lo); clipped ends interpolated.
      const double slope = (*b.power_w - *a.power_w) / (b.t_s - a.t_s);
      const double p_lo = *a.power_w + slope * (lo - a.t_s);
      const double p_hi = *a.power_w + slope * (hi - a.t_s);
      energy += 0.5 * (p_lo + p_hi) * (hi - lo);
    }
    covered += hi - lo;
  }
  w.coverage = std::clamp(covered / length, 0.0, 1.0);
  if (covered <= 0 || w.coverage < proto::kMinPowerCoverage) return w;
  // Scale the covered part's energy to the whole window (its mean power x the window's length); no-op
  // up to rounding when nothing is missing.
  w.energy_j = covered >= length ? energy : energy * (length / covered);
  w.mean_power_w = *w.energy_j / length;
  return w;
}

}  // namespace jetsweep::agent
