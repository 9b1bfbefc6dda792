// Shared fixture of the integration and fault tests: a fresh database per test (from the admin DSN in
// JETSWEEP_TEST_DSN, set by scripts/test), a controller process and agent processes with their logs.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <pqxx/pqxx>

#include "cli/client.hpp"
#include "support/dataset_gen.hpp"
#include "support/process.hpp"
#include "support/test_database.hpp"
#include "support/temp_dir.hpp"

namespace jetsweep::testing {
namespace bj = boost::json;
using namespace std::chrono_literals;

// The binaries the tests start: the build's, or a copy named by JETSWEEP_TEST_BIN_DIR (bench/chaos runs a long soak
// on a copy, so that a rebuild meanwhile does not swap the binaries under it).
inline const std::string kBin = std::getenv("JETSWEEP_TEST_BIN_DIR") ? std::getenv("JETSWEEP_TEST_BIN_DIR") : JETSWEEP_BIN_DIR;

// One controller process plus any number of agents, with their logs kept in a temp dir.
class Fleet {
 public:
  explicit Fleet(const TestDatabase& db, std::vector<std::string> controller_extra = {}) : db_(db) {
    start_controller("0", std::move(controller_extra));
  }
  void start_controller(const std::string& port, std::vector<std::string> extra) {
    const std::string port_file = (dir_ / "controller.port").string();
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {"--db", db_.dsn(), "--listen", "127.0.0.1:" + port, "--port-file", port_file,
                                     "--heartbeat-ms", "200"};
    args.insert(args.end(), extra.begin(), extra.end());
    controller_ = std::make_unique<Process>(kBin + "/jetsweep-controller", args, (dir_ / "controller.log").string());
    REQUIRE_MESSAGE(wait_until(60s, [&] { return std::filesystem::exists(port_file); }), controller_->log());
    std::ifstream(port_file) >> port_;
    url_ = "http://127.0.0.1:" + std::to_string(port_);
  }
  // An agent dialling the controller, or `via_port` (e.g. a fault-injecting proxy) when given; `env` (NAME=value
  // each) is added to its environment (started through env(1), which execs it: the pid is the agent's).
  Process& add_agent(const std::string& name, std::vector<std::string> extra = {}, int via_port = 0,
                     const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"--controller", "ws://127.0.0.1:" + std::to_string(via_port ? via_port : port_),
                                     "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    // Each test agent journals inside this fleet's temp dir unless the test says otherwise.
    if (std::find(extra.begin(), extra.end(), "--no-journal") == extra.end() &&
        std::find(extra.begin(), extra.end(), "--journal-dir") == extra.end())
      args.insert(args.end(), {"--journal-dir", (dir_ / ("journal-" + name)).string()});
    std::string exe = kBin + "/jetsweep-agent";
    if (!env.empty()) {
      args.insert(args.begin(), exe);
      args.insert(args.begin(), env.begin(), env.end());
      exe = "/usr/bin/env";
    }
    agents_.push_back(std::make_unique<Process>(exe, args, (dir_ / (name + ".log")).string()));
    return *agents_.back();
  }
  bool agents_connected(size_t n) {
    auto r = cli::http_request(url_, "GET", "/api/agents");
    if (!r || r->status != 200) return false;
    size_t connected = 0;
    const bj::value agents = bj::parse(r->body);
    for (const auto& a : agents.as_array()) connected += a.at("connected").as_bool() ? 1 : 0;
    return connected >= n;
  }
  bj::object status(int64_t campaign) {
    auto r = cli::http_request(url_, "GET", "/api/campaigns/" + std::to_string(campaign));
    if (!r || r->status != 200) return {};
    return bj::parse(r->body).as_object();
  }
  // Whether the campaign is finished; fails the test at once, with every log, when the controller has died
  // (waiting on a dead controller would only run out the clock).
  bool finished(int64_t campaign) {
    REQUIRE_MESSAGE(controller_->running(), "the controller is not running: " << controller_exit() << "\n" << logs());
    auto s = status(campaign);
    return s.contains("finished") && s.at("finished").as_bool();
  }
  // How the controller process ended, e.g. "killed by signal 13 (Broken pipe)"; "running" while it runs.
  std::string controller_exit() {
    if (controller_->running()) return "running";
    const int status = controller_->wait(0ms);
    if (status > 128) return "killed by signal " + std::to_string(status - 128) + " (" + strsignal(status - 128) + ")";
    return "exited with status " + std::to_string(status);
  }
  std::string logs() const {
    std::string all = "--- controller\n" + controller_->log();
    for (const auto& a : agents_) all += "--- " + a->log_path() + "\n" + a->log();
    return all;
  }
  std::string cli(const std::vector<std::string>& args, int expect = 0) {
    std::vector<std::string> full = {"--controller", url_};
    full.insert(full.end(), args.begin(), args.end());
    std::string out, err;
    int rc = run_command(kBin + "/jetsweep", full, &out, &err);
    CHECK_MESSAGE(rc == expect, "jetsweep " << args[0] << " exited " << rc << ": " << err);
    return out;
  }
  Process& controller() { return *controller_; }
  int port() const { return port_; }
  const std::string& url() const { return url_; }
  const TempDir& dir() const { return dir_; }

 private:
  const TestDatabase& db_;
  TempDir dir_;
  std::unique_ptr<Process> controller_;
  std::vector<std::unique_ptr<Process>> agents_;
  int port_ = 0;
  std::string url_;
};

inline std::string campaign_yaml(const std::string& name, const std::string& data, const std::string& batch_sizes,
                          const std::string& workers, int epochs) {
  return "campaign: " + name + "\nmatrix:\n  model: lenet5\n  dataset: mnist\n  data: " + data +
         "\n  batch_size: " + batch_sizes + "\n  workers: " + workers + "\n  prefetch: 2\n  epochs: " +
         std::to_string(epochs) + "\n  threads: 1\n  seed: 3\n";
}

inline int64_t submit(Fleet& fleet, const std::filesystem::path& file) {
  auto out = fleet.cli({"submit", "--json", file.string()});
  return bj::parse(out).as_object().at("campaign_id").as_int64();
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }


}  // namespace jetsweep::testing
