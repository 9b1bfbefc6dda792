#include "agent/telemetry.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace jetsweep::agent {
namespace fs = std::filesystem;

namespace {
std::optional<std::string> read_small(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<double> read_number(const fs::path& p) {
  auto s = read_small(p);
  if (!s) return std::nullopt;
  try {
    return std::stod(*s);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

fs::path under(const std::string& root, const std::string& abs) { return fs::path(root) / abs.substr(1); }
}  // namespace

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
    auto energy = read_number(p / "energy_uj");
    if (!energy) continue;  // unreadable (non-root on recent kernels)
    Domain d;
    d.energy_path = (p / "energy_uj").string();
    d.max_range_uj = read_number(p / "max_energy_range_uj").value_or(0);
    src->domains_.push_back(d);
  }
  if (src->domains_.empty()) return nullptr;
  return src;
}

std::optional<double> RaplPowerSource::read_power_w(double t_s) {
  double total_j = 0;
  bool complete = last_t_.has_value();
  for (auto& d : domains_) {
    auto now = read_number(d.energy_path);
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
  auto src = std::unique_ptr<BoardPowerSource>(new BoardPowerSource(std::move(reader).value()));
  device::BoardSample first = src->reader_.read();
  if (!first.total_power_w) {
    std::string why = first.errors.empty() ? std::string("no INA3221 rail found") : first.errors.front();
    return not_found("no board power reading under " + root + ": " + why);
  }
  src->rule_ = first.total_power_rule;
  return src;
}

std::optional<double> BoardPowerSource::read_power_w(double) { return reader_.read().total_power_w; }

HostProbe::HostProbe(std::string root, std::unique_ptr<PowerSource> power)
    : root_(std::move(root)), power_(std::move(power)) {}

std::vector<HostProbe::CpuTimes> HostProbe::read_cpu_times() const {
  std::vector<CpuTimes> out;
  std::ifstream in(under(root_, "/proc/stat"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) break;
    std::istringstream ss(line);
    std::string label;
    ss >> label;
    uint64_t v[10] = {};
    for (auto& x : v) ss >> x;
    // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
    CpuTimes t;
    t.idle = v[3] + v[4];
    t.total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    out.push_back(t);
  }
  return out;
}

std::optional<uint64_t> HostProbe::read_disk_read_bytes() const {
  std::ifstream in(under(root_, "/proc/diskstats"));
  if (!in) return std::nullopt;
  std::error_code ec;
  std::string line;
  uint64_t sectors = 0;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    uint64_t major = 0, minor = 0, reads = 0, merged = 0, sectors_read = 0;
    std::string name;
    if (!(ss >> major >> minor >> name >> reads >> merged >> sectors_read)) continue;
    // Whole disks only (partitions have no /sys/block entry); skip virtual and stacked devices.
    if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0 || name.rfind("zram", 0) == 0 ||
        name.rfind("dm-", 0) == 0 || name.rfind("md", 0) == 0)
      continue;
    if (!fs::exists(under(root_, "/sys/block/" + name), ec)) continue;
    sectors += sectors_read;
  }
  return sectors * 512;
}

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

  // Mean current frequency over cores that expose cpufreq.
  double sum_khz = 0;
  int n = 0;
  std::error_code ec;
  fs::path cpu_dir = under(root_, "/sys/devices/system/cpu");
  if (fs::is_directory(cpu_dir, ec)) {
    for (const auto& e : fs::directory_iterator(cpu_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() < 4 || name.rfind("cpu", 0) != 0 || !std::isdigit(static_cast<unsigned char>(name[3]))) continue;
      if (auto f = read_number(e.path() / "cpufreq/scaling_cur_freq")) {
        sum_khz += *f;
        ++n;
      }
    }
  }
  if (n > 0) s.cpu_freq_mhz = sum_khz / n / 1000.0;

  if (auto meminfo = read_small(under(root_, "/proc/meminfo"))) {
    std::istringstream ss(*meminfo);
    std::string key;
    int64_t value = 0, total = -1, available = -1;
    std::string unit;
    while (ss >> key >> value) {
      std::getline(ss, unit);
      if (key == "MemTotal:") total = value;
      if (key == "MemAvailable:") available = value;
    }
    if (total >= 0 && available >= 0) s.mem_used_kb = total - available;
  }

  auto disk = read_disk_read_bytes();
  if (disk && last_disk_ && *disk >= *last_disk_) s.disk_read_bytes = static_cast<int64_t>(*disk - *last_disk_);
  last_disk_ = disk;

  if (power_) s.power_w = power_->read_power_w(t_s);
  return s;
}

Sampler::Sampler(HostProbe& probe, double hz) : probe_(probe), period_s_(1.0 / hz) {}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  t0_ = std::chrono::steady_clock::now();
  samples_.clear();
  taken_ = 0;
  running_ = true;
  take_locked();
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

double Sampler::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

double Sampler::take_locked() {
  double t = elapsed_s();
  samples_.push_back(probe_.read(t));
  return t;
}

double Sampler::sample_now() {
  std::lock_guard lock(mu_);
  return take_locked();
}

void Sampler::loop() {
  auto next = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(period_s_));
  std::unique_lock lock(mu_);
  while (running_) {
    next += period;
    // A periodic timer, not synchronisation: wakes at the next sampling instant or on stop().
    if (cv_.wait_until(lock, next, [&] { return !running_; })) break;
    take_locked();
  }
}

std::vector<proto::Sample> Sampler::take_new() {
  std::lock_guard lock(mu_);
  std::vector<proto::Sample> out(samples_.begin() + static_cast<long>(taken_), samples_.end());
  taken_ = samples_.size();
  return out;
}

std::vector<proto::Sample> Sampler::all() const {
  std::lock_guard lock(mu_);
  return samples_;
}

std::optional<double> integrate_energy_j(const std::vector<proto::Sample>& samples, double t0, double t1) {
  double energy = 0;
  bool any = false;
  double prev_t = t0;
  for (const auto& s : samples) {
    if (s.t_s <= t0) {
      continue;
    }
    if (s.t_s > t1) break;
    if (!s.power_w) return std::nullopt;
    energy += *s.power_w * (s.t_s - prev_t);
    prev_t = s.t_s;
    any = true;
  }
  if (!any) return std::nullopt;
  return energy;
}

}  // namespace jetsweep::agent
