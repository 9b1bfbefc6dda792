#include "agent/device/device_cli.hpp"

#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <boost/json.hpp>

#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/service_control.hpp"
#include "agent/device/telemetry.hpp"

namespace jetsweep::device {

namespace {

namespace json = boost::json;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Parsed "--flag value", "--flag=value" and boolean "--flag" arguments.
struct ParsedArgs {
  std::map<std::string, std::string> values;
  std::set<std::string> switches;
};

// Returns an error message naming the offending flag, or nothing.
std::optional<std::string> parse_args(const std::string& cmd, const std::vector<std::string>& args,
                                      const std::set<std::string>& value_flags, const std::set<std::string>& bool_flags,
                                      ParsedArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::optional<std::string> inline_value;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    if (value_flags.count(a)) {
      if (out->values.count(a)) return "flag " + a + " given twice";
      if (inline_value) {
        out->values[a] = *inline_value;
      } else {
        if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) return "flag " + a + " needs a value";
        out->values[a] = args[++i];
      }
      if (out->values[a].empty()) return "flag " + a + " needs a non-empty value";
    } else if (bool_flags.count(a)) {
      if (inline_value) return "flag " + a + " takes no value";
      out->switches.insert(a);
    } else if (a.rfind("--", 0) == 0) {
      return "unknown flag " + a + " for '" + cmd + "'";
    } else {
      return "unexpected argument '" + a + "' for '" + cmd + "'";
    }
  }
  return std::nullopt;
}

std::string usage() {
  return "usage:\n"
         "  probe    [--root DIR] [--json]\n"
         "  set-mode [--root DIR] [--state-dir DIR] (--mode NAME | --cores N --cpu-khz F --gpu-hz F --emc-hz F)\n"
         "           [--pin-clocks] [--fan-max] [--systemctl PATH]\n"
         "  restore  [--root DIR] [--state-dir DIR] [--systemctl PATH]\n"
         "  --systemctl PATH: the systemctl that stops nvfancontrol for --fan-max on L4T R35+ and starts it\n"
         "           again on restore (default: systemctl from PATH)\n";
}

json::array to_array(const std::vector<int64_t>& v) {
  json::array a;
  for (auto x : v) a.push_back(x);
  return a;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

int run_probe(const ParsedArgs& a, std::ostream& out, std::ostream& err) {
  fs::path root = a.values.count("--root") ? fs::path(a.values.at("--root")) : fs::path("/");
  bool as_json = a.switches.count("--json") > 0;
  json::object o;
  json::array errors;
  o["root"] = root.string();

  auto info = detect_board(root);
  if (!info.is_ok()) {
    errors.push_back(json::value(info.status().to_string()));
    o["errors"] = std::move(errors);
    if (as_json) out << json::serialize(o) << "\n";
    err << "probe: " << info.status().to_string() << "\n";
    return kExitFailed;
  }
  const BoardInfo& bi = *info;
  o["family"] = std::string(family_name(bi.family));
  o["module"] = std::string(module_name(bi.module));
  o["module_part"] = bi.module_part;
  o["carrier_part"] = bi.carrier_part;
  o["model"] = bi.model;
  json::array compat;
  for (const auto& c : bi.compatible) compat.push_back(json::value(c));
  o["compatible"] = std::move(compat);
  o["family_source"] = bi.family_source;
  o["module_source"] = bi.module_source;
  o["l4t"] = bi.l4t ? json::value(bi.l4t->to_string()) : json::value(nullptr);
  o["l4t_raw"] = bi.l4t ? json::value(bi.l4t->raw) : json::value(nullptr);
  o["kernel"] = bi.kernel;
  o["nvpmodel_conf_fnv1a64"] = bi.nvpmodel_conf_fnv1a64;
  o["nvpmodel_mode"] = bi.nvpmodel_mode ? json::value(*bi.nvpmodel_mode) : json::value(nullptr);

  auto tables = read_frequency_tables(root, bi);
  if (tables.is_ok()) {
    const FrequencyTables& t = *tables;
    o["cores"] = t.cores;
    json::array clusters;
    for (const auto& c : t.clusters) {
      json::array cpus;
      for (int cpu : c.cpus) cpus.push_back(cpu);
      clusters.push_back(json::object{{"cpus", std::move(cpus)},
                                      {"cpufreq_dir", c.cpufreq_dir.string()},
                                      {"freqs_khz", to_array(c.freqs_khz)}});
    }
    o["cpu_clusters"] = std::move(clusters);
    o["cpu_freqs_khz"] = to_array(t.cpu_khz);
    o["gpu"] = json::object{{"devfreq_dir", t.gpu.devfreq_dir.string()},
                            {"device_dir", t.gpu.device_dir.string()},
                            {"of_name", t.gpu.of_name}};
    o["gpu_freqs_hz"] = to_array(t.gpu_hz);
    o["emc_freqs_hz"] = to_array(t.emc_hz);
    o["emc_table_source"] = t.emc_table_source.string();
    o["power_mode_count"] = t.mode_count();
  } else {
    errors.push_back(json::value(tables.status().to_string()));
  }

  auto conf = read_nvpmodel_conf(root);
  json::array modes;
  if (conf.is_ok()) {
    for (const auto& m : conf->modes) modes.push_back(json::object{{"id", m.id}, {"name", m.name}});
    o["nvpmodel_default"] = conf->default_mode ? json::value(*conf->default_mode) : json::value(nullptr);
  } else {
    o["nvpmodel_default"] = nullptr;
    errors.push_back(json::value(conf.status().to_string()));
  }
  o["nvpmodel_modes"] = std::move(modes);

  auto reader = TelemetryReader::open(root, bi);
  BoardSample sample;
  if (reader.is_ok()) {
    sample = reader->read();
    json::object tel = to_json(sample);
    o["rails"] = tel["rails"];
    o["total_power_w"] = tel["total_power_w"];
    o["total_power_rule"] = sample.total_power_rule;
    o["telemetry"] = std::move(tel);
  } else {
    errors.push_back(json::value(reader.status().to_string()));
  }

  // What this process may write.
  json::object writable;
  auto add_w = [&](const fs::path& p) {
    if (exists_file(p)) writable[p.string()] = is_writable(p);
  };
  if (tables.is_ok()) {
    const FrequencyTables& t = *tables;
    for (int cpu = 1; cpu < t.cores; ++cpu) add_w(under(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online"));
    for (const auto& c : t.clusters) {
      add_w(c.cpufreq_dir / "scaling_min_freq");
      add_w(c.cpufreq_dir / "scaling_max_freq");
    }
    add_w(t.gpu.devfreq_dir / "min_freq");
    add_w(t.gpu.devfreq_dir / "max_freq");
    add_w(t.gpu.device_dir / "railgate_enable");
  }
  if (const FamilyOps* ops = family_ops(bi.family)) {
    EmcPaths e = ops->emc_paths(root, bi.l4t_major());
    add_w(e.lock);
    add_w(e.rate);
    if (e.cap) add_w(*e.cap);
  }
  if (auto fan = find_fan(root)) {
    if (fan->legacy) {
      add_w(fan->temp_control);
      add_w(fan->target_pwm);
    }
    for (const auto& p : fan->pwm) add_w(p);
  }
  add_w(under(root, "/proc/sys/vm/drop_caches"));
  o["writable"] = std::move(writable);
  int rc = errors.empty() ? kExitOk : kExitFailed;
  o["errors"] = std::move(errors);

  if (as_json) {
    out << json::serialize(o) << "\n";
  } else {
    out << "board: " << module_name(bi.module) << " (" << family_name(bi.family) << ", " << bi.module_part << ")\n";
    out << "l4t: " << (bi.l4t ? bi.l4t->to_string() : "unknown") << "  kernel: " << bi.kernel << "\n";
    if (tables.is_ok()) {
      const FrequencyTables& t = *tables;
      out << "cores: " << t.cores << "\n";
      for (const auto& c : t.clusters) {
        out << "cpu cluster " << c.cpus.front() << "-" << c.cpus.back() << " (" << c.freqs_khz.size()
            << " kHz): " << join(c.freqs_khz) << "\n";
      }
      out << "gpu " << t.gpu.of_name << " (" << t.gpu_hz.size() << " Hz): " << join(t.gpu_hz) << "\n";
      out << "emc (" << t.emc_hz.size() << " Hz): " << join(t.emc_hz) << "\n";
      out << "power modes: " << t.cores << " x " << t.cpu_khz.size() << " x " << t.gpu_hz.size() << " x "
          << t.emc_hz.size() << " = " << t.mode_count() << "\n";
    }
    if (conf.is_ok()) {
      out << "nvpmodel modes:";
      for (const auto& m : conf->modes) out << " " << m.id << "=" << m.name;
      if (conf->default_mode) out << " (default " << *conf->default_mode << ")";
      out << "\n";
    }
    for (const auto& r : sample.rails) {
      out << "rail " << r.name << ": " << (r.power_mw ? std::to_string(*r.power_mw) : std::string("?")) << " mW\n";
    }
    if (sample.total_power_w) out << "total power: " << *sample.total_power_w << " W (" << sample.total_power_rule << ")\n";
    for (const auto& [path, w] : o["writable"].as_object()) {
      out << (w.as_bool() ? "writable: " : "read-only: ") << std::string(path) << "\n";
    }
    for (const auto& e : o["errors"].as_array()) err << "probe: " << e.as_string().c_str() << "\n";
  }
  return rc;
}

std::optional<std::string> int_flag(const ParsedArgs& a, const std::string& flag, int64_t* v) {
  auto parsed = parse_int(a.values.at(flag));
  if (!parsed) return "flag " + flag + " expects an integer, got '" + a.values.at(flag) + "'";
  *v = *parsed;
  return std::nullopt;
}

std::string systemctl_of(const ParsedArgs& a) {
  return a.values.count("--systemctl") ? a.values.at("--systemctl") : std::string("systemctl");
}

int run_set_mode(const ParsedArgs& a, std::ostream& out, std::ostream& err) {
  fs::path root = a.values.count("--root") ? fs::path(a.values.at("--root")) : fs::path("/");
  fs::path state_dir = a.values.count("--state-dir") ? fs::path(a.values.at("--state-dir")) : fs::path(kDefaultStateDir);
  const std::vector<std::string> explicit_flags = {"--cores", "--cpu-khz", "--gpu-hz", "--emc-hz"};
  std::vector<std::string> given, missing;
  for (const auto& f : explicit_flags) (a.values.count(f) ? given : missing).push_back(f);
  bool named = a.values.count("--mode") > 0;
  if (named && !given.empty()) {
    err << "set-mode: flag --mode cannot be combined with " << given.front() << "\n";
    return kExitUsage;
  }
  if (!named && given.empty()) {
    err << "set-mode: needs --mode NAME or --cores, --cpu-khz, --gpu-hz and --emc-hz\n" << usage();
    return kExitUsage;
  }
  if (!named && !missing.empty()) {
    err << "set-mode: flag " << missing.front() << " is missing (--cores, --cpu-khz, --gpu-hz and --emc-hz go together)\n";
    return kExitUsage;
  }
  PowerMode mode;
  if (!named) {
    int64_t v[4];
    for (size_t i = 0; i < 4; ++i) {
      if (auto e = int_flag(a, explicit_flags[i], &v[i])) {
        err << "set-mode: " << *e << "\n";
        return kExitUsage;
      }
    }
    if (v[0] < 1 || v[0] > 1024) {
      err << "set-mode: flag --cores expects a count of CPUs >= 1, got " << v[0] << "\n";
      return kExitUsage;
    }
    mode = PowerMode{static_cast<int>(v[0]), v[1], v[2], v[3]};
  }
  ApplyOptions opts;
  opts.pin_clocks = a.switches.count("--pin-clocks") > 0;
  opts.fan_max = a.switches.count("--fan-max") > 0;

  auto board = open_board(root);
  if (!board.is_ok()) {
    err << "set-mode: " << board.status().to_string() << "\n";
    return kExitFailed;
  }
  PowerController ctl(std::move(board).value(), state_dir, std::make_shared<SystemctlServiceControl>(systemctl_of(a)));
  Status s = named ? ctl.apply_named(a.values.at("--mode"), opts) : ctl.apply(mode, opts);
  if (!s.is_ok()) {
    err << "set-mode: " << s.to_string() << "\n";
    if (exists_file(restore_state_path(state_dir))) {
      err << "set-mode: originals are recorded in " << restore_state_path(state_dir).string()
          << "; run 'restore' to put the board back\n";
    }
    return s.code() == Code::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  for (const auto& [path, value] : ctl.last_writes()) out << path.string() << " = " << value << "\n";
  out << "set-mode: " << (named ? "nvpmodel mode " + a.values.at("--mode") : mode.to_string()) << " applied ("
      << ctl.last_writes().size() << " writes); originals in " << restore_state_path(state_dir).string() << "\n";
  return kExitOk;
}

int run_restore(const ParsedArgs& a, std::ostream& out, std::ostream& err) {
  fs::path state_dir = a.values.count("--state-dir") ? fs::path(a.values.at("--state-dir")) : fs::path(kDefaultStateDir);
  if (a.values.count("--root")) {
    auto st = load_restore_state(state_dir);
    if (st.is_ok() && normalized_root(st->root) != normalized_root(a.values.at("--root"))) {
      err << "restore: flag --root " << a.values.at("--root") << " does not match the root " << st->root.string()
          << " recorded in " << restore_state_path(state_dir).string() << "\n";
      return kExitUsage;
    }
  }
  SystemctlServiceControl services(systemctl_of(a));
  auto r = restore_pending(state_dir, nullptr, &services);
  if (!r.is_ok()) {
    err << "restore: " << r.status().to_string() << "\n";
    return kExitFailed;
  }
  out << (*r ? "restore: board settings restored from " : "restore: nothing to restore at ")
      << restore_state_path(state_dir).string() << "\n";
  return kExitOk;
}

}  // namespace

int device_cli_main(const std::string& subcommand, const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err) {
  try {
    ParsedArgs parsed;
    std::optional<std::string> bad;
    if (subcommand == "probe") {
      bad = parse_args(subcommand, args, {"--root"}, {"--json"}, &parsed);
      if (!bad) return run_probe(parsed, out, err);
    } else if (subcommand == "set-mode") {
      bad = parse_args(subcommand, args, {"--root", "--state-dir", "--mode", "--cores", "--cpu-khz", "--gpu-hz", "--emc-hz",
                                          "--systemctl"},
                       {"--pin-clocks", "--fan-max"}, &parsed);
      if (!bad) return run_set_mode(parsed, out, err);
    } else if (subcommand == "restore") {
      bad = parse_args(subcommand, args, {"--root", "--state-dir", "--systemctl"}, {}, &parsed);
      if (!bad) return run_restore(parsed, out, err);
    } else {
      err << "unknown device subcommand '" << subcommand << "'\n" << usage();
      return kExitUsage;
    }
    err << subcommand << ": " << *bad << "\n" << usage();
    return kExitUsage;
  } catch (const std::exception& e) {
    err << subcommand << ": internal error: " << e.what() << "\n";
    return kExitFailed;
  } catch (...) {
    err << subcommand << ": internal error (unknown exception)\n";
    return kExitFailed;
  }
}

}  // namespace jetsweep::device
