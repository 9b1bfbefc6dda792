// Command-line parsing for jetsweep-agent. Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::agent {

struct AgentConfig {
  enum class Mode { kServe, kRun, kDevice, kHelp } mode = Mode::kServe;
  // serve
  std::string controller_url;   // ws://HOST:PORT[/path]
  std::string host, port, target = "/agent";
  std::string name;
  std::string backend = "host";
  std::string device_class = "host";
  // run
  std::string spec_path;
  std::string out_path;
  // shared
  std::string root = "/";
  bool verbose = false;
  // device subcommands (probe, set-mode, restore): passed through
  std::string device_command;
  std::vector<std::string> device_args;
};

Result<AgentConfig> parse_agent_args(const std::vector<std::string>& args);
// Splits "ws://host:port/path" into parts; errors name the URL.
Status parse_ws_url(const std::string& url, std::string& host, std::string& port, std::string& target);
std::string agent_usage();

}  // namespace jetsweep::agent
