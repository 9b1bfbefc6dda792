#include "agent/doctor.hpp"

#include <sys/statvfs.h>

#include <sstream>

#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/module_variants.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/board_telemetry.hpp"
#include "agent/trainer.hpp"

namespace jetsweep::agent {

namespace {

using device::fs::path;

constexpr uint64_t kMinJournalFreeBytes = 1ull << 30;   // a 15-hour run journals a few hundred MB

struct Checklist {
  std::vector<DoctorItem> items;
  void add(std::string name, std::string verdict, std::string detail) {
    items.push_back({std::move(name), std::move(verdict), std::move(detail)});
  }
};

// Every file of `files` writable, else the first that is not.
std::string first_unwritable(const std::vector<path>& files) {
  for (const auto& f : files)
    if (!device::exists_file(f) || !device::is_writable(f)) return f.string();
  return "";
}

// The GPU's power gating: part of every run's state, and what decides which named modes need a reboot.
void check_gpu_gating(Checklist& c, const path& root, const device::NvpmodelConf* conf, int l4t_major) {
  auto gating = device::read_board_gating(root, conf, l4t_major);
  if (!gating) {
    c.add("gpu gating", "fail", gating.status().message());
  } else if (gating->gating.empty()) {
    c.add("gpu gating", "warn", "no tpc_pg_mask or fbp_pg_mask under /sys/devices/gpu.0 or /sys/devices/platform/gpu.0: "
                                "runs record no GPU gating");
  } else {
    std::string reboot;
    if (conf) {
      for (const auto& m : conf->modes) {
        auto g = m.gating(conf->source);
        if (!g.is_ok()) continue;
        if (!g->applies_live_on(gating->gating)) reboot += (reboot.empty() ? "" : ", ") + m.name;
      }
    }
    c.add("gpu gating", "ok",
          gating->gating.to_string() + " in force (" + gating->tpc_source +
              (gating->fbp_source.empty() ? "" : ", " + gating->fbp_source) + ")" +
              (reboot.empty() ? "" : "; modes that need a reboot to apply: " + reboot));
  }
}

// The module variant (from its device-tree number) and whether the board's nvpmodel.conf holds NVIDIA's modes.
void check_variant(Checklist& c, const device::Board& board, const device::NvpmodelConf* conf) {
  const device::ModuleVariant* v = device::find_module_variant(board.info.module_part, conf);
  if (!v) {
    c.add("variant", "skip", "no table of NVIDIA's modes for module " + board.info.module_part);
    return;
  }
  if (!conf) {
    c.add("variant", "warn", v->name + " (" + board.info.module_part +
                                 "): nvpmodel.conf unreadable, so whether its modes are NVIDIA's is not known");
    return;
  }
  std::vector<std::string> issues;
  if (board.tables.cores != v->cores)
    issues.push_back(std::to_string(board.tables.cores) + " cores in sysfs, " + v->name + " has " + std::to_string(v->cores));
  for (auto& d : device::differences_from_nvidia(*conf, *v)) issues.push_back(std::move(d));
  const std::string what = v->name + " (" + board.info.module_part + ")";
  if (issues.empty())
    c.add("variant", "ok", what + ": its nvpmodel modes are NVIDIA's (" + v->source + ")");
  else
    c.add("variant", "warn", what + ": " + std::to_string(issues.size()) + " difference(s) from NVIDIA's " + v->source +
                                 ", first: " + issues.front() + " (named modes run as this board's file defines them)");
}

void check_board(Checklist& c, const DoctorOptions& o, const std::string& power_needs) {
  const path root = o.root;
  auto board = device::open_board(root);
  if (!board) {
    c.add("board", "fail", board.status().message());
    for (const char* n : {"debugfs", "cpufreq", "devfreq", "emc", "nvpmodel", "variant", "gpu gating", "power rails", "fan"})
      c.add(n, "skip", "no Jetson board under " + o.root);
    return;
  }
  const auto& info = board->info;
  c.add("board", "ok",
        std::string(device::module_name(info.module)) + " (" + std::string(device::family_name(info.family)) + "), L4T " +
            (info.l4t ? info.l4t->to_string() : std::string("unknown")) + ", kernel " + info.kernel);

  const path debug = device::under(root, "/sys/kernel/debug");
  const bool debugfs = !device::list_prefixed(debug, "").empty();
  c.add("debugfs", debugfs ? "ok" : "fail",
        debugfs ? debug.string() + " is mounted"
                : debug.string() + " is empty: mount it (mount -t debugfs none /sys/kernel/debug); the EMC clock lives there");

  std::vector<path> cpu_files;
  for (const auto& cl : board->tables.clusters) {
    cpu_files.push_back(cl.cpufreq_dir / "scaling_min_freq");
    cpu_files.push_back(cl.cpufreq_dir / "scaling_max_freq");
  }
  for (int cpu = 1; cpu < board->tables.cores; ++cpu)
    cpu_files.push_back(device::under(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online"));
  const std::string bad_cpu = first_unwritable(cpu_files);
  c.add("cpufreq", bad_cpu.empty() ? "ok" : "fail",
        bad_cpu.empty() ? std::to_string(board->tables.clusters.size()) + " clusters, " +
                              std::to_string(board->tables.cpu_khz.size()) + " frequencies, " +
                              std::to_string(board->tables.cores) + " cores: writable"
                        : bad_cpu + " is not writable" + (power_needs.empty() ? "" : " (" + power_needs + ")"));

  const path dev = board->tables.gpu.devfreq_dir;
  const std::string bad_gpu = first_unwritable({dev / "min_freq", dev / "max_freq"});
  c.add("devfreq", bad_gpu.empty() ? "ok" : "fail",
        bad_gpu.empty() ? dev.string() + " (" + board->tables.gpu.of_name + ", " +
                              std::to_string(board->tables.gpu_hz.size()) + " frequencies): writable"
                        : bad_gpu + " is not writable" + (power_needs.empty() ? "" : " (" + power_needs + ")"));

  const auto emc = board->ops->emc_paths(root, info.l4t_major());
  std::string bad_emc = first_unwritable({emc.lock, emc.rate});
  c.add("emc", bad_emc.empty() ? "ok" : "fail",
        bad_emc.empty() ? std::to_string(board->tables.emc_hz.size()) + " rates from " + board->tables.emc_table_source.string() +
                              "; lock and rate writable"
                        : bad_emc + " is not writable (debugfs, root only)");

  auto conf = device::read_nvpmodel_conf(root);
  if (!conf) {
    c.add("nvpmodel", "fail", conf.status().message());
  } else if (!conf->default_mode) {
    c.add("nvpmodel", "fail", conf->source + " has no PM_CONFIG DEFAULT: runs without a power mode have no reference state");
  } else {
    const device::NvpMode* def = conf->find(std::to_string(*conf->default_mode));
    c.add("nvpmodel", conf->warnings.empty() ? "ok" : "warn",
          std::to_string(conf->modes.size()) + " modes in " + conf->source + "; reference state: mode " +
              std::to_string(*conf->default_mode) + (def ? " " + def->name : std::string()) +
              (conf->warnings.empty() ? std::string()
                                      : "; " + std::to_string(conf->warnings.size()) + " line(s) not understood, first: " +
                                            conf->warnings.front()));
  }
  check_variant(c, *board, conf.is_ok() ? &*conf : nullptr);
  check_gpu_gating(c, root, conf.is_ok() ? &*conf : nullptr, board->info.l4t_major());

  const auto rails = device::discover_rails(root);
  if (rails.empty()) {
    c.add("power rails", "fail", "no INA3221 rail under " + device::under(root, "/sys/bus/i2c/drivers").string() +
                                     ": energy would be null");
  } else {
    std::string names;
    for (const auto& r : rails) names += (names.empty() ? "" : ", ") + r.name;
    c.add("power rails", "ok", std::string(rails.front().hwmon ? "ina3221 (hwmon driver, R35+)" : "ina3221x (IIO driver, R32)") +
                                   ": " + names);
  }

  auto fan = device::find_fan(root);
  if (!fan) {
    c.add("fan", "warn", "no pwm-fan control found: fan_max runs cannot set the fan");
  } else if (fan->legacy) {
    c.add("fan", "ok", std::string("pwm-fan (R32 target_pwm/temp_control)") + (fan->tach ? "; speed from " + fan->tach->string() : ""));
  } else {
    // R35+: nvfancontrol.service rewrites pwm1 while it runs (JETSON.md); PowerController stops it for fan_max.
    const bool nvfan = device::exists_file(device::under(root, "/etc/systemd/system/multi-user.target.wants/nvfancontrol.service"));
    c.add("fan", "ok",
          std::to_string(fan->pwm.size()) + " fan pwm file(s) (pwm-fan hwmon pwm1, f75308 pwmN)" +
              (fan->tach ? "; speed from " + fan->tach->string() : "; no tachometer found") +
              (nvfan ? "; nvfancontrol.service is enabled and overrides pwm1 while it runs: the agent stops it "
                       "(systemctl stop nvfancontrol) for runs that set fan_max and starts it again when it restores "
                       "the board; a run with fan_max fails, naming the command, when systemctl cannot reach systemd "
                       "(in a container: --systemctl, docs/DEPLOY.md)"
                     : ""));
  }
}

}  // namespace

bool DoctorReport::ready() const {
  for (const auto& i : items)
    if (i.verdict == "fail") return false;
  return true;
}

std::vector<std::string> DoctorReport::failures() const {
  std::vector<std::string> out;
  for (const auto& i : items)
    if (i.verdict == "fail") out.push_back(i.name + ": " + i.detail);
  return out;
}

boost::json::object DoctorReport::to_json() const {
  boost::json::object o;
  boost::json::array arr;
  for (const auto& i : items) {
    boost::json::object e;
    e["name"] = i.name;
    e["verdict"] = i.verdict;
    e["detail"] = i.detail;
    arr.emplace_back(std::move(e));
  }
  o["items"] = std::move(arr);
  o["ready"] = ready();
  return o;
}

std::string DoctorReport::to_text() const {
  std::ostringstream out;
  for (const auto& i : items) {
    std::string v = i.verdict;
    for (auto& ch : v) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out << "[" << v << "]" << std::string(v.size() < 4 ? 5 - v.size() : 1, ' ') << i.name << ": " << i.detail << "\n";
  }
  out << (ready() ? "ready\n" : "NOT READY: fix the items marked FAIL\n");
  return out.str();
}

DoctorReport run_doctor(const DoctorOptions& o) {
  Checklist c;
  const bool jetson = o.backend == "jetson";
  const std::string accelerator = o.accelerator.empty() ? (jetson ? "cuda" : "auto") : o.accelerator;
  if (jetson) {
    c.add("root", o.is_root ? "ok" : "fail",
          o.is_root ? "running as root" : "not root: power modes, clocks, the fan and drop_caches need root (run as root or via the systemd unit)");
    check_board(c, o, o.is_root ? "" : "needs root");
  } else {
    c.add("root", o.is_root ? "ok" : "skip",
          o.is_root ? "running as root" : "not root: drop_caches runs would fail (the " + o.backend + " backend sets no power mode)");
    c.add("board", "skip", "the " + o.backend + " backend drives no Jetson board");
  }

  const std::string device = cuda_device_name();
  if (!device.empty()) {
    c.add("cuda", "ok", "GPU " + device + " (LibTorch " + torch_version() + ", " + cuda_versions() + ")");
  } else {
    const std::string why = cuda_unavailable_reason();
    const bool needed = accelerator == "cuda";
    c.add("cuda", needed ? "fail" : "warn",
          why + (needed ? "; runs need CUDA (accelerator: cuda" + std::string(o.accelerator.empty() ? ", the jetson backend's default" : "") +
                              ") and would fail"
                        : "; runs train on the CPU (accelerator: auto records 'cpu')"));
  }
  c.add("libtorch", "ok", "LibTorch " + torch_version() + (device.empty() ? " (no CUDA in use)" : ", " + cuda_versions()));

  if (o.journal_dir.empty()) {
    c.add("journal", "skip", "no journal directory given (--journal-dir DIR)");
  } else {
    std::error_code ec;
    std::filesystem::create_directories(o.journal_dir, ec);
    struct statvfs st {};
    if (ec || !device::is_writable(o.journal_dir) || ::statvfs(o.journal_dir.c_str(), &st) != 0) {
      c.add("journal", "fail", o.journal_dir + " is not a writable directory" + (ec ? ": " + ec.message() : std::string()));
    } else {
      const uint64_t free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
      const std::string amount = std::to_string(free_bytes >> 20) + " MiB free";
      c.add("journal", free_bytes >= kMinJournalFreeBytes ? "ok" : "warn",
            o.journal_dir + " writable, " + amount + (free_bytes >= kMinJournalFreeBytes ? "" : " (under 1 GiB: long runs may fill it)"));
    }
  }
  return DoctorReport{std::move(c.items)};
}

}  // namespace jetsweep::agent
