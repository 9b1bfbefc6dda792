// `jetsweep archive`, `import` and `drop` against real PostgreSQL: two throw-away databases migrated by the
// controller (PgStore::migrate); a campaign archived from one is imported into the other and compared column by
// column; damaged archives are refused naming the file; drop asks, refuses while a run executes, and removes the
// partitions only of its campaign. Needs JETSWEEP_TEST_DSN (an admin DSN, as scripts/test sets).
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <sstream>

#include "analysis/archive.hpp"
#include "analysis/archive_file.hpp"
#include "common/log.hpp"
#include "controller/pg_store.hpp"
#include "support/temp_dir.hpp"
#include "support/test_database.hpp"

namespace jetsweep::testing {
namespace {

namespace bj = boost::json;

struct Cli {
  int rc;
  std::string out, err;
};

Cli archive_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = analysis::archive_main(args, out, err);
  return {rc, out.str(), err.str()};
}

Cli import_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = analysis::import_main(args, out, err);
  return {rc, out.str(), err.str()};
}

Cli drop_cli(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  const int rc = analysis::drop_main(args, in, out, err);
  return {rc, out.str(), err.str()};
}

bj::object json_out(const Cli& r) {
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  return bj::parse(r.out).as_object();
}

void migrate(const TestDatabase& db) {
  log::set_min_level(log::Level::kWarn);  // not a line per migration
  controller::PgStore store(db.dsn());
  REQUIRE(store.connect().is_ok());
  const Status s = store.migrate();
  REQUIRE_MESSAGE(s.is_ok(), s.message());
}

int64_t one(pqxx::work& w, const std::string& sql) { return w.exec1(sql)[0].as<int64_t>(); }

// Agents: orin-a (connected, with a credential, runs of alpha), nx-b (alpha), other-c (beta only).
void insert_agents(pqxx::work& w) {
  w.exec("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, compiler, "
         "git_sha, connected, first_seen, last_seen, clock_offset_s, clock_rtt_s, clock_measured_at, storage, board_id, "
         "accelerator, not_ready) VALUES "
         "('orin-a', 'orin-a.lab', 12, 68719476736, 'jetson', 'agx-orin', '5.10.120-tegra', '2.1', 'g++ 11', 'abc123', "
         "true, '2026-01-02 03:04:05.123456+00', '2026-01-03 00:00:00+00', 0.000123456789, 0.002, now(), "
         "'{nvme,sd}', 'orin-a-board', 'cuda:0 (Orin)', '{}'), "
         "('nx-b', 'nx-b.lab', 6, 8000000000, 'sim', 'xavier-nx', '5.10', '2.0', 'g++ 9', 'def', false, now(), now(), "
         "NULL, NULL, NULL, '{}', '', 'simulated', '{\"fan: unreadable\"}'), "
         "('other-c', 'c.lab', 4, 1, 'sim', 'nano', 'k', 't', 'c', 'g', false, now(), now(), NULL, NULL, NULL, '{}', "
         "'', '', '{}')");
  w.exec("INSERT INTO agent_credentials (agent_id, credential_sha256) SELECT id, repeat('ab', 32) FROM agents "
         "WHERE name = 'orin-a'");
}

// Campaign alpha: three runs (done on orin-a, failed on nx-b, cancelled before it ran) with epochs (summary
// columns filled), minibatch chunks (copy_s NULL and not, NULL elements, 4,096 minibatches, odd floats) and sample
// chunks (NULL power and temperature, ragged per-core values, 2,048 samples x 12 cores: a 200 kB line).
// A user's model file, 'hello model' (one chunk; its SHA-256 from Python's hashlib), which alpha's run 2 names; and
// one nobody in alpha names (not archived with it).
constexpr const char* kModelSha = "2b2eb6f423932d62cafb015658d50a64d33e96e66fc9ec182172df817971e6f4";
void insert_model_files(pqxx::work& w) {
  w.exec(std::string("INSERT INTO model_files (sha256, bytes, chunks, completed_at) VALUES ('") + kModelSha +
         "', 11, 1, now()), (repeat('c', 64), 1, 1, now())");
  w.exec(std::string("INSERT INTO model_file_chunks VALUES ('") + kModelSha + "', 0, 'hello model'), "
         "(repeat('c', 64), 0, 'x')");
}

int64_t insert_alpha(pqxx::work& w) {
  const int64_t c = one(w,
                        "INSERT INTO campaigns (name, description, source_file, source_yaml, run_count, state, "
                        "priority, created_at) VALUES ('alpha ü', E'tab\\there\\nline two \\\\ back', 'alpha.yaml', "
                        "E'name: alpha\\nruns:\\n  - model: resnet18\\n', 3, 'active', 3, "
                        "'2026-02-01 10:00:00.5+00') RETURNING id");
  const std::string cid = std::to_string(c);
  w.exec("INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id, facts, attempts, error, "
         "queued_at, assigned_at, started_at, finished_at, wall_s, agent_t0_unix_s, cancel_requested, min_mem_bytes, "
         "storage, unfit_classes, applied, reference_state, storage_device, page_cache_dropped, compute_device) "
         "VALUES (" + cid + ", 0, '{\"model\": \"resnet18\", \"batch_size\": 32}', 'agx-orin', 3, 'done', "
         "(SELECT id FROM agents WHERE name = 'orin-a'), '{\"name\": \"orin-a\", \"backend\": \"jetson\"}', 1, '', "
         "'2026-02-01 10:00:01+00', '2026-02-01 10:00:02+00', '2026-02-01 10:00:03+00', '2026-02-01 10:30:00+00', "
         "1797.123456789, 1769940003.123456789, false, 4294967296, 'nvme', '{nano,xavier-nx}', "
         "'{\"mode_name\": \"MAXN\", \"cpu_khz\": 2201600}', false, 'nvme0n1', true, 'cuda:0 (Orin)'), "
         "(" + cid + ", 1, '{\"model\": \"lenet5\"}', 'xavier-nx', 2, 'failed', (SELECT id FROM agents WHERE "
         "name = 'nx-b'), NULL, 3, E'out of memory\\n\"quoted\"\\ttab', now(), now(), now(), now(), NULL, NULL, "
         "false, 0, NULL, '{}', NULL, NULL, NULL, NULL, NULL), "
         "(" + cid + ", 2, '{\"model\": \"torchscript:" + std::string(kModelSha) + "\"}', 'any', 2, 'cancelled', "
         "NULL, NULL, 0, '', now(), NULL, NULL, "
         "now(), NULL, NULL, true, 0, NULL, '{}', NULL, NULL, NULL, NULL, NULL)");
  const std::string run0 = "(SELECT id FROM runs WHERE campaign_id = " + cid + " AND ordinal = 0)";
  const std::string run1 = "(SELECT id FROM runs WHERE campaign_id = " + cid + " AND ordinal = 1)";
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, energy_j, mean_power_w, loss, "
         "read_mb_s, t_start_s, t_end_s, power_coverage, cores_start, cpu_khz_start, throttled, throttle_reason, "
         "copy_s, mb_recorded, stall_mean_s, stall_p50_s, stall_p95_s, compute_mean_s, compute_p50_s, compute_p95_s, "
         "minibatch_mean_ms) SELECT " + run0 + ", e, 10.1 + e / 3.0, 0.1 / 3, 9.9, 4096, NULL, 15.25, "
         "CASE WHEN e = 1 THEN NULL ELSE 0.1 END, 1e-300, e * 10.0, e * 10.0 + 9.5, 0.99, 12, 2201600, e = 2, "
         "CASE WHEN e = 2 THEN 'gpu clock 1300500000 -> 918000000' ELSE '' END, CASE WHEN e = 0 THEN NULL ELSE 0.25 "
         "END, 4096, 0.001234567890123, 0.0012, 0.0031, 0.0098765, 0.0098, 0.0101, 11.111111111111111 "
         "FROM generate_series(0, 2) e");
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, loss) VALUES (" + run1 +
         ", 0, 1, 0.5, 0.5, 10, 'NaN')");
  w.exec("INSERT INTO minibatch_chunks VALUES (" + cid + ", " + run0 + ", 0, 0, '{0.001,0.002,3.4028235e38}', "
         "'{0.01,1.4e-45,-0}', NULL), "
         "(" + cid + ", " + run0 + ", 1, 0, '{NaN,Infinity,-Infinity}', '{0.1,0.2,0.3}', '{0.0003,NULL,1e-40}'), "
         "(" + cid + ", " + run0 + ", 2, 0, array(SELECT (i * 0.00037)::real FROM generate_series(1, 4096) i), "
         "array(SELECT (1.0 / i)::real FROM generate_series(1, 4096) i), "
         "array(SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 1e-7)::real END FROM generate_series(1, 4096) i))");
  w.exec("INSERT INTO sample_chunks VALUES (" + cid + ", " + run0 + ", 0.5, 1.5, '{0.5,1.0000000000000002,1.5}', "
         "'{10,20,30.5}', '{729.6,1497.6,2201.6}', '{1,2,3}', '{0,4096,9223372036854775807}', '{7.25,NULL,9}', "
         "'{NULL,NULL,45.5}', '{0,2,3}', '{10,20,30,40.5,50}'), "
         "(" + cid + ", " + run0 + ", 2, 2049, array(SELECT i::float8 + 1 / 3.0 FROM generate_series(1, 2048) i), "
         "array_fill(50::real, ARRAY[2048]), array_fill(1497.6::real, ARRAY[2048]), array_fill(123456::bigint, "
         "ARRAY[2048]), array_fill(0::bigint, ARRAY[2048]), array_fill(NULL::real, ARRAY[2048]), "
         "array_fill(51.5::real, ARRAY[2048]), array_fill(12::smallint, ARRAY[2048]), "
         "array(SELECT (i % 1000 / 10.0)::real FROM generate_series(1, 24576) i))");
  // An adaptive-profiling plan (issue 33) with its fit and two rounds, runs 0 and 1 its rounds' runs.
  w.exec("INSERT INTO adaptive_plans (campaign_id, plan_index, device_class, workload, spec, state, rounds, error, fit) "
         "VALUES (" + cid + ", 0, 'agx-orin', 'lenet5/fashion-mnist', '{\"budget\": 6, \"candidates\": [[12, 2201600]]}', "
         "'done', 2, NULL, '{\"summary\": {\"observations\": 2, \"time_mape\": 0.125}}')");
  const std::string plan = "(SELECT id FROM adaptive_plans WHERE campaign_id = " + cid + ")";
  w.exec("INSERT INTO adaptive_rounds (plan_id, round, created_at, runs, fit) VALUES (" + plan +
         ", 0, '2026-02-01 10:00:00.75+00', 1, '{\"round\": 0}'), (" + plan + ", 1, '2026-02-01 10:40:00+00', 1, NULL)");
  w.exec("UPDATE runs SET adaptive_plan_id = " + plan + ", adaptive_round = ordinal WHERE campaign_id = " + cid +
         " AND ordinal < 2");
  // Results set aside (issue 29): a late epoch of run 0 from nx-b, and one from other-c, which ran no run of alpha.
  w.exec("INSERT INTO set_aside_results (campaign_id, run_id, agent_id, message_type, reason, frame, frame_md5, "
         "received_at) SELECT " + cid + ", " + run0 + ", a.id, 'epoch_result', 'the run is done on agent ' || a.id, "
         "jsonb_build_object('type', 'epoch_result', 'run_id', 1, 'epoch', 7, 'e2e_s', 1.25), md5(a.name), "
         "'2026-02-01 11:00:00.25+00' FROM agents a WHERE a.name IN ('nx-b', 'other-c')");
  return c;
}

// Campaign beta: one run on other-c with an epoch and one chunk of each kind.
int64_t insert_beta(pqxx::work& w) {
  const int64_t c = one(w, "INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ('beta', 'b.yaml', "
                           "'', 1) RETURNING id");
  const std::string cid = std::to_string(c);
  const int64_t run = one(w, "INSERT INTO runs (campaign_id, ordinal, config, device, epochs, status, agent_id) VALUES (" +
                                 cid + ", 0, '{}', 'nano', 1, 'done', (SELECT id FROM agents WHERE name = 'other-c')) "
                                 "RETURNING id");
  const std::string rid = std::to_string(run);
  w.exec("INSERT INTO epochs (run_id, epoch, e2e_s, stall_s, compute_s, minibatches, loss) VALUES (" + rid +
         ", 0, 1, 0.1, 0.8, 2, 0.5)");
  w.exec("INSERT INTO minibatch_chunks VALUES (" + cid + ", " + rid + ", 0, 0, '{0.1,0.2}', '{0.3,0.4}', NULL)");
  w.exec("INSERT INTO sample_chunks VALUES (" + cid + ", " + rid + ", 1, 1, '{1}', '{5}', '{100}', '{1}', '{0}', "
         "'{NULL}', '{NULL}', '{1}', '{5}')");
  return c;
}

using Snapshot = std::map<std::string, std::vector<std::string>>;

// A campaign's rows, ids left out (runs are keyed by ordinal, agents by name), every other column as text.
Snapshot snapshot(const std::string& dsn, int64_t campaign_id) {
  pqxx::connection c(dsn);
  pqxx::work w(c);
  w.exec("SET LOCAL extra_float_digits = 3");
  w.exec("SET LOCAL TimeZone = 'UTC'");
  const std::string cid = std::to_string(campaign_id);
  const std::string by_run = " JOIN runs r ON r.id = t.run_id WHERE r.campaign_id = " + cid;
  const std::string models = "(SELECT substr(config->>'model', 13) FROM runs WHERE campaign_id = " + cid + ")";
  const std::map<std::string, std::string> queries = {
      {"campaigns", "SELECT (to_jsonb(t) - 'id')::text FROM campaigns t WHERE id = " + cid},
      {"agents", "SELECT (to_jsonb(t) - 'id' - 'connected')::text FROM agents t WHERE id IN (SELECT agent_id FROM "
                 "runs WHERE campaign_id = " + cid + ") AND name <> 'nx-b' ORDER BY name"},
      // Each run's clock offset as the views take it: its own, else its agent's (an import fills it in).
      {"runs", "SELECT (jsonb_set(to_jsonb(t), '{clock_offset_s}', coalesce(to_jsonb(coalesce(t.clock_offset_s, "
               "a.clock_offset_s)), 'null')) - 'id' - 'campaign_id' - 'agent_id' - 'adaptive_plan_id')::text || "
               "coalesce(a.name, '-') || coalesce(' plan ' || p.plan_index, '') FROM runs t "
               "LEFT JOIN agents a ON a.id = t.agent_id LEFT JOIN adaptive_plans p ON p.id = t.adaptive_plan_id "
               "WHERE t.campaign_id = " + cid + " ORDER BY t.ordinal"},
      {"adaptive_plans", "SELECT (to_jsonb(t) - 'id' - 'campaign_id')::text FROM adaptive_plans t WHERE campaign_id = " +
                             cid + " ORDER BY plan_index"},
      {"adaptive_rounds", "SELECT p.plan_index || (to_jsonb(t) - 'plan_id')::text FROM adaptive_rounds t "
                          "JOIN adaptive_plans p ON p.id = t.plan_id WHERE p.campaign_id = " + cid +
                              " ORDER BY p.plan_index, t.round"},
      {"epochs", "SELECT r.ordinal || (to_jsonb(t) - 'run_id')::text FROM epochs t" + by_run +
                     " ORDER BY r.ordinal, t.epoch"},
      {"minibatch_chunks", "SELECT r.ordinal || (to_jsonb(t) - 'run_id' - 'campaign_id')::text FROM minibatch_chunks t" +
                               by_run + " AND t.campaign_id = " + cid + " ORDER BY r.ordinal, t.epoch, t.first_idx"},
      {"sample_chunks", "SELECT r.ordinal || (to_jsonb(t) - 'run_id' - 'campaign_id')::text FROM sample_chunks t" +
                            by_run + " AND t.campaign_id = " + cid + " ORDER BY r.ordinal, t.t_first"},
      {"model_files", "SELECT to_jsonb(t)::text FROM model_files t WHERE sha256 IN " + models + " ORDER BY sha256"},
      {"model_file_chunks", "SELECT sha256 || ' ' || idx || ' ' || encode(data, 'escape') FROM model_file_chunks "
                            "WHERE sha256 IN " + models + " ORDER BY sha256, idx"},
      {"set_aside_results", "SELECT r.ordinal || ' ' || a.name || ' ' || (to_jsonb(t) - 'id' - 'run_id' - "
                            "'campaign_id' - 'agent_id')::text FROM set_aside_results t JOIN runs r ON r.id = t.run_id "
                            "JOIN agents a ON a.id = t.agent_id WHERE t.campaign_id = " + cid + " ORDER BY r.ordinal, a.name"},
  };
  Snapshot out;
  for (const auto& [table, sql] : queries)
    for (const auto& row : w.exec(sql)) out[table].push_back(row[0].c_str());
  return out;
}

// Fails naming the table, the row and where the first difference is (rows can be 200 kB long).
void check_same(const Snapshot& want, const Snapshot& got) {
  for (const auto& table : analysis::archive_tables()) {
    CAPTURE(table);
    REQUIRE(want.count(table) == 1);
    REQUIRE(got.count(table) == 1);
    const auto &w = want.at(table), &g = got.at(table);
    CHECK(g.size() == w.size());
    for (size_t i = 0; i < std::min(w.size(), g.size()); ++i) {
      if (w[i] == g[i]) continue;
      size_t at = 0;
      while (at < w[i].size() && at < g[i].size() && w[i][at] == g[i][at]) ++at;
      const size_t from = at < 40 ? 0 : at - 40;
      FAIL_CHECK("row " << i << " differs at byte " << at << ": want ..." << w[i].substr(from, 120) << "..., got ..."
                        << g[i].substr(from, 120) << "...");
    }
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

void gzip_to(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

// `text` (an archive's) with a new trailer: the digest of what it now holds.
std::string resealed(const std::string& text) {
  const std::string body = text.substr(0, text.rfind("@end "));
  Sha256 sha;
  sha.update(body);
  return body + "@end sha256=" + sha.hex_digest() + "\n";
}

// `text` (an archive's) with `column` taken out of table `table`'s section: the archive an older controller, whose
// table had no such column, would have written.
std::string without_column(const std::string& text, const std::string& table, const std::string& column) {
  std::istringstream in(text);
  std::string out, line;
  std::optional<size_t> drop;   // the column's index while inside the table's section
  const auto fields = [](const std::string& l, char sep) {
    std::vector<std::string> f;
    size_t from = 0;
    for (size_t at; (at = l.find(sep, from)) != std::string::npos; from = at + 1) f.push_back(l.substr(from, at - from));
    f.push_back(l.substr(from));
    return f;
  };
  const auto joined = [](const std::vector<std::string>& f, char sep) {
    std::string l;
    for (size_t i = 0; i < f.size(); ++i) l += (i ? std::string(1, sep) : "") + f[i];
    return l;
  };
  while (std::getline(in, line)) {
    const std::string header = "@table " + table + " ";
    if (line.rfind(header, 0) == 0) {
      auto cols = fields(line.substr(header.size()), ',');
      const auto it = std::find(cols.begin(), cols.end(), column);
      REQUIRE(it != cols.end());
      drop = static_cast<size_t>(it - cols.begin());
      cols.erase(it);
      line = header + joined(cols, ',');
    } else if (line == "\\.") {
      drop.reset();
    } else if (drop) {
      auto f = fields(line, '\t');   // COPY text escapes a tab inside a value
      REQUIRE(*drop < f.size());
      f.erase(f.begin() + static_cast<std::ptrdiff_t>(*drop));
      line = joined(f, '\t');
    }
    out += line + "\n";
  }
  return out;
}

// Source (alpha and beta) and target (a campaign of its own and an agent nx-b of its own, so ids differ).
struct TwoDatabases {
  TestDatabase source, target;
  TempDir dir;
  int64_t alpha = 0, beta = 0;
  TwoDatabases() {
    migrate(source);
    migrate(target);
    {
      pqxx::connection c(source.dsn());
      pqxx::work w(c);
      insert_agents(w);
      insert_model_files(w);
      alpha = insert_alpha(w);
      beta = insert_beta(w);
      w.commit();
    }
    target.exec("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, "
                "compiler, git_sha) VALUES ('zz', 'z', 1, 1, 'sim', 'nano', 'k', 't', 'c', 'g'), ('nx-b', "
                "'the-target-nx', 6, 1, 'sim', 'xavier-nx', 'k', 't', 'c', 'g')");
    for (int i = 0; i < 3; ++i)
      target.exec("INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ('local', 'l', '', 0)");
  }
  std::string file(const std::string& name) const { return (dir / name).string(); }
  std::string archive_alpha() {
    const std::string path = file("alpha.jsa.gz");
    const auto r = archive_cli({std::to_string(alpha), "--db", source.dsn(), "--out", path});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    return path;
  }
};

TEST_CASE_FIXTURE(TwoDatabases, "an archived campaign imports into another database with every value intact") {
  const std::string path = file("alpha.jsa.gz");
  const bj::object a = json_out(archive_cli({"alpha ü", "--db", source.dsn(), "--out", path, "--json"}));
  CHECK(a.at("campaign").at("id").as_int64() == alpha);
  const bj::object& counts = a.at("counts").as_object();
  CHECK(counts.at("campaigns").as_int64() == 1);
  CHECK(counts.at("agents").as_int64() == 3);  // other-c too: no run of alpha ran there, but it has a result set aside
  CHECK(counts.at("runs").as_int64() == 3);
  CHECK(counts.at("epochs").as_int64() == 4);
  CHECK(counts.at("minibatch_chunks").as_int64() == 3);
  CHECK(counts.at("sample_chunks").as_int64() == 2);
  CHECK(counts.at("model_files").as_int64() == 1);   // the one its runs name, not the other
  CHECK(counts.at("model_file_chunks").as_int64() == 1);
  CHECK(counts.at("set_aside_results").as_int64() == 2);
  CHECK(counts.at("adaptive_plans").as_int64() == 1);
  CHECK(counts.at("adaptive_rounds").as_int64() == 2);
  CHECK(!std::filesystem::exists(path + ".partial"));
  std::string hash;
  for (int i = 0; i < 32; ++i) hash += "ab";
  CHECK(gunzip(path).find(hash) == std::string::npos);  // no credential
  REQUIRE(analysis::verify_archive(path).is_ok());

  const bj::object imp = json_out(import_cli({path, "--db", target.dsn(), "--json"}));
  const int64_t imported = imp.at("campaign").at("id").as_int64();
  CHECK(imported != alpha);
  CHECK(imp.at("campaign").at("name").as_string() == "alpha ü");
  CHECK(imp.at("agents").at("reused").as_array() == bj::array{"nx-b"});
  CHECK(imp.at("agents").at("created").as_array() == (bj::array{"orin-a", "other-c"}));
  CHECK(imp.at("model_files").at("imported").as_int64() == 1);
  CHECK(imp.at("model_files").at("missing").as_array().empty());
  const Snapshot want = snapshot(source.dsn(), alpha);
  check_same(want, snapshot(target.dsn(), imported));
  // The agent added is disconnected and has no credential; the one reused kept its own row.
  CHECK(target.count("SELECT count(*) FROM agents WHERE name = 'orin-a' AND NOT connected") == 1);
  CHECK(target.count("SELECT count(*) FROM agent_credentials") == 0);
  CHECK(target.count("SELECT count(*) FROM agents WHERE name = 'nx-b' AND hostname = 'the-target-nx'") == 1);
  CHECK(target.count("SELECT count(*) FROM agents") == 4);
  CHECK(target.count("SELECT count(*) FROM set_aside_results WHERE campaign_id = " + std::to_string(imported)) == 2);
  // Run ids keep the runs' order; the partitions exist.
  CHECK(target.count("SELECT count(*) FROM (SELECT ordinal, row_number() OVER (ORDER BY id) - 1 AS pos FROM runs "
                     "WHERE campaign_id = " + std::to_string(imported) + ") s WHERE ordinal = pos") == 3);
  CHECK(target.count("SELECT count(*) FROM minibatch_chunks_c" + std::to_string(imported)) == 3);

  // Again: a second campaign of the same name, every agent reused.
  const bj::object again = json_out(import_cli({path, "--db", target.dsn(), "--json"}));
  const int64_t second = again.at("campaign").at("id").as_int64();
  CHECK(second != imported);
  CHECK(again.at("agents").at("created").as_array().empty());
  CHECK(again.at("model_files").at("imported").as_int64() == 0);   // content-addressed: stored once
  CHECK(again.at("model_files").at("present").as_int64() == 1);
  CHECK(target.count("SELECT count(*) FROM model_file_chunks") == 1);
  check_same(want, snapshot(target.dsn(), second));
  CHECK(target.count("SELECT count(*) FROM campaigns WHERE name = 'alpha ü'") == 2);
  // And the text form names the new id.
  const Cli text = import_cli({path, "--db", target.dsn()});
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("as campaign ") != std::string::npos);
}

TEST_CASE_FIXTURE(TwoDatabases, "imported runs keep their source's clock offset, also from archives older than it") {
  // This database has a board of orin-a's name whose clock estimate is another (another board, or another day).
  target.exec("INSERT INTO agents (name, hostname, cpus, mem_bytes, backend, device_class, kernel, torch_version, "
              "compiler, git_sha, clock_offset_s) VALUES ('orin-a', 'o', 1, 1, 'sim', 'agx-orin', 'k', 't', 'c', "
              "'g', 5.0)");
  const std::string path = archive_alpha();
  // The same archive as a controller before migration 028 wrote it: runs without their own offset.
  const std::string text = gunzip(path);
  REQUIRE(text.find("clock_offset_s") != std::string::npos);
  gzip_to(file("pre028.gz"), resealed(without_column(text, "runs", "clock_offset_s")));
  REQUIRE(analysis::verify_archive(file("pre028.gz")).is_ok());
  const auto epoch_starts = [](const TestDatabase& db, int64_t campaign) {
    pqxx::connection c(db.dsn());
    pqxx::work w(c);
    std::string out;
    for (const auto& r : w.exec("SELECT e.start_unix_s FROM analysis_epochs e JOIN runs r ON r.id = e.run_id "
                                "WHERE r.campaign_id = " + std::to_string(campaign) +
                                " AND e.start_unix_s IS NOT NULL ORDER BY r.ordinal, e.epoch"))
      out += std::string(r[0].c_str()) + " ";
    return out;
  };
  const std::string want = epoch_starts(source, alpha);
  CHECK(want.find(' ') != std::string::npos);   // run 0's epochs are on the controller's clock
  for (const std::string& archive : {path, file("pre028.gz")}) {
    CAPTURE(archive);
    const bj::object imp = json_out(import_cli({archive, "--db", target.dsn(), "--json"}));
    CHECK(imp.at("agents").at("reused").as_array().at(0) == "orin-a");   // this database's, not the archive's
    const int64_t id = imp.at("campaign").at("id").as_int64();
    // The run orin-a executed: on the source's estimate of its clock, not on this database's orin-a's (5 s).
    CHECK(target.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) +
                       " AND ordinal = 0 AND clock_offset_s = 0.000123456789") == 1);
    CHECK(epoch_starts(target, id) == want);
    // Runs that never started have none.
    CHECK(target.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) +
                       " AND agent_t0_unix_s IS NULL AND clock_offset_s IS NOT NULL") == 0);
  }
}

TEST_CASE_FIXTURE(TwoDatabases, "a damaged or foreign archive is refused, naming the file, and nothing is imported") {
  const std::string path = archive_alpha();
  const std::string bytes = read_bytes(path), text = gunzip(path);
  const int64_t before = target.count("SELECT count(*) FROM campaigns");
  auto refused = [&](const std::string& bad, const std::string& why) {
    CAPTURE(why);
    const Cli r = import_cli({bad, "--db", target.dsn()});
    CHECK(r.rc != 0);
    CHECK_MESSAGE(r.err.find(bad) != std::string::npos, r.err);
    CHECK(target.count("SELECT count(*) FROM campaigns") == before);
    return r.err;
  };
  write_file(file("truncated.gz"), bytes.substr(0, bytes.size() / 2));
  CHECK(refused(file("truncated.gz"), "truncated").find("truncated") != std::string::npos);
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  write_file(file("flipped.gz"), flipped);
  refused(file("flipped.gz"), "a flipped byte");
  std::string edited = text;
  const size_t digit = edited.find("1797.123456789");
  REQUIRE(digit != std::string::npos);
  edited[digit] = '2';
  gzip_to(file("edited.gz"), edited);
  CHECK(refused(file("edited.gz"), "edited, recompressed").find("digest mismatch") != std::string::npos);
  gzip_to(file("no-trailer.gz"), text.substr(0, text.rfind("@end ")));
  CHECK(refused(file("no-trailer.gz"), "no trailer").find("without the trailer") != std::string::npos);
  write_file(file("plain.txt"), text);
  CHECK(refused(file("plain.txt"), "not gzip").find("not a gzip file") != std::string::npos);
  std::string v5 = text;
  v5.replace(v5.find("\"version\":4"), 11, "\"version\":5");
  gzip_to(file("v5.gz"), v5);
  CHECK(refused(file("v5.gz"), "format version 5").find("version 5") != std::string::npos);
  refused(file("missing.gz"), "no such file");

  // Sound in form, but rows this database refuses: rolled back whole (campaign, agents, partitions).
  std::string bad_status = text;
  bad_status.replace(bad_status.find("\tfailed\t"), 8, "\tbogus\t");
  gzip_to(file("bad-status.gz"), resealed(bad_status));
  CHECK(refused(file("bad-status.gz"), "a run status").find("runs_status_check") != std::string::npos);
  std::string bad_number = text;
  bad_number.replace(bad_number.find("\t4096\t", bad_number.find("@table epochs")), 6, "\tmany\t");
  gzip_to(file("bad-number.gz"), resealed(bad_number));
  CHECK(refused(file("bad-number.gz"), "a number").find("table epochs") != std::string::npos);
  CHECK(target.count("SELECT count(*) FROM agents WHERE name = 'orin-a'") == 0);
  CHECK(target.count("SELECT count(*) FROM pg_class WHERE relname LIKE 'minibatch_chunks_c%' AND relkind = 'r'") == before);
  gzip_to(file("resealed.gz"), resealed(text));  // the resealing itself is sound
  REQUIRE(analysis::verify_archive(file("resealed.gz")).is_ok());

  // From a database with a migration this one lacks.
  source.exec("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')");
  const std::string future = file("future.gz");
  REQUIRE(archive_cli({"alpha ü", "--db", source.dsn(), "--out", future}).rc == 0);
  const Cli r = import_cli({future, "--db", target.dsn()});
  CHECK(r.rc == 2);
  CHECK_MESSAGE(r.err.find("schema version 9999") != std::string::npos, r.err);
  CHECK(target.count("SELECT count(*) FROM campaigns") == before);
  CHECK(target.count("SELECT count(*) FROM agents WHERE name = 'orin-a'") == 0);
}

TEST_CASE_FIXTURE(TwoDatabases, "model files travel checked: an incomplete upload replaced, damage refused, v1 reported") {
  const std::string path = archive_alpha();
  const std::string text = gunzip(path);
  // The target holds an upload of the same file that never completed: replaced by the archive's.
  target.exec(std::string("INSERT INTO model_files (sha256) VALUES ('") + kModelSha + "')");
  target.exec(std::string("INSERT INTO model_file_chunks VALUES ('") + kModelSha + "', 0, 'junk')");
  const bj::object imp = json_out(import_cli({path, "--db", target.dsn(), "--json"}));
  CHECK(imp.at("model_files").at("imported").as_int64() == 1);
  CHECK(target.count(std::string("SELECT count(*) FROM model_files WHERE sha256 = '") + kModelSha +
                     "' AND bytes = 11 AND chunks = 1") == 1);
  CHECK(target.count("SELECT count(*) FROM model_file_chunks WHERE data = 'junk'") == 0);

  // A chunk whose bytes no longer hash to the file's name (the archive resealed after the edit): refused.
  TestDatabase other;
  migrate(other);
  std::string damaged = text;
  const size_t chunk = damaged.find("68656c6c6f20", damaged.find("@table model_file_chunks"));   // "hello " (bytea hex)
  REQUIRE(chunk != std::string::npos);
  damaged.replace(chunk, 12, "48454c4c4f20");                                                   // "HELLO "
  gzip_to(file("damaged.gz"), resealed(damaged));
  const Cli bad = import_cli({file("damaged.gz"), "--db", other.dsn()});
  CHECK(bad.rc != 0);
  CHECK_MESSAGE(bad.err.find(std::string("model file ") + kModelSha + ": its 1 chunks hold 11 bytes hashing to ") !=
                    std::string::npos,
                bad.err);
  CHECK(other.count("SELECT count(*) FROM campaigns") == 0);   // nothing imported
  // A chunking no upload would have (chunks of kModelChunkBytes but the last): refused as an upload would be.
  std::string chunked = text;
  const std::string row = std::string(kModelSha) + "\t11\t1\t";
  REQUIRE(chunked.find(row) != std::string::npos);
  chunked.replace(chunked.find(row), row.size(), std::string(kModelSha) + "\t11\t2\t");
  gzip_to(file("chunked.gz"), resealed(chunked));
  const Cli rechunked = import_cli({file("chunked.gz"), "--db", other.dsn()});
  CHECK(rechunked.rc != 0);
  CHECK_MESSAGE(rechunked.err.find("11 bytes in 2 chunks is not the chunking of a model file") != std::string::npos,
                rechunked.err);

  // A version 1 archive (before model files travelled): imported, the file its runs name reported missing.
  std::string v1 = text.substr(0, text.find("@table model_files"));
  v1.replace(v1.find("\"version\":4"), 11, "\"version\":1");
  const std::string set_aside_count = ",\"set_aside_results\":2";
  const std::string plan_counts = ",\"adaptive_plans\":1,\"adaptive_rounds\":2";
  v1.replace(v1.find(plan_counts), plan_counts.size(), "");
  v1.replace(v1.find(set_aside_count), set_aside_count.size(), "");
  const std::string model_counts = ",\"model_files\":1,\"model_file_chunks\":1";
  v1.replace(v1.find(model_counts), model_counts.size(), "");
  gzip_to(file("v1.gz"), resealed(v1 + "@end "));
  const bj::object old = json_out(import_cli({file("v1.gz"), "--db", other.dsn(), "--json"}));
  CHECK(old.at("model_files").at("missing").as_array() == bj::array{bj::value(std::string("torchscript:") + kModelSha)});
  const Cli old_text = import_cli({file("v1.gz"), "--db", other.dsn()});
  CHECK(old_text.out.find("MODEL FILES MISSING: the runs name torchscript:" + std::string(kModelSha)) != std::string::npos);

  // A version 2 archive (before set-aside results travelled): imported with everything else.
  std::string v2 = text.substr(0, text.find("@table set_aside_results"));
  v2.replace(v2.find("\"version\":4"), 11, "\"version\":2");
  v2.replace(v2.find(set_aside_count), set_aside_count.size(), "");
  v2.replace(v2.find(plan_counts), plan_counts.size(), "");
  gzip_to(file("v2.gz"), resealed(v2 + "@end "));
  const bj::object two = json_out(import_cli({file("v2.gz"), "--db", other.dsn(), "--json"}));
  CHECK(two.at("model_files").at("missing").as_array().empty());
  CHECK_FALSE(two.at("counts").as_object().contains("set_aside_results"));
  CHECK(other.count("SELECT count(*) FROM set_aside_results WHERE campaign_id = " +
                    std::to_string(two.at("campaign").at("id").as_int64())) == 0);

  // A version 3 archive (before adaptive plans travelled) of a campaign with a plan: its runs name plan ids no plan
  // here has; they are imported without them, never attached to this database's plan of the same id.
  other.exec("INSERT INTO campaigns (name, source_file, source_yaml, run_count) VALUES ('planned', 'p', '', 0)");
  other.exec("INSERT INTO adaptive_plans (id, campaign_id, plan_index, device_class, workload, spec) SELECT "
             "g, (SELECT max(id) FROM campaigns), g, 'nano', 'w', '{}' FROM generate_series(1, 50) g");
  std::string v3 = text.substr(0, text.find("@table adaptive_plans"));
  v3.replace(v3.find("\"version\":4"), 11, "\"version\":3");
  v3.replace(v3.find(plan_counts), plan_counts.size(), "");
  gzip_to(file("v3.gz"), resealed(v3 + "@end "));
  const bj::object three = json_out(import_cli({file("v3.gz"), "--db", other.dsn(), "--json"}));
  const std::string third = std::to_string(three.at("campaign").at("id").as_int64());
  CHECK(other.count("SELECT count(*) FROM set_aside_results WHERE campaign_id = " + third) == 2);
  CHECK(other.count("SELECT count(*) FROM runs WHERE campaign_id = " + third) == 3);
  CHECK(other.count("SELECT count(*) FROM runs WHERE campaign_id = " + third + " AND adaptive_plan_id IS NOT NULL") == 0);
  CHECK(other.count("SELECT count(*) FROM adaptive_plans WHERE campaign_id = " + third) == 0);
}

TEST_CASE_FIXTURE(TwoDatabases, "archive refuses executing runs; queued runs are imported paused") {
  const Cli unknown = archive_cli({"no-such", "--db", source.dsn(), "--out", file("x.gz")});
  CHECK(unknown.rc == 2);
  CHECK(unknown.err.find("no campaign 'no-such'") != std::string::npos);
  CHECK(archive_cli({"alpha ü", "--db", source.dsn()}).rc == 2);  // --out is required

  source.exec("UPDATE runs SET status = 'running' WHERE campaign_id = " + std::to_string(alpha) + " AND ordinal = 2");
  const Cli busy = archive_cli({std::to_string(alpha), "--db", source.dsn(), "--out", file("busy.gz")});
  CHECK(busy.rc == 2);
  CHECK(busy.err.find("jetsweep cancel " + std::to_string(alpha)) != std::string::npos);
  CHECK(!std::filesystem::exists(file("busy.gz")));
  CHECK(!std::filesystem::exists(file("busy.gz.partial")));

  source.exec("UPDATE runs SET status = 'queued', agent_id = NULL WHERE campaign_id = " + std::to_string(alpha) +
              " AND ordinal = 2");
  const std::string path = archive_alpha();
  const bj::object imp = json_out(import_cli({path, "--db", target.dsn(), "--json"}));
  CHECK(imp.at("queued_runs").as_int64() == 1);
  CHECK(target.count("SELECT count(*) FROM campaigns WHERE state = 'paused' AND id = " +
                     std::to_string(imp.at("campaign").at("id").as_int64())) == 1);
}

TEST_CASE_FIXTURE(TwoDatabases, "drop asks for the name, refuses while a run executes, and drops one campaign") {
  const std::string alpha_id = std::to_string(alpha);
  const auto beta_before = snapshot(source.dsn(), beta);
  const Cli wrong = drop_cli({alpha_id, "--db", source.dsn()}, "beta\n");
  CHECK(wrong.rc == 1);
  CHECK(wrong.err.find("nothing was dropped") != std::string::npos);
  const Cli eof = drop_cli({alpha_id, "--db", source.dsn()}, "");
  CHECK(eof.rc == 1);
  CHECK(eof.err.find("end of input") != std::string::npos);
  CHECK(source.count("SELECT count(*) FROM campaigns WHERE id = " + alpha_id) == 1);

  source.exec("UPDATE runs SET status = 'running' WHERE campaign_id = " + alpha_id + " AND ordinal = 2");
  const Cli busy = drop_cli({alpha_id, "--db", source.dsn(), "--yes"}, "");
  CHECK(busy.rc == 2);
  CHECK(busy.err.find("jetsweep cancel " + alpha_id) != std::string::npos);
  CHECK(source.count("SELECT count(*) FROM campaigns WHERE id = " + alpha_id) == 1);
  source.exec("UPDATE runs SET status = 'cancelled' WHERE campaign_id = " + alpha_id + " AND ordinal = 2");
  {
    // Ingest into another campaign holds its lock on the chunk tables: drop gives up after its lock timeout.
    pqxx::connection c(source.dsn());
    pqxx::work ingest(c);
    ingest.exec("INSERT INTO minibatch_chunks VALUES (" + std::to_string(beta) + ", (SELECT id FROM runs WHERE "
                "campaign_id = " + std::to_string(beta) + "), 1, 0, '{1}', '{1}', NULL)");
    const Cli locked = drop_cli({alpha_id, "--db", source.dsn(), "--yes"}, "");
    CHECK(locked.rc == 1);
    CHECK_MESSAGE(locked.err.find("in use") != std::string::npos, locked.err);
    CHECK(source.count("SELECT count(*) FROM campaigns WHERE id = " + alpha_id) == 1);
  }  // rolled back

  const Cli ok = drop_cli({"alpha ü", "--db", source.dsn(), "--json"}, "alpha ü\n");
  const bj::object d = json_out(ok);
  CHECK(d.at("campaign").at("id").as_int64() == alpha);
  CHECK(d.at("runs").as_int64() == 3);
  CHECK(d.at("epochs").as_int64() == 4);
  CHECK(d.at("minibatch_chunks").as_int64() == 3);
  CHECK(d.at("sample_chunks").as_int64() == 2);
  CHECK(d.at("bytes_freed").as_int64() > 100000);
  CHECK(source.count("SELECT count(*) FROM campaigns WHERE id = " + alpha_id) == 0);
  CHECK(source.count("SELECT count(*) FROM runs WHERE campaign_id = " + alpha_id) == 0);
  CHECK(source.count("SELECT count(*) FROM epochs e LEFT JOIN runs r ON r.id = e.run_id WHERE r.id IS NULL") == 0);
  CHECK(source.count("SELECT count(*) FROM pg_class WHERE relname IN ('minibatch_chunks_c" + alpha_id +
                     "', 'sample_chunks_c" + alpha_id + "')") == 0);
  CHECK(snapshot(source.dsn(), beta) == beta_before);
  CHECK(source.count("SELECT count(*) FROM agents") == 3);
  CHECK(source.count("SELECT count(*) FROM agent_credentials") == 1);

  const Cli gone = drop_cli({alpha_id, "--db", source.dsn(), "--yes"}, "");
  CHECK(gone.rc == 2);
  CHECK(gone.err.find("no campaign") != std::string::npos);
  const Cli text = drop_cli({"beta", "--db", source.dsn(), "--yes"}, "");
  REQUIRE_MESSAGE(text.rc == 0, text.err);
  CHECK(text.out.find("dropped campaign " + std::to_string(beta) + " 'beta': 1 run, 1 epoch") != std::string::npos);
}

}  // namespace
}  // namespace jetsweep::testing
