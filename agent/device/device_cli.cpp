#include "agent/device/device_cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <boost/json.hpp>

#include "agent/device/board.hpp"
#include "agent/device/fs_util.hpp"
#include "agent/device/module_variants.hpp"
#include "agent/device/nvpmodel.hpp"
#include "agent/device/power_control.hpp"
#include "agent/device/restore_state.hpp"
#include "agent/device/service_control.hpp"
#include "agent/device/board_telemetry.hpp"

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

// One device subcommand's flags, declared once for parsing and for the generated help.
struct CommandSpec {
  const char* name;
  const char* description;
  std::vector<std::pair<const char*, const char*>> value_flags;   // flag, help
  std::vector<std::pair<const char*, const char*>> bool_flags;
};

const std::vector<CommandSpec>& command_specs() {
  static const char* kRoot = "the board's filesystem root (default /)";
  static const char* kStateDir = "where original settings are recorded (default /var/lib/jetsweep)";
  static const char* kSystemctl =
      "the systemctl that stops nvfancontrol for --fan-max on L4T R35+ and starts it again on restore (default: "
      "systemctl from PATH)";
  static const std::vector<CommandSpec> specs = {
      {"probe", "what the board is, its frequency tables, power modes, rails and writable files",
       {{"--root", kRoot}},
       {{"--json", "one JSON object instead of text"}}},
      {"set-mode", "applies a power mode: --mode NAME, or --cores, --cpu-khz, --gpu-hz and --emc-hz together",
       {{"--root", kRoot}, {"--state-dir", kStateDir}, {"--mode", "an nvpmodel mode, by name or id"},
        {"--cores", "CPUs online"}, {"--cpu-khz", "CPU clock"}, {"--gpu-hz", "GPU clock"}, {"--emc-hz", "EMC clock"},
        {"--systemctl", kSystemctl}},
       {{"--pin-clocks", "min = max for every clock"}, {"--fan-max", "the fan at full speed"}}},
      {"restore", "puts back every setting recorded in the state directory",
       {{"--root", kRoot}, {"--state-dir", kStateDir}, {"--systemctl", kSystemctl}},
       {}},
  };
  return specs;
}

// The CLI11 parser of `spec`, filling `out`.
std::unique_ptr<CLI::App> make_app(const CommandSpec& spec, ParsedArgs* out) {
  auto app = std::make_unique<CLI::App>(spec.description, std::string("jetsweep-agent ") + spec.name);
  for (const auto& [flag, help] : spec.value_flags) {
    const std::string f = flag;
    app->add_option_function<std::string>(f, [out, f](const std::string& v) { out->values[f] = v; }, help)
        ->type_name("VALUE");
  }
  for (const auto& [flag, help] : spec.bool_flags) {
    const std::string f = flag;
    app->add_flag_callback(f, [out, f] { out->switches.insert(f); }, help)->disable_flag_override();
  }
  return app;
}

// CLI11's parse errors, naming the offending flag.
std::string parse_error(const CLI::ParseError& e) {
  const std::string what = e.what();
  // "json was given a disallowed flag override": a value given to a flag that takes none.
  if (what.find("disallowed flag override") != std::string::npos)
    return "flag --" + what.substr(0, what.find(' ')) + " takes no value";
  return what;
}

// Parses `args` of subcommand `spec`. Returns an error message naming the offending flag, or nothing; sets
// *help when --help was asked for.
std::optional<std::string> parse_args(const CommandSpec& spec, const std::vector<std::string>& args, ParsedArgs* out,
                                      std::string* help) {
  auto app = make_app(spec, out);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    *help = app->help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return parse_error(e);
  }
  for (const auto& [flag, value] : out->values)
    if (value.empty()) return "flag " + flag + " needs a non-empty value";
  return std::nullopt;
}

std::string usage() {
  std::string text;
  ParsedArgs unused;
  for (const auto& spec : command_specs()) text += make_app(spec, &unused)->help() + "\n";
  return text;
}

json::array to_array(const std::vector<int64_t>& v) {
  json::array a;
  for (auto x : v) a.push_back(x);
  return a;
}

std::string join_numbers(const std::vector<int64_t>& v) {
  return join(v, " ", [](int64_t x) { return std::to_string(x); });
}

json::object describe_board(const BoardInfo& bi) {
  json::object o;
  o["family"] = std::string(family_name(bi.family));
  o["module"] = std::string(module_name(bi.module));
  o["module_part"] = bi.module_part;
  o["variant"] = bi.variant;
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
  o["nvpmodel_fan_mode"] = bi.nvpmodel_fan_mode;
  return o;
}

void describe_tables(const FrequencyTables& t, json::object& o) {
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
}

// What this process may write: path -> writable, for the files set-mode and restore write.
json::object writable_files(const fs::path& root, const BoardInfo& bi, const Result<FrequencyTables>& tables) {
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
  return writable;
}

// What probe found, for the text output.
struct ProbeFindings {
  const BoardInfo& board;
  const Result<FrequencyTables>& tables;
  const Result<NvpmodelConf>& conf;
  const BoardSample& sample;
};

void print_probe(const ProbeFindings& f, const json::object& o, std::ostream& out, std::ostream& err) {
  const BoardInfo& bi = f.board;
  out << "board: " << module_name(bi.module) << " (" << family_name(bi.family) << ", " << bi.module_part << ")\n";
  out << "l4t: " << (bi.l4t ? bi.l4t->to_string() : "unknown") << "  kernel: " << bi.kernel << "\n";
  if (f.tables.is_ok()) {
    const FrequencyTables& t = *f.tables;
    out << "cores: " << t.cores << "\n";
    for (const auto& c : t.clusters) {
      out << "cpu cluster " << c.cpus.front() << "-" << c.cpus.back() << " (" << c.freqs_khz.size()
          << " kHz): " << join_numbers(c.freqs_khz) << "\n";
    }
    out << "gpu " << t.gpu.of_name << " (" << t.gpu_hz.size() << " Hz): " << join_numbers(t.gpu_hz) << "\n";
    out << "emc (" << t.emc_hz.size() << " Hz): " << join_numbers(t.emc_hz) << "\n";
    out << "power modes: " << t.cores << " x " << t.cpu_khz.size() << " x " << t.gpu_hz.size() << " x "
        << t.emc_hz.size() << " = " << t.mode_count() << "\n";
  }
  if (const auto* v = o.if_contains("nvidia_variant"); v && v->is_object()) {
    const auto& vo = v->as_object();
    out << "variant: " << vo.at("name").as_string().c_str();
    if (!vo.at("differences").is_array()) {
      out << " (nvpmodel.conf unreadable: not compared with NVIDIA's " << vo.at("source").as_string().c_str() << ")\n";
    } else {
      const auto& diffs = vo.at("differences").as_array();
      out << " (" << (diffs.empty() ? "modes as NVIDIA's " : std::to_string(diffs.size()) + " difference(s) from NVIDIA's ")
          << vo.at("source").as_string().c_str() << ")\n";
      for (const auto& d : diffs) out << "  " << d.as_string().c_str() << "\n";
    }
  }
  if (f.conf.is_ok()) {
    out << "nvpmodel modes:";
    for (const auto& m : f.conf->modes) out << " " << m.id << "=" << m.name;
    if (f.conf->default_mode) out << " (default " << *f.conf->default_mode << ")";
    out << "\n";
    if (bi.nvpmodel_mode) {
      out << "nvpmodel status: mode " << *bi.nvpmodel_mode
          << (bi.nvpmodel_fan_mode.empty() ? "" : ", fan mode " + bi.nvpmodel_fan_mode) << "\n";
    }
    for (const auto& m : o.at("nvpmodel_modes").as_array()) {
      const auto& mo = m.as_object();
      if (mo.if_contains("needs_reboot") && mo.at("needs_reboot").as_bool())
        out << "mode " << mo.at("name").as_string().c_str() << " gates the GPU differently: needs nvpmodel -m "
            << mo.at("id").as_int64() << " and a reboot\n";
    }
  }
  const auto& g = o.at("gpu_gating").as_object();
  auto show = [&](const char* key) {
    return g.if_contains(key) && !g.at(key).is_null() ? std::to_string(g.at(key).as_int64()) : std::string("none");
  };
  out << "gpu gating: tpc_pg_mask " << show("tpc_pg_mask") << ", fbp_pg_mask " << show("fbp_pg_mask") << "\n";
  for (const auto& r : f.sample.rails) {
    out << "rail " << r.name << ": " << (r.power_mw ? std::to_string(*r.power_mw) : std::string("?")) << " mW\n";
  }
  if (f.sample.total_power_w)
    out << "total power: " << *f.sample.total_power_w << " W (" << f.sample.total_power_rule << ")\n";
  for (const auto& [path, w] : o.at("writable").as_object()) {
    out << (w.as_bool() ? "writable: " : "read-only: ") << std::string(path) << "\n";
  }
  for (const auto& e : o.at("errors").as_array()) err << "probe: " << e.as_string().c_str() << "\n";
}

int run_probe(const ParsedArgs& a, std::ostream& out, std::ostream& err) {
  fs::path root = a.values.count("--root") ? fs::path(a.values.at("--root")) : fs::path("/");
  bool as_json = a.switches.count("--json") > 0;
  json::array errors;
  auto info = detect_board(root);
  if (!info.is_ok()) {
    json::object o;
    o["root"] = root.string();
    errors.push_back(json::value(info.status().to_string()));
    o["errors"] = std::move(errors);
    if (as_json) out << json::serialize(o) << "\n";
    err << "probe: " << info.status().to_string() << "\n";
    return kExitFailed;
  }
  const BoardInfo& bi = *info;
  json::object o{{"root", root.string()}};
  for (auto& [key, value] : describe_board(bi)) o[key] = value;

  auto tables = read_frequency_tables(root, bi);
  if (tables.is_ok()) describe_tables(*tables, o);
  else errors.push_back(json::value(tables.status().to_string()));

  auto conf = read_nvpmodel_conf(root);
  json::array modes;
  if (conf.is_ok()) {
    for (const auto& m : conf->modes) modes.push_back(json::object{{"id", m.id}, {"name", m.name}});
    o["nvpmodel_default"] = conf->default_mode ? json::value(*conf->default_mode) : json::value(nullptr);
    // Lines the parser could not place (file:line and the line): named, never silently dropped.
    json::array skipped;
    for (const auto& w : conf->warnings) skipped.push_back(json::value(w));
    o["nvpmodel_skipped_lines"] = std::move(skipped);
  } else {
    o["nvpmodel_default"] = nullptr;
    errors.push_back(json::value(conf.status().to_string()));
  }
  o["nvpmodel_modes"] = std::move(modes);
  // NVIDIA's variant of this module and where the board's conf differs from NVIDIA's file for it.
  if (const ModuleVariant* v = find_module_variant(bi.module_part, conf.is_ok() ? &*conf : nullptr)) {
    // differences: null when the board's conf could not be read (not known), [] when its modes are NVIDIA's.
    json::value diffs = nullptr;
    if (conf.is_ok()) {
      json::array list;
      for (const auto& d : differences_from_nvidia(*conf, *v)) list.push_back(json::value(d));
      diffs = std::move(list);
    }
    o["nvidia_variant"] = json::object{{"name", v->name}, {"source", v->source}, {"cores", v->cores},
                                       {"default_mode", v->default_mode ? json::value(*v->default_mode) : nullptr},
                                       {"differences", std::move(diffs)}};
  } else {
    o["nvidia_variant"] = nullptr;
  }
  // The GPU's power gating as the board runs it, and each mode's: a mode with other masks needs a reboot.
  auto gating = read_board_gating(root, conf.is_ok() ? &*conf : nullptr, bi.l4t_major());
  json::object gpu_gating;
  auto mask = [](const std::optional<int64_t>& m) { return m ? json::value(*m) : json::value(nullptr); };
  if (gating.is_ok()) {
    gpu_gating["tpc_pg_mask"] = mask(gating->gating.tpc_pg_mask);
    gpu_gating["fbp_pg_mask"] = mask(gating->gating.fbp_pg_mask);
    gpu_gating["tpc_source"] = gating->tpc_source;
    gpu_gating["fbp_source"] = gating->fbp_source;
  } else {
    errors.push_back(json::value(gating.status().to_string()));
  }
  o["gpu_gating"] = std::move(gpu_gating);
  if (conf.is_ok()) {
    auto& arr = o["nvpmodel_modes"].as_array();
    for (size_t i = 0; i < conf->modes.size(); ++i) {
      auto g = conf->modes[i].gating(conf->source);
      if (!g.is_ok()) {
        errors.push_back(json::value(g.status().to_string()));
        continue;
      }
      arr[i].as_object()["tpc_pg_mask"] = mask(g->tpc_pg_mask);
      arr[i].as_object()["fbp_pg_mask"] = mask(g->fbp_pg_mask);
      // Appliable live only when every mask it sets is the board's (unknown board masks: not appliable).
      arr[i].as_object()["needs_reboot"] = !(gating.is_ok() && g->applies_live_on(gating->gating));
    }
  }

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
  o["writable"] = writable_files(root, bi, tables);
  const int rc = errors.empty() ? kExitOk : kExitFailed;
  o["errors"] = std::move(errors);
  if (as_json) out << json::serialize(o) << "\n";
  else print_probe(ProbeFindings{bi, tables, conf, sample}, o, out, err);
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
    const auto& specs = command_specs();
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const CommandSpec& c) { return subcommand == c.name; });
    if (spec == specs.end()) {
      err << "unknown device subcommand '" << subcommand << "'\n" << usage();
      return kExitUsage;
    }
    ParsedArgs parsed;
    std::string help;
    if (auto bad = parse_args(*spec, args, &parsed, &help)) {
      err << subcommand << ": " << *bad << "\n" << usage();
      return kExitUsage;
    }
    if (!help.empty()) {
      out << help;
      return kExitOk;
    }
    if (subcommand == "probe") return run_probe(parsed, out, err);
    if (subcommand == "set-mode") return run_set_mode(parsed, out, err);
    return run_restore(parsed, out, err);
  } catch (const std::exception& e) {
    err << subcommand << ": internal error: " << e.what() << "\n";
    return kExitFailed;
  } catch (...) {
    err << subcommand << ": internal error (unknown exception)\n";
    return kExitFailed;
  }
}

}  // namespace jetsweep::device
