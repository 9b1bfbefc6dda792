// Integration tests: a real PostgreSQL (JETSWEEP_TEST_DSN, an admin DSN from scripts/test), real
// jetsweep-controller and jetsweep-agent processes on loopback, the real CLI, real LibTorch training
// on small data generated in the real IDX format.
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <memory>
#include <pqxx/pqxx>

#include "controller/cli/cli.hpp"
#include "support/dataset_gen.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

const std::string kBin = JETSWEEP_BIN_DIR;

std::string admin_dsn() {
  const char* dsn = std::getenv("JETSWEEP_TEST_DSN");
  // Not a skip: these tests must run; scripts/test starts PostgreSQL and sets this.
  REQUIRE_MESSAGE(dsn != nullptr, "JETSWEEP_TEST_DSN is not set: run the tests through scripts/test");
  return dsn;
}

// A fresh database per test, dropped afterwards.
class TestDatabase {
 public:
  TestDatabase() {
    static std::atomic<int> counter{0};
    name_ = "jetsweep_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    admin_ = admin_dsn();
    pqxx::connection c(admin_);
    pqxx::nontransaction n(c);
    n.exec("DROP DATABASE IF EXISTS " + name_);
    n.exec("CREATE DATABASE " + name_);
    dsn_ = admin_;
    auto pos = dsn_.find("dbname=");
    REQUIRE(pos != std::string::npos);
    dsn_ = dsn_.substr(0, pos) + "dbname=" + name_ + dsn_.substr(dsn_.find_first_of(' ', pos) == std::string::npos
                                                                        ? dsn_.size()
                                                                        : dsn_.find_first_of(' ', pos));
  }
  ~TestDatabase() {
    try {
      pqxx::connection c(admin_);
      pqxx::nontransaction n(c);
      n.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  const std::string& dsn() const { return dsn_; }
  int64_t count(const std::string& sql) const {
    pqxx::connection c(dsn_);
    pqxx::work w(c);
    return w.exec1(sql)[0].as<int64_t>();
  }

 private:
  std::string name_, admin_, dsn_;
};

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
  Process& add_agent(const std::string& name) {
    agents_.push_back(std::make_unique<Process>(
        kBin + "/jetsweep-agent",
        std::vector<std::string>{"--controller", "ws://127.0.0.1:" + std::to_string(port_), "--name", name},
        (dir_ / (name + ".log")).string()));
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
  bool finished(int64_t campaign) {
    auto s = status(campaign);
    return s.contains("finished") && s.at("finished").as_bool();
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

std::string campaign_yaml(const std::string& name, const std::string& data, const std::string& batch_sizes,
                          const std::string& workers, int epochs) {
  return "campaign: " + name + "\nmatrix:\n  model: lenet5\n  dataset: mnist\n  data: " + data +
         "\n  batch_size: " + batch_sizes + "\n  workers: " + workers + "\n  prefetch: 2\n  epochs: " +
         std::to_string(epochs) + "\n  threads: 1\n  seed: 3\n";
}

int64_t submit(Fleet& fleet, const std::filesystem::path& file) {
  auto out = fleet.cli({"submit", "--json", file.string()});
  return bj::parse(out).as_object().at("campaign_id").as_int64();
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("a small campaign runs on two agents and lands in PostgreSQL with exact counts") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 300;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, true);
  write_file(fleet.dir() / "small.yaml", campaign_yaml("small", (fleet.dir() / "data").string(), "[16, 64]", "[0, 2]", 2));
  fleet.add_agent("agent-a");
  fleet.add_agent("agent-b");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());

  const int64_t id = submit(fleet, fleet.dir() / "small.yaml");
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());

  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id)) == 4);
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 4);
  CHECK(db.count("SELECT count(DISTINCT agent_id) FROM runs") >= 1);
  CHECK(db.count("SELECT count(*) FROM epochs") == 8);
  const int64_t expected_minibatches = 2 * 2 * (ceil_div(kSamples, 16) + ceil_div(kSamples, 64));
  CHECK(db.count("SELECT count(*) FROM minibatches") == expected_minibatches);
  // Each epoch's summary agrees with its minibatch rows.
  CHECK(db.count("SELECT count(*) FROM epochs e WHERE e.minibatches <> (SELECT count(*) FROM minibatches m "
                 "WHERE m.run_id = e.run_id AND m.epoch = e.epoch)") == 0);
  CHECK(db.count("SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM samples s WHERE s.run_id = r.id)") == 0);
  CHECK(db.count("SELECT count(*) FROM runs WHERE facts->>'torch_version' = '' OR facts IS NULL") == 0);
  CHECK(db.count("SELECT count(*) FROM schema_migrations") >= 1);

  auto report = bj::parse(fleet.cli({"report", "--json", std::to_string(id)})).as_object();
  auto& runs = report.at("runs").as_array();
  REQUIRE(runs.size() == 4);
  for (const auto& rv : runs) {
    const auto& r = rv.as_object();
    CHECK(r.at("status") == "done");
    CHECK(r.at("simulated") == false);  // a real LibTorch run on a host agent
    const int64_t bs = r.at("config").at("batch_size").as_int64();
    const auto& epochs = r.at("epochs").as_array();
    REQUIRE(epochs.size() == 2);
    for (const auto& e : epochs) {
      CHECK(e.at("minibatches").as_int64() == ceil_div(kSamples, bs));
      CHECK(e.at("e2e_s").as_double() > 0);
      CHECK(e.as_object().contains("energy_j"));
    }
  }
  auto text = fleet.cli({"report", std::to_string(id)});
  CHECK(text.find("lenet5/mnist") != std::string::npos);
  auto status = bj::parse(fleet.cli({"status", "--json", "small"})).as_object();
  CHECK(status.at("done").as_int64() == 4);

  fleet.controller().signal(SIGTERM);
  CHECK(fleet.controller().wait(30s) == 0);
}

TEST_CASE("bad frames get an error back and never take the controller down") {
  TestDatabase db;
  Fleet fleet(db);
  namespace beast = boost::beast;
  namespace ws = beast::websocket;
  boost::asio::io_context ioc;
  ws::stream<beast::tcp_stream> s(ioc);
  beast::get_lowest_layer(s).connect(
      boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(fleet.port())));
  s.handshake("127.0.0.1", "/agent");
  auto exchange = [&](const std::string& frame) {
    s.write(boost::asio::buffer(frame));
    beast::flat_buffer buf;
    s.read(buf);
    return bj::parse(beast::buffers_to_string(buf.data())).as_object();
  };
  auto e1 = exchange("this is not json");
  CHECK(e1.at("type") == "error");
  CHECK(std::string(e1.at("message").as_string()).find("malformed JSON frame") == 0);
  auto e2 = exchange(R"({"type":"warp","version":1,"id":1})");
  CHECK(e2.at("message") == "unknown message type 'warp'");
  auto e3 = exchange(R"({"type":"heartbeat","version":9,"id":1,"state":"idle"})");
  CHECK(std::string(e3.at("message").as_string()).find("unsupported protocol version 9") != std::string::npos);
  auto e4 = exchange(R"({"type":"epoch_result","version":1,"id":1,"run_id":1,"epoch":0,"e2e_s":1,"stall_s":0,"compute_s":1,"minibatches":1})");
  CHECK(e4.at("message") == "first message must be 'register'");
  auto e5 = exchange(R"({"type":"register","version":1,"id":1,"name":"x","facts":{"hostname":3}})");
  CHECK(e5.at("message") == "message 'register' field 'facts', field 'hostname': expected a string, got integer");
  std::string huge = R"({"type":"heartbeat","version":1,"id":1,"state":")" + std::string(17u << 20, 'x') + "\"}";
  auto e6 = exchange(huge);
  CHECK(std::string(e6.at("message").as_string()).find("exceeds the limit") != std::string::npos);
  CHECK(fleet.controller().running());
  auto health = cli::http_request(fleet.url(), "GET", "/api/health");
  REQUIRE(health.is_ok());
  CHECK(health->status == 200);
  CHECK(fleet.controller().log().find("rejected frame") != std::string::npos);
}

TEST_CASE("a bad campaign is refused by the API with its place; unknown endpoints are 404") {
  TestDatabase db;
  Fleet fleet(db);
  auto r = cli::http_request(fleet.url(), "POST", "/api/campaigns",
                             "campaign: x\nmatrix:\n  model: lenet5\n  dataset: mnist\n  epochs: zero\n",
                             {{"X-Jetsweep-Source", "x.yaml"}});
  REQUIRE(r.is_ok());
  CHECK(r->status == 400);
  CHECK(bj::parse(r->body).at("error") == "x.yaml:5:11: 'epochs' expects an integer, got 'zero'");
  auto nf = cli::http_request(fleet.url(), "GET", "/api/campaigns/999/report");
  REQUIRE(nf.is_ok());
  CHECK(nf->status == 404);
  CHECK(cli::http_request(fleet.url(), "GET", "/nope")->status == 404);
  CHECK(db.count("SELECT count(*) FROM campaigns") == 0);
}

TEST_CASE("an agent killed mid-run: its run is requeued, finished by another agent, and counted once") {
  TestDatabase db;
  Fleet fleet(db, {"--lease-s", "1"});
  const int64_t kSamples = 200;
  const int kEpochs = 40;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "long.yaml", campaign_yaml("long", (fleet.dir() / "data").string(), "16", "0", kEpochs));
  auto& doomed = fleet.add_agent("doomed");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "long.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 2; }), fleet.logs());
  doomed.signal(SIGKILL);
  doomed.wait(10s);
  fleet.add_agent("rescuer");
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 1);
  CHECK(db.count("SELECT attempts FROM runs") == 2);
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.name = 'rescuer'") == 1);
  CHECK(db.count("SELECT count(*) FROM epochs") == kEpochs);
  CHECK(db.count("SELECT count(*) FROM minibatches") == kEpochs * ceil_div(kSamples, 16));
}

TEST_CASE("the controller killed with -9 and restarted: agents reconnect, resend, and nothing is lost or doubled") {
  TestDatabase db;
  Fleet fleet(db);
  const int64_t kSamples = 200;
  const int kEpochs = 30;
  write_idx_dataset((fleet.dir() / "data").string(), kSamples, false);
  write_file(fleet.dir() / "c.yaml", campaign_yaml("restart", (fleet.dir() / "data").string(), "[16, 32]", "[0, 1]", kEpochs));
  fleet.add_agent("survivor-1");
  fleet.add_agent("survivor-2");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "c.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 3; }), fleet.logs());
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  fleet.start_controller(std::to_string(fleet.port()), {});
  REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 4);
  CHECK(db.count("SELECT count(*) FROM epochs") == 4 * kEpochs);
  const int64_t per_epoch = 2 * ceil_div(kSamples, 16) + 2 * ceil_div(kSamples, 32);
  CHECK(db.count("SELECT count(*) FROM minibatches") == kEpochs * per_epoch);
}

TEST_CASE("simulated Nano, Xavier NX, AGX Xavier and AGX Orin agents: runs land marked simulated, with energy") {
  TestDatabase db;
  Fleet fleet(db);
  const std::vector<std::string> classes = {"nano", "xavier-nx", "agx-xavier", "agx-orin"};
  std::vector<std::unique_ptr<Process>> sims;
  for (const auto& cls : classes)
    sims.push_back(std::make_unique<Process>(
        kBin + "/jetsweep-agent",
        std::vector<std::string>{"--controller", "ws://127.0.0.1:" + std::to_string(fleet.port()), "--name",
                                 "sim-" + cls, "--sim", cls + "/1", "--time-scale", "0"},
        (fleet.dir() / ("sim-" + cls + ".log")).string()));
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(4); }), fleet.logs());
  write_file(fleet.dir() / "sim.yaml",
             "campaign: sim\nmatrix:\n  device: [nano, xavier-nx, agx-xavier, agx-orin]\n  model: lenet5\n"
             "  dataset: fashion-mnist\n  batch_size: 64\n  workers: 0\n  epochs: 2\n  sample_hz: 1\n"
             "  power_mode: {cores: 2, cpu_khz: 1036800}\n");
  const int64_t id = submit(fleet, fleet.dir() / "sim.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 4);
  // Each run went to an agent of the class it asked for.
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.device_class = r.device") == 4);
  CHECK(db.count("SELECT count(*) FROM minibatches") == 4 * 2 * ceil_div(60000, 64));
  auto report = bj::parse(fleet.cli({"report", "--json", std::to_string(id)})).as_object();
  CHECK(report.at("simulated_runs").as_int64() == 4);
  for (const auto& rv : report.at("runs").as_array()) {
    CHECK(rv.at("simulated") == true);
    CHECK(rv.at("facts").at("backend") == "sim");
    for (const auto& e : rv.at("epochs").as_array()) {
      CHECK(e.at("minibatches").as_int64() == ceil_div(60000, 64));
      REQUIRE(e.at("energy_j").is_double());
      CHECK(e.at("energy_j").as_double() > 0);
    }
  }
  CHECK(fleet.cli({"report", std::to_string(id)}).find("SIMULATED: 4 runs") != std::string::npos);
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"validate", std::string(JETSWEEP_SOURCE_DIR) + "/experiments/sim_fleet.yaml"}, &out, &err) == 0);
  CHECK(out.find("expands to 32 runs") != std::string::npos);
}
