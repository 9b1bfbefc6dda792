// A full disk under PostgreSQL's WAL (ctest label "fault"): a private cluster whose pg_wal lives on a small tmpfs of
// its own is filled to the last byte while results are ingested through PgStore. A WAL segment that cannot be created
// makes the server PANIC and restart (crash recovery); each message acknowledged before is there after, each one that
// was not is stored by its resend, and every resend of a stored one is a duplicate: nothing lost, nothing doubled.
// Needs the right to mount (root: CI and scripts/test run as root). Single-threaded.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <pqxx/pqxx>
#include <sstream>

#include "common/campaign.hpp"
#include "controller/pg_store.hpp"
#include "integration/one_claimed_run.hpp"
#include "support/process.hpp"
#include "support/small_tablespace.hpp"
#include "support/temp_dir.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;
using namespace std::chrono_literals;

namespace {

// A cluster of its own (scripts/lib.sh js_pg_start) with pg_wal on a tmpfs of `size`, 1 MB WAL segments and as few
// kept as PostgreSQL allows, so that WAL written past a few MB needs a new segment file. Stopped, deleted and
// unmounted on destruction.
class WalOnTmpfs {
 public:
  explicit WalOnTmpfs(const std::string& size) {
    // The cluster's user (not root) must reach the mount point.
    std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all | std::filesystem::perms::others_exec |
                                                  std::filesystem::perms::group_exec);
    std::filesystem::create_directory(wal_mount());
    if (::mount("tmpfs", wal_mount().c_str(), "tmpfs", 0, ("size=" + size + ",mode=1777").c_str()) != 0) {
      refused_ = "mount tmpfs on " + wal_mount() + ": " + std::strerror(errno);
      return;
    }
    mounted_ = true;
    std::string out, err;
    const int rc = lib_sh("export JS_PG_INITDB_ARGS='--waldir=" + wal_mount() + "/pg_wal --wal-segsize=1'; "
                          "js_pg_start " + dir_.str() + " && echo \"$JS_PG_DIR\" && echo \"$JS_PG_ADMIN_DSN\"",
                          &out, &err);
    if (rc != 0) {
      refused_ = "js_pg_start: " + err;
      return;
    }
    std::istringstream lines(out);
    std::getline(lines, cluster_dir_);
    std::string admin;
    std::getline(lines, admin);
    // The password in the DSN: this test's process keeps the PGPASSFILE of the server the other tests use.
    dsn_ = admin + " password=" + read_file(cluster_dir_ + "/password");
    while (!dsn_.empty() && (dsn_.back() == '\n' || dsn_.back() == ' ')) dsn_.pop_back();
  }
  ~WalOnTmpfs() {
    std::string out, err;
    std::error_code ec;
    std::filesystem::remove(filler(), ec);   // room for the shutdown checkpoint, whatever failed
    if (mounted_) lib_sh("js_pg_discard " + dir_.str(), &out, &err);   // nothing to stop is fine
    if (mounted_) ::umount2(wal_mount().c_str(), MNT_DETACH);
  }
  WalOnTmpfs(const WalOnTmpfs&) = delete;
  WalOnTmpfs& operator=(const WalOnTmpfs&) = delete;

  bool started() const { return !dsn_.empty(); }
  const std::string& refused() const { return refused_; }
  const std::string& admin_dsn() const { return dsn_; }
  std::string wal_mount() const { return (dir_.path() / "wal").string(); }
  std::string filler() const { return wal_mount() + "/filler"; }
  std::string server_log() const { return read_file(cluster_dir_ + "/data/server.log"); }
  // Starts the server again if no server runs (it gives up when crash recovery itself finds no room for WAL); one in
  // recovery is left alone.
  Status ensure_running() const {
    std::string out, err;
    return lib_sh("js_as_pg \"$(js_pg_bin)/pg_ctl\" -D " + cluster_dir_ + "/data status >/dev/null || js_pg_start " +
                      dir_.str(),
                  &out, &err) == 0
               ? Status::ok()
               : internal_error("js_pg_start: " + err);
  }

 private:
  // Runs `script` in bash with scripts/lib.sh sourced and the small-WAL server options.
  int lib_sh(const std::string& script, std::string* out, std::string* err) const {
    return run_command("/bin/bash",
                       {"-c", "source " + std::string(JETSWEEP_SOURCE_DIR) + "/scripts/lib.sh && "
                                  "export JS_PG_SERVER_OPTIONS='-c min_wal_size=2MB -c max_wal_size=4MB "
                                  "-c wal_keep_size=1GB' && " + script},
                       out, err);
  }

  TempDir dir_;
  bool mounted_ = false;
  std::string refused_, cluster_dir_, dsn_;
};

constexpr int64_t kChunk = 2048;   // minibatches per chunk: about 16 kB of float4 per array, and WAL to match

// The messages of epoch `n` of `run`: its minibatch chunks, then its epoch_result.
std::vector<proto::Body> epoch_messages(int64_t run, int64_t n, int chunks) {
  std::vector<proto::Body> out;
  for (int c = 0; c < chunks; ++c) {
    proto::MinibatchChunk m;
    m.run_id = run;
    m.epoch = n;
    m.first_index = c * kChunk;
    for (int64_t i = 0; i < kChunk; ++i) {
      m.stall_s.push_back(0.001 * static_cast<double>((i + n) % 97));
      m.compute_s.push_back(0.01 + 0.0001 * static_cast<double>((i * 7 + c) % 89));
    }
    out.push_back(std::move(m));
  }
  proto::EpochResult e;
  e.run_id = run;
  e.epoch = n;
  e.minibatches = chunks * kChunk;
  e.e2e_s = e.compute_s = 10.0 + static_cast<double>(n);
  out.push_back(std::move(e));
  return out;
}

// One agent, "wal-1", and the run of a one-run campaign it claimed, in the fresh database of `store`:
// (agent id, run id).
std::pair<int64_t, int64_t> claim_one_run(controller::PgStore& store) {
  REQUIRE(store.migrate().is_ok());
  auto agent = store.register_agent(host_agent("wal-1"), controller::AgentProof{std::nullopt, std::string(64, 'a')});
  REQUIRE_MESSAGE(agent.is_ok(), agent.status().to_string());
  auto parsed = parse_campaign("campaign: wal\nmatrix:\n  model: lenet5\n  dataset: mnist\n  epochs: 1000\n", "w.yaml");
  REQUIRE(parsed.is_ok());
  REQUIRE(store.create_campaign(*parsed, "w.yaml", "", "").is_ok());
  auto claimed = store.claim_run(agent->agent_id, "host", "");
  REQUIRE(claimed.is_ok());
  REQUIRE(claimed->has_value());
  return {agent->agent_id, (*claimed)->run_id};
}

}  // namespace

TEST_CASE("PostgreSQL's WAL out of disk: the server PANICs and recovers; nothing acknowledged is lost, nothing doubled") {
  if (::geteuid() != 0) {
    WARN_MESSAGE(false, "not root: a file system for the WAL cannot be mounted here, so the WAL is not filled");
    return;
  }
  WalOnTmpfs cluster("24m");
  REQUIRE_MESSAGE(cluster.started(), cluster.refused());
  // The database js_pg_start made (another CREATE DATABASE would write megabytes of WAL of its own).
  const std::string dsn = std::string(cluster.admin_dsn()).replace(cluster.admin_dsn().find("dbname=postgres"),
                                                                    15, "dbname=jetsweep");
  controller::PgStore store{dsn};
  const auto [agent_id, run] = claim_one_run(store);
  constexpr int kChunksPerEpoch = 4;

  // Each epoch's messages as one group commit, as the controller's ingest sends them; `acked` those it stored.
  std::vector<int64_t> acked, unacked;
  // `duplicates` (when given) counts the messages the store found stored already.
  const auto send_epoch = [&](int64_t n, int* duplicates = nullptr) {
    std::vector<controller::IngestItem> batch;
    for (auto& body : epoch_messages(run, n, kChunksPerEpoch)) batch.push_back({agent_id, std::move(body), {}, {}});
    Status s = store.ingest_batch(batch);
    for (const auto& item : batch) {
      s = s.is_ok() ? item.result : s;
      if (duplicates && s.is_ok()) *duplicates += item.outcome == controller::IngestOutcome::kDuplicate;
    }
    return s;
  };
  // Some epochs with room, then the WAL's file system full: epochs until the server cannot write WAL.
  for (int64_t n = 0; n < 5; ++n) {
    REQUIRE(send_epoch(n).is_ok());
    acked.push_back(n);
  }
  fill_until_enospc(cluster.filler());
  int64_t next = 5;
  Status failure;
  for (; next < 400 && failure.is_ok(); ++next) {
    failure = send_epoch(next);
    (failure.is_ok() ? acked : unacked).push_back(next);
  }
  REQUIRE_MESSAGE(!failure.is_ok(), "400 epochs were stored with the WAL's file system full");
  CHECK_MESSAGE(failure.code() == Code::kUnavailable, failure.to_string());   // retried, never acknowledged
  const std::string what = "the write that failed: " + failure.to_string() + "; " + std::to_string(acked.size()) +
                           " epochs stored, " + std::to_string(unacked.size()) + " not";
  MESSAGE(what);
  const std::string log = cluster.server_log();
  const size_t panic = log.find("PANIC:  could not write to file \"pg_wal/");
  REQUIRE_MESSAGE(panic != std::string::npos, log);
  CHECK(log.find("No space left on device", panic) != std::string::npos);
  MESSAGE(log.substr(panic, log.find('\n', panic) - panic));
  // Room again: the server restarts (by itself, or here once its recovery gave up for want of WAL space).
  std::filesystem::remove(cluster.filler());
  const bool back = wait_until(120s, [&] {
    try {
      pqxx::connection c(dsn);
      return true;
    } catch (const std::exception&) {
      (void)cluster.ensure_running();
      return false;
    }
  });
  REQUIRE_MESSAGE(back, cluster.server_log());
  pqxx::connection c(dsn);
  pqxx::nontransaction q(c);
  const auto count = [&](const std::string& sql) { return q.exec1(sql)[0].as<int64_t>(); };
  // Every acknowledged epoch survived the crash, whole.
  for (const int64_t n : acked) {
    const std::string where = " WHERE run_id = " + std::to_string(run) + " AND epoch = " + std::to_string(n);
    CHECK_MESSAGE(count("SELECT count(*) FROM epochs" + where) == 1, "epoch ", n);
    CHECK_MESSAGE(count("SELECT count(*) FROM minibatches" + where) == kChunksPerEpoch * kChunk, "epoch ", n);
  }
  // The agent resends what was not acknowledged and, as a journal replay after a lost ack would, what was: each
  // acknowledged message is a duplicate, and every row is there once.
  int duplicates = 0;
  for (int64_t n = 0; n < next; ++n) {
    Status s;
    int d = 0;
    const bool sent = wait_until(60s, [&] { return d = 0, (s = send_epoch(n, &d)).is_ok(); });
    REQUIRE_MESSAGE(sent, s.to_string());
    if (std::find(acked.begin(), acked.end(), n) != acked.end()) duplicates += d;
  }
  CHECK(duplicates == static_cast<int>(acked.size()) * (kChunksPerEpoch + 1));
  CHECK(count("SELECT count(*) FROM epochs WHERE run_id = " + std::to_string(run)) == next);
  CHECK(count("SELECT count(DISTINCT epoch) FROM epochs WHERE run_id = " + std::to_string(run)) == next);
  CHECK(count("SELECT count(*) FROM minibatches WHERE run_id = " + std::to_string(run)) ==
        next * kChunksPerEpoch * kChunk);
  CHECK(count("SELECT count(*) FROM (SELECT epoch, idx FROM minibatches WHERE run_id = " + std::to_string(run) +
              " GROUP BY 1, 2 HAVING count(*) > 1) d") == 0);
  CHECK(count("SELECT count(*) FROM set_aside_results") == 0);
}
