#include "controller/config.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <optional>

#include "common/text.hpp"
#include "net/secret_file.hpp"

namespace jetsweep::controller {
namespace {

// The flags as given (text), converted and checked after parsing so that errors name the flag.
struct FlagText {
  std::optional<std::string> listen, heartbeat_ms, lease_s, max_attempts, ingest_connections, max_model_mb, max_ingest_mb;
  std::optional<std::string> api_token_file, enroll_secret_file, viewer_token_file;
  CLI::Option* api_token = nullptr;
  CLI::Option* enroll_secret = nullptr;
};

void declare(CLI::App& app, ControllerConfig& c, FlagText& t) {
  auto text = [&](const char* name, std::string& into, const char* value_name, const char* help) {
    app.add_option(name, into, help)->type_name(value_name)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  auto number = [&](const char* name, std::optional<std::string>& into, const char* value_name, const char* help) {
    app.add_option(name, into, help)->type_name(value_name)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  text("--db", c.db_dsn, "DSN", "PostgreSQL connection string (libpq syntax or postgresql:// URI); required");
  number("--listen", t.listen, "HOST:PORT",
         "address for agents (ws://H:P/agent) and the HTTP API (default 127.0.0.1:8420; port 0 picks a free port)");
  text("--port-file", c.port_file, "FILE", "write the bound port to FILE once listening");
  number("--heartbeat-ms", t.heartbeat_ms, "N", "heartbeat interval announced to agents (default 1000)");
  number("--lease-s", t.lease_s, "N", "requeue runs of agents disconnected longer than N seconds (default 30)");
  number("--max-attempts", t.max_attempts, "N", "assignments per run before it is declared lost (default 3)");
  number("--max-model-mb", t.max_model_mb, "N", "the largest model file users may upload, in MiB (default 1024)");
  number("--max-ingest-mb", t.max_ingest_mb, "N",
         "agents' results read and waiting for the database, all agents together, in MiB: reading pauses beyond it "
         "(each agent still gets one through) (default 32)");
  number("--ingest-connections", t.ingest_connections, "N",
         "database connections for agents' results, each agent's on one of them so its acknowledgements stay "
         "in order (default 2)");
  t.enroll_secret = app.add_option("--enroll-secret", c.options.enroll_secret,
                                   "agents must present S (default $JETSWEEP_ENROLL_SECRET; unset = no check; "
                                   "visible in the process list: prefer --enroll-secret-file)")
                        ->type_name("S")
                        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  number("--enroll-secret-file", t.enroll_secret_file, "FILE",
         "the enrollment secret read from FILE (one line; chmod 600)");
  t.api_token = app.add_option("--api-token", c.options.api_token,
                               "API clients must present T (default $JETSWEEP_API_TOKEN; unset = no check; visible "
                               "in the process list: prefer --api-token-file)")
                    ->type_name("T")
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  number("--api-token-file", t.api_token_file, "FILE", "the API token read from FILE (one line; chmod 600)");
  number("--viewer-token-file", t.viewer_token_file, "FILE",
         "a read-only token read from FILE (one line; chmod 600): it may GET (the dashboard, reports) but not change "
         "anything; needs --api-token[-file]");
  text("--tls-cert", c.tls_cert, "FILE",
       "PEM certificate chain: serve https:// and wss:// on the port (plain http/ws then only from loopback)");
  text("--tls-key", c.tls_key, "FILE", "PEM private key of --tls-cert");
  text("--model-dir", c.options.model_dir, "DIR",
       "adaptive-profiling plans keep their reference networks here between fits and restarts (default: not kept)");
  app.add_flag("-v,--verbose", c.verbose, "debug logging");
}

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "Serves agents (ws://HOST:PORT/agent) and the HTTP JSON API on one port; the database is migrated at start.",
      "jetsweep-controller");
  app->allow_extras();
  app->get_formatter()->column_width(30);
  return app;
}

Result<int64_t> integer_in(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  const auto x = parse_int(v);
  if (!x || *x < lo || *x > hi || v.empty() || v.find_first_of(" \t") != std::string::npos)
    return invalid_argument(flag + ": '" + v + "' is not an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
  return *x;
}

// Checks and converts the numeric flags into `c`.
Status apply(const FlagText& t, ControllerConfig& c) {
  if (t.listen) {
    const std::string& v = *t.listen;
    const auto colon = v.rfind(':');
    if (colon == std::string::npos || colon == 0) return invalid_argument("--listen '" + v + "': expected HOST:PORT");
    c.listen_host = v.substr(0, colon);
    JS_ASSIGN_OR_RETURN(int64_t port, integer_in("--listen port", v.substr(colon + 1), 0, 65535));
    c.listen_port = static_cast<unsigned short>(port);
  }
  if (t.heartbeat_ms) {
    JS_ASSIGN_OR_RETURN(int64_t ms, integer_in("--heartbeat-ms", *t.heartbeat_ms, 50, 600000));
    c.options.heartbeat_interval = std::chrono::milliseconds(ms);
  }
  if (t.lease_s) {
    JS_ASSIGN_OR_RETURN(int64_t s, integer_in("--lease-s", *t.lease_s, 1, 86400 * 7));
    c.options.lease_s = static_cast<double>(s);
  }
  if (t.max_model_mb) {
    JS_ASSIGN_OR_RETURN(int64_t mb, integer_in("--max-model-mb", *t.max_model_mb, 1, 65536));
    c.options.max_model_bytes = mb << 20;
  }
  if (t.max_ingest_mb) {
    JS_ASSIGN_OR_RETURN(int64_t mb, integer_in("--max-ingest-mb", *t.max_ingest_mb, 1, 65536));
    c.options.max_ingest_bytes = static_cast<size_t>(mb) << 20;
  }
  if (t.max_attempts) {
    JS_ASSIGN_OR_RETURN(int64_t n, integer_in("--max-attempts", *t.max_attempts, 1, 1000));
    c.max_attempts = static_cast<int>(n);
  }
  c.options.analysis_dsn = c.db_dsn;   // adaptive plans' references may name campaigns of the same database
  if (t.ingest_connections) {
    JS_ASSIGN_OR_RETURN(int64_t n, integer_in("--ingest-connections", *t.ingest_connections, 1, 64));
    c.ingest_connections = static_cast<int>(n);
  }
  return Status::ok();
}

// The secrets from their flags, files or environment, and the TLS files (both or neither).
Status apply_secrets_and_tls(const FlagText& t, ControllerConfig& c) {
  JS_ASSIGN_OR_RETURN(c.options.enroll_secret,
                      net::resolve_secret("--enroll-secret", c.options.enroll_secret, t.enroll_secret->count() > 0,
                                          "--enroll-secret-file", t.enroll_secret_file.value_or(""),
                                          t.enroll_secret_file.has_value()));
  JS_ASSIGN_OR_RETURN(c.options.api_token,
                      net::resolve_secret("--api-token", c.options.api_token, t.api_token->count() > 0,
                                          "--api-token-file", t.api_token_file.value_or(""),
                                          t.api_token_file.has_value()));
  if (t.viewer_token_file) {
    JS_ASSIGN_OR_RETURN(c.options.viewer_token, net::read_secret_file("--viewer-token-file", *t.viewer_token_file));
    if (c.options.api_token.empty())
      return invalid_argument("--viewer-token-file needs an API token (--api-token-file FILE or $JETSWEEP_API_TOKEN): "
                              "without one the API is open to everyone anyway");
    if (c.options.viewer_token == c.options.api_token)
      return invalid_argument("--viewer-token-file: the viewer token must differ from the API token");
  }
  if (c.tls_cert.empty() != c.tls_key.empty())
    return invalid_argument(c.tls_cert.empty() ? "--tls-key needs --tls-cert FILE (give both or neither)"
                                               : "--tls-cert needs --tls-key FILE (give both or neither)");
  return Status::ok();
}

}  // namespace

std::string controller_usage() {
  ControllerConfig c;
  FlagText t;
  auto app = make_app();
  declare(*app, c, t);
  return app->help();
}

Result<ControllerConfig> parse_controller_args(const std::vector<std::string>& args) {
  ControllerConfig c;
  if (const char* e = std::getenv("JETSWEEP_ENROLL_SECRET")) c.options.enroll_secret = e;
  if (const char* t = std::getenv("JETSWEEP_API_TOKEN")) c.options.api_token = t;
  FlagText t;
  auto app = make_app();
  declare(*app, c, t);
  std::vector<std::string> reversed(args.rbegin(), args.rend());   // CLI11 consumes from the back
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    c.help = true;
    return c;
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    if (e.get_name() == "ArgumentMismatch") return invalid_argument(what.substr(0, what.find(':')) + ": missing value");
    return invalid_argument(what);
  }
  if (const auto extra = app->remaining(); !extra.empty()) return invalid_argument("unknown argument '" + extra[0] + "'");
  JS_RETURN_IF_ERROR(apply(t, c));
  JS_RETURN_IF_ERROR(apply_secrets_and_tls(t, c));
  if (c.db_dsn.empty()) return invalid_argument("--db DSN is required");
  return c;
}

}  // namespace jetsweep::controller
