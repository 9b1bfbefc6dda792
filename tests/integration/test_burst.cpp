// Bursts (issue 29, ctest label "fault"): simulated agents at full speed (--time-scale 0) with a small outbox
// memory bound, the controller killed while they produce and restarted after an outage longer than the lease,
// so every agent replays a journal many times its memory bound at once, against a controller whose limit on results
// waiting for the database (--max-ingest-mb 1, all agents together) makes them take turns; one agent's journal limit
// is below its run's results, so its run pauses until the controller is back. Fails on any requeue of a live agent, any agent
// whose peak memory grew by more than its bound and a fixed allowance, a journal over its limit, a pause not
// reported or not in its epoch's paused_before_s, and any row lost or doubled.
#include <cctype>
#include <fstream>
#include <thread>

#include "support/disk_usage.hpp"
#include "support/fault_campaign.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kAgents = 4;                    // burst-4 has the small journal
constexpr int kEpochs = 48;                   // about 75 MB of results per run
constexpr int64_t kSmallJournalMb = 16;
constexpr int64_t kMnistMinibatches = 3750;   // 60,000 images in minibatches of 16
constexpr int64_t kOutboxMemoryMb = 1;
// What else a sim agent's peak may grow by while it produces and replays: its model, sampler, encoder buffers,
// the frame in flight, allocator slack. The outbox's old design held the whole backlog (tens of MB here).
constexpr int64_t kAllowanceKb = 24 * 1024;

// A field of /proc/PID/status in kB (VmHWM: peak resident set; VmRSS: now).
int64_t proc_status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  return -1;
}

// Whether the agent's log says it finished a run ("agent NAME: run ID finished").
bool finished_a_run(const std::string& log, const std::string& name) {
  const std::string prefix = "agent " + name + ": run ";
  for (size_t at = log.find(prefix); at != std::string::npos; at = log.find(prefix, at + 1)) {
    size_t p = at + prefix.size();
    while (p < log.size() && std::isdigit(static_cast<unsigned char>(log[p]))) ++p;
    if (p > at + prefix.size() && log.compare(p, 9, " finished") == 0) return true;
  }
  return false;
}

// The disk space a file occupies, 0 when absent. A journal gives back the space of its acknowledged prefix by
// punching a hole (agent/journal.hpp disk_bytes()): its size keeps counting those bytes, so size overstates what the
// agent's --journal-max-mb bounds by whatever was acknowledged before the outage.
uint64_t disk_bytes_or_zero(const std::filesystem::path& p) { return testing::allocated_bytes(p).value_or(0); }

}  // namespace

TEST_CASE("burst: a controller outage under agents at full speed: bounded agent memory, no requeue, every row once") {
  TestDatabase db;
  // The lease outlasts an agent's longest reconnect backoff (10 s), and the outage below outlasts the lease.
  Fleet fleet(db, {"--lease-s", "12"});
  std::vector<Process*> agents;
  for (int i = 1; i <= kAgents; ++i)
    agents.push_back(&fleet.add_agent(
        "burst-" + std::to_string(i), {"--sim", "nano/" + std::to_string(i), "--time-scale", "0", "--outbox-memory-mb",
                                       std::to_string(kOutboxMemoryMb), "--journal-max-mb",
                                       i == kAgents ? std::to_string(kSmallJournalMb) : std::string("512")}));
  REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet.agents_connected(kAgents); }), fleet.logs());
  std::vector<int64_t> baseline_kb;
  for (auto* a : agents) baseline_kb.push_back(proc_status_kb(a->pid(), "VmHWM"));

  const auto file = fleet.dir() / "burst.yaml";
  write_file(file, "campaign: burst\nmatrix:\n  device: nano/*\n  model: lenet5\n  dataset: mnist\n  batch_size: 16\n"
                   "  workers: 4\n  epochs: " + std::to_string(kEpochs) + "\n  sample_hz: 100\n");
  const int64_t id = submit(fleet, file);
  REQUIRE_MESSAGE(wait_until(120s, [&] { return db.count("SELECT count(*) FROM runs WHERE status = 'running'") == kAgents; }),
                  fleet.logs());

  // The outage: agents go on producing into their journals.
  fleet.controller().signal(SIGKILL);
  fleet.controller().wait(10s);
  const auto journal = [&](int i) { return fleet.dir() / ("journal-burst-" + std::to_string(i)) / "journal.bin"; };
  // The others finish their runs into their journals; burst-4's run pauses at its journal's limit.
  const auto produced = [&](int i) {
    if (i == kAgents) return disk_bytes_or_zero(journal(i)) >= (kSmallJournalMb << 20);
    return finished_a_run(agents[static_cast<size_t>(i - 1)]->log(), "burst-" + std::to_string(i));
  };
  REQUIRE_MESSAGE(wait_until(300s, [&] {
                    for (int i = 1; i <= kAgents; ++i)
                      if (!produced(i)) return false;
                    return true;
                  }),
                  fleet.logs());
  uint64_t smallest_backlog = UINT64_MAX;
  for (int i = 1; i < kAgents; ++i) smallest_backlog = std::min(smallest_backlog, disk_bytes_or_zero(journal(i)));
  // Each journal holds many times the memory bound: the replay below cannot fit in the outbox's memory.
  CHECK(smallest_backlog > 8 * (kOutboxMemoryMb << 20));
  MESSAGE("smallest journal: " << smallest_backlog << " bytes");
  std::this_thread::sleep_for(13s);   // the fault's length: longer than the lease, no reason to requeue anything
  // Paused between epochs: at most an epoch's results (about 1.6 MB here) over the limit, however long the outage.
  std::error_code ec;
  MESSAGE("the small journal: " << disk_bytes_or_zero(journal(kAgents)) << " bytes on disk, "
                                << std::filesystem::file_size(journal(kAgents), ec) << " bytes long");
  CHECK(disk_bytes_or_zero(journal(kAgents)) <= ((kSmallJournalMb + 4) << 20));
  CHECK_FALSE(finished_a_run(agents.back()->log(), "burst-" + std::to_string(kAgents)));

  fleet.start_controller(std::to_string(fleet.port()), {"--lease-s", "12", "--max-ingest-mb", "1"});
  REQUIRE_MESSAGE(wait_until(600s, [&] { return fleet.finished(id); }), fleet.logs());
  // Agents waiting their turn under the byte limit are not taken for silent ones: no connection dropped for it.
  CHECK_MESSAGE(fleet.controller().log().find("no heartbeat for") == std::string::npos, fleet.logs());
  // The replay reached the limit, and passed it by at most a frame per connection (this test's frames are under
  // 1 MiB; without the limit, 4 agents x 8 results could wait at once).
  auto m = cli::http_request(fleet.url(), "GET", "/metrics", "", {});
  REQUIRE(m);
  REQUIRE(m->status == 200);
  const std::string key = "\njetsweep_ingest_bytes_in_flight_peak ";
  const size_t at = m->body.find(key);
  REQUIRE(at != std::string::npos);
  const double peak = std::stod(m->body.substr(at + key.size()));
  MESSAGE("results waiting for the database at most: " << peak << " bytes (limit 1 MiB)");
  CHECK(peak >= double(1 << 20));
  CHECK(peak <= double((1 + kAgents) << 20));

  for (size_t i = 0; i < agents.size(); ++i) {
    const int64_t peak = proc_status_kb(agents[i]->pid(), "VmHWM");
    MESSAGE("agent burst-" << i + 1 << ": peak " << peak << " kB, idle " << baseline_kb[i] << " kB");
    CHECK_MESSAGE(peak - baseline_kb[i] <= kOutboxMemoryMb * 1024 + kAllowanceKb,
                  "agent burst-" << i + 1 << ": peak " << peak << " kB, " << baseline_kb[i] << " kB when idle; journal "
                                 << smallest_backlog << "+ bytes");
  }
  check_exactly_once(db, kAgents, kEpochs, kAgents * kMnistMinibatches);
  CHECK(agents.back()->log().find("paused") != std::string::npos);
  // The pause is measured: every epoch says how long its run waited before it, and burst-4's run (which the log
  // says paused a second or more) has an epoch that waited that long.
  CHECK(db.count("SELECT count(*) FROM epochs WHERE paused_before_s IS NULL") == 0);
  CHECK(db.count("SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run_id JOIN agents a ON a.id = r.agent_id "
                 "WHERE a.name = 'burst-" + std::to_string(kAgents) + "' AND e.paused_before_s >= 1") >= 1);
  CHECK(db.count("SELECT max(attempts) FROM runs") == 1);   // no run was requeued
  CHECK(db.count("SELECT count(*) FROM set_aside_results") == 0);   // nothing measured was left out
  CHECK_MESSAGE(fleet.controller().log().find("requeued") == std::string::npos, fleet.logs());
  // Telemetry once: no sample twice, none missing (the simulated sampler ticks every 1/100 s).
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, t_s FROM samples GROUP BY run_id, t_s HAVING count(*) > 1) d") == 0);
  CHECK(db.count("SELECT count(*) FROM (SELECT t_s - lag(t_s) OVER (PARTITION BY run_id ORDER BY t_s) AS gap "
                 "FROM samples) g WHERE gap > 0.015") == 0);
  CHECK(db.count("SELECT count(*) FROM samples") > kAgents * kEpochs * 60 * 100);
}
