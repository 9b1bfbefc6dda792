// `jetsweep` commands: flags parsed by CLI11 (one subcommand per command, generated --help), answers read
// through the typed API client.
#include "cli/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <optional>
#include <ostream>

#include "cli/client.hpp"
#include "cli/model_check.hpp"
#include "cli/model_upload.hpp"
#include "cli/validate.hpp"
#include "cli/watch.hpp"
#include "common/campaign.hpp"
#include "common/protocol.hpp"
#include "common/text.hpp"
#include "net/secret_file.hpp"

namespace jetsweep::cli {
namespace bj = boost::json;

namespace {

const char* const kDescription =
    "The jetsweep client: campaigns, their progress and results, and the fleet, through the controller's HTTP "
    "API.\nThe controller defaults to $JETSWEEP_CONTROLLER, else http://127.0.0.1:8420 (https:// verifies it against "
    "--ca FILE, default $JETSWEEP_CA, else the system's CAs); --token T or --token-file FILE (default "
    "$JETSWEEP_API_TOKEN) is sent as the API token.\nanalyze, export, archive, import and drop work on the database "
    "itself (--db DSN) or a CSV corpus, not through the controller (docs/ANALYSIS.md, docs/OPERATIONS.md); "
    "`jetsweep COMMAND --help` describes each command's flags.";

// What the command line asked for.
struct Invocation {
  std::string controller = "http://127.0.0.1:8420";
  std::string token;
  std::string token_file;              // --token-file: the token read from a file
  std::string ca_file;                 // --ca (default $JETSWEEP_CA): https:// trusts this CA
  CLI::Option* token_opt = nullptr;
  CLI::Option* token_file_opt = nullptr;
  bool as_json = false;
  bool estimate = false;
  std::string dry_run;                 // RUNS[:EPOCHS[:MINIBATCHES]] as given
  double interval_s = 2.0;             // watch --interval
  std::vector<std::string> args;       // the command's positional arguments
  std::string command;
};

// One command: its name, positional arguments (value name, count) and summary.
struct CommandDecl {
  const char* name;
  const char* positional;   // "" for none
  size_t min_args, max_args;
  const char* summary;
};

const CommandDecl kCommands[] = {
    {"validate", "FILE", 1, 1,
     "expand and check a campaign; prints the run count; --estimate asks the controller for its duration from the "
     "epoch times measured so far"},
    {"submit", "FILE", 1, 1,
     "submit a campaign; prints its id. --dry-run submits a smaller copy: at most RUNS runs spread over the matrix, "
     "EPOCHS epochs, MINIBATCHES per epoch"},
    {"status", "CAMPAIGN", 0, 1, "progress of one campaign (id or name) or of all"},
    {"watch", "CAMPAIGN", 0, 1,
     "follow a campaign (default: the newest unfinished one) until it finishes: redrawn in place on a terminal, a "
     "line per change otherwise; Ctrl-C stops watching"},
    {"report", "CAMPAIGN", 1, 1, "per-run, per-epoch results"},
    {"compare", "CAMPAIGN_A CAMPAIGN_B", 2, 2,
     "the configurations two campaigns share, side by side: mean epoch time (epochs 1+), power, energy per epoch "
     "and B - A"},
    {"agents", "revoke NAME", 0, 2,
     "the fleet; 'agents revoke NAME' revokes the credential agent NAME enrolled with and disconnects it (its next "
     "registration enrolls it again: docs/SECURITY.md)"},
    {"pause", "CAMPAIGN", 1, 1, "stop handing out its runs"},
    {"resume", "CAMPAIGN", 1, 1, "carry on handing out its runs"},
    {"cancel", "CAMPAIGN", 1, 1,
     "cancel it: queued runs are cancelled, executing ones stopped (what they measured is kept)"},
    {"cancel-run", "RUN_ID", 1, 1, "cancel one run (stopped on its agent if it is executing)"},
    {"help", "", 0, 0, "this help"},
};

std::unique_ptr<CLI::App> make_app(Invocation& inv, const std::vector<DelegatedCommand>& delegated) {
  auto app = std::make_unique<CLI::App>(kDescription, "jetsweep");
  app->allow_extras();
  app->require_subcommand(0, 1);
  app->fallthrough();   // --controller / --token also after the command
  app->get_formatter()->column_width(34);
  app->add_option("--controller", inv.controller, "the controller's API (default $JETSWEEP_CONTROLLER)")
      ->type_name("http[s]://HOST:PORT")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  inv.token_opt = app->add_option("--token", inv.token,
                                  "API token (default $JETSWEEP_API_TOKEN; visible in the process list: prefer "
                                  "--token-file)")
                      ->type_name("T")
                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  inv.token_file_opt = app->add_option("--token-file", inv.token_file, "the API token read from FILE (one line)")
                           ->type_name("FILE")
                           ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app->add_option("--ca", inv.ca_file, "https: the PEM CA that signed the controller's certificate (default $JETSWEEP_CA)")
      ->type_name("FILE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  for (const auto& c : kCommands) {
    CLI::App* sub = app->add_subcommand(c.name, c.summary);
    if (*c.positional) sub->add_option("args", inv.args, c.positional)->type_name(c.positional);
    if (std::string(c.name) != "help" && std::string(c.name) != "validate" && std::string(c.name) != "watch")
      sub->add_flag("--json", inv.as_json, "print the controller's JSON answer");
  }
  // Listed for --help; run_delegated hands them their arguments before CLI11 parses anything.
  for (const auto& d : delegated) {
    CLI::App* sub = app->add_subcommand(d.name, d.summary);
    sub->prefix_command();
    sub->set_help_flag();
    sub->allow_extras();
    sub->fallthrough(false);
  }
  CLI::App* validate = app->get_subcommand("validate");
  validate->add_flag("--json", inv.as_json, "print the expansion (and estimate) as JSON");
  validate->add_flag("--estimate", inv.estimate, "ask the controller for the campaign's duration");
  app->get_subcommand("watch")
      ->add_option("--interval", inv.interval_s, "seconds between polls (default 2)")
      ->type_name("S")
      ->check(CLI::Range(0.1, 3600.0));
  app->get_subcommand("submit")
      ->add_option("--dry-run", inv.dry_run, "submit a smaller copy (see above)")
      ->type_name("RUNS[:EPOCHS[:MINIBATCHES]]");
  return app;
}

// The CLI11 error in the words users know ("jetsweep: --controller: missing value").
std::string parse_error_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (e.get_name() == "ArgumentMismatch") {
    const std::string flag = what.substr(0, what.find(':'));
    if (flag == "--dry-run") return "--dry-run needs RUNS[:EPOCHS[:MINIBATCHES]]";
    return flag + ": missing value";
  }
  return what;
}

// "?max_runs=..." from --dry-run RUNS[:EPOCHS[:MINIBATCHES]], checked.
Result<std::string> dry_run_query(const std::string& spec) {
  const std::string keys[] = {"max_runs", "max_epochs", "max_minibatches"};
  std::string query;
  size_t start = 0;
  for (size_t k = 0; k < 3 && start <= spec.size(); ++k) {
    const size_t colon = spec.find(':', start);
    query += (query.empty() ? "?" : "&") + keys[k] + "=" + spec.substr(start, colon - start);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (auto caps = parse_dry_run_caps(query.substr(1)); !caps)
    return invalid_argument("--dry-run '" + spec + "': " + caps.status().message());
  return query;
}

// Runs one parsed command; its output on `out`, problems on `err`.
class Commands {
 public:
  Commands(const Invocation& inv, std::ostream& out, std::ostream& err, bool out_is_tty)
      : inv_(inv), out_(out), err_(err), tty_(out_is_tty), client_(inv.controller, inv.token, inv.ca_file) {}

  int run() {
    const std::string& cmd = inv_.command;
    if (cmd == "validate") return validate();
    if (cmd == "submit") return submit();
    if (cmd == "status") return status();
    if (cmd == "report") return report();
    if (cmd == "compare") return compare();
    if (cmd == "watch") return run_watch(client_, {inv_.args.empty() ? "" : arg(), inv_.interval_s, tty_}, out_, err_);
    if (cmd == "cancel-run") return cancel_run();
    if (cmd == "agents") return agents();
    return campaign_action();   // pause | resume | cancel
  }

 private:
  const std::string& arg() const { return inv_.args.at(0); }

  int fail(const Status& s) {
    err_ << "jetsweep " << inv_.command << ": " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument || s.code() == Code::kNotFound ? 2 : 1;
  }
  // A campaign file that does not parse: FILE:LINE:COL errors as they are.
  int bad_campaign(const Status& s) {
    if (s.code() != Code::kInvalidArgument) return fail(s);
    err_ << s.message() << "\n";
    return 2;
  }
  template <class T>
  void print(const Answer<T>& a, const std::string& text) {
    if (inv_.as_json) out_ << bj::serialize(a.json) << "\n";
    else out_ << text;
  }
  // The campaign file, read and expanded here against the papers' BSP tables (errors point at FILE:LINE:COL
  // without a round trip). Where the controller expands it too (submit, validate --estimate) its verdict stands:
  // it expands against the enrolled boards' own tables, so a grid on a board by name expands only there.
  // Model files named as torchscript:FILE are hashed and named by their SHA-256 in the text the campaign is parsed
  // from and submitted as, checked by the agent's LibTorch in a helper process on each dataset the campaign trains
  // them on (cli/model_check.hpp), and, `upload`, sent to the controller unless it has them.
  // campaign_text_ is set only when everything but the offline expansion succeeded (read_but_not_expanded).
  Result<Campaign> load_campaign(bool upload = false) {
    campaign_text_.clear();
    JS_ASSIGN_OR_RETURN(std::string text, read_text_file(arg()));
    std::vector<ModelFileRef> files;
    JS_ASSIGN_OR_RETURN(std::string resolved, resolve_model_files(text, arg(), files));
    auto campaign = parse_campaign(resolved, arg());
    if (!files.empty()) {   // expanded offline: each file on its datasets; else (the controller expands it) loaded
      JS_ASSIGN_OR_RETURN(ModelCheckOptions check, model_check_options());
      JS_RETURN_IF_ERROR(check_model_files(files, campaign ? &campaign->runs : nullptr, check, err_));
      if (upload) JS_RETURN_IF_ERROR(upload_model_files(client_, files, err_));
    }
    campaign_text_ = std::move(resolved);
    return campaign;
  }
  bool read_but_not_expanded(const Result<Campaign>& c) const { return !c && !campaign_text_.empty(); }
  template <class T>
  Result<Answer<T>> post_campaign(const std::string& target, const char* what) {
    return client_.request<T>("POST", target, what, campaign_text_,
                              {{api::kSourceHeader, arg()}, {"Content-Type", "application/yaml"}});
  }

  int validate() {
    auto c = load_campaign();
    if (!c && !(inv_.estimate && read_but_not_expanded(c))) return bad_campaign(c.status());
    std::optional<Answer<api::CampaignEstimate>> estimate;
    if (inv_.estimate) {
      auto r = post_campaign<api::CampaignEstimate>("/api/campaigns/estimate", "estimate");
      if (!r) return c ? fail(r.status()) : bad_campaign(r.status().code() == Code::kInvalidArgument ? r.status() : c.status());
      estimate = std::move(r).value();
    }
    if (c) print_validation(out_, arg(), c.value(), estimate, inv_.as_json);
    else print_controller_expansion(out_, arg(), c.status().message(), *estimate, inv_.as_json);
    // Runs no enrolled board can run as booted or reboot for (GPU masks): the campaign would not finish.
    return estimate && !estimate->value.gating_refused.empty() ? 1 : 0;
  }

  int submit() {
    std::string query;
    if (!inv_.dry_run.empty()) {
      auto q = dry_run_query(inv_.dry_run);
      if (!q) {
        err_ << "jetsweep: " << q.status().message() << "\n";
        return 2;
      }
      query = q.value();
    }
    auto c = load_campaign(true);
    if (!c && !read_but_not_expanded(c)) return bad_campaign(c.status());
    auto r = post_campaign<api::CreatedCampaignReply>("/api/campaigns" + query, "submission answer");
    if (!r) return c ? fail(r.status()) : bad_campaign(r.status().code() == Code::kInvalidArgument ? r.status() : c.status());
    print(*r, "submitted campaign " + std::to_string(r->value.campaign_id) + " (" + r->value.name + ") with " +
                  std::to_string(r->value.runs) + " runs" +
                  (r->value.adaptive_plans > 0
                       ? " and " + std::to_string(r->value.adaptive_plans) + " adaptive-profiling plan" +
                             (r->value.adaptive_plans == 1 ? "" : "s") + " (their runs come in rounds: jetsweep status)"
                       : std::string()) +
                  "\n");
    return 0;
  }

  // Requests a T and prints it: its JSON with --json, else `format(value)`.
  template <class T, class Format>
  int show(const char* method, const std::string& target, const char* what, Format format) {
    auto r = client_.request<T>(method, target, what);
    if (!r) return fail(r.status());
    print(*r, format(r->value));
    return 0;
  }

  int status() {
    auto line = [this](const api::CampaignStatus& s) { return format_status(s, tty_) + "\n"; };
    if (!inv_.args.empty()) return show<api::CampaignStatus>("GET", api::campaign_path(arg()), "campaign status", line);
    return show<std::vector<api::CampaignStatus>>("GET", "/api/campaigns", "campaign list", [](const auto& all) {
      return format_campaigns(all, std::time(nullptr));
    });
  }

  // The text report needs each run's summary only (?epochs=none: a 5,000-epoch campaign's rows would be
  // hundreds of MB); --json carries every epoch.
  int report() {
    const std::string target = api::campaign_report_path(arg()) + (inv_.as_json ? "" : "?" + std::string(api::kReportWithoutEpochs));
    return show<api::CampaignReport>("GET", target, "campaign report",
                                     [](const api::CampaignReport& r) { return format_report(r); });
  }

  int compare() {
    return show<api::CampaignComparison>("GET", api::campaign_compare_path(inv_.args.at(0), inv_.args.at(1)),
                                         "campaign comparison",
                                         [](const api::CampaignComparison& c) { return format_comparison(c); });
  }

  int campaign_action() {
    const api::CampaignStateChange change{arg(), inv_.command};
    return show<api::CampaignStatus>("POST", api::campaign_action_path(change), "campaign status",
                                     [](const api::CampaignStatus& s) { return format_status(s, false) + "\n"; });
  }

  int cancel_run() {
    return show<api::RunCancelled>("POST", api::run_cancel_path(arg()), "run cancellation", [](const api::RunCancelled& o) {
      return "run " + std::to_string(o.run_id) + " (campaign " + std::to_string(o.campaign_id) + "): " + o.status +
             (o.stopping ? ", being stopped on " + o.agent.value_or("-") : std::string()) + "\n";
    });
  }

  int agents() {
    if (!inv_.args.empty()) return revoke_agent();
    return show<std::vector<api::AgentInfo>>("GET", "/api/agents", "agent list",
                                             [](const auto& all) { return format_agents(all); });
  }

  int revoke_agent() {
    if (inv_.args.size() != 2 || inv_.args[0] != "revoke") {
      err_ << "jetsweep agents: expected no arguments, or 'revoke NAME'\n";
      return 2;
    }
    if (auto bad = proto::agent_name_problem(inv_.args[1])) {
      err_ << "jetsweep agents revoke: agent name '" << inv_.args[1] << "' " << *bad << "\n";
      return 2;
    }
    return show<api::AgentRevoked>("POST", api::agent_revoke_path(inv_.args[1]), "revocation", [](const api::AgentRevoked& r) {
      return "agent " + r.name + ": " + (r.had_credential ? "credential revoked" : "had no credential") +
             (r.disconnected ? "; disconnected" : "") + "; its next registration enrolls it again\n";
    });
  }

  const Invocation& inv_;
  std::ostream& out_;
  std::ostream& err_;
  bool tty_;
  ApiClient client_;
  std::string campaign_text_;
};

// When the command is a delegated one, runs it with every argument after its name exactly as given (`--` included,
// which CLI11 would take as its own) and returns its exit code. Before the name only --help (handed on) is allowed:
// the client's own flags (--controller, --token, --token-file, --ca) mean nothing to a command that works on the
// database, and are refused rather than silently dropped.
std::optional<int> run_delegated(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                                 const std::vector<DelegatedCommand>& delegated) {
  static const std::set<std::string> kValued = {"--controller", "--token", "--token-file", "--ca"};
  size_t at = 0;
  std::vector<std::string> before;
  while (at < args.size() && !args[at].empty() && args[at][0] == '-') {
    before.push_back(args[at]);
    at += kValued.count(args[at]) ? 2 : 1;
  }
  if (at >= args.size()) return std::nullopt;
  const auto d = std::find_if(delegated.begin(), delegated.end(), [&](const auto& c) { return c.name == args[at]; });
  if (d == delegated.end()) return std::nullopt;
  bool help = false;
  for (const auto& flag : before) {
    if (flag == "--help" || flag == "-h") {
      help = true;
      continue;
    }
    const std::string name = flag.substr(0, flag.find('='));
    if (kValued.count(name))
      err << "jetsweep: " << name << " is for the commands that talk to the controller; " << d->name
          << " works on the database itself (jetsweep " << d->name << " --help)\n";
    else
      err << "jetsweep: unknown flag '" << flag << "'\n";
    return 2;
  }
  if (help) return d->run({"--help"}, out, err);
  return d->run(std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end()), out, err);
}

// Parses `args` into `inv`; returns an exit code when parsing settles it (help, usage errors, a delegated command,
// which it runs).
std::optional<int> parse(const std::vector<std::string>& args, Invocation& inv, std::ostream& out, std::ostream& err,
                         const std::vector<DelegatedCommand>& delegated) {
  if (auto code = run_delegated(args, out, err, delegated)) return code;
  auto app = make_app(inv, delegated);
  std::vector<std::string> reversed(args.rbegin(), args.rend());   // CLI11 consumes from the back
  try {
    app->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app->help();   // the selected command's, else the whole CLI's
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "jetsweep: " << parse_error_message(e) << "\n";
    return 2;
  }
  const auto subs = app->get_subcommands();
  CLI::App* sub = subs.empty() ? nullptr : subs.front();
  const auto extras = app->remaining(true);
  if (!sub) {
    if (extras.empty()) {
      err << app->help();
      return 2;
    }
    err << "jetsweep: unknown " << (extras[0].rfind("-", 0) == 0 ? "flag" : "command") << " '" << extras[0] << "'\n"
        << app->help();
    return 2;
  }
  inv.command = sub->get_name();
  auto token = net::resolve_secret("--token", inv.token, inv.token_opt->count() > 0, "--token-file", inv.token_file,
                                   inv.token_file_opt->count() > 0);
  if (!token) {
    err << "jetsweep: " << token.status().message() << "\n";
    return 2;
  }
  inv.token = token.value();
  if (inv.command == "help") {
    app->clear();   // help() would describe the selected subcommand
    out << app->help();
    return 0;
  }
  if (!extras.empty()) {
    err << "jetsweep " << inv.command << ": unknown flag '" << extras[0] << "'\n" << sub->help();
    return 2;
  }
  for (const auto& c : kCommands) {
    if (inv.command != c.name || (inv.args.size() >= c.min_args && inv.args.size() <= c.max_args)) continue;
    const std::string what = c.max_args == 0 ? "no arguments" : c.min_args == 0 ? "[" + std::string(c.positional) + "]"
                                                                                : std::string(c.positional);
    err << "jetsweep " << inv.command << ": expected " << what << "\n" << sub->help();
    return 2;
  }
  return std::nullopt;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_tty,
            const std::vector<DelegatedCommand>& delegated) {
  Invocation inv;
  if (const char* c = std::getenv("JETSWEEP_CONTROLLER")) inv.controller = c;
  if (const char* t = std::getenv("JETSWEEP_API_TOKEN")) inv.token = t;
  if (const char* ca = std::getenv("JETSWEEP_CA")) inv.ca_file = ca;
  if (auto code = parse(args, inv, out, err, delegated)) return *code;
  return Commands(inv, out, err, out_is_tty).run();
}

}  // namespace jetsweep::cli
