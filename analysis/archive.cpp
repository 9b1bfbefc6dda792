// `jetsweep archive`, `import` and `drop` on the database (format and rules: archive.hpp; the file: archive_file.cpp).
#include "analysis/archive.hpp"

#include <pqxx/pqxx>
#include <pqxx/tablereader>
#include <pqxx/tablewriter>

#include <algorithm>
#include <filesystem>
#include <set>

#include "analysis/archive_file.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace {

using archive_file::Section;

// libpqxx exceptions as a Status naming what was being done.
template <class Fn>
auto db_guarded(const std::string& what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const pqxx::broken_connection& e) {
    return unavailable("cannot connect to PostgreSQL: " + trim(e.what()));
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == "55P03")
      return db_error(what + ": the campaign's tables are in use (no lock within the lock timeout): try again");
    return db_error(what + ": " + trim(e.what()) + " [sqlstate " + e.sqlstate() + "]");
  } catch (const std::exception& e) {
    return db_error(what + ": " + trim(e.what()));
  }
}

// Values written and read as the archive has them: dates in ISO form on UTC, floats exact.
void archive_session(pqxx::transaction_base& w) {
  w.exec("SET LOCAL DateStyle = 'ISO, YMD'");
  w.exec("SET LOCAL TimeZone = 'UTC'");
  w.exec("SET LOCAL IntervalStyle = 'postgres'");
  w.exec("SET LOCAL extra_float_digits = 3");
}

std::string column_list(pqxx::transaction_base& w, const std::vector<std::string>& cols, const std::string& prefix = "") {
  std::string out;
  for (const auto& c : cols) out += (out.empty() ? "" : ", ") + prefix + w.quote_name(c);
  return out;
}

// The table's columns in the database, in order (none: no such table).
std::vector<std::string> table_columns(pqxx::transaction_base& w, const std::string& table) {
  std::vector<std::string> cols;
  for (const auto& r : w.exec_params("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 "
                                     "AND NOT attisdropped ORDER BY attnum",
                                     table))
    cols.push_back(r[0].c_str());
  return cols;
}

// The newest migration applied to the database.
Result<int> schema_version(pqxx::transaction_base& w) {
  if (w.exec1("SELECT to_regclass('schema_migrations') IS NULL")[0].as<bool>())
    return invalid_argument("the database has no schema_migrations table: not a jetsweep database (the controller "
                            "migrates it when it starts)");
  return w.exec1("SELECT coalesce(max(version), 0) FROM schema_migrations")[0].as<int>();
}

// The campaign `ref` names (an id, else the newest campaign of that name); `lock`: its row and its runs' rows FOR
// UPDATE (no run is dispatched or finished until the transaction ends).
Result<CampaignInfo> campaign_info(pqxx::transaction_base& w, const std::string& ref, bool lock) {
  const bool numeric = !ref.empty() && ref.size() < 18 && ref.find_first_not_of("0123456789") == std::string::npos;
  pqxx::result r = numeric ? w.exec_params("SELECT id, name FROM campaigns WHERE id = $1", std::stoll(ref))
                           : w.exec_params("SELECT id, name FROM campaigns WHERE name = $1 ORDER BY id DESC LIMIT 1", ref);
  if (r.empty()) return not_found("no campaign '" + ref + "'");
  CampaignInfo c;
  c.id = r[0]["id"].as<int64_t>();
  c.name = r[0]["name"].c_str();
  if (lock) {
    w.exec_params("SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE", c.id);
    w.exec_params("SELECT 1 FROM runs WHERE campaign_id = $1 FOR UPDATE", c.id);
  }
  const pqxx::row n = w.exec_params1(
      "SELECT count(*) AS runs, count(*) FILTER (WHERE status IN ('assigned', 'running')) AS active_runs, "
      "(SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run_id WHERE r.campaign_id = $1) AS epochs "
      "FROM runs WHERE campaign_id = $1",
      c.id);
  c.runs = n["runs"].as<int64_t>();
  c.active_runs = n["active_runs"].as<int64_t>();
  c.epochs = n["epochs"].as<int64_t>();
  return c;
}

Status refuse_active(const CampaignInfo& c, const std::string& what) {
  if (c.active_runs == 0) return Status::ok();
  return invalid_argument("campaign " + std::to_string(c.id) + " '" + c.name + "' has " + std::to_string(c.active_runs) +
                          " run(s) assigned or running: wait until they finish, or cancel it first (jetsweep cancel " +
                          std::to_string(c.id) + "), then " + what + " it once they have stopped");
}

// ---- archive

// The SHA-256 of every model file campaign %ID%'s runs name as torchscript:<sha256>.
#define MODELS_OF_CAMPAIGN                                                                                        \
  "(SELECT substr(config->>'model', 13) FROM runs WHERE campaign_id = %ID% AND config->>'model' LIKE 'torchscript:%')"

// Which rows of each table belong to campaign %ID%, in file order.
struct TableRows {
  const char* table;
  const char* where;
  const char* order;
};
const TableRows kTableRows[] = {
    {"campaigns", "id = %ID%", "id"},
    {"agents", "id IN (SELECT agent_id FROM runs WHERE campaign_id = %ID% UNION "
               "SELECT agent_id FROM set_aside_results WHERE campaign_id = %ID%)", "id"},
    {"runs", "campaign_id = %ID%", "id"},
    {"epochs", "run_id IN (SELECT id FROM runs WHERE campaign_id = %ID%)", "run_id, epoch"},
    {"minibatch_chunks", "campaign_id = %ID%", "run_id, epoch, first_idx"},
    {"sample_chunks", "campaign_id = %ID%", "run_id, t_first"},
    {"model_files", "bytes IS NOT NULL AND sha256 IN " MODELS_OF_CAMPAIGN, "sha256"},
    {"model_file_chunks", "sha256 IN (SELECT sha256 FROM model_files WHERE bytes IS NOT NULL AND sha256 IN "
                          MODELS_OF_CAMPAIGN ")", "sha256, idx"},
    {"set_aside_results", "campaign_id = %ID%", "id"},
    {"adaptive_plans", "campaign_id = %ID%", "id"},
    {"adaptive_rounds", "plan_id IN (SELECT id FROM adaptive_plans WHERE campaign_id = %ID%)", "plan_id, round"},
};
#undef MODELS_OF_CAMPAIGN

std::string rows_where(const TableRows& t, int64_t campaign_id) {
  std::string where = t.where;
  for (size_t at = where.find("%ID%"); at != std::string::npos; at = where.find("%ID%", at))
    where.replace(at, 4, std::to_string(campaign_id));
  return where;
}

// One table's section: "@table", its rows as COPY text, "\.". Returns the rows written.
Result<int64_t> write_section(pqxx::transaction_base& w, const TableRows& t, int64_t campaign_id,
                              archive_file::Writer& out) {
  const std::vector<std::string> cols = table_columns(w, t.table);
  if (cols.empty())
    return db_error(std::string("the database has no table ") + t.table +
                    ": migrate it with this jetsweep's controller first");
  JS_RETURN_IF_ERROR(out.write(std::string("@table ") + t.table + " " + join(cols, ",") + "\n"));
  int64_t rows = 0;
  {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    // tablereader hands out the raw COPY lines (libpqxx 6.4); COPY (SELECT ...) selects and orders them.
    pqxx::tablereader copy(w, "(SELECT " + column_list(w, cols) + " FROM " + t.table + " WHERE " +
                                  rows_where(t, campaign_id) + " ORDER BY " + t.order + ")");
#pragma GCC diagnostic pop
    std::string line;
    while (copy.get_raw_line(line)) {
      if (line.empty() || line.back() != '\n') line.push_back('\n');
      JS_RETURN_IF_ERROR(out.write(line));
      ++rows;
    }
    copy.complete();
  }
  JS_RETURN_IF_ERROR(out.write("\\.\n"));
  return rows;
}

Result<ArchiveSummary> write_archive(pqxx::transaction_base& w, const CampaignInfo& c, const std::string& path) {
  ArchiveSummary summary;
  ArchiveHeader& h = summary.header;
  h.version = archive_file::kVersion;
  JS_ASSIGN_OR_RETURN(h.schema_version, schema_version(w));
  h.campaign_id = c.id;
  h.campaign_name = c.name;
  h.created_at = w.exec1("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")[0].c_str();
  for (const auto& t : kTableRows) {
    if (table_columns(w, t.table).empty())
      return db_error(std::string("the database has no table ") + t.table +
                      ": migrate it with this jetsweep's controller first");
    h.counts[t.table] =
        w.exec1(std::string("SELECT count(*) FROM ") + t.table + " WHERE " + rows_where(t, c.id))[0].as<int64_t>();
  }
  JS_ASSIGN_OR_RETURN(auto out, archive_file::Writer::open(path));
  JS_RETURN_IF_ERROR(out->write(archive_file::header_line(h) + "\n"));
  for (const auto& t : kTableRows) {
    JS_ASSIGN_OR_RETURN(const int64_t rows, write_section(w, t, c.id, *out));
    if (rows != h.counts[t.table])  // one snapshot: cannot differ
      return internal_error(std::string("table ") + t.table + ": counted " + std::to_string(h.counts[t.table]) +
                            " rows, copied " + std::to_string(rows));
  }
  JS_RETURN_IF_ERROR(out->finish());
  summary.file = path;
  std::error_code ec;
  summary.bytes = std::filesystem::file_size(path, ec);
  return summary;
}

// ---- import

// Columns an archive's table must carry for its ids to be mapped.
const std::map<std::string, std::vector<std::string>>& required_columns() {
  static const std::map<std::string, std::vector<std::string>> req = {
      {"campaigns", {"id", "name"}},
      {"agents", {"id", "name"}},
      {"runs", {"id", "campaign_id", "agent_id", "status"}},
      {"epochs", {"run_id"}},
      {"minibatch_chunks", {"campaign_id", "run_id"}},
      {"sample_chunks", {"campaign_id", "run_id"}},
      {"model_files", {"sha256", "bytes", "chunks"}},
      {"model_file_chunks", {"sha256", "idx", "data"}},
      {"set_aside_results", {"campaign_id", "run_id", "agent_id"}},
      {"adaptive_plans", {"id", "campaign_id"}},
      {"adaptive_rounds", {"plan_id", "round"}},
  };
  return req;
}

// Loads each section into a staging table archive_NAME (the archive's columns, the target's types), checking the
// header against the target database first.
class ImportVisitor : public archive_file::Visitor {
 public:
  explicit ImportVisitor(pqxx::work& w) : w_(w) {}

  Status header(const ArchiveHeader& h) override {
    JS_ASSIGN_OR_RETURN(const int target, schema_version(w_));
    if (h.schema_version > target)
      return invalid_argument("the archive comes from a database at schema version " +
                              std::to_string(h.schema_version) + ", newer than this one (" + std::to_string(target) +
                              "): upgrade this controller (and let it migrate the database) first");
    if (h.counts.at("campaigns") != 1)
      return invalid_argument("the archive holds " + std::to_string(h.counts.at("campaigns")) + " campaigns, not 1");
    return Status::ok();
  }

  Status section(const Section& s) override;

  Status rows(const std::string& batch, int64_t first_line) override {
    return db_guarded("table " + table_ + " (rows from line " + std::to_string(first_line) + ")", [&]() -> Status {
      copy_->write_raw_line(batch);
      return Status::ok();
    });
  }

  Status end_section(const Section& s) override {
    return db_guarded("table " + s.table, [&]() -> Status {
      copy_->complete();
      copy_.reset();
      return Status::ok();
    });
  }

  const std::vector<std::string>& columns(const std::string& table) const { return columns_.at(table); }
  bool has(const std::string& table) const { return columns_.count(table) > 0; }

 private:
  pqxx::work& w_;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  std::unique_ptr<pqxx::tablewriter> copy_;  // takes preformatted COPY text (libpqxx 6.4)
#pragma GCC diagnostic pop
  std::string table_;
  std::map<std::string, std::vector<std::string>> columns_;
};

Status ImportVisitor::section(const Section& s) {
  const std::vector<std::string> target = table_columns(w_, s.table);
  if (target.empty()) return invalid_argument("this database has no table " + s.table);
  for (const auto& c : s.columns)
    if (std::find(target.begin(), target.end(), c) == target.end())
      return invalid_argument("table " + s.table + ": this database has no column " + c +
                              " (the archive's schema is not this database's)");
  for (const auto& c : required_columns().at(s.table))
    if (std::find(s.columns.begin(), s.columns.end(), c) == s.columns.end())
      return invalid_argument("table " + s.table + ": the archive lacks column " + c);
  table_ = s.table;
  columns_[s.table] = s.columns;
  return db_guarded("staging table " + s.table, [&]() -> Status {
    const std::string cols = column_list(w_, s.columns);
    w_.exec("CREATE TEMP TABLE archive_" + s.table + " ON COMMIT DROP AS SELECT " + cols + " FROM " + s.table +
            " WITH NO DATA");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    copy_ = std::make_unique<pqxx::tablewriter>(w_, "archive_" + s.table + " (" + cols + ")");
#pragma GCC diagnostic pop
    return Status::ok();
  });
}

// INSERT INTO `table` (the archive's columns) SELECT them from archive_`table` s, each as is unless `replace` maps
// it to an expression (to "": left out, so the target's default applies); `rest` follows FROM archive_`table` s.
std::string insert_mapped(pqxx::transaction_base& w, const std::string& table, const std::vector<std::string>& cols,
                          const std::map<std::string, std::string>& replace, const std::string& rest) {
  std::string names, values;
  for (const auto& c : cols) {
    const auto it = replace.find(c);
    if (it != replace.end() && it->second.empty()) continue;
    names += (names.empty() ? "" : ", ") + w.quote_name(c);
    values += (values.empty() ? "" : ", ") + (it != replace.end() ? it->second : "s." + w.quote_name(c));
  }
  return "INSERT INTO " + table + " (" + names + ") SELECT " + values + " FROM archive_" + table + " s " + rest;
}

// The agents: reused by name, else inserted disconnected; archive_agent_map(old_id, new_id) maps them.
void import_agents(pqxx::work& w, const ImportVisitor& v, ImportSummary& s) {
  for (const auto& r : w.exec("SELECT s.name FROM archive_agents s JOIN agents a ON a.name = s.name ORDER BY s.id"))
    s.agents_reused.push_back(r[0].c_str());
  for (const auto& r : w.exec(insert_mapped(w, "agents", v.columns("agents"), {{"id", ""}, {"connected", "false"}},
                                            "WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.name = s.name) "
                                            "ORDER BY s.id ON CONFLICT (name) DO NOTHING RETURNING name")))
    s.agents_created.push_back(r[0].c_str());
  // A created agent's kept boot offset is also that boot's (sql/031's rule, as its backfill; the agents reused have
  // theirs already).
  w.exec("INSERT INTO agent_boot_offsets (agent_id, boot_id, offset_s) SELECT id, boot_id, boot_offset_s FROM agents "
         "WHERE boot_id IS NOT NULL AND boot_offset_s IS NOT NULL ON CONFLICT DO NOTHING");
  w.exec("CREATE TEMP TABLE archive_agent_map ON COMMIT DROP AS "
         "SELECT s.id AS old_id, a.id AS new_id FROM archive_agents s JOIN agents a ON a.name = s.name");
}

// The adaptive-profiling plans (format 4) with new ids, their rounds with them; archive_plan_map(old_id, new_id)
// maps them. Empty for older archives: a run's plan id, which no plan here carries, is then left out (NULL), never
// kept pointing at whatever plan of this database has that id.
Status import_plans(pqxx::work& w, const ImportVisitor& v, const ArchiveHeader& h, int64_t campaign_id) {
  w.exec("CREATE TEMP TABLE archive_plan_map (old_id bigint PRIMARY KEY, new_id bigint NOT NULL) ON COMMIT DROP");
  if (!v.has("adaptive_plans")) return Status::ok();
  w.exec("INSERT INTO archive_plan_map SELECT id, nextval(pg_get_serial_sequence('adaptive_plans', 'id')) "
         "FROM (SELECT id FROM archive_adaptive_plans ORDER BY id) o");
  const auto imported = [&](const char* table, const pqxx::result& r) -> Status {
    const auto rows = static_cast<int64_t>(r.affected_rows());
    if (rows == h.counts.at(table)) return Status::ok();
    return invalid_argument(std::string("table ") + table + ": " + std::to_string(rows) + " rows imported, the archive has " +
                            std::to_string(h.counts.at(table)) + " (rows whose plan is not in the archive?)");
  };
  JS_RETURN_IF_ERROR(imported("adaptive_plans",
                              w.exec(insert_mapped(w, "adaptive_plans", v.columns("adaptive_plans"),
                                                   {{"id", "m.new_id"}, {"campaign_id", std::to_string(campaign_id)}},
                                                   "JOIN archive_plan_map m ON m.old_id = s.id ORDER BY m.new_id"))));
  return imported("adaptive_rounds",
                  w.exec(insert_mapped(w, "adaptive_rounds", v.columns("adaptive_rounds"), {{"plan_id", "m.new_id"}},
                                       "JOIN archive_plan_map m ON m.old_id = s.plan_id ORDER BY m.new_id, s.round")));
}

// The runs with new ids in their old order (their plans mapped by import_plans), then everything keyed by run.
void import_runs(pqxx::work& w, const ImportVisitor& v, int64_t campaign_id) {
  const std::string cid = std::to_string(campaign_id);
  w.exec("CREATE TEMP TABLE archive_run_map ON COMMIT DROP AS SELECT old_id, nextval(pg_get_serial_sequence('runs', "
         "'id')) AS new_id FROM (SELECT id AS old_id FROM archive_runs ORDER BY id) o");
  const std::string by_run = "JOIN archive_run_map m ON m.old_id = s.run_id";
  const auto& run_columns = v.columns("runs");
  const bool planned = std::find(run_columns.begin(), run_columns.end(), "adaptive_plan_id") != run_columns.end();
  std::map<std::string, std::string> mapped = {
      {"id", "m.new_id"}, {"campaign_id", cid}, {"agent_id", "am.new_id"}, {"claim_key", ""}};
  if (planned) mapped["adaptive_plan_id"] = "pm.new_id";
  std::vector<std::string> columns = run_columns;
  const auto has = [](const std::vector<std::string>& cols, const char* c) {
    return std::find(cols.begin(), cols.end(), c) != cols.end();
  };
  if (has(run_columns, "agent_t0_unix_s") && has(table_columns(w, "runs"), "clock_offset_s")) {
    // A started run's clock offset as its source database put it on the controller's clock (its views take
    // coalesce(the run's, its agent's, 0)): its own (migration 028), else (an archive from before 028, or a run
    // started before its agent had an estimate) its agent's there, else 0. Left NULL, the views here would take the
    // estimate of this database's agent of that name, another board's clock or another day's, and move the run's
    // times by the difference.
    const std::string source_agent =
        has(v.columns("agents"), "clock_offset_s")
            ? "coalesce((SELECT sa.clock_offset_s FROM archive_agents sa WHERE sa.id = s.agent_id), 0)"
            : "0";
    const std::string own = has(run_columns, "clock_offset_s") ? "s.clock_offset_s" : "NULL::double precision";
    mapped["clock_offset_s"] =
        "coalesce(" + own + ", CASE WHEN s.agent_t0_unix_s IS NOT NULL THEN " + source_agent + " END)";
    if (!has(run_columns, "clock_offset_s")) columns.push_back("clock_offset_s");
  }
  w.exec(insert_mapped(w, "runs", columns, mapped,
                       "JOIN archive_run_map m ON m.old_id = s.id LEFT JOIN archive_agent_map am ON am.old_id = "
                       "s.agent_id " +
                           std::string(planned ? "LEFT JOIN archive_plan_map pm ON pm.old_id = s.adaptive_plan_id " : "") +
                           "ORDER BY m.new_id"));
  w.exec(insert_mapped(w, "epochs", v.columns("epochs"), {{"run_id", "m.new_id"}}, by_run));
  for (const char* t : {"minibatch_chunks", "sample_chunks"})
    w.exec(insert_mapped(w, t, v.columns(t), {{"campaign_id", cid}, {"run_id", "m.new_id"}}, by_run));
}

// Each staged model file checked (chunks 0..n-1, their total size, the SHA-256 of their bytes), then stored unless
// this database has it complete (the same hash is the same bytes); an incomplete upload of it here is replaced.
Status import_models(pqxx::work& w, const ImportVisitor& v, int64_t campaign_id, ImportSummary& s) {
  if (v.has("model_files")) {
    w.exec("CREATE INDEX ON archive_model_file_chunks (sha256, idx)");
    for (const auto& f : w.exec("SELECT sha256, bytes, chunks FROM archive_model_files ORDER BY sha256")) {
      const std::string sha = f["sha256"].c_str();
      if (f["bytes"].is_null() || f["chunks"].is_null())
        return invalid_argument("model file " + sha + ": incomplete in the archive");
      const int64_t bytes = f["bytes"].as<int64_t>(), chunks = f["chunks"].as<int64_t>();
      // As an upload is checked (Store's check_model_upload): every chunk but the last one of kModelChunkBytes.
      if (bytes < 1 || chunks != (bytes + proto::kModelChunkBytes - 1) / proto::kModelChunkBytes)
        return invalid_argument("model file " + sha + ": " + std::to_string(bytes) + " bytes in " +
                                std::to_string(chunks) + " chunks is not the chunking of a model file");
      Sha256 hash;
      int64_t total = 0;
      for (int64_t i = 0; i < chunks; ++i) {   // one chunk at a time: a 1 GB model is not held in memory
        const pqxx::result c =
            w.exec_params("SELECT data FROM archive_model_file_chunks WHERE sha256 = $1 AND idx = $2", sha, i);
        if (c.empty()) return invalid_argument("model file " + sha + ": chunk " + std::to_string(i) + " is missing");
        const pqxx::binarystring data(c[0][0]);
        const int64_t want = i + 1 < chunks ? proto::kModelChunkBytes : bytes - i * proto::kModelChunkBytes;
        if (static_cast<int64_t>(data.size()) != want)
          return invalid_argument("model file " + sha + ": chunk " + std::to_string(i) + " has " +
                                  std::to_string(data.size()) + " bytes, expected " + std::to_string(want));
        hash.update(data.data(), data.size());
        total += static_cast<int64_t>(data.size());
      }
      const std::string got = hash.hex_digest();
      if (total != bytes || got != sha)
        return invalid_argument("model file " + sha + ": its " + std::to_string(chunks) + " chunks hold " +
                                std::to_string(total) + " bytes hashing to " + got + " (" + std::to_string(bytes) +
                                " bytes expected): the archive's model file is damaged");
    }
    w.exec("CREATE TEMP TABLE archive_model_new ON COMMIT DROP AS SELECT s.sha256 FROM archive_model_files s WHERE "
           "NOT EXISTS (SELECT 1 FROM model_files f WHERE f.sha256 = s.sha256 AND f.bytes IS NOT NULL)");
    w.exec("DELETE FROM model_files f USING archive_model_new n WHERE f.sha256 = n.sha256");   // incomplete uploads
    // Two imports of one new file at once: the second keeps the first's (the same bytes, by their hash).
    const std::string new_only = "JOIN archive_model_new n ON n.sha256 = s.sha256";
    s.model_files_imported = w.exec(insert_mapped(w, "model_files", v.columns("model_files"), {},
                                                  new_only + " ON CONFLICT DO NOTHING")).affected_rows();
    w.exec(insert_mapped(w, "model_file_chunks", v.columns("model_file_chunks"), {},
                         new_only + " JOIN archive_model_files f ON f.sha256 = s.sha256 WHERE s.idx < f.chunks "
                                    "ON CONFLICT DO NOTHING"));
    s.model_files_present = w.exec1("SELECT count(*) FROM archive_model_files")[0].as<int64_t>() - s.model_files_imported;
  }
  for (const auto& r : w.exec_params(
           "SELECT DISTINCT config->>'model' FROM runs r WHERE campaign_id = $1 AND config->>'model' LIKE "
           "'torchscript:%' AND NOT EXISTS (SELECT 1 FROM model_files f WHERE f.sha256 = substr(r.config->>'model', "
           "13) AND f.bytes IS NOT NULL) ORDER BY 1",
           campaign_id))
    s.models_missing.push_back(r[0].c_str());
  return Status::ok();
}

// Every table holds as many of the campaign's rows as the header says.
Status check_counts(pqxx::work& w, const ArchiveHeader& h, int64_t campaign_id) {
  const pqxx::row n = w.exec_params1(
      "SELECT (SELECT count(*) FROM campaigns WHERE id = $1), (SELECT count(*) FROM archive_agent_map), "
      "(SELECT count(*) FROM runs WHERE campaign_id = $1), "
      "(SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run_id WHERE r.campaign_id = $1), "
      "(SELECT count(*) FROM minibatch_chunks WHERE campaign_id = $1), "
      "(SELECT count(*) FROM sample_chunks WHERE campaign_id = $1)",
      campaign_id);
  for (size_t i = 0; i < archive_tables(1).size(); ++i) {   // the model files are checked by import_models
    const std::string& t = archive_tables(1)[i];
    if (n[static_cast<int>(i)].as<int64_t>() != h.counts.at(t))
      return invalid_argument("table " + t + ": " + n[static_cast<int>(i)].c_str() + " rows imported, the archive has " +
                              std::to_string(h.counts.at(t)) + " (rows whose run or agent is not in the archive?)");
  }
  return Status::ok();
}

// The staged rows into the real tables, ids mapped.
Result<ImportSummary> apply_import(pqxx::work& w, const ImportVisitor& v, const ArchiveHeader& h) {
  ImportSummary s;
  s.header = h;
  const pqxx::row runs = w.exec1(
      "SELECT count(*) FILTER (WHERE status IN ('assigned', 'running')) AS active, "
      "count(*) FILTER (WHERE status = 'queued') AS queued FROM archive_runs");
  if (runs["active"].as<int64_t>() > 0)
    return invalid_argument("the archive has " + std::string(runs["active"].c_str()) +
                            " run(s) assigned or running, which no agent here executes");
  s.queued_runs = runs["queued"].as<int64_t>();
  s.campaign_id =
      w.exec1(insert_mapped(w, "campaigns", v.columns("campaigns"), {{"id", ""}, {"request_key", ""}}, "RETURNING id"))[0]
          .as<int64_t>();
  import_agents(w, v, s);
  JS_RETURN_IF_ERROR(import_plans(w, v, h, s.campaign_id));
  import_runs(w, v, s.campaign_id);
  if (v.has("set_aside_results")) {   // version 3: each with its run and agent mapped, every one or the import fails
    const pqxx::result kept = w.exec(insert_mapped(
        w, "set_aside_results", v.columns("set_aside_results"),
        {{"id", ""}, {"campaign_id", std::to_string(s.campaign_id)}, {"run_id", "m.new_id"}, {"agent_id", "am.new_id"}},
        "JOIN archive_run_map m ON m.old_id = s.run_id JOIN archive_agent_map am ON am.old_id = s.agent_id "
        "ORDER BY s.id"));
    s.set_aside_results = static_cast<int64_t>(kept.affected_rows());
    if (s.set_aside_results != h.counts.at("set_aside_results"))
      return invalid_argument("table set_aside_results: " + std::to_string(s.set_aside_results) +
                              " rows imported, the archive has " + std::to_string(h.counts.at("set_aside_results")) +
                              " (rows whose run or agent is not in the archive?)");
  }
  JS_RETURN_IF_ERROR(import_models(w, v, s.campaign_id, s));
  // Queued runs are not handed to this lab's boards until someone resumes the campaign.
  if (s.queued_runs > 0)
    w.exec_params("UPDATE campaigns SET state = 'paused' WHERE id = $1 AND state = 'active'", s.campaign_id);
  JS_RETURN_IF_ERROR(check_counts(w, h, s.campaign_id));
  return s;
}

}  // namespace

Result<ArchiveSummary> archive_campaign(const std::string& dsn, const std::string& ref, const std::string& path) {
  return db_guarded("archiving campaign '" + ref + "'", [&]() -> Result<ArchiveSummary> {
    pqxx::connection conn(dsn);
    conn.set_client_encoding("UTF8");
    // One snapshot: the header's counts and the rows agree, whatever arrives meanwhile.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> w(conn, "archive");
    archive_session(w);
    JS_ASSIGN_OR_RETURN(const CampaignInfo c, campaign_info(w, ref, false));
    JS_RETURN_IF_ERROR(refuse_active(c, "archive"));
    auto summary = write_archive(w, c, path);
    w.commit();
    return summary;
  });
}

Result<ArchiveHeader> verify_archive(const std::string& path) {
  archive_file::Visitor nothing;
  return archive_file::walk(path, nothing);
}

Result<ImportSummary> import_archive(const std::string& dsn, const std::string& path) {
  // The whole file is checked before the database is touched: a damaged archive is refused as such.
  JS_RETURN_IF_ERROR(verify_archive(path).status());
  return db_guarded("importing " + path + " (nothing was imported)", [&]() -> Result<ImportSummary> {
    pqxx::connection conn(dsn);
    conn.set_client_encoding("UTF8");
    pqxx::work w(conn, "import");
    archive_session(w);
    w.exec("SET LOCAL client_min_messages = WARNING");
    ImportVisitor v(w);
    auto header = archive_file::walk(path, v);  // its errors name the file and line
    if (!header) return header.status();
    auto summary = apply_import(w, v, header.value());
    if (!summary) return summary.status().with_context(path + " (nothing was imported)");
    w.commit();
    return summary;
  });
}

Result<CampaignInfo> find_campaign(const std::string& dsn, const std::string& ref) {
  return db_guarded("looking up campaign '" + ref + "'", [&]() -> Result<CampaignInfo> {
    pqxx::connection conn(dsn);
    pqxx::read_transaction w(conn);
    return campaign_info(w, ref, false);
  });
}

Result<DropSummary> drop_campaign(const std::string& dsn, int64_t campaign_id) {
  return db_guarded("dropping campaign " + std::to_string(campaign_id), [&]() -> Result<DropSummary> {
    pqxx::connection conn(dsn);
    pqxx::work w(conn, "drop");
    // Dropping the partitions locks their parents, and while this waits for that lock, ingest into every campaign
    // queues behind it: wait a few seconds at most, then give up (the user tries again).
    w.exec("SET LOCAL lock_timeout = '5s'");
    DropSummary d;
    JS_ASSIGN_OR_RETURN(d.campaign, campaign_info(w, std::to_string(campaign_id), true));
    JS_RETURN_IF_ERROR(refuse_active(d.campaign, "drop"));
    const pqxx::row n = w.exec_params1(
        "SELECT (SELECT count(*) FROM minibatch_chunks WHERE campaign_id = $1) AS minibatch_chunks, "
        "(SELECT count(*) FROM sample_chunks WHERE campaign_id = $1) AS sample_chunks, "
        "coalesce(pg_total_relation_size(to_regclass('minibatch_chunks_c' || $1)), 0) + "
        "coalesce(pg_total_relation_size(to_regclass('sample_chunks_c' || $1)), 0) AS partition_bytes",
        campaign_id);
    d.minibatch_chunks = n["minibatch_chunks"].as<int64_t>();
    d.sample_chunks = n["sample_chunks"].as<int64_t>();
    d.partition_bytes = n["partition_bytes"].as<int64_t>();
    w.exec_params("DELETE FROM campaigns WHERE id = $1", campaign_id);  // its trigger drops the partitions
    w.commit();
    return d;
  });
}

}  // namespace jetsweep::analysis
