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
#include "analysis/archive_campaigns.hpp"
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
  // orin-a's kept boot clock offset, as a controller keeps it (the agent's row and that boot's, sql/031).
  source.exec("UPDATE agents SET boot_id = 'b1', boot_offset_s = -900 WHERE name = 'orin-a'");
  source.exec("INSERT INTO agent_boot_offsets SELECT id, 'b1', -900 FROM agents WHERE name = 'orin-a'");
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
  CHECK(target.count("SELECT count(*) FROM agent_boot_offsets b JOIN agents a ON a.id = b.agent_id AND "
                     "a.boot_id = b.boot_id AND a.boot_offset_s = b.offset_s WHERE a.name = 'orin-a' AND "
                     "b.boot_id = 'b1' AND b.offset_s = -900") == 1);
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
  // Imports `archive` and checks run 0 (started on orin-a) has `offset` and its epochs the source's times `want`.
  const auto imports_as = [&](const std::string& archive, const std::string& offset, const std::string& want) {
    CAPTURE(archive);
    CAPTURE(offset);
    const bj::object imp = json_out(import_cli({archive, "--db", target.dsn(), "--json"}));
    CHECK(imp.at("agents").at("reused").as_array().at(0) == "orin-a");   // this database's, not the archive's
    const int64_t id = imp.at("campaign").at("id").as_int64();
    CHECK(target.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) +
                       " AND ordinal = 0 AND clock_offset_s = " + offset) == 1);
    CHECK(epoch_starts(target, id) == want);
    CHECK(target.count("SELECT count(*) FROM runs WHERE campaign_id = " + std::to_string(id) +
                       " AND agent_t0_unix_s IS NULL AND clock_offset_s IS NOT NULL") == 0);   // none if never started
  };
  // The same archive as a controller before migration 028 wrote it (runs without their own offset): run 0 takes
  // its source agent's, 0.000123456789 s, not this database's orin-a's 5 s; with none there, 0, as the views took.
  const auto pre_028 = [&](const std::string& name) {
    const std::string text = gunzip(archive_alpha());
    const size_t runs = text.find("@table runs ");
    REQUIRE(text.substr(runs, text.find('\n', runs) - runs).find(",clock_offset_s") != std::string::npos);
    gzip_to(file(name), resealed(without_column(text, "runs", "clock_offset_s")));
    REQUIRE(analysis::verify_archive(file(name)).is_ok());
    return file(name);
  };
  REQUIRE(epoch_starts(source, alpha).find(' ') != std::string::npos);   // run 0's epochs on the controller's clock
  imports_as(pre_028("pre028.gz"), "0.000123456789", epoch_starts(source, alpha));
  imports_as(archive_alpha(), "0.000123456789", epoch_starts(source, alpha));   // its own NULL: the same
  source.exec("UPDATE agents SET clock_offset_s = NULL WHERE name = 'orin-a'");
  imports_as(pre_028("pre028-no-estimate.gz"), "0", epoch_starts(source, alpha));
  // Its own offset wins over its agent's.
  source.exec("UPDATE agents SET clock_offset_s = 0.25 WHERE name = 'orin-a'");
  source.exec("UPDATE runs SET clock_offset_s = 0.5 WHERE campaign_id = " + std::to_string(alpha) + " AND ordinal = 0");
  imports_as(archive_alpha(), "0.5", epoch_starts(source, alpha));
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
