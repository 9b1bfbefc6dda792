#include "analysis/analyze_source.hpp"

#include <boost/json.hpp>
#include <set>

#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"

namespace jetsweep::analysis {

const std::vector<FlagDecl>& source_flags() {
  static const std::vector<FlagDecl> flags = {
      {"--csv", "FILE", "corpus CSV (device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw, ...)"},
      {"--db", "DSN", "PostgreSQL connection string"},
      {"--campaign", "ID|NAME", "with --db: one campaign"},
      {"--seed", "S", "random seed", "1"},
      {"--device", "BOARD", "board class of workloads named without @BOARD"},
      {"--where", "AXIS=VALUE[,..]", "select configurations (also simulated=true|false)"},
      {"--pool-over", "AXIS[,..]", "pool rows that differ only in these axes"},
      {"--json", "", "print JSON"},
  };
  return flags;
}

Result<Corpus> load_source(const Flags& a) {
  const bool csv = a.has("--csv"), db = a.has("--db");
  if (csv && db) return invalid_argument("--csv and --db: give one data source, not both");
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::string> pool;
  if (a.has("--where")) {
    JS_ASSIGN_OR_RETURN(where, parse_where(a.get("--where")));
  }
  if (a.has("--pool-over")) {
    JS_ASSIGN_OR_RETURN(pool, parse_pool_over(a.get("--pool-over")));
  }
  Corpus corpus;
  if (csv) {
    if (a.has("--campaign")) return invalid_argument("--campaign: only with --db");
    JS_ASSIGN_OR_RETURN(corpus, read_corpus_csv(a.get("--csv")));
  } else if (db) {
    JS_ASSIGN_OR_RETURN(corpus, load_corpus_from_db(a.get("--db"), DbFilter{a.get("--campaign")}));
  } else {
    return invalid_argument("no data source: give --csv FILE or --db DSN");
  }
  JS_RETURN_IF_ERROR(select_configurations(corpus, where, pool));
  return corpus;
}

WorkloadRef workload_flag(const Flags& a, const Corpus& c, const std::string& text) {
  WorkloadRef r = parse_workload_ref(text);
  if (r.device.empty()) r.device = a.get("--device");
  std::set<std::string> all;
  for (const auto& row : c.rows)
    if (r.device.empty() || row.device == r.device) all.insert(row.workload);
  if (!all.count(r.workload)) {
    std::vector<std::string> prefixed;
    for (const auto& w : all)
      if (w.rfind(r.workload + "/", 0) == 0) prefixed.push_back(w);
    if (prefixed.size() == 1) r.workload = prefixed.front();
  }
  return r;
}

int exit_code(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return 0;
    case Code::kInvalidArgument:
    case Code::kNotFound: return 2;
    default: return 1;
  }
}

void print_written(std::ostream& out, const std::string& file, size_t rows, std::optional<bool> per_epoch, bool json) {
  if (!json) {
    out << "wrote " << rows << " rows to " << file << "\n";
    return;
  }
  boost::json::object o;
  o["file"] = file;
  o["rows"] = rows;
  if (per_epoch) o["per_epoch"] = *per_epoch;
  out << boost::json::serialize(o) << '\n';
}

}  // namespace jetsweep::analysis
