// jetsweep-agent: thin entry point; see agent/config.hpp for the CLI and agent/agent.hpp for the state machine.
#include <boost/asio.hpp>
#include <fstream>
#include <iostream>

#include "agent/agent.hpp"
#include "agent/config.hpp"
#include "agent/device/device_cli.hpp"
#include "agent/host_facts.hpp"
#include "agent/run_executor.hpp"
#include "common/campaign.hpp"
#include "common/log.hpp"


using namespace jetsweep;

namespace {

agent::ExecutorOptions executor_options(const agent::AgentConfig& cfg) {
  agent::ExecutorOptions o;
  o.backend = cfg.backend;
  o.root = cfg.root;
  o.state_dir = cfg.state_dir;
  o.sim_class = cfg.sim_class;
  o.sim_instance = cfg.sim_instance;
  o.time_scale = cfg.time_scale;
  return o;
}

int run_standalone(const agent::AgentConfig& cfg) {
  auto spec = load_run_spec_file(cfg.spec_path);
  if (!spec) {
    std::cerr << "jetsweep-agent: " << spec.status().message() << "\n";
    return 2;
  }
  std::ofstream out(cfg.out_path, std::ios::trunc);
  if (!out) {
    std::cerr << "jetsweep-agent: " << cfg.out_path << ": cannot open for writing\n";
    return 2;
  }
  agent::JsonLinesSink sink(out);
  auto executor = agent::RunExecutor::open(executor_options(cfg));
  if (!executor) {
    std::cerr << "jetsweep-agent: " << executor.status().message() << "\n";
    return 1;
  }
  if (!(*executor)->has_power_sensor()) JS_LOG_WARN << "no power sensor readable: energy_j will be null";
  std::atomic<bool> cancel{false};
  auto fin = (*executor)->execute(0, spec.value(), sink, cancel);
  Status restored = (*executor)->board_modified() ? (*executor)->restore_board() : Status::ok();
  if (!restored.is_ok()) std::cerr << "jetsweep-agent: " << restored.message() << "\n";
  if (fin.status != "done") {
    std::cerr << "jetsweep-agent: run failed: " << fin.error << "\n";
    return 1;
  }
  return restored.is_ok() ? 0 : 1;
}

int serve(const agent::AgentConfig& cfg) {
  log::set_component("agent " + cfg.name);
  auto executor = agent::RunExecutor::open(executor_options(cfg));
  if (!executor) {
    std::cerr << "jetsweep-agent: " << executor.status().message() << "\n";
    return 1;
  }
  std::shared_ptr<agent::RunExecutor> shared_executor = std::move(executor).value();
  boost::asio::io_context ioc(1);
  agent::AgentOptions options;
  options.host = cfg.host;
  options.port = cfg.port;
  options.target = cfg.target;
  options.name = cfg.name;
  options.root = cfg.root;
  options.facts = agent::collect_host_facts(cfg.root, cfg.backend, cfg.device_class);
  shared_executor->describe(options.facts);
  options.executor = shared_executor;
  options.idle_restore = std::chrono::milliseconds(static_cast<int64_t>(cfg.idle_restore_s * 1000.0));
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
    std::cerr << "jetsweep-agent: " << cfg.status().message() << "\n" << agent::agent_usage();
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
    case agent::AgentConfig::Mode::kDevice:
      return device::device_cli_main(cfg->device_command, cfg->device_args, std::cout, std::cerr);
    case agent::AgentConfig::Mode::kServe:
      return serve(cfg.value());
  }
  return 0;
}
