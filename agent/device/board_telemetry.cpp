#include "agent/device/board_telemetry.hpp"

#include <time.h>

#include <algorithm>
#include <initializer_list>
#include <set>

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

// Rails whose power is already included in another rail when both are present.
struct FedBy {
  std::string_view rail;
  std::string_view feeder;
};
constexpr FedBy kFedBy[] = {{"VDDQ_VDD2_1V8AO", "VIN_SYS_5V0"}};
constexpr std::string_view kTotalRails[] = {"VDD_IN", "POM_5V_IN"};

bool is_nc(const std::string& name) {
  if (name == "NC") return true;
  return name.rfind("NC_", 0) == 0 || (name.size() > 3 && name.compare(name.size() - 3, 3, "_NC") == 0) ||
         name.find("_NC_") != std::string::npos;
}

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::optional<double> read_number(const fs::path& p, std::vector<std::string>* errors) {
  auto text = read_trimmed(p);
  if (!text.is_ok()) {
    if (errors) errors->push_back(text.status().message());
    return std::nullopt;
  }
  auto v = parse_double(*text);
  if (!v && errors) errors->push_back("not a number in " + p.string() + ": '" + *text + "'");
  return v;
}

bool is_device_dir(const fs::path& p) {
  std::string n = p.filename().string();
  return n.find('-') != std::string::npos && fs::is_directory(p);
}

}  // namespace

TotalPower total_power(const std::vector<Rail>& rails) {
  TotalPower out;
  for (auto total : kTotalRails) {
    for (const auto& r : rails) {
      if (r.name == total && r.power_mw) {
        out.watts = *r.power_mw / 1000.0;
        out.rule = r.name;
        return out;
      }
    }
  }
  std::set<std::string> present;
  for (const auto& r : rails) present.insert(r.name);
  double sum = 0;
  std::string used;
  for (const auto& r : rails) {
    if (is_nc(r.name) || !r.power_mw) continue;
    bool fed = false;
    for (const auto& f : kFedBy) {
      if (r.name == f.rail && present.count(std::string(f.feeder))) fed = true;
    }
    if (fed) continue;
    sum += *r.power_mw;
    used += (used.empty() ? "" : "+") + r.name;
  }
  if (used.empty()) return out;
  out.watts = sum / 1000.0;
  out.rule = "sum(" + used + ")";
  return out;
}

std::vector<RailSource> discover_rails(const fs::path& root) {
  std::vector<RailSource> out;
  // R32: ina3221x IIO driver, channels 0..2 with a power file.
  for (const auto& dev : list_prefixed(under(root, "/sys/bus/i2c/drivers/ina3221x"), "")) {
    if (!is_device_dir(dev)) continue;
    for (const auto& iio : list_prefixed(dev, "iio:device")) {
      for (int k = 0; k < 3; ++k) {
        std::string ks = std::to_string(k);
        auto name = read_trimmed(iio / ("rail_name_" + ks));
        if (!name.is_ok()) continue;
        RailSource s;
        s.name = *name;
        s.power = iio / ("in_power" + ks + "_input");
        s.voltage = iio / ("in_voltage" + ks + "_input");
        s.current = iio / ("in_current" + ks + "_input");
        s.warn_limit = iio / ("warn_current_limit_" + ks);
        s.crit_limit = iio / ("crit_current_limit_" + ks);
        out.push_back(std::move(s));
      }
    }
  }
  // R35+: ina3221 hwmon driver, channels 1..3 (in7 is a shunt-voltage sum: skipped).
  for (const auto& dev : list_prefixed(under(root, "/sys/bus/i2c/drivers/ina3221"), "")) {
    if (!is_device_dir(dev)) continue;
    for (const auto& hw : list_prefixed(dev / "hwmon", "hwmon")) {
      for (int k = 1; k <= 3; ++k) {
        std::string ks = std::to_string(k);
        auto name = read_trimmed(hw / ("in" + ks + "_label"));
        if (!name.is_ok()) continue;
        RailSource s;
        s.name = *name;
        s.voltage = hw / ("in" + ks + "_input");
        s.current = hw / ("curr" + ks + "_input");
        s.warn_limit = hw / ("curr" + ks + "_max");
        s.crit_limit = hw / ("curr" + ks + "_crit");
        s.warn_alarm = hw / ("curr" + ks + "_max_alarm");
        s.crit_alarm = hw / ("curr" + ks + "_crit_alarm");
        s.hwmon = true;
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

Rail read_rail(const RailSource& src, std::vector<std::string>* errors) {
  Rail rail;
  rail.name = src.name;
  rail.voltage_mv = read_number(src.voltage, errors);
  rail.current_ma = read_number(src.current, errors);
  if (src.hwmon) {
    if (rail.voltage_mv && rail.current_ma) rail.power_mw = *rail.voltage_mv * *rail.current_ma / 1000.0;
  } else {
    rail.power_mw = read_number(src.power, errors);
  }
  // Limits and alarms are optional files: read where the board has them.
  auto optional_number = [&](const fs::path& p) -> std::optional<double> {
    if (p.empty() || !exists_file(p)) return std::nullopt;
    return read_number(p, errors);
  };
  rail.warn_limit_ma = optional_number(src.warn_limit);
  rail.crit_limit_ma = optional_number(src.crit_limit);
  rail.warn_alarm = optional_number(src.warn_alarm).value_or(0) != 0;
  rail.crit_alarm = optional_number(src.crit_alarm).value_or(0) != 0;
  return rail;
}

std::vector<std::string> raised_overcurrent_alarms(const std::vector<RailSource>& rails) {
  std::vector<std::string> out;
  for (const auto& src : rails) {
    for (const fs::path* alarm : {&src.crit_alarm, &src.warn_alarm}) {
      if (alarm->empty() || !exists_file(*alarm)) continue;
      auto v = read_number(*alarm, nullptr);
      if (v && *v != 0) out.push_back(src.name + " " + alarm->filename().string() + " (" + alarm->string() + ")");
    }
  }
  return out;
}

std::optional<double> read_measured_gpu_hz(const fs::path& root) {
  std::optional<double> lowest;
  for (const char* gpc : {"nafll_gpc0", "nafll_gpc1"}) {
    fs::path p = under(root, "/sys/kernel/debug/bpmp/debug/clk") / gpc / "pto_counter";
    if (!exists_file(p)) continue;
    auto v = read_number(p, nullptr);
    if (v && *v > 0 && (!lowest || *v < *lowest)) lowest = v;  // a gated GPC reads 0
  }
  return lowest;
}

Result<TelemetryReader> TelemetryReader::open(const fs::path& root) {
  JS_ASSIGN_OR_RETURN(BoardInfo info, detect_board(root));
  return open(root, info);
}

Result<TelemetryReader> TelemetryReader::open(const fs::path& root, const BoardInfo& info) {
  TelemetryReader r;
  r.root_ = root;
  if (auto text = read_trimmed(under(root, "/sys/devices/system/cpu/possible")); text.is_ok()) {
    if (auto cpus = parse_cpu_list(*text); cpus && !cpus->empty()) r.cores_ = cpus->back() + 1;
  }
  if (r.cores_ == 0) {
    for (const auto& p : list_prefixed(under(root, "/sys/devices/system/cpu"), "cpu")) {
      if (auto i = numeric_suffix(p.filename().string(), "cpu")) r.cores_ = std::max(r.cores_, *i + 1);
    }
  }
  r.rails_ = discover_rails(root);
  r.thermal_zones_ = list_prefixed(under(root, "/sys/devices/virtual/thermal"), "thermal_zone");
  r.fan_ = find_fan(root);
  for (const char* gpc : {"nafll_gpc0", "nafll_gpc1"})
    r.gpu_measured_ = r.gpu_measured_ || exists_file(under(root, "/sys/kernel/debug/bpmp/debug/clk") / gpc / "pto_counter");
  const FamilyOps* ops = family_ops(info.family);
  if (auto gpu = find_gpu_devfreq(root); gpu.is_ok()) {
    r.gpu_cur_freq_ = gpu->devfreq_dir / "cur_freq";
    if (exists_file(gpu->device_dir / "load")) r.gpu_load_ = gpu->device_dir / "load";
  }
  if (ops) {
    if (!r.gpu_load_) {
      for (const auto& p : ops->gpu_load_fallbacks(info.l4t_major())) {
        if (exists_file(under(root, p))) {
          r.gpu_load_ = under(root, p);
          break;
        }
      }
    }
    if (!r.gpu_cur_freq_) {
      for (const auto& d : ops->gpu_devfreq_fallbacks(info.l4t_major())) {
        if (exists_file(under(root, d) / "cur_freq")) {
          r.gpu_cur_freq_ = under(root, d) / "cur_freq";
          break;
        }
      }
    }
    EmcPaths emc = ops->emc_paths(root, info.l4t_major());
    if (exists_file(emc.current_rate)) r.emc_rate_ = emc.current_rate;
    for (const auto& a : emc.activity) {
      if (exists_file(a)) {
        r.emc_activity_ = a;
        break;
      }
    }
  }
  return r;
}

namespace {

// RAM, swap and NvMap use from /proc/meminfo.
void read_memory(const fs::path& root, BoardSample& s) {
  if (auto mem = read_raw(under(root, "/proc/meminfo")); mem.is_ok()) {
    std::map<std::string, double> kb;
    size_t pos = 0;
    while (pos < mem->size()) {
      size_t end = mem->find('\n', pos);
      if (end == std::string::npos) end = mem->size();
      std::string line = mem->substr(pos, end - pos);
      pos = end + 1;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto tokens = split_ws(line.substr(colon + 1));
      if (tokens.empty()) continue;
      if (auto v = parse_double(tokens[0])) kb[line.substr(0, colon)] = *v;
    }
    if (kb.count("MemTotal")) {
      s.ram_total_mb = kb["MemTotal"] / 1024.0;
      if (kb.count("MemAvailable")) s.ram_used_mb = (kb["MemTotal"] - kb["MemAvailable"]) / 1024.0;
    }
    if (kb.count("SwapTotal")) {
      s.swap_total_mb = kb["SwapTotal"] / 1024.0;
      if (kb.count("SwapFree")) s.swap_used_mb = (kb["SwapTotal"] - kb["SwapFree"]) / 1024.0;
    }
    if (kb.count("NvMapMemUsed")) s.nvmap_mb = kb["NvMapMemUsed"] / 1024.0;
  } else {
    s.errors.push_back(mem.status().message());
  }
}

}  // namespace

void TelemetryReader::read_cpus(BoardSample& s) {
  std::vector<std::string>* err = &s.errors;
  // Per-core frequency and online state.
  fs::path cpu_root = under(root_, "/sys/devices/system/cpu");
  for (int cpu = 0; cpu < cores_; ++cpu) {
    CoreSample c;
    c.cpu = cpu;
    fs::path dir = cpu_root / ("cpu" + std::to_string(cpu));
    if (exists_file(dir / "online")) {
      auto on = read_number(dir / "online", err);
      c.online = !on || *on != 0;
    }
    if (c.online) {
      if (exists_file(dir / "cpufreq/scaling_cur_freq")) c.freq_khz = read_number(dir / "cpufreq/scaling_cur_freq", err);
      else if (exists_file(dir / "cpufreq/cpuinfo_cur_freq")) c.freq_khz = read_number(dir / "cpufreq/cpuinfo_cur_freq", err);
    }
    s.cores.push_back(c);
  }
  // Utilisation from /proc/stat deltas.
  fs::path stat_path = under(root_, "/proc/stat");
  if (auto stat = read_raw(stat_path); stat.is_ok()) {
    std::map<int, CpuTimes> now;
    size_t pos = 0;
    while (pos < stat->size()) {
      size_t end = stat->find('\n', pos);
      if (end == std::string::npos) end = stat->size();
      auto tokens = split_ws(std::string_view(*stat).substr(pos, end - pos));
      pos = end + 1;
      if (tokens.empty() || tokens[0].rfind("cpu", 0) != 0 || tokens[0] == "cpu") continue;
      auto idx = numeric_suffix(tokens[0], "cpu");
      if (!idx || tokens.size() < 5) continue;
      CpuTimes t;
      for (size_t i = 1; i < tokens.size() && i <= 8; ++i) {  // user..steal; guest is inside user
        auto v = parse_int(tokens[i]);
        if (!v) continue;
        t.total += static_cast<uint64_t>(*v);
        if (i == 4 || i == 5) t.idle += static_cast<uint64_t>(*v);  // idle + iowait
      }
      now[*idx] = t;
    }
    double sum = 0;
    int n = 0;
    for (auto& c : s.cores) {
      auto it = now.find(c.cpu);
      auto prev = prev_times_.find(c.cpu);
      if (!c.online || it == now.end() || prev == prev_times_.end()) continue;
      if (it->second.total <= prev->second.total) continue;
      double dt = static_cast<double>(it->second.total - prev->second.total);
      double di = static_cast<double>(it->second.idle - std::min(it->second.idle, prev->second.idle));
      c.util_pct = std::clamp(100.0 * (dt - di) / dt, 0.0, 100.0);
      sum += *c.util_pct;
      ++n;
    }
    if (n > 0) s.cpu_util_pct = sum / n;
    prev_times_ = std::move(now);
  } else {
    s.errors.push_back(stat.status().message());
  }
}

BoardSample TelemetryReader::read() {
  BoardSample s;
  s.t_s = monotonic_s();
  std::vector<std::string>* err = &s.errors;

  for (const auto& src : rails_) s.rails.push_back(read_rail(src, err));
  TotalPower tp = total_power(s.rails);
  s.total_power_w = tp.watts;
  s.total_power_rule = tp.rule;

  if (gpu_load_) {
    if (auto v = read_number(*gpu_load_, err)) s.gpu_load_pct = *v / 10.0;
  }
  if (gpu_cur_freq_) s.gpu_freq_hz = read_number(*gpu_cur_freq_, err);
  if (gpu_measured_) s.gpu_measured_freq_hz = read_measured_gpu_hz(root_);
  if (emc_rate_) s.emc_freq_hz = read_number(*emc_rate_, err);
  if (emc_activity_) s.emc_activity = read_number(*emc_activity_, err);
  if (s.emc_activity && s.emc_freq_hz && *s.emc_freq_hz > 0) {
    s.emc_util_pct = std::clamp(*s.emc_activity / (*s.emc_freq_hz / 1000.0) * 100.0, 0.0, 100.0);
  }

  read_cpus(s);
  read_memory(root_, s);

  // Temperatures: zones that are off read -256 C (or fail with EAGAIN): left out, not errors.
  for (const auto& zone : thermal_zones_) {
    auto type = read_trimmed(zone / "type");
    auto temp = read_trimmed(zone / "temp");
    if (!type.is_ok() || !temp.is_ok()) continue;
    auto v = parse_double(*temp);
    if (!v || *v <= -256000.0) continue;
    s.temps.push_back({*type, *v / 1000.0});
  }

  // Fan.
  if (const auto& fan = fan_) {
    if (fan->legacy) {
      s.fan_pwm = read_number(fan->target_pwm, err);
    } else if (!fan->pwm.empty()) {
      s.fan_pwm = read_number(fan->pwm.front(), err);
    }
    if (fan->tach) s.fan_rpm = read_number(*fan->tach, err);
  }
  return s;
}

boost::json::object to_json(const BoardSample& s) {
  namespace json = boost::json;
  auto opt = [](const std::optional<double>& v) -> json::value {
    if (v) return json::value(*v);
    return json::value(nullptr);
  };
  json::object o;
  o["t_s"] = s.t_s;
  o["total_power_w"] = opt(s.total_power_w);
  o["total_power_rule"] = s.total_power_rule;
  json::array rails;
  for (const auto& r : s.rails) {
    rails.push_back(json::object{{"name", r.name},
                                 {"voltage_mv", opt(r.voltage_mv)},
                                 {"current_ma", opt(r.current_ma)},
                                 {"power_mw", opt(r.power_mw)},
                                 {"warn_limit_ma", opt(r.warn_limit_ma)},
                                 {"crit_limit_ma", opt(r.crit_limit_ma)},
                                 {"warn_alarm", r.warn_alarm},
                                 {"crit_alarm", r.crit_alarm}});
  }
  o["rails"] = std::move(rails);
  auto put = [&](std::initializer_list<std::pair<const char*, const std::optional<double>*>> fields) {
    for (const auto& [key, value] : fields) o[key] = opt(*value);
  };
  put({{"gpu_load_pct", &s.gpu_load_pct},
       {"gpu_freq_hz", &s.gpu_freq_hz},
       {"gpu_measured_freq_hz", &s.gpu_measured_freq_hz},
       {"emc_util_pct", &s.emc_util_pct},
       {"emc_freq_hz", &s.emc_freq_hz},
       {"emc_activity", &s.emc_activity}});
  if (!s.gpu_cluster_load_pct.empty()) {
    json::array gpc;
    for (double l : s.gpu_cluster_load_pct) gpc.push_back(json::value(l));
    o["gpu_cluster_load_pct"] = std::move(gpc);
  }
  json::array cores;
  for (const auto& c : s.cores) {
    cores.push_back(json::object{{"cpu", c.cpu}, {"online", c.online}, {"freq_khz", opt(c.freq_khz)}, {"util_pct", opt(c.util_pct)}});
  }
  o["cores"] = std::move(cores);
  put({{"cpu_util_pct", &s.cpu_util_pct},
       {"ram_used_mb", &s.ram_used_mb},
       {"ram_total_mb", &s.ram_total_mb},
       {"swap_used_mb", &s.swap_used_mb},
       {"swap_total_mb", &s.swap_total_mb},
       {"nvmap_mb", &s.nvmap_mb}});
  json::array temps;
  for (const auto& t : s.temps) temps.push_back(json::object{{"name", t.name}, {"celsius", t.celsius}});
  o["temps"] = std::move(temps);
  put({{"fan_pwm", &s.fan_pwm}, {"fan_rpm", &s.fan_rpm}});
  json::array errors;
  for (const auto& e : s.errors) errors.push_back(json::value(e));
  o["errors"] = std::move(errors);
  return o;
}

}  // namespace jetsweep::device
