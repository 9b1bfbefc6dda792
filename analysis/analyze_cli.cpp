// `jetsweep analyze`: the commands' flags (CLI11), data loading, and per command: flags -> query -> report
// (reports.hpp) -> printer (print_reports.hpp). `jetsweep export` is in export_cli.cpp.
#include "analysis/analyze_cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "analysis/analyze_source.hpp"
#include "analysis/command_guard.hpp"
#include "analysis/csv_corpus.hpp"
#include "analysis/print_reports.hpp"
#include "analysis/simulator_corpus.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "common/text.hpp"

namespace jetsweep::analysis {

namespace {

constexpr const char* kFooter =
    "data: --csv FILE (columns device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw)\n"
    "      or --db DSN [--campaign ID|NAME]\n"
    "common: --seed S (default 1), --json; workloads may be named W@BOARD\n"
    "configurations: rows that differ in any axis (mode, pin_clocks, fan, batch_size, workers, prefetch, threads,\n"
    "      seed, storage, max_minibatches, drop_caches) or in being simulated are never pooled;\n"
    "      --where AXIS=VALUE[,..] selects (also simulated=true|false), --pool-over AXIS[,..] pools explicitly\n"
    "run 'jetsweep analyze COMMAND --help' for a command's flags";

Status bad(const std::string& m) { return invalid_argument(m); }

// ---------------------------------------------------------------------------------------------
// Flags of each command.

std::vector<FlagDecl> with(std::vector<FlagDecl> a, const std::vector<FlagDecl>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<FlagDecl>& predict_flags() {
  static const std::vector<FlagDecl> flags = {
      {"--target", "W", "the workload to predict (also --workload)"},
      {"--reference", "W[,W..]", "reference workloads (linear: search and energy model; powertrain: the source)"},
      {"--train-modes", "K", "modes trained on (0 = the method's default: linear 4, nn/powertrain 50)", "0"},
      {"--features", "raw|inverse", "linear: time-model features", "raw"},
      {"--criterion", "rmse|mape", "linear: representative-set score", "rmse"},
      {"--pool", "N", "linear: candidate modes of the nCk search", "10"},
      {"--nn-epochs", "N", "nn, and the powertrain reference: training epochs", "100"},
      {"--batch-size", "N", "nn, and the powertrain reference: batch size", "32"},
      {"--dropout", "P", "nn/powertrain: dropout, below 1", "0.1"},
      {"--log-target", "", "nn/powertrain-paper: regress the log of the target (powertrain always does)"},
      {"--fine-tune-steps", "N", "powertrain: full-batch Adam steps on the target modes", "300"},
      {"--reference-modes", "N", "powertrain: reference modes (0 = every one)", "0"},
      {"--reference-seed", "S", "powertrain: the reference model's seed", "1"},
      {"--model-dir", "DIR", "reference model cache (default $XDG_CACHE_HOME/jetsweep/models)"},
      {"--no-model-cache", "", "neither reuse nor save reference models"},
      {"--threads", "N", "nn/powertrain: torch threads", "1"},
      {"--predictions-out", "FILE.csv", "write the held-out predictions"},
  };
  return flags;
}

const std::vector<FlagDecl>& adaptive_flags() {
  static const std::vector<FlagDecl> flags = {
      {"--target", "W", "the new workload: its rows are the oracle, revealed as modes are picked (required)"},
      {"--reference", "W", "the reference workload the predictor transfers from (required)"},
      {"--budget", "N", "modes to profile in all", "15"},
      {"--strategy", "front|random", "front: expected improvement of the optimum per budget; random: for comparison",
       "front"},
      {"--power-budgets-w", "W,W..", "budgets to aim at and judge (default: 1 W steps across the target's power)"},
      {"--anchor", "powertrain|measured",
       "what the target is corrected from: the reference's networks, or its measured values (every target mode)",
       "powertrain"},
      {"--round-size", "N", "modes per round after the first", "2"},
      {"--first-round", "N", "space-filling modes first (0 = half the budget)", "0"},
      {"--cross-board", "", "allow a reference measured on another board class"},
      {"--no-baselines", "", "skip PowerTrain with --budget and with 50 random modes"},
      {"--nn-epochs", "N", "the reference network's training epochs", "100"},
      {"--batch-size", "N", "the reference network's batch size", "32"},
      {"--dropout", "P", "dropout, below 1", "0.1"},
      {"--fine-tune-steps", "N", "baselines: full-batch Adam steps on the target modes", "300"},
      {"--reference-modes", "N", "reference modes (0 = every one)", "0"},
      {"--reference-seed", "S", "the reference network's seed", "1"},
      {"--model-dir", "DIR", "reference model cache (default $XDG_CACHE_HOME/jetsweep/models)"},
      {"--no-model-cache", "", "neither reuse nor save reference models"},
      {"--threads", "N", "torch threads", "1"},
  };
  return flags;
}

std::vector<FlagDecl> flags_of(const std::string& command) {
  if (command == "variability")
    return with(source_flags(), {{"--workload", "W", "only this workload"},
                                 {"--plot", "FILE", "violins of epoch time (.png or .svg)"},
                                 {"--plot-energy", "FILE", "violins of epoch energy"}});
  if (command == "pareto")
    return with(source_flags(), {{"--workload", "W", "the workload (required)"},
                                 {"--x", "time|energy", "x axis", "time"},
                                 {"--y", "power|energy", "y axis", "power"},
                                 {"--plot", "FILE", "plot the front (.png or .svg)"}});
  if (command == "predict")
    return with(with(source_flags(), {{"--method", "linear|nn|powertrain|powertrain-paper", "the predictor (required)"},
                                      {"--workload", "W", "the workload to predict (or --target)"}}),
                predict_flags());
  if (command == "optimize")
    return with(with(source_flags(), {{"--workload", "W", "the workload (required; or --target)"},
                                      {"--method", "observed|linear|nn|powertrain|powertrain-paper|adaptive",
                                       "candidate values (adaptive: the fit an adaptive campaign stored; --db --campaign)",
                                       "observed"},
                                      {"--power-budget-w", "W", "fastest mode within this power"},
                                      {"--time-budget", "MS", "lowest-power mode within this time per minibatch"},
                                      {"--sweep", "FROM:TO:STEP", "sweep of power budgets (W) against the optimum"},
                                      {"--plot", "FILE", "plot the candidates' power-time Pareto"}}),
                predict_flags());
  if (command == "adaptive") return with(source_flags(), adaptive_flags());
  if (command == "epochs")
    return with(source_flags(), {{"--run", "ID", "one run"},
                                 {"--workload", "W", "one workload (or --run)"},
                                 {"--instance", "NAME", "one board instance"},
                                 {"--plot", "FILE", "stacked bars of stall / compute / other"}});
  return {{"--device", "BOARD", "agx-orin, agx-xavier or orin-nano (--simulator: any simulated class)", "agx-orin"},
          {"--workloads", "A,B", "synthetic workloads, or MODEL/DATASET with --simulator (default: all)"},
          {"--simulator", "", "the board simulator's model (agent --sim) instead of the synthetic ground truth"},
          {"--modes", "N", "modes per workload (0 = every mode)", "0"},
          {"--noise-pct", "P", "measurement noise", "0"},
          {"--seed", "S", "random seed", "1"},
          {"--linear-truth", "", "times linear in the mode (recoverable by the linear method)"},
          {"--out", "FILE", "write the CSV here (default: stdout)"},
          {"--json", "", "with --out: print the file and row count as JSON"}};
}

struct CommandInfo {
  const char* name;
  const char* help;
};
constexpr CommandInfo kCommands[] = {
    {"variability", "epoch time and energy per board instance, software per board class"},
    {"pareto", "the Pareto front of one workload (time or energy vs power or energy)"},
    {"predict", "predict a workload's time and power per mode (linear, nn, powertrain, powertrain-paper), held-out accuracy"},
    {"optimize", "the fastest mode within a power budget (or lowest power within a time budget), budget sweeps"},
    {"adaptive", "replay adaptive profiling of a new workload (its rows as the oracle) against PowerTrain baselines"},
    {"epochs", "stall / compute / other per epoch, epoch 0 apart"},
    {"synth", "write a synthetic corpus CSV"},
};

// ---------------------------------------------------------------------------------------------
// The commands: flags -> query -> report -> printer.

std::string default_model_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/jetsweep/models";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/jetsweep/models";
  return ".jetsweep-models";
}

Result<LinearFeatures> features_flag(const Flags& a) {
  const std::string f = a.get("--features");
  if (f == "raw") return LinearFeatures::kRaw;
  if (f == "inverse") return LinearFeatures::kInverse;
  return bad("--features: expected raw or inverse, got '" + f + "'");
}

Result<SearchCriterion> criterion_flag(const Flags& a) {
  const std::string c = a.get("--criterion");
  if (c == "rmse") return SearchCriterion::kRmse;
  if (c == "mape") return SearchCriterion::kMape;
  return bad("--criterion: expected rmse or mape, got '" + c + "'");
}

Status nn_flags(const Flags& a, NnOptions& nn) {
  JS_ASSIGN_OR_RETURN(int64_t epochs, a.integer("--nn-epochs", 1));
  nn.epochs = static_cast<int>(epochs);
  JS_ASSIGN_OR_RETURN(int64_t bs, a.integer("--batch-size", 1));
  nn.batch_size = static_cast<int>(bs);
  JS_ASSIGN_OR_RETURN(nn.dropout, a.number("--dropout", 0.0));
  if (nn.dropout >= 1.0) return bad("--dropout: must be below 1");
  JS_ASSIGN_OR_RETURN(int64_t threads, a.integer("--threads", 1));
  nn.threads = static_cast<int>(threads);
  nn.log_target = a.on("--log-target");
  JS_ASSIGN_OR_RETURN(int64_t steps, a.integer("--fine-tune-steps", 1));
  nn.full_batch_steps = static_cast<int>(steps);
  return Status::ok();
}

Result<PredictRequest> predict_request(const Flags& a, const Corpus& corpus, const std::string& method_text) {
  PredictRequest r;
  JS_ASSIGN_OR_RETURN(r.method, parse_method(method_text));
  const std::string target = a.get("--target", a.get("--workload"));
  if (target.empty()) return bad("--target: required (the workload to predict)");
  r.target = workload_flag(a, corpus, target);
  for (const auto& ref : split_list(a.get("--reference"))) r.references.push_back(workload_flag(a, corpus, ref));
  JS_ASSIGN_OR_RETURN(int64_t k, a.integer("--train-modes", 1));
  r.train_modes = static_cast<int>(k);
  JS_ASSIGN_OR_RETURN(int64_t seed, a.integer("--seed", 0));
  r.seed = static_cast<uint64_t>(seed);
  JS_ASSIGN_OR_RETURN(r.features, features_flag(a));
  JS_ASSIGN_OR_RETURN(r.criterion, criterion_flag(a));
  JS_ASSIGN_OR_RETURN(int64_t pool, a.integer("--pool", 0));
  r.pool = static_cast<size_t>(pool);
  JS_RETURN_IF_ERROR(nn_flags(a, r.nn));
  JS_ASSIGN_OR_RETURN(int64_t rseed, a.integer("--reference-seed", 0));
  r.reference_seed = static_cast<uint64_t>(rseed);
  JS_ASSIGN_OR_RETURN(int64_t rm, a.integer("--reference-modes", 0));
  r.reference_modes = static_cast<size_t>(rm);
  r.model_dir = a.on("--no-model-cache") ? "" : a.get("--model-dir", default_model_dir());
  // Flags the chosen method would ignore are refused rather than dropped.
  if (a.has("--fine-tune-steps") && r.method != Method::kPowerTrain)
    return bad("--fine-tune-steps: only --method powertrain fine-tunes in full-batch steps (" +
               std::string(to_string(r.method)) + " trains for --nn-epochs with a validation split)");
  if (a.on("--log-target") && r.method == Method::kPowerTrain)
    return bad("--log-target: --method powertrain always regresses log time and log power (the switch is for nn "
               "and powertrain-paper)");
  if (is_transfer(r.method) && r.references.empty())
    return bad("--reference: powertrain needs the reference workload to transfer from");
  return r;
}

// Prints the report (text, or JSON with --json) and plots it when --plot names a file.
template <class Report>
Status print_and_plot(const Flags& a, std::ostream& out, const Report& report) {
  print_report(out, report, a.on("--json"));
  if (a.has("--plot")) return plot_report(a.get("--plot"), report);
  return Status::ok();
}

Status cmd_variability(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  std::string workload = a.get("--workload");
  if (!workload.empty()) workload = workload_flag(a, corpus, workload).workload;
  JS_ASSIGN_OR_RETURN(auto report, variability_report(corpus, workload));
  print_report(out, report, a.on("--json"));
  if (a.has("--plot")) JS_RETURN_IF_ERROR(plot_variability(a.get("--plot"), report, false));
  if (a.has("--plot-energy")) JS_RETURN_IF_ERROR(plot_variability(a.get("--plot-energy"), report, true));
  return Status::ok();
}

Status cmd_pareto(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!a.has("--workload")) return bad("--workload: required for pareto");
  ParetoQuery q{{}, a.get("--x"), a.get("--y")};
  if (q.x != "time" && q.x != "energy") return bad("--x: expected time or energy, got '" + q.x + "'");
  if (q.y != "power" && q.y != "energy") return bad("--y: expected power or energy, got '" + q.y + "'");
  if (q.x == q.y) return bad("--y: must differ from --x");
  q.workload = workload_flag(a, corpus, a.get("--workload"));
  JS_ASSIGN_OR_RETURN(auto report, pareto_report(corpus, q));
  return print_and_plot(a, out, report);
}

Status cmd_predict(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!a.has("--method")) return bad("--method: required (linear, nn, powertrain or powertrain-paper)");
  JS_ASSIGN_OR_RETURN(PredictRequest req, predict_request(a, corpus, a.get("--method")));
  JS_ASSIGN_OR_RETURN(auto report, predict_report(corpus, req));
  print_report(out, report, a.on("--json"));
  if (a.has("--predictions-out")) JS_RETURN_IF_ERROR(write_predictions_csv(a.get("--predictions-out"), report.outcome));
  return Status::ok();
}

Result<std::vector<double>> parse_sweep(const std::string& text) {
  std::string items = text;
  if (items.find(':') != std::string::npos) std::replace(items.begin(), items.end(), ':', ',');
  const auto parts = split_list(items);
  const Status malformed = bad("--sweep: expected FROM:TO:STEP in watts, got '" + text + "'");
  if (parts.size() != 3) return malformed;
  double v[3];
  for (size_t i = 0; i < 3; ++i) {
    const auto x = parse_double(parts[i]);
    if (!x || !std::isfinite(*x)) return malformed;
    v[i] = *x;
  }
  if (v[2] <= 0 || v[1] < v[0]) return bad("--sweep: need FROM <= TO and STEP > 0, got '" + text + "'");
  auto r = budget_range(v[0], v[1], v[2]);
  if (r.size() > 100000) return bad("--sweep: more than 100000 budgets");
  return r;
}

Result<OptimizeQuery> optimize_query(const Flags& a, const Corpus& corpus) {
  OptimizeQuery q;
  const std::string wl = a.get("--workload", a.get("--target"));
  if (wl.empty()) return bad("--workload: required for optimize");
  const bool power = a.has("--power-budget-w"), time = a.has("--time-budget");
  if (power && time) return bad("--time-budget: give one of --power-budget-w and --time-budget");
  if (!power && !time && !a.has("--sweep"))
    return bad("--power-budget-w: give a budget (--power-budget-w W, --time-budget MS or --sweep FROM:TO:STEP)");
  if (power) {
    JS_ASSIGN_OR_RETURN(q.power_budget_w, a.number("--power-budget-w", 0));
  }
  if (time) {
    JS_ASSIGN_OR_RETURN(q.time_budget_ms, a.number("--time-budget", 0));
  }
  q.method = a.get("--method");
  q.workload = workload_flag(a, corpus, wl);
  JS_ASSIGN_OR_RETURN(int64_t seed, a.integer("--seed", 0));
  q.seed = static_cast<uint64_t>(seed);
  if (q.method == "adaptive") {
    if (!a.has("--db") || a.get("--campaign").empty())
      return bad("--method: 'adaptive' uses the predictor an adaptive campaign fitted: give --db DSN --campaign C");
    JS_ASSIGN_OR_RETURN(q.adaptive, load_adaptive_fit(a.get("--db"), a.get("--campaign"), q.workload));
  } else if (q.method != "observed") {
    JS_ASSIGN_OR_RETURN(q.predict, predict_request(a, corpus, q.method));
  }
  if (a.has("--sweep")) {
    JS_ASSIGN_OR_RETURN(q.sweep_budgets_w, parse_sweep(a.get("--sweep")));
  }
  return q;
}

Status cmd_optimize(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  JS_ASSIGN_OR_RETURN(OptimizeQuery q, optimize_query(a, corpus));
  JS_ASSIGN_OR_RETURN(auto report, optimize_report(corpus, q));
  return print_and_plot(a, out, report);
}

Result<AdaptiveQuery> adaptive_query(const Flags& a, const Corpus& corpus) {
  AdaptiveQuery q;
  if (a.get("--target").empty()) return bad("--target: required (the workload whose profiling is replayed)");
  if (a.get("--reference").empty()) return bad("--reference: required (the workload to transfer from)");
  if (split_list(a.get("--reference")).size() != 1) return bad("--reference: give one reference workload");
  q.target = workload_flag(a, corpus, a.get("--target"));
  q.reference = workload_flag(a, corpus, a.get("--reference"));
  JS_ASSIGN_OR_RETURN(int64_t budget, a.integer("--budget", 1));
  if (size_t(budget) < kAdaptiveMinBudget)
    return bad("--budget: " + std::to_string(budget) + " is below the strategy's minimum of " +
               std::to_string(kAdaptiveMinBudget) + " modes");
  q.options.budget = size_t(budget);
  JS_ASSIGN_OR_RETURN(q.options.strategy, parse_adaptive_strategy(a.get("--strategy")));
  JS_ASSIGN_OR_RETURN(q.anchor, parse_adaptive_anchor(a.get("--anchor"), "--anchor"));
  for (const auto& item : split_list(a.get("--power-budgets-w"))) {
    const auto w = parse_double(item);
    if (!w || !std::isfinite(*w) || *w <= 0)
      return bad("--power-budgets-w: '" + item + "' is not a positive number of watts");
    q.options.power_budgets_w.push_back(*w);
  }
  if (a.has("--power-budgets-w") && q.options.power_budgets_w.empty())
    return bad("--power-budgets-w: no budget given");
  JS_ASSIGN_OR_RETURN(int64_t round, a.integer("--round-size", 1));
  q.round_size = size_t(round);
  JS_ASSIGN_OR_RETURN(int64_t first, a.integer("--first-round", 0));
  if (first > 0 && (size_t(first) < kAdaptiveMinBudget || first > budget))
    return bad("--first-round: must be between " + std::to_string(kAdaptiveMinBudget) + " and --budget (" +
               std::to_string(budget) + ")");
  q.options.first_round = size_t(first);
  JS_ASSIGN_OR_RETURN(int64_t seed, a.integer("--seed", 0));
  q.options.seed = uint64_t(seed);
  q.cross_board = a.on("--cross-board");
  q.baselines = !a.on("--no-baselines");
  JS_RETURN_IF_ERROR(nn_flags(a, q.predict.nn));
  JS_ASSIGN_OR_RETURN(int64_t rseed, a.integer("--reference-seed", 0));
  q.predict.reference_seed = uint64_t(rseed);
  JS_ASSIGN_OR_RETURN(int64_t rm, a.integer("--reference-modes", 0));
  q.predict.reference_modes = size_t(rm);
  q.predict.model_dir = a.on("--no-model-cache") ? "" : a.get("--model-dir", default_model_dir());
  return q;
}

Status cmd_adaptive(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  JS_ASSIGN_OR_RETURN(AdaptiveQuery q, adaptive_query(a, corpus));
  JS_ASSIGN_OR_RETURN(auto report, adaptive_report(corpus, q));
  print_report(out, report, a.on("--json"));
  return Status::ok();
}

Status cmd_epochs(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!corpus.epoch_times) return bad("--csv: the corpus has no per-epoch columns (epoch_s); export it with --per-epoch");
  EpochsQuery q;
  JS_ASSIGN_OR_RETURN(q.run, a.integer("--run", 0));
  q.workload = a.get("--workload");
  q.device = a.get("--device");
  if (!q.workload.empty()) {
    const WorkloadRef ref = workload_flag(a, corpus, q.workload);
    q.workload = ref.workload;
    q.device = ref.device;
  }
  if (!q.run && q.workload.empty()) return bad("--run: give --run ID or --workload W");
  q.instance = a.get("--instance");
  JS_ASSIGN_OR_RETURN(auto report, epochs_report(corpus, q));
  return print_and_plot(a, out, report);
}

Result<Corpus> synthetic_corpus(const Flags& a) {
  if (a.on("--simulator")) {
    if (a.on("--linear-truth")) return bad("--linear-truth: not with --simulator (the simulator's model is its own)");
    SimulatorCorpusOptions o;
    o.board_class = a.get("--device");
    o.workloads = split_list(a.get("--workloads"));
    JS_ASSIGN_OR_RETURN(int64_t modes, a.integer("--modes", 0));
    JS_ASSIGN_OR_RETURN(int64_t seed, a.integer("--seed", 0));
    JS_ASSIGN_OR_RETURN(o.noise_pct, a.number("--noise-pct", 0));
    o.max_modes = static_cast<size_t>(modes);
    o.seed = static_cast<uint64_t>(seed);
    return simulator_corpus(o);
  }
  JS_ASSIGN_OR_RETURN(BoardGrid board, synthetic_board(a.get("--device")));
  std::vector<SyntheticWorkload> ws;
  for (const auto& n : split_list(a.get("--workloads"))) {
    JS_ASSIGN_OR_RETURN(auto w, synthetic_workload(n));
    ws.push_back(w);
  }
  if (!a.has("--workloads")) ws = synthetic_workloads();
  SyntheticOptions o;
  JS_ASSIGN_OR_RETURN(int64_t modes, a.integer("--modes", 0));
  JS_ASSIGN_OR_RETURN(int64_t seed, a.integer("--seed", 0));
  JS_ASSIGN_OR_RETURN(o.noise_pct, a.number("--noise-pct", 0));
  o.max_modes = static_cast<size_t>(modes);
  o.seed = static_cast<uint64_t>(seed);
  o.linear_truth = a.on("--linear-truth");
  return generate_corpus(board, ws, o);
}

Status cmd_synth(const Flags& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus c, synthetic_corpus(a));
  if (!a.has("--out")) {
    write_corpus_csv(out, c);
    return Status::ok();
  }
  const std::string file = a.get("--out");
  std::ofstream f(file);
  if (!f) return io_error(file + ": cannot write --out");
  write_corpus_csv(f, c);
  if (!f) return io_error(file + ": write failed");
  print_written(out, file, c.rows.size(), std::nullopt, a.on("--json"));
  return Status::ok();
}

Status run_command(const std::string& command, const Flags& a, std::ostream& out) {
  if (command == "variability") return cmd_variability(a, out);
  if (command == "pareto") return cmd_pareto(a, out);
  if (command == "predict") return cmd_predict(a, out);
  if (command == "optimize") return cmd_optimize(a, out);
  if (command == "epochs") return cmd_epochs(a, out);
  if (command == "adaptive") return cmd_adaptive(a, out);
  return cmd_synth(a, out);
}

int analyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app("Analyses of campaign results: variability, Pareto fronts, prediction, budget optimisation.",
               "jetsweep analyze");
  app.footer(kFooter);
  app.require_subcommand(1);
  app.allow_extras();
  std::map<std::string, std::pair<CLI::App*, std::vector<FlagDecl>>> commands;
  for (const auto& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    sub->allow_extras();
    auto decls = flags_of(c.name);
    declare_flags(*sub, decls);
    commands[c.name] = {sub, std::move(decls)};
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? err : out) << app.help();
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  auto it = commands.find(cmd);
  if (it == commands.end()) {
    err << "jetsweep analyze: unknown command '" << cmd << "'\n" << app.help();
    return 2;
  }
  auto& [sub, decls] = it->second;
  auto parsed = parse_flags(app, *sub, args, "analyze " + cmd, decls);
  if (!parsed.is_ok()) {
    err << "jetsweep analyze " << cmd << ": " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->help) {
    out << sub->help();
    return 0;
  }
  const Status s = run_command(cmd, parsed->flags, out);
  if (!s.is_ok()) {
    err << "jetsweep analyze " << cmd << ": " << s.message() << "\n";
    return exit_code(s);
  }
  return 0;
}

}  // namespace

int analyze_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_guarded("jetsweep analyze", err, [&] { return analyze(args, out, err); });
}

}  // namespace jetsweep::analysis
