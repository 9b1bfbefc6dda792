// jetsweep-agent: thin entry point; see agent/config.hpp for the CLI and agent/agent.hpp for the state machine.
#include <boost/asio.hpp>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <cmath>
#include <iostream>
#include <iterator>
#include <atomic>
#include <sstream>

#include "agent/agent.hpp"
#include "agent/config.hpp"
#include "agent/credential_file.hpp"
#include "agent/profile.hpp"
#include "agent/device/device_cli.hpp"
#include "agent/doctor.hpp"
#include "agent/datasets/synth.hpp"
#include "agent/host_facts.hpp"
#include "agent/journal.hpp"
#include "agent/model_cache.hpp"
#include "agent/reboot.hpp"
#include "agent/models/registry.hpp"
#include "agent/run_executor.hpp"
#include "agent/trainer.hpp"
#include "common/campaign.hpp"
#include "common/model_files.hpp"
#include "common/log.hpp"
#include "net/tls.hpp"


using namespace jetsweep;

namespace {

agent::ExecutorOptions executor_options(const agent::AgentConfig& cfg) {
  agent::ExecutorOptions o;
  o.backend = cfg.backend;
  o.root = cfg.root;
  o.state_dir = cfg.state_dir;
  o.systemctl = cfg.systemctl;
  o.sim_class = cfg.sim_class;
  o.sim_instance = cfg.sim_instance;
  o.time_scale = cfg.time_scale;
  o.model_dir = cfg.model_dir;
  if (o.model_dir.empty()) {
    auto dir = agent::default_model_dir();
    if (dir) o.model_dir = dir.value();
    else JS_LOG_WARN << dir.status().message() << " (runs of TorchScript models will fail)";
  }
  for (const auto& spec : cfg.storage) {
    // Validated by parse_agent_args.
    Status added = o.storage.add(spec);
    if (!added.is_ok()) JS_LOG_ERROR << added.message();
  }
  return o;
}

// Reports `message` as this binary's error and returns `exit_code`.
int fail(const std::string& message, int exit_code) {
  std::cerr << "jetsweep-agent: " << message << "\n";
  return exit_code;
}

// Opens (truncating) the file a standalone command writes its results to.
Status open_output(const std::string& path, std::ofstream& out) {
  out.open(path, std::ios::trunc);
  if (!out) return io_error(path + ": cannot open for writing");
  return Status::ok();
}

// Puts the board back as it was if a standalone command changed it; reports and returns whether that worked.
bool restore_board(agent::RunExecutor& executor) {
  Status restored = executor.board_modified() ? executor.restore_board() : Status::ok();
  if (!restored.is_ok()) fail(restored.message(), 1);
  return restored.is_ok();
}

// The readiness checks for this agent's configuration (journal_dir empty: no journal).
agent::DoctorOptions doctor_options(const agent::AgentConfig& cfg, const std::string& journal_dir) {
  agent::DoctorOptions d;
  d.root = cfg.root;
  d.backend = cfg.backend;
  d.journal_dir = journal_dir;
  d.is_root = ::geteuid() == 0;
  return d;
}

// `jetsweep-agent models --add FILE [--model-dir DIR]`: the file into the model cache; prints its model name.
int add_model(const agent::AgentConfig& cfg) {
  std::string dir = cfg.model_dir;
  if (dir.empty()) {
    auto d = agent::default_model_dir();
    if (!d) return fail(d.status().message(), 1);
    dir = d.value();
  }
  agent::ModelCache cache(dir);
  auto sha = cache.add(cfg.add_model);
  if (!sha) return fail(sha.status().message(), 1);
  std::cout << kTorchScriptPrefix << sha.value() << "\n";
  return 0;
}

// `jetsweep-agent models --check FILE [--dataset NAME]`: FILE loaded with this agent's LibTorch and checked against
// the model contract on a probe minibatch of NAME's sample shape, as a board checks it before a run (the CLI runs this
// in a helper process: docs/WORKLOADS.md). Prints {"sha256", "input", "parameters", "forward_macs"}; exit 1 with the
// agent's message when it fails.
int check_model(const agent::AgentConfig& cfg) {
  auto sha = sha256_file(cfg.check_model);
  if (!sha) return fail(sha.status().message(), 1);
  const std::string model = kTorchScriptPrefix + sha.value();
  boost::json::object o{{"sha256", sha.value()}};
  if (cfg.check_dataset.empty() || !agent::standard_shape(cfg.check_dataset)) {
    // No sample shape to probe (the dataset's comes from its files): loaded only.
    auto loaded = agent::models::load_torchscript(model, cfg.check_model);
    if (!loaded.is_ok()) return fail(loaded.message(), 1);
    o["input"] = nullptr;
  } else {
    const auto spec = agent::input_spec_for(*agent::standard_shape(cfg.check_dataset));
    auto figures = agent::models::measure_torchscript(model, cfg.check_model, spec);
    if (!figures) return fail(figures.status().message(), 1);
    o["input"] = spec.to_string();
    o["parameters"] = figures->parameters;
    o["forward_macs"] = figures->forward_macs;
  }
  std::cout << boost::json::serialize(o) << "\n";
  return 0;
}

// `jetsweep-agent models [--json]`: every model at its reference configuration.
int list_models(const agent::AgentConfig& cfg) {
  if (!cfg.add_model.empty()) return add_model(cfg);
  if (!cfg.check_model.empty()) return check_model(cfg);
  boost::json::array rows;
  for (const auto& m : agent::models::model_catalog()) {
    auto f = agent::models::measure_model(m.name, m.reference);
    if (!f) return fail(f.status().message(), 1);
    boost::json::object o;
    o["name"] = m.name;
    boost::json::array aliases;
    for (const auto& a : m.aliases) aliases.emplace_back(a);
    o["aliases"] = std::move(aliases);
    o["architecture"] = m.architecture;
    o["input"] = m.reference.to_string();
    o["configuration"] = m.reference_note;
    o["parameters"] = f->parameters;
    o["forward_macs_per_sample"] = f->forward_macs;
    o["forward_flops_per_sample"] = 2 * f->forward_macs;
    o["paper_parameters"] = m.paper_parameters > 0 ? boost::json::value(m.paper_parameters) : boost::json::value(nullptr);
    o["paper_flops"] = m.paper_forward_macs > 0 ? boost::json::value(m.paper_forward_macs) : boost::json::value(nullptr);
    rows.emplace_back(std::move(o));
  }
  if (cfg.json) {
    std::cout << boost::json::serialize(rows) << "\n";
    return 0;
  }
  std::printf("%-20s %-14s %14s %12s %16s %12s  %s\n", "model", "input", "parameters", "paper", "forward MACs", "paper", "configuration");
  for (const auto& v : rows) {
    const auto& o = v.as_object();
    auto num = [](const boost::json::value& x) { return x.is_null() ? std::string("-") : std::to_string(static_cast<int64_t>(x.to_number<double>())); };
    std::string input = std::string(o.at("input").as_string().c_str());
    input = input.substr(0, input.find(','));
    std::printf("%-20s %-14s %14lld %12s %16lld %12s  %s\n", o.at("name").as_string().c_str(), input.c_str(),
                static_cast<long long>(o.at("parameters").as_int64()), num(o.at("paper_parameters")).c_str(),
                static_cast<long long>(o.at("forward_macs_per_sample").as_int64()), num(o.at("paper_flops")).c_str(),
                o.at("configuration").as_string().c_str());
  }
  return 0;
}

// `jetsweep-agent make-data`: a synthetic dataset in a real on-disk format.
int make_data(const agent::AgentConfig& cfg) {
  agent::synth::Options o;
  o.format = cfg.data_format;
  o.out_dir = cfg.data_out;
  o.samples = cfg.data_samples;
  o.seed = static_cast<uint64_t>(cfg.data_seed);
  o.classes = cfg.data_classes;
  o.image_width = cfg.image_width;
  o.image_height = cfg.image_height;
  auto s = agent::synth::write_dataset(o);
  if (!s) return fail(s.status().message(), 1);
  std::cout << "wrote " << s->samples << (cfg.data_format == "text" ? " tokens" : " samples") << ", " << s->classes
            << (cfg.data_format == "text" ? " words max vocabulary" : " classes") << ", " << s->files << " files, "
            << s->bytes << " bytes to " << cfg.data_out << " (run spec: dataset: " << s->dataset << ", data: " << cfg.data_out
            << ")\n";
  return 0;
}

// The spec file's text, each model named as torchscript:FILE added to the model cache and named by its SHA-256.
Result<std::string> spec_text(const agent::AgentConfig& cfg, const agent::ExecutorOptions& options) {
  JS_ASSIGN_OR_RETURN(std::string text, read_text_file(cfg.spec_path));
  return resolve_model_files(text, cfg.spec_path, [&](const std::string& file, const std::string& where) -> Result<std::string> {
    if (options.model_dir.empty()) return invalid_argument(where + ": no model cache to add '" + file + "' to (--model-dir)");
    auto sha = agent::ModelCache(options.model_dir).add(file);
    if (!sha) return invalid_argument(where + ": " + sha.status().message());
    return sha;
  });
}

int run_standalone(const agent::AgentConfig& cfg) {
  auto text = spec_text(cfg, executor_options(cfg));
  if (!text) return fail(text.status().message(), 2);
  auto spec = parse_run_spec(text.value(), cfg.spec_path);
  if (!spec) return fail(spec.status().message(), 2);
  std::ofstream out;
  if (Status opened = open_output(cfg.out_path, out); !opened.is_ok()) return fail(opened.message(), 2);
  agent::JsonLinesSink sink(out);
  auto executor = agent::RunExecutor::open(executor_options(cfg));
  if (!executor) return fail(executor.status().message(), 1);
  if (!(*executor)->has_power_sensor()) JS_LOG_WARN << "no power sensor readable: energy_j will be null";
  std::atomic<bool> cancel{false};
  auto fin = (*executor)->execute(0, spec.value(), sink, cancel);
  const bool restored = restore_board(**executor);
  if (fin.status != "done") return fail("run failed: " + fin.error, 1);
  return restored ? 0 : 1;
}

// `jetsweep-agent profile`: the campaign's runs are the modes to walk (PowerTrain sec.2.5).
int run_profile(const agent::AgentConfig& cfg) {
  auto text = spec_text(cfg, executor_options(cfg));
  if (!text) return fail(text.status().message(), 2);
  auto campaign = parse_campaign(text.value(), cfg.spec_path);
  if (!campaign) return fail(campaign.status().message(), 2);
  std::ofstream out;
  if (Status opened = open_output(cfg.out_path, out); !opened.is_ok()) return fail(opened.message(), 2);
  auto executor = agent::RunExecutor::open(executor_options(cfg));
  if (!executor) return fail(executor.status().message(), 1);
  proto::DeviceFacts facts;
  (*executor)->describe(facts);
  if (facts.device_class.empty()) facts.device_class = cfg.device_class;  // the host backend: "host"
  agent::ProfileOptions options{cfg.profile_minibatches, cfg.settle_window, cfg.settle_pct};
  const int failed = agent::profile_modes(**executor, facts.device_class, campaign->runs, options, out);
  const bool restored = restore_board(**executor);
  if (failed > 0) std::cerr << "jetsweep-agent: " << failed << " of " << campaign->runs.size() << " modes failed\n";
  return failed == 0 && restored ? 0 : 1;
}

// `jetsweep-agent doctor [--root DIR] [--backend B] [--journal-dir DIR] [--json]`: exit 0 when ready, 1 when not.
int doctor(const agent::AgentConfig& cfg) {
  const agent::DoctorReport report = agent::run_doctor(doctor_options(cfg, cfg.journal_dir));
  if (cfg.json) std::cout << boost::json::serialize(report.to_json()) << "\n";
  else std::cout << report.to_text();
  return report.ready() ? 0 : 1;
}

// The reboot permission (--allow-reboot) and the reboot announced before this start, if any: it is resumed (or
// failed, naming the masks) even without --allow-reboot now, since the controller holds its run for this agent.
Status configure_reboots(const agent::AgentConfig& cfg, const std::string& journal_dir, agent::AgentOptions& options) {
  if (!journal_dir.empty()) {
    options.reboot.pending_file = agent::pending_reboot_file(journal_dir);
    JS_ASSIGN_OR_RETURN(options.resume_after_reboot, agent::load_pending_reboot(options.reboot.pending_file));
  }
  if (!cfg.allow_reboot) return Status::ok();
  auto words = [](const std::string& text) {
    std::istringstream in(text);
    return std::vector<std::string>(std::istream_iterator<std::string>(in), std::istream_iterator<std::string>());
  };
  options.reboot.allowed = true;
  options.reboot.nvpmodel_command = words(cfg.nvpmodel_command);
  options.reboot.reboot_command = words(cfg.reboot_command);
  options.reboot.expected_back = std::chrono::seconds(static_cast<int64_t>(std::llround(cfg.reboot_timeout_s)));
  JS_LOG_INFO << "agent " << cfg.name << ": may reboot the board for modes with other GPU masks ("
              << (cfg.backend == "sim" ? std::string("modelled") : "`" + cfg.nvpmodel_command + " -m ID`, then `" +
                                                                     cfg.reboot_command + "`")
              << "; back within " << options.reboot.expected_back.count() << " s)";
  return Status::ok();
}

int serve(const agent::AgentConfig& cfg) {
  log::set_component("agent " + cfg.name);
  auto executor = agent::RunExecutor::open(executor_options(cfg));
  if (!executor) return fail(executor.status().message(), 1);
  std::shared_ptr<agent::RunExecutor> shared_executor = std::move(executor).value();
  std::shared_ptr<agent::Journal> journal;
  std::string journal_dir;
  if (!cfg.no_journal) {
    std::string dir = cfg.journal_dir;
    if (dir.empty()) {
      auto d = agent::default_journal_dir(cfg.name);
      if (!d) return fail(d.status().message(), 2);
      dir = d.value();
    }
    auto j = agent::Journal::open(dir, cfg.name);
    if (!j) return fail(j.status().message(), 1);
    journal = std::move(j).value();
    journal_dir = dir;
    JS_LOG_INFO << "agent " << cfg.name << ": journal " << dir << " (" << journal->recovery().entries
                << " messages to replay, next id " << journal->next_id() << ")";
  } else {
    JS_LOG_WARN << "agent " << cfg.name << ": --no-journal: results not yet acknowledged are lost if this agent dies";
  }
  std::string secret = cfg.enroll_secret;
  if (secret.empty()) {
    const char* env = std::getenv("JETSWEEP_ENROLL_SECRET");
    if (env) secret = env;
  }
  boost::asio::io_context ioc(1);
  agent::AgentOptions options;
  options.host = cfg.host;
  options.port = cfg.port;
  options.target = cfg.target;
  options.name = cfg.name;
  options.root = cfg.root;
  options.facts = agent::collect_host_facts(cfg.root, cfg.backend, cfg.device_class);
  shared_executor->describe(options.facts);
  for (const auto& spec : cfg.storage) options.facts.storage.push_back(spec.substr(0, spec.find('=')));
  options.facts.accelerator = shared_executor->accelerator_fact();
  {
    // Readiness, registered with the controller (`jetsweep agents` shows what is not ready).
    const agent::DoctorReport report = agent::run_doctor(doctor_options(cfg, journal_dir));
    options.facts.not_ready = report.failures();
    for (const auto& f : options.facts.not_ready) JS_LOG_WARN << "agent " << cfg.name << ": not ready: " << f;
  }
  options.executor = shared_executor;
  options.journal = journal;
  options.outbox.memory_bytes = static_cast<uint64_t>(cfg.outbox_memory_mb) << 20;
  options.outbox.journal_bytes = static_cast<uint64_t>(cfg.journal_max_mb) << 20;
  options.enroll_secret = secret;
  if (cfg.tls) {
    auto tls = net::make_client_tls_context(cfg.ca_file);
    if (!tls) return fail(tls.status().message(), 2);
    options.tls = std::move(tls).value();
    options.ca_file = cfg.ca_file;
  } else if (!net::is_loopback_host(cfg.host)) {
    JS_LOG_WARN << "agent " << cfg.name << ": " << cfg.controller_url
                << " is not encrypted: the enrollment secret and all results travel in clear; use wss:// with --ca "
                   "(docs/SECURITY.md)";
  }
  if (!journal_dir.empty()) {
    // The credential lives with the journal: both belong to this agent name on this board.
    options.credential_file = journal_dir + "/credential";
    auto credential = agent::load_credential(options.credential_file);
    if (!credential) return fail(credential.status().message(), 1);
    options.credential = credential.value();
  }
  options.idle_restore = std::chrono::milliseconds(static_cast<int64_t>(cfg.idle_restore_s * 1000.0));
  if (Status s = configure_reboots(cfg, journal_dir, options); !s.is_ok()) return fail(s.message(), 1);
  if (cfg.backend == "sim" && options.resume_after_reboot && options.resume_after_reboot->commands_started) {
    // Stopped during its simulated board's modelled reboot: the board has rebooted meanwhile, as a real one would.
    const std::atomic<bool> never{false};
    auto back = shared_executor->reboot_into(options.reboot, options.resume_after_reboot->announced, never);
    if (!back) return fail(back.status().message(), 1);
    shared_executor->describe(options.facts);
  }
  options.facts.may_reboot = options.reboot.allowed;
  JS_LOG_INFO << "agent " << cfg.name << ": backend " << options.facts.backend << ", device class "
              << options.facts.device_class << " (" << options.facts.kernel << ")";
  auto a = std::make_shared<agent::Agent>(ioc, options);
  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([a](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    JS_LOG_INFO << "signal " << sig << " received";
    a->shutdown();
  });
  a->start();
  // Run until the agent has stopped; then drop the signal handler so run() can return.
  while (a->state() != agent::AgentState::kStopped) {
    if (ioc.run_one() == 0) break;
  }
  signals.cancel();
  ioc.poll();
  Status released = a->release_board();
  if (!released.is_ok()) {
    JS_LOG_ERROR << "agent " << cfg.name << ": " << released.to_string();
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto cfg = agent::parse_agent_args(args);
  if (!cfg) {
    std::cerr << "jetsweep-agent: " << cfg.status().message() << "\n(jetsweep-agent --help lists the flags)\n";
    return 2;
  }
  if (cfg->verbose) log::set_min_level(log::Level::kDebug);
  switch (cfg->mode) {
    case agent::AgentConfig::Mode::kHelp:
      std::cout << agent::agent_usage();
      return 0;
    case agent::AgentConfig::Mode::kRun:
      log::set_component("agent run");
      return run_standalone(cfg.value());
    case agent::AgentConfig::Mode::kProfile:
      log::set_component("agent profile");
      return run_profile(cfg.value());
    case agent::AgentConfig::Mode::kModels:
      return list_models(cfg.value());
    case agent::AgentConfig::Mode::kMakeData:
      return make_data(cfg.value());
    case agent::AgentConfig::Mode::kDevice:
      return device::device_cli_main(cfg->device_command, cfg->device_args, std::cout, std::cerr);
    case agent::AgentConfig::Mode::kDoctor:
      return doctor(cfg.value());
    case agent::AgentConfig::Mode::kServe:
      return serve(cfg.value());
  }
  return 0;
}
