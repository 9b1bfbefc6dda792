// Integration tests: a real PostgreSQL (JETSWEEP_TEST_DSN, an admin DSN from scripts/test), real
// jetsweep-controller and jetsweep-agent processes on loopback, the real CLI, real LibTorch training
// on small data generated in the real IDX format.
#include <cmath>
#include <fstream>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;


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
      const auto& stats = e.at("minibatch_stats").as_object();   // kept at ingest (sql/016)
      CHECK(stats.at("recorded").as_int64() == e.at("minibatches").as_int64());
      CHECK(stats.at("stall_p95_s").as_double() >= stats.at("stall_p50_s").as_double());
    }
    CHECK(r.at("summary").at("epochs").as_int64() == 2);
    CHECK(r.at("summary").at("later_e2e_s").as_double() == epochs[1].at("e2e_s").as_double());
  }
  // The text report's request: each run's summary, no per-epoch rows.
  auto slim = cli::http_request(fleet.url(), "GET", "/api/campaigns/" + std::to_string(id) + "/report?epochs=none");
  REQUIRE(slim.is_ok());
  auto slim_json = bj::parse(slim->body).as_object();
  CHECK(slim_json.at("epochs_included") == false);
  for (const auto& rv : slim_json.at("runs").as_array()) {
    CHECK(rv.at("epochs").as_array().empty());
    CHECK(rv.at("summary").at("epochs").as_int64() == 2);
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

TEST_CASE("simulated Nano, Xavier NX, AGX Xavier and AGX Orin agents: runs land marked simulated, with energy") {
  TestDatabase db;
  Fleet fleet(db);
  const std::vector<std::string> classes = {"nano", "xavier-nx", "agx-xavier", "agx-orin"};
  std::vector<std::unique_ptr<Process>> sims;
  for (const auto& cls : classes)
    sims.push_back(std::make_unique<Process>(
        kBin + "/jetsweep-agent",
        std::vector<std::string>{"--controller", "ws://127.0.0.1:" + std::to_string(fleet.port()), "--name",
                                 "sim-" + cls, "--sim", cls + "/1", "--time-scale", "0", "--no-journal"},
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

TEST_CASE("with an enrollment secret and an API token, anything else is rejected") {
  TestDatabase db;
  Fleet fleet(db, {"--enroll-secret", "s3cret-enroll", "--api-token", "s3cret-api"});
  auto no_token = cli::http_request(fleet.url(), "GET", "/api/campaigns");
  REQUIRE(no_token.is_ok());
  CHECK(no_token->status == 401);
  auto wrong = cli::http_request(fleet.url(), "GET", "/api/campaigns", "", {{"Authorization", "Bearer nope"}});
  CHECK(wrong->status == 401);
  auto right = cli::http_request(fleet.url(), "GET", "/api/campaigns", "", {{"Authorization", "Bearer s3cret-api"}});
  CHECK(right->status == 200);
  CHECK(cli::http_request(fleet.url(), "GET", "/api/health")->status == 200);  // liveness stays open
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "status"}, &out, &err) == 2);
  CHECK(err.find("missing or wrong API token") != std::string::npos);
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "--token", "s3cret-api", "status"}, &out, &err) == 0);

  namespace beast = boost::beast;
  namespace ws = beast::websocket;
  boost::asio::io_context ioc;
  auto handshake = [&](const std::string& secret) {
    ws::stream<beast::tcp_stream> s(ioc);
    beast::get_lowest_layer(s).connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                                     static_cast<unsigned short>(fleet.port())));
    if (!secret.empty())
      s.set_option(ws::stream_base::decorator([secret](ws::request_type& req) {
        req.set(beast::http::field::authorization, "Bearer " + secret);
      }));
    beast::error_code ec;
    s.handshake("127.0.0.1", "/agent", ec);
    return ec;
  };
  CHECK(handshake("") == ws::error::upgrade_declined);
  CHECK(handshake("guess") == ws::error::upgrade_declined);
  CHECK_FALSE(handshake("s3cret-enroll"));
  CHECK(fleet.controller().log().find("missing or wrong enrollment secret") != std::string::npos);
}

TEST_CASE("a run whose agent vanishes once too often is lost, with the reason kept") {
  TestDatabase db;
  Fleet fleet(db, {"--lease-s", "1", "--max-attempts", "1"});
  write_idx_dataset((fleet.dir() / "data").string(), 200, false);
  write_file(fleet.dir() / "lost.yaml", campaign_yaml("lost", (fleet.dir() / "data").string(), "16", "0", 200));
  auto& doomed = fleet.add_agent("doomed", {"--no-journal"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "lost.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return db.count("SELECT count(*) FROM epochs") >= 1; }), fleet.logs());
  doomed.signal(SIGKILL);
  doomed.wait(10s);
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE status = 'lost'") == 1);
  CHECK(db.count("SELECT count(*) FROM runs WHERE error LIKE 'lost after 1 attempts; last: agent doomed disconnected%'") == 1);
  CHECK(fleet.status(id).at("lost").as_int64() == 1);
}

TEST_CASE("priorities order the queue; paused campaigns wait; cancelled campaigns end") {
  TestDatabase db;
  Fleet fleet(db);
  write_idx_dataset((fleet.dir() / "data").string(), 64, false);
  const std::string data = (fleet.dir() / "data").string();
  write_file(fleet.dir() / "low.yaml", campaign_yaml("low", data, "[16, 32]", "0", 1));
  write_file(fleet.dir() / "high.yaml", "priority: 5\n" + campaign_yaml("high", data, "[16, 32]", "0", 1));
  write_file(fleet.dir() / "nowhere.yaml", campaign_yaml("nowhere", data, "16", "0", 1) + "  device: no-such-board\n");
  const int64_t low = submit(fleet, fleet.dir() / "low.yaml");
  fleet.cli({"pause", "low"});
  const int64_t high = submit(fleet, fleet.dir() / "high.yaml");
  const int64_t nowhere = submit(fleet, fleet.dir() / "nowhere.yaml");
  fleet.add_agent("solo", {"--no-journal"});
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(high); }), fleet.logs());
  CHECK(fleet.status(low).at("queued").as_int64() == 2);  // paused: nothing handed out
  CHECK(fleet.status(low).at("state") == "paused");
  fleet.cli({"resume", std::to_string(low)});
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(low); }), fleet.logs());
  // The high-priority campaign's runs were all assigned before any of the low one's.
  CHECK(db.count("SELECT count(*) FROM runs h, runs l WHERE h.campaign_id = " + std::to_string(high) +
                 " AND l.campaign_id = " + std::to_string(low) + " AND h.assigned_at > l.assigned_at") == 0);
  CHECK_FALSE(fleet.finished(nowhere));  // no agent of that class
  auto cancelled = bj::parse(fleet.cli({"cancel", "--json", "nowhere"})).as_object();
  CHECK(cancelled.at("cancelled").as_int64() == 1);
  CHECK(cancelled.at("finished").as_bool());
  CHECK(cancelled.at("state") == "cancelled");
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "resume", "nowhere"}, &out, &err) == 2);
  CHECK(err.find("is cancelled") != std::string::npos);
}

TEST_CASE("cancelling stops executing runs on their agent, keeps what they measured, and the agent carries on") {
  TestDatabase db;
  Fleet fleet(db);
  write_idx_dataset((fleet.dir() / "data").string(), 200, false);
  const std::string data = (fleet.dir() / "data").string();
  write_file(fleet.dir() / "long.yaml", campaign_yaml("long", data, "[16, 32]", "0", 500));
  write_file(fleet.dir() / "after.yaml", campaign_yaml("after", data, "64", "0", 1));
  fleet.add_agent("solo");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  const int64_t id = submit(fleet, fleet.dir() / "long.yaml");
  const std::string in_campaign = " FROM runs WHERE campaign_id = " + std::to_string(id);
  auto running_with_epochs = [&] {
    return db.count("SELECT count(*)" + in_campaign + " AND status = 'running' AND EXISTS "
                    "(SELECT 1 FROM epochs e WHERE e.run_id = runs.id)") == 1;
  };

  // One run, cancelled while it executes: the agent stops it mid-campaign.
  REQUIRE_MESSAGE(wait_until(300s, running_with_epochs), fleet.logs());
  const int64_t first = db.count("SELECT id" + in_campaign + " AND status = 'running'");
  auto r = bj::parse(fleet.cli({"cancel-run", "--json", std::to_string(first)})).as_object();
  CHECK(r.at("stopping").as_bool());
  CHECK(r.at("agent") == "solo");
  const std::string first_run = "SELECT count(*) FROM runs WHERE id = " + std::to_string(first);
  REQUIRE_MESSAGE(wait_until(120s, [&] { return db.count(first_run + " AND status = 'cancelled'") == 1; }), fleet.logs());
  CHECK(db.count(first_run + " AND error = 'cancelled while running' AND wall_s > 0") == 1);
  const int64_t kept = db.count("SELECT count(*) FROM epochs WHERE run_id = " + std::to_string(first));
  CHECK(kept >= 1);
  CHECK(kept < 500);
  // Its minibatch rows are kept too, each epoch's complete.
  CHECK(db.count("SELECT count(*) FROM epochs e WHERE e.run_id = " + std::to_string(first) +
                 " AND e.minibatches <> (SELECT count(*) FROM minibatches m WHERE m.run_id = e.run_id AND m.epoch = e.epoch)") == 0);

  // The agent takes the next run; cancelling the whole campaign stops that one too.
  REQUIRE_MESSAGE(wait_until(300s, running_with_epochs), fleet.logs());
  auto c = bj::parse(fleet.cli({"cancel", "--json", "long"})).as_object();
  CHECK(c.at("state") == "cancelled");
  REQUIRE_MESSAGE(wait_until(120s, [&] { return fleet.finished(id); }), fleet.logs());
  CHECK(db.count("SELECT count(*)" + in_campaign + " AND status = 'cancelled'") == 2);
  CHECK(db.count("SELECT count(*)" + in_campaign + " AND status = 'cancelled' AND error = 'cancelled while running'") == 2);
  CHECK(fleet.status(id).at("cancelled").as_int64() == 2);

  // The agent is still there and idle: it runs the next campaign.
  const int64_t after = submit(fleet, fleet.dir() / "after.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(after); }), fleet.logs());
  CHECK(fleet.status(after).at("done").as_int64() == 1);

  // A finished run cannot be stopped; unknown and malformed ids are clear errors.
  auto done = bj::parse(fleet.cli({"cancel-run", "--json", std::to_string(db.count("SELECT id FROM runs WHERE campaign_id = " +
                                                                                   std::to_string(after)))}))
                  .as_object();
  CHECK(done.at("status") == "done");
  CHECK_FALSE(done.at("stopping").as_bool());
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "cancel-run", "999999"}, &out, &err) != 0);
  CHECK(err.find("no run 999999") != std::string::npos);
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "cancel-run", "x1"}, &out, &err) != 0);
  CHECK(err.find("not a positive integer") != std::string::npos);
}

namespace {

// Storage media and memory pick the board.
void check_media_and_memory(TestDatabase& db, Fleet& fleet, const std::string& data) {
  // Data on "@ssd" only goes to the board that offers that medium; a run needing more RAM than any board
  // has waits (min_memory_mb), one that fits runs.
  write_file(fleet.dir() / "media.yaml",
             "campaign: media\nmatrix:\n  device: host\n  model: lenet5\n  dataset: mnist\n  data: \"@ssd\"\n"
             "  batch_size: [16, 32, 64]\n  workers: 0\n  epochs: 1\n");
  write_file(fleet.dir() / "memory.yaml",
             "campaign: memory\nmatrix:\n  device: host\n  model: lenet5\n  dataset: mnist\n  data: " + data +
                 "\n  batch_size: 16\n  workers: 0\n  epochs: 1\n  min_memory_mb: [1, 16000000]\n");
  const int64_t media = submit(fleet, fleet.dir() / "media.yaml");
  const int64_t memory = submit(fleet, fleet.dir() / "memory.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(media); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.campaign_id = " +
                 std::to_string(media) + " AND r.status = 'done' AND a.name = 'with-ssd'") == 3);
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.status(memory).at("done").as_int64() == 1; }), fleet.logs());
  CHECK(fleet.status(memory).at("queued").as_int64() == 1);   // 16 TB: no board has it
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(memory) +
                 " AND status = 'queued' AND min_mem_bytes = 16000000::bigint * 1048576") == 1);
  fleet.cli({"cancel", std::to_string(memory)});

}

// 'CLASS/*' places a run on every board of the class; a class with no board is refused.
void check_every_instance(TestDatabase& db, Fleet& fleet) {
  // "nano/*": one run per enrolled Nano, each on its own board.
  write_file(fleet.dir() / "every.yaml",
             "campaign: every\nmatrix:\n  device: nano/*\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 1\n  max_minibatches: 5\n");
  const int64_t every = submit(fleet, fleet.dir() / "every.yaml");
  CHECK(fleet.status(every).at("runs").as_int64() == 3);
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(every); }), fleet.logs());
  CHECK(db.count("SELECT count(DISTINCT a.name) FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.campaign_id = " +
                 std::to_string(every) + " AND r.status = 'done' AND r.device = a.name AND a.name LIKE 'nano-_'") == 3);
  write_file(fleet.dir() / "nowhere.yaml",
             "campaign: nowhere\nmatrix:\n  device: agx-orin/*\n  model: lenet5\n  dataset: mnist\n");
  std::string out, err;
  CHECK(run_command(kBin + "/jetsweep", {"--controller", fleet.url(), "submit", (fleet.dir() / "nowhere.yaml").string()},
                    &out, &err) == 2);
  CHECK(err.find("'agx-orin/*' matches no board") != std::string::npos);

}

// Every run was stamped on the boot clock beside the wall clock (by the host backend's executor and by the sim agents'
// sink), with this machine's boot, and placed by it: on one machine its offset is about 0. Where the kernel's boot_id
// cannot be read the agents send no boot clock, and no run has one.
void check_boot_clock_stamps(TestDatabase& db) {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  const int64_t started = db.count("SELECT count(*) FROM runs WHERE agent_t0_unix_s IS NOT NULL");
  CHECK(started > 0);
  if (boot_id.empty()) {
    CHECK(db.count("SELECT count(*) FROM runs WHERE agent_boot_id IS NOT NULL") == 0);
    return;
  }
  CHECK(db.count("SELECT count(*) FROM runs WHERE agent_boot_id = '" + boot_id + "' AND agent_t0_boot_s > 0 "
                 "AND abs(clock_offset_s) < 1") == started);
  CHECK(db.count("SELECT count(*) FROM agents WHERE boot_id = '" + boot_id + "' AND boot_offset_s IS NOT NULL") ==
        db.count("SELECT count(*) FROM agents"));
}

// Power modes are queued so that cores only go offline.
void check_power_mode_order(TestDatabase& db, Fleet& fleet) {
  // Power modes on one board: queued by descending cores, then frequencies, whatever the file order.
  write_file(fleet.dir() / "modes.yaml",
             "campaign: modes\nmatrix:\n  device: nano-a\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 1\n  max_minibatches: 3\n"
             "  power_mode: [{cores: 1, cpu_khz: 921600}, {cores: 4, cpu_khz: 614400}, {cores: 2, cpu_khz: 1479000},\n"
             "               {cores: 4, cpu_khz: 1479000}, {cores: 2, cpu_khz: 614400}]\n");
  const int64_t modes = submit(fleet, fleet.dir() / "modes.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(modes); }), fleet.logs());
  const std::string by_assignment = "SELECT string_agg((config->'power_mode'->>'cores') || '@' || "
                                    "(config->'power_mode'->>'cpu_khz'), ' ' ORDER BY assigned_at, id) FROM runs "
                                    "WHERE campaign_id = " + std::to_string(modes);
  pqxx::connection conn(db.dsn());
  pqxx::work w(conn);
  CHECK(std::string(w.exec1(by_assignment)[0].c_str()) == "4@1479000 4@614400 2@1479000 2@614400 1@921600");
  // Named modes on every Nano (nano/*): each board gets MAXN (4 cores) before 5W (2 cores), whatever the
  // file order.
  write_file(fleet.dir() / "named.yaml",
             "campaign: named\nmatrix:\n  device: nano/*\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 1\n  max_minibatches: 3\n  power_mode: [5W, MAXN]\n");
  const int64_t named = submit(fleet, fleet.dir() / "named.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(named); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(named) + " AND status = 'done'") == 6);
  CHECK(db.count("SELECT count(*) FROM runs a JOIN runs b ON a.device = b.device AND a.campaign_id = b.campaign_id "
                 "WHERE a.campaign_id = " + std::to_string(named) + " AND a.config->'power_mode'->>'name' = 'MAXN' "
                 "AND b.config->'power_mode'->>'name' = '5W' AND a.id < b.id AND a.assigned_at <= b.assigned_at") == 3);
  // The ordinal still records the file order.
  CHECK(std::string(w.exec1("SELECT string_agg(config->'power_mode'->>'cores', ' ' ORDER BY ordinal) FROM runs "
                            "WHERE campaign_id = " + std::to_string(modes))[0].c_str()) == "1 4 2 4 2");
  w.commit();

}

// Two agents driving the same board never run at once.
void check_one_run_per_board(TestDatabase& db, Fleet& fleet) {
  // Two agents driving the same (simulated) board: one run at a time on it, never two.
  fleet.add_agent("twin-1", {"--no-journal", "--sim", "agx-orin/twin", "--time-scale", "1"});
  fleet.add_agent("twin-2", {"--no-journal", "--sim", "agx-orin/twin", "--time-scale", "1"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(7); }), fleet.logs());
  CHECK(db.count("SELECT count(DISTINCT board_id) FROM agents WHERE name LIKE 'twin-_' AND board_id LIKE 'sim:%:agx-orin/twin'") == 1);
  write_file(fleet.dir() / "twin.yaml",
             "campaign: twin\nrepetitions: 4\nmatrix:\n  device: agx-orin\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 1\n  max_minibatches: 40\n");
  const int64_t twin = submit(fleet, fleet.dir() / "twin.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(twin); }), fleet.logs());
  const std::string twin_runs = " FROM runs WHERE campaign_id = " + std::to_string(twin);
  CHECK(db.count("SELECT count(*)" + twin_runs + " AND status = 'done'") == 4);
  CHECK(db.count("SELECT count(*)" + twin_runs + " AND wall_s > 0.2") == 4);  // long enough to overlap if allowed
  CHECK(db.count("SELECT count(*) FROM runs a, runs b WHERE a.campaign_id = " + std::to_string(twin) +
                 " AND b.campaign_id = a.campaign_id AND a.id < b.id "
                 "AND a.assigned_at < b.finished_at AND b.assigned_at < a.finished_at") == 0);

}

// validate --estimate goes by the epoch times measured.
void check_estimate_from_measurements(TestDatabase& db, Fleet& fleet) {
  // The estimate goes by the epochs measured: 'media' ran on the host with these batch sizes.
  write_file(fleet.dir() / "again.yaml",
             "campaign: again\nmatrix:\n  device: host\n  model: [lenet5, vgg11]\n  dataset: mnist\n"
             "  batch_size: 16\n  workers: 0\n  epochs: 10\n");
  auto est = bj::parse(fleet.cli({"validate", "--estimate", "--json", (fleet.dir() / "again.yaml").string()})).as_object();
  const auto& e = est.at("estimate").as_object();
  CHECK(e.at("estimated_wall_s").as_double() > 0);
  CHECK(e.at("runs_estimated_from").at("same_class_model_dataset_batch_mode").as_int64() == 1);  // no mode: like them
  CHECK(e.at("runs_estimated_from").at("without_measurement").as_int64() == 1);   // vgg11 never ran
  const std::string text = fleet.cli({"validate", "--estimate", (fleet.dir() / "again.yaml").string()});
  CHECK(text.find("estimated duration: ") != std::string::npos);
  CHECK(text.find("1 runs have no measurement") != std::string::npos);

  // Power modes measured on the Nanos match exactly; a nano/* run runs on each of the 3 Nanos at once.
  write_file(fleet.dir() / "modes_again.yaml",
             "campaign: modes_again\nmatrix:\n  device: [nano, nano/*]\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 2\n  max_minibatches: 3\n"
             "  power_mode: [{cores: 4, cpu_khz: 1479000}, {cores: 1, cpu_khz: 921600}]\n");
  auto est2 = bj::parse(fleet.cli({"validate", "--estimate", "--json", (fleet.dir() / "modes_again.yaml").string()}))
                  .as_object()
                  .at("estimate")
                  .as_object();
  CHECK(est2.at("runs_estimated_from").at("same_class_model_dataset_batch_mode").as_int64() == 4);
  CHECK(est2.at("runs").as_int64() == 2 + 2 * 3);
  double shared = 0, each = 0;
  for (const auto& tv : est2.at("per_device").as_array()) {
    const auto& t = tv.as_object();
    CHECK(t.at("boards").as_int64() == 3);
    if (t.at("device") == "nano") shared = t.at("run_seconds").as_double();
    if (t.at("device") == "nano/*") {
      CHECK(t.at("runs").as_int64() == 6);
      each = t.at("wall_s").as_double();
      CHECK(std::abs(t.at("run_seconds").as_double() - 3 * each) < 1e-9);
    }
  }
  CHECK(shared > 0);
  CHECK(std::abs(each - shared) < 1e-9);   // the same two runs' measured times
  CHECK(std::abs(est2.at("estimated_wall_s").as_double() - (shared / 3 + each)) < 1e-9);
}

}  // namespace

TEST_CASE("scheduling: storage media and memory pick the board; 'CLASS/*' places a run on every board of a class; "
          "power modes are queued so cores only go offline; validate --estimate uses measured epoch times") {
  TestDatabase db;
  Fleet fleet(db);
  write_idx_dataset((fleet.dir() / "ssd" / "mnist").string(), 64, false);
  write_idx_dataset((fleet.dir() / "data").string(), 64, false);
  const std::string data = (fleet.dir() / "data").string();
  fleet.add_agent("plain", {"--no-journal"});
  fleet.add_agent("with-ssd", {"--no-journal", "--storage", "ssd=" + (fleet.dir() / "ssd").string()});
  auto sim = [&](const std::string& name, const std::string& cls) {
    fleet.add_agent(name, {"--no-journal", "--sim", cls + "/" + name, "--time-scale", "0"});
  };
  sim("nano-a", "nano");
  sim("nano-b", "nano");
  sim("nano-c", "nano");
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(5); }), fleet.logs());
  check_media_and_memory(db, fleet, data);
  check_every_instance(db, fleet);
  check_power_mode_order(db, fleet);
  check_one_run_per_board(db, fleet);
  check_estimate_from_measurements(db, fleet);
  check_boot_clock_stamps(db);
}

TEST_CASE("the controller measures each agent's clock offset") {
  TestDatabase db;
  Fleet fleet(db);
  fleet.add_agent("clocked", {"--no-journal"});
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(1); }), fleet.logs());
  REQUIRE_MESSAGE(wait_until(60s, [&] { return db.count("SELECT count(*) FROM agents WHERE clock_rtt_s IS NOT NULL") == 1; }),
                  fleet.logs());
  // Same machine, same clock: the offset is within the round trip.
  CHECK(db.count("SELECT count(*) FROM agents WHERE abs(clock_offset_s) <= clock_rtt_s + 0.001") == 1);
}

TEST_CASE("analysis works on a campaign that came through the pipeline (simulated AGX Xavier fleet)") {
  TestDatabase db;
  Fleet fleet(db);
  std::vector<std::unique_ptr<Process>> sims;
  for (const std::string instance : {"1", "2"})
    sims.push_back(std::make_unique<Process>(
        kBin + "/jetsweep-agent",
        std::vector<std::string>{"--controller", "ws://127.0.0.1:" + std::to_string(fleet.port()), "--name",
                                 "xavier-" + instance, "--sim", "agx-xavier/" + instance, "--time-scale", "0", "--no-journal"},
        (fleet.dir() / ("xavier-" + instance + ".log")).string()));
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(2); }), fleet.logs());
  write_file(fleet.dir() / "modes.yaml",
             "campaign: modes\nrepetitions: 2\nmatrix:\n  device: agx-xavier\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: 64\n  workers: 0\n  epochs: 3\n  sample_hz: 2\n  power_mode:\n"
             "    - {cores: 8, cpu_khz: 2265600, gpu_hz: 1377000000, emc_hz: 2133000000}\n"
             "    - {cores: 8, cpu_khz: 1190400, gpu_hz: 1377000000, emc_hz: 2133000000}\n"
             "    - {cores: 4, cpu_khz: 1190400, gpu_hz: 675750000, emc_hz: 1331200000}\n"
             "    - {cores: 2, cpu_khz: 729600, gpu_hz: 318750000, emc_hz: 800000000}\n");
  const int64_t id = submit(fleet, fleet.dir() / "modes.yaml");
  REQUIRE_MESSAGE(wait_until(300s, [&] { return fleet.finished(id); }), fleet.logs());
  REQUIRE(db.count("SELECT count(*) FROM runs WHERE status = 'done'") == 8);

  auto analyze = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"analyze"});
    args.insert(args.end(), {"--db", db.dsn(), "--campaign", std::to_string(id), "--json"});
    std::string out, err;
    const int rc = run_command(kBin + "/jetsweep", args, &out, &err);
    REQUIRE_MESSAGE(rc == 0, "jetsweep " << args[1] << " exited " << rc << ": " << err);
    return bj::parse(out);
  };
  const std::string w = "lenet5/fashion-mnist";
  auto pareto = analyze({"pareto", "--workload", w});
  const std::string pareto_text = bj::serialize(pareto);
  CHECK(pareto_text.find("\"cpu_mhz\"") != std::string::npos);
  CHECK(pareto_text.find("\"emc_mhz\"") != std::string::npos);
  auto variability = bj::serialize(analyze({"variability"}));
  CHECK(variability.find("xavier-1") != std::string::npos);
  CHECK(variability.find("xavier-2") != std::string::npos);
  auto optimize = bj::serialize(analyze({"optimize", "--workload", w, "--power-budget-w", "1000"}));
  CHECK(optimize.find("\"cores\"") != std::string::npos);

  std::string csv, err;
  REQUIRE(run_command(kBin + "/jetsweep", {"export", "--db", db.dsn(), "--campaign", std::to_string(id)}, &csv, &err) == 0);
  CHECK(csv.rfind("device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw", 0) == 0);
  const auto rows = std::count(csv.begin(), csv.end(), '\n') - 1;
  CHECK(rows >= 4);  // one row per mode at least (per instance when instances are kept apart)
  CHECK(csv.find("agx-xavier,lenet5/fashion-mnist,2,729.6,318.75,800") != std::string::npos);
}
