#include "tests/device/fake_board.hpp"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/device/fake_board_boards.hpp"

namespace jetsweep::device::testing {

namespace {

std::string nul_join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) {
    out += i;
    out.push_back('\0');
  }
  return out;
}

std::string join_sp(const std::vector<int64_t>& v, bool trailing_space) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  if (trailing_space) s += " ";
  return s + "\n";
}

std::vector<int64_t> times(const std::vector<int64_t>& v, int64_t k) {
  std::vector<int64_t> out;
  for (auto x : v) out.push_back(x * k);
  return out;
}

// The Nano's tables as the board lists them (the BPMP boards' are in fake_board_boards.cpp).
const std::vector<int64_t> kNanoCpu = {102000, 204000, 307200, 403200, 518400, 614400, 710400, 825600,
                                       921600, 1036800, 1132800, 1224000, 1326000, 1428000, 1479000};
const std::vector<int64_t> kNanoGpu = {76800000,  153600000, 230400000, 307200000, 384000000, 460800000,
                                       537600000, 614400000, 691200000, 768000000, 844800000, 921600000};

std::string param_cpu_online(int cores) {
  std::string s = "< PARAM TYPE=FILE NAME=CPU_ONLINE >\n";
  for (int i = 0; i < cores; ++i) {
    s += "CORE_" + std::to_string(i) + " /sys/devices/system/cpu/cpu" + std::to_string(i) + "/online\n";
  }
  return s;
}

std::string param_cpu_clock(const std::string& name, int cpu) {
  std::string d = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/";
  return "< PARAM TYPE=CLOCK NAME=" + name + " >\nFREQ_TABLE " + d + "scaling_available_frequencies\nMAX_FREQ " + d +
         "scaling_max_freq\nMIN_FREQ " + d + "scaling_min_freq\n";
}

std::string param_gpu(const std::string& devfreq) {
  return "< PARAM TYPE=CLOCK NAME=GPU >\nFREQ_TABLE " + devfreq + "/available_frequencies\nMAX_FREQ " + devfreq +
         "/max_freq\nMIN_FREQ " + devfreq + "/min_freq\n";
}

std::string param_emc(const std::string& cap) { return "< PARAM TYPE=CLOCK NAME=EMC >\nMAX_FREQ " + cap + "\n"; }

std::string cores_online(int total, int on) {
  std::string s;
  for (int i = 0; i < total; ++i) s += "CPU_ONLINE CORE_" + std::to_string(i) + " " + (i < on ? "1" : "0") + "\n";
  return s;
}

std::string cpu_limits(const std::vector<std::string>& names, int64_t min, int64_t max) {
  std::string s;
  for (const auto& n : names) {
    s += n + " MIN_FREQ " + std::to_string(min) + "\n" + n + " MAX_FREQ " + std::to_string(max) + "\n";
  }
  return s;
}

// The clusters with a core online (cores 0..online-1), whose clock lines NVIDIA's files write; the others have none.
std::vector<std::string> online_clusters(const std::vector<std::string>& names, int cores_per_cluster, int online) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i)
    if (static_cast<int>(i) * cores_per_cluster < online) out.push_back(names[i]);
  return out;
}

std::string meminfo(int64_t total_kb, int64_t avail_kb, bool nvmap) {
  std::ostringstream s;
  s << "MemTotal:       " << total_kb << " kB\n"
    << "MemFree:        " << avail_kb - 200000 << " kB\n"
    << "MemAvailable:   " << avail_kb << " kB\n"
    << "Buffers:           52000 kB\n"
    << "Cached:           700000 kB\n"
    << "SwapTotal:       " << total_kb / 2 << " kB\n"
    << "SwapFree:        " << total_kb / 2 - 1024 << " kB\n";
  if (nvmap) s << "NvMapMemFree:      10240 kB\nNvMapMemUsed:     204800 kB\n";
  return s.str();
}

// The identity of a generated board: what detection must find.
void identify(FakeSpec& spec, const char* name, const char* sim_class, Family family, Module module, int l4t_major,
              const char* l4t, const char* module_part, int default_mode) {
  spec.name = name;
  spec.sim_class = sim_class;
  spec.family = family;
  spec.module = module;
  spec.l4t_major = l4t_major;
  spec.l4t = l4t;
  spec.module_part = module_part;
  spec.default_mode = default_mode;
}

// nvpmodel.conf of a t194/t234 board (cluster i's clock is read on core i x cores_per_cluster); records the
// mode names in `spec`.
std::string nvpmodel_conf(FakeSpec& spec, int cores, const std::vector<std::string>& clusters, int cores_per_cluster,
                          const std::string& gpu_devfreq, const BpmpBoard& b) {
  std::string conf = param_cpu_online(cores) + b.gating_params;
  for (size_t i = 0; i < clusters.size(); ++i)
    conf += param_cpu_clock(clusters[i], cores_per_cluster * static_cast<int>(i));
  conf += param_gpu(gpu_devfreq) + (b.emc_param.empty() ? param_emc(b.emc.cap) : b.emc_param);
  spec.mode_names.clear();
  for (size_t i = 0; i < b.modes.size(); ++i) {
    const ConfMode& m = b.modes[i];
    const std::string gating = i < b.mode_gating.size() ? b.mode_gating[i] : "";
    conf += "< POWER_MODEL ID=" + std::to_string(m.id) + " NAME=" + m.name + " >\n" +
            cores_online(cores, m.cores_online) + gating +
            cpu_limits(online_clusters(clusters, cores_per_cluster, m.cores_online), m.cpu_min_khz, m.cpu_max_khz) +
            "GPU MIN_FREQ 0\nGPU MAX_FREQ " + std::to_string(m.gpu_max_hz) + "\n" +
            (gating.find("GPU_PWR_CNTL_EN") == std::string::npos ? "" : "GPU_POWER_CONTROL_DISABLE GPU_PWR_CNTL_DIS auto\n") + "EMC MAX_FREQ " +
            std::to_string(m.emc_max_hz) + "\n" + m.extra;
    spec.mode_names.push_back(m.name);
  }
  return conf + "< PM_CONFIG DEFAULT=" + std::to_string(spec.default_mode) + " >\n";
}

}  // namespace

fs::path make_temp_dir(const char* tag) {
  std::string tmpl = (fs::temp_directory_path() / (std::string("jetsweep-") + tag + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  return fs::path(buf.data());
}

std::vector<FakeKind> all_fake_kinds() {
  return {FakeKind::kNanoR32,    FakeKind::kAgxXavierR32, FakeKind::kXavierNxR35,
          FakeKind::kAgxOrinR35, FakeKind::kAgxOrinR36,   FakeKind::kOrinNanoR36};
}

FakeBoard::FakeBoard(FakeKind kind) {
  root_ = make_temp_dir("fakeboard");
  state_dir_ = make_temp_dir("state");
  spec_.kind = kind;
  switch (kind) {
    case FakeKind::kNanoR32: build_nano_r32(); break;
    default: build_bpmp_board(bpmp_board(kind)); break;
  }
  std::vector<std::pair<uint64_t, uint64_t>> stat;
  for (int i = 0; i < spec_.cores; ++i) stat.emplace_back(1000 + 10 * static_cast<uint64_t>(i), 9000);
  set_proc_stat(stat);
}

FakeBoard::~FakeBoard() {
  std::error_code ec;
  fs::remove_all(root_, ec);
  fs::remove_all(state_dir_, ec);
}

Board FakeBoard::board() const {
  auto b = open_board(root_);
  if (!b.is_ok()) throw std::runtime_error("fake board: " + b.status().to_string());
  return std::move(b).value();
}

fs::path FakeBoard::path(std::string_view board_path) const {
  while (!board_path.empty() && board_path.front() == '/') board_path.remove_prefix(1);
  return root_ / std::string(board_path);
}

void FakeBoard::write(std::string_view board_path, std::string_view content) {
  fs::path p = path(board_path);
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) throw std::runtime_error("fake board: cannot write " + p.string());
}

std::string FakeBoard::read(std::string_view board_path) const {
  std::ifstream f(path(board_path), std::ios::binary);
  if (!f) throw std::runtime_error("fake board: cannot read " + path(board_path).string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void FakeBoard::remove(std::string_view board_path) { fs::remove_all(path(board_path)); }

void FakeBoard::symlink(std::string_view link, std::string_view target) {
  fs::path l = path(link), t = path(target);
  fs::create_directories(l.parent_path());
  fs::create_directory_symlink(t.lexically_relative(l.parent_path()), l);
}

void FakeBoard::set_proc_stat(const std::vector<std::pair<uint64_t, uint64_t>>& busy_idle) {
  uint64_t busy = 0, idle = 0;
  for (const auto& [b, i] : busy_idle) {
    busy += b;
    idle += i;
  }
  std::ostringstream s;
  s << "cpu  " << busy << " 0 0 " << idle << " 0 0 0 0 0 0\n";
  for (size_t c = 0; c < busy_idle.size(); ++c) {
    s << "cpu" << c << " " << busy_idle[c].first << " 0 0 " << busy_idle[c].second << " 0 0 0 0 0 0\n";
  }
  s << "intr 12345 0 0\nctxt 99999\nbtime 1700000000\nprocesses 4242\nprocs_running 1\nprocs_blocked 0\n";
  write("/proc/stat", s.str());
}

std::map<std::string, std::string> FakeBoard::snapshot() const {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root_); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = it->path().lexically_relative(root_).string();
    if (it->is_symlink()) {
      out[rel] = "L:" + fs::read_symlink(it->path()).string();
    } else if (it->is_directory()) {
      out[rel] = "D";
    } else {
      std::ifstream f(it->path(), std::ios::binary);
      std::ostringstream s;
      s << f.rdbuf();
      out[rel] = "F:" + s.str();
    }
  }
  return out;
}

std::string diff_snapshots(const std::map<std::string, std::string>& before,
                           const std::map<std::string, std::string>& after) {
  for (const auto& [k, v] : before) {
    auto it = after.find(k);
    if (it == after.end()) return "removed: " + k;
    if (it->second != v) return "changed: " + k + " from '" + v + "' to '" + it->second + "'";
  }
  for (const auto& [k, v] : after) {
    if (!before.count(k)) return "added: " + k;
  }
  return "";
}

// ---- building blocks ----

void FakeBoard::add_common(const std::string& compatible, const std::string& model, const std::string& release,
                           const std::string& kernel) {
  write("/sys/firmware/devicetree/base/compatible", compatible);
  write("/sys/firmware/devicetree/base/model", model + std::string(1, '\0'));
  symlink("/proc/device-tree", "/sys/firmware/devicetree/base");
  write("/etc/nv_tegra_release", release);
  write("/proc/sys/kernel/osrelease", kernel + "\n");
  write("/proc/sys/vm/drop_caches", "0\n");
  // JetPack 4.3 and later: the id zero-padded, then the fan mode.
  write("/var/lib/nvpmodel/status", "pmode:" + std::string(4 - std::to_string(spec_.default_mode).size(), '0') +
                                        std::to_string(spec_.default_mode) + " fmode:quiet\n");
}

void FakeBoard::add_cpus(int cores, const std::vector<std::vector<int>>& clusters, const std::vector<int64_t>& khz) {
  const std::string base = "/sys/devices/system/cpu";
  write(base + "/possible", "0-" + std::to_string(cores - 1) + "\n");
  write(base + "/present", "0-" + std::to_string(cores - 1) + "\n");
  write(base + "/online", "0-" + std::to_string(cores - 1) + "\n");
  for (const auto& cl : clusters) {
    std::string policy = base + "/cpufreq/policy" + std::to_string(cl.front());
    std::string related;
    for (int c : cl) related += (related.empty() ? "" : " ") + std::to_string(c);
    write(policy + "/related_cpus", related + "\n");
    write(policy + "/affected_cpus", related + "\n");
    write(policy + "/scaling_available_frequencies", join_sp(khz, true));
    write(policy + "/scaling_min_freq", std::to_string(khz.front()) + "\n");
    write(policy + "/scaling_max_freq", std::to_string(khz.back()) + "\n");
    write(policy + "/scaling_cur_freq", std::to_string(khz.back()) + "\n");
    write(policy + "/cpuinfo_min_freq", std::to_string(khz.front()) + "\n");
    write(policy + "/cpuinfo_max_freq", std::to_string(khz.back()) + "\n");
    write(policy + "/scaling_governor", "schedutil\n");
    for (int c : cl) symlink(base + "/cpu" + std::to_string(c) + "/cpufreq", policy);
  }
  for (int c = 0; c < cores; ++c) {
    std::string cpu = base + "/cpu" + std::to_string(c);
    if (c > 0) write(cpu + "/online", "1\n");  // cpu0 has no online file
    write(cpu + "/cpuidle/state0/name", "WFI\n");
    write(cpu + "/cpuidle/state0/disable", "0\n");
    write(cpu + "/cpuidle/state1/name", "C7\n");
    write(cpu + "/cpuidle/state1/disable", "0\n");
  }
  spec_.cores = cores;
  spec_.clusters = clusters;
  spec_.cpu_khz = khz;
}

void FakeBoard::add_gpu(const std::string& device_dir, const std::string& devfreq_name, const std::string& of_name,
                        const std::vector<int64_t>& hz, const std::string& gpu0_link) {
  std::string devfreq = device_dir + "/devfreq/" + devfreq_name;
  write(devfreq + "/available_frequencies", join_sp(hz, false));
  write(devfreq + "/min_freq", std::to_string(hz.front()) + "\n");
  write(devfreq + "/max_freq", std::to_string(hz.back()) + "\n");
  write(devfreq + "/cur_freq", std::to_string(hz[hz.size() / 2]) + "\n");
  write(devfreq + "/governor", "nvhost_podgov\n");
  symlink(devfreq + "/device", device_dir);
  symlink("/sys/class/devfreq/" + devfreq_name, devfreq);
  std::string node = "/sys/firmware/devicetree/base/" + of_name + "@" + devfreq_name.substr(0, devfreq_name.find('.'));
  write(node + "/name", of_name + std::string(1, '\0'));
  symlink(device_dir + "/of_node", node);
  write(device_dir + "/load", "734\n");
  write(device_dir + "/railgate_enable", "1\n");
  if (!gpu0_link.empty()) symlink(gpu0_link, device_dir);
  spec_.gpu_hz = hz;
  spec_.gpu_of_name = of_name;
  spec_.gpu_load_path = (gpu0_link.empty() ? device_dir : gpu0_link) + "/load";
  // A devfreq entry that is not the GPU (video image compositor).
  std::string vic = "/sys/devices/15340000.vic";
  write(vic + "/devfreq/15340000.vic/available_frequencies", "115200000 729600000\n");
  symlink(vic + "/devfreq/15340000.vic/device", vic);
  write("/sys/firmware/devicetree/base/vic@15340000/name", std::string("vic") + '\0');
  symlink(vic + "/of_node", "/sys/firmware/devicetree/base/vic@15340000");
  symlink("/sys/class/devfreq/15340000.vic", vic + "/devfreq/15340000.vic");
}

void FakeBoard::add_bpmp_emc(const std::vector<int64_t>& khz, const std::string& cap_path, const std::string& activity_path) {
  const std::string clk = "/sys/kernel/debug/bpmp/debug/clk/emc";
  write(clk + "/rate", std::to_string(khz.back() * 1000) + "\n");
  write(clk + "/min_rate", std::to_string(khz.front() * 1000) + "\n");
  write(clk + "/max_rate", std::to_string(khz.back() * 1000) + "\n");
  write(clk + "/mrq_rate_locked", "0\n");
  write(clk + "/state", "1\n");
  write("/sys/kernel/debug/bpmp/debug/emc/possible_rates", join_sp(khz, false));
  write(cap_path, "0\n");
  // Half of the max rate busy: mc_all in kHz.
  write(activity_path, std::to_string(khz.back() / 2) + "\n");
  spec_.emc_hz = times(khz, 1000);
  spec_.emc_cap_path = cap_path;
}

void FakeBoard::add_iio_rails(const std::string& device_dir, const std::string& bus_addr, int iio_index,
                              const std::vector<RailSpec>& rails) {
  std::string dev = device_dir + "/" + bus_addr;
  std::string iio = dev + "/iio:device" + std::to_string(iio_index);
  write(dev + "/name", "ina3221x\n");
  for (size_t k = 0; k < rails.size(); ++k) {
    std::string ks = std::to_string(k);
    write(iio + "/rail_name_" + ks, rails[k].name + "\n");
    write(iio + "/in_voltage" + ks + "_input", std::to_string(rails[k].mv) + "\n");
    write(iio + "/in_current" + ks + "_input", std::to_string(rails[k].ma) + "\n");
    write(iio + "/in_power" + ks + "_input", std::to_string(rails[k].mw) + "\n");
    write(iio + "/warn_current_limit_" + ks, "6000\n");  // R32 over-current limits (mA)
    write(iio + "/crit_current_limit_" + ks, "8000\n");
    spec_.rail_names.push_back(rails[k].name);
  }
  write("/sys/bus/i2c/drivers/ina3221x/uevent", "");
  symlink("/sys/bus/i2c/drivers/ina3221x/" + bus_addr, dev);
}

void FakeBoard::add_hwmon_rails(const std::string& device_dir, const std::string& bus_addr, int hwmon_index,
                                const std::vector<RailSpec>& rails) {
  std::string dev = device_dir + "/" + bus_addr;
  std::string hw = dev + "/hwmon/hwmon" + std::to_string(hwmon_index);
  write(hw + "/name", "ina3221\n");
  write(hw + "/update_interval", "1\n");
  write(hw + "/samples", "512\n");
  int64_t shunt_sum = 0;
  for (size_t k = 0; k < rails.size(); ++k) {
    std::string ks = std::to_string(k + 1);
    write(hw + "/in" + ks + "_label", rails[k].name + "\n");
    write(hw + "/in" + ks + "_input", std::to_string(rails[k].mv) + "\n");
    write(hw + "/curr" + ks + "_input", std::to_string(rails[k].ma) + "\n");
    write(hw + "/curr" + ks + "_max", "6000\n");  // R35+ over-current limits (mA) and their alarms
    write(hw + "/curr" + ks + "_crit", "8000\n");
    write(hw + "/curr" + ks + "_max_alarm", "0\n");
    write(hw + "/curr" + ks + "_crit_alarm", "0\n");
    write(hw + "/in" + std::to_string(k + 4) + "_input", "40\n");  // shunt voltages
    shunt_sum += 40;
    spec_.rail_names.push_back(rails[k].name);
  }
  write(hw + "/in7_label", "sum of shunt voltages\n");
  write(hw + "/in7_input", std::to_string(shunt_sum) + "\n");
  write(hw + "/curr4_input", "1500\n");  // sum current channel: not a rail
  write("/sys/bus/i2c/drivers/ina3221/uevent", "");
  symlink("/sys/bus/i2c/drivers/ina3221/" + bus_addr, dev);
}

void FakeBoard::add_thermal(const std::vector<std::pair<std::string, int64_t>>& zones) {
  int live = 0;
  for (size_t i = 0; i < zones.size(); ++i) {
    std::string z = "/sys/devices/virtual/thermal/thermal_zone" + std::to_string(i);
    write(z + "/type", zones[i].first + "\n");
    write(z + "/temp", std::to_string(zones[i].second) + "\n");
    if (zones[i].second != -256000) ++live;
  }
  spec_.live_thermal_zones = live;
}

void FakeBoard::add_fan_legacy() {
  write("/sys/devices/pwm-fan/target_pwm", "77\n");
  write("/sys/devices/pwm-fan/temp_control", "1\n");
  write("/sys/devices/pwm-fan/rpm_measured", "1830\n");
  spec_.legacy_fan = true;
  spec_.fan_rpm = 1830;
}

void FakeBoard::add_fan_hwmon(const std::string& hwmon_dir) {
  write(hwmon_dir + "/pwm1", "120\n");
  write(hwmon_dir + "/name", "pwmfan\n");
  spec_.legacy_fan = false;
  spec_.fan_pwm_files = 1;
}

void FakeBoard::build_nano_r32() {
  identify(spec_, "nano-r32", "nano", Family::kT210, Module::kNano, 32,
           "R32.7.1", "p3450-0000", 0);
  add_common(nul_join({"nvidia,p3450-0000", "nvidia,jetson-nano", "nvidia,tegra210"}), "NVIDIA Jetson Nano Developer Kit",
             "# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref, EABI: aarch64, DATE: Sat Feb 19 17:05:08 UTC 2022\n",
             "4.9.253-tegra");
  add_cpus(4, {{0, 1, 2, 3}}, kNanoCpu);
  add_gpu("/sys/devices/gpu.0", "57000000.gpu", "gpu", kNanoGpu, "");
  write("/sys/devices/gpu.0/power/control", "auto\n");   // runtime PM, which nvpmodel turns "on" (GPU_PWR_CNTL_EN)
  // t210 EMC: clk debugfs; possible rates include three the bandwidth manager never uses.
  write("/sys/kernel/debug/clk/emc/clk_possible_rates",
        "40800 68000 102000 204000 408000 665600 800000 1065600 1331200 1600000 (kHz)\n");
  write("/sys/kernel/debug/clk/emc/clk_rate", "1600000000\n");
  write("/sys/kernel/debug/clk/override.emc/clk_rate", "1600000000\n");
  write("/sys/kernel/debug/clk/override.emc/clk_state", "0\n");
  write("/sys/kernel/debug/clk/override.emc/clk_update_rate", "0\n");
  write("/sys/kernel/debug/tegra_bwmgr/emc_min_rate", "204000000\n");
  write("/sys/kernel/debug/tegra_bwmgr/emc_max_rate", "1600000000\n");
  write("/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "0\n");
  write("/sys/kernel/actmon_avg_activity/mc_all", "400000\n");
  spec_.emc_hz = {204000000, 408000000, 665600000, 800000000, 1065600000, 1331200000, 1600000000};
  spec_.emc_cap_path = "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap";
  add_iio_rails("/sys/devices/7000c400.i2c/i2c-6", "6-0040", 0,
                {{"POM_5V_IN", 5032, 988, 4971}, {"POM_5V_GPU", 5024, 40, 200}, {"POM_5V_CPU", 5024, 152, 763}});
  spec_.total_power_w = 4.971;
  spec_.total_rule = "POM_5V_IN";
  add_thermal({{"AO-therm", 34500}, {"CPU-therm", 30000}, {"GPU-therm", 29500}, {"PLL-therm", 27250},
               {"PMIC-Die", 100000}, {"thermal-fan-est", -256000}});
  add_fan_legacy();
  write("/proc/meminfo", meminfo(4059172, 3000000, false));
  std::string conf = "# Jetson Nano nvpmodel configuration\n";
  conf += param_cpu_online(4) + param_cpu_clock("CPU_A57", 0) +
          "< PARAM TYPE=FILE NAME=GPU_POWER_CONTROL_ENABLE >\nGPU_PWR_CNTL_EN /sys/devices/gpu.0/power/control\n" +
          param_gpu("/sys/devices/gpu.0/devfreq/57000000.gpu") + param_emc("/sys/kernel/nvpmodel_emc_cap/emc_iso_cap") +
          "\n< POWER_MODEL ID=0 NAME=MAXN >\n" + cores_online(4, 4) + cpu_limits({"CPU_A57"}, 0, -1) +
          "GPU_POWER_CONTROL_ENABLE GPU_PWR_CNTL_EN on\nGPU MIN_FREQ 0\nGPU MAX_FREQ -1\nEMC MAX_FREQ 0\n" +
          "\n< POWER_MODEL ID=1 NAME=5W >\n" + cores_online(4, 2) + cpu_limits({"CPU_A57"}, 0, 918000) +
          "GPU_POWER_CONTROL_ENABLE GPU_PWR_CNTL_EN on\nGPU MIN_FREQ 0\nGPU MAX_FREQ 640000000\nEMC MAX_FREQ 1600000000\n" +
          "\n< PM_CONFIG DEFAULT=0 >\n";
  write("/etc/nvpmodel.conf", conf);
  spec_.mode_names = {"MAXN", "5W"};
}

void FakeBoard::build_bpmp_board(const BpmpBoard& b) {
  const FakeIdentity& id = b.id;
  identify(spec_, id.name, id.sim_class, id.family, id.module, id.l4t_major, id.l4t, id.module_part, id.default_mode);
  add_common(nul_join(b.compatible), b.model, b.release, b.kernel);
  int cores = 0;
  for (const auto& cluster : b.clusters) cores += static_cast<int>(cluster.size());
  add_cpus(cores, b.clusters, b.cpu_khz);
  add_gpu(b.gpu.device_dir, b.gpu.devfreq_name, b.gpu.of_name, b.gpu.hz, b.gpu.gpu0_link);
  add_bpmp_emc(b.emc.khz, b.emc.cap, b.emc.activity);
  for (const auto& bank : b.rail_banks) {
    std::vector<RailSpec> rails;
    for (const auto& r : bank.rails) rails.push_back({r.name, r.mv, r.ma, r.mw});
    if (bank.hwmon) add_hwmon_rails(bank.device_dir, bank.bus_addr, bank.index, rails);
    else add_iio_rails(bank.device_dir, bank.bus_addr, bank.index, rails);
  }
  spec_.total_power_w = b.total_power_w;
  spec_.total_rule = b.total_rule;
  add_thermal(b.thermal);
  if (b.fan_hwmon.empty()) add_fan_legacy();
  else add_fan_hwmon(b.fan_hwmon);
  // An f75308 fan controller (jetson_clocks drives each of its pwmN) and a tachometer on its own hwmon.
  if (!b.f75308_hwmon.empty()) {
    write(b.f75308_hwmon + "/name", "f75308\n");
    for (const char* pwm : {"pwm1", "pwm2"}) write(b.f75308_hwmon + "/" + pwm, "96\n");
    write(b.f75308_hwmon + "/pwm1_enable", "2\n");  // not a pwm channel
    spec_.fan_pwm_files += 2;
  }
  if (!b.tach_hwmon.empty()) {
    write(b.tach_hwmon + "/name", "pwm_tach\n");
    write(b.tach_hwmon + "/rpm", "2150\n");
    spec_.fan_rpm = 2150;
  }
  // The measured GPU clock (BPMP's nafll_gpc counters), where the board has them: a little off the requested one,
  // as a counter measures it; gpc1 a further 1 MHz lower (the reader takes the lowest).
  for (size_t i = 0; i < b.gpc_pto.size(); ++i) {
    const int64_t hz = b.gpu.hz[b.gpu.hz.size() / 2] - 250000 - static_cast<int64_t>(i) * 1000000;
    write("/sys/kernel/debug/bpmp/debug/clk/" + b.gpc_pto[i] + "/pto_counter", std::to_string(hz) + "\n");
    spec_.gpu_measured_hz = static_cast<double>(hz);
  }
  write("/proc/meminfo", meminfo(b.memory.total_kb, b.memory.avail_kb, b.memory.nvmap));
  const int cores_per_cluster = static_cast<int>(b.clusters.front().size());
  write("/etc/nvpmodel.conf", nvpmodel_conf(spec_, cores, b.conf_clusters, cores_per_cluster,
                                            b.gpu.device_dir + "/devfreq/" + b.gpu.devfreq_name, b));
  // The GPU's masks as booted, and its runtime-PM control (read through the gpu.0 link, as nvpmodel does).
  if (b.tpc_pg_mask_now) write(b.gpu.device_dir + "/tpc_pg_mask", std::to_string(*b.tpc_pg_mask_now) + "\n");
  if (b.fbp_pg_mask_now) write(b.gpu.device_dir + "/fbp_pg_mask", std::to_string(*b.fbp_pg_mask_now) + "\n");
  if (!b.gating_params.empty()) write(b.gpu.device_dir + "/power/control", "auto\n");
}

}  // namespace jetsweep::device::testing
