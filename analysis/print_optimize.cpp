// Printers of `analyze optimize`: the pick against the observed optimum, the budget sweep, the Pareto plot.
#include <algorithm>

#include "analysis/pareto.hpp"
#include "analysis/plots.hpp"
#include "analysis/print_reports.hpp"
#include "analysis/print_util.hpp"

namespace jetsweep::analysis {

namespace bj = boost::json;

namespace {

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

// A picked mode: a candidate (predicted values when predicted) or an observed mode, with its observed values.
bj::value pick_json(const OptimizeReport& r, std::optional<size_t> c, bool from_candidates) {
  if (!c) return nullptr;
  bj::object o = mode_json(from_candidates ? r.candidates.modes[*c] : r.observed.modes[*c]);
  if (from_candidates && r.predicted()) {
    o["predicted_time_ms"] = jnum(r.candidates.time_ms[*c]);
    o["predicted_power_w"] = jnum(r.candidates.power_w[*c]);
  }
  if (from_candidates && !r.candidate_measured.empty()) o["measured"] = bool(r.candidate_measured[*c]);
  const std::optional<size_t> oi = from_candidates ? r.observed_of(*c) : c;
  o["time_ms"] = oi ? jnum(r.observed.time_ms[*oi]) : bj::value(nullptr);
  o["power_w"] = oi ? jnum(r.observed.power_w[*oi]) : bj::value(nullptr);
  return o;
}

}  // namespace

bj::object report_json(const OptimizeReport& r) {
  bj::object o;
  workload_json(o, r.target, r.context);
  o["method"] = r.method;
  o["seed"] = r.seed;
  o["candidates"] = r.candidates.modes.size();
  if (r.adaptive_plan) {
    o["adaptive_plan"] = *r.adaptive_plan;
    o["measured_candidates"] = std::count(r.candidate_measured.begin(), r.candidate_measured.end(), true);
  }
  o["excluded_candidates"] = r.excluded_candidates;
  if (r.power_budget_w) o["power_budget_w"] = jnum(*r.power_budget_w);
  if (r.time_budget_ms) o["time_budget_ms"] = jnum(*r.time_budget_ms);
  if (r.power_budget_w || r.time_budget_ms) {
    o["chosen"] = pick_json(r, r.chosen, true);
    o["optimal"] = pick_json(r, r.optimal, false);
    o["time_penalty_pct"] = jnum(r.time_penalty_pct, 5);
    o["excess_power_w"] = jnum(r.excess_power_w, 5);
  }
  o["optimize_seconds"] = jnum(r.optimize_seconds, 4);
  if (r.prediction) {
    o["predict_seconds"] = jnum(r.predict_seconds, 4);
    o["prediction"] = prediction_json(*r.prediction, *r.request, r.context.labels);
  }
  bj::array sw;
  for (const auto& s : r.sweeps) sw.push_back(sweep_json(s));
  o["sweep"] = std::move(sw);
  if (!r.sweep_budgets_w.empty()) {
    o["sweep_from_w"] = jnum(r.sweep_budgets_w.front());
    o["sweep_to_w"] = jnum(r.sweep_budgets_w.back());
    o["sweep_budgets"] = r.sweep_budgets_w.size();
  }
  return o;
}

namespace {

void describe_pick(std::ostream& out, const OptimizeReport& r, const char* what, std::optional<size_t> c,
                   bool from_candidates) {
  out << what;
  if (!c) {
    out << "none within the budget\n";
    return;
  }
  out << (from_candidates ? r.candidates.modes[*c] : r.observed.modes[*c]).label();
  const bool measured = from_candidates && !r.candidate_measured.empty() && r.candidate_measured[*c];
  if (from_candidates && r.predicted() && !measured)
    out << "  predicted " << fixed(r.candidates.time_ms[*c], 2) << " ms, " << fixed(r.candidates.power_w[*c], 2) << " W;";
  const std::optional<size_t> oi = from_candidates ? r.observed_of(*c) : c;
  if (oi) out << "  observed " << fixed(r.observed.time_ms[*oi], 2) << " ms, " << fixed(r.observed.power_w[*oi], 2) << " W";
  else out << "  (not profiled)";
  out << "\n";
}

void print_sweeps(std::ostream& out, const OptimizeReport& r) {
  const auto& budgets = r.sweep_budgets_w;
  out << "Sweep of " << budgets.size() << " power budgets " << fixed(budgets.front(), 1) << ".."
      << fixed(budgets.back(), 1) << " W against the observed optimum:\n";
  out << "  " << pad("strategy", 12) << pad_left("solved", 7) << pad_left("penalty med %", 15)
      << pad_left("Q1..Q3 %", 18) << pad_left("area W", 9) << pad_left("A/L %", 8) << pad_left("A/L+1 %", 9) << "\n";
  for (const auto& s : r.sweeps)
    out << "  " << pad(s.strategy, 12) << pad_left(std::to_string(s.budgets), 7)
        << pad_left(fixed(s.time_penalty_median_pct, 2), 15)
        << pad_left(fixed(s.time_penalty_q1_pct, 1) + ".." + fixed(s.time_penalty_q3_pct, 1), 18)
        << pad_left(fixed(s.excess_power_area_w, 3), 9) << pad_left(fixed(s.over_limit_pct, 1), 8)
        << pad_left(fixed(s.over_limit_plus1_pct, 1), 9) << "\n";
}

}  // namespace

void print_text(std::ostream& out, const OptimizeReport& r) {
  out << "Optimise " << workload_heading(r.target, r.context.labels) << " using " << r.method << " ("
      << r.candidates.modes.size() << " candidate modes";
  if (r.adaptive_plan)
    out << " of adaptive plan " << *r.adaptive_plan << ": "
        << std::count(r.candidate_measured.begin(), r.candidate_measured.end(), true) << " measured, the others predicted";
  if (r.excluded_candidates)
    out << ", " << r.excluded_candidates
        << (r.adaptive_plan ? " left out (their runs failed)" : " excluded for non-positive predicted time or power");
  if (r.prediction)
    out << ", time_mape_pct " << fixed(r.prediction->time_mape_pct, 2) << ", power_mape_pct "
        << fixed(r.prediction->power_mape_pct, 2);
  out << ")\n";
  if (r.power_budget_w || r.time_budget_ms) {
    out << (r.power_budget_w ? "Power budget " + fixed(*r.power_budget_w, 2) + " W: fastest mode\n"
                             : "Time budget " + fixed(*r.time_budget_ms, 2) + " ms per minibatch: lowest-power mode\n");
    describe_pick(out, r, "  chosen:  ", r.chosen, true);
    if (r.predicted()) describe_pick(out, r, "  optimal: ", r.optimal, false);
    if (r.time_penalty_pct)
      out << "  time penalty " << fixed(*r.time_penalty_pct, 2) << "%, excess power " << fixed(*r.excess_power_w, 2)
          << " W\n";
  }
  print_selection(out, r.context);
  if (!r.sweeps.empty()) print_sweeps(out, r);
}

// The same axes as `analyze pareto`'s default plot (x time, y power), the budget as a dashed line, the front's and
// the chosen mode's names next to them.
Status plot_report(const std::string& file, const OptimizeReport& r) {
  const std::vector<double>& power = r.candidates.power_w;
  const std::vector<double>& time = r.candidates.time_ms;
  auto name = [&](size_t i) {
    const ModeKey& m = r.candidates.modes[i];
    const ModeRecord* rec = r.target.find(m);
    return rec ? mode_label(*rec) : m.label();
  };
  const std::string what = r.adaptive_plan ? "Measured and predicted (adaptive plan " + std::to_string(*r.adaptive_plan) + ")"
                           : r.predicted() ? "Predicted (" + r.method + ")" : std::string("Observed");
  ParetoPlot p{what + " time-power Pareto: " + workload_heading(r.target, r.context.labels), "time_ms", "power_w",
               {}, {}, {}, {}};
  // An adaptive plan's profiled modes are highlighted apart from its predicted ones.
  for (size_t i = 0; i < power.size(); ++i) {
    if (!r.candidate_measured.empty() && r.candidate_measured[i]) p.highlight.push_back({time[i], power[i], {}});   // drawn as picks are, unlabelled
    else p.all.push_back({time[i], power[i], {}});
  }
  for (size_t i : pareto_front(time, power)) p.front.push_back({time[i], power[i], name(i)});
  if (r.chosen) p.highlight.push_back({time[*r.chosen], power[*r.chosen], "chosen: " + name(*r.chosen)});
  if (r.power_budget_w) p.budget = BudgetLine{false, *r.power_budget_w, "power budget " + fixed(*r.power_budget_w, 2) + " W"};
  else if (r.time_budget_ms)
    p.budget = BudgetLine{true, *r.time_budget_ms, "time budget " + fixed(*r.time_budget_ms, 2) + " ms"};
  return plot_pareto(file, p);
}

}  // namespace jetsweep::analysis
