// GET /metrics scraped from a real controller process (PostgreSQL, simulated agents) while a campaign runs: the
// values equal the JSON API's (agents by state and class vs /api/agents, runs by state vs /api/campaigns, a busy
// board's power vs /api/fleet's latest), and after the campaign the counters equal the database's rows. Plus the
// store query behind /api/fleet's applied state, on PostgreSQL and on its MemoryStore fake.
#include <map>
#include <optional>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "controller/memory_store.hpp"
#include "controller/pg_store.hpp"
#include "support/fleet.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;
namespace bj = boost::json;

namespace {

const std::string kToken = "metrics-scrape-token-3b9c";

std::optional<bj::value> get_json(const Fleet& fleet, const std::string& target) {
  auto r = cli::http_request(fleet.url(), "GET", target, "", {{"Authorization", "Bearer " + kToken}});
  if (!r || r->status != 200) return std::nullopt;
  return bj::parse(r->body);
}

// A scrape: every sample line's series (name and labels as written) -> value. Checks as it reads that every
// sample belongs to a family announced by # TYPE before it.
struct Scrape {
  std::map<std::string, double> samples;
  std::set<std::string> families;   // every family announced by # TYPE
  std::string problem;   // empty when the text is well formed
  std::optional<double> get(const std::string& series) const {
    auto it = samples.find(series);
    return it == samples.end() ? std::nullopt : std::optional<double>(it->second);
  }
};

std::optional<Scrape> scrape(const Fleet& fleet) {
  auto r = cli::http_request(fleet.url(), "GET", "/metrics", "", {{"Authorization", "Bearer " + kToken}});
  if (!r || r->status != 200) return std::nullopt;
  Scrape s;
  std::istringstream in(r->body);
  std::string line, family;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      s.families.insert(family);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    if (series.rfind(family, 0) != 0 && s.problem.empty()) s.problem = "sample outside its family: " + line;
    s.samples[series] = std::stod(line.substr(space + 1));
  }
  return s;
}

std::string board_labels(const std::string& name, const std::string& cls) {
  return "{name=\"" + name + "\",device_class=\"" + cls + "\"}";
}

// Agents by (class, state) as /api/agents says (the fleet state rule of common/api.hpp).
std::map<std::string, double> agent_counts(const bj::value& agents) {
  std::map<std::string, double> out;
  for (const auto& a : agents.as_array()) {
    const bool connected = a.at("connected").as_bool();
    const std::string state = !connected ? "offline" : a.at("current_run").is_null() ? "idle" : "busy";
    out["jetsweep_agents{state=\"" + state + "\",device_class=\"" + std::string(a.at("device_class").as_string()) +
        "\"}"] += 1;
  }
  return out;
}

// Runs by state over every campaign, as /api/campaigns says.
std::map<std::string, double> run_counts(const bj::value& campaigns) {
  std::map<std::string, double> out;
  for (const char* state : {"queued", "assigned", "running", "done", "failed", "lost", "cancelled"}) {
    double n = 0;
    for (const auto& c : campaigns.as_array()) n += static_cast<double>(c.at(state).as_int64());
    out["jetsweep_runs{state=\"" + std::string(state) + "\"}"] = n;
  }
  return out;
}

// Every series of `want` has its value in the scrape (agents' zero rows included); "" when so, else what differs.
std::string differences(const Scrape& s, const std::map<std::string, double>& want) {
  std::string out;
  for (const auto& [series, value] : want) {
    auto got = s.get(series);
    if (!got || *got != value)
      out += series + ": API " + std::to_string(value) + ", /metrics " + (got ? std::to_string(*got) : "absent") + "; ";
  }
  return out;
}

// A busy board's newest power as /api/fleet says: (name, class, power, sample time); nothing when none has one.
std::optional<std::tuple<std::string, std::string, double, double>> busy_board_power(const bj::value& fleet) {
  for (const auto& b : fleet.as_array()) {
    if (b.at("state") != "busy" || b.at("latest").is_null() || b.at("latest").at("power_w").is_null()) continue;
    return std::make_tuple(std::string(b.at("name").as_string()), std::string(b.at("device_class").as_string()),
                           b.at("latest").at("power_w").to_number<double>(),
                           b.at("latest").at("t_unix_s").to_number<double>());
  }
  return std::nullopt;
}


// While the campaign runs: a scrape bracketed by two identical API answers must carry the same values. The fleet
// moves between requests, so wait (bounded) for a bracket in which nothing changed and a board was busy with power.
// "" when one agreed, else the last difference seen.
std::string agreement_while_running(const Fleet& fleet) {
  std::string last_difference = "no consistent bracket with a busy board yet";
  const bool agreed = wait_until(180s, [&] {
    auto agents1 = get_json(fleet, "/api/agents");
    auto campaigns1 = get_json(fleet, "/api/campaigns");
    auto fleet1 = get_json(fleet, "/api/fleet");
    auto metrics = scrape(fleet);
    auto agents2 = get_json(fleet, "/api/agents");
    auto campaigns2 = get_json(fleet, "/api/campaigns");
    auto fleet2 = get_json(fleet, "/api/fleet");
    if (!agents1 || !campaigns1 || !fleet1 || !metrics || !agents2 || !campaigns2 || !fleet2) return false;
    REQUIRE_MESSAGE(metrics->problem.empty(), metrics->problem);
    const auto agents = agent_counts(*agents1);
    const auto runs = run_counts(*campaigns1);
    const auto power = busy_board_power(*fleet1);
    if (agents != agent_counts(*agents2) || runs != run_counts(*campaigns2) || !power ||
        power != busy_board_power(*fleet2) || runs.at("jetsweep_runs{state=\"running\"}") == 0)
      return false;   // something moved during the bracket, or no busy board has a sample yet
    const auto& [name, cls, watts, t] = *power;
    std::map<std::string, double> want = agents;
    want.insert(runs.begin(), runs.end());
    want["jetsweep_board_power_watts" + board_labels(name, cls)] = watts;
    want["jetsweep_board_sample_timestamp_seconds" + board_labels(name, cls)] = t;
    last_difference = differences(*metrics, want);
    return last_difference.empty();
  });
  return agreed ? "" : last_difference;
}

// Every metric the Grafana dashboard in deploy/ queries is a family of `metrics`.
void check_dashboard_metrics(const Scrape& metrics) {
  std::ifstream file(std::string(JETSWEEP_SOURCE_DIR) + "/deploy/grafana/jetsweep-dashboard.json");
  REQUIRE(file);
  const std::string dashboard((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::regex name(R"(jetsweep_[a-z_]+)");
  int queried = 0;
  for (auto it = std::sregex_iterator(dashboard.begin(), dashboard.end(), name); it != std::sregex_iterator(); ++it) {
    std::string metric = it->str();
    if (metric.size() > 7 && metric.compare(metric.size() - 7, 7, "_bucket") == 0) metric.resize(metric.size() - 7);
    ++queried;
    CHECK_MESSAGE(metrics.families.count(metric) == 1, "the dashboard queries " << metric << ", which /metrics lacks");
  }
  CHECK(queried > 10);
}

}  // namespace

TEST_CASE("GET /metrics agrees with the API while a simulated campaign runs, and with the database after it") {
  TestDatabase db;
  Fleet fleet(db, {"--api-token", kToken});
  std::vector<std::unique_ptr<Process>> sims;
  for (const std::string sim : {"nano/1", "nano/2", "agx-orin/1"}) {   // the Orin has nothing to run: idle
    const std::string name = "sim-" + sim.substr(0, sim.find('/')) + "-" + sim.substr(sim.find('/') + 1);
    sims.push_back(std::make_unique<Process>(
        kBin + "/jetsweep-agent",
        std::vector<std::string>{"--controller", "ws://127.0.0.1:" + std::to_string(fleet.port()), "--name", name,
                                 "--sim", sim, "--time-scale", "0.1", "--no-journal"},
        (fleet.dir() / (name + ".log")).string()));
  }
  auto connected = [&] {
    auto agents = get_json(fleet, "/api/agents");
    size_t n = 0;
    if (agents)
      for (const auto& a : agents->as_array()) n += a.at("connected").as_bool() ? 1 : 0;
    return n == 3;
  };
  REQUIRE_MESSAGE(wait_until(60s, connected), fleet.logs());

  // Scraping needs the token, as every API route does.
  auto refused = cli::http_request(fleet.url(), "GET", "/metrics");
  REQUIRE(refused.is_ok());
  CHECK(refused->status == 401);

  // Four runs of ~9-18 s each (modelled ~90-180 s at time scale 0.1) on two Nanos; samples arrive at epoch ends.
  write_file(fleet.dir() / "sim.yaml",
             "campaign: scrape\nmatrix:\n  device: nano\n  model: lenet5\n  dataset: fashion-mnist\n"
             "  batch_size: [16, 32, 64, 128]\n  workers: 0\n  epochs: 2\n  sample_hz: 1\n");
  const auto submitted = bj::parse(fleet.cli({"--token", kToken, "submit", "--json", (fleet.dir() / "sim.yaml").string()}));
  const int64_t id = submitted.at("campaign_id").as_int64();

  const std::string disagreement = agreement_while_running(fleet);
  CHECK_MESSAGE(disagreement.empty(), disagreement);

  auto finished = [&] {   // Fleet::finished asks without the token
    auto status = get_json(fleet, "/api/campaigns/" + std::to_string(id));
    return status && status->at("finished").as_bool();
  };
  REQUIRE_MESSAGE(wait_until(300s, finished), fleet.logs());

  // Finished: nothing moves any more (the boards' newest samples stay for 5 minutes), so one scrape must agree.
  auto metrics = scrape(fleet);
  REQUIRE(metrics);
  auto agents = get_json(fleet, "/api/agents");
  auto campaigns = get_json(fleet, "/api/campaigns");
  auto boards = get_json(fleet, "/api/fleet");
  REQUIRE((agents && campaigns && boards));
  std::map<std::string, double> want = agent_counts(*agents);
  const auto runs = run_counts(*campaigns);
  want.insert(runs.begin(), runs.end());
  CHECK(runs.at("jetsweep_runs{state=\"done\"}") == 4);
  int boards_with_power = 0;
  for (const auto& b : boards->as_array()) {
    const std::string labels = board_labels(std::string(b.at("name").as_string()), std::string(b.at("device_class").as_string()));
    if (b.at("latest").is_null()) {
      CHECK_FALSE(metrics->get("jetsweep_board_power_watts" + labels));   // the idle Orin never sampled
      continue;
    }
    ++boards_with_power;
    want["jetsweep_board_power_watts" + labels] = b.at("latest").at("power_w").to_number<double>();
    CHECK(b.at("series").as_array().size() >= 2);
    // The applied state of its last run: a Nano's reference state (docs/SIMULATION.md), read back.
    CHECK(b.at("power_mode") == "MAXN");
    want["jetsweep_board_applied_cpu_frequency_hertz" + labels] = b.at("applied").at("cpu_khz").to_number<double>() * 1e3;
    want["jetsweep_board_applied_gpu_frequency_hertz" + labels] = b.at("applied").at("gpu_hz").to_number<double>();
  }
  CHECK(boards_with_power == 2);
  // The ingest counters equal the rows committed; every assignment (attempt) was timed.
  want["jetsweep_ingest_rows_total{type=\"minibatches\"}"] = static_cast<double>(db.count("SELECT count(*) FROM minibatches"));
  want["jetsweep_ingest_rows_total{type=\"samples\"}"] = static_cast<double>(db.count("SELECT count(*) FROM samples"));
  want["jetsweep_ingest_messages_total{type=\"run_finished\"}"] = 4;
  // Nothing was set aside (no run left its agent), and the set-aside table agrees.
  CHECK(db.count("SELECT count(*) FROM set_aside_results") == 0);
  want["jetsweep_ingest_set_aside_total{type=\"epoch_result\"}"] = 0;
  want["jetsweep_ingest_set_aside_total{type=\"run_finished\"}"] = 0;
  want["jetsweep_dispatch_latency_seconds_count"] = static_cast<double>(db.count("SELECT sum(attempts) FROM runs"));
  want["jetsweep_db_errors_total{worker=\"main\",code=\"db_error\"}"] = 0;
  CHECK_MESSAGE(differences(*metrics, want).empty(), differences(*metrics, want));
  CHECK(metrics->get("jetsweep_db_latency_seconds_count{worker=\"main\"}").value_or(0) > 0);
  CHECK(metrics->get("jetsweep_agent_sessions") == 3.0);
  check_dashboard_metrics(*metrics);
}

namespace {

// The applied board states `store` reports after a sequence of runs on agent "a1" ("a2" runs nothing): as
// (agent name, run ordinal, mode) per step.
std::vector<std::string> applied_sequence(controller::Store& store) {
  REQUIRE(store.migrate().is_ok());
  auto reg = [&](const std::string& name) {
    proto::Register r;
    r.name = name;
    r.facts.cpus = 4;
    r.facts.mem_bytes = int64_t{8} << 30;
    r.facts.backend = "sim";
    r.facts.device_class = "host";
    auto id = store.register_agent(r, controller::AgentProof{std::nullopt, std::string(64, 'a')});
    REQUIRE(id.is_ok());
    return id->agent_id;
  };
  const int64_t a1 = reg("a1");
  reg("a2");
  auto parsed = parse_campaign("campaign: c\nmatrix: {model: lenet5, dataset: mnist, batch_size: [8, 16, 32]}\n", "c.yaml");
  REQUIRE(parsed.is_ok());
  REQUIRE(store.create_campaign(parsed.value(), "c.yaml", "", "").is_ok());
  std::vector<std::string> seen;
  auto look = [&] {
    auto applied = store.agents_applied();
    REQUIRE(applied.is_ok());
    std::string line;
    for (const auto& a : applied.value())
      line += std::to_string(a.agent_id) + ":" + std::string(a.applied.at("mode_name").as_string()) + " ";
    seen.push_back(line);
  };
  std::vector<int64_t> runs;
  auto claim_and_start = [&](const std::string& mode, bool start) {
    auto claimed = store.claim_run(a1, "host", "");
    REQUIRE(claimed.is_ok());
    REQUIRE(claimed->has_value());
    runs.push_back((*claimed)->run_id);
    if (!start) return;
    proto::RunStarted started;
    started.run_id = runs.back();
    started.applied = proto::BoardState{mode, std::nullopt, 4, 1000, 2000, 3000, false, ""};
    REQUIRE(store.start_run(a1, started).is_ok());
  };
  look();                                  // nothing applied yet
  claim_and_start("M1", true);
  look();                                  // the executing run's
  REQUIRE(store.finish_run(a1, proto::RunFinished{runs.back(), "done", "", 1}).is_ok());
  claim_and_start("M2", true);
  REQUIRE(store.finish_run(a1, proto::RunFinished{runs.back(), "done", "", 1}).is_ok());
  look();                                  // the last started of the ended runs
  claim_and_start("M3", false);
  look();                                  // assigned, not started: still the last applied state
  proto::RunStarted third;
  third.run_id = runs.back();
  third.applied = proto::BoardState{"M3", std::nullopt, 2, 1000, 2000, 3000, false, ""};
  REQUIRE(store.start_run(a1, third).is_ok());
  look();
  return seen;
}

}  // namespace

TEST_CASE("the applied state of each agent's current or last run: PgStore and its MemoryStore fake agree") {
  TestDatabase db;
  controller::PgStore pg(db.dsn());
  controller::MemoryStore memory;
  const auto from_pg = applied_sequence(pg);
  CHECK(from_pg == std::vector<std::string>{"", "1:M1 ", "1:M2 ", "1:M2 ", "1:M3 "});
  CHECK(applied_sequence(memory) == from_pg);
}
