// What only PgStore can show, against a real PostgreSQL (a fresh database per test, made by the real migrations): the
// typed queries read NULLs safely, migrations and views are versioned, a terminated server connection is survived,
// and so is a server out of disk (or of another resource it may get back): retried, never acknowledged unstored.
// Its contract with MemoryStore (every Store method) is the conformance suite in tests/store/.
#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "controller/pg_util.hpp"
#include "integration/one_claimed_run.hpp"
#include "support/small_tablespace.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

TEST_CASE("an epoch with a NULL loss (a diverged model) is reported as null, not an error") {
  OneClaimedRun f;
  auto& db = f.db;
  auto& store = f.store;
  const int64_t run_id = f.run_id;

  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = 0;
  e.e2e_s = 2.0;
  e.stall_s = 0.5;
  e.compute_s = 1.5;
  e.minibatches = 10;
  e.loss = std::numeric_limits<double>::quiet_NaN();   // stored as NULL
  REQUIRE(store.ingest_epoch(f.agent_id, e).is_ok());
  e.epoch = 1;
  e.loss = 0.25;
  REQUIRE(store.ingest_epoch(f.agent_id, e).is_ok());
  CHECK(db.count("SELECT count(*) FROM epochs WHERE loss IS NULL") == 1);

  auto report = store.campaign_report(f.campaign_id, controller::ReportEpochs::kRows);
  REQUIRE_MESSAGE(report.is_ok(), report.status().to_string());
  REQUIRE(report->runs.size() == 1);
  const auto& run = report->runs[0];
  CHECK(run.status == "running");
  CHECK(run.agent == std::optional<std::string>("a1"));
  CHECK_FALSE(run.wall_s.has_value());
  CHECK_FALSE(run.applied.has_value());
  REQUIRE(run.epochs.size() == 2);
  CHECK_FALSE(run.epochs[0].loss.has_value());
  CHECK(run.epochs[1].loss == std::optional<double>(0.25));
  CHECK_FALSE(run.epochs[0].energy_j.has_value());
  CHECK_FALSE(run.epochs[0].clocks_start.has_value());
  CHECK_FALSE(report->power_sensor);
  const auto wire = api::to_json(report.value());
  CHECK(wire.at("runs").as_array()[0].as_object().at("epochs").as_array()[0].as_object().at("loss").is_null());

  auto status = store.campaign_status(f.campaign_id);
  REQUIRE(status.is_ok());
  CHECK(status->running == 1);
  CHECK(status->epochs_done == 2);
  CHECK_FALSE(status->finished);
  auto agents = store.list_agents();
  REQUIRE(agents.is_ok());
  REQUIRE(agents->size() == 1);
  CHECK(agents->front().current_run == std::optional<int64_t>(run_id));
  CHECK(agents->front().ready());
  auto inputs = store.estimate_inputs();
  REQUIRE(inputs.is_ok());
  REQUIRE(inputs->measured.size() == 1);
  CHECK(inputs->measured[0].epochs == 2);
  CHECK(inputs->measured[0].power_mode == perf::power_mode_key(f.campaign.runs[0]));
}

TEST_CASE("a record read from the columns named after its members: each one read, none missing, none left over") {
  pqxx::connection c(admin_dsn());
  pqxx::nontransaction n(c);
  const std::string columns =
      "1.5::float8 AS t_s, NULL::float8 AS t_unix_s, 7.25::float8 AS power_w, 50::float8 AS cpu_util_pct, "
      "NULL::float8 AS cpu_freq_mhz, 1024::bigint AS mem_used_kb, 0::bigint AS disk_read_bytes";
  auto row = [&](const std::string& sql) { return controller::pg::Row(n.exec1("SELECT " + sql)); };
  api::RunSample s;
  controller::pg::read_columns(row(columns + ", 41.5::float8 AS temp_max_c"), s);
  CHECK(s.t_s == 1.5);
  CHECK_FALSE(s.t_unix_s.has_value());
  CHECK(s.power_w == std::optional<double>(7.25));
  CHECK(s.cpu_util_pct == 50.0);
  CHECK(s.mem_used_kb == 1024);
  CHECK(s.temp_max_c == std::optional<double>(41.5));
  // A member without its column: pqxx names the column (PgStore::guarded reports it as a kDbError).
  CHECK_THROWS_AS(controller::pg::read_columns(row(columns), s), pqxx::argument_error);
  // A member the caller computes is left as it was; a column nothing reads is refused, unless its reader names it.
  api::RunSample computed;
  computed.temp_max_c = 3.0;
  controller::pg::read_columns(row(columns), computed, {"temp_max_c"});
  CHECK(computed.temp_max_c == std::optional<double>(3.0));
  CHECK_THROWS_WITH_AS(controller::pg::read_columns(row(columns + ", NULL::float8 AS temp_max_c, 1 AS extra"), s),
                       doctest::Contains("column 'extra' is read by nothing"), std::logic_error);
  controller::pg::read_columns(row(columns + ", NULL::float8 AS temp_max_c, 1 AS extra"), s, {}, {"extra"});
  CHECK_FALSE(s.temp_max_c.has_value());
  CHECK_THROWS_WITH_AS(controller::pg::read_columns(row(columns + ", 1.0::float8 AS temp_max_c"), s, {"temp_max_c"}),
                       doctest::Contains("column 'temp_max_c' is read by nothing"), std::logic_error);
  // A whole result: every row read, the columns checked once; an empty one reads nothing.
  const auto two = controller::pg::read_rows<api::RunSample>(
      n.exec("SELECT " + columns + ", v AS temp_max_c FROM (VALUES (40.5::float8), (NULL)) t(v)"));
  REQUIRE(two.size() == 2);
  CHECK(two[0].temp_max_c == std::optional<double>(40.5));
  CHECK_FALSE(two[1].temp_max_c.has_value());
  const std::string none = "SELECT " + columns + ", 1.0::float8 AS temp_max_c WHERE false";
  CHECK(controller::pg::read_rows<api::RunSample>(n.exec(none)).empty());
  const std::string extra = "SELECT " + columns + ", 1.0::float8 AS temp_max_c, 1 AS x";
  CHECK_THROWS_WITH_AS(controller::pg::read_rows<api::RunSample>(n.exec(extra)),
                       doctest::Contains("column 'x' is read by nothing"), std::logic_error);
  // Names the caller gives that match nothing (a misspelling) are refused too.
  CHECK_THROWS_WITH_AS(controller::pg::read_columns(row(columns), s, {"temp_max"}),
                       doctest::Contains("'temp_max' is left to the caller but is no member"), std::logic_error);
  CHECK_THROWS_WITH_AS(controller::pg::read_columns(row(columns + ", 1.0::float8 AS temp_max_c"), s, {}, {"extra"}),
                       doctest::Contains("column 'extra' is said to be read by the caller but is not selected"),
                       std::logic_error);
}

TEST_CASE("a database migrated by a newer controller is refused, naming the migration; an up-to-date one is not") {
  TestDatabase db;
  controller::PgStore store{db.dsn()};
  REQUIRE(store.connect().is_ok());
  REQUIRE(store.migrate().is_ok());
  CHECK(store.migrate().is_ok());   // idempotent: nothing to apply the second time
  {
    pqxx::connection c(db.dsn());
    pqxx::work w(c);
    w.exec("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_from_the_future.sql')");
    w.commit();
  }
  const Status s = store.migrate();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("the database has migration 9999_from_the_future.sql (version 9999), newer than this "
                         "controller knows") != std::string::npos);
}

TEST_CASE("the analysis views come from sql/views.sql: applied once, re-applied when their definition changed") {
  TestDatabase db;
  controller::PgStore store{db.dsn()};
  REQUIRE(store.migrate().is_ok());
  CHECK(db.count("SELECT count(*) FROM schema_views WHERE name = 'analysis'") == 1);
  // The columns only views.sql defines are there (the fingerprint of the data each run read, issue 31).
  CHECK(db.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'analysis_runs' AND "
                 "column_name IN ('dataset_fingerprint', 'parameters', 'forward_macs')") == 3);
  const auto applied_at = [&] {
    pqxx::connection c(db.dsn());
    pqxx::work w(c);
    return w.exec1("SELECT applied_at::text FROM schema_views WHERE name = 'analysis'")[0].as<std::string>();
  };
  const std::string first = applied_at();
  REQUIRE(store.migrate().is_ok());
  CHECK(applied_at() == first);   // unchanged: not re-created (that would wait on running analyses)
  {
    // A database whose views an older controller made: dropped, and the stored definition differs.
    pqxx::connection c(db.dsn());
    pqxx::work w(c);
    w.exec("DROP VIEW analysis_mode_profile; DROP VIEW analysis_run_profile; DROP VIEW analysis_epochs; "
           "DROP VIEW analysis_runs; UPDATE schema_views SET definition = 'older'");
    w.commit();
  }
  REQUIRE(store.migrate().is_ok());
  CHECK(db.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'analysis_runs' AND "
                 "column_name = 'dataset_fingerprint'") == 1);
  CHECK(db.count("SELECT count(*) FROM schema_views WHERE definition = 'older'") == 0);
}

TEST_CASE("a database an older controller migrated (023, its views, no schema_views) is upgraded with the new views") {
  TestDatabase db;
  REQUIRE(db.apply_migrations(std::string(JETSWEEP_SOURCE_DIR) + "/sql", 23) == 23);
  // The views such a controller left (the migrations no longer create views: sql/views.sql does, after them).
  CHECK(db.count("SELECT count(*) FROM pg_views WHERE viewname LIKE 'analysis_%'") == 0);
  {
    std::ifstream f(std::string(JETSWEEP_SOURCE_DIR) + "/tests/integration/views_of_migration_018.sql");
    REQUIRE(f.good());
    std::stringstream sql;
    sql << f.rdbuf();
    db.exec(sql.str());
  }
  db.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz "
          "NOT NULL DEFAULT now()); INSERT INTO schema_migrations (version, name) SELECT v, 'm' || v FROM "
          "generate_series(1, 23) v");
  CHECK(db.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'analysis_runs' AND "
                 "column_name = 'gpu_gating'") == 1);   // 018's views
  controller::PgStore store{db.dsn()};
  REQUIRE(store.connect().is_ok());
  REQUIRE(store.migrate().is_ok());
  CHECK(db.count("SELECT count(*) FROM schema_migrations WHERE version = 24") == 1);
  CHECK(db.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'analysis_runs' AND "
                 "column_name IN ('dataset_fingerprint', 'gpu_gating')") == 2);
  CHECK(db.count("SELECT count(*) FROM analysis_mode_profile") == 0);   // every view there and readable
}

TEST_CASE("a server connection terminated idle or mid-statement: kUnavailable, then the retry stores the result once") {
  OneClaimedRun f;
  const std::string run = std::to_string(f.run_id);
  const auto epoch = [&](int n) {
    proto::EpochResult e;
    e.run_id = f.run_id;
    e.epoch = n;
    e.e2e_s = e.compute_s = 1.0 + n;
    e.minibatches = 1;
    return e;
  };
  f.db.exec("CREATE FUNCTION shut_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION "
            "'terminating connection due to administrator command' USING ERRCODE = 'admin_shutdown'; END $$");
  enum class Fault { kIdle, kMidStatement, kRaised };
  // Runs `write` (a call into the store) with the store's connection terminated: idle before the call, or while
  // the call waits on the run's row, locked here; or with 57P01 raised by an epoch's insert.
  const auto terminated_during = [&](Fault fault, const std::function<Status()>& write) {
    if (fault == Fault::kRaised) {
      f.db.exec("CREATE TRIGGER shut_down BEFORE INSERT OR UPDATE ON epochs EXECUTE FUNCTION shut_down()");
      const Status s = write();
      f.db.exec("DROP TRIGGER shut_down ON epochs");
      return s;
    }
    if (fault == Fault::kIdle) {
      f.db.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()");
      return write();
    }
    pqxx::connection holder(f.db.dsn());
    pqxx::work lock(holder);
    lock.exec("SELECT 1 FROM runs WHERE id = " + run + " FOR UPDATE");
    const std::string waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                "AND wait_event_type = 'Lock'";
    Status s;
    std::thread writer([&] { s = write(); });
    const bool blocked = wait_until(60s, [&] { return f.db.count(waiting) == 1; });
    f.db.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
              "AND wait_event_type = 'Lock'");
    writer.join();
    lock.abort();
    REQUIRE(blocked);
    return s;
  };
  int next = 0;
  for (Fault fault : {Fault::kIdle, Fault::kMidStatement, Fault::kRaised, Fault::kMidStatement, Fault::kRaised}) {
    CAPTURE(static_cast<int>(fault));
    // In a batch, as the ingest workers write (the path that crashed).
    std::vector<controller::IngestItem> batch(2);
    batch[0].agent_id = batch[1].agent_id = f.agent_id;
    batch[0].body = epoch(next++);
    batch[1].body = epoch(next++);
    Status s = terminated_during(fault, [&] { return f.store.ingest_batch(batch); });
    CHECK_MESSAGE(s.code() == Code::kUnavailable, s.to_string());
    s = f.store.ingest_batch(batch);
    REQUIRE_MESSAGE(s.is_ok(), s.to_string());
    CHECK(batch[0].result.is_ok());
    CHECK(batch[1].result.is_ok());
    // One message alone.
    const proto::EpochResult one = epoch(next++);
    s = terminated_during(fault, [&] { return f.store.ingest_epoch(f.agent_id, one).status(); });
    CHECK_MESSAGE(s.code() == Code::kUnavailable, s.to_string());
    s = f.store.ingest_epoch(f.agent_id, one).status();
    REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  }
  CHECK(f.db.count("SELECT count(*) FROM epochs WHERE run_id = " + run) == next);
}


namespace {

proto::EpochResult epoch_of_run(int64_t run_id, int n) {
  proto::EpochResult e;
  e.run_id = run_id;
  e.epoch = n;
  e.e2e_s = e.compute_s = 1.0 + n;
  e.minibatches = 1;
  return e;
}

}  // namespace

TEST_CASE("a failed statement is retried when the server may recover (disk full, out of memory, shutting down), not "
          "when the statement itself is wrong") {
  for (const char* transient : {"57P01", "08006"}) CHECK_MESSAGE(controller::transient_sqlstate(transient), transient);
  for (const char* resource : {"53100", "53200", "53300", "58030"}) {
    CHECK_MESSAGE(controller::resource_sqlstate(resource), resource);
    CHECK_FALSE_MESSAGE(controller::transient_sqlstate(resource), resource);
  }
  for (const char* permanent : {"53400", "23502", "22003", "42P01", "XX000", ""}) {
    CHECK_FALSE_MESSAGE(controller::transient_sqlstate(permanent), permanent);
    CHECK_FALSE_MESSAGE(controller::resource_sqlstate(permanent), permanent);
  }

  // Raised by the server for an epoch's insert (a trigger stands in for the condition): kUnavailable for the
  // resource ones, so DbWorker retries and the agent's message is not acknowledged; a permanent one is the message's.
  OneClaimedRun f;
  int next = 0;
  for (const char* state : {"disk_full", "out_of_memory", "too_many_connections", "io_error", "numeric_value_out_of_range"}) {
    CAPTURE(state);
    f.db.exec(std::string("CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected' "
                          "USING ERRCODE = '") + state + "'; END $$; CREATE TRIGGER fail BEFORE INSERT ON epochs "
                          "EXECUTE FUNCTION fail()");
    const bool transient = std::string(state) != "numeric_value_out_of_range";
    std::vector<controller::IngestItem> batch(1);
    batch[0].agent_id = f.agent_id;
    batch[0].body = epoch_of_run(f.run_id, next);
    const Status s = f.store.ingest_batch(batch);
    if (transient) {
      CHECK_MESSAGE(s.code() == Code::kUnavailable, s.to_string());
    } else {
      CHECK(s.is_ok());   // the batch went through; the one message failed on its own data
      CHECK(batch[0].result.code() == Code::kDbError);
    }
    const Status alone = f.store.ingest_epoch(f.agent_id, epoch_of_run(f.run_id, next)).status();
    CHECK(alone.code() == (transient ? Code::kUnavailable : Code::kDbError));
    f.db.exec("DROP TRIGGER fail ON epochs; DROP FUNCTION fail()");
    REQUIRE(f.store.ingest_epoch(f.agent_id, epoch_of_run(f.run_id, next)).is_ok());
    ++next;
  }
  CHECK(f.db.count("SELECT count(*) FROM epochs WHERE run_id = " + std::to_string(f.run_id)) == next);

  // Any other call fails with a resource error instead of holding the controller's database thread until it passes.
  f.db.exec("CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected' USING "
            "ERRCODE = 'disk_full'; END $$; CREATE TRIGGER fail BEFORE UPDATE ON agents EXECUTE FUNCTION fail()");
  const Status clock = f.store.record_clock(f.agent_id, 0.5, 0.01, std::nullopt);
  CHECK_MESSAGE(clock.code() == Code::kDbError, clock.to_string());
  CHECK(clock.message().find("[sqlstate 53100]") != std::string::npos);
  f.db.exec("DROP TRIGGER fail ON agents; DROP FUNCTION fail()");
  CHECK(f.store.record_clock(f.agent_id, 0.5, 0.01, std::nullopt).is_ok());
}

TEST_CASE("PostgreSQL out of disk: the epoch's insert is kUnavailable (retried, not acknowledged), and lands once there "
          "is room") {
  if (::geteuid() != 0) {
    // Mounting a file system to fill needs root (CI and scripts/test run as root); the raised disk_full above runs anyway.
    WARN_MESSAGE(false, "not root: the real full disk is not tried here");
    return;
  }
  SmallTablespace small("4m");   // outlives the database
  REQUIRE_MESSAGE(small.made(), small.refused());
  OneClaimedRun f;
  f.db.exec("ALTER TABLE epochs SET TABLESPACE " + small.name());
  const std::string filler = small.fill();
  const proto::EpochResult e = epoch_of_run(f.run_id, 0);
  std::vector<controller::IngestItem> batch(1);
  batch[0].agent_id = f.agent_id;
  batch[0].body = e;
  Status s = f.store.ingest_batch(batch);
  CHECK_MESSAGE(s.code() == Code::kUnavailable, s.to_string());
  CHECK_MESSAGE(s.message().find("[sqlstate 53100]") != std::string::npos, s.to_string());   // disk_full
  s = f.store.ingest_epoch(f.agent_id, e).status();
  CHECK_MESSAGE(s.code() == Code::kUnavailable, s.to_string());
  CHECK(f.db.count("SELECT count(*) FROM epochs") == 0);
  std::filesystem::remove(filler);
  s = f.store.ingest_batch(batch);
  REQUIRE_MESSAGE(s.is_ok(), s.to_string());
  CHECK(batch[0].result.is_ok());
  CHECK(f.store.ingest_epoch(f.agent_id, e).value() == controller::IngestOutcome::kDuplicate);
  CHECK(f.db.count("SELECT count(*) FROM epochs") == 1);
  f.db.exec("ALTER TABLE epochs SET TABLESPACE pg_default");   // the tablespace empty again, to be dropped
}

TEST_CASE("a NUL in a message's text is stored whole, as U+FFFD: libpq would cut the text there, unseen") {
  OneClaimedRun f;
  const std::string frame = R"({"type":"run_finished","version":1,"id":7,"run_id":)" + std::to_string(f.run_id) +
                            R"(,"status":"failed","error":"read \u0000 at 12 of /data/x.bin","wall_s":1.5})";
  auto env = proto::decode(frame);
  REQUIRE_MESSAGE(env.is_ok(), env.status().to_string());
  REQUIRE(f.store.finish_run(f.agent_id, std::get<proto::RunFinished>(env->body)).is_ok());
  CHECK(f.db.count("SELECT count(*) FROM runs WHERE error = 'read ' || chr(65533) || ' at 12 of /data/x.bin'") == 1);
}
