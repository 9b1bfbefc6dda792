// Campaign archives (issue 15): `jetsweep archive` writes one campaign of a controller's database to a self-contained
// compressed file, `jetsweep import` restores it into another controller's database (corpora shared between labs),
// `jetsweep drop` deletes a campaign. They work straight on the database, as `jetsweep export` does. Stateless
// functions; each opens its own connection; any thread.
//
// The archive file, format version 3: one gzip stream (RFC 1952) of UTF-8 lines, each ending in '\n':
//   line 1   a JSON object: {"format":"jetsweep-archive","version":3,"schema_version":S,
//            "campaign":{"id":ID,"name":NAME},"counts":{"campaigns":1,"agents":A,"runs":R,"epochs":E,
//            "minibatch_chunks":M,"sample_chunks":C,"model_files":F,"model_file_chunks":K,"set_aside_results":X},
//            "created_at":"YYYY-MM-DDTHH:MM:SSZ"}
//            S is the newest migration of the source database (max(version) of schema_migrations), ID and NAME
//            the campaign's id and name there; counts: the rows of each table below.
//   then, for each table in this order: campaigns (the campaign's row), agents (the rows its runs and its
//            set-aside results reference; agent_credentials never), runs, epochs, minibatch_chunks, sample_chunks
//            (the campaign's), model_files and model_file_chunks (the complete model files its runs name as
//            torchscript:<sha256>; version 2), set_aside_results (what agents measured for runs they no longer
//            held, issue 29; version 3):
//            "@table NAME COL1,COL2,..."  the table's columns as the source database has them
//            one line per row in PostgreSQL's COPY text format (tab-separated, \N for NULL, backslash escapes),
//            written with DateStyle ISO, TimeZone UTC and extra_float_digits 3, so every value reads back exactly
//            "\."
//   last     "@end sha256=HEX": the SHA-256 (lower-case hex) of every byte of the text before this line.
// Version 2 is version 3 without set_aside_results, version 1 version 2 without the model-file tables; both are
// still read. Ids are the source database's. Import maps them: a new campaign id (its INSERT creates the measurement
// partitions), new run ids in the same order, agents by name (an existing agent of that name is reused, else the
// row is inserted with connected = false). A reader refuses a file that is not gzip, another format, a version it
// does not know, a schema_version newer than the target database's, tables out of order, a row count that differs
// from the header's, a missing trailer, text after it, or a digest mismatch; errors name FILE:LINE. Model files are
// content-addressed: import checks each one's chunks, size and SHA-256 before it is stored, keeps a file the target
// already has complete (the same hash is the same bytes), and replaces an incomplete upload of it.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace jetsweep::analysis {

// What one archive holds (its header line).
struct ArchiveHeader {
  int version = 0;
  int schema_version = 0;
  int64_t campaign_id = 0;  // in the source database
  std::string campaign_name;
  std::map<std::string, int64_t> counts;  // table -> rows
  std::string created_at;
};

// An archive written.
struct ArchiveSummary {
  ArchiveHeader header;
  std::string file;
  uint64_t bytes = 0;  // the compressed file's size
};

// A campaign imported.
struct ImportSummary {
  ArchiveHeader header;
  int64_t campaign_id = 0;              // the new id
  std::vector<std::string> agents_reused;   // names that existed in the target database
  std::vector<std::string> agents_created;  // inserted (connected = false, without credentials)
  int64_t queued_runs = 0;              // > 0: the campaign was imported paused (resume it to run them here)
  int64_t model_files_imported = 0;     // model files stored from the archive
  int64_t model_files_present = 0;      // in the archive and already complete here
  std::vector<std::string> models_missing;   // torchscript:<sha256> its runs name that this database lacks (a
                                             // version 1 archive, or a file the source did not have complete)
  int64_t set_aside_results = 0;        // results measured for runs their agents no longer held (version 3)
};

// A campaign as `drop` shows it before asking.
struct CampaignInfo {
  int64_t id = 0;
  std::string name;
  int64_t runs = 0;
  int64_t active_runs = 0;  // assigned or running
  int64_t epochs = 0;
};

// A campaign dropped.
struct DropSummary {
  CampaignInfo campaign;
  int64_t minibatch_chunks = 0, sample_chunks = 0;
  int64_t partition_bytes = 0;  // pg_total_relation_size of its measurement partitions, before they were dropped
};

// The newest archive format (written); every version up to it is read.
inline constexpr int kArchiveVersion = 4;
// The tables of format `version`, in file order.
const std::vector<std::string>& archive_tables(int version = kArchiveVersion);

// Writes campaign `ref` (an id, or a name: the newest campaign of that name) of database `dsn` to `path`
// (through `path`.partial, renamed when complete). Refused (kInvalidArgument) while one of its runs is assigned or
// running: it would be archived half-measured.
Result<ArchiveSummary> archive_campaign(const std::string& dsn, const std::string& ref, const std::string& path);
// Reads all of `path` and checks it (header, tables, counts, digest) without a database.
Result<ArchiveHeader> verify_archive(const std::string& path);
// Restores the archive at `path` into database `dsn` as a new campaign, in one transaction (all or nothing).
Result<ImportSummary> import_archive(const std::string& dsn, const std::string& path);
// The campaign `ref` names (kNotFound when none).
Result<CampaignInfo> find_campaign(const std::string& dsn, const std::string& ref);
// Deletes campaign `campaign_id`, its runs, epochs and measurement partitions. Refused (kInvalidArgument) while
// one of its runs is assigned or running.
Result<DropSummary> drop_campaign(const std::string& dsn, int64_t campaign_id);

// The commands: args are what follows `jetsweep archive` / `import` / `drop`. Return 0 ok, 2 bad input (flags,
// unknown campaign, refused archive), 1 otherwise; results on `out`, messages on `err`. drop_main reads the
// confirmation from `in`. Never throw.
int archive_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int import_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int drop_main(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace jetsweep::analysis
