// Printers of `analyze pareto` (the front, its plot) and `analyze epochs` (per-epoch breakdown, stacked bars).
#include "analysis/plots.hpp"
#include "analysis/print_reports.hpp"
#include "analysis/print_util.hpp"
#include "analysis/stats.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

bj::object report_json(const ParetoReport& r) {
  bj::object o;
  workload_json(o, r.workload, r.context);
  o["x"] = r.x_unit;
  o["y"] = r.y_unit;
  o["modes"] = r.modes.size();
  o["modes_without_power"] = r.modes_without_power;
  bj::array f;
  for (size_t i : r.front) {
    const ModeRecord& m = r.modes[i];
    bj::object p = mode_json(m.mode);
    p["time_ms"] = jnum(m.minibatch_ms);
    p["power_w"] = jnum(*m.power_mw / 1000.0);
    p["energy_mj"] = jnum(*m.energy_mj());
    f.push_back(std::move(p));
  }
  o["front"] = std::move(f);
  return o;
}

void print_text(std::ostream& out, const ParetoReport& r) {
  out << "Pareto front of " << workload_heading(r.workload, r.context.labels) << " (" << r.x_unit << " vs "
      << r.y_unit << ", both minimised): " << r.front.size() << " of " << r.modes.size() << " modes\n";
  print_selection(out, r.context);
  out << pad("cores", 7) << pad_left("cpu_mhz", 9) << pad_left("gpu_mhz", 9) << pad_left("emc_mhz", 9)
      << pad_left("time_ms", 11) << pad_left("power_w", 9) << pad_left("energy_mj", 11) << "\n";
  for (size_t i : r.front) {
    const ModeRecord& m = r.modes[i];
    out << pad(std::to_string(m.mode.cores), 7) << pad_left(fixed(m.mode.cpu_mhz, 1), 9)
        << pad_left(fixed(m.mode.gpu_mhz, 1), 9) << pad_left(fixed(m.mode.emc_mhz, 1), 9)
        << pad_left(fixed(m.minibatch_ms, 2), 11) << pad_left(fixed(*m.power_mw / 1000.0, 2), 9)
        << pad_left(fixed(*m.energy_mj(), 1), 11) << "\n";
  }
  if (r.modes_without_power) out << r.modes_without_power << " mode(s) without power data left out\n";
}

Status plot_report(const std::string& file, const ParetoReport& r) {
  ParetoPlot p{"Pareto front: " + workload_heading(r.workload, r.context.labels), r.x_unit, r.y_unit, {}, {}, {}, {}};
  for (size_t i = 0; i < r.x.size(); ++i) p.all.push_back({r.x[i], r.y[i], {}});
  for (size_t i : r.front) p.front.push_back({r.x[i], r.y[i], mode_label(r.modes[i])});   // the front's modes named
  return plot_pareto(file, p);
}

namespace {

bj::value optional_json(const std::optional<double>& v) { return v ? jnum(*v) : bj::value(nullptr); }

bj::object epoch_json(const EpochSample& e, const std::string& config_label) {
  bj::object r;
  r["run_id"] = e.run_id;
  r["device"] = e.device;
  r["workload"] = e.workload;
  r["instance"] = e.instance;
  r["config_label"] = config_label;
  r["simulated"] = e.simulated;
  r["repetition"] = e.repetition;
  r["epoch"] = e.epoch;
  r["warmup"] = e.epoch == 0;
  r["e2e_s"] = jnum(e.time);
  r["stall_s"] = jnum(e.stall_s);
  r["compute_s"] = jnum(e.compute_s);
  r["other_s"] = jnum(other_seconds(e));
  r["energy_j"] = jnum(e.energy);
  r["power_coverage"] = jnum(e.power_coverage, 4);
  r["throttled"] = e.throttled ? bj::value(*e.throttled) : bj::value(nullptr);
  return r;
}

bj::object epoch_group_json(const EpochGroup& g, const ConfigLabels& labels) {
  bj::object o;
  o["device"] = g.device;
  o["workload"] = g.workload;
  o["config"] = config_json(g.config);
  o["config_label"] = labels(g.config);
  o["simulated"] = g.simulated;
  o["epochs"] = g.epochs.size();
  o["epochs_later"] = g.later_epochs;
  o["epoch0_e2e_s"] = optional_json(g.epoch0_e2e_s);
  o["later_e2e_s"] = optional_json(g.later_e2e_s);
  o["later_stall_s"] = optional_json(g.later_stall_s);
  o["later_compute_s"] = optional_json(g.later_compute_s);
  return o;
}

}  // namespace

bj::object report_json(const EpochsReport& r) {
  bj::object o;
  selection_json(o, r.context);
  bj::array rows, groups;
  for (const auto& g : r.groups) {
    const std::string label = r.context.labels(g.config);
    for (const EpochSample* e : g.epochs) rows.push_back(epoch_json(*e, label));
    groups.push_back(epoch_group_json(g, r.context.labels));
  }
  o["epochs"] = std::move(rows);
  o["groups"] = std::move(groups);
  return o;
}

namespace {

void print_epoch_group(std::ostream& out, const EpochGroup& g, const ConfigLabels& labels) {
  out << g.device << "  " << g.workload << "  " << labels(g.config) << sim_mark(g.simulated) << "\n";
  out << pad("run", 8) << pad("instance", 14) << pad_left("rep", 4) << pad_left("epoch", 6) << pad_left("e2e_s", 11)
      << pad_left("stall_s", 11) << pad_left("compute_s", 11) << pad_left("other_s", 11) << pad_left("energy_j", 11)
      << "\n";
  for (const EpochSample* ep : g.epochs) {
    const EpochSample& e = *ep;
    out << pad(std::to_string(e.run_id), 8) << pad(e.instance, 14) << pad_left(std::to_string(e.repetition), 4)
        << pad_left(std::to_string(e.epoch), 6) << pad_left(fixed(e.time, 3), 11)
        << pad_left(fixed(e.stall_s, 3), 11) << pad_left(fixed(e.compute_s, 3), 11)
        << pad_left(fixed(other_seconds(e), 3), 11) << pad_left(fixed(e.energy, 2), 11)
        << (e.epoch == 0 ? "  (warm-up)" : "") << (e.throttled.value_or(false) ? "  THROTTLED" : "") << "\n";
  }
  if (g.later_e2e_s)
    out << "epochs 1+: mean e2e " << fixed(*g.later_e2e_s, 3) << " s, stall " << fixed(*g.later_stall_s, 3)
        << " s, compute " << fixed(*g.later_compute_s, 3) << " s"
        << (g.epoch0_e2e_s ? "; epoch 0 " + std::string(g.warmup_epochs > 1 ? "mean " : "") + fixed(*g.epoch0_e2e_s, 3) + " s"
                           : "")
        << "\n";
}

}  // namespace

void print_text(std::ostream& out, const EpochsReport& r) {
  print_selection(out, r.context);
  bool first = true;
  for (const auto& g : r.groups) {
    out << (first ? "" : "\n");
    first = false;
    print_epoch_group(out, g, r.context.labels);
  }
}

Status plot_report(const std::string& file, const EpochsReport& r) {
  std::vector<EpochBar> bars;
  bool any_sim = false, all_sim = true;
  for (const auto& g : r.groups) {
    any_sim = any_sim || g.simulated;
    all_sim = all_sim && g.simulated;
    for (const EpochSample* ep : g.epochs) {
      const EpochSample& e = *ep;
      std::string label = "r" + std::to_string(e.run_id) + " e" + std::to_string(e.epoch);
      if (e.epoch == 0) label += " warm-up";
      if (r.groups.size() > 1) label += " " + r.context.labels(g.config);
      bars.push_back({label, e.stall_s.value_or(0), e.compute_s.value_or(0), other_seconds(e), e.epoch == 0});
    }
  }
  std::string what = r.query.run ? "run " + std::to_string(r.query.run) : r.query.workload;
  if (r.groups.size() == 1) {
    const std::string l = r.context.labels(r.groups.front().config);
    if (!l.empty()) what += " " + l;
  }
  return plot_epoch_breakdown(file, "Per-epoch time: stall / compute / other (" + what + ")" + plot_sim_mark(any_sim, all_sim),
                              bars);
}

}  // namespace jetsweep::analysis
