// Command-line parsing for jetsweep-agent. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

struct AgentConfig {
  enum class Mode { kServe, kRun, kDevice, kHelp, kModels, kMakeData, kProfile, kDoctor } mode = Mode::kServe;
  // serve
  std::string controller_url;   // ws://HOST:PORT[/path] or wss://HOST:PORT[/path]
  bool tls = false;             // wss://
  std::string ca_file;          // --ca: the CA that signed the controller's certificate (wss; empty: system's)
  std::string host, port, target = "/agent";
  std::string name;
  std::string backend = "host";        // --backend host|jetson|sim (--sim implies sim)
  std::string device_class = "host";   // host only; jetson/sim take it from the board
  // jetson
  std::string state_dir = "/var/lib/jetsweep";   // --state-dir: original board settings are recorded here
  double idle_restore_s = 600;         // --idle-restore-s: restore the board after this long idle (0 = never)
  std::string systemctl = "systemctl"; // --systemctl: stops/starts nvfancontrol around fan_max runs (L4T R35+)
  // jetson serve: --allow-reboot (off by default): a run whose nvpmodel mode gates the GPU differently from the
  // booted board reboots it (agent/reboot.hpp): --nvpmodel-command, --reboot-command (split at spaces, no shell),
  // --reboot-timeout-s (how long the controller holds the run and the board).
  bool allow_reboot = false;
  std::string nvpmodel_command = "nvpmodel";
  std::string reboot_command = "systemctl reboot";
  double reboot_timeout_s = 600;
  // sim: --sim CLASS[/INSTANCE] --time-scale F
  std::string sim_class;
  std::string sim_instance;            // defaults to --name (serve) or "0" (run)
  double time_scale = 1.0;
  // run
  std::string spec_path;
  std::string out_path;
  // profile
  int64_t profile_minibatches = 40;
  int64_t settle_window = 5;
  double settle_pct = 3.0;
  // host/jetson: --storage NAME=DIR (repeatable), media a run's `data: "@NAME[/REL]"` refers to
  std::vector<std::string> storage;
  // models: --json; --add FILE copies a TorchScript file into the model cache and prints its model name
  bool json = false;
  std::string add_model;
  // models --check FILE [--dataset NAME]: loads FILE and checks the contract on NAME's samples (the CLI's helper)
  std::string check_model;
  std::string check_dataset;
  // serve, run, profile, models --add: --model-dir DIR, the TorchScript model cache (default: default_model_dir())
  std::string model_dir;
  // make-data: --format F --out DIR --samples N [--seed S] [--classes K] [--image-size WxH]
  std::string data_format;
  std::string data_out;
  int64_t data_samples = 0;
  int64_t data_seed = 1;
  int64_t data_classes = 0;
  int64_t image_width = 320;
  int64_t image_height = 240;
  // serve: --journal-dir DIR (default: default_journal_dir(name)), --no-journal (results in memory only)
  std::string journal_dir;
  bool no_journal = false;
  // serve: --outbox-memory-mb N, --journal-max-mb N (agent/outbox.hpp)
  int64_t outbox_memory_mb = 64;
  int64_t journal_max_mb = 2048;
  // serve: --enroll-secret S or --enroll-secret-file FILE (main falls back to $JETSWEEP_ENROLL_SECRET when absent)
  std::string enroll_secret;
  std::string enroll_secret_file;
  // shared
  std::string root = "/";
  bool verbose = false;
  // device subcommands (probe, set-mode, restore): passed through
  std::string device_command;
  std::vector<std::string> device_args;
};

Result<AgentConfig> parse_agent_args(const std::vector<std::string>& args);
// Splits "ws://host:port/path" or "wss://..." into parts (*tls: whether it is wss://); errors name the URL.
Status parse_ws_url(const std::string& url, std::string& host, std::string& port, std::string& target,
                    bool* tls = nullptr);
std::string agent_usage();
// Where the journal of agent `name` lives without --journal-dir: /var/lib/jetsweep/journal/NAME when running
// as root, else $XDG_STATE_HOME/jetsweep/NAME or ~/.local/state/jetsweep/NAME. Errors when the name cannot
// be a directory name or there is no home directory.
Result<std::string> default_journal_dir(const std::string& name);

}  // namespace jetsweep::agent
