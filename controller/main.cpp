// jetsweep-controller: thin entry point. Opens the database (migrating it), then serves agents and the API
// on one port until SIGINT/SIGTERM. The io_context runs on a single thread; the database on its own.
#include <boost/asio.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/log.hpp"
#include "controller/config.hpp"
#include "controller/io_thread.hpp"
#include "controller/pg_store.hpp"
#include "controller/server.hpp"
#include "net/tls.hpp"

using namespace jetsweep;
using namespace jetsweep::controller;

int main(int argc, char** argv) {
  auto cfg = parse_controller_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!cfg) {
    std::cerr << "jetsweep-controller: " << cfg.status().message() << "\n" << controller_usage();
    return 2;
  }
  if (cfg->help) {
    std::cout << controller_usage();
    return 0;
  }
  log::set_component("controller");
  if (cfg->verbose) log::set_min_level(log::Level::kDebug);
  std::shared_ptr<boost::asio::ssl::context> tls;
  if (!cfg->tls_cert.empty()) {
    auto made = net::make_server_tls_context(cfg->tls_cert, cfg->tls_key);
    if (!made) {
      std::cerr << "jetsweep-controller: " << made.status().message() << "\n";
      return 2;
    }
    tls = std::move(made).value();
  }

  auto store = std::make_unique<PgStore>(cfg->db_dsn, cfg->max_attempts);
  // The database may still be starting: retry for a while before giving up.
  Status s = store->connect();
  for (int attempt = 1; !s.is_ok() && s.code() == Code::kUnavailable && attempt <= 30; ++attempt) {
    JS_LOG_WARN << s.message() << " (attempt " << attempt << " of 30)";
    std::this_thread::sleep_for(std::chrono::seconds(1));
    s = store->connect();
  }
  if (s.is_ok()) s = store->migrate();
  if (s.is_ok()) s = store->reset_connections();
  if (!s.is_ok()) {
    JS_LOG_ERROR << s.to_string();
    return 1;
  }

  // The threading rule's check (controller/io_thread.hpp) is always on in builds without NDEBUG; elsewhere
  // JETSWEEP_CHECK_IO_THREAD=1 turns it on (scripts/test does, for every controller the tests start).
  if (const char* check = std::getenv("JETSWEEP_CHECK_IO_THREAD"); check && std::strcmp(check, "1") == 0)
    IoThreadChecker::set_enabled(true);
  boost::asio::io_context ioc(1);
  DbWorker db(std::move(store));
  db.start();
  std::vector<std::unique_ptr<DbWorker>> ingest_workers;
  std::vector<DbWorker*> ingest;
  for (int i = 0; i < cfg->ingest_connections; ++i) {
    ingest_workers.push_back(std::make_unique<DbWorker>(std::make_unique<PgStore>(cfg->db_dsn, cfg->max_attempts)));
    ingest_workers.back()->start();
    ingest.push_back(ingest_workers.back().get());
  }
  auto controller = std::make_shared<Controller>(ioc, db, cfg->options, ingest);
  auto listener = std::make_shared<Listener>(ioc, controller, tls);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(cfg->listen_host, ec);
  if (ec) {
    std::cerr << "jetsweep-controller: --listen: '" << cfg->listen_host << "' is not an IP address\n";
    return 2;
  }
  s = listener->listen({address, cfg->listen_port});
  if (!s.is_ok()) {
    JS_LOG_ERROR << s.message();
    return 1;
  }
  const auto bound = listener->local_endpoint();
  JS_LOG_INFO << "listening on " << bound.address().to_string() << ":" << bound.port()
              << (tls ? " (agents: wss://.../agent, API: https://.../api; plain ws/http from loopback only)"
                      : " (agents: ws://.../agent, API: http://.../api)");
  JS_LOG_INFO << "dashboard: " << (tls ? "https://" : "http://") << bound.address().to_string() << ":" << bound.port()
              << "/" << (cfg->options.api_token.empty() ? "" : " (log in with the API token or the viewer token)");
  if (!tls && !net::is_loopback(bound.address()))
    JS_LOG_WARN << "listening on " << bound.address().to_string()
                << " without TLS: the enrollment secret, the API token and all results travel in clear; pass "
                   "--tls-cert FILE --tls-key FILE (docs/SECURITY.md)";
  if (!cfg->port_file.empty()) {
    const std::string tmp = cfg->port_file + ".tmp";
    std::ofstream(tmp) << bound.port() << "\n";
    std::rename(tmp.c_str(), cfg->port_file.c_str());  // atomic: readers never see a partial file
  }
  if (cfg->options.enroll_secret.empty())
    JS_LOG_WARN << "no enrollment secret (--enroll-secret / $JETSWEEP_ENROLL_SECRET): any agent that can reach this port may join";
  if (cfg->options.api_token.empty())
    JS_LOG_WARN << "no API token (--api-token / $JETSWEEP_API_TOKEN): the HTTP API is open to anyone who can reach it";
  controller->start();
  listener->start();

  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& e, int sig) {
    if (e) return;
    JS_LOG_INFO << "signal " << sig << " received, shutting down";
    listener->stop();
    controller->stop();
    ioc.stop();
  });
  ioc.run();
  for (auto& w : ingest_workers) w->stop();
  db.stop();
  JS_LOG_INFO << "stopped";
  return 0;
}
