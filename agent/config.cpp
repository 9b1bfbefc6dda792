// Flags are declared with CLI11 (the one flag library of every binary; generated help) and collected as text,
// then checked here so that every error names the flag and quotes the value as before.
#include "agent/config.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "agent/storage/storage_map.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"
#include "net/secret_file.hpp"

namespace jetsweep::agent {

namespace {

using Mode = AgentConfig::Mode;

// What CLI11 collected before it is checked: numbers keep their text so that errors can quote it.
struct RawFlags {
  std::string time_scale, idle_restore_s, sim, backend, reboot_timeout_s;
  std::string minibatches, settle_window, settle_pct;
  std::string samples, seed, classes, image_size;
  std::string outbox_memory_mb, journal_max_mb;
  CLI::Option* backend_opt = nullptr;
  CLI::Option* systemctl_opt = nullptr;
  CLI::Option* nvpmodel_opt = nullptr;
  CLI::Option* reboot_command_opt = nullptr;
  CLI::Option* journal_dir_opt = nullptr;
  CLI::Option* enroll_secret_opt = nullptr;
  CLI::Option* enroll_secret_file_opt = nullptr;
  CLI::Option* ca_opt = nullptr;
};

CLI::Option* text_option(CLI::App& app, const std::string& name, std::string& into, const std::string& help,
                         const std::string& type = "TEXT") {
  return app.add_option(name, into, help)->type_name(type)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// Options of every mode that talks to a board: serve, run, profile, doctor.
void add_board_options(CLI::App& app, AgentConfig& c, RawFlags& raw) {
  text_option(app, "--root", c.root, "procfs/sysfs root (default /; fake board trees in tests)", "DIR");
  raw.backend_opt = text_option(app, "--backend", raw.backend, "host (default: LibTorch on this machine), jetson or sim",
                                "host|jetson|sim");
  text_option(app, "--sim", raw.sim,
              "a simulated board (nano, xavier-nx, agx-xavier, agx-orin, orin-nano; docs/SIMULATION.md)",
              "CLASS[/INSTANCE]");
  text_option(app, "--time-scale", raw.time_scale, "sim: wait F x the modelled time (default 1; 0 = no waiting)", "F");
  text_option(app, "--state-dir", c.state_dir, "jetson: where board settings are recorded (default /var/lib/jetsweep)",
              "DIR");
  text_option(app, "--idle-restore-s", raw.idle_restore_s, "jetson: restore the board after N s idle (600; 0 = never)",
              "N");
  raw.systemctl_opt = text_option(app, "--systemctl", c.systemctl,
                                  "jetson: 'PATH is-active|stop|start nvfancontrol' around fan_max runs on L4T R35+ "
                                  "(default: systemctl)",
                                  "PATH");
  app.add_flag("--allow-reboot", c.allow_reboot,
               "jetson, sim: reboot the board for a run whose nvpmodel mode has other GPU masks than the board "
               "booted with, as nvpmodel does (sim: a modelled reboot; off: such runs fail, naming the reboot they "
               "need; docs/DEPLOY.md)");
  raw.nvpmodel_opt = text_option(app, "--nvpmodel-command", c.nvpmodel_command,
                                 "jetson, --allow-reboot: 'CMD -m ID' sets the mode for the next boot (default nvpmodel)",
                                 "CMD");
  raw.reboot_command_opt = text_option(app, "--reboot-command", c.reboot_command,
                                       "jetson, --allow-reboot: reboots the board (default 'systemctl reboot')", "CMD");
  text_option(app, "--reboot-timeout-s", raw.reboot_timeout_s,
              "--allow-reboot: the controller holds the run and board this long for the agent to come back "
              "(default 600)",
              "N");
  app.add_option("--storage", c.storage,
                 "a storage medium, repeatable: a run whose data is \"@NAME\" reads DIR/<dataset>, \"@NAME/REL\" "
                 "reads DIR/REL (simulated boards model sd, ssd and hdd)")
      ->type_name("NAME=DIR")
      ->allow_extra_args(false);
  text_option(app, "--controller", c.controller_url, "the controller to dial out to (wss:// verifies it: --ca)",
              "ws[s]://HOST:PORT");
  raw.ca_opt = text_option(app, "--ca", c.ca_file,
                           "wss: the PEM CA that signed the controller's certificate (default: the system's CAs)",
                           "FILE");
  text_option(app, "--name", c.name, "this agent's name", "NAME");
  text_option(app, "--model-dir", c.model_dir,
              "the TorchScript model cache runs of torchscript:<sha256> models read (default ~/.cache/jetsweep/model-files, "
              "or /var/lib/jetsweep/model-files as root; `models --add FILE` fills it)",
              "DIR");
  text_option(app, "--spec", c.spec_path, "run, profile: the run or campaign YAML", "FILE.yaml");
  text_option(app, "--out", c.out_path, "run: JSON lines out; profile: the CSV corpus out", "FILE");
  raw.journal_dir_opt = text_option(app, "--journal-dir", c.journal_dir,
                                    "results journaled before they are sent, replayed after a restart (default "
                                    "~/.local/state/jetsweep/NAME, or /var/lib/jetsweep/journal/NAME as root)",
                                    "DIR");
  app.add_flag("--no-journal", c.no_journal, "keep results in memory only (lost if the agent dies)");
  text_option(app, "--outbox-memory-mb", raw.outbox_memory_mb,
              "result messages held in memory until acked (default 64; beyond it they are read back from the journal; "
              "without one the run pauses between epochs)",
              "N");
  text_option(app, "--journal-max-mb", raw.journal_max_mb,
              "the journal's disk use at which runs pause between epochs until the controller acks (default 2048)", "N");
  raw.enroll_secret_opt = text_option(app, "--enroll-secret", c.enroll_secret,
                                      "sent as 'Authorization: Bearer S' (default: $JETSWEEP_ENROLL_SECRET; "
                                      "visible in the process list: prefer --enroll-secret-file)",
                                      "S");
  raw.enroll_secret_file_opt = text_option(app, "--enroll-secret-file", c.enroll_secret_file,
                                           "the enrollment secret read from FILE (one line; chmod 600)", "FILE");
  app.add_flag("-v,--verbose", c.verbose, "debug logging");
}

void add_profile_options(CLI::App& app, RawFlags& raw) {
  text_option(app, "--minibatches", raw.minibatches, "minibatches per mode (default 40; the first is dropped)", "N");
  text_option(app, "--settle-window", raw.settle_window, "minibatches the power must settle over (default 5)", "K");
  text_option(app, "--settle-pct", raw.settle_pct, "settled: within P% (default 3)", "P");
}

void add_make_data_options(CLI::App& app, AgentConfig& c, RawFlags& raw) {
  text_option(app, "--format", c.data_format, "the on-disk format", "mnist|cifar10|jpeg-gld|jpeg-folder|text");
  text_option(app, "--out", c.data_out, "the dataset directory", "DIR");
  text_option(app, "--samples", raw.samples, "samples to write", "N");
  text_option(app, "--seed", raw.seed, "random seed (default 1)", "S");
  text_option(app, "--classes", raw.classes, "classes", "K");
  text_option(app, "--image-size", raw.image_size, "JPEG formats: image size (default 320x240)", "WxH");
}

// The parser of one mode (the first argument, if it names one, chose it).
std::unique_ptr<CLI::App> make_app(Mode mode, AgentConfig& c, RawFlags& raw) {
  auto app = std::make_unique<CLI::App>("", "jetsweep-agent");
  app->allow_extras(true);   // reported as "unknown argument" below
  switch (mode) {
    case Mode::kModels:
      app->add_flag("--json", c.json, "JSON instead of a table");
      text_option(*app, "--add", c.add_model, "copy a TorchScript file into the model cache; prints its model name", "FILE");
      text_option(*app, "--check", c.check_model,
                  "load a TorchScript file and check it against the model contract on --dataset's samples (exit 1 "
                  "when it fails; prints its size as JSON)", "FILE");
      text_option(*app, "--dataset", c.check_dataset, "with --check: the dataset whose sample shape to probe (mnist, "
                  "fashion-mnist, cifar10, gld23k; others: the file is only loaded)", "NAME");
      text_option(*app, "--model-dir", c.model_dir, "the model cache (default ~/.cache/jetsweep/model-files)", "DIR");
      break;
    case Mode::kMakeData:
      add_make_data_options(*app, c, raw);
      break;
    case Mode::kProfile:
      add_board_options(*app, c, raw);
      add_profile_options(*app, raw);
      break;
    case Mode::kDoctor:
      add_board_options(*app, c, raw);
      app->add_flag("--json", c.json, "the checklist as JSON");
      break;
    default:
      add_board_options(*app, c, raw);
  }
  return app;
}

Result<double> number(const std::string& flag, const std::string& text) {
  if (auto v = parse_double(text)) return *v;
  return invalid_argument(flag + ": '" + text + "' is not a number");
}

Result<int64_t> integer(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  auto v = parse_int(text);
  if (v && *v >= min && *v <= max) return *v;
  return invalid_argument(flag + ": '" + text + "' is not an integer between " + std::to_string(min) + " and " +
                          std::to_string(max));
}

Status check_make_data(AgentConfig& c, const RawFlags& raw) {
  if (!raw.samples.empty()) {
    JS_ASSIGN_OR_RETURN(c.data_samples, integer("--samples", raw.samples, 1, 100000000));
  }
  if (!raw.seed.empty()) {
    JS_ASSIGN_OR_RETURN(c.data_seed, integer("--seed", raw.seed, 0, INT64_MAX));
  }
  if (!raw.classes.empty()) {
    JS_ASSIGN_OR_RETURN(c.data_classes, integer("--classes", raw.classes, 2, 10000000));
  }
  if (!raw.image_size.empty()) {
    const std::string& size = raw.image_size;
    const auto x = size.find('x');
    auto w = x == std::string::npos ? std::nullopt : parse_int(size.substr(0, x));
    auto h = x == std::string::npos ? std::nullopt : parse_int(size.substr(x + 1));
    if (!w || !h) return invalid_argument("--image-size '" + size + "': expected WxH, e.g. 320x240");
    c.image_width = *w;
    c.image_height = *h;
  }
  if (c.data_format.empty()) return invalid_argument("make-data: --format is required");
  if (c.data_out.empty()) return invalid_argument("make-data: --out DIR is required");
  if (c.data_samples < 1) return invalid_argument("make-data: --samples N is required");
  return Status::ok();
}

// Flag values one by one: numbers, names and what must not be empty.
Status check_values(AgentConfig& c, const RawFlags& raw) {
  if (raw.backend_opt->count() > 0) {
    c.backend = raw.backend;
    if (c.backend != "host" && c.backend != "jetson" && c.backend != "sim")
      return invalid_argument("--backend '" + c.backend + "': expected host, jetson or sim");
  }
  if (!raw.sim.empty()) {
    auto slash = raw.sim.find('/');
    c.sim_class = raw.sim.substr(0, slash);
    if (slash != std::string::npos) c.sim_instance = raw.sim.substr(slash + 1);
    if (c.sim_class.empty() || (slash != std::string::npos && c.sim_instance.empty()))
      return invalid_argument("--sim '" + raw.sim + "': expected CLASS or CLASS/INSTANCE");
  }
  if (!raw.time_scale.empty()) {
    JS_ASSIGN_OR_RETURN(c.time_scale, number("--time-scale", raw.time_scale));
    if (!(c.time_scale >= 0 && c.time_scale <= 1000)) return invalid_argument("--time-scale: must be between 0 and 1000");
  }
  if (raw.systemctl_opt->count() > 0 && c.systemctl.empty()) return invalid_argument("--systemctl: must not be empty");
  if (raw.nvpmodel_opt->count() > 0 && c.nvpmodel_command.find_first_not_of(' ') == std::string::npos)
    return invalid_argument("--nvpmodel-command: must not be empty");
  if (raw.reboot_command_opt->count() > 0 && c.reboot_command.find_first_not_of(' ') == std::string::npos)
    return invalid_argument("--reboot-command: must not be empty");
  if (!raw.reboot_timeout_s.empty()) {
    JS_ASSIGN_OR_RETURN(c.reboot_timeout_s, number("--reboot-timeout-s", raw.reboot_timeout_s));
    if (!(c.reboot_timeout_s >= 1 && c.reboot_timeout_s <= 86400))
      return invalid_argument("--reboot-timeout-s: must be between 1 and 86400");
  }
  if (!raw.idle_restore_s.empty()) {
    JS_ASSIGN_OR_RETURN(c.idle_restore_s, number("--idle-restore-s", raw.idle_restore_s));
    if (!(c.idle_restore_s >= 0)) return invalid_argument("--idle-restore-s: must be >= 0");
  }
  if (raw.journal_dir_opt->count() > 0 && c.journal_dir.empty())
    return invalid_argument("--journal-dir: must not be empty");
  if (!raw.outbox_memory_mb.empty()) {
    JS_ASSIGN_OR_RETURN(c.outbox_memory_mb, integer("--outbox-memory-mb", raw.outbox_memory_mb, 1, 1 << 20));
  }
  if (!raw.journal_max_mb.empty()) {
    JS_ASSIGN_OR_RETURN(c.journal_max_mb, integer("--journal-max-mb", raw.journal_max_mb, 16, int64_t{1} << 30));
  }
  if (raw.enroll_secret_opt->count() > 0 && c.enroll_secret.empty())
    return invalid_argument("--enroll-secret: must not be empty");
  JS_ASSIGN_OR_RETURN(c.enroll_secret, net::resolve_secret("--enroll-secret", c.enroll_secret,
                                                           raw.enroll_secret_opt->count() > 0, "--enroll-secret-file",
                                                           c.enroll_secret_file, raw.enroll_secret_file_opt->count() > 0));
  if (raw.ca_opt->count() > 0 && c.ca_file.empty()) return invalid_argument("--ca: must not be empty");
  if (!raw.minibatches.empty()) {
    JS_ASSIGN_OR_RETURN(c.profile_minibatches, integer("--minibatches", raw.minibatches, 2, 1000000));
  }
  if (!raw.settle_window.empty()) {
    JS_ASSIGN_OR_RETURN(c.settle_window, integer("--settle-window", raw.settle_window, 2, 10000));
  }
  if (!raw.settle_pct.empty()) {
    JS_ASSIGN_OR_RETURN(c.settle_pct, number("--settle-pct", raw.settle_pct));
    if (!(c.settle_pct > 0 && c.settle_pct <= 100)) return invalid_argument("--settle-pct: must be in (0, 100]");
  }
  return Status::ok();
}

// How the flags combine: backend, journal and what each mode requires.
Status check_combination(AgentConfig& c, const RawFlags& raw) {
  // doctor checks a board for the jetson backend unless told otherwise.
  if (c.mode == Mode::kDoctor && raw.backend_opt->count() == 0 && c.sim_class.empty()) c.backend = "jetson";
  if (!c.sim_class.empty()) {
    if (c.backend == "jetson") return invalid_argument("--sim cannot be combined with --backend jetson");
    c.backend = "sim";
    if (c.sim_instance.empty())
      c.sim_instance = c.mode == Mode::kRun || c.mode == Mode::kProfile || c.name.empty() ? "0" : c.name;
  } else if (c.backend == "sim") {
    return invalid_argument("--backend sim needs --sim CLASS[/INSTANCE]");
  }
  if (!raw.time_scale.empty() && c.backend != "sim") return invalid_argument("--time-scale applies to --sim only");
  storage::StorageMap media;
  for (const auto& spec : c.storage) JS_RETURN_IF_ERROR(media.add(spec));
  const bool command_flags = raw.nvpmodel_opt->count() > 0 || raw.reboot_command_opt->count() > 0;
  const bool reboot_flags = command_flags || !raw.reboot_timeout_s.empty();
  if ((c.allow_reboot || reboot_flags) && (c.mode != Mode::kServe || (c.backend != "jetson" && c.backend != "sim")))
    return invalid_argument("--allow-reboot, --nvpmodel-command, --reboot-command and --reboot-timeout-s apply to "
                            "serving a controller with --backend jetson (or sim)");
  if (command_flags && c.backend != "jetson")
    return invalid_argument("--nvpmodel-command and --reboot-command apply to --backend jetson (a simulated board "
                            "models its reboot)");
  if (reboot_flags && !c.allow_reboot)
    return invalid_argument("--nvpmodel-command, --reboot-command and --reboot-timeout-s need --allow-reboot");
  if (c.allow_reboot && c.no_journal)
    return invalid_argument("--allow-reboot needs the journal (not --no-journal): the run and its results must "
                            "survive the reboot");
  if (c.no_journal && !c.journal_dir.empty()) return invalid_argument("--journal-dir cannot be combined with --no-journal");
  if (c.mode == Mode::kRun || c.mode == Mode::kProfile) {
    const std::string cmd = c.mode == Mode::kRun ? "run" : "profile";
    if (!c.journal_dir.empty() || c.no_journal || !c.enroll_secret.empty())
      return invalid_argument(cmd + ": --journal-dir, --no-journal and --enroll-secret apply to serving a controller");
    if (c.spec_path.empty()) return invalid_argument(cmd + ": --spec FILE.yaml is required");
    if (c.out_path.empty())
      return invalid_argument(cmd + (c.mode == Mode::kRun ? ": --out FILE.jsonl is required" : ": --out FILE.csv is required"));
    return Status::ok();
  }
  if (c.mode == Mode::kDoctor) return Status::ok();
  if (c.controller_url.empty()) return invalid_argument("--controller ws://HOST:PORT is required");
  if (c.name.empty()) return invalid_argument("--name NAME is required");
  if (auto bad = proto::agent_name_problem(c.name)) return invalid_argument("--name '" + c.name + "': " + *bad);
  JS_RETURN_IF_ERROR(parse_ws_url(c.controller_url, c.host, c.port, c.target, &c.tls));
  if (!c.tls && !c.ca_file.empty())
    return invalid_argument("--ca applies to a wss:// controller, not '" + c.controller_url + "'");
  return Status::ok();
}

// The mode named by the first argument (consumed: *first_flag = 1), else serve.
Mode mode_of(const std::vector<std::string>& args, size_t* first_flag) {
  static const std::vector<std::pair<std::string, Mode>> kModes = {
      {"run", Mode::kRun},       {"profile", Mode::kProfile},    {"models", Mode::kModels},
      {"doctor", Mode::kDoctor}, {"make-data", Mode::kMakeData}, {"probe", Mode::kDevice},
      {"set-mode", Mode::kDevice}, {"restore", Mode::kDevice},   {"help", Mode::kHelp},
      {"--help", Mode::kHelp},   {"-h", Mode::kHelp}};
  *first_flag = 0;
  if (args.empty()) return Mode::kServe;
  for (const auto& [name, mode] : kModes) {
    if (args[0] != name) continue;
    *first_flag = 1;
    return mode;
  }
  return Mode::kServe;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kModels: return "models: ";
    case Mode::kMakeData: return "make-data: ";
    default: return "";
  }
}

// CLI11's parse errors in this parser's words ("--flag: missing value").
Status parse_error(const CLI::ParseError& e) {
  const std::string what = e.what();
  const auto colon = what.find(':');
  if (e.get_name() == "ArgumentMismatch" && colon != std::string::npos && what.find(" required ") != std::string::npos &&
      what.size() >= 7 && what.compare(what.size() - 7, 7, "missing") == 0)
    return invalid_argument(what.substr(0, colon) + ": missing value");
  return invalid_argument(what);
}

}  // namespace

std::string agent_usage() {
  CLI::App app("jetsweep-agent: runs a campaign's runs on this machine, a Jetson board or a simulated one",
               "jetsweep-agent");
  AgentConfig c;
  RawFlags raw;
  app.footer(
      "With no command: dial out to a controller (--controller, --name required), register, run assigned runs one at a\n"
      "time; results are journaled before they are sent. BACKEND: --backend host|jetson or --sim CLASS[/INSTANCE].\n"
      "Device layer: jetsweep-agent probe|set-mode|restore [...] (see README).");
  add_board_options(app, c, raw);
  struct Command {
    const char* name;
    const char* what;
    Mode mode;
  };
  const Command commands[] = {
      {"run", "one run without a controller; one JSON object per line (--spec, --out)", Mode::kRun},
      {"profile", "PowerTrain-style profiling: every run of a campaign in one process, one CSV row per mode",
       Mode::kProfile},
      {"doctor", "a board's readiness as a checklist: exit 0 when ready, 1 when not", Mode::kDoctor},
      {"models", "the models built in: parameters and forward multiply-accumulates per sample", Mode::kModels},
      {"make-data", "writes a synthetic dataset in the real on-disk format", Mode::kMakeData},
  };
  for (const auto& cmd : commands) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.what);
    if (cmd.mode == Mode::kModels) {
      sub->add_flag("--json", c.json, "JSON instead of a table");
      text_option(*sub, "--add", c.add_model, "copy a TorchScript file into the model cache; prints its model name", "FILE");
      text_option(*sub, "--check", c.check_model,
                  "load a TorchScript file and check it against the model contract on --dataset's samples (exit 1 "
                  "when it fails; prints its size as JSON)", "FILE");
      text_option(*sub, "--dataset", c.check_dataset, "with --check: the dataset whose sample shape to probe (mnist, "
                  "fashion-mnist, cifar10, gld23k; others: the file is only loaded)", "NAME");
      text_option(*sub, "--model-dir", c.model_dir, "the model cache (default ~/.cache/jetsweep/model-files)", "DIR");
    }
    else if (cmd.mode == Mode::kMakeData) add_make_data_options(*sub, c, raw);
    else add_board_options(*sub, c, raw);
    if (cmd.mode == Mode::kProfile) add_profile_options(*sub, raw);
    if (cmd.mode == Mode::kDoctor) sub->add_flag("--json", c.json, "the checklist as JSON");
  }
  return app.help("", CLI::AppFormatMode::All);
}

Status parse_ws_url(const std::string& url, std::string& host, std::string& port, std::string& target, bool* tls) {
  const bool secure = url.rfind("wss://", 0) == 0;
  if (!secure && url.rfind("ws://", 0) != 0)
    return invalid_argument("--controller '" + url + "': must start with ws:// or wss://");
  if (tls) *tls = secure;
  std::string rest = url.substr(secure ? 6 : 5);
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  target = slash == std::string::npos ? "/agent" : rest.substr(slash);
  if (target == "/") target = "/agent";
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hostport.size())
    return invalid_argument("--controller '" + url + "': expected ws://HOST:PORT or wss://HOST:PORT");
  host = hostport.substr(0, colon);
  port = hostport.substr(colon + 1);
  for (char ch : port)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return invalid_argument("--controller '" + url + "': bad port '" + port + "'");
  return Status::ok();
}

Result<std::string> default_journal_dir(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return invalid_argument("agent name '" + name + "' cannot name a journal directory; pass --journal-dir DIR");
  if (::geteuid() == 0) return "/var/lib/jetsweep/journal/" + name;
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && *state == '/') return std::string(state) + "/jetsweep/" + name;
  const char* home = std::getenv("HOME");
  if (!home || !*home) return invalid_argument("no $HOME to put the journal under; pass --journal-dir DIR");
  return std::string(home) + "/.local/state/jetsweep/" + name;
}

Result<AgentConfig> parse_agent_args(const std::vector<std::string>& args) {
  AgentConfig c;
  size_t first_flag = 0;
  c.mode = mode_of(args, &first_flag);
  if (c.mode == Mode::kHelp) return c;
  if (c.mode == Mode::kDevice) {
    c.device_command = args[0];
    c.device_args.assign(args.begin() + 1, args.end());
    return c;
  }
  RawFlags raw;
  auto app = make_app(c.mode, c, raw);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - static_cast<long>(first_flag));
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    c.mode = Mode::kHelp;
    return c;
  } catch (const CLI::ParseError& e) {
    return parse_error(e);
  }
  if (!app->remaining().empty())
    return invalid_argument(std::string(mode_name(c.mode)) + "unknown argument '" + app->remaining().front() + "'");
  if (c.mode == Mode::kMakeData) {
    JS_RETURN_IF_ERROR(check_make_data(c, raw));
    return c;
  }
  if (c.mode == Mode::kModels) return c;
  JS_RETURN_IF_ERROR(check_values(c, raw));
  JS_RETURN_IF_ERROR(check_combination(c, raw));
  return c;
}

}  // namespace jetsweep::agent
