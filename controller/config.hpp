// Command-line parsing for jetsweep-controller. Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.hpp"
#include "controller/controller.hpp"

namespace jetsweep::controller {

struct ControllerConfig {
  std::string db_dsn;
  std::string listen_host = "127.0.0.1";
  unsigned short listen_port = 8420;
  std::string port_file;          // written with the bound port once listening (useful with port 0)
  std::string tls_cert, tls_key;  // PEM files: serve https/wss (plain only from loopback); both or neither
  ControllerOptions options;
  int max_attempts = 3;
  int ingest_connections = 2;     // DbWorkers (PostgreSQL connections) for agents' results
  bool verbose = false;
  bool help = false;
};

Result<ControllerConfig> parse_controller_args(const std::vector<std::string>& args);
std::string controller_usage();

}  // namespace jetsweep::controller
