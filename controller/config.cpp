#include "controller/config.hpp"

#include <cstdlib>

namespace jetsweep::controller {

std::string controller_usage() {
  return "usage: jetsweep-controller --db DSN [--listen HOST:PORT] [--port-file FILE]\n"
         "                           [--heartbeat-ms N] [--lease-s N] [--verbose]\n"
         "  --db DSN          PostgreSQL connection string (libpq syntax or postgresql:// URI)\n"
         "  --listen H:P      address for agents (ws://H:P/agent) and the HTTP API (default 127.0.0.1:8420;\n"
         "                    port 0 picks a free port)\n"
         "  --port-file FILE  write the bound port to FILE once listening\n"
         "  --heartbeat-ms N  heartbeat interval announced to agents (default 1000)\n"
         "  --lease-s N       requeue runs of agents disconnected longer than N seconds (default 30)\n"
         "  --max-attempts N  assignments per run before it is declared lost (default 3)\n"
         "  --ingest-connections N  database connections for agents' results, each agent's on one of them so\n"
         "                    its acknowledgements stay in order (default 2)\n"
         "  --enroll-secret S agents must present S (default $JETSWEEP_ENROLL_SECRET; unset = no check)\n"
         "  --api-token T     API clients must present T (default $JETSWEEP_API_TOKEN; unset = no check)\n";
}

namespace {
Result<long long> parse_int(const std::string& flag, const std::string& v, long long lo, long long hi) {
  try {
    size_t used = 0;
    long long x = std::stoll(v, &used);
    if (used != v.size() || x < lo || x > hi) throw std::out_of_range(v);
    return x;
  } catch (const std::exception&) {
    return invalid_argument(flag + ": '" + v + "' is not an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
  }
}
}  // namespace

Result<ControllerConfig> parse_controller_args(const std::vector<std::string>& args) {
  ControllerConfig c;
  if (const char* e = std::getenv("JETSWEEP_ENROLL_SECRET")) c.options.enroll_secret = e;
  if (const char* t = std::getenv("JETSWEEP_API_TOKEN")) c.options.api_token = t;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= args.size()) return invalid_argument(a + ": missing value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      c.help = true;
    } else if (a == "--db") {
      JS_ASSIGN_OR_RETURN(c.db_dsn, value());
    } else if (a == "--listen") {
      JS_ASSIGN_OR_RETURN(std::string v, value());
      auto colon = v.rfind(':');
      if (colon == std::string::npos || colon == 0) return invalid_argument("--listen '" + v + "': expected HOST:PORT");
      c.listen_host = v.substr(0, colon);
      JS_ASSIGN_OR_RETURN(long long port, parse_int("--listen port", v.substr(colon + 1), 0, 65535));
      c.listen_port = static_cast<unsigned short>(port);
    } else if (a == "--port-file") {
      JS_ASSIGN_OR_RETURN(c.port_file, value());
    } else if (a == "--heartbeat-ms") {
      JS_ASSIGN_OR_RETURN(std::string v, value());
      JS_ASSIGN_OR_RETURN(long long ms, parse_int(a, v, 50, 600000));
      c.options.heartbeat_interval = std::chrono::milliseconds(ms);
    } else if (a == "--lease-s") {
      JS_ASSIGN_OR_RETURN(std::string v, value());
      JS_ASSIGN_OR_RETURN(long long s, parse_int(a, v, 1, 86400 * 7));
      c.options.lease_s = static_cast<double>(s);
    } else if (a == "--max-attempts") {
      JS_ASSIGN_OR_RETURN(std::string v, value());
      JS_ASSIGN_OR_RETURN(long long n, parse_int(a, v, 1, 1000));
      c.max_attempts = static_cast<int>(n);
    } else if (a == "--ingest-connections") {
      JS_ASSIGN_OR_RETURN(std::string v, value());
      JS_ASSIGN_OR_RETURN(long long n, parse_int(a, v, 1, 64));
      c.ingest_connections = static_cast<int>(n);
    } else if (a == "--enroll-secret") {
      JS_ASSIGN_OR_RETURN(c.options.enroll_secret, value());
    } else if (a == "--api-token") {
      JS_ASSIGN_OR_RETURN(c.options.api_token, value());
    } else if (a == "--verbose" || a == "-v") {
      c.verbose = true;
    } else {
      return invalid_argument("unknown argument '" + a + "'");
    }
  }
  if (c.help) return c;
  if (c.db_dsn.empty()) return invalid_argument("--db DSN is required");
  return c;
}

}  // namespace jetsweep::controller
