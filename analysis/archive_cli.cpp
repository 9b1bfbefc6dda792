// `jetsweep archive`, `jetsweep import` and `jetsweep drop`: flags (CLI11, cli_flags.cpp), the confirmation drop asks
// for, and the text or JSON they print (the work: archive.cpp).
#include <CLI/CLI.hpp>

#include <boost/json.hpp>
#include <cstdio>
#include <iterator>

#include "analysis/analyze_source.hpp"
#include "analysis/archive.hpp"
#include "analysis/command_guard.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

// One command: its name, positional argument, description and flags.
struct CommandDecl {
  const char* name;
  const char* positional;  // "CAMPAIGN" or "FILE"
  const char* positional_help;
  const char* description;
  std::vector<FlagDecl> flags;
};

const FlagDecl kDb{"--db", "DSN", "the controller's PostgreSQL connection string (required)"};
const char* const kCampaignHelp = "the campaign: an id, or a name (the newest campaign of that name)";

const CommandDecl& archive_decl() {
  static const CommandDecl d{
      "archive", "CAMPAIGN", kCampaignHelp,
      "Writes one campaign (its runs, epochs, minibatch and sample chunks, and the agents its runs ran on; never "
      "their credentials) to a self-contained gzip archive that `jetsweep import` restores into another controller's "
      "database. Refused while a run of it is assigned or running. Format: analysis/archive.hpp.",
      {kDb,
       {"--out", "FILE", "the archive to write (required; written as FILE.partial, renamed when complete)"},
       {"--json", "", "print the file, campaign and row counts as JSON"}}};
  return d;
}

const CommandDecl& import_decl() {
  static const CommandDecl d{
      "import", "FILE", "an archive written by `jetsweep archive`",
      "Restores an archive into this database as a new campaign of the same name (new ids; agents matched by name, "
      "missing ones added disconnected and without credentials), in one transaction: all or nothing. A campaign "
      "with queued runs is imported paused.",
      {kDb, {"--json", "", "print the new campaign id, row counts and agents as JSON"}}};
  return d;
}

const CommandDecl& drop_decl() {
  static const CommandDecl d{
      "drop", "CAMPAIGN", kCampaignHelp,
      "Deletes a campaign with its runs, epochs and measurement partitions, for good (archive it first to keep it). "
      "Asks for the campaign's name unless --yes; refused while a run of it is assigned or running (jetsweep cancel).",
      {kDb, {"--yes", "", "do not ask for confirmation"}, {"--json", "", "print what was dropped as JSON"}}};
  return d;
}

struct Parsed {
  Flags flags;
  std::string positional;
};

// Parses `args` for `decl`; returns an exit code when the command is done (help, bad flags), else nullopt.
std::optional<int> parse(const CommandDecl& decl, const std::vector<std::string>& args, Parsed& p, std::ostream& out,
                         std::ostream& err) {
  const std::string command = std::string("jetsweep ") + decl.name;
  CLI::App app(decl.description, command);
  app.allow_extras();
  declare_flags(app, decl.flags);
  app.add_option(decl.positional, p.positional, decl.positional_help)->type_name("");
  auto parsed = parse_flags(app, app, args, decl.name, decl.flags);
  if (!parsed.is_ok()) {
    err << command << ": " << parsed.status().message() << "\n" << app.help();
    return 2;
  }
  if (parsed->help) {
    out << app.help();
    return 0;
  }
  p.flags = parsed->flags;
  std::string missing;
  if (p.positional.empty()) missing = decl.positional;
  else if (!p.flags.has("--db")) missing = "--db DSN";
  else if (std::string(decl.name) == "archive" && !p.flags.has("--out")) missing = "--out FILE";
  if (missing.empty()) return std::nullopt;
  err << command << ": " << missing << " is required\n" << app.help();
  return 2;
}

int fail(const char* command, const Status& s, std::ostream& err) {
  err << "jetsweep " << command << ": " << s.message() << "\n";
  return exit_code(s);
}

// "1.5 MiB", "12 kiB", "800 bytes".
std::string size_text(int64_t bytes) {
  const char* units[] = {"bytes", "kiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

// "1 run", "3 runs".
std::string count_of(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

bj::object counts_json(const ArchiveHeader& h) {
  bj::object o;
  for (const auto& t : archive_tables(h.version)) o[t] = h.counts.at(t);
  return o;
}

// "1 campaign, 2 agents, 40 runs, ...".
std::string counts_text(const ArchiveHeader& h) {
  return join(archive_tables(h.version), ", ", [&](const std::string& t) {
    std::string noun = t.substr(0, t.size() - 1);  // every table's name is a plural in -s
    for (char& ch : noun)
      if (ch == '_') ch = ' ';
    return count_of(h.counts.at(t), noun);
  });
}

int run_archive(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Parsed p;
  if (auto rc = parse(archive_decl(), args, p, out, err)) return *rc;
  auto s = archive_campaign(p.flags.get("--db"), p.positional, p.flags.get("--out"));
  if (!s) return fail("archive", s.status(), err);
  const ArchiveHeader& h = s->header;
  if (p.flags.on("--json")) {
    bj::object o{{"file", s->file}, {"bytes", s->bytes}, {"schema_version", h.schema_version}};
    o["campaign"] = bj::object{{"id", h.campaign_id}, {"name", h.campaign_name}};
    o["counts"] = counts_json(h);
    out << bj::serialize(o) << "\n";
    return 0;
  }
  out << "archived campaign " << h.campaign_id << " '" << h.campaign_name << "' to " << s->file << " ("
      << size_text(static_cast<int64_t>(s->bytes)) << "): " << counts_text(h) << "\n";
  return 0;
}

int run_import(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Parsed p;
  if (auto rc = parse(import_decl(), args, p, out, err)) return *rc;
  auto s = import_archive(p.flags.get("--db"), p.positional);
  if (!s) return fail("import", s.status(), err);
  const ArchiveHeader& h = s->header;
  if (p.flags.on("--json")) {
    bj::object o{{"file", p.positional}, {"schema_version", h.schema_version}, {"queued_runs", s->queued_runs}};
    o["campaign"] = bj::object{{"id", s->campaign_id}, {"name", h.campaign_name}, {"source_id", h.campaign_id}};
    o["counts"] = counts_json(h);
    bj::array reused(s->agents_reused.begin(), s->agents_reused.end());
    bj::array created(s->agents_created.begin(), s->agents_created.end());
    o["agents"] = bj::object{{"reused", std::move(reused)}, {"created", std::move(created)}};
    bj::array missing(s->models_missing.begin(), s->models_missing.end());
    o["model_files"] = bj::object{{"imported", s->model_files_imported}, {"present", s->model_files_present},
                                  {"missing", std::move(missing)}};
    out << bj::serialize(o) << "\n";
    return 0;
  }
  out << "imported campaign '" << h.campaign_name << "' (campaign " << h.campaign_id << " where it was archived) as "
      << "campaign " << s->campaign_id << ": " << counts_text(h) << "\n";
  if (!s->agents_reused.empty()) out << "agents already here, reused: " << join(s->agents_reused) << "\n";
  if (!s->agents_created.empty())
    out << "agents added (disconnected, without credentials): " << join(s->agents_created) << "\n";
  if (s->model_files_imported + s->model_files_present > 0)
    out << "model files: " << s->model_files_imported << " stored, " << s->model_files_present
        << " already here (checked by their SHA-256)\n";
  if (!s->models_missing.empty())
    out << "MODEL FILES MISSING: the runs name " << join(s->models_missing)
        << ", which this database lacks (the archive does not carry them): upload each with `jetsweep submit` of a "
           "campaign naming the file, or import an archive that has it, before its runs can execute here\n";
  if (s->queued_runs > 0)
    out << count_of(s->queued_runs, "run") << (s->queued_runs == 1 ? " is" : " are")
        << " queued: the campaign is paused (jetsweep resume " << s->campaign_id
        << " runs them on this controller's boards)\n";
  return 0;
}

// Asks on `err` for the campaign's name and reads it from `in`; false on a mismatch or end of input.
bool confirmed(const CampaignInfo& c, std::istream& in, std::ostream& err) {
  err << "jetsweep drop: this deletes campaign " << c.id << " '" << c.name << "' (" << count_of(c.runs, "run") << ", "
      << count_of(c.epochs, "epoch") << " and their measurements) for good.\nType the campaign's name to confirm: "
      << std::flush;
  std::string answer;
  if (!std::getline(in, answer)) {
    err << "\njetsweep drop: no confirmation (end of input): nothing was dropped (--yes skips the question)\n";
    return false;
  }
  if (trim(answer) == c.name) return true;
  err << "jetsweep drop: '" << trim(answer) << "' is not the campaign's name: nothing was dropped\n";
  return false;
}

int run_drop(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  Parsed p;
  if (auto rc = parse(drop_decl(), args, p, out, err)) return *rc;
  const std::string dsn = p.flags.get("--db");
  auto c = find_campaign(dsn, p.positional);
  if (!c) return fail("drop", c.status(), err);
  // With runs executing, drop_campaign refuses: no point in asking first.
  if (c->active_runs == 0 && !p.flags.on("--yes") && !confirmed(c.value(), in, err)) return 1;
  auto d = drop_campaign(dsn, c->id);
  if (!d) return fail("drop", d.status(), err);
  if (p.flags.on("--json")) {
    bj::object o{{"runs", d->campaign.runs},
                 {"epochs", d->campaign.epochs},
                 {"minibatch_chunks", d->minibatch_chunks},
                 {"sample_chunks", d->sample_chunks},
                 {"bytes_freed", d->partition_bytes}};
    o["campaign"] = bj::object{{"id", d->campaign.id}, {"name", d->campaign.name}};
    out << bj::serialize(o) << "\n";
    return 0;
  }
  out << "dropped campaign " << d->campaign.id << " '" << d->campaign.name << "': " << count_of(d->campaign.runs, "run")
      << ", " << count_of(d->campaign.epochs, "epoch") << ", " << count_of(d->minibatch_chunks, "minibatch chunk")
      << ", " << count_of(d->sample_chunks, "sample chunk") << "; " << size_text(d->partition_bytes)
      << " of measurement partitions freed\n";
  return 0;
}

}  // namespace

int archive_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_guarded("jetsweep archive", err, [&] { return run_archive(args, out, err); });
}

int import_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_guarded("jetsweep import", err, [&] { return run_import(args, out, err); });
}

int drop_main(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  return run_guarded("jetsweep drop", err, [&] { return run_drop(args, in, out, err); });
}

}  // namespace jetsweep::analysis
