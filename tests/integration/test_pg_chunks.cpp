// The chunked measurement layout (sql/016) against a real PostgreSQL: exactly-once ingest of minibatches and
// samples whatever the resend (same chunk, overlapping chunk, partial overlap), per-epoch statistics kept at
// ingest, what the expanding views give back, and a campaign's partitions made and dropped with it.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "controller/db_worker.hpp"
#include "integration/one_claimed_run.hpp"

using namespace jetsweep;
using namespace jetsweep::testing;

namespace {

proto::Sample sample(double t, int cores) {
  proto::Sample s;
  s.t_s = t;
  s.cpu_util_pct = 10 * t;
  for (int c = 0; c < cores; ++c) s.core_util_pct.push_back(t + c);
  s.mem_used_kb = 1000 + static_cast<int64_t>(t);
  s.disk_read_bytes = 4096;
  if (cores % 2 == 0) s.power_w = 5.125;
  s.temp_max_c = 40.5;
  return s;
}

proto::SampleChunk sample_chunk(int64_t run_id, std::initializer_list<double> times) {
  proto::SampleChunk c;
  c.run_id = run_id;
  for (double t : times) c.samples.push_back(sample(t, static_cast<int>(t) % 3));
  return c;
}

std::string run_filter(const OneClaimedRun& f) { return " WHERE run_id = " + std::to_string(f.run_id); }

}  // namespace

TEST_CASE("minibatch chunks: every index stored once, whatever overlaps a resend has") {
  OneClaimedRun f;
  auto ingest = [&](int64_t epoch, int64_t first, std::vector<double> stall) {
    std::vector<double> compute(stall.size(), 0.25);
    REQUIRE(f.store.ingest_minibatches(f.agent_id, {f.run_id, epoch, first, stall, compute, {}}).is_ok());
  };
  ingest(0, 0, {0.5, 0.5, 0.5, 0.5});          // 0..3
  ingest(0, 0, {0.5, 0.5, 0.5, 0.5});          // the same chunk again
  ingest(0, 2, {9, 9, 0.75, 0.75});            // 2..5: 2 and 3 stored already, 4 and 5 new
  ingest(0, 8, {1.0, 1.0});                    // 8..9, leaving a gap 6..7
  ingest(0, 5, {9, 0.125, 0.125, 9, 9, 2.0});  // 5..10: fills the gap and adds 10
  ingest(1, 0, {3.0});                         // another epoch, same index
  const std::string where = run_filter(f);
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + where + " AND epoch = 0") == 11);
  CHECK(f.db.count("SELECT count(DISTINCT idx) FROM minibatches" + where + " AND epoch = 0") == 11);
  CHECK(f.db.count("SELECT min(idx) FROM minibatches" + where + " AND epoch = 0") == 0);
  CHECK(f.db.count("SELECT max(idx) FROM minibatches" + where + " AND epoch = 0") == 10);
  // The first value stored for an index stays (a resend never rewrites), so no 9 was written.
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + where + " AND stall_s = 9") == 0);
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + where + " AND epoch = 0 AND idx IN (6, 7) AND stall_s = 0.125") == 2);
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + where + " AND epoch = 1") == 1);
  // Chunks never overlap: each index is in exactly one chunk.
  CHECK(f.db.count("SELECT count(*) FROM minibatch_chunks a JOIN minibatch_chunks b ON a.run_id = b.run_id "
                   "AND a.epoch = b.epoch AND a.first_idx < b.first_idx "
                   "AND a.first_idx + cardinality(a.stall_s) > b.first_idx") == 0);
}

TEST_CASE("epoch statistics are kept when the epoch lands, and again when a late chunk does") {
  OneClaimedRun f;
  REQUIRE(f.store.ingest_minibatches(f.agent_id, {f.run_id, 0, 0, {0.1, 0.2, 0.3, 0.4}, {1, 2, 3, 4}, {}}).is_ok());
  proto::EpochResult e;
  e.run_id = f.run_id;
  e.epoch = 0;
  e.e2e_s = 12.0;
  e.stall_s = 1.5;
  e.compute_s = 15.0;
  e.minibatches = 5;
  REQUIRE(f.store.ingest_epoch(f.agent_id, e).is_ok());
  auto report = f.store.campaign_report(f.campaign_id, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  REQUIRE(report->runs.at(0).epochs.size() == 1);
  auto stats = report->runs[0].epochs[0].minibatch_stats;
  REQUIRE(stats.has_value());
  CHECK(stats->recorded == 4);
  CHECK(stats->stall_mean_s == doctest::Approx(0.25).epsilon(1e-6));
  CHECK(stats->stall_p50_s == doctest::Approx(0.25).epsilon(1e-6));       // between 0.2 and 0.3
  CHECK(stats->stall_p95_s == doctest::Approx(0.385).epsilon(1e-6));      // 0.3 + 0.85 * 0.1
  CHECK(stats->compute_p95_s == doctest::Approx(3.85).epsilon(1e-6));
  // The fifth minibatch arrives after its epoch (a resend after a reconnect): the statistics follow.
  REQUIRE(f.store.ingest_minibatches(f.agent_id, {f.run_id, 0, 4, {0.5}, {5}, {}}).is_ok());
  report = f.store.campaign_report(f.campaign_id, controller::ReportEpochs::kRows);
  REQUIRE(report.is_ok());
  stats = report->runs[0].epochs[0].minibatch_stats;
  REQUIRE(stats.has_value());
  CHECK(stats->recorded == 5);
  CHECK(stats->stall_p50_s == doctest::Approx(0.3).epsilon(1e-6));
  CHECK(stats->compute_mean_s == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(f.db.count("SELECT count(*) FROM epochs WHERE abs(minibatch_mean_ms - 1000 * (0.3 + 3.0)) < 1e-3") == 1);
}

TEST_CASE("sample chunks: a partial resend is merged, each t_s stored once with its first values") {
  OneClaimedRun f;
  REQUIRE(f.store.ingest_samples(f.agent_id, sample_chunk(f.run_id, {1, 2, 3})).is_ok());
  REQUIRE(f.store.ingest_samples(f.agent_id, sample_chunk(f.run_id, {1, 2, 3})).is_ok());   // identical resend
  REQUIRE(f.store.ingest_samples(f.agent_id, sample_chunk(f.run_id, {7, 8})).is_ok());
  auto partial = sample_chunk(f.run_id, {3, 4, 2.5});   // 3 stored; 2.5 falls inside the first chunk's span
  partial.samples[0].cpu_util_pct = 99;                  // not the stored value: must not replace it
  REQUIRE(f.store.ingest_samples(f.agent_id, partial).is_ok());
  const std::string where = run_filter(f);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where) == 7);
  CHECK(f.db.count("SELECT count(DISTINCT t_s) FROM samples" + where) == 7);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where + " AND cpu_util_pct = 99") == 0);
  CHECK(f.db.count("SELECT count(*) FROM sample_chunks a JOIN sample_chunks b ON a.run_id = b.run_id "
                   "AND a.t_first < b.t_first AND a.t_last >= b.t_first") == 0);
  // Every column comes back as sent (reals as their shortest decimal): per-core values by sample.
  auto samples = f.store.run_samples(f.run_id);
  REQUIRE(samples.is_ok());
  REQUIRE(samples->size() == 7);
  CHECK(samples.value()[2].t_s == 2.5);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where +
                   " AND t_s = 2 AND core_util_pct = '{2,3}'::real[] AND power_w = 5.125 AND temp_max_c = 40.5 "
                   "AND mem_used_kb = 1002 AND cpu_util_pct = 20") == 1);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where + " AND t_s = 3 AND core_util_pct = '{}' AND power_w = 5.125") == 1);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where + " AND t_s = 4 AND core_util_pct = '{4}' AND power_w IS NULL") == 1);
}

TEST_CASE("a campaign's measurement partitions are made with it and dropped with it") {
  OneClaimedRun f;
  const std::string cid = std::to_string(f.campaign_id);
  CHECK(f.db.count("SELECT count(*) FROM pg_class WHERE relname IN ('minibatch_chunks_c" + cid + "', 'sample_chunks_c" +
                   cid + "')") == 2);
  REQUIRE(f.store.ingest_minibatches(f.agent_id, {f.run_id, 0, 0, {0.1}, {1}, {}}).is_ok());
  REQUIRE(f.store.ingest_samples(f.agent_id, sample_chunk(f.run_id, {1})).is_ok());
  CHECK(f.db.count("SELECT count(*) FROM minibatch_chunks_c" + cid) == 1);
  f.db.exec("DELETE FROM campaigns WHERE id = " + cid);
  CHECK(f.db.count("SELECT count(*) FROM pg_class WHERE relname LIKE '%chunks_c" + cid + "'") == 0);
  CHECK(f.db.count("SELECT count(*) FROM minibatches") == 0);
  CHECK(f.db.count("SELECT count(*) FROM runs") == 0);
}

TEST_CASE("a value past float4 range is refused with an error naming it, and nothing is written") {
  OneClaimedRun f;
  auto bad = sample_chunk(f.run_id, {1});
  bad.samples[0].power_w = 1e300;
  auto s = f.store.ingest_samples(f.agent_id, bad);
  CHECK_FALSE(s.is_ok());
  CHECK(s.status().message().find("out of range for storage as real") != std::string::npos);
  CHECK(f.db.count("SELECT count(*) FROM samples") == 0);
  // Kept apart with the reason (DbWorker does this for every refused result), once however often it comes.
  for (int i = 0; i < 2; ++i) {
    auto kept = f.store.set_aside_refused(f.agent_id, bad, s.status().message());
    REQUIRE_MESSAGE(kept.is_ok(), kept.status().to_string());
    CHECK(*kept == (i == 0 ? controller::IngestOutcome::kSetAside : controller::IngestOutcome::kDuplicate));
  }
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'samples' AND reason LIKE "
                   "'refused by the store: %out of range for storage as real%' AND frame->>'run_id' = '" +
                   std::to_string(f.run_id) + "'") == 1);
  CHECK(f.db.count("SELECT count(*) FROM samples") == 0);
}

TEST_CASE("through the DbWorker: a refused result is kept apart, its neighbours stored; one that cannot be kept is "
          "not acknowledged") {
  OneClaimedRun f;
  controller::DbWorker worker(std::make_unique<controller::PgStore>(f.db.dsn()));
  worker.start();
  boost::asio::io_context ioc;
  // The results of what is posted, in order, once all of it was answered.
  const auto ingest = [&](std::vector<proto::Body> bodies) {
    std::vector<Result<controller::IngestOutcome>> out;
    for (auto& b : bodies)
      worker.post_ingest(ioc.get_executor(), f.agent_id, std::move(b),
                         [&](Result<controller::IngestOutcome> r) { out.push_back(std::move(r)); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (out.size() < bodies.size() && std::chrono::steady_clock::now() < deadline) {
      ioc.restart();
      ioc.run_one_for(std::chrono::milliseconds(100));
    }
    REQUIRE(out.size() == bodies.size());
    return out;
  };
  const auto bad = [&](double power_w) {
    auto c = sample_chunk(f.run_id, {7});
    c.samples[0].power_w = power_w;   // past float4: refused
    return c;
  };
  auto results = ingest({sample_chunk(f.run_id, {1, 2}), bad(1e300),
                         proto::MinibatchChunk{f.run_id, 0, 0, {0.25, 0.25}, {1, 1}, {}}});
  for (const auto& r : results) REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(*results[0] == controller::IngestOutcome::kStored);
  CHECK(*results[1] == controller::IngestOutcome::kSetAside);
  CHECK(*results[2] == controller::IngestOutcome::kStored);
  CHECK(f.db.count("SELECT count(*) FROM samples" + run_filter(f)) == 2);
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + run_filter(f)) == 2);
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE reason LIKE 'refused by the store: %ingesting ''samples''%"
                   "out of range for storage as real%'") == 1);
  // The database refuses every write of set_aside_results too (as a read-only standby would): not acknowledged.
  f.db.exec("CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected' USING "
            "ERRCODE = 'read_only_sql_transaction'; END $$; CREATE TRIGGER fail BEFORE INSERT ON set_aside_results "
            "FOR EACH ROW EXECUTE FUNCTION fail()");
  results = ingest({bad(2e300)});
  CHECK(results[0].status().code() == Code::kUnavailable);
  CHECK(results[0].status().message().find("not stored and not kept apart") != std::string::npos);
  f.db.exec("DROP TRIGGER fail ON set_aside_results; DROP FUNCTION fail()");
  results = ingest({bad(2e300), bad(1e300)});   // its resend once the database takes writes; the first one again
  REQUIRE(results[0].is_ok());
  CHECK(*results[0] == controller::IngestOutcome::kSetAside);
  REQUIRE(results[1].is_ok());
  CHECK(*results[1] == controller::IngestOutcome::kDuplicate);
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results") == 2);
  // A late epoch (its run ended) carrying a NUL character, which jsonb cannot hold: set aside once all the same,
  // the NUL as U+FFFD; not refused, then refused again when kept apart, at every resend (its agent would never get
  // past it).
  proto::EpochResult late;
  late.run_id = f.run_id;
  late.e2e_s = late.compute_s = 1.0;
  late.minibatches = 2;
  late.throttled = true;
  late.throttle_reason = std::string("a\0b", 3);
  for (int i = 0; i < 2; ++i) {
    results = ingest({proto::RunFinished{f.run_id, "done", "", 1.0}, late});
    REQUIRE(results[1].is_ok());
    CHECK(*results[1] == (i == 0 ? controller::IngestOutcome::kSetAside : controller::IngestOutcome::kDuplicate));
  }
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'epoch_result' AND "
                   "frame->>'throttle_reason' = E'a\\uFFFDb' AND reason = 'the run is done on this agent'") == 1);
  // The same message as a controller decodes it (the NUL read as U+FFFD): the same row, its key of the frame as
  // jsonb writes it (sql/029).
  proto::EpochResult decoded = late;
  decoded.throttle_reason = "a\xEF\xBF\xBD" "b";
  results = ingest({decoded});
  REQUIRE(results[0].is_ok());
  CHECK(*results[0] == controller::IngestOutcome::kDuplicate);
  // A database as controllers before sql/029 left it: the row keyed by the md5 of the text sent, the NUL as the
  // escape \ufffd (0274d2b to a9218b0), and the same message again from a later controller, which spelled it as
  // U+FFFD itself (a second row, the bug). Migration 029 leaves one row, keyed as the ingest now keys it.
  std::string escaped = proto::encode(proto::Envelope{0, late});
  REQUIRE(escaped.find("\\u0000") != std::string::npos);
  escaped.replace(escaped.find("\\u0000"), 6, "\\ufffd");
  const int64_t rows = f.db.count("SELECT count(*) FROM set_aside_results");
  f.db.exec("UPDATE set_aside_results SET frame_md5 = md5($q$" + escaped + "$q$) WHERE message_type = 'epoch_result'; "
            "INSERT INTO set_aside_results (campaign_id, run_id, agent_id, message_type, reason, frame, frame_md5) "
            "SELECT campaign_id, run_id, agent_id, message_type, reason, frame, md5($q$" +
            proto::encode(proto::Envelope{0, decoded}) + "$q$) FROM set_aside_results WHERE message_type = 'epoch_result'; "
            "DELETE FROM schema_migrations WHERE version = 29");
  REQUIRE(f.db.count("SELECT count(*) FROM set_aside_results") == rows + 1);
  REQUIRE(f.store.migrate().is_ok());
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results") == rows);
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE frame_md5 <> md5(frame::text)") == 0);
  results = ingest({decoded, late});
  for (const auto& r : results) {
    REQUIRE(r.is_ok());
    CHECK(*r == controller::IngestOutcome::kDuplicate);
  }
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results") == rows);
  worker.stop();
}

TEST_CASE("migration 016 moves per-row minibatches and samples into chunks, every value and statistic kept") {
  TestDatabase db;
  REQUIRE(db.apply_migrations(std::string(JETSWEEP_SOURCE_DIR) + "/sql", 15) == 15);
  // The views a controller of that time left, reading the per-row tables 016 replaces (the migrations no longer
  // create views: sql/views.sql does, after them).
  {
    std::ifstream f(std::string(JETSWEEP_SOURCE_DIR) + "/tests/integration/views_of_migration_013.sql");
    REQUIRE(f.good());
    std::stringstream sql;
    sql << f.rdbuf();
    db.exec(sql.str());
  }
  CHECK(db.count("SELECT count(*) FROM pg_views WHERE viewname IN ('analysis_epochs', 'samples_aligned')") == 2);
  db.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
          "applied_at timestamptz NOT NULL DEFAULT now()); "
          "INSERT INTO schema_migrations (version, name) SELECT v, 'old' FROM generate_series(1, 15) v; "
          "INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ('a', 'f', 'y', 2), ('b', 'f', 'y', 1); "
          "INSERT INTO runs (campaign_id, ordinal, config, device, epochs) VALUES "
          "  (1, 0, '{}', 'x', 2), (1, 1, '{}', 'x', 2), (2, 0, '{}', 'x', 1); "
          "INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, loss) VALUES "
          "  (1, 0, 1, 0.1, 0.8, 5000, 1), (1, 1, 1, 0.1, 0.8, 3, 1), (3, 0, 1, 1, 1, 1, 1); "
          // 5,000 minibatches (two chunks), a gap (indices 0, 1, 5), copy_s partly NULL, an orphan row
          "INSERT INTO minibatches SELECT 1, 0, i, i * 0.001, 0.1 + i * 0.0001, NULL FROM generate_series(0, 4999) i; "
          "INSERT INTO minibatches VALUES (1, 1, 0, 0.5, 0.25, 0.01), (1, 1, 1, 0.5, 0.25, NULL), "
          "  (1, 1, 5, 0.5, 0.25, 0.02), (3, 0, 7, 1, 2, NULL), (99, 0, 0, 1, 1, NULL); "
          "INSERT INTO samples (run_id, t_s, cpu_util_pct, mem_used_kb, disk_read_bytes, power_w, core_util_pct, "
          "  temp_max_c) VALUES (1, 0, 1, 100, 0, NULL, '{}', NULL), (1, 0.01, 2, 100, 5, 4.5, '{1,2}', 40), "
          "  (1, 0.02, 3, 100, 5, 5.123, '{3,4,5}', 41); "
          "INSERT INTO samples (run_id, t_s, cpu_util_pct, mem_used_kb, disk_read_bytes) "
          "  SELECT 3, i * 0.01, 1, 1, 1 FROM generate_series(0, 4999) i; "
          "CREATE TABLE old_mb AS SELECT * FROM minibatches WHERE run_id <> 99; "
          "CREATE TABLE old_s AS SELECT * FROM samples");
  controller::PgStore store{db.dsn()};
  REQUIRE(store.migrate().is_ok());
  CHECK(db.count("SELECT count(*) FROM minibatch_chunks") == 5);   // 4,096 + 904, two islands of epoch 1, run 3
  CHECK(db.count("SELECT max(cardinality(stall_s)) FROM minibatch_chunks") == 4096);
  CHECK(db.count("SELECT count(*) FROM sample_chunks") == 4);       // run 1; run 3 in 2,048s
  // Every row as it was (values as float4 where the layout stores them), nothing more.
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, epoch, idx, stall_s::real, compute_s::real, copy_s::real "
                 "FROM old_mb EXCEPT ALL SELECT run_id, epoch, idx, stall_s, compute_s, copy_s FROM minibatches) x") == 0);
  CHECK(db.count("SELECT count(*) FROM minibatches") == db.count("SELECT count(*) FROM old_mb"));
  CHECK(db.count("SELECT count(*) FROM (SELECT run_id, t_s, cpu_util_pct::real, cpu_freq_mhz::real, mem_used_kb, "
                 "disk_read_bytes, power_w::real, core_util_pct::real[], temp_max_c::real FROM old_s EXCEPT ALL "
                 "SELECT run_id, t_s, cpu_util_pct, cpu_freq_mhz, mem_used_kb, disk_read_bytes, power_w, core_util_pct, "
                 "temp_max_c FROM samples) x") == 0);
  CHECK(db.count("SELECT count(*) FROM samples") == db.count("SELECT count(*) FROM old_s"));
  // The old views went before the tables they read, and views.sql's replace them over the chunks.
  CHECK(db.count("SELECT count(*) FROM samples_aligned") == db.count("SELECT count(*) FROM old_s"));
  CHECK(db.count("SELECT count(*) FROM analysis_epochs") == 3);
  // Statistics from the old rows, exactly as the aggregates over them give.
  CHECK(db.count("SELECT count(*) FROM epochs e, LATERAL (SELECT count(*) AS n, "
                 "  percentile_cont(0.95) WITHIN GROUP (ORDER BY stall_s) AS p95, 1000 * avg(stall_s + compute_s) AS ms "
                 "  FROM old_mb m WHERE m.run_id = e.run_id AND m.epoch = e.epoch) o "
                 "WHERE e.mb_recorded = o.n AND e.stall_p95_s = o.p95 AND e.minibatch_mean_ms = o.ms") == 3);
  // Later campaigns get partitions; a second migrate is a no-op.
  CHECK(db.count("SELECT count(*) FROM pg_class WHERE relname IN ('minibatch_chunks_c1', 'sample_chunks_c2')") == 2);
  REQUIRE(store.migrate().is_ok());
  CHECK(db.count("SELECT count(*) FROM minibatch_chunks") == 5);
}

TEST_CASE("group commit: one transaction for many messages, a bad one rolled back alone") {
  OneClaimedRun f;
  auto bad = sample_chunk(f.run_id, {5});
  bad.samples[0].cpu_util_pct = 1e300;   // past float4: this message fails, its neighbours do not
  proto::EpochResult e;
  e.run_id = f.run_id;
  e.epoch = 0;
  e.e2e_s = 3.0;
  e.stall_s = 0.5;
  e.compute_s = 2.0;
  e.minibatches = 2;
  std::vector<controller::IngestItem> items;
  items.push_back({f.agent_id, proto::MinibatchChunk{f.run_id, 0, 0, {0.25, 0.25}, {1, 1}, {}}, Status::ok(), {}});
  items.push_back({f.agent_id, sample_chunk(f.run_id, {1, 2}), Status::ok(), {}});
  items.push_back({f.agent_id, bad, Status::ok(), {}});
  items.push_back({f.agent_id, e, Status::ok(), {}});
  items.push_back(   // resent
      {f.agent_id, proto::MinibatchChunk{f.run_id, 0, 0, {0.25, 0.25}, {1, 1}, {}}, Status::ok(), {}});
  items.push_back({f.agent_id, proto::Heartbeat{}, Status::ok(), {}});   // not a result
  REQUIRE(f.store.ingest_batch(items).is_ok());
  CHECK(items[0].result.is_ok());
  CHECK(items[1].result.is_ok());
  CHECK(items[2].result.code() == Code::kDbError);
  CHECK(items[2].result.message().find("ingesting 'samples'") != std::string::npos);
  CHECK(items[3].result.is_ok());
  CHECK(items[4].result.is_ok());
  CHECK(items[5].result.code() == Code::kInternal);
  // What became of each (redone with savepoints): the resent chunk is a duplicate.
  using controller::IngestOutcome;
  CHECK(items[0].outcome == IngestOutcome::kStored);
  CHECK(items[1].outcome == IngestOutcome::kStored);
  CHECK(items[3].outcome == IngestOutcome::kStored);
  CHECK(items[4].outcome == IngestOutcome::kDuplicate);
  const std::string where = run_filter(f);
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + where) == 2);
  CHECK(f.db.count("SELECT count(*) FROM samples" + where) == 2);
  CHECK(f.db.count("SELECT count(*) FROM epochs" + where + " AND mb_recorded = 2 AND minibatch_mean_ms = 1250") == 1);
  CHECK(f.db.count("SELECT count(*) FROM runs WHERE status = 'running' AND id = " + std::to_string(f.run_id)) == 1);
}

TEST_CASE("a run_finished PostgreSQL refuses ends its run failed; where the run's update is refused too, the copy is "
          "still kept") {
  OneClaimedRun f;
  const auto run_row = [&](const std::string& column) {
    return f.db.text("SELECT " + column + " FROM runs WHERE id = " + std::to_string(f.run_id));
  };
  // The database refuses every run ending 'done' (a rule the store does not know): the agent's end is refused.
  f.db.exec("CREATE FUNCTION no_done() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.status = 'done' THEN "
            "RAISE EXCEPTION 'no run may be done' USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$; "
            "CREATE TRIGGER no_done BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION no_done()");
  const proto::RunFinished done{f.run_id, "done", "", 4.0};
  auto refused = f.store.finish_run(f.agent_id, done);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == Code::kDbError);
  auto kept = f.store.set_aside_refused(f.agent_id, done, refused.status().message());
  REQUIRE_MESSAGE(kept.is_ok(), kept.status().to_string());
  CHECK(*kept == controller::IngestOutcome::kSetAside);
  CHECK(run_row("status") == "failed");
  CHECK(run_row("error").rfind("its agent reported it done; refused by the store: ", 0) == 0);
  CHECK(run_row("error").find("no run may be done") != std::string::npos);
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'run_finished'") == 1);

  // Every update of runs refused: the copy is kept all the same and the run left as it was (until its agent
  // registers again), instead of the copy being refused with it and the agent resending it forever.
  f.db.exec("DROP TRIGGER no_done ON runs; UPDATE runs SET status = 'running', error = '' WHERE id = " +
            std::to_string(f.run_id) +
            "; CREATE FUNCTION no_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'frozen' "
            "USING ERRCODE = 'check_violation'; END $$; "
            "CREATE TRIGGER no_update BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION no_update()");
  const proto::RunFinished failed{f.run_id, "failed", "out of memory", 4.0};
  kept = f.store.set_aside_refused(f.agent_id, failed, "ERROR:  frozen");
  REQUIRE_MESSAGE(kept.is_ok(), kept.status().to_string());
  CHECK(*kept == controller::IngestOutcome::kSetAside);
  CHECK(run_row("status") == "running");
  CHECK(f.db.count("SELECT count(*) FROM set_aside_results WHERE message_type = 'run_finished'") == 2);
}

TEST_CASE("group commit: a message the database itself refuses (an error raised by the server) is rolled back alone") {
  OneClaimedRun f;
  f.db.exec("CREATE FUNCTION no_done() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.status = 'done' THEN "
            "RAISE EXCEPTION 'no run may be done' USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$; "
            "CREATE TRIGGER no_done BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION no_done()");
  std::vector<controller::IngestItem> items;
  items.push_back({f.agent_id, proto::MinibatchChunk{f.run_id, 0, 0, {0.25, 0.25}, {1, 1}, {}}, Status::ok(), {}});
  items.push_back({f.agent_id, proto::RunFinished{f.run_id, "done", "", 3.0}, Status::ok(), {}});
  items.push_back({f.agent_id, sample_chunk(f.run_id, {1, 2}), Status::ok(), {}});
  REQUIRE(f.store.ingest_batch(items).is_ok());
  CHECK(items[0].result.is_ok());
  CHECK(items[1].result.code() == Code::kDbError);
  CHECK(items[2].result.is_ok());
  // Its neighbours, reported stored, really are.
  CHECK(f.db.count("SELECT count(*) FROM minibatches" + run_filter(f)) == 2);
  CHECK(f.db.count("SELECT count(*) FROM samples" + run_filter(f)) == 2);
}
