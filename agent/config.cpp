#include "agent/config.hpp"

namespace jetsweep::agent {

std::string agent_usage() {
  return "usage:\n"
         "  jetsweep-agent --controller ws://HOST:PORT --name NAME [--root DIR] [--verbose]\n"
         "      dial out to a controller, register, run assigned runs one at a time\n"
         "  jetsweep-agent run --spec FILE.yaml --out FILE.jsonl [--root DIR]\n"
         "      one run without a controller; one JSON object per line\n"
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
    } else if (first == "help" || first == "--help" || first == "-h") {
      c.mode = AgentConfig::Mode::kHelp;
      return c;
    }
  }
  auto value = [&](const std::string& flag) -> Result<std::string> {
    if (i + 1 >= args.size()) return invalid_argument(flag + ": missing value");
    return args[++i];
  };
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
    } else if (a == "--verbose" || a == "-v") {
      c.verbose = true;
    } else {
      return invalid_argument("unknown argument '" + a + "'");
    }
  }
  if (c.mode == AgentConfig::Mode::kRun) {
    if (c.spec_path.empty()) return invalid_argument("run: --spec FILE.yaml is required");
    if (c.out_path.empty()) return invalid_argument("run: --out FILE.jsonl is required");
    return c;
  }
  if (c.controller_url.empty()) return invalid_argument("--controller ws://HOST:PORT is required");
  if (c.name.empty()) return invalid_argument("--name NAME is required");
  JS_RETURN_IF_ERROR(parse_ws_url(c.controller_url, c.host, c.port, c.target));
  return c;
}

}  // namespace jetsweep::agent
