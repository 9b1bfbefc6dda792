#include "agent/device/board.hpp"
#include "agent/device/nvpmodel.hpp"

#include <algorithm>
#include <set>

#include "agent/device/fs_util.hpp"
#include "agent/device/module_variants.hpp"

namespace jetsweep::device {

namespace {

constexpr std::string_view kGpuOfNames[] = {"gp10b", "gv11b", "ga10b", "gpu"};

std::vector<std::string> split_nul(std::string_view raw) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t end = raw.find('\0', pos);
    if (end == std::string_view::npos) end = raw.size();
    std::string item = trim(raw.substr(pos, end - pos));
    if (!item.empty()) out.push_back(item);
    pos = end + 1;
  }
  return out;
}

Family family_from_chip_id(int64_t id) {
  switch (id) {
    case 0x21: return Family::kT210;  // 33
    case 0x19: return Family::kT194;  // 25
    case 0x23: return Family::kT234;  // 35
    default: return Family::kUnknown;
  }
}

// soc_id is "25" on some kernels and "jep106:036b:0019" on others (last field is hex chip id).
std::optional<int64_t> parse_soc_id(const std::string& text) {
  if (auto v = parse_int(text)) return v;
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string hex = text.substr(colon + 1);
  if (hex.empty() || hex.size() > 8) return std::nullopt;
  int64_t v = 0;
  for (char c : hex) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    v = v * 16 + d;
  }
  return v;
}

int count_cores(const fs::path& root) {
  if (auto text = read_trimmed(under(root, "/sys/devices/system/cpu/possible")); text.is_ok()) {
    if (auto cpus = parse_cpu_list(*text); cpus && !cpus->empty()) return cpus->back() + 1;
  }
  int n = 0;
  for (const auto& p : list_prefixed(under(root, "/sys/devices/system/cpu"), "cpu")) {
    if (auto idx = numeric_suffix(p.filename().string(), "cpu")) n = std::max(n, *idx + 1);
  }
  return n;
}

// Module from the compatible list; empty optional when no known part number appears.
std::optional<Module> module_from_compatible(const std::vector<std::string>& compatible, std::string* why) {
  for (const auto& c : compatible) {
    auto has = [&](std::string_view s) { return c.find(s) != std::string::npos; };
    if (has("p3448") || has("jetson-nano") || has("p3450")) {
      *why = "compatible entry " + c;
      return Module::kNano;
    }
    if (has("p2888") || has("p2972") || has("galen")) {
      *why = "compatible entry " + c;
      return Module::kAgxXavier;
    }
    if (has("p3668")) {
      *why = "compatible entry " + c;
      return Module::kXavierNx;
    }
    if (has("p3701")) {
      *why = "compatible entry " + c;
      return Module::kAgxOrin;
    }
    if (has("p3767")) {
      // SKUs 0000/0001 are Orin NX 16/8 GB; 0003/0004/0005 are Orin Nano 8/4 GB and devkit.
      size_t at = c.find("p3767-");
      std::string sku = at == std::string::npos ? "" : c.substr(at + 6, 4);
      *why = "compatible entry " + c;
      if (sku == "0000" || sku == "0001") return Module::kOrinNx;
      return Module::kOrinNano;
    }
  }
  return std::nullopt;
}

Module module_from_cores(Family family, int cores) {
  switch (family) {
    case Family::kT210: return Module::kNano;
    case Family::kT194: return cores >= 8 ? Module::kAgxXavier : Module::kXavierNx;
    case Family::kT234:
      if (cores >= 12) return Module::kAgxOrin;
      return cores >= 8 ? Module::kOrinNx : Module::kOrinNano;
    case Family::kUnknown: break;
  }
  return Module::kUnknown;
}

std::vector<int64_t> sorted_unique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string join_names() { return join(kGpuOfNames, ","); }

Result<std::vector<CpuCluster>> read_clusters(const fs::path& root, const BoardInfo& info, int cores) {
  const FamilyOps* ops = family_ops(info.family);
  std::vector<std::vector<int>> defaults;
  if (ops) defaults = ops->default_clusters(info.module, cores);
  auto default_of = [&](int cpu) -> std::vector<int> {
    for (const auto& d : defaults) {
      if (std::find(d.begin(), d.end(), cpu) != d.end()) return d;
    }
    return {cpu};
  };
  fs::path cpu_root = under(root, "/sys/devices/system/cpu");
  std::vector<CpuCluster> clusters;
  std::set<int> assigned;
  for (int cpu = 0; cpu < cores; ++cpu) {
    if (assigned.count(cpu)) continue;
    fs::path dir = cpu_root / ("cpu" + std::to_string(cpu)) / "cpufreq";
    if (!exists_file(dir)) continue;
    std::vector<int> members;
    auto related = read_trimmed(dir / "related_cpus");
    if (related.is_ok()) {
      auto list = parse_cpu_list(*related);
      if (!list || list->empty()) {
        return invalid_argument("malformed cpu list '" + *related + "' in " + (dir / "related_cpus").string());
      }
      members = *list;
    } else {
      members = default_of(cpu);
    }
    CpuCluster cluster;
    cluster.cpus = members;
    int leader = members.front();
    fs::path leader_dir = cpu_root / ("cpu" + std::to_string(leader)) / "cpufreq";
    cluster.cpufreq_dir = exists_file(leader_dir) ? leader_dir : dir;
    fs::path table = cluster.cpufreq_dir / "scaling_available_frequencies";
    JS_ASSIGN_OR_RETURN(auto freqs, read_int_list(table));
    cluster.freqs_khz = sorted_unique(std::move(freqs));
    for (int m : members) assigned.insert(m);
    clusters.push_back(std::move(cluster));
  }
  // Offline CPUs may have lost their cpufreq link: place them with the documented layout.
  for (int cpu = 0; cpu < cores; ++cpu) {
    if (assigned.count(cpu)) continue;
    auto d = default_of(cpu);
    bool placed = false;
    for (auto& c : clusters) {
      if (std::find(d.begin(), d.end(), c.cpus.front()) != d.end()) {
        c.cpus.push_back(cpu);
        std::sort(c.cpus.begin(), c.cpus.end());
        placed = true;
        break;
      }
    }
    if (!placed) {
      return io_error("cpu" + std::to_string(cpu) + " has no cpufreq folder under " + cpu_root.string() +
                      " and belongs to no discovered cluster");
    }
    assigned.insert(cpu);
  }
  if (clusters.empty()) return io_error("no cpufreq folders under " + cpu_root.string());
  return clusters;
}

}  // namespace

std::string_view family_name(Family family) {
  switch (family) {
    case Family::kT210: return "t210";
    case Family::kT194: return "t194";
    case Family::kT234: return "t234";
    case Family::kUnknown: break;
  }
  return "unknown";
}

std::string_view module_name(Module module) {
  switch (module) {
    case Module::kNano: return "Nano";
    case Module::kAgxXavier: return "AGX Xavier";
    case Module::kXavierNx: return "Xavier NX";
    case Module::kAgxOrin: return "AGX Orin";
    case Module::kOrinNx: return "Orin NX";
    case Module::kOrinNano: return "Orin Nano";
    case Module::kUnknown: break;
  }
  return "unknown";
}

std::string L4tRelease::to_string() const {
  std::string out = "R" + std::to_string(major);
  if (!revision.empty()) out += "." + revision;
  return out;
}

std::optional<L4tRelease> parse_l4t_release(std::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  size_t r = line.find("R");
  while (r != std::string::npos) {
    size_t e = r + 1;
    while (e < line.size() && line[e] >= '0' && line[e] <= '9') ++e;
    if (e > r + 1) break;
    r = line.find('R', r + 1);
  }
  if (r == std::string::npos) return std::nullopt;
  size_t e = r + 1;
  while (e < line.size() && line[e] >= '0' && line[e] <= '9') ++e;
  L4tRelease rel;
  rel.major = static_cast<int>(*parse_int(line.substr(r + 1, e - r - 1)));
  rel.raw = trim(line);
  size_t rev = line.find("REVISION:");
  if (rev != std::string::npos) {
    size_t b = rev + 9;
    while (b < line.size() && line[b] == ' ') ++b;
    size_t end = line.find(',', b);
    rel.revision = trim(line.substr(b, end == std::string::npos ? std::string::npos : end - b));
  }
  return rel;
}

Result<BoardInfo> detect_board(const fs::path& root) {
  BoardInfo info;
  fs::path compat_path = under(root, "/proc/device-tree/compatible");
  if (auto raw = read_raw(compat_path); raw.is_ok()) info.compatible = split_nul(*raw);
  if (auto model = read_trimmed(under(root, "/proc/device-tree/model")); model.is_ok()) info.model = *model;

  for (const auto& c : info.compatible) {
    if (c == "nvidia,tegra210") info.family = Family::kT210;
    if (c == "nvidia,tegra194") info.family = Family::kT194;
    if (c == "nvidia,tegra234") info.family = Family::kT234;
  }
  if (info.family != Family::kUnknown) {
    info.family_source = compat_path.string();
  } else {
    fs::path chip = under(root, "/sys/module/tegra_fuse/parameters/tegra_chip_id");
    fs::path soc = under(root, "/sys/devices/soc0/soc_id");
    if (auto id = read_int(chip); id.is_ok() && family_from_chip_id(*id) != Family::kUnknown) {
      info.family = family_from_chip_id(*id);
      info.family_source = chip.string();
    } else if (auto text = read_trimmed(soc); text.is_ok()) {
      if (auto sid = parse_soc_id(*text); sid && family_from_chip_id(*sid) != Family::kUnknown) {
        info.family = family_from_chip_id(*sid);
        info.family_source = soc.string();
      }
    }
  }
  if (info.family == Family::kUnknown) {
    return not_found("no known Tegra chip (tegra210/194/234) in " + compat_path.string() + ", " +
                     under(root, "/sys/module/tegra_fuse/parameters/tegra_chip_id").string() + " or " +
                     under(root, "/sys/devices/soc0/soc_id").string());
  }

  std::string why;
  if (auto m = module_from_compatible(info.compatible, &why)) {
    info.module = *m;
    info.module_source = why;
  } else {
    int cores = count_cores(root);
    info.module = module_from_cores(info.family, cores);
    info.module_source = "inferred from family " + std::string(family_name(info.family)) + " and " +
                         std::to_string(cores) + " cores";
  }
  for (const auto& c : info.compatible) {
    size_t plus = c.find('+');
    if (plus != std::string::npos) {
      std::string carrier = c.substr(0, plus);
      if (carrier.rfind("nvidia,", 0) == 0) carrier = carrier.substr(7);
      info.carrier_part = carrier;
      info.module_part = c.substr(plus + 1);
      break;
    }
  }
  if (info.module_part.empty() && !info.compatible.empty()) {
    std::string first = info.compatible.front();
    if (first.rfind("nvidia,", 0) == 0) first = first.substr(7);
    info.module_part = first;
  }

  if (auto rel = read_raw(under(root, "/etc/nv_tegra_release")); rel.is_ok()) info.l4t = parse_l4t_release(*rel);
  if (auto k = read_trimmed(under(root, "/proc/sys/kernel/osrelease")); k.is_ok()) info.kernel = *k;
  std::optional<NvpmodelConf> parsed_conf;
  if (auto conf = read_raw(under(root, "/etc/nvpmodel.conf")); conf.is_ok()) {
    info.nvpmodel_conf_fnv1a64 = fnv1a64_hex(*conf);
    if (auto p = parse_nvpmodel_conf(*conf, "/etc/nvpmodel.conf"); p.is_ok()) parsed_conf = std::move(*p);
  }
  if (const ModuleVariant* v = find_module_variant(info.module_part, parsed_conf ? &*parsed_conf : nullptr))
    info.variant = v->name;
  if (auto st = read_trimmed(under(root, "/var/lib/nvpmodel/status")); st.is_ok()) {
    if (auto status = parse_nvpmodel_status(*st)) {   // "pmode:0002 fmode:quiet"
      info.nvpmodel_mode = status->mode;
      info.nvpmodel_fan_mode = status->fan_mode;
    }
  }
  return info;
}

uint64_t FrequencyTables::mode_count() const {
  return static_cast<uint64_t>(cores) * cpu_khz.size() * gpu_hz.size() * emc_hz.size();
}

Result<GpuDevfreq> find_gpu_devfreq(const fs::path& root) {
  fs::path class_dir = under(root, "/sys/class/devfreq");
  std::vector<std::string> seen;
  for (const auto& entry : list_prefixed(class_dir, "")) {
    auto dir = resolve_in_root(root, entry);
    if (!dir.is_ok()) continue;
    auto device = resolve_in_root(root, *dir / "device");
    if (!device.is_ok()) continue;
    auto of_node = resolve_in_root(root, *device / "of_node");
    if (!of_node.is_ok()) continue;
    auto name = read_trimmed(*of_node / "name");
    if (!name.is_ok()) continue;
    seen.push_back(entry.filename().string() + "=" + *name);
    if (std::find(std::begin(kGpuOfNames), std::end(kGpuOfNames), *name) == std::end(kGpuOfNames)) continue;
    GpuDevfreq gpu;
    gpu.devfreq_dir = *dir;
    gpu.device_dir = *device;
    gpu.of_name = *name;
    JS_ASSIGN_OR_RETURN(auto freqs, read_int_list(*dir / "available_frequencies"));
    gpu.freqs_hz = sorted_unique(std::move(freqs));
    return gpu;
  }
  std::string listed;
  for (const auto& s : seen) listed += (listed.empty() ? "" : ", ") + s;
  return not_found("no GPU devfreq node under " + class_dir.string() + " with device/of_node/name in {" +
                   join_names() + "}" + (listed.empty() ? " (no entries)" : " (found " + listed + ")"));
}

Result<std::vector<int64_t>> read_emc_table_hz(const EmcPaths& paths) {
  JS_ASSIGN_OR_RETURN(auto khz, read_int_list(paths.table));
  int64_t lo = 0, hi = INT64_MAX;
  if (paths.table_min && exists_file(*paths.table_min)) {
    JS_ASSIGN_OR_RETURN(lo, read_int(*paths.table_min));
  }
  if (paths.table_max && exists_file(*paths.table_max)) {
    JS_ASSIGN_OR_RETURN(hi, read_int(*paths.table_max));
  }
  std::vector<int64_t> hz;
  for (int64_t k : khz) {
    int64_t h = k * 1000;
    if (h < 10'000'000 || h > 10'000'000'000) {
      return invalid_argument("EMC rate " + std::to_string(k) + " kHz in " + paths.table.string() +
                              " is outside 10 MHz..10 GHz (file not in kHz?)");
    }
    if (h >= lo && h <= hi) hz.push_back(h);
  }
  hz = sorted_unique(std::move(hz));
  if (hz.empty()) {
    return invalid_argument("no EMC rate in " + paths.table.string() + " lies within the bounds " +
                            std::to_string(lo) + ".." + std::to_string(hi) + " Hz");
  }
  return hz;
}

Result<FrequencyTables> read_frequency_tables(const fs::path& root, const BoardInfo& info) {
  const FamilyOps* ops = family_ops(info.family);
  if (!ops) return invalid_argument("unknown board family: cannot read frequency tables under " + root.string());
  FrequencyTables t;
  t.cores = count_cores(root);
  if (t.cores <= 0) return io_error("no CPUs listed under " + under(root, "/sys/devices/system/cpu").string());
  JS_ASSIGN_OR_RETURN(t.clusters, read_clusters(root, info, t.cores));
  t.cpu_khz = t.clusters.front().freqs_khz;
  for (size_t i = 1; i < t.clusters.size(); ++i) {
    std::vector<int64_t> both;
    std::set_intersection(t.cpu_khz.begin(), t.cpu_khz.end(), t.clusters[i].freqs_khz.begin(),
                          t.clusters[i].freqs_khz.end(), std::back_inserter(both));
    t.cpu_khz = std::move(both);
  }

  auto gpu = find_gpu_devfreq(root);
  if (!gpu.is_ok()) {
    // Fall back to the documented folders (the class link can be missing while the GPU is rail-gated).
    bool found = false;
    for (const auto& dir_s : ops->gpu_devfreq_fallbacks(info.l4t_major())) {
      fs::path dir = under(root, dir_s);
      if (!exists_file(dir / "available_frequencies")) continue;
      GpuDevfreq g;
      g.devfreq_dir = dir;
      auto dev = resolve_in_root(root, dir / "device");
      g.device_dir = dev.is_ok() ? *dev : dir.parent_path().parent_path();
      g.of_name = dir.filename().string();
      JS_ASSIGN_OR_RETURN(auto freqs, read_int_list(dir / "available_frequencies"));
      g.freqs_hz = sorted_unique(std::move(freqs));
      gpu = g;
      found = true;
      break;
    }
    if (!found) return gpu.status();
  }
  t.gpu = *gpu;
  t.gpu_hz = t.gpu.freqs_hz;

  EmcPaths emc = ops->emc_paths(root, info.l4t_major());
  JS_ASSIGN_OR_RETURN(t.emc_hz, read_emc_table_hz(emc));
  t.emc_table_source = emc.table;
  return t;
}

const FamilyOps* family_ops(Family family) {
  switch (family) {
    case Family::kT210: return &family_ops_t210();
    case Family::kT194: return &family_ops_t194();
    case Family::kT234: return &family_ops_t234();
    case Family::kUnknown: break;
  }
  return nullptr;
}

Result<Board> open_board(const fs::path& root) {
  Board b;
  b.root = root;
  JS_ASSIGN_OR_RETURN(b.info, detect_board(root));
  b.ops = family_ops(b.info.family);
  JS_ASSIGN_OR_RETURN(b.tables, read_frequency_tables(root, b.info));
  return b;
}

}  // namespace jetsweep::device
