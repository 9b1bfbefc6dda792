// The fault soak (issue 32, docs/RELIABILITY.md): campaigns on simulated Orin Nano agents, one after another, while
// faults chosen by a seeded generator hit them at random seeded times: kill -9 of the controller, of an agent (with
// the controller up, and while it is down), a PostgreSQL restart, every agent connection cut, an agent frozen
// (SIGSTOP) past its lease, the database made slow (its tables locked for seconds), an agent's journal disk
// full (ENOSPC; each journal on its own tmpfs, where the tests may mount one), PostgreSQL's disk full (the soak's
// database in a tablespace on a tmpfs of its own, filled to the last byte), and an agent's wall clock stepped by
// 1-10 minutes (each agent under libfaketime, its offset in a file; its monotonic clocks untouched, as an NTP step
// leaves them). After each campaign, every run is done once and every epoch, minibatch and sample row it stored
// equals a clean replay of the same run (clean_replay.hpp); after the soak, every agent is connected again (none
// locked out) and no epoch's window on the controller's clock (analysis_epochs.start_unix_s) has moved since its
// campaign ended.
//
// Sized by the environment: JETSWEEP_CHAOS_FAULTS (default 12, CI's size), JETSWEEP_CHAOS_SEED (default 1),
// JETSWEEP_CHAOS_TIME_SCALE (the boards' pacing, default 0.3), JETSWEEP_CHAOS_JOURNAL_DISK=0 (never draws
// journal_disk_full, which is drawn by default where the soak may mount), JETSWEEP_CHAOS_PG_DISK=0 (never draws
// pg_disk_full, drawn where the soak may mount), JETSWEEP_CHAOS_CLOCK_STEP=0 (never draws
// clock_step, drawn by default where libfaketime is installed; JETSWEEP_CHAOS_FAKETIME names the library);
// JETSWEEP_CHAOS_REPORT names a JSON file for the summary (bench/chaos). One test thread; the processes are the real
// controller and agents.
#include <doctest/doctest.h>

#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "chaos/clean_replay.hpp"
#include "support/fleet.hpp"
#include "support/small_tablespace.hpp"
#include "support/tcp_proxy.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

enum class Fault { kKillController, kKillAgent, kKillAgentControllerDown, kRestartPostgres, kCutConnections,
                   kFreezeAgent, kSlowDatabase, kJournalDiskFull, kPgDiskFull, kClockStep };
constexpr Fault kFaults[] = {Fault::kKillController, Fault::kKillAgent, Fault::kKillAgentControllerDown,
                             Fault::kRestartPostgres, Fault::kCutConnections, Fault::kFreezeAgent, Fault::kSlowDatabase,
                             Fault::kJournalDiskFull, Fault::kPgDiskFull, Fault::kClockStep};

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::kKillController: return "kill_controller";
    case Fault::kKillAgent: return "kill_agent";
    case Fault::kKillAgentControllerDown: return "kill_agent_controller_down";
    case Fault::kRestartPostgres: return "restart_postgres";
    case Fault::kCutConnections: return "cut_connections";
    case Fault::kFreezeAgent: return "freeze_agent";
    case Fault::kSlowDatabase: return "slow_database";
    case Fault::kJournalDiskFull: return "journal_disk_full";
    case Fault::kPgDiskFull: return "pg_disk_full";
    case Fault::kClockStep: return "clock_step";
  }
  return "?";
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int64_t rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  int64_t value = 0;
  while (in >> key) {
    if (key == "VmRSS:") return in >> value ? value : 0;
    in.ignore(1 << 12, '\n');
  }
  return 0;
}

constexpr int kAgents = 3;
constexpr const char* kClass = "orin-nano";

// The controller's flags: a 2 s lease (a frozen agent loses its run), and attempts enough that no run is declared lost
// to the soak's own fault rate (a fault every ~3 s hits a 10 s run several times; the default 3 attempts exist to
// stop a run that kills its agents, which these runs do not).
const std::vector<std::string> kControllerFlags = {"--lease-s", "2", "--max-attempts", "1000"};

// The fleet under fault: a controller and kAgents simulated boards that dial it through a proxy.
class Soak {
 public:
  // `pg_disk`: the tablespace `db` lives in, when the soak could make one (pg_disk_full is drawn then).
  Soak(const TestDatabase& db, const SmallTablespace* pg_disk, uint64_t seed, std::string time_scale)
      : db_(db), pg_disk_(pg_disk), fleet_(db, kControllerFlags), proxy_(static_cast<uint16_t>(fleet_.port())),
        rng_(seed), time_scale_(std::move(time_scale)) {
    if (env_or("JETSWEEP_CHAOS_JOURNAL_DISK", "1") == "1") mount_journal_disks();
    else journal_disks_refused_ = "off (JETSWEEP_CHAOS_JOURNAL_DISK=0)";
    if (env_or("JETSWEEP_CHAOS_CLOCK_STEP", "1") == "1") find_faketime();
    else faketime_refused_ = "off (JETSWEEP_CHAOS_CLOCK_STEP=0)";
    for (const Fault f : kFaults)
      if ((f != Fault::kJournalDiskFull || !journal_disks_.empty()) && (f != Fault::kClockStep || !faketime_.empty()) &&
          (f != Fault::kPgDiskFull || pg_disk_))
        faults_.push_back(f);
    for (int i = 1; i <= kAgents; ++i) start_agent(i);
    REQUIRE_MESSAGE(wait_until(60s, [&] { return fleet_.agents_connected(kAgents); }), fleet_.logs());
  }
  ~Soak() {
    for (const auto& dir : journal_disks_) ::umount2(dir.c_str(), MNT_DETACH);   // the agents may still hold files
  }
  Fleet& fleet() { return fleet_; }
  // Why the journal_disk_full fault is not drawn ("" when it is).
  const std::string& journal_disks_refused() const { return journal_disks_refused_; }
  // Why the clock_step fault is not drawn ("" when it is).
  const std::string& clock_step_refused() const { return faketime_refused_; }

  // Seconds in [lo, hi), from the soak's generator.
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  void pause(double lo, double hi) { std::this_thread::sleep_for(std::chrono::duration<double>(uniform(lo, hi))); }

  // Injects one fault drawn from the generator; returns it.
  Fault inject() {
    const Fault f = faults_[std::uniform_int_distribution<size_t>(0, faults_.size() - 1)(rng_)];
    const int agent = std::uniform_int_distribution<int>(1, kAgents)(rng_);
    MESSAGE("fault " << std::string(fault_name(f)) << (f == Fault::kKillAgent || f == Fault::kFreezeAgent ||
                                                  f == Fault::kKillAgentControllerDown || f == Fault::kJournalDiskFull ||
                                                  f == Fault::kClockStep
                                              ? " on chaos-" + std::to_string(agent) : std::string()));
    switch (f) {
      case Fault::kKillController:
        kill_controller();
        pause(0, 3);
        restart_controller();
        break;
      case Fault::kKillAgent:
        kill_agent(agent);
        pause(0, 1);
        start_agent(agent);
        break;
      case Fault::kKillAgentControllerDown:
        kill_controller();
        kill_agent(agent);
        start_agent(agent);   // it replays its journal into a controller that is not there yet
        pause(0.5, 3);
        restart_controller();
        break;
      case Fault::kRestartPostgres: {
        std::string out, err;
        REQUIRE_MESSAGE(run_command("/bin/sh", {"-c", env_or("JETSWEEP_TEST_PG_RESTART", "false")}, &out, &err) == 0,
                        "JETSWEEP_TEST_PG_RESTART failed (run the tests through scripts/test): " << err);
        break;
      }
      case Fault::kCutConnections:
        proxy_.cut();
        break;
      case Fault::kFreezeAgent:
        agents_.at(agent)->signal(SIGSTOP);
        pause(0.5, 4);   // past the 2 s lease at times: its run goes to another agent, what it sends after is set aside
        agents_.at(agent)->signal(SIGCONT);
        break;
      case Fault::kSlowDatabase: {
        // Every statement touching these tables waits while this transaction holds them.
        pqxx::connection c(db_.dsn());
        pqxx::work w(c);
        w.exec("LOCK TABLE runs, epochs, agents IN ACCESS EXCLUSIVE MODE");
        pause(0.5, 3);
        w.commit();
        break;
      }
      case Fault::kJournalDiskFull: {
        // The agent's journal file system filled to the last byte: its writes fail with ENOSPC for 0.5-3 s (it keeps
        // those messages in memory and sends them; compaction cannot write), then the space comes back.
        const std::string filler = journal_disks_.at(static_cast<size_t>(agent - 1)) + "/filler";
        fill_until_enospc(filler);
        pause(0.5, 3);
        std::filesystem::remove(filler);
        break;
      }
      case Fault::kPgDiskFull: {
        // The file system under the soak's database filled to the last byte for 0.5-3 s: every write that needs a
        // new page fails with disk_full (53100), which the controller retries (its WAL, elsewhere, carries on).
        const std::string filler = pg_disk_->fill();
        pause(0.5, 3);
        std::filesystem::remove(filler);
        break;
      }
      case Fault::kClockStep: {
        // The board's wall clock set 1-10 minutes ahead or back, as NTP steps it (a Jetson without an RTC battery
        // boots with a wrong clock). The step stays: offsets add up, within +-30 minutes.
        double& offset = clock_offset_s_[agent];
        double step = uniform(60, 600);
        if (offset + step > 1800 || (offset - step >= -1800 && uniform(0, 1) < 0.5)) step = -step;
        offset += step;
        write_clock_offset(agent);
        MESSAGE("chaos-" << agent << "'s clock stepped by " << step << " s to " << offset << " s");
        break;
      }
    }
    ++injected_[fault_name(f)];
    return f;
  }
  const std::map<std::string, int64_t>& injected() const { return injected_; }

 private:
  void start_agent(int i) {
    std::vector<std::string> env;
    if (!faketime_.empty()) {
      // libfaketime reads the offset file at most once a second (FAKETIME_CACHE_DURATION) and leaves the monotonic
      // clocks alone, as an NTP step does; a restarted agent finds the clock as its board left it.
      if (!clock_offset_s_.count(i)) write_clock_offset(i);
      env = {"LD_PRELOAD=" + faketime_, "FAKETIME_TIMESTAMP_FILE=" + clock_file(i), "FAKETIME_CACHE_DURATION=1",
             "FAKETIME_DONT_FAKE_MONOTONIC=1"};
    }
    agents_[i] = &fleet_.add_agent("chaos-" + std::to_string(i),
                                   {"--sim", std::string(kClass) + "/" + std::to_string(i), "--time-scale", time_scale_},
                                   proxy_.port(), env);
  }
  // libfaketime, where installed (Debian's libfaketime package), else the clock_step fault is not drawn.
  void find_faketime() {
    const std::string named = env_or("JETSWEEP_CHAOS_FAKETIME", "");
    const std::vector<std::string> candidates =
        named.empty() ? std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                                                 "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
                                                 "/usr/lib/faketime/libfaketime.so.1"}
                      : std::vector<std::string>{named};
    for (const auto& c : candidates)
      if (std::filesystem::exists(c)) {
        faketime_ = c;
        return;
      }
    faketime_refused_ = "libfaketime not found (" + candidates.front() + (named.empty() ? ", ...)" : ")");
  }
  std::string clock_file(int i) const { return (fleet_.dir() / ("clock-chaos-" + std::to_string(i))).string(); }
  // Written whole and renamed into place: the agent never reads half a file.
  void write_clock_offset(int i) {
    const double offset = clock_offset_s_[i];
    const std::string tmp = clock_file(i) + ".tmp";
    std::ofstream(tmp) << (offset < 0 ? "-" : "+") << std::abs(offset) << "\n";
    std::filesystem::rename(tmp, clock_file(i));
  }
  void kill_agent(int i) {
    agents_.at(i)->signal(SIGKILL);
    agents_.at(i)->wait(10s);
  }
  void kill_controller() {
    fleet_.controller().signal(SIGKILL);
    fleet_.controller().wait(10s);
  }
  void restart_controller() { fleet_.start_controller(std::to_string(fleet_.port()), kControllerFlags); }

  // Each agent's journal directory on its own small tmpfs, so one can be filled: needs CAP_SYS_ADMIN (root on the
  // test machines and CI); without it the fault is not drawn and the summary says why.
  void mount_journal_disks() {
    std::vector<std::string> dirs;
    for (int i = 1; i <= kAgents; ++i) {
      const std::string dir = (fleet_.dir() / ("journal-chaos-" + std::to_string(i))).string();
      std::filesystem::create_directories(dir);
      if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64m,mode=0700") != 0) {
        journal_disks_refused_ = "mount tmpfs on " + dir + ": " + std::strerror(errno);
        for (const auto& d : dirs) ::umount2(d.c_str(), MNT_DETACH);
        return;
      }
      dirs.push_back(dir);
    }
    journal_disks_ = dirs;
  }
  const TestDatabase& db_;
  const SmallTablespace* pg_disk_;
  Fleet fleet_;
  TcpProxy proxy_;
  std::mt19937_64 rng_;
  std::string time_scale_;
  std::map<int, Process*> agents_;
  std::map<std::string, int64_t> injected_;
  std::vector<Fault> faults_;                // those drawn
  std::vector<std::string> journal_disks_;   // per agent, its journal's tmpfs; empty when mounting was refused
  std::string journal_disks_refused_;
  std::string faketime_;                     // libfaketime's path; empty when clock_step is not drawn
  std::string faketime_refused_;
  std::map<int, double> clock_offset_s_;     // per agent, its wall clock's offset from the machine's
};

// Every epoch's window start on the controller's clock as analysis_epochs shows it, for the campaign.
std::string epoch_windows(const TestDatabase& db, int64_t campaign) {
  return db.text("SELECT coalesce(string_agg(run_id || '/' || epoch || '=' || coalesce(start_unix_s::text, 'null'), "
                 "', ' ORDER BY run_id, epoch), '') FROM analysis_epochs WHERE campaign_id = " + std::to_string(campaign));
}

// Round `round`'s campaign: three runs. Each drops the page cache first, so it starts from the state a clean replay
// starts from (a simulated board models its page cache across runs).
std::string soak_campaign(int round) {
  return "campaign: chaos-" + std::to_string(round) + "\nmatrix:\n  device: " + kClass +
         "\n  model: lenet5\n  dataset: mnist\n  batch_size: [256, 512, 1024]\n  epochs: 3\n  drop_caches: true\n  seed: " +
         std::to_string(round) + "\n";
}

}  // namespace

TEST_CASE("chaos soak: seeded faults on a simulated fleet; every row exactly once and equal to a clean replay") {
  const int64_t target = std::stoll(env_or("JETSWEEP_CHAOS_FAULTS", "12"));
  const uint64_t seed = std::stoull(env_or("JETSWEEP_CHAOS_SEED", "1"));
  // The database in a tablespace of its own where the soak may mount one (pg_disk_full); made first, dropped last.
  std::unique_ptr<SmallTablespace> pg_disk;
  std::string pg_disk_refused = "off (JETSWEEP_CHAOS_PG_DISK=0)";
  if (env_or("JETSWEEP_CHAOS_PG_DISK", "1") == "1") {
    pg_disk = std::make_unique<SmallTablespace>("1g");
    pg_disk_refused = pg_disk->refused();
    if (!pg_disk->made()) pg_disk.reset();
  }
  TestDatabase db(pg_disk ? pg_disk->name() : "");
  Soak soak(db, pg_disk.get(), seed, env_or("JETSWEEP_CHAOS_TIME_SCALE", "0.3"));
  Fleet& fleet = soak.fleet();
  const auto board_of = [](const std::string& agent) {
    return std::make_pair(std::string(kClass), agent.substr(agent.find('-') + 1));
  };
  const auto started = std::chrono::steady_clock::now();
  int64_t injected = 0;
  int round = 0;
  ReplayTally total;
  std::vector<int64_t> controller_rss_kb;
  std::map<int64_t, std::string> windows;   // per campaign, its epochs' windows when it ended
  while (injected < target) {
    ++round;
    const auto file = fleet.dir() / ("chaos-" + std::to_string(round) + ".yaml");
    write_file(file, soak_campaign(round));
    const int64_t id = submit(fleet, file);
    while (injected < target && !fleet.finished(id)) {
      soak.pause(0.5, 2.5);
      soak.inject();
      ++injected;
    }
    REQUIRE_MESSAGE(wait_until(900s, [&] { return fleet.finished(id); }), fleet.logs());
    const ReplayTally t = check_equal_to_clean_replay(db, id, board_of);
    total.runs += t.runs;
    total.epochs += t.epochs;
    total.minibatches += t.minibatches;
    total.samples += t.samples;
    total.mismatched_runs += t.mismatched_runs;
    controller_rss_kb.push_back(rss_kb(fleet.controller().pid()));
    windows[id] = epoch_windows(db, id);
  }
  // A clock step on a board moves none of the epochs measured before it on the controller's clock.
  int64_t moved = 0;
  for (const auto& [id, then] : windows) {
    const std::string now = epoch_windows(db, id);
    if (now != then) ++moved;
    CHECK_MESSAGE(now == then, "campaign " << id << "'s epoch windows moved after it ended:\n  then " << then
                                           << "\n  now  " << now);
  }
  // Runs whose start (t = 0 of their epochs and samples), on the controller's clock as analysis_epochs puts it, is
  // outside the run's own assignment-to-finish window by more than 5 s: stored with an offset other than the one of
  // their start (a step no probe had seen yet). Epoch times of simulated boards are modelled, not paced, so only the
  // start is compared.
  const int64_t off_clock = db.count(
      "SELECT count(*) FROM runs r JOIN analysis_epochs e ON e.run_id = r.id AND e.epoch = 0 "
      "WHERE e.start_unix_s - e.t_start_s NOT BETWEEN extract(epoch FROM r.assigned_at) - 5 "
      "  AND extract(epoch FROM r.finished_at) + 5");
  // Nobody locked out: every agent is back, under the name it enrolled with.
  CHECK_MESSAGE(wait_until(120s, [&] { return fleet.agents_connected(kAgents); }), fleet.logs());
  CHECK(db.count("SELECT count(*) FROM agents") == kAgents);
  const int64_t set_aside = db.count("SELECT count(*) FROM set_aside_results");
  const int64_t attempts = db.count("SELECT coalesce(sum(attempts), 0) FROM runs");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  boost::json::object report{{"seed", seed}, {"faults", injected}, {"campaigns", round}, {"runs", total.runs},
                             {"epochs", total.epochs}, {"minibatches", total.minibatches}, {"samples", total.samples},
                             {"mismatched_runs", total.mismatched_runs}, {"run_attempts", attempts},
                             {"set_aside_results", set_aside}, {"seconds", seconds},
                             {"campaigns_with_moved_epochs", moved}, {"runs_off_controller_clock", off_clock}};
  boost::json::object by_kind;
  for (const auto& [k, n] : soak.injected()) by_kind[k] = n;
  report["by_fault"] = by_kind;
  if (!soak.journal_disks_refused().empty()) report["journal_disk_full_not_injected"] = soak.journal_disks_refused();
  if (!soak.clock_step_refused().empty()) report["clock_step_not_injected"] = soak.clock_step_refused();
  if (!pg_disk) report["pg_disk_full_not_injected"] = pg_disk_refused;
  int64_t refused = 0;   // result messages an agent could not journal (its disk full): held in memory, journaled later
  const std::string logs = fleet.logs();
  for (size_t at = logs.find(": journal append of "); at != std::string::npos; at = logs.find(": journal append of ", at + 1))
    ++refused;
  report["journal_appends_refused"] = refused;
  boost::json::array rss;
  for (int64_t kb : controller_rss_kb) rss.push_back(kb);
  report["controller_rss_kb_per_campaign"] = rss;
  MESSAGE(boost::json::serialize(report));
  if (const char* out = std::getenv("JETSWEEP_CHAOS_REPORT"); out && *out)
    std::ofstream(out) << boost::json::serialize(report) << "\n";
  CHECK(total.mismatched_runs == 0);
  CHECK(total.runs == 3 * round);
}
