#include "agent/config.hpp"

#include "agent/storage/storage_map.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace jetsweep::agent {

std::string agent_usage() {
  return "usage:\n"
         "  jetsweep-agent --controller ws://HOST:PORT --name NAME [BACKEND] [--root DIR] [--verbose]\n"
         "      [--journal-dir DIR | --no-journal] [--enroll-secret S]\n"
         "      dial out to a controller, register, run assigned runs one at a time\n"
         "      results are journaled in DIR before they are sent and replayed after a restart until the controller\n"
         "      acknowledges them (default DIR: ~/.local/state/jetsweep/NAME, or /var/lib/jetsweep/journal/NAME as\n"
         "      root; one agent per DIR); --no-journal keeps them in memory only (lost if the agent dies)\n"
         "      --enroll-secret S (default: $JETSWEEP_ENROLL_SECRET): sent as 'Authorization: Bearer S' when connecting\n"
         "  jetsweep-agent run --spec FILE.yaml --out FILE.jsonl [BACKEND] [--root DIR]\n"
         "      one run without a controller; one JSON object per line\n"
         "  BACKEND (default: host, LibTorch on this machine):\n"
         "    --backend jetson [--state-dir DIR] [--idle-restore-s N] [--systemctl PATH]\n"
         "      a Jetson board: power modes applied per run, INA3221 power; settings recorded in DIR\n"
         "      (default /var/lib/jetsweep) and restored at start, on shutdown and after N s idle (600; 0 = never);\n"
         "      on L4T R35+ nvfancontrol is stopped for runs with fan_max and started again on restore by running\n"
         "      'PATH is-active|stop|start nvfancontrol' (default PATH: systemctl)\n"
         "    --sim CLASS[/INSTANCE] [--time-scale F]\n"
         "      a simulated board (nano, xavier-nx, agx-xavier, agx-orin, orin-nano; docs/SIMULATION.md);\n"
         "      waits F x the modelled time (default 1; 0 = no waiting) and reports modelled times\n"
         "  STORAGE: --storage NAME=DIR, repeatable (e.g. --storage ssd=/mnt/ssd/data --storage sd=/media/sd/data);\n"
         "      a run whose data is \"@NAME\" reads DIR/<dataset>, \"@NAME/REL\" reads DIR/REL. Simulated boards\n"
         "      model the media sd, ssd and hdd by their read speeds (DIR is not read)\n"
         "  jetsweep-agent doctor [--root DIR] [--backend host|jetson | --sim CLASS] [--journal-dir DIR] [--json]\n"
         "      a board's readiness as a checklist (root, debugfs, cpufreq/devfreq/EMC writable, nvpmodel, INA3221\n"
         "      rails, fan, CUDA in LibTorch, journal directory): exit 0 when ready, 1 when not\n"
         "  jetsweep-agent models [--json]\n"
         "      the models built in: parameters and forward multiply-accumulates per sample (docs/WORKLOADS.md)\n"
         "  jetsweep-agent profile --spec CAMPAIGN.yaml --out CORPUS.csv [--minibatches N] [--settle-window K]\n"
         "                         [--settle-pct P] [BACKEND]\n"
         "      PowerTrain-style profiling: every run of the campaign (its power modes, e.g. a generated sample)\n"
         "      in one process, N minibatches each (first dropped, counted once power settles), one CSV row per mode\n"
         "  jetsweep-agent make-data --format mnist|cifar10|jpeg-gld|jpeg-folder|text --out DIR --samples N\n"
         "                 [--seed S] [--classes K] [--image-size WxH]\n"
         "      writes a synthetic dataset in the real on-disk format (JPEG formats: WxH images, default 320x240)\n"
         "  jetsweep-agent probe|set-mode|restore [...]   (Jetson device layer; see README)\n";
}

Status parse_ws_url(const std::string& url, std::string& host, std::string& port, std::string& target) {
  const std::string scheme = "ws://";
  if (url.rfind(scheme, 0) != 0) return invalid_argument("--controller '" + url + "': must start with ws://");
  std::string rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  target = slash == std::string::npos ? "/agent" : rest.substr(slash);
  if (target == "/") target = "/agent";
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hostport.size())
    return invalid_argument("--controller '" + url + "': expected ws://HOST:PORT");
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
  size_t i = 0;
  if (!args.empty()) {
    const std::string& first = args[0];
    if (first == "run") {
      c.mode = AgentConfig::Mode::kRun;
      i = 1;
    } else if (first == "probe" || first == "set-mode" || first == "restore") {
      c.mode = AgentConfig::Mode::kDevice;
      c.device_command = first;
      c.device_args.assign(args.begin() + 1, args.end());
      return c;
    } else if (first == "profile") {
      c.mode = AgentConfig::Mode::kProfile;
      i = 1;
    } else if (first == "models") {
      c.mode = AgentConfig::Mode::kModels;
      i = 1;
    } else if (first == "doctor") {
      c.mode = AgentConfig::Mode::kDoctor;
      i = 1;
    } else if (first == "make-data") {
      c.mode = AgentConfig::Mode::kMakeData;
      i = 1;
    } else if (first == "help" || first == "--help" || first == "-h") {
      c.mode = AgentConfig::Mode::kHelp;
      return c;
    }
  }
  auto value = [&](const std::string& flag) -> Result<std::string> {
    if (i + 1 >= args.size()) return invalid_argument(flag + ": missing value");
    return args[++i];
  };
  auto number = [&](const std::string& flag) -> Result<double> {
    JS_ASSIGN_OR_RETURN(std::string text, value(flag));
    try {
      size_t used = 0;
      double v = std::stod(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    return invalid_argument(flag + ": '" + text + "' is not a number");
  };
  auto integer = [&](const std::string& flag, int64_t min, int64_t max) -> Result<int64_t> {
    JS_ASSIGN_OR_RETURN(std::string text, value(flag));
    try {
      size_t used = 0;
      long long v = std::stoll(text, &used);
      if (used == text.size() && v >= min && v <= max) return static_cast<int64_t>(v);
    } catch (const std::exception&) {
    }
    return invalid_argument(flag + ": '" + text + "' is not an integer between " + std::to_string(min) + " and " + std::to_string(max));
  };
  if (c.mode == AgentConfig::Mode::kModels) {
    for (; i < args.size(); ++i) {
      if (args[i] != "--json") return invalid_argument("models: unknown argument '" + args[i] + "'");
      c.json = true;
    }
    return c;
  }
  if (c.mode == AgentConfig::Mode::kMakeData) {
    for (; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--format") {
        JS_ASSIGN_OR_RETURN(c.data_format, value(a));
      } else if (a == "--out") {
        JS_ASSIGN_OR_RETURN(c.data_out, value(a));
      } else if (a == "--samples") {
        JS_ASSIGN_OR_RETURN(c.data_samples, integer(a, 1, 100000000));
      } else if (a == "--seed") {
        JS_ASSIGN_OR_RETURN(c.data_seed, integer(a, 0, INT64_MAX));
      } else if (a == "--classes") {
        JS_ASSIGN_OR_RETURN(c.data_classes, integer(a, 2, 10000000));
      } else if (a == "--image-size") {
        std::string size;
        JS_ASSIGN_OR_RETURN(size, value(a));
        const auto x = size.find('x');
        try {
          if (x == std::string::npos) throw std::invalid_argument(size);
          size_t u1 = 0, u2 = 0;
          c.image_width = std::stoll(size.substr(0, x), &u1);
          c.image_height = std::stoll(size.substr(x + 1), &u2);
          if (u1 != x || u2 != size.size() - x - 1) throw std::invalid_argument(size);
        } catch (const std::exception&) {
          return invalid_argument("--image-size '" + size + "': expected WxH, e.g. 320x240");
        }
      } else {
        return invalid_argument("make-data: unknown argument '" + a + "'");
      }
    }
    if (c.data_format.empty()) return invalid_argument("make-data: --format is required");
    if (c.data_out.empty()) return invalid_argument("make-data: --out DIR is required");
    if (c.data_samples < 1) return invalid_argument("make-data: --samples N is required");
    return c;
  }
  bool time_scale_given = false, backend_given = false;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--controller") {
      JS_ASSIGN_OR_RETURN(c.controller_url, value(a));
    } else if (a == "--name") {
      JS_ASSIGN_OR_RETURN(c.name, value(a));
    } else if (a == "--root") {
      JS_ASSIGN_OR_RETURN(c.root, value(a));
    } else if (a == "--spec") {
      JS_ASSIGN_OR_RETURN(c.spec_path, value(a));
    } else if (a == "--out") {
      JS_ASSIGN_OR_RETURN(c.out_path, value(a));
    } else if (a == "--backend") {
      JS_ASSIGN_OR_RETURN(c.backend, value(a));
      backend_given = true;
      if (c.backend != "host" && c.backend != "jetson" && c.backend != "sim")
        return invalid_argument("--backend '" + c.backend + "': expected host, jetson or sim");
    } else if (a == "--sim") {
      std::string spec;
      JS_ASSIGN_OR_RETURN(spec, value(a));
      auto slash = spec.find('/');
      c.sim_class = spec.substr(0, slash);
      if (slash != std::string::npos) c.sim_instance = spec.substr(slash + 1);
      if (c.sim_class.empty() || (slash != std::string::npos && c.sim_instance.empty()))
        return invalid_argument("--sim '" + spec + "': expected CLASS or CLASS/INSTANCE");
    } else if (a == "--time-scale") {
      JS_ASSIGN_OR_RETURN(c.time_scale, number(a));
      if (!(c.time_scale >= 0 && c.time_scale <= 1000)) return invalid_argument("--time-scale: must be between 0 and 1000");
      time_scale_given = true;
    } else if (a == "--state-dir") {
      JS_ASSIGN_OR_RETURN(c.state_dir, value(a));
    } else if (a == "--systemctl") {
      JS_ASSIGN_OR_RETURN(c.systemctl, value(a));
      if (c.systemctl.empty()) return invalid_argument("--systemctl: must not be empty");
    } else if (a == "--idle-restore-s") {
      JS_ASSIGN_OR_RETURN(c.idle_restore_s, number(a));
      if (!(c.idle_restore_s >= 0)) return invalid_argument("--idle-restore-s: must be >= 0");
    } else if (a == "--storage") {
      std::string spec;
      JS_ASSIGN_OR_RETURN(spec, value(a));
      c.storage.push_back(spec);
    } else if (a == "--journal-dir") {
      JS_ASSIGN_OR_RETURN(c.journal_dir, value(a));
      if (c.journal_dir.empty()) return invalid_argument("--journal-dir: must not be empty");
    } else if (a == "--no-journal") {
      c.no_journal = true;
    } else if (a == "--enroll-secret") {
      JS_ASSIGN_OR_RETURN(c.enroll_secret, value(a));
      if (c.enroll_secret.empty()) return invalid_argument("--enroll-secret: must not be empty");
    } else if (c.mode == AgentConfig::Mode::kProfile && a == "--minibatches") {
      JS_ASSIGN_OR_RETURN(c.profile_minibatches, integer(a, 2, 1000000));
    } else if (c.mode == AgentConfig::Mode::kProfile && a == "--settle-window") {
      JS_ASSIGN_OR_RETURN(c.settle_window, integer(a, 2, 10000));
    } else if (c.mode == AgentConfig::Mode::kProfile && a == "--settle-pct") {
      JS_ASSIGN_OR_RETURN(c.settle_pct, number(a));
      if (!(c.settle_pct > 0 && c.settle_pct <= 100)) return invalid_argument("--settle-pct: must be in (0, 100]");
    } else if (c.mode == AgentConfig::Mode::kDoctor && a == "--json") {
      c.json = true;
    } else if (a == "--verbose" || a == "-v") {
      c.verbose = true;
    } else {
      return invalid_argument("unknown argument '" + a + "'");
    }
  }
  // doctor checks a board for the jetson backend unless told otherwise.
  if (c.mode == AgentConfig::Mode::kDoctor && !backend_given && c.sim_class.empty()) c.backend = "jetson";
  if (!c.sim_class.empty()) {
    if (c.backend == "jetson") return invalid_argument("--sim cannot be combined with --backend jetson");
    c.backend = "sim";
    if (c.sim_instance.empty())
      c.sim_instance = c.mode == AgentConfig::Mode::kRun || c.mode == AgentConfig::Mode::kProfile || c.name.empty() ? "0" : c.name;
  } else if (c.backend == "sim") {
    return invalid_argument("--backend sim needs --sim CLASS[/INSTANCE]");
  }
  if (time_scale_given && c.backend != "sim") return invalid_argument("--time-scale applies to --sim only");
  storage::StorageMap media;
  for (const auto& spec : c.storage) JS_RETURN_IF_ERROR(media.add(spec));
  if (c.no_journal && !c.journal_dir.empty()) return invalid_argument("--journal-dir cannot be combined with --no-journal");
  if (c.mode == AgentConfig::Mode::kRun || c.mode == AgentConfig::Mode::kProfile) {
    const std::string cmd = c.mode == AgentConfig::Mode::kRun ? "run" : "profile";
    if (!c.journal_dir.empty() || c.no_journal || !c.enroll_secret.empty())
      return invalid_argument(cmd + ": --journal-dir, --no-journal and --enroll-secret apply to serving a controller");
    if (c.spec_path.empty()) return invalid_argument(cmd + ": --spec FILE.yaml is required");
    if (c.out_path.empty())
      return invalid_argument(cmd + (c.mode == AgentConfig::Mode::kRun ? ": --out FILE.jsonl is required" : ": --out FILE.csv is required"));
    return c;
  }
  if (c.mode == AgentConfig::Mode::kDoctor) return c;
  if (c.controller_url.empty()) return invalid_argument("--controller ws://HOST:PORT is required");
  if (c.name.empty()) return invalid_argument("--name NAME is required");
  JS_RETURN_IF_ERROR(parse_ws_url(c.controller_url, c.host, c.port, c.target));
  return c;
}

}  // namespace jetsweep::agent
