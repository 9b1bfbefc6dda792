// Facts from NVIDIA's nvpmodel files of the L4T R35 era (nvpmodel_p3701_0000/0004, nvpmodel_p3767_0000/0001/
// 0003/0004.conf, public copies named in shared/reference/NVPMODEL.md), and the mode ids and names of JetPack
// 6.2's Orin Nano "Super" file (its masks and caps are not in our references: names and ids only).
#include "agent/device/module_variants.hpp"

#include "agent/device/fs_util.hpp"

namespace jetsweep::device {

namespace {

constexpr int64_t kMhz = 1000000;

VariantMode mode(int id, std::string name, int cores, std::optional<int64_t> tpc, std::optional<int64_t> fbp,
                 int64_t cpu_khz, int64_t gpu_hz, int64_t emc_hz) {
  VariantMode m;
  m.id = id;
  m.name = std::move(name);
  m.cores_online = cores;
  m.tpc_pg_mask = tpc;
  m.fbp_pg_mask = fbp;
  m.cpu_max_khz = cpu_khz;
  m.gpu_max_hz = gpu_hz;
  m.emc_max_hz = emc_hz;
  return m;
}

VariantMode named_only(int id, std::string name) {
  VariantMode m;
  m.id = id;
  m.name = std::move(name);
  m.settings_known = false;
  return m;
}

std::vector<ModuleVariant> build() {
  const std::optional<int64_t> none;
  const int64_t emc_2133 = 2133 * kMhz;
  std::vector<ModuleVariant> v;
  v.push_back({"AGX Orin 64GB", {"p3701-0000", "p3701-0005"}, Module::kAgxOrin, 12, 2, "nvpmodel_p3701_0000.conf",
               {mode(0, "MAXN", 12, 0, none, -1, -1, 0), mode(1, "MODE_15W", 4, 248, none, 1113600, 408 * kMhz, emc_2133),
                mode(2, "MODE_30W", 8, 240, none, 1728000, 612 * kMhz, 0),
                mode(3, "MODE_50W", 12, 0, none, 1497600, 816 * kMhz, 0)}});
  v.push_back({"AGX Orin 32GB", {"p3701-0004"}, Module::kAgxOrin, 8, 2, "nvpmodel_p3701_0004.conf",
               {mode(0, "MAXN", 8, 128, none, -1, -1, 0), mode(1, "MODE_15W", 4, 248, none, 1113600, 408 * kMhz, emc_2133),
                mode(2, "MODE_30W", 8, 240, none, 1728000, 612 * kMhz, 0),
                mode(3, "MODE_40W", 8, 128, none, 1497600, 816 * kMhz, 0)}});
  v.push_back({"Orin NX 16GB", {"p3767-0000"}, Module::kOrinNx, 8, 2, "nvpmodel_p3767_0000.conf",
               {mode(0, "MAXN", 8, 240, 2, -1, -1, 0), mode(1, "10W", 4, 252, 2, 1190400, 612 * kMhz, emc_2133),
                mode(2, "15W", 4, 252, 2, 1651200, 612 * kMhz, 0), mode(3, "25W", 8, 240, 2, 1497600, 408 * kMhz, 0)}});
  v.push_back({"Orin NX 8GB", {"p3767-0001"}, Module::kOrinNx, 6, 2, "nvpmodel_p3767_0001.conf",
               {mode(0, "MAXN", 6, 240, 2, -1, -1, 0), mode(1, "10W", 4, 252, 2, 1190400, 612 * kMhz, emc_2133),
                mode(2, "15W", 4, 252, 2, 1420800, 612 * kMhz, 0), mode(3, "20W", 6, 240, 2, 1497600, 408 * kMhz, 0)}});
  v.push_back({"Orin Nano 8GB", {"p3767-0003", "p3767-0005"}, Module::kOrinNano, 6, 0, "nvpmodel_p3767_0003.conf",
               {mode(0, "15W", 6, 240, 2, -1, -1, 0), mode(1, "7W", 4, 252, 2, 960000, 408 * kMhz, emc_2133)}});
  v.push_back({"Orin Nano 4GB", {"p3767-0004"}, Module::kOrinNano, 6, 0, "nvpmodel_p3767_0004.conf",
               {mode(0, "10W", 6, 252, 2, -1, -1, 0), mode(1, "7W_AI", 4, 252, 2, 806400, 408 * kMhz, emc_2133),
                mode(2, "7W_CPU", 4, 252, 2, 960000, 306 * kMhz, emc_2133)}});
  v.push_back({"Orin Nano 8GB Super (JetPack 6.2)", {"p3767-0003", "p3767-0005"}, Module::kOrinNano, 6, std::nullopt,
               "JetPack 6.2 Orin Nano Super nvpmodel file (mode ids and names only)",
               {named_only(0, "15W"), named_only(1, "25W"), named_only(2, "MAXN_SUPER"), named_only(3, "7W")}});
  return v;
}

std::string at(const NvpmodelConf& conf, int line) { return conf.source + ":" + std::to_string(line); }

// "-1" (no cap) or a number; nothing when the line is absent or not a number.
std::optional<int64_t> setting_value(const NvpMode& m, std::string_view param, std::string_view arg) {
  const NvpSetting* s = m.setting(param, arg);
  if (!s) return std::nullopt;
  return parse_int(s->value);
}

// One mode's differences from NVIDIA's.
void compare_mode(const NvpmodelConf& conf, const NvpMode& have, const VariantMode& want, const std::string& source,
                  std::vector<std::string>& out) {
  const std::string where = at(conf, have.line) + ": mode " + std::to_string(want.id) + " " + want.name + ": ";
  auto differ = [&](const std::string& what, const std::string& got, const std::string& nvidia) {
    out.push_back(where + what + " " + got + ", NVIDIA's " + source + " has " + nvidia);
  };
  auto show = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("none"); };
  if (have.name != want.name) differ("named", have.name, want.name);
  if (!want.settings_known) return;
  int cores = 0;
  for (const auto& s : have.settings)
    if (s.param == "CPU_ONLINE" && s.value == "1") ++cores;
  if (cores != want.cores_online) differ("cores online", std::to_string(cores), std::to_string(want.cores_online));
  auto gating = have.gating(conf.source);
  if (!gating.is_ok()) {
    out.push_back(gating.status().message());
  } else {
    if (gating->tpc_pg_mask != want.tpc_pg_mask) differ("TPC_PG_MASK", show(gating->tpc_pg_mask), show(want.tpc_pg_mask));
    if (gating->fbp_pg_mask != want.fbp_pg_mask) differ("FBP_PG_MASK", show(gating->fbp_pg_mask), show(want.fbp_pg_mask));
  }
  for (const auto& s : have.settings) {
    if (s.param.rfind("CPU_", 0) != 0 || s.param == "CPU_ONLINE" || s.arg != "MAX_FREQ") continue;
    if (parse_int(s.value) != want.cpu_max_khz)
      differ(s.param + " MAX_FREQ", s.value, std::to_string(want.cpu_max_khz));
  }
  const auto gpu = setting_value(have, "GPU", "MAX_FREQ");
  if (gpu.value_or(-1) != want.gpu_max_hz) differ("GPU MAX_FREQ", show(gpu), std::to_string(want.gpu_max_hz));
  const auto emc = setting_value(have, "EMC", "MAX_FREQ");
  if (emc.value_or(0) != want.emc_max_hz) differ("EMC MAX_FREQ", show(emc), std::to_string(want.emc_max_hz));
}

}  // namespace

const VariantMode* ModuleVariant::find(int id) const {
  for (const auto& m : modes)
    if (m.id == id) return &m;
  return nullptr;
}

const std::vector<ModuleVariant>& module_variants() {
  static const std::vector<ModuleVariant> kVariants = build();
  return kVariants;
}

const ModuleVariant* find_module_variant(std::string_view module_part, const NvpmodelConf* conf) {
  // A Super file on a module whose Super modes are not in the table has no variant here (rather than being
  // compared with the R35 file and reported as differing from NVIDIA's own).
  const bool super = conf && conf->find("MAXN_SUPER") != nullptr;
  for (const auto& v : module_variants()) {
    bool has_part = false;
    for (const auto& p : v.parts) has_part = has_part || p == module_part;
    if (has_part && (v.name.find("Super") != std::string::npos) == super) return &v;
  }
  return nullptr;
}

std::vector<std::string> differences_from_nvidia(const NvpmodelConf& conf, const ModuleVariant& variant) {
  std::vector<std::string> out;
  for (const auto& want : variant.modes) {
    const NvpMode* have = nullptr;
    for (const auto& m : conf.modes)
      if (m.id == want.id) have = &m;
    if (!have) {
      out.push_back(conf.source + ": no mode " + std::to_string(want.id) + " (" + want.name + "), which NVIDIA's " +
                    variant.source + " defines");
      continue;
    }
    compare_mode(conf, *have, want, variant.source, out);
  }
  if (variant.default_mode && conf.default_mode != variant.default_mode)
    out.push_back(conf.source + ": default mode " + (conf.default_mode ? std::to_string(*conf.default_mode) : "none") +
                  ", NVIDIA's " + variant.source + " has " + std::to_string(*variant.default_mode));
  return out;
}

}  // namespace jetsweep::device
