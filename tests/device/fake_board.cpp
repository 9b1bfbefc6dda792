#include "tests/device/fake_board.hpp"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

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

std::vector<int64_t> ladder(int64_t first, int64_t step, int64_t last) {
  std::vector<int64_t> v;
  for (int64_t f = first; f <= last; f += step) v.push_back(f);
  return v;
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

// Nano, AGX Xavier, Xavier NX, AGX Orin and Orin Nano tables as a board of each would list them.
const std::vector<int64_t> kNanoCpu = {102000, 204000, 307200, 403200, 518400, 614400, 710400, 825600,
                                       921600, 1036800, 1132800, 1224000, 1326000, 1428000, 1479000};
const std::vector<int64_t> kNanoGpu = {76800000,  153600000, 230400000, 307200000, 384000000, 460800000,
                                       537600000, 614400000, 691200000, 768000000, 844800000, 921600000};
const std::vector<int64_t> kXavierGpu = {114750000, 216750000, 318750000, 420750000, 522750000,
                                         624750000, 675750000, 828750000, 905250000, 1032750000,
                                         1198500000, 1236750000, 1338750000, 1377000000};
const std::vector<int64_t> kXavierEmcKhz = {204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000, 2133000};
const std::vector<int64_t> kNxGpu = {114750000, 204000000, 306000000, 408000000,  510000000,
                                     599250000, 701250000, 752250000, 803250000,  854250000,
                                     905250000, 956250000, 1007250000, 1058250000, 1109250000};
const std::vector<int64_t> kOrinGpu = {114750000, 216750000, 318750000, 420750000, 522750000, 624750000, 726750000,
                                       828750000, 930750000, 1032750000, 1134750000, 1236750000, 1300500000};
const std::vector<int64_t> kOrinNanoGpu = {306000000, 408000000, 510000000, 612000000, 624750000};

std::vector<int64_t> xavier_cpu() { return ladder(115200, 76800, 2265600); }
std::vector<int64_t> nx_cpu() {
  auto v = ladder(115200, 76800, 1881600);
  v.push_back(1907200);
  return v;
}
std::vector<int64_t> orin_cpu() {
  auto v = ladder(115200, 76800, 2188800);
  v.push_back(2201600);
  return v;
}
std::vector<int64_t> orin_nano_cpu() {
  auto v = ladder(115200, 76800, 1497600);
  v.push_back(1510400);
  return v;
}

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

// One POWER_MODEL of a generated nvpmodel.conf.
struct ConfMode {
  int id;
  std::string name;
  int cores_online;
  int64_t cpu_min_khz, cpu_max_khz;   // every cluster's limits (-1: the table's maximum)
  int64_t gpu_max_hz, emc_max_hz;     // -1 / 0: no cap
  std::string extra;                  // lines after the EMC cap
};

// nvpmodel.conf of a t194/t234 board (cluster i's clock is read on core i x cores_per_cluster); records the
// mode names in `spec`.
std::string nvpmodel_conf(FakeSpec& spec, int cores, const std::vector<std::string>& clusters, int cores_per_cluster,
                          const std::string& gpu_devfreq, const std::string& emc_cap, const std::vector<ConfMode>& modes) {
  std::string conf = param_cpu_online(cores);
  for (size_t i = 0; i < clusters.size(); ++i)
    conf += param_cpu_clock(clusters[i], cores_per_cluster * static_cast<int>(i));
  conf += param_gpu(gpu_devfreq) + param_emc(emc_cap);
  spec.mode_names.clear();
  for (const auto& m : modes) {
    conf += "< POWER_MODEL ID=" + std::to_string(m.id) + " NAME=" + m.name + " >\n" +
            cores_online(cores, m.cores_online) + cpu_limits(clusters, m.cpu_min_khz, m.cpu_max_khz) +
            "GPU MIN_FREQ 0\nGPU MAX_FREQ " + std::to_string(m.gpu_max_hz) + "\nEMC MAX_FREQ " +
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
    case FakeKind::kAgxXavierR32: build_agx_xavier_r32(); break;
    case FakeKind::kXavierNxR35: build_xavier_nx_r35(); break;
    case FakeKind::kAgxOrinR35: build_agx_orin(35); break;
    case FakeKind::kAgxOrinR36: build_agx_orin(36); break;
    case FakeKind::kOrinNanoR36: build_orin_nano_r36(); break;
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
  write("/var/lib/nvpmodel/status", "pmode:" + std::string(4 - std::to_string(spec_.default_mode).size(), '0') +
                                        std::to_string(spec_.default_mode) + "\n");
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
    write(iio + "/crit_current_limit_" + ks, "5000\n");
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
}

void FakeBoard::add_fan_hwmon(const std::string& hwmon_dir) {
  write(hwmon_dir + "/pwm1", "120\n");
  write(hwmon_dir + "/name", "pwmfan\n");
  spec_.legacy_fan = false;
}

void FakeBoard::build_nano_r32() {
  identify(spec_, "nano-r32", "nano", Family::kT210, Module::kNano, 32,
           "R32.7.1", "p3450-0000", 0);
  add_common(nul_join({"nvidia,p3450-0000", "nvidia,jetson-nano", "nvidia,tegra210"}), "NVIDIA Jetson Nano Developer Kit",
             "# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref, EABI: aarch64, DATE: Sat Feb 19 17:05:08 UTC 2022\n",
             "4.9.253-tegra");
  add_cpus(4, {{0, 1, 2, 3}}, kNanoCpu);
  add_gpu("/sys/devices/gpu.0", "57000000.gpu", "gpu", kNanoGpu, "");
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

void FakeBoard::build_agx_xavier_r32() {
  identify(spec_, "agx-xavier-r32", "agx-xavier", Family::kT194, Module::kAgxXavier, 32,
           "R32.5.1", "p2972-0000", 2);
  add_common(nul_join({"nvidia,p2972-0000", "nvidia,galen", "nvidia,tegra194"}), "Jetson-AGX",
             "# R32 (release), REVISION: 5.1, GCID: 27362550, BOARD: t186ref, EABI: aarch64, DATE: Wed May 19 18:16:00 UTC 2021\n",
             "4.9.201-tegra");
  add_cpus(8, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}, xavier_cpu());
  add_gpu("/sys/devices/17000000.gv11b", "17000000.gv11b", "gv11b", kXavierGpu, "/sys/devices/gpu.0");
  add_bpmp_emc(kXavierEmcKhz, "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "/sys/kernel/actmon_avg_activity/mc_all");
  add_iio_rails("/sys/devices/3160000.i2c/i2c-1", "1-0040", 0,
                {{"GPU", 19144, 60, 1155}, {"CPU", 19144, 20, 385}, {"SOC", 19144, 130, 2502}});
  add_iio_rails("/sys/devices/3160000.i2c/i2c-1", "1-0041", 1,
                {{"CV", 19144, 0, 0}, {"VDDRQ", 19144, 10, 192}, {"SYS5V", 4984, 540, 2692}});
  spec_.total_power_w = (1155 + 385 + 2502 + 0 + 192 + 2692) / 1000.0;
  spec_.total_rule = "sum(GPU+CPU+SOC+CV+VDDRQ+SYS5V)";
  add_thermal({{"AO-therm", 26500}, {"CPU-therm", 28000}, {"GPU-therm", 28000}, {"PLL-therm", 27000},
               {"PMIC-Die", 100000}, {"Tboard_tegra", 27000}, {"Tdiode_tegra", -256000}, {"thermal-fan-est", 27450}});
  add_fan_legacy();
  write("/proc/meminfo", meminfo(16202660, 15000000, false));
  write("/etc/nvpmodel.conf",
        nvpmodel_conf(spec_, 8, {"CPU_DENVER_0", "CPU_DENVER_1", "CPU_DENVER_2", "CPU_DENVER_3"}, 2,
                      "/sys/devices/17000000.gv11b/devfreq/17000000.gv11b", "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap",
                      {{0, "MAXN", 8, 1190400, -1, -1, 0, ""},
                       {1, "MODE_10W", 2, 1190400, 1190400, 520200000, 1065600000, ""},
                       {2, "MODE_15W", 4, 1190400, 1190400, 670000000, 1331200000, ""},
                       {3, "MODE_30W_ALL", 8, 1190400, 1190400, 900000000, 1600000000, ""}}));
}

void FakeBoard::build_xavier_nx_r35() {
  identify(spec_, "xavier-nx-r35", "xavier-nx", Family::kT194, Module::kXavierNx, 35,
           "R35.3.1", "p3668-0001", 2);
  add_common(nul_join({"nvidia,p3509-0000+p3668-0001", "nvidia,p3668-0001", "nvidia,tegra194"}),
             "NVIDIA Jetson Xavier NX Developer Kit (eMMC)",
             "# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n",
             "5.10.104-tegra");
  add_cpus(6, {{0, 1}, {2, 3}, {4, 5}}, nx_cpu());
  add_gpu("/sys/devices/17000000.gv11b", "17000000.gv11b", "gv11b", kNxGpu, "/sys/devices/gpu.0");
  add_bpmp_emc({204000, 408000, 665600, 800000, 1065600, 1331200, 1600000, 1866000},
               "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap", "/sys/kernel/actmon_avg_activity/mc_all");
  add_hwmon_rails("/sys/devices/platform/3160000.i2c/i2c-7", "7-0040", 5,
                  {{"VDD_IN", 5000, 960, 0}, {"VDD_CPU_GPU_CV", 5000, 150, 0}, {"VDD_SOC", 5000, 250, 0}});
  spec_.total_power_w = 4.8;
  spec_.total_rule = "VDD_IN";
  add_thermal({{"AO-therm", 33000}, {"CPU-therm", 35500}, {"GPU-therm", 34000}, {"PLL-therm", 33500},
               {"PMIC-Die", 100000}, {"Tdiode_tegra", -256000}, {"thermal-fan-est", 34200}});
  add_fan_hwmon("/sys/devices/platform/pwm-fan/hwmon/hwmon3");
  write("/proc/meminfo", meminfo(7772000, 6500000, true));
  write("/etc/nvpmodel.conf",
        nvpmodel_conf(spec_, 6, {"CPU_DENVER_0", "CPU_DENVER_1", "CPU_DENVER_2"}, 2,
                      "/sys/devices/17000000.gv11b/devfreq/17000000.gv11b", "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap",
                      {{0, "MODE_15W_2CORE", 2, 0, 1907200, 1109250000, 1600000000, ""},
                       {2, "MODE_15W_6CORE", 6, 0, 1420800, 1109250000, 1600000000, ""}}));
}

void FakeBoard::build_agx_orin(int l4t_major) {
  bool r36 = l4t_major >= 36;
  identify(spec_, r36 ? "agx-orin-r36" : "agx-orin-r35", "agx-orin", Family::kT234, Module::kAgxOrin, l4t_major,
           r36 ? "R36.3.0" : "R35.4.1", "p3701-0005", 2);
  add_common(nul_join({"nvidia,p3737-0000+p3701-0005", "nvidia,p3701-0005", "nvidia,tegra234"}), "Jetson AGX Orin",
             r36 ? "# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64, DATE: Mon May  6 17:34:21 UTC 2024\n"
                 : "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023\n",
             r36 ? "5.15.136-tegra" : "5.10.120-tegra");
  add_cpus(12, {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}, orin_cpu());
  std::string devfreq;
  if (r36) {
    add_gpu("/sys/devices/platform/bus@0/17000000.gpu", "17000000.gpu", "gpu", kOrinGpu, "/sys/devices/platform/gpu.0");
    devfreq = "/sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu";
    add_bpmp_emc({204000, 665600, 2133000, 3199000}, "/sys/kernel/nvpmodel_clk_cap/emc", "/sys/kernel/debug/cactmon/mc_all");
  } else {
    add_gpu("/sys/devices/17000000.ga10b", "17000000.ga10b", "ga10b", kOrinGpu, "/sys/devices/gpu.0");
    devfreq = "/sys/devices/17000000.ga10b/devfreq/17000000.ga10b";
    add_bpmp_emc({204000, 665600, 2133000, 3199000}, "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap",
                 "/sys/kernel/actmon_avg_activity/mc_all");
  }
  std::string i2c = r36 ? "/sys/devices/platform/bus@0/c240000.i2c/i2c-1" : "/sys/devices/platform/c240000.i2c/i2c-1";
  // hwmon numbers differ between boots and releases.
  add_hwmon_rails(i2c, "1-0040", r36 ? 1 : 4,
                  {{"VDD_GPU_SOC", 4992, 481, 0}, {"VDD_CPU_CV", 4992, 80, 0}, {"VIN_SYS_5V0", 4984, 809, 0}});
  add_hwmon_rails(i2c, "1-0041", r36 ? 3 : 2, {{"NC", 0, 0, 0}, {"VDDQ_VDD2_1V8AO", 1800, 167, 0}, {"NC", 0, 0, 0}});
  spec_.total_power_w = (4992.0 * 481 + 4992.0 * 80 + 4984.0 * 809) / 1e6;
  spec_.total_rule = "sum(VDD_GPU_SOC+VDD_CPU_CV+VIN_SYS_5V0)";
  add_thermal({{"cpu-thermal", 42593}, {"gpu-thermal", -256000}, {"cv0-thermal", 41000}, {"cv1-thermal", 40500},
               {"cv2-thermal", 40800}, {"soc0-thermal", 41200}, {"soc1-thermal", 41300}, {"soc2-thermal", 41100},
               {"tj-thermal", 42593}, {"tboard-thermal", 35000}, {"tdiode-thermal", 36000}});
  add_fan_hwmon(r36 ? "/sys/devices/platform/pwm-fan/hwmon/hwmon0" : "/sys/devices/platform/pwm-fan/hwmon/hwmon2");
  write("/proc/meminfo", meminfo(64302132, 62000000, true));
  write("/etc/nvpmodel.conf",
        nvpmodel_conf(spec_, 12, {"CPU_A78_0", "CPU_A78_1", "CPU_A78_2"}, 4, devfreq, spec_.emc_cap_path,
                      {{0, "MAXN", 12, 0, -1, -1, 0, ""},
                       {1, "MODE_15W", 4, 0, 1113600, 408000000, 2133000000, "DLA0_CORE MAX_FREQ 614400000\n"},
                       {2, "MODE_30W", 8, 0, 1728000, 612000000, 0, ""},
                       {3, "MODE_50W", 12, 0, 1497600, 816000000, 0, ""}}));
}

void FakeBoard::build_orin_nano_r36() {
  identify(spec_, "orin-nano-r36", "orin-nano", Family::kT234, Module::kOrinNano, 36,
           "R36.3.0", "p3767-0005", 0);
  add_common(nul_join({"nvidia,p3768-0000+p3767-0005", "nvidia,p3767-0005", "nvidia,tegra234"}),
             "NVIDIA Jetson Orin Nano Developer Kit",
             "# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64, DATE: Mon May  6 17:34:21 UTC 2024\n",
             "5.15.136-tegra");
  add_cpus(6, {{0, 1, 2, 3}, {4, 5}}, orin_nano_cpu());
  add_gpu("/sys/devices/platform/bus@0/17000000.gpu", "17000000.gpu", "gpu", kOrinNanoGpu, "/sys/devices/platform/gpu.0");
  add_bpmp_emc({204000, 665600, 2133000}, "/sys/kernel/nvpmodel_clk_cap/emc", "/sys/kernel/debug/cactmon/mc_all");
  add_hwmon_rails("/sys/devices/platform/bus@0/c240000.i2c/i2c-1", "1-0040", 1,
                  {{"VDD_IN", 5000, 983, 0}, {"VDD_CPU_GPU_CV", 5000, 90, 0}, {"VDD_SOC", 5000, 286, 0}});
  spec_.total_power_w = 4.915;
  spec_.total_rule = "VDD_IN";
  add_thermal({{"cpu-thermal", 45500}, {"gpu-thermal", 44000}, {"cv0-thermal", -256000}, {"soc0-thermal", 43000},
               {"tj-thermal", 45500}});
  add_fan_hwmon("/sys/devices/platform/pwm-fan/hwmon/hwmon2");
  write("/proc/meminfo", meminfo(7802340, 6000000, true));
  write("/etc/nvpmodel.conf",
        nvpmodel_conf(spec_, 6, {"CPU_A78_0", "CPU_A78_1"}, 4,
                      "/sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu", "/sys/kernel/nvpmodel_clk_cap/emc",
                      {{0, "15W", 6, 0, -1, -1, 0, ""}, {1, "7W", 4, 0, 960000, 408000000, 0, ""}}));
}

}  // namespace jetsweep::device::testing
