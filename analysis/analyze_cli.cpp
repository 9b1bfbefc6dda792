#include "analysis/analyze_cli.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/csv_corpus.hpp"
#include "analysis/db_source.hpp"
#include "analysis/json_output.hpp"
#include "analysis/optimizer.hpp"
#include "analysis/pareto.hpp"
#include "analysis/plots.hpp"
#include "analysis/prediction.hpp"
#include "analysis/stats.hpp"
#include "analysis/synthetic_corpus.hpp"
#include "analysis/variability.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

constexpr const char* kUsage =
    "usage: jetsweep analyze COMMAND [flags]\n"
    "commands:\n"
    "  variability [--workload W] [--plot FILE] [--plot-energy FILE]\n"
    "  pareto      --workload W [--x time|energy] [--y power|energy] [--plot FILE]\n"
    "  predict     --method linear|nn|powertrain --target W [--reference W[,W..]] [--train-modes K]\n"
    "              linear: [--features raw|inverse] [--criterion rmse|mape] [--pool N]\n"
    "              nn/powertrain: [--nn-epochs N] [--batch-size N] [--dropout P] [--log-target]\n"
    "                             [--reference-modes N] [--reference-seed S] [--model-dir DIR | --no-model-cache]\n"
    "                             [--threads N]\n"
    "              [--predictions-out FILE.csv]\n"
    "  optimize    --workload W (--power-budget-w B | --time-budget MS | --sweep FROM:TO:STEP)\n"
    "              [--method observed|linear|nn|powertrain (+ predict flags)] [--plot FILE]\n"
    "  epochs      (--run ID | --workload W [--instance I]) [--plot FILE]\n"
    "  synth       [--device agx-orin|agx-xavier|orin-nano] [--workloads A,B] [--modes N] [--noise-pct P]\n"
    "              [--linear-truth] [--out FILE]\n"
    "data: --csv FILE (columns device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw)\n"
    "      or --db DSN [--campaign ID|NAME]\n"
    "common: --seed S (default 1), --json; workloads may be named W@BOARD\n"
    "configurations: rows that differ in any axis (mode, pin_clocks, fan, batch_size, workers, prefetch, threads,\n"
    "      seed, storage, max_minibatches, drop_caches) or in being simulated are never pooled;\n"
    "      --where AXIS=VALUE[,..] selects (also simulated=true|false), --pool-over AXIS[,..] pools explicitly\n";

constexpr const char* kExportUsage =
    "usage: jetsweep export (--db DSN [--campaign ID|NAME] | --csv FILE) [--per-epoch] [--out FILE] [--json]\n";

// Parsed flags of one command.
struct Args {
  std::string command;
  std::map<std::string, std::string> values;
  std::set<std::string> switches;

  bool has(const std::string& f) const { return values.count(f) || switches.count(f); }
  std::string get(const std::string& f, const std::string& def = "") const {
    auto it = values.find(f);
    return it == values.end() ? def : it->second;
  }
};

Status bad(const std::string& m) { return invalid_argument(m); }

Result<Args> parse_flags(const std::vector<std::string>& args, size_t first, const std::string& command,
                         const std::set<std::string>& value_flags, const std::set<std::string>& switch_flags) {
  Args a;
  a.command = command;
  for (size_t i = first; i < args.size(); ++i) {
    std::string f = args[i];
    std::string v;
    bool inline_value = false;
    if (f.rfind("--", 0) != 0) return bad("unexpected argument '" + f + "' for '" + command + "' (flags start with --)");
    if (auto eq = f.find('='); eq != std::string::npos) {
      v = f.substr(eq + 1);
      f = f.substr(0, eq);
      inline_value = true;
    }
    if (switch_flags.count(f)) {
      if (inline_value) return bad(f + ": takes no value");
      a.switches.insert(f);
    } else if (value_flags.count(f)) {
      if (!inline_value) {
        if (i + 1 >= args.size()) return bad(f + ": missing value");
        v = args[++i];
      }
      if (a.values.count(f)) return bad(f + ": given twice");
      a.values[f] = v;
    } else {
      return bad("unknown flag '" + f + "' for '" + command + "'");
    }
  }
  return a;
}

Result<double> get_double(const Args& a, const std::string& f, double def, double min_value) {
  if (!a.values.count(f)) return def;
  const std::string& t = a.values.at(f);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return bad(f + ": expected a number, got '" + t + "'");
  if (v < min_value) return bad(f + ": must be at least " + fixed(min_value, 3) + ", got '" + t + "'");
  return v;
}

Result<int64_t> get_int(const Args& a, const std::string& f, int64_t def, int64_t min_value) {
  if (!a.values.count(f)) return def;
  const std::string& t = a.values.at(f);
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size()) return bad(f + ": expected an integer, got '" + t + "'");
  if (v < min_value) return bad(f + ": must be at least " + std::to_string(min_value) + ", got '" + t + "'");
  return static_cast<int64_t>(v);
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

const std::set<std::string> kSourceFlags = {"--csv", "--db", "--campaign", "--seed", "--device", "--where", "--pool-over"};

// Loads the corpus, then applies --where (select configurations) and --pool-over (pool axes explicitly).
Result<Corpus> load_source(const Args& a) {
  const bool csv = a.values.count("--csv"), db = a.values.count("--db");
  if (csv && db) return bad("--csv and --db: give one data source, not both");
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::string> pool;
  if (a.values.count("--where")) {
    JS_ASSIGN_OR_RETURN(where, parse_where(a.get("--where")));
  }
  if (a.values.count("--pool-over")) {
    JS_ASSIGN_OR_RETURN(pool, parse_pool_over(a.get("--pool-over")));
  }
  Corpus corpus;
  if (csv) {
    if (a.values.count("--campaign")) return bad("--campaign: only with --db");
    JS_ASSIGN_OR_RETURN(corpus, read_corpus_csv(a.get("--csv")));
  } else if (db) {
    JS_ASSIGN_OR_RETURN(corpus, load_corpus_from_db(a.get("--db"), DbFilter{a.get("--campaign")}));
  } else {
    return bad("no data source: give --csv FILE or --db DSN");
  }
  JS_RETURN_IF_ERROR(select_configurations(corpus, where, pool));
  return corpus;
}

// Text labels of configurations: the mode, every axis that varies within the data or was selected, plus pinned
// clocks, a fan setting other than auto and dropped caches whenever they hold.
struct ConfigLabels {
  std::set<std::string> show;
  explicit ConfigLabels(const Corpus& c) : show(varying_axes(c)) {
    show.insert("mode");
    for (const auto& [axis, v] : c.selected) show.insert(axis);  // what --where chose stays visible
  }
  std::string operator()(const AxisMap& axes) const { return config_label(axes, &show); }
};

std::string sim_mark(bool simulated) { return simulated ? " (simulated)" : ""; }

// A plot title's marking: "(simulated)" when every drawn value is simulated, else a note when some are.
std::string plot_sim_mark(bool any, bool all) {
  if (all) return " (simulated)";
  return any ? " (simulated rows marked [sim])" : "";
}

std::string join_list(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : sep) + e;
  return s;
}

// What --where selected and --pool-over pooled, for text outputs.
void print_selection(std::ostream& out, const Corpus& c) {
  if (!c.selected.empty()) {
    out << "selected (--where):";
    for (const auto& [axis, v] : c.selected) out << " " << axis << "=" << v;
    out << "\n";
  }
  if (!c.pooled_over.empty())
    out << "POOLED over " << join_list(c.pooled_over) << " (--pool-over: rows that differ only in "
        << (c.pooled_over.size() == 1 ? "this axis" : "these axes") << " are combined)\n";
}

void selection_json(bj::object& o, const Corpus& c) {
  bj::object w;
  for (const auto& [axis, v] : c.selected) w[axis] = v;
  o["where"] = std::move(w);
  bj::array p;
  for (const auto& axis : c.pooled_over) p.push_back(bj::value(axis));
  o["pooled_over"] = std::move(p);
}

// A workload's heading: "resnet on agx-orin bs16 w4 (simulated)".
std::string workload_heading(const WorkloadData& w, const ConfigLabels& labels) {
  const std::string l = labels(w.config);
  return w.workload + " on " + w.device + (l.empty() ? "" : " " + l) + sim_mark(w.simulated);
}

void workload_json(bj::object& o, const WorkloadData& w, const ConfigLabels& labels) {
  o["config"] = config_json(w.config);
  o["config_label"] = labels(w.config);
  o["simulated"] = w.simulated;
}

// A workload reference from a flag, with --device applied when the name carries no board.
// A database workload "model/dataset" may be named by its model alone when that is unambiguous.
WorkloadRef workload_flag(const Args& a, const Corpus& c, const std::string& text) {
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

void print_json(std::ostream& out, const bj::value& v) { out << bj::serialize(v) << '\n'; }

// ---------------------------------------------------------------------------------------------
// variability

Status cmd_variability(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  std::string workload = a.get("--workload");
  if (!workload.empty()) workload = workload_flag(a, corpus, workload).workload;
  VariabilityReport rep = compute_variability(corpus, workload);
  if (rep.groups.empty())
    return bad(workload.empty() ? "no epochs 1+ to analyse" : "--workload: no epochs 1+ for '" + workload + "'");
  auto dist_json = [](const Distribution& d) {
    bj::object o;
    o["n"] = d.n;
    o["median"] = jnum(d.median);
    o["max_deviation_pct"] = jnum(d.max_deviation_pct, 4);
    o["cv_pct"] = jnum(d.cv_pct, 4);
    o["min"] = jnum(d.min);
    o["max"] = jnum(d.max);
    return o;
  };
  const ConfigLabels labels(corpus);
  if (a.switches.count("--json")) {
    bj::object o;
    selection_json(o, corpus);
    o["time_unit"] = rep.time_unit;
    o["energy_unit"] = rep.energy_unit;
    o["warmup_epochs_excluded"] = rep.warmup_epochs_excluded;
    bj::array groups;
    for (const auto& g : rep.groups) {
      bj::object go;
      go["device"] = g.device;
      go["workload"] = g.workload;
      go["mode"] = g.mode;
      go["config"] = config_json(g.config);
      go["config_label"] = labels(g.config);
      go["simulated"] = g.simulated;
      go["time"] = dist_json(g.time);
      go["energy"] = g.energy ? bj::value(dist_json(*g.energy)) : bj::value(nullptr);
      go["instance_median_spread_pct"] = jnum(g.instance_median_spread_pct, 4);
      go["instance_energy_spread_pct"] = jnum(g.instance_energy_spread_pct, 4);
      bj::array insts;
      for (const auto& i : g.instances) {
        bj::object io;
        io["instance"] = i.instance;
        io["simulated"] = i.simulated;
        io["time"] = dist_json(i.time);
        io["energy"] = i.energy ? bj::value(dist_json(*i.energy)) : bj::value(nullptr);
        bj::object s;
        for (const auto& [k, v] : i.software) s[k] = v;
        io["software"] = std::move(s);
        insts.push_back(std::move(io));
      }
      go["instances"] = std::move(insts);
      groups.push_back(std::move(go));
    }
    o["groups"] = std::move(groups);
    bj::array classes;
    for (const auto& c : rep.classes) {
      bj::object co;
      co["device"] = c.device;
      co["software_differs"] = c.differs;
      co["compared_instances"] = c.compared_instances;
      bj::array sims;
      for (const auto& n : c.simulated_instances) sims.push_back(bj::value(n));
      co["simulated_instances"] = std::move(sims);
      bj::array keys;
      for (const auto& k : c.differing_keys) keys.push_back(bj::value(k));
      co["differing_keys"] = std::move(keys);
      bj::object insts;
      for (const auto& [name, s] : c.instances) {
        bj::object so;
        for (const auto& [k, v] : s) so[k] = v;
        insts[name] = std::move(so);
      }
      co["instances"] = std::move(insts);
      classes.push_back(std::move(co));
    }
    o["classes"] = std::move(classes);
    print_json(out, o);
  } else {
    out << "Variability over epochs 1+ (" << rep.warmup_epochs_excluded << " warm-up epochs excluded); time in "
        << rep.time_unit << ", energy in " << rep.energy_unit << "; one group per board class, workload and "
        << "configuration\n";
    print_selection(out, corpus);
    for (const auto& g : rep.groups) {
      out << "\n" << g.device << "  " << g.workload << "  " << labels(g.config) << sim_mark(g.simulated) << "\n";
      out << "  " << pad("instance", 16) << pad_left("n", 5) << pad_left("time median", 14) << pad_left("max dev %", 11)
          << pad_left("CV %", 8) << pad_left("energy median", 15) << pad_left("max dev %", 11) << pad_left("CV %", 8)
          << "  software\n";
      for (const auto& i : g.instances) {
        std::string s;
        for (const auto& [k, v] : i.software) s += (s.empty() ? "" : " ") + k + "=" + v;
        out << "  " << pad(i.instance, 16) << pad_left(std::to_string(i.time.n), 5) << pad_left(fixed(i.time.median, 4), 14)
            << pad_left(fixed(i.time.max_deviation_pct, 2), 11) << pad_left(fixed(i.time.cv_pct, 2), 8)
            << pad_left(i.energy ? fixed(i.energy->median, 3) : "-", 15)
            << pad_left(i.energy ? fixed(i.energy->max_deviation_pct, 2) : "-", 11)
            << pad_left(i.energy ? fixed(i.energy->cv_pct, 2) : "-", 8) << "  " << (s.empty() ? "-" : s) << "\n";
      }
      out << "  " << pad("all instances", 16) << pad_left(std::to_string(g.time.n), 5) << pad_left(fixed(g.time.median, 4), 14)
          << pad_left(fixed(g.time.max_deviation_pct, 2), 11) << pad_left(fixed(g.time.cv_pct, 2), 8)
          << pad_left(g.energy ? fixed(g.energy->median, 3) : "-", 15)
          << pad_left(g.energy ? fixed(g.energy->max_deviation_pct, 2) : "-", 11)
          << pad_left(g.energy ? fixed(g.energy->cv_pct, 2) : "-", 8) << "\n";
      out << "  instance medians within " << fixed(g.instance_median_spread_pct, 2) << "% of their median (time)";
      if (g.instance_energy_spread_pct) out << ", " << fixed(*g.instance_energy_spread_pct, 2) << "% (energy)";
      out << "\n";
    }
    out << "\nSoftware per board class (kernel, torch_version, compiler, git_sha, l4t, jetpack; real instances only):\n";
    for (const auto& c : rep.classes) {
      out << "  " << c.device << ": " << c.instances.size() << " instance(s)";
      if (!c.simulated_instances.empty())
        out << " (" << c.simulated_instances.size() << " simulated, not compared: a simulated agent reports its host's software)";
      out << ", ";
      if (c.differs) {
        out << "SOFTWARE DIFFERS in";
        for (const auto& k : c.differing_keys) out << " " << k;
        out << " (SIGMETRICS'23 5.4.4: expect up to 40% variability)\n";
      } else if (c.compared_instances < 2) {
        out << "software not compared (fewer than two real instances)\n";
      } else {
        out << "same software\n";
      }
    }
  }
  // Violins: one per (instance, configuration) of the first groups.
  auto violins = [&](const std::string& file, bool energy) -> Status {
    std::vector<std::pair<std::string, std::vector<double>>> groups;
    bool any_sim = false, all_sim = true;
    for (const auto& g : rep.groups)
      for (const auto& i : g.instances)
        if (!(energy ? i.energy_values : i.time_values).empty()) {
          any_sim = any_sim || g.simulated;
          all_sim = all_sim && g.simulated;
        }
    for (const auto& g : rep.groups)
      for (const auto& i : g.instances) {
        const auto& v = energy ? i.energy_values : i.time_values;
        if (v.empty()) continue;
        std::string label = g.device + " " + i.instance;
        if (rep.groups.size() > 1) label += " " + g.workload + " " + labels(g.config);
        if (g.simulated && !all_sim) label += " [sim]";
        groups.emplace_back(label, v);
      }
    if (groups.empty()) return bad(std::string(energy ? "--plot-energy" : "--plot") + ": no values to draw");
    std::string title = std::string(energy ? "Energy" : "Epoch time") + " per board instance (epochs 1+)";
    if (rep.groups.size() == 1) title += ": " + rep.groups[0].workload + " " + labels(rep.groups[0].config);
    if (!corpus.pooled_over.empty()) title += ", pooled over " + join_list(corpus.pooled_over);
    return plot_violins(file, title + plot_sim_mark(any_sim, all_sim),
                        energy ? "energy (" + rep.energy_unit + ")" : "time (" + rep.time_unit + ")", groups);
  };
  if (a.values.count("--plot")) JS_RETURN_IF_ERROR(violins(a.get("--plot"), false));
  if (a.values.count("--plot-energy")) JS_RETURN_IF_ERROR(violins(a.get("--plot-energy"), true));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// pareto

Status cmd_pareto(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!a.values.count("--workload")) return bad("--workload: required for pareto");
  const std::string xs = a.get("--x", "time"), ys = a.get("--y", "power");
  if (xs != "time" && xs != "energy") return bad("--x: expected time or energy, got '" + xs + "'");
  if (ys != "power" && ys != "energy") return bad("--y: expected power or energy, got '" + ys + "'");
  if (xs == ys) return bad("--y: must differ from --x");
  JS_ASSIGN_OR_RETURN(auto w, select_workload(corpus, workload_flag(a, corpus, a.get("--workload")), "--workload"));
  std::vector<double> x, y;
  std::vector<const ModeRecord*> recs;
  int skipped = 0;
  for (const auto& r : w.modes) {
    if (!r.power_mw) {
      ++skipped;
      continue;
    }
    auto value = [&](const std::string& k) {
      if (k == "time") return r.minibatch_ms;
      if (k == "power") return *r.power_mw / 1000.0;
      return *r.energy_mj();
    };
    x.push_back(value(xs));
    y.push_back(value(ys));
    recs.push_back(&r);
  }
  if (recs.empty()) return bad("--workload: '" + w.workload + "' has no modes with power data");
  const auto front = pareto_front(x, y);
  const ConfigLabels labels(corpus);
  auto unit = [](const std::string& k) {
    return k == "time" ? std::string("time_ms") : k == "power" ? std::string("power_w") : std::string("energy_mj");
  };
  if (a.switches.count("--json")) {
    bj::object o;
    o["device"] = w.device;
    o["workload"] = w.workload;
    workload_json(o, w, labels);
    selection_json(o, corpus);
    o["x"] = unit(xs);
    o["y"] = unit(ys);
    o["modes"] = recs.size();
    o["modes_without_power"] = skipped;
    bj::array f;
    for (size_t i : front) {
      bj::object p = mode_json(recs[i]->mode);
      p["time_ms"] = jnum(recs[i]->minibatch_ms);
      p["power_w"] = jnum(*recs[i]->power_mw / 1000.0);
      p["energy_mj"] = jnum(*recs[i]->energy_mj());
      f.push_back(std::move(p));
    }
    o["front"] = std::move(f);
    print_json(out, o);
  } else {
    out << "Pareto front of " << workload_heading(w, labels) << " (" << unit(xs) << " vs " << unit(ys)
        << ", both minimised): " << front.size() << " of " << recs.size() << " modes\n";
    print_selection(out, corpus);
    out << pad("cores", 7) << pad_left("cpu_mhz", 9) << pad_left("gpu_mhz", 9) << pad_left("emc_mhz", 9)
        << pad_left("time_ms", 11) << pad_left("power_w", 9) << pad_left("energy_mj", 11) << "\n";
    for (size_t i : front) {
      const auto& r = *recs[i];
      out << pad(std::to_string(r.mode.cores), 7) << pad_left(fixed(r.mode.cpu_mhz, 1), 9)
          << pad_left(fixed(r.mode.gpu_mhz, 1), 9) << pad_left(fixed(r.mode.emc_mhz, 1), 9)
          << pad_left(fixed(r.minibatch_ms, 2), 11) << pad_left(fixed(*r.power_mw / 1000.0, 2), 9)
          << pad_left(fixed(*r.energy_mj(), 1), 11) << "\n";
    }
    if (skipped) out << skipped << " mode(s) without power data left out\n";
  }
  if (a.values.count("--plot")) {
    std::vector<ScatterPoint> all, fr;
    for (size_t i = 0; i < x.size(); ++i) all.push_back({x[i], y[i]});
    for (size_t i : front) fr.push_back({x[i], y[i]});
    JS_RETURN_IF_ERROR(plot_pareto(a.get("--plot"), "Pareto front: " + workload_heading(w, labels), unit(xs),
                                   unit(ys), all, fr));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// predict

const std::set<std::string> kPredictFlags = {"--method",   "--target",          "--workload",  "--reference",
                                             "--train-modes", "--features",     "--criterion", "--pool",
                                             "--nn-epochs", "--batch-size",     "--dropout",   "--reference-modes",
                                             "--model-dir", "--threads",        "--predictions-out", "--reference-seed"};

std::string default_model_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/jetsweep/models";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/jetsweep/models";
  return ".jetsweep-models";
}

Result<PredictRequest> predict_request(const Args& a, const Corpus& corpus, const std::string& method_text) {
  PredictRequest r;
  JS_ASSIGN_OR_RETURN(r.method, parse_method(method_text));
  std::string target = a.get("--target", a.get("--workload"));
  if (target.empty()) return bad("--target: required (the workload to predict)");
  r.target = workload_flag(a, corpus, target);
  for (const auto& ref : split_list(a.get("--reference"))) r.references.push_back(workload_flag(a, corpus, ref));
  JS_ASSIGN_OR_RETURN(int64_t k, get_int(a, "--train-modes", 0, 1));
  r.train_modes = static_cast<int>(k);
  JS_ASSIGN_OR_RETURN(int64_t seed, get_int(a, "--seed", 1, 0));
  r.seed = static_cast<uint64_t>(seed);
  const std::string feats = a.get("--features", "raw");
  if (feats == "raw") r.features = LinearFeatures::kRaw;
  else if (feats == "inverse") r.features = LinearFeatures::kInverse;
  else return bad("--features: expected raw or inverse, got '" + feats + "'");
  const std::string crit = a.get("--criterion", "rmse");
  if (crit == "rmse") r.criterion = SearchCriterion::kRmse;
  else if (crit == "mape") r.criterion = SearchCriterion::kMape;
  else return bad("--criterion: expected rmse or mape, got '" + crit + "'");
  JS_ASSIGN_OR_RETURN(int64_t pool, get_int(a, "--pool", 10, 0));
  r.pool = static_cast<size_t>(pool);
  JS_ASSIGN_OR_RETURN(int64_t epochs, get_int(a, "--nn-epochs", 100, 1));
  r.nn.epochs = static_cast<int>(epochs);
  JS_ASSIGN_OR_RETURN(int64_t bs, get_int(a, "--batch-size", 32, 1));
  r.nn.batch_size = static_cast<int>(bs);
  JS_ASSIGN_OR_RETURN(r.nn.dropout, get_double(a, "--dropout", 0.1, 0.0));
  if (r.nn.dropout >= 1.0) return bad("--dropout: must be below 1");
  JS_ASSIGN_OR_RETURN(int64_t threads, get_int(a, "--threads", 1, 1));
  r.nn.threads = static_cast<int>(threads);
  r.nn.log_target = a.switches.count("--log-target") > 0;
  JS_ASSIGN_OR_RETURN(int64_t rseed, get_int(a, "--reference-seed", 1, 0));
  r.reference_seed = static_cast<uint64_t>(rseed);
  JS_ASSIGN_OR_RETURN(int64_t rm, get_int(a, "--reference-modes", 0, 0));
  r.reference_modes = static_cast<size_t>(rm);
  r.model_dir = a.switches.count("--no-model-cache") ? "" : a.get("--model-dir", default_model_dir());
  if (r.method == Method::kPowerTrain && r.references.empty())
    return bad("--reference: powertrain needs the reference workload to transfer from");
  return r;
}

bj::object linear_json(const LinearModel& m, const std::vector<const char*>& names) {
  bj::object o;
  bj::object c;
  for (size_t i = 0; i < names.size() && i < m.coef.size(); ++i) c[names[i]] = jnum(m.coef[i], 8);
  o["coefficients"] = std::move(c);
  o["intercept"] = jnum(m.intercept, 8);
  o["rank"] = m.rank;
  return o;
}

bj::object prediction_json(const PredictOutcome& p, const PredictRequest& req, const ConfigLabels& labels) {
  bj::object o;
  o["method"] = to_string(p.method);
  o["target"] = p.target;
  o["device"] = p.device;
  o["config"] = config_json(p.config);
  o["config_label"] = labels(p.config);
  o["simulated"] = p.simulated;
  o["seed"] = p.seed;
  o["train_modes"] = p.train_modes.size();
  bj::array tm;
  for (const auto& m : p.train_modes) tm.push_back(mode_json(m));
  o["training_modes"] = std::move(tm);
  o["held_out_modes"] = p.held_out.size();
  o["time_mape_pct"] = jnum(p.time_mape_pct, 5);
  o["power_mape_pct"] = jnum(p.power_mape_pct, 5);
  o["energy_mape_pct"] = jnum(p.energy_mape_pct, 5);
  o["fit_seconds"] = jnum(p.fit_seconds, 4);
  if (p.search) {
    bj::object s;
    s["criterion"] = to_string(req.criterion);
    s["features"] = to_string(req.features);
    s["pool_size"] = p.search->pool.size();
    s["combinations"] = p.search->combinations;
    s["score"] = jnum(p.search->score, 6);
    bj::array refs;
    for (const auto& r : p.search->references) {
      bj::object ro;
      ro["workload"] = r.workload;
      ro["rmse_ms"] = jnum(r.rmse_ms, 6);
      ro["time_mape_pct"] = jnum(r.mape_pct, 5);
      refs.push_back(std::move(ro));
    }
    s["references"] = std::move(refs);
    o["representative_search"] = std::move(s);
  }
  const bool inverse = req.features == LinearFeatures::kInverse;
  if (p.time_model)
    o["time_model"] = linear_json(*p.time_model, inverse ? std::vector<const char*>{"inv_cpu_ghz", "inv_cores", "inv_gpu_ghz", "inv_emc_ghz"}
                                                         : std::vector<const char*>{"cpu_mhz", "cores", "gpu_mhz", "emc_mhz"});
  if (p.energy_model)
    o["energy_model"] = linear_json(*p.energy_model, {"cpu_mhz", "cores", "gpu_mhz", "emc_mhz", "time_ms"});
  if (p.reference) {
    bj::object r;
    r["workload"] = p.reference->workload;
    r["device"] = p.reference->device;
    r["modes"] = p.reference->modes;
    r["loaded"] = p.reference->loaded;
    r["seconds"] = jnum(p.reference->seconds, 4);
    r["time_model_path"] = p.reference->time_path;
    r["power_model_path"] = p.reference->power_path;
    o["reference_model"] = std::move(r);
  }
  if (p.method != Method::kLinear) {
    auto tr = [](const NnTrainingReport& t) {
      bj::object x;
      x["train"] = t.samples_train;
      x["validation"] = t.samples_validation;
      x["best_epoch"] = t.best_epoch;
      x["best_validation_mse"] = jnum(t.best_validation_mse, 5);
      x["seconds"] = jnum(t.seconds, 4);
      return x;
    };
    o["time_training"] = tr(p.time_training);
    o["power_training"] = tr(p.power_training);
  }
  bj::array notes;
  for (const auto& n : p.notes) notes.push_back(bj::value(n));
  o["notes"] = std::move(notes);
  return o;
}

void print_prediction_text(std::ostream& out, const PredictOutcome& p, const PredictRequest& req,
                           const ConfigLabels& labels) {
  const std::string l = labels(p.config);
  out << "Method " << to_string(p.method) << " for " << p.target << " on " << p.device << (l.empty() ? "" : " " + l)
      << sim_mark(p.simulated) << " (seed " << p.seed << ")\n";
  if (p.search) {
    out << "Representative modes: exhaustive C(" << p.search->pool.size() << "," << p.train_modes.size()
        << ") = " << p.search->combinations << " sets over " << p.search->references.size()
        << " reference workload(s), criterion sum of " << to_string(req.criterion) << ", features "
        << to_string(req.features) << "\n";
    for (const auto& r : p.search->references)
      out << "  reference " << pad(r.workload, 20) << " RMSE " << fixed(r.rmse_ms, 3) << " ms, MAPE "
          << fixed(r.mape_pct, 2) << "%\n";
  }
  if (p.reference)
    out << "Reference model: " << p.reference->workload << "@" << p.reference->device << ", " << p.reference->modes
        << " modes, " << (p.reference->loaded ? "reused from " + p.reference->time_path : std::string("trained"))
        << " (" << fixed(p.reference->seconds, 2) << " s)\n";
  out << "Trained on " << p.train_modes.size() << " mode(s):";
  size_t shown = 0;
  for (const auto& m : p.train_modes) {
    if (shown++ == 8) {
      out << " ...";
      break;
    }
    out << " " << m.label();
  }
  out << "\nFit time " << fixed(p.fit_seconds, 3) << " s\n";
  out << "Held-out modes: " << p.held_out.size() << "\n";
  out << "  time_mape_pct   " << fixed(p.time_mape_pct, 2) << "\n";
  out << "  power_mape_pct  " << fixed(p.power_mape_pct, 2) << "\n";
  out << "  energy_mape_pct " << fixed(p.energy_mape_pct, 2) << "\n";
  for (const auto& n : p.notes) out << "note: " << n << "\n";
}

Status write_predictions_csv(const std::string& path, const std::vector<ModePrediction>& preds, const PredictOutcome& p) {
  std::ofstream f(path);
  if (!f) return io_error(path + ": cannot write --predictions-out");
  f << "device,workload,cores,cpu_mhz,gpu_mhz,emc_mhz,minibatch_ms,power_mw,observed_minibatch_ms,observed_power_mw\n";
  for (const auto& x : preds) {
    f << p.device << ',' << p.target << ',' << x.mode.cores << ',' << x.mode.cpu_mhz << ',' << x.mode.gpu_mhz << ','
      << x.mode.emc_mhz << ',' << x.time_ms << ',' << (x.power_mw ? fixed(*x.power_mw, 3) : "") << ','
      << (x.observed_time_ms ? fixed(*x.observed_time_ms, 4) : "") << ','
      << (x.observed_power_mw ? fixed(*x.observed_power_mw, 3) : "") << '\n';
  }
  return f ? Status::ok() : io_error(path + ": write failed");
}

Status cmd_predict(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!a.values.count("--method")) return bad("--method: required (linear, nn or powertrain)");
  JS_ASSIGN_OR_RETURN(PredictRequest req, predict_request(a, corpus, a.get("--method")));
  JS_ASSIGN_OR_RETURN(PredictOutcome p, run_prediction(corpus, req));
  const ConfigLabels labels(corpus);
  if (a.switches.count("--json")) {
    bj::object o = prediction_json(p, req, labels);
    selection_json(o, corpus);
    print_json(out, o);
  } else {
    print_prediction_text(out, p, req, labels);
    print_selection(out, corpus);
  }
  if (a.values.count("--predictions-out")) JS_RETURN_IF_ERROR(write_predictions_csv(a.get("--predictions-out"), p.held_out, p));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// optimize

Result<std::vector<double>> parse_sweep(const std::string& text) {
  auto parts = split_list(text.find(':') != std::string::npos ? [&] {
    std::string t = text;
    std::replace(t.begin(), t.end(), ':', ',');
    return t;
  }() : text);
  if (parts.size() != 3) return bad("--sweep: expected FROM:TO:STEP in watts, got '" + text + "'");
  double v[3];
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    v[i] = std::strtod(parts[i].c_str(), &end);
    if (end != parts[i].c_str() + parts[i].size() || !std::isfinite(v[i]))
      return bad("--sweep: expected FROM:TO:STEP in watts, got '" + text + "'");
  }
  if (v[2] <= 0 || v[1] < v[0]) return bad("--sweep: need FROM <= TO and STEP > 0, got '" + text + "'");
  auto r = budget_range(v[0], v[1], v[2]);
  if (r.size() > 100000) return bad("--sweep: more than 100000 budgets");
  return r;
}

bj::object sweep_json(const SweepMetrics& m) {
  bj::object o;
  o["strategy"] = m.strategy;
  o["budgets"] = m.budgets;
  o["infeasible"] = m.infeasible;
  o["time_penalty_median_pct"] = jnum(m.time_penalty_median_pct, 5);
  o["time_penalty_q1_pct"] = jnum(m.time_penalty_q1_pct, 5);
  o["time_penalty_q3_pct"] = jnum(m.time_penalty_q3_pct, 5);
  o["time_penalty_mean_pct"] = jnum(m.time_penalty_mean_pct, 5);
  o["excess_power_area_w"] = jnum(m.excess_power_area_w, 5);
  o["over_limit_pct"] = jnum(m.over_limit_pct, 5);
  o["over_limit_plus1_pct"] = jnum(m.over_limit_plus1_pct, 5);
  return o;
}

Status cmd_optimize(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  const std::string wl = a.get("--workload", a.get("--target"));
  if (wl.empty()) return bad("--workload: required for optimize");
  const bool power_budget = a.values.count("--power-budget-w") > 0;
  const bool time_budget = a.values.count("--time-budget") > 0;
  if (power_budget && time_budget) return bad("--time-budget: give one of --power-budget-w and --time-budget");
  if (!power_budget && !time_budget && !a.values.count("--sweep"))
    return bad("--power-budget-w: give a budget (--power-budget-w W, --time-budget MS or --sweep FROM:TO:STEP)");
  JS_ASSIGN_OR_RETURN(double budget_w, get_double(a, "--power-budget-w", 0, 0));
  JS_ASSIGN_OR_RETURN(double budget_ms, get_double(a, "--time-budget", 0, 0));
  const std::string method = a.get("--method", "observed");
  JS_ASSIGN_OR_RETURN(auto target, select_workload(corpus, workload_flag(a, corpus, wl), "--workload"));
  JS_ASSIGN_OR_RETURN(int64_t seed, get_int(a, "--seed", 1, 0));

  // Ground truth: the target's observed modes with power.
  std::vector<ModeKey> obs_modes;
  std::vector<double> obs_t, obs_p;
  std::map<ModeKey, size_t> obs_index;
  for (const auto& r : target.modes) {
    if (!r.power_mw) continue;
    obs_index[r.mode] = obs_modes.size();
    obs_modes.push_back(r.mode);
    obs_t.push_back(r.minibatch_ms);
    obs_p.push_back(*r.power_mw / 1000.0);
  }
  // Candidates: observed modes, or every mode of the board with predicted values.
  std::vector<ModeKey> cand_modes;
  std::vector<double> cand_t, cand_p;
  std::optional<PredictOutcome> prediction;
  std::optional<PredictRequest> req;
  double predict_seconds = 0;
  size_t excluded = 0;
  if (method == "observed") {
    if (obs_modes.empty()) return bad("--workload: '" + target.workload + "' has no modes with power data");
    cand_modes = obs_modes;
    cand_t = obs_t;
    cand_p = obs_p;
  } else {
    JS_ASSIGN_OR_RETURN(auto rq, predict_request(a, corpus, method));
    rq.target = {target.workload, target.device};
    JS_ASSIGN_OR_RETURN(auto pr, run_prediction(corpus, rq));
    const auto t0 = std::chrono::steady_clock::now();
    auto preds = pr.predict(mode_grid(corpus, target.device));
    predict_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& p : preds) {
      // A linear model can extrapolate to non-positive times far from its training modes.
      if (!p.power_mw || !(p.time_ms > 0) || !(*p.power_mw > 0)) {
        ++excluded;
        continue;
      }
      cand_modes.push_back(p.mode);
      cand_t.push_back(p.time_ms);
      cand_p.push_back(*p.power_mw / 1000.0);
    }
    if (cand_modes.empty())
      return bad("--method: '" + method + "' predicted no usable mode (no power model, or non-positive predictions)");
    prediction = std::move(pr);
    req = rq;
  }
  const auto t_build = std::chrono::steady_clock::now();
  BudgetOptimizer opt(cand_t, cand_p);
  std::optional<size_t> pick;
  if (power_budget) pick = opt.fastest_within_power(budget_w);
  if (time_budget) pick = opt.lowest_power_within_time(budget_ms);
  const double optimize_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();
  std::optional<size_t> truth_pick;
  if (!obs_modes.empty()) {
    BudgetOptimizer truth(obs_t, obs_p);
    if (power_budget) truth_pick = truth.fastest_within_power(budget_w);
    if (time_budget) truth_pick = truth.lowest_power_within_time(budget_ms);
  }
  auto observed_of = [&](size_t cand) -> std::optional<size_t> {
    auto it = obs_index.find(cand_modes[cand]);
    if (it == obs_index.end()) return std::nullopt;
    return it->second;
  };

  // Sweep of power budgets against ground truth (prediction methods, or when asked).
  std::vector<SweepMetrics> sweeps;
  std::vector<double> budgets;
  if (a.values.count("--sweep")) {
    JS_ASSIGN_OR_RETURN(budgets, parse_sweep(a.get("--sweep")));
  } else if (method != "observed" && !obs_modes.empty()) {
    const double lo = std::ceil(*std::min_element(obs_p.begin(), obs_p.end()));
    const double hi = std::floor(*std::max_element(obs_p.begin(), obs_p.end()));
    budgets = budget_range(lo, hi, 1.0);
  }
  if (!budgets.empty() && !obs_modes.empty()) {
    sweeps.push_back(evaluate_sweep(method == "observed" ? "observed" : method, budgets, obs_t, obs_p,
                                    [&](double b) -> std::optional<size_t> {
                                      auto c = opt.fastest_within_power(b);
                                      if (!c) return std::nullopt;
                                      return observed_of(*c);
                                    }));
    // Baselines (PowerTrain sec. 5.1): MAXN, and a Pareto over 50 randomly profiled modes.
    // MAXN: every knob at its maximum; when that mode was not profiled, the profiled mode closest to it
    // (largest sum of knob / knob maximum).
    ModeKey top;
    for (const auto& m : obs_modes) {
      top.cores = std::max(top.cores, m.cores);
      top.cpu_mhz = std::max(top.cpu_mhz, m.cpu_mhz);
      top.gpu_mhz = std::max(top.gpu_mhz, m.gpu_mhz);
      top.emc_mhz = std::max(top.emc_mhz, m.emc_mhz);
    }
    auto closeness = [&](const ModeKey& m) {
      return m.cores / double(top.cores) + m.cpu_mhz / top.cpu_mhz + m.gpu_mhz / top.gpu_mhz + m.emc_mhz / top.emc_mhz;
    };
    size_t maxn = 0;
    for (size_t i = 1; i < obs_modes.size(); ++i)
      if (closeness(obs_modes[i]) > closeness(obs_modes[maxn])) maxn = i;
    sweeps.push_back(evaluate_sweep("maxn", budgets, obs_t, obs_p, [&](double) { return std::optional<size_t>(maxn); }));
    auto rnd = sample_modes(obs_modes, 50, static_cast<uint64_t>(seed));
    std::vector<double> rt, rp;
    std::vector<size_t> ridx;
    for (const auto& m : rnd) {
      ridx.push_back(obs_index[m]);
      rt.push_back(obs_t[obs_index[m]]);
      rp.push_back(obs_p[obs_index[m]]);
    }
    BudgetOptimizer ropt(rt, rp);
    sweeps.push_back(evaluate_sweep("random50", budgets, obs_t, obs_p, [&](double b) -> std::optional<size_t> {
      auto c = ropt.fastest_within_power(b);
      if (!c) return std::nullopt;
      return ridx[*c];
    }));
  }

  auto pick_json = [&](std::optional<size_t> c, bool from_candidates) -> bj::value {
    if (!c) return nullptr;
    const ModeKey& m = from_candidates ? cand_modes[*c] : obs_modes[*c];
    bj::object o = mode_json(m);
    if (from_candidates && method != "observed") {
      o["predicted_time_ms"] = jnum(cand_t[*c]);
      o["predicted_power_w"] = jnum(cand_p[*c]);
    }
    std::optional<size_t> oi = from_candidates ? observed_of(*c) : c;
    o["time_ms"] = oi ? jnum(obs_t[*oi]) : bj::value(nullptr);
    o["power_w"] = oi ? jnum(obs_p[*oi]) : bj::value(nullptr);
    return o;
  };
  std::optional<double> penalty, excess;
  if (pick && truth_pick && power_budget) {
    if (auto oi = observed_of(*pick)) {
      penalty = 100.0 * (obs_t[*oi] - obs_t[*truth_pick]) / obs_t[*truth_pick];
      excess = std::max(0.0, obs_p[*oi] - budget_w);
    }
  }
  const ConfigLabels labels(corpus);
  if (a.switches.count("--json")) {
    bj::object o;
    o["device"] = target.device;
    o["workload"] = target.workload;
    workload_json(o, target, labels);
    selection_json(o, corpus);
    o["method"] = method;
    o["seed"] = seed;
    o["candidates"] = cand_modes.size();
    o["excluded_candidates"] = excluded;
    if (power_budget) o["power_budget_w"] = jnum(budget_w);
    if (time_budget) o["time_budget_ms"] = jnum(budget_ms);
    if (power_budget || time_budget) {
      o["chosen"] = pick_json(pick, true);
      o["optimal"] = pick_json(truth_pick, false);
      o["time_penalty_pct"] = jnum(penalty, 5);
      o["excess_power_w"] = jnum(excess, 5);
    }
    o["optimize_seconds"] = jnum(optimize_seconds, 4);
    if (prediction) {
      o["predict_seconds"] = jnum(predict_seconds, 4);
      o["prediction"] = prediction_json(*prediction, *req, labels);
    }
    bj::array sw;
    for (const auto& s : sweeps) sw.push_back(sweep_json(s));
    o["sweep"] = std::move(sw);
    if (!budgets.empty()) {
      o["sweep_from_w"] = jnum(budgets.front());
      o["sweep_to_w"] = jnum(budgets.back());
      o["sweep_budgets"] = budgets.size();
    }
    print_json(out, o);
  } else {
    out << "Optimise " << workload_heading(target, labels) << " using " << method << " ("
        << cand_modes.size() << " candidate modes";
    if (excluded) out << ", " << excluded << " excluded for non-positive predicted time or power";
    if (prediction) out << ", time_mape_pct " << fixed(prediction->time_mape_pct, 2) << ", power_mape_pct " << fixed(prediction->power_mape_pct, 2);
    out << ")\n";
    auto describe = [&](const char* what, std::optional<size_t> c, bool from_candidates) {
      out << what;
      if (!c) {
        out << "none within the budget\n";
        return;
      }
      const ModeKey& m = from_candidates ? cand_modes[*c] : obs_modes[*c];
      out << m.label();
      if (from_candidates && method != "observed")
        out << "  predicted " << fixed(cand_t[*c], 2) << " ms, " << fixed(cand_p[*c], 2) << " W;";
      std::optional<size_t> oi = from_candidates ? observed_of(*c) : c;
      if (oi) out << "  observed " << fixed(obs_t[*oi], 2) << " ms, " << fixed(obs_p[*oi], 2) << " W";
      else out << "  (not profiled)";
      out << "\n";
    };
    if (power_budget || time_budget) {
      out << (power_budget ? "Power budget " + fixed(budget_w, 2) + " W: fastest mode\n"
                           : "Time budget " + fixed(budget_ms, 2) + " ms per minibatch: lowest-power mode\n");
      describe("  chosen:  ", pick, true);
      if (method != "observed") describe("  optimal: ", truth_pick, false);
      if (penalty) out << "  time penalty " << fixed(*penalty, 2) << "%, excess power " << fixed(*excess, 2) << " W\n";
    }
    print_selection(out, corpus);
    if (!sweeps.empty()) {
      out << "Sweep of " << budgets.size() << " power budgets " << fixed(budgets.front(), 1) << ".."
          << fixed(budgets.back(), 1) << " W against the observed optimum:\n";
      out << "  " << pad("strategy", 12) << pad_left("solved", 7) << pad_left("penalty med %", 15)
          << pad_left("Q1..Q3 %", 18) << pad_left("area W", 9) << pad_left("A/L %", 8) << pad_left("A/L+1 %", 9) << "\n";
      for (const auto& s : sweeps)
        out << "  " << pad(s.strategy, 12) << pad_left(std::to_string(s.budgets), 7)
            << pad_left(fixed(s.time_penalty_median_pct, 2), 15)
            << pad_left(fixed(s.time_penalty_q1_pct, 1) + ".." + fixed(s.time_penalty_q3_pct, 1), 18)
            << pad_left(fixed(s.excess_power_area_w, 3), 9) << pad_left(fixed(s.over_limit_pct, 1), 8)
            << pad_left(fixed(s.over_limit_plus1_pct, 1), 9) << "\n";
    }
  }
  if (a.values.count("--plot")) {
    std::vector<double> px(cand_p), py(cand_t);
    auto front = pareto_front(px, py);
    std::vector<ScatterPoint> all, fr, hi;
    for (size_t i = 0; i < px.size(); ++i) all.push_back({px[i], py[i]});
    for (size_t i : front) fr.push_back({px[i], py[i]});
    if (pick) hi.push_back({px[*pick], py[*pick]});
    JS_RETURN_IF_ERROR(plot_pareto(a.get("--plot"),
                                   std::string(method == "observed" ? "Observed" : "Predicted (" + method + ")") +
                                       " power-time Pareto: " + workload_heading(target, labels),
                                   "power_w", "time_ms", all, fr, hi));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// epochs: stall / compute / other per epoch, epoch 0 apart.

Status cmd_epochs(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(Corpus corpus, load_source(a));
  if (!corpus.epoch_times) return bad("--csv: the corpus has no per-epoch columns (epoch_s); export it with --per-epoch");
  JS_ASSIGN_OR_RETURN(int64_t run, get_int(a, "--run", 0, 0));
  std::string workload = a.get("--workload"), device = a.get("--device");
  if (!workload.empty()) {
    const WorkloadRef ref = workload_flag(a, corpus, workload);
    workload = ref.workload;
    device = ref.device;
  }
  if (!run && workload.empty()) return bad("--run: give --run ID or --workload W");
  const std::string instance = a.get("--instance");
  std::vector<const EpochSample*> sel;
  for (const auto& e : corpus.epochs) {
    if (run && e.run_id != run) continue;
    if (!workload.empty() && e.workload != workload) continue;
    if (!device.empty() && e.device != device) continue;
    if (!instance.empty() && e.instance != instance) continue;
    sel.push_back(&e);
  }
  if (sel.empty()) return bad(run ? "--run: no epochs for run " + std::to_string(run) : "--workload: no epochs match");
  // One group per board class, workload and configuration: means are never taken over unlike rows.
  const bool mode_pooled =
      std::find(corpus.pooled_over.begin(), corpus.pooled_over.end(), "mode") != corpus.pooled_over.end();
  using Key = std::tuple<std::string, std::string, bool, AxisMap>;
  std::map<Key, std::vector<const EpochSample*>> groups;
  for (const auto* e : sel) {
    AxisMap config = e->axes;
    if (!mode_pooled && !config.count("mode")) config["mode"] = mode_axis_value(e->mode, e->mode_name);
    groups[{e->device, e->workload, e->simulated, config}].push_back(e);
  }
  const ConfigLabels labels(corpus);
  auto other_of = [](const EpochSample& e) {
    return std::max(0.0, e.time - e.stall_s.value_or(0) - e.compute_s.value_or(0));
  };
  struct Summary {
    std::vector<double> e2e, stall, compute, e0;  // epochs 1+; warm-up epochs
  };
  auto summarise = [](const std::vector<const EpochSample*>& v) {
    Summary s;
    for (const auto* e : v) {
      if (e->epoch == 0) {
        s.e0.push_back(e->time);
        continue;
      }
      s.e2e.push_back(e->time);
      s.stall.push_back(e->stall_s.value_or(0));
      s.compute.push_back(e->compute_s.value_or(0));
    }
    return s;
  };
  std::vector<EpochBar> bars;
  bool any_sim = false, all_sim = true;
  for (const auto& [key, v] : groups) {
    any_sim = any_sim || std::get<2>(key);
    all_sim = all_sim && std::get<2>(key);
    for (const auto* e : v) {
      std::string label = "r" + std::to_string(e->run_id) + " e" + std::to_string(e->epoch);
      if (groups.size() > 1) label += " " + labels(std::get<3>(key));
      bars.push_back({label, e->stall_s.value_or(0), e->compute_s.value_or(0), other_of(*e)});
    }
  }
  if (a.switches.count("--json")) {
    bj::object o;
    selection_json(o, corpus);
    bj::array rows, gs;
    for (const auto& [key, v] : groups) {
      const auto& [dev, wl, simulated, config] = key;
      for (const auto* e : v) {
        bj::object r;
        r["run_id"] = e->run_id;
        r["device"] = e->device;
        r["workload"] = e->workload;
        r["instance"] = e->instance;
        r["config_label"] = labels(config);
        r["simulated"] = e->simulated;
        r["repetition"] = e->repetition;
        r["epoch"] = e->epoch;
        r["warmup"] = e->epoch == 0;
        r["e2e_s"] = jnum(e->time);
        r["stall_s"] = jnum(e->stall_s);
        r["compute_s"] = jnum(e->compute_s);
        r["other_s"] = jnum(other_of(*e));
        r["energy_j"] = jnum(e->energy);
        r["power_coverage"] = jnum(e->power_coverage, 4);
        r["throttled"] = e->throttled ? bj::value(*e->throttled) : bj::value(nullptr);
        rows.push_back(std::move(r));
      }
      const Summary s = summarise(v);
      bj::object g;
      g["device"] = dev;
      g["workload"] = wl;
      g["config"] = config_json(config);
      g["config_label"] = labels(config);
      g["simulated"] = simulated;
      g["epochs"] = v.size();
      g["epochs_later"] = s.e2e.size();
      g["epoch0_e2e_s"] = s.e0.empty() ? bj::value(nullptr) : jnum(mean(s.e0));
      g["later_e2e_s"] = s.e2e.empty() ? bj::value(nullptr) : jnum(mean(s.e2e));
      g["later_stall_s"] = s.e2e.empty() ? bj::value(nullptr) : jnum(mean(s.stall));
      g["later_compute_s"] = s.e2e.empty() ? bj::value(nullptr) : jnum(mean(s.compute));
      gs.push_back(std::move(g));
    }
    o["epochs"] = std::move(rows);
    o["groups"] = std::move(gs);
    print_json(out, o);
  } else {
    print_selection(out, corpus);
    bool first = true;
    for (const auto& [key, v] : groups) {
      const auto& [dev, wl, simulated, config] = key;
      out << (first ? "" : "\n") << dev << "  " << wl << "  " << labels(config) << sim_mark(simulated) << "\n";
      first = false;
      out << pad("run", 8) << pad("instance", 14) << pad_left("rep", 4) << pad_left("epoch", 6) << pad_left("e2e_s", 11)
          << pad_left("stall_s", 11) << pad_left("compute_s", 11) << pad_left("other_s", 11) << pad_left("energy_j", 11)
          << "\n";
      for (const auto* e : v) {
        out << pad(std::to_string(e->run_id), 8) << pad(e->instance, 14) << pad_left(std::to_string(e->repetition), 4)
            << pad_left(std::to_string(e->epoch), 6) << pad_left(fixed(e->time, 3), 11)
            << pad_left(fixed(e->stall_s, 3), 11) << pad_left(fixed(e->compute_s, 3), 11)
            << pad_left(fixed(other_of(*e), 3), 11) << pad_left(fixed(e->energy, 2), 11)
            << (e->epoch == 0 ? "  (warm-up)" : "") << (e->throttled.value_or(false) ? "  THROTTLED" : "") << "\n";
      }
      const Summary s = summarise(v);
      if (!s.e2e.empty())
        out << "epochs 1+: mean e2e " << fixed(mean(s.e2e), 3) << " s, stall " << fixed(mean(s.stall), 3)
            << " s, compute " << fixed(mean(s.compute), 3) << " s"
            << (s.e0.empty() ? "" : "; epoch 0 " + std::string(s.e0.size() > 1 ? "mean " : "") + fixed(mean(s.e0), 3) + " s")
            << "\n";
    }
  }
  if (a.values.count("--plot")) {
    std::string what = run ? "run " + std::to_string(run) : workload;
    if (groups.size() == 1) {
      const std::string l = labels(std::get<3>(groups.begin()->first));
      if (!l.empty()) what += " " + l;
    }
    JS_RETURN_IF_ERROR(plot_epoch_breakdown(a.get("--plot"),
                                            "Per-epoch time: stall / compute / other (" + what + ")" +
                                                plot_sim_mark(any_sim, all_sim),
                                            bars));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// synth: a synthetic corpus (experiments/corpora, tests, benchmarks).

Status cmd_synth(const Args& a, std::ostream& out) {
  JS_ASSIGN_OR_RETURN(BoardGrid board, synthetic_board(a.get("--device", "agx-orin")));
  std::vector<SyntheticWorkload> ws;
  if (a.values.count("--workloads")) {
    for (const auto& n : split_list(a.get("--workloads"))) {
      JS_ASSIGN_OR_RETURN(auto w, synthetic_workload(n));
      ws.push_back(w);
    }
  } else {
    ws = synthetic_workloads();
  }
  SyntheticOptions o;
  JS_ASSIGN_OR_RETURN(int64_t modes, get_int(a, "--modes", 0, 0));
  JS_ASSIGN_OR_RETURN(int64_t seed, get_int(a, "--seed", 1, 0));
  JS_ASSIGN_OR_RETURN(o.noise_pct, get_double(a, "--noise-pct", 0, 0));
  o.max_modes = static_cast<size_t>(modes);
  o.seed = static_cast<uint64_t>(seed);
  o.linear_truth = a.switches.count("--linear-truth") > 0;
  Corpus c = generate_corpus(board, ws, o);
  if (a.values.count("--out")) {
    std::ofstream f(a.get("--out"));
    if (!f) return io_error(a.get("--out") + ": cannot write --out");
    write_corpus_csv(f, c);
    if (!f) return io_error(a.get("--out") + ": write failed");
    if (a.switches.count("--json")) {
      bj::object o2;
      o2["file"] = a.get("--out");
      o2["rows"] = c.rows.size();
      print_json(out, o2);
    } else {
      out << "wrote " << c.rows.size() << " rows to " << a.get("--out") << "\n";
    }
  } else {
    write_corpus_csv(out, c);
  }
  return Status::ok();
}

}  // namespace

int analyze_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << kUsage;
      return args.empty() ? 2 : 0;
    }
    const std::string cmd = args[0];
    std::set<std::string> values = kSourceFlags, switches = {"--json"};
    std::function<Status(const Args&, std::ostream&)> fn;
    if (cmd == "variability") {
      values.insert({"--workload", "--plot", "--plot-energy"});
      fn = cmd_variability;
    } else if (cmd == "pareto") {
      values.insert({"--workload", "--x", "--y", "--plot"});
      fn = cmd_pareto;
    } else if (cmd == "predict") {
      values.insert(kPredictFlags.begin(), kPredictFlags.end());
      switches.insert({"--log-target", "--no-model-cache"});
      fn = cmd_predict;
    } else if (cmd == "optimize") {
      values.insert(kPredictFlags.begin(), kPredictFlags.end());
      values.insert({"--power-budget-w", "--time-budget", "--sweep", "--plot"});
      switches.insert({"--log-target", "--no-model-cache"});
      fn = cmd_optimize;
    } else if (cmd == "epochs") {
      values.insert({"--run", "--workload", "--instance", "--plot"});  // --device from kSourceFlags
      fn = cmd_epochs;
    } else if (cmd == "synth") {
      values = {"--device", "--workloads", "--modes", "--noise-pct", "--seed", "--out"};
      switches.insert("--linear-truth");
      fn = cmd_synth;
    } else {
      err << "jetsweep analyze: unknown command '" << cmd << "'\n" << kUsage;
      return 2;
    }
    auto parsed = parse_flags(args, 1, "analyze " + cmd, values, switches);
    if (!parsed.is_ok()) {
      err << "jetsweep analyze " << cmd << ": " << parsed.status().message() << "\n";
      return 2;
    }
    Status s = fn(parsed.value(), out);
    if (!s.is_ok()) {
      err << "jetsweep analyze " << cmd << ": " << s.message() << "\n";
      return exit_code(s);
    }
    return 0;
  } catch (const std::exception& e) {
    err << "jetsweep analyze: internal error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    err << "jetsweep analyze: internal error\n";
    return 1;
  }
}

int export_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
      out << kExportUsage;
      return 0;
    }
    auto parsed = parse_flags(args, 0, "export", {"--db", "--csv", "--campaign", "--out"}, {"--per-epoch", "--json"});
    if (!parsed.is_ok()) {
      err << "jetsweep export: " << parsed.status().message() << "\n" << kExportUsage;
      return 2;
    }
    const Args& a = parsed.value();
    auto corpus = load_source(a);
    if (!corpus.is_ok()) {
      err << "jetsweep export: " << corpus.status().message() << "\n";
      return exit_code(corpus.status());
    }
    const bool per_epoch = a.switches.count("--per-epoch") > 0;
    std::ostringstream csv;
    if (per_epoch) write_epochs_csv(csv, corpus.value());
    else write_corpus_csv(csv, corpus.value());
    const size_t rows = per_epoch ? corpus->epochs.size() : corpus->rows.size();
    if (a.values.count("--out")) {
      std::ofstream f(a.get("--out"));
      f << csv.str();
      if (!f) {
        err << "jetsweep export: " << a.get("--out") << ": cannot write --out\n";
        return 1;
      }
      if (a.switches.count("--json")) {
        bj::object o;
        o["file"] = a.get("--out");
        o["rows"] = rows;
        o["per_epoch"] = per_epoch;
        print_json(out, o);
      } else {
        out << "wrote " << rows << " rows to " << a.get("--out") << "\n";
      }
    } else if (a.switches.count("--json")) {
      // The same rows as JSON objects keyed by the CSV header.
      std::istringstream in(csv.str());
      std::string header, line;
      std::getline(in, header);
      std::vector<std::string> cols = split_list(header);
      bj::array arr;
      while (std::getline(in, line)) {
        bj::object o;
        std::vector<std::string> cells;
        std::string cell;
        bool q = false;
        for (char ch : line) {
          if (ch == '"') q = !q;
          else if (ch == ',' && !q) {
            cells.push_back(cell);
            cell.clear();
          } else cell += ch;
        }
        cells.push_back(cell);
        for (size_t i = 0; i < cols.size() && i < cells.size(); ++i) {
          char* end = nullptr;
          const double v = std::strtod(cells[i].c_str(), &end);
          if (!cells[i].empty() && end == cells[i].c_str() + cells[i].size()) o[cols[i]] = jnum(v, 17);
          else if (cells[i].empty()) o[cols[i]] = nullptr;
          else if (cells[i] == "true" || cells[i] == "false") o[cols[i]] = cells[i] == "true";
          else o[cols[i]] = cells[i];
        }
        arr.push_back(std::move(o));
      }
      bj::object o;
      o["rows"] = std::move(arr);
      print_json(out, o);
    } else {
      out << csv.str();
    }
    return 0;
  } catch (const std::exception& e) {
    err << "jetsweep export: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace jetsweep::analysis
