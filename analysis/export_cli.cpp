// `jetsweep export`: the corpus as CSV (one row per mode, or --per-epoch), to stdout or --out, or as JSON rows.
#include <CLI/CLI.hpp>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "analysis/analyze_cli.hpp"
#include "analysis/analyze_source.hpp"
#include "analysis/command_guard.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/json_output.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

const std::vector<FlagDecl>& export_flags() {
  static const std::vector<FlagDecl> flags = {
      {"--db", "DSN", "PostgreSQL connection string"},
      {"--campaign", "ID|NAME", "with --db: one campaign"},
      {"--csv", "FILE", "a corpus CSV (re-written)"},
      {"--per-epoch", "", "one row per epoch (warm-ups included) instead of one per mode"},
      {"--out", "FILE", "write the CSV here (default: stdout)"},
      {"--json", "", "with --out: the file and row count as JSON; else the rows as JSON objects"},
  };
  return flags;
}

bj::value cell_json(const std::string& cell) {
  if (cell.empty()) return nullptr;
  double v = 0;
  if (from_chars_double(cell.data(), cell.data() + cell.size(), v) == cell.data() + cell.size()) return jnum(v, 17);
  if (cell == "true" || cell == "false") return cell == "true";
  return bj::value(cell);
}

// The CSV's rows (as write_corpus_csv / write_epochs_csv quote them) as JSON objects keyed by its header.
Result<bj::object> csv_as_json(const std::string& csv) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  JS_ASSIGN_OR_RETURN(const std::vector<std::string> cols, split_record(header, "exported CSV header"));
  bj::array rows;
  while (std::getline(in, line)) {
    JS_ASSIGN_OR_RETURN(const auto cells, split_record(line, "exported CSV row"));
    bj::object o;
    for (size_t i = 0; i < cols.size() && i < cells.size(); ++i) o[cols[i]] = cell_json(cells[i]);
    rows.push_back(std::move(o));
  }
  bj::object o;
  o["rows"] = std::move(rows);
  return o;
}

int export_corpus(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app("Writes the corpus as CSV: one row per mode and configuration, or one per epoch.", "jetsweep export");
  app.allow_extras();
  declare_flags(app, export_flags());
  auto parsed = parse_flags(app, app, args, "export", export_flags());
  if (!parsed.is_ok()) {
    err << "jetsweep export: " << parsed.status().message() << "\n" << app.help();
    return 2;
  }
  if (parsed->help) {
    out << app.help();
    return 0;
  }
  const Flags& a = parsed->flags;
  auto corpus = load_source(a);
  if (!corpus.is_ok()) {
    err << "jetsweep export: " << corpus.status().message() << "\n";
    return exit_code(corpus.status());
  }
  const bool per_epoch = a.on("--per-epoch");
  std::ostringstream csv;
  if (per_epoch) write_epochs_csv(csv, corpus.value());
  else write_corpus_csv(csv, corpus.value());
  const size_t rows = per_epoch ? corpus->epochs.size() : corpus->rows.size();
  if (a.has("--out")) {
    std::ofstream f(a.get("--out"));
    f << csv.str();
    f.close();   // a full disk shows at the last write or the close, not before
    if (!f) {
      err << "jetsweep export: " << a.get("--out") << ": cannot write --out\n";
      return 1;
    }
    print_written(out, a.get("--out"), rows, per_epoch, a.on("--json"));
  } else if (a.on("--json")) {
    auto rows_json = csv_as_json(csv.str());
    if (!rows_json) {
      err << "jetsweep export: " << rows_json.status().message() << "\n";
      return 1;
    }
    out << bj::serialize(rows_json.value()) << '\n';
  } else {
    out << csv.str();
  }
  return 0;
}

}  // namespace

int export_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_guarded("jetsweep export", err, [&] { return export_corpus(args, out, err); });
}

}  // namespace jetsweep::analysis
